// A model as the agent and a model as the user, together, end to end through
// the CLI: both are served by the fake Ollama (a local HTTP server speaking
// Ollama's real wire protocol; no weights can be fetched here). The agent
// model asks which issue before it acts; the user model answers from the
// brief it is given. Records replay without asking either model again.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ollama } from 'ollama';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { asker } from '../fixtures/fake-agents.js';
import { FAKE_MODELS, startFakeOllama, type FakeOllama } from '../fixtures/fake-ollama.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

let fake: FakeOllama;
before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  fake = await startFakeOllama({ models: [...FAKE_MODELS, { name: 'fake-asker:1b', family: 'qwen2', behaviour: asker, nativeCalls: true }] });
});
after(async () => {
  await fake.close();
});

const records = (dir: string) => readFileSync(join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as EpisodeRecord);

describe('generate --policy ollama:<agent> --user ollama:<user>', () => {
  it('plays the dialogue lane with a model on each side; records name both models, pass the hidden checks, replay and audit without either', async () => {
    const out = temporaryDirectory();
    const run = await runCliAsync(REPO_ROOT, 'generate', 'issues-dialogue-v1', '--task', 'close-the-fixed-issue', '--seeds', '0..1', '--policy', 'ollama:fake-asker:1b', '--user', 'ollama:fake-user:1b', '--ollama-host', fake.url, '--out', out, '--format', 'jsonl');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /generate: the user is fake-user:1b \([0-9a-f]{12}, qwen2\) at http:\/\/127\.0\.0\.1:\d+/);
    const digests = new Map((await new Ollama({ host: fake.url }).list()).models.map((model) => [model.name, model.digest]));
    const written = records(out);
    assert.equal(written.length, 2);
    for (const record of written) {
      const user = record.provenance.actors.find((actor) => actor.role === 'user')!;
      assert.equal(user.kind, 'model');
      assert.equal(user.name, 'fake-user:1b');
      assert.equal(user.digest, digests.get('fake-user:1b'));
      assert.equal(record.provenance.actors.find((actor) => actor.role === 'policy')!.digest, digests.get('fake-asker:1b'));
      const roles = record.messages.slice(1).map((message) => message.role);
      assert.deepEqual(roles, ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
      assert.equal(record.messages[2]!.content, 'Which issue should I close?');
      const number = JSON.parse((record.messages[4] as any).tool_calls[0].arguments).number;
      assert.ok(record.messages[3]!.content.includes(`#${number}`), `the user model gave the issue: ${record.messages[3]!.content}`);
      assert.deepEqual(record.result.predicates.filter((verdict) => !verdict.passed), []);
      assert.equal(record.result.task_completed, true);
      assert.match(record.provenance.lineage.generate_command, / --policy ollama:fake-asker:1b --user ollama:fake-user:1b --out regenerated\//);
    }
    // The user model saw a brief without predicates or tools, and never the tools' results.
    const userRequests = fake.requestsTo('/api/chat').filter((request) => (request.body as any).model === 'fake-user:1b');
    assert.equal(userRequests.length, 4, 'one question and one final answer per episode');
    for (const request of userRequests) {
      const body = request.body as any;
      assert.equal(body.tools, undefined);
      assert.ok(!JSON.stringify(body).includes('asked-before-closing'), 'no predicate id reaches the user model');
      assert.ok(!body.messages.some((message: any) => message.role === 'tool'));
    }
    const before = fake.requests.length;
    const replay = await runCliAsync(REPO_ROOT, 'replay', out);
    assert.equal(replay.status, 0, replay.stderr);
    assert.match(replay.stdout, /2 records, 2 verified, 0 failed/);
    const audit = await runCliAsync(REPO_ROOT, 'audit', out);
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
    assert.equal(fake.requests.length, before, 'replay and audit asked no model');
  });

  it('refuses --user on a lane whose tasks declare no facts, before anything is written', async () => {
    const out = temporaryDirectory();
    const run = await runCliAsync(REPO_ROOT, 'generate', 'tool-world-v1', '--user', 'ollama:fake-user:1b', '--ollama-host', fake.url, '--out', out);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /no task of lane tool-world-v1 declares facts, so no user simulator ever runs.*drop --user/s);
    const bad = await runCliAsync(REPO_ROOT, 'generate', 'issues-dialogue-v1', '--user', 'gpt-4', '--out', out);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--user "gpt-4" is not a user simulator/);
  });
});
