// `replay DIR` as an auditor would use it: untouched records verify, and every
// kind of hand edit is caught, including those that keep the predicates happy.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

withoutVariable('SOURCE_DATE_EPOCH');

async function dataset(): Promise<{ dir: string; lines: string[] }> {
  const dir = temporaryDirectory();
  await generateDataset({ lane: loadLane('tool-world-v1', REPO_ROOT), outDir: dir, seeds: { from: 0, to: 2 } });
  return { dir, lines: readFileSync(join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n') };
}

function rewrite(dir: string, lines: string[]): void {
  writeFileSync(join(dir, 'episodes.jsonl'), lines.map((line) => line + '\n').join(''));
}

describe('replay DIR catches hand edits', () => {
  it('verifies an untouched dataset', async () => {
    const { dir } = await dataset();
    const summary = await replayDataset(dir);
    assert.deepEqual([summary.records, summary.verified, summary.failed, summary.corrupt_lines], [15, 15, 0, 0]);
  });

  it('catches an edited final answer even when every predicate still passes', async () => {
    const { dir, lines } = await dataset();
    const record = JSON.parse(lines[0]!) as EpisodeRecord;
    record.messages.at(-1)!.content += ' Let me know if you need anything else.';
    lines[0] = JSON.stringify(record);
    rewrite(dir, lines);
    const summary = await replayDataset(dir);
    assert.equal(summary.failed, 1);
    assert.equal(summary.failures[0]!.where, record.record_id);
    assert.match(summary.failures[0]!.problems[0]!, new RegExp(`message ${record.messages.length - 1} differs`));
  });

  it('catches a changed wrong argument whose error message reads the same', async () => {
    const { dir, lines } = await dataset();
    const index = lines.findIndex((line) => line.includes('"limit\\":\\"twenty\\"') || line.includes('\\"twenty\\"'));
    assert.ok(index >= 0, 'the sample has a wrongly typed limit');
    lines[index] = lines[index]!.replace('\\"twenty\\"', '\\"twenty-one\\"');
    rewrite(dir, lines);
    const summary = await replayDataset(dir);
    assert.equal(summary.failed, 1);
  });

  it('catches a rewritten policy actor', async () => {
    const { dir, lines } = await dataset();
    const record = JSON.parse(lines[2]!) as EpisodeRecord;
    (record.provenance.actors[0] as Record<string, unknown>).name = 'a-much-better-model';
    lines[2] = JSON.stringify(record);
    rewrite(dir, lines);
    assert.equal((await replayDataset(dir)).failed, 1);
  });

  it('catches a line whose bytes differ from its record (a repeated key hiding an edit)', async () => {
    const { dir, lines } = await dataset();
    lines[1] = lines[1]!.replace('{"record_id"', '{"messages":[],"record_id"');
    rewrite(dir, lines);
    const summary = await replayDataset(dir);
    assert.equal(summary.failed, 1);
    assert.match(summary.failures[0]!.problems[0]!, /same values, different bytes/);
  });

  it('catches a record that appears twice', async () => {
    const { dir, lines } = await dataset();
    rewrite(dir, [...lines, lines[3]!]);
    const summary = await replayDataset(dir);
    assert.equal(summary.failed, 1);
    assert.match(summary.failures[0]!.problems[0]!, new RegExp(`line ${lines.length + 1} repeats the record_id of line 4`));
  });
});

describe('episodes that ran out of wall time', () => {
  it('are written and replay, because replay never reads the clock', async () => {
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-faults-v1.json'), 'utf8'));
    document.name = 'out-of-time';
    document.limits = { ...document.limits, wall_time_ms: 250, tool_timeout_ms: 200 };
    document.faults = { faults: [{ id: 'silent', kind: 'timeout', max_fires: 2 }] };
    document.policy.variants = { retry_on_transient: 1 };
    const directory = temporaryDirectory();
    writeFileSync(join(directory, 'out-of-time.json'), JSON.stringify(document));
    const lane = loadLane(join(directory, 'out-of-time.json'));
    const out = join(directory, 'out');
    const summary = await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 0 }, tasks: ['close-named-issue'] });
    assert.equal(summary.rejected, 0, JSON.stringify(summary.rejections));
    const record = JSON.parse(readFileSync(join(out, 'episodes.jsonl'), 'utf8')) as EpisodeRecord;
    assert.equal(record.result.outcome, 'wall_time_limit');
    const replay = await replayDataset(out, { lane: join(directory, 'out-of-time.json') });
    assert.deepEqual([replay.verified, replay.failed], [1, 0]);
  });
});

describe('replay on worker threads', () => {
  it('gives the summary one thread gives, failures in file order, whatever the number of threads', async () => {
    const { dir, lines } = await dataset();
    // An edited record, a corrupt line, a record whose lane does not exist and a repeated record, spread over the file.
    const edited = JSON.parse(lines[1]!) as EpisodeRecord;
    edited.messages.at(-1)!.content += ' (edited)';
    const lost = JSON.parse(lines[9]!) as EpisodeRecord;
    lost.provenance.lineage.lane = 'no-such-lane';
    const altered = [lines[0]!, JSON.stringify(edited), ...lines.slice(2, 6), '{"torn', ...lines.slice(6, 9), JSON.stringify(lost), ...lines.slice(10), lines[4]!];
    rewrite(dir, altered);
    const strip = ({ wall_seconds: _wall, ...rest }: Awaited<ReturnType<typeof replayDataset>>) => rest;
    const one = strip(await replayDataset(dir, { workers: 1 }));
    const three = strip(await replayDataset(dir, { workers: 3 }));
    assert.deepEqual(three, one);
    assert.deepEqual(one.failures.map((failure) => failure.where), [edited.record_id, 'episodes.jsonl:7', lost.record_id, JSON.parse(lines[4]!).record_id]);
    assert.deepEqual([one.records, one.verified, one.failed, one.corrupt_lines], [16, 13, 3, 1]);
  });
});
