// `audit` against someone who edits the conversations of records with several
// calls a turn or with a user simulator, then rewrites the Arrow and Parquet
// copies from the edited records and the manifest to match: nothing but the
// records themselves is left to disagree. The record-level checks read every
// record (no sample), and name the line, the record and a JSON pointer.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { writeColumnar } from '../../src/records/columnar-files.js';
import type { EpisodeRecord, RecordAssistantMessage } from '../../src/records/episode-record.js';
import type { Manifest } from '../../src/records/manifest.js';
import { REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

const TIMEOUT = { timeout: 180_000 };
const FILES = ['episodes.jsonl', 'episodes.arrow', 'episodes.parquet'];
const pristine = { parallel: temporaryDirectory('ef-hostile-turns-'), dialogue: temporaryDirectory('ef-hostile-turns-') };

before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  await generateDataset({ lane: loadLane('issues-parallel-v1', REPO_ROOT), outDir: pristine.parallel, seeds: { from: 0, to: 1 } });
  await generateDataset({ lane: loadLane('issues-dialogue-v1', REPO_ROOT), outDir: pristine.dialogue, seeds: { from: 0, to: 1 } });
});

const records = (dir: string) => readFileSync(join(dir, 'episodes.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as EpisodeRecord);

/**
 * A copy with one record edited, and everything that would give it away
 * rewritten: the columnar copies from the edited records with the factory's
 * own writer, and each file's sha256, size and rows in the manifest.
 */
async function tampered(source: string, pick: (record: EpisodeRecord) => boolean, edit: (record: EpisodeRecord) => void): Promise<{ dir: string; line: number; record: EpisodeRecord }> {
  const dir = temporaryDirectory('ef-hostile-turns-');
  cpSync(source, dir, { recursive: true });
  const all = records(dir);
  const index = all.findIndex(pick);
  assert.ok(index >= 0, 'a record to edit');
  edit(all[index]!);
  writeFileSync(join(dir, 'episodes.jsonl'), all.map((record) => JSON.stringify(record)).join('\n') + '\n');
  await writeColumnar(join(dir, 'episodes.jsonl'), { arrow: join(dir, 'episodes.arrow'), parquet: join(dir, 'episodes.parquet') });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  for (const file of FILES) {
    const bytes = readFileSync(join(dir, file));
    Object.assign(manifest.files.find((listed) => listed.path === file)!, { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length });
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return { dir, line: index + 1, record: all[index]! };
}

function audit(dir: string, ...flags: string[]) {
  const result = runCli(REPO_ROOT, 'audit', dir, ...flags);
  return { ...result, failures: result.stdout.split('\n').filter((line) => line.startsWith('FAIL ')) };
}

const severalCalls = (record: EpisodeRecord) => record.messages.some((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 1);
const busiestTurn = (record: EpisodeRecord) => record.messages.findIndex((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 1);

describe('audit against edited turns, with the copies and the manifest rewritten to match', () => {
  it('passes both lanes as generate wrote them, every record reproduced', TIMEOUT, () => {
    for (const dir of Object.values(pristine)) {
      const result = audit(dir, '--full');
      assert.equal(result.status, 0, result.stdout + result.stderr);
      assert.match(result.stdout, /manifest ok, lines ok, ids ok, lineage ok, provenance ok, turns ok, columnar ok, reproduction ok\n$/);
    }
  });

  it('names a tool message whose tool_call_id answers no call of the turn, and the call it left unanswered', TIMEOUT, async () => {
    const { dir, line, record } = await tampered(pristine.parallel, severalCalls, (each) => {
      const turn = busiestTurn(each);
      const reply = each.messages[turn + 2]!;
      assert.equal(reply.role, 'tool');
      if (reply.role === 'tool') reply.tool_call_id = 'call_9';
    });
    const turn = busiestTurn(record);
    const calls = (record.messages[turn] as RecordAssistantMessage).tool_calls!;
    const result = audit(dir, '--sample', '0');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    const where = `episodes.jsonl:${line} (${record.record_id})`;
    assert.deepEqual(result.failures, [
      `FAIL turns: ${where}: /messages/${turn + 2}/tool_call_id: "call_9" is not a call of the assistant turn at /messages/${turn} (${calls.map((call) => call.id).join(', ')})`,
      `FAIL turns: ${where}: /messages/${turn}/tool_calls/1: ${calls[1]!.id} (${calls[1]!.name}) is never answered, and the episode did not stop there (outcome ${record.result.outcome})`,
    ]);
    assert.match(result.stdout, /provenance ok, turns 2 findings, columnar ok, reproduction ok\n$/, 'the copies agree with the edited records: only the turns check sees it');
  });

  it('names a call whose answer was removed, and answers swapped out of the order of the calls', TIMEOUT, async () => {
    const removed = await tampered(pristine.parallel, severalCalls, (each) => {
      each.messages.splice(busiestTurn(each) + 2, 1);
    });
    const turn = busiestTurn(removed.record);
    const second = (removed.record.messages[turn] as RecordAssistantMessage).tool_calls![1]!;
    assert.deepEqual(audit(removed.dir, '--sample', '0').failures, [
      `FAIL turns: episodes.jsonl:${removed.line} (${removed.record.record_id}): /messages/${turn}/tool_calls/1: ${second.id} (${second.name}) is never answered, and the episode did not stop there (outcome ${removed.record.result.outcome})`,
    ]);

    const swapped = await tampered(pristine.parallel, severalCalls, (each) => {
      const at = busiestTurn(each);
      const [first, next] = [each.messages[at + 1]!, each.messages[at + 2]!];
      each.messages[at + 1] = next;
      each.messages[at + 2] = first;
    });
    const at = busiestTurn(swapped.record);
    const [one, two] = (swapped.record.messages[at] as RecordAssistantMessage).tool_calls!;
    assert.deepEqual(audit(swapped.dir, '--sample', '0').failures, [
      `FAIL turns: episodes.jsonl:${swapped.line} (${swapped.record.record_id}): /messages/${at + 1}/tool_call_id: ${two!.id} is answered before ${one!.id} (the calls of /messages/${at} are answered in the order given)`,
    ]);
  });

  it('names simulated user turns whose user simulator was removed from provenance', TIMEOUT, async () => {
    const { dir, line, record } = await tampered(
      pristine.dialogue,
      (each) => each.messages.filter((message) => message.role === 'user').length === 2,
      (each) => {
        each.provenance.actors = each.provenance.actors.filter((actor) => actor.role !== 'user');
      },
    );
    const result = audit(dir, '--sample', '0');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.deepEqual(result.failures, [
      `FAIL provenance: episodes.jsonl:${line} (${record.record_id}): /provenance/actors: 1 user message after the opening request, but no user simulator (an actor with role "user") to say who wrote it`,
    ]);
  });

  it('leaves a user simulator added to a record without user turns to reproduction, which rebuilds the actors from the lane', TIMEOUT, async () => {
    const { dir, line, record } = await tampered(
      pristine.parallel,
      () => true,
      (each) => {
        each.provenance.actors.splice(1, 0, { role: 'user', kind: 'scripted', name: 'scripted-user', version: '1' });
      },
    );
    assert.deepEqual(audit(dir, '--sample', '0').failures, [], 'a user simulator with nothing to say is a valid record');
    const full = audit(dir, '--full');
    assert.equal(full.status, 1, full.stdout + full.stderr);
    assert.ok(full.failures.length > 0, full.stdout);
    assert.ok(full.failures.every((failure) => failure.startsWith(`FAIL reproduction: episodes.jsonl:${line} (${record.record_id}): `)), full.stdout);
  });
});
