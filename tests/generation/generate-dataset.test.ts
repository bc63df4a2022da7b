import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord, RejectedRow } from '../../src/records/episode-record.js';
import type { Manifest } from '../../src/records/manifest.js';
import { readEpisodeTrace } from '../../src/runner/trace-archive.js';
import type { TraceEvent } from '../../src/runner/trace.js';
import { validateAgainst } from '../../src/records/schema-registry.js';
import { SCRIPTED_VARIANTS } from '../../src/solutions/solution-script.js';
import { FAULT_KINDS } from '../../src/world/faults/fault-plan.js';
import { registerWorld } from '../../src/world/world-registry.js';
import { flakyLane, flakyWorld } from '../fixtures/flaky-world.js';
import { REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const traceIndex = (out: string) => lines(join(out, 'traces', 'index.jsonl')).map((line) => JSON.parse(line) as { record_id: string; trace: string });

/** An episode's events, found through the trace index: numbered 1, 2, 3… and in the order of its passes. */
async function episodeEvents(out: string, recordId: string): Promise<TraceEvent[]> {
  const { events, problems } = await readEpisodeTrace(out, recordId);
  assert.deepEqual(problems, [], recordId);
  assert.deepEqual(events.map((event) => event.seq), events.map((_, index) => index + 1), `${recordId}: seq in order`);
  assert.ok(events.every((event) => event.record_id === recordId));
  return events;
}

/** generate, then replay, then verify: the order the passes of one episode run in (an episode rejected before replay has none). */
function assertPassOrder(events: readonly TraceEvent[], recordId: string): void {
  const order = ['generate', 'replay', 'verify'];
  const ranks = events.map((event) => order.indexOf(event.phase));
  assert.ok(ranks.every((rank, index) => rank >= 0 && (index === 0 || rank >= ranks[index - 1]!)), `${recordId}: ${events.map((event) => event.phase).join(',')}`);
  assert.equal(events[events.length - 1]!.phase, 'verify');
}

withoutVariable('SOURCE_DATE_EPOCH');

describe('generate', () => {
  it('writes byte-identical episodes for the same lane and seeds', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const first = temporaryDirectory();
    const second = temporaryDirectory();
    await generateDataset({ lane, outDir: first, seeds: { from: 0, to: 3 } });
    await generateDataset({ lane, outDir: second, seeds: { from: 0, to: 3 } });
    assert.equal(readFileSync(join(first, 'episodes.jsonl'), 'utf8'), readFileSync(join(second, 'episodes.jsonl'), 'utf8'));
    assert.equal(lines(join(first, 'episodes.jsonl')).length, 20);
  });

  it('regenerates the committed sample under datasets/tool-world-v1 byte for byte', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = temporaryDirectory();
    const summary = await generateDataset({ lane, outDir: out });
    assert.equal(summary.rejected, 0);
    for (const file of ['episodes.jsonl', 'rejected.jsonl']) {
      assert.equal(
        readFileSync(join(out, file), 'utf8'),
        readFileSync(join(REPO_ROOT, 'datasets', 'tool-world-v1', file), 'utf8'),
        `${file} differs from the committed sample: regenerate it with \`npx episode-factory generate tool-world-v1\` if the change is intended`,
      );
    }
  });

  it('writes records that validate, complete their tasks, include repaired calls, and replay', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = temporaryDirectory();
    const summary = await generateDataset({ lane, outDir: out });
    const records = lines(join(out, 'episodes.jsonl')).map((line) => JSON.parse(line) as EpisodeRecord);
    assert.equal(summary.episodes, 5 * 8);
    assert.equal(records.length, summary.written);
    for (const record of records) assert.deepEqual(validateAgainst('episode-record.v1', record), [], record.record_id);
    assert.equal(new Set(records.map((record) => record.record_id)).size, records.length);
    assert.ok(records.every((record) => record.result.task_completed), 'the scripted solution completes every task');
    const repaired = records.filter((record) => record.provenance.lineage.variant === 'wrong_type_first');
    assert.ok(repaired.length >= 5, `${repaired.length} wrong_type_first episodes`);
    for (const record of repaired) {
      const failed = record.messages.find((message) => message.role === 'tool' && !message.tool_result.ok);
      assert.ok(failed, `${record.record_id} has the rejected first call`);
      assert.equal(record.recovery.recovered, true);
    }
    assert.ok(records.filter((record) => record.provenance.lineage.variant === 'clean').every((record) => record.recovery.error_turns === 0));
    const replay = await replayDataset(out);
    assert.deepEqual([replay.records, replay.verified, replay.failed], [40, 40, 0]);
  });

  it('writes a manifest whose hashes, sizes and rows match the files, one trace archive per part and an index of every episode', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = temporaryDirectory();
    await generateDataset({ lane, outDir: out, seeds: { from: 2, to: 3 }, tasks: ['close-named-issue', 'assignee-email'], workers: 1 });
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
    assert.deepEqual(validateAgainst('manifest.v1', manifest), []);
    assert.deepEqual(manifest.counts, { episodes: 4, records: 4, rejected: 0, completed: 4 });
    assert.deepEqual(manifest.tasks, ['close-named-issue', 'assignee-email']);
    assert.equal(manifest.lane_sha256, lane.sha256);
    const index = traceIndex(out);
    const records = lines(join(out, 'episodes.jsonl')).map((line) => JSON.parse(line) as EpisodeRecord);
    assert.deepEqual(index.map((entry) => entry.record_id), records.map((record) => record.record_id), 'the index is in plan order, like the records');
    // Four episodes on one thread run as four parts of one.
    const archives = ['000000000-000000001', '000000001-000000002', '000000002-000000003', '000000003-000000004'].map((part) => `traces/${part}.jsonl`);
    assert.deepEqual(index.map((entry) => entry.trace), archives);
    assert.deepEqual(readdirSync(join(out, 'traces')).sort(), [...archives, 'traces/index.jsonl'].map((path) => path.slice('traces/'.length)).sort());
    assert.deepEqual(manifest.files.map((file) => file.path), ['episodes.arrow', 'episodes.jsonl', 'episodes.parquet', 'rejected.jsonl', ...archives, 'traces/index.jsonl']);
    for (const file of manifest.files) {
      assert.equal(file.sha256, sha256(join(out, file.path)), file.path);
      const binary = file.path.endsWith('.arrow') || file.path.endsWith('.parquet');
      assert.equal(file.rows, binary ? 4 : lines(join(out, file.path)).length, file.path);
    }
    for (const record of records) {
      const events = await episodeEvents(out, record.record_id);
      assert.deepEqual([...new Set(events.map((event) => event.phase))], ['generate', 'replay', 'verify']);
      assertPassOrder(events, record.record_id);
      assert.equal(events[events.length - 1]!.event_type, 'record_written');
    }
    assert.equal(existsSync(join(out, '.partial')), false, 'staging is gone after a finished run');
  });

  it('makes one trace archive per part, far fewer files than episodes, and finds every episode\'s trace by its record id', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = temporaryDirectory();
    const summary = await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 39 }, workers: 1 });
    assert.equal(summary.episodes, 200);
    const index = traceIndex(out);
    assert.equal(index.length, 200);
    const archives = new Set(index.map((entry) => entry.trace));
    assert.equal(archives.size, 4, 'a run on one thread cuts its plan into four parts');
    assert.equal(readdirSync(join(out, 'traces')).length, archives.size + 1, 'the archives and the index, nothing else');
    const ids = lines(join(out, 'episodes.jsonl')).map((line) => (JSON.parse(line) as EpisodeRecord).record_id);
    assert.deepEqual(index.map((entry) => entry.record_id), ids);
    for (const id of ids) assertPassOrder(await episodeEvents(out, id), id);
  });

  it('takes produced_at from SOURCE_DATE_EPOCH when set, and otherwise from the lane', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = temporaryDirectory();
    process.env.SOURCE_DATE_EPOCH = '1767225600';
    await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 0 }, tasks: ['find-open-bugs'] });
    assert.equal(JSON.parse(lines(join(out, 'episodes.jsonl'))[0]!).provenance.produced_at, '2026-01-01T00:00:00Z');
    delete process.env.SOURCE_DATE_EPOCH;
    await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 0 }, tasks: ['find-open-bugs'] });
    assert.equal(JSON.parse(lines(join(out, 'episodes.jsonl'))[0]!).provenance.produced_at, '2026-12-01T00:00:00Z');
  });

  it('sends episodes that fail replay to rejected.jsonl with the reason, and keeps them out of the dataset', async () => {
    registerWorld(flakyWorld);
    const directory = temporaryDirectory();
    const lanePath = join(directory, 'flaky-lane.json');
    writeFileSync(lanePath, JSON.stringify(flakyLane));
    const out = join(directory, 'out');
    const summary = await generateDataset({ lane: loadLane(lanePath), outDir: out });
    assert.deepEqual([summary.episodes, summary.written, summary.rejected], [3, 0, 3]);
    assert.equal(readFileSync(join(out, 'episodes.jsonl'), 'utf8'), '');
    const rows = lines(join(out, 'rejected.jsonl')).map((line) => JSON.parse(line) as RejectedRow);
    assert.deepEqual(rows.map((row) => [row.record_id, row.stage]), [
      ['flaky-lane.count-once.s0', 'replay'],
      ['flaky-lane.count-once.s1', 'replay'],
      ['flaky-lane.count-once.s2', 'replay'],
    ]);
    for (const row of rows) {
      assert.deepEqual(validateAgainst('rejected-row.v1', row), []);
      assert.match(row.reason, /tool result of call_1 differs at \/messages\/3\/content: record has "\{\\"number\\":\d+\}", replay gives/);
      assert.ok(row.record, 'the rejected record is kept for inspection');
      // A rejected episode keeps its trace too, found like any other.
      const events = await episodeEvents(out, row.record_id);
      assert.deepEqual([...new Set(events.map((event) => event.phase))], ['generate', 'replay', 'verify']);
      assertPassOrder(events, row.record_id);
      assert.deepEqual(events[events.length - 1]!.data, { stage: 'replay', reason: row.reason });
    }
    assert.deepEqual(traceIndex(out).map((entry) => entry.record_id), rows.map((row) => row.record_id));
  });

  it('rejects an episode whose task parameters cannot be drawn, at the plan stage', async () => {
    const directory = temporaryDirectory();
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));
    document.name = 'impossible';
    document.tasks = [{ ...document.tasks[1], params: { target: { from: '/issues', where: { state: 'merged' } } } }];
    writeFileSync(join(directory, 'impossible.json'), JSON.stringify(document));
    const out = join(directory, 'out');
    const summary = await generateDataset({ lane: loadLane(join(directory, 'impossible.json')), outDir: out, seeds: { from: 0, to: 1 } });
    assert.equal(summary.rejected, 2);
    const row = JSON.parse(lines(join(out, 'rejected.jsonl'))[0]!) as RejectedRow;
    assert.equal(row.stage, 'plan');
    assert.match(row.reason, /parameter "target": no item of \/issues matches \{"state":"merged"\}/);
    assert.equal(row.record, null);
    // Rejected before it ran: its trace is the verdict alone.
    const events = await episodeEvents(out, row.record_id);
    assert.deepEqual(events.map((event) => [event.phase, event.event_type]), [['verify', 'record_rejected']]);
  });

  it('fires every fault kind over the faults lane\'s default seeds, records each one, verifies every record, and matches the committed sample', async () => {
    const lane = loadLane('tool-world-faults-v1', REPO_ROOT);
    const out = temporaryDirectory();
    const summary = await generateDataset({ lane, outDir: out });
    assert.equal(summary.rejected, 0);
    assert.deepEqual(Object.keys(summary.faults_fired).sort(), [...FAULT_KINDS].sort());
    const records = lines(join(out, 'episodes.jsonl')).map((line) => JSON.parse(line) as EpisodeRecord);
    for (const record of records) {
      const events = await episodeEvents(out, record.record_id);
      const fired = events.filter((event) => event.phase === 'generate' && event.event_type === 'fault_fired');
      assert.deepEqual(
        fired.map((event) => [event.data['kind'], event.data['step'], event.data['call']]),
        record.recovery.faults_fired.map((fault) => [fault.kind, fault.step, fault.call]),
        `${record.record_id}: every fault the layer fired is in the record`,
      );
    }
    const variants = new Set(records.map((record) => record.provenance.lineage.variant));
    // Every recovery variant plays; the dialogue and batching variants belong to lanes whose tasks use them.
    const recoveryVariants = SCRIPTED_VARIANTS.filter((variant) => !['batch_reads', 'guess_then_corrected', 'asks_too_often'].includes(variant));
    assert.deepEqual([...variants].sort(), [...recoveryVariants].sort());
    assert.ok(records.some((record) => record.recovery.recovered), 'some episodes recover');
    assert.ok(records.some((record) => record.provenance.lineage.variant === 'give_up_on_fault' && !record.result.task_completed), 'some give up, as DPO negatives');
    for (const file of ['episodes.jsonl', 'rejected.jsonl']) {
      assert.equal(
        readFileSync(join(out, file), 'utf8'),
        readFileSync(join(REPO_ROOT, 'datasets', 'tool-world-faults-v1', file), 'utf8'),
        `${file} differs from the committed sample: regenerate it with \`npx episode-factory generate tool-world-faults-v1\` if the change is intended`,
      );
    }
  });

  it('refuses an output directory that holds something other than a dataset', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = temporaryDirectory();
    writeFileSync(join(out, 'notes.txt'), 'mine');
    await assert.rejects(
      generateDataset({ lane, outDir: out, seeds: { from: 0, to: 0 } }),
      (error: unknown) => error instanceof FactoryError && error.exitStatus === 2 && /is not empty and holds no dataset \(it has notes\.txt\)/.test(error.message),
    );
    assert.deepEqual(readdirSync(out), ['notes.txt']);
  });

  it('replaces the previous dataset in the output directory only when the run completes', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = temporaryDirectory();
    await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 1 } });
    await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 0 }, formats: ['jsonl', 'parquet'] });
    assert.equal(lines(join(out, 'episodes.jsonl')).length, 5);
    const archives = new Set(traceIndex(out).map((entry) => entry.trace));
    assert.equal(traceIndex(out).length, 5);
    assert.deepEqual(readdirSync(join(out, 'traces')).map((file) => `traces/${file}`).sort(), [...archives, 'traces/index.jsonl'].sort(), 'traces of the earlier run are gone');
    assert.equal(existsSync(join(out, 'episodes.arrow')), false, 'a format this run did not write does not linger');
    assert.equal(existsSync(join(out, 'episodes.parquet')), true);
  });
});
