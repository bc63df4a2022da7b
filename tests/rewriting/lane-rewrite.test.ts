// `lanes rewrite`: a local model (the writer; here the fake Ollama, a local
// HTTP server speaking Ollama's wire protocol, no weights) rewords each task's
// request ahead of a run. What survives the filters is cached next to the lane
// with the writer's digest; runs draw from the cache alone, byte-identically.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ollama } from 'ollama';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { FAKE_MODELS, startFakeOllama, type FakeConversation, type FakeDecision, type FakeOllama } from '../fixtures/fake-ollama.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

/** A writer that keeps the request's words, adds some of its own, and makes three kinds of mistake. */
function writer(conversation: FakeConversation): FakeDecision {
  const request = conversation.turns.find((turn) => turn.role === 'user')?.text ?? '';
  const first = /^- (.*)$/m.exec(request)?.[1] ?? '';
  return {
    kind: 'text',
    text: [
      `1. Quick question: ${first}`,
      `${first} Much obliged, truly.`,
      first.replace(/\{\{[^{}]+\}\}/, 'that one'),
      `<b>${first}</b>`,
      `Quick question: ${first}`,
    ].join('\n'),
  };
}

let fake: FakeOllama;
let cwd: string;
let laneFile: string;
before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  fake = await startFakeOllama({ models: [...FAKE_MODELS, { name: 'fake-writer:1b', family: 'qwen2', behaviour: writer }] });
  // Made here, not with temporaryDirectory, whose cleanup registered inside a hook would run when the hook ends.
  cwd = mkdtempSync(join(tmpdir(), 'ef-rewrite-'));
  mkdirSync(join(cwd, 'lanes'));
  laneFile = join(cwd, 'lanes', 'tool-world-v1.json');
  const lane = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));
  // One task says a single sentence, so the writer's phrasings are two of its three; the grammar tasks' are two of hundreds.
  lane.tasks[0].user = 'Find the open bugs about {{topic}} and reply with their issue numbers.';
  writeFileSync(laneFile, JSON.stringify({ ...lane, rewrites: 'tool-world-v1.rewrites.json' }, null, 2));
});
after(async () => {
  await fake.close();
  rmSync(cwd, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCliAsync(cwd, ...args);
const records = (dir: string) => readFileSync(join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as EpisodeRecord);

describe('lanes rewrite', () => {
  it('names the missing cache and the command that writes it, before anything runs', async () => {
    const check = await cli('lanes', 'check', 'tool-world-v1');
    assert.equal(check.status, 2);
    assert.match(check.stderr, /\/rewrites: .*tool-world-v1\.rewrites\.json does not exist; run `episode-factory lanes rewrite tool-world-v1 --model ollama:<model>` to write it/);
  });

  it('keeps what has the request\'s placeholders and says something new, caches it with the writer, and runs draw from the cache alone', async () => {
    const rewrite = await cli('lanes', 'rewrite', 'tool-world-v1', '--model', 'ollama:fake-writer:1b', '--ollama-host', fake.url, '--count', '5', '--json');
    assert.equal(rewrite.status, 0, rewrite.stderr);
    const result = JSON.parse(rewrite.stdout);
    assert.equal(result.named, true);
    assert.equal(result.tasks.length, 5);
    for (const task of result.tasks) {
      assert.equal(task.returned, 5);
      assert.equal(task.kept.length, 2, JSON.stringify(task));
      assert.ok(task.kept[0].startsWith('Quick question: '), 'the list marker is gone');
      assert.deepEqual(task.rejected.map((entry: { reason: string }) => entry.reason.replace(/\{\{.*\}\}/, '{{…}}')), [
        'drops {{…}}',
        'uses < or >, which a phrasing grammar reads as a rule reference',
        'repeats another line',
      ]);
    }
    const digest = (await new Ollama({ host: fake.url }).list()).models.find((model) => model.name === 'fake-writer:1b')!.digest;
    const cache = JSON.parse(readFileSync(join(cwd, 'lanes', 'tool-world-v1.rewrites.json'), 'utf8'));
    assert.equal(cache.format, 'episode-factory.rewrites.v1');
    assert.deepEqual([cache.writer.role, cache.writer.kind, cache.writer.name, cache.writer.digest], ['writer', 'model', 'fake-writer:1b', digest]);
    assert.equal(typeof cache.writer.options.seed, 'number');

    const check = await cli('lanes', 'check', 'tool-world-v1');
    assert.equal(check.status, 0, check.stdout + check.stderr);

    const asked = fake.requests.length;
    const [one, two] = [temporaryDirectory('ef-rewrite-'), temporaryDirectory('ef-rewrite-')];
    for (const out of [one, two]) {
      const run = await cli('generate', 'tool-world-v1', '--seeds', '0..7', '--out', out, '--format', 'jsonl');
      assert.equal(run.status, 0, run.stderr);
    }
    assert.equal(fake.requests.length, asked, 'a run never asks the writer');
    assert.equal(readFileSync(join(one, 'episodes.jsonl'), 'utf8'), readFileSync(join(two, 'episodes.jsonl'), 'utf8'));
    const written = records(one);
    const openings = written.filter((record) => record.task.id === 'find-open-bugs').map((record) => record.messages[1]!.content);
    const byWriter = openings.filter((text) => text.startsWith('Quick question: Find the open bugs about ') || text.endsWith(' reply with their issue numbers. Much obliged, truly.'));
    assert.ok(byWriter.length >= 3 && byWriter.length < openings.length, `the writer's phrasings are drawn beside the task's own: ${openings.join(' | ')}`);
    for (const record of written) {
      const actor = record.provenance.actors.find((candidate) => candidate.role === 'writer');
      assert.equal(actor?.digest, digest, `${record.record_id} names the writer`);
    }
    const replay = await cli('replay', one);
    assert.equal(replay.status, 0, replay.stderr);
  });

  it('refuses an edited cache, naming the cache file and the phrasing\'s place', async () => {
    const path = join(cwd, 'lanes', 'tool-world-v1.rewrites.json');
    const cache = JSON.parse(readFileSync(path, 'utf8'));
    const [task] = Object.keys(cache.tasks);
    cache.tasks[task!].push('Do it <now>');
    const index = cache.tasks[task!].length - 1;
    writeFileSync(path, JSON.stringify(cache));
    const check = await cli('lanes', 'show', 'tool-world-v1');
    assert.equal(check.status, 2);
    assert.match(check.stderr, new RegExp(`tool-world-v1\\.rewrites\\.json: /tasks/${task}/${index}: must match the pattern`));
  });

  it('refuses a writer that is not a model', async () => {
    const run = await cli('lanes', 'rewrite', 'tool-world-v1', '--model', 'gpt-4');
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--model "gpt-4" is not a model/);
  });
});
