// Workers, shards and merge, and resuming from sealed parts: whichever way a
// run is cut up, its data files must be the bytes of one uninterrupted run on
// one thread.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { tableFromIPC } from 'apache-arrow';
import { FactoryError } from '../../src/core/errors.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { mergeShards } from '../../src/shards/merge-shards.js';
import { parseShard, shardSlice } from '../../src/generation/plan-shard.js';
import { finishedParts, missingRanges, partName, PARTS_DIR, partTraceFile, writePart } from '../../src/generation/run-parts.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { Manifest } from '../../src/records/manifest.js';
import { registerWorld } from '../../src/world/world-registry.js';
import { flakyLane, flakyWorld } from '../fixtures/flaky-world.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const DATA_FILES = ['episodes.jsonl', 'rejected.jsonl', 'episodes.arrow', 'episodes.parquet'];
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const lane = loadLane('tool-world-faults-v1', REPO_ROOT);
// 5 tasks x 12 seeds.
const SEEDS = { from: 0, to: 11 };
const EPISODES = 60;

/** A part's trace archive as a part seals it (one event line), and its hash for the marker. */
function sealedTrace(staging: string, start: number, end: number): string {
  const path = partTraceFile(staging, { start, end });
  mkdirSync(join(staging, PARTS_DIR), { recursive: true });
  writeFileSync(path, JSON.stringify({ schema: 'episode-factory.trace.v1', run_id: 'run-test', record_id: `r${start}`, seq: 1, t_ms: 0, phase: 'generate', event_type: 'x', data: {} }) + '\n');
  return sha256(path);
}

function indexedIds(dir: string): string[] {
  return readFileSync(join(dir, 'traces', 'index.jsonl'), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { record_id: string }).record_id);
}

function assertSameData(actual: string, expected: string): void {
  for (const file of DATA_FILES) assert.equal(sha256(join(actual, file)), sha256(join(expected, file)), `${file} differs from the single-thread run`);
  // Archives follow part boundaries, which differ with workers, resume and shards: what must not differ is which episodes they hold, in plan order.
  assert.deepEqual(indexedIds(actual), indexedIds(expected), 'the trace index lists the same episodes in the same order');
  assertTraceIndex(actual);
}

/** The trace index names every planned episode once, in plan order, each in an archive the manifest lists. */
function assertTraceIndex(dir: string): void {
  const index = readFileSync(join(dir, 'traces', 'index.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { record_id: string; trace: string });
  assert.equal(index.length, EPISODES);
  assert.equal(new Set(index.map((entry) => entry.record_id)).size, EPISODES, 'every episode once');
  const rows = ['episodes.jsonl', 'rejected.jsonl'].flatMap((file) => readFileSync(join(dir, file), 'utf8').trim().split('\n').filter(Boolean));
  assert.deepEqual(new Set(index.map((entry) => entry.record_id)), new Set(rows.map((row) => (JSON.parse(row) as { record_id: string }).record_id)), 'written and rejected episodes alike');
  const archives = [...new Set(index.map((entry) => entry.trace))];
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  assert.deepEqual(manifest.files.map((file) => file.path).filter((path) => path.startsWith('traces/')), [...archives, 'traces/index.jsonl'].sort());
  assert.deepEqual(readdirSync(join(dir, 'traces')).map((file) => `traces/${file}`).sort(), [...archives, 'traces/index.jsonl'].sort());
}

/** A one-thread run of the lane into `out`, stopped (as by Ctrl-C) once `episodes` episodes have finished. */
async function stopAfter(out: string, episodes: number) {
  const controller = new AbortController();
  let seen = 0;
  return generateDataset({ lane, outDir: out, seeds: SEEDS, workers: 1, signal: controller.signal, onEpisode: () => (++seen === episodes ? controller.abort() : undefined) });
}

describe('sharded, parallel and resumed generation', () => {
  const single = temporaryDirectory();
  before(async () => {
    const summary = await generateDataset({ lane, outDir: single, seeds: SEEDS, workers: 1 });
    assert.equal(summary.episodes, EPISODES);
    assert.equal(summary.workers, 1);
    assert.ok(Object.keys(summary.faults_fired).length > 5, 'a lane with faults, so the bytes are not trivial');
  });

  it('writes the same bytes with two worker threads', async () => {
    const out = temporaryDirectory();
    const progress: number[] = [];
    const ids = new Set<string>();
    const summary = await generateDataset({
      lane,
      outDir: out,
      seeds: SEEDS,
      workers: 2,
      onEpisode: (episode) => {
        progress.push(episode.done);
        ids.add(episode.record_id);
      },
    });
    assert.equal(summary.workers, 2);
    assert.equal(summary.written + summary.rejected, EPISODES);
    // Workers report in batches; every episode is still reported once, and the count only goes up.
    assert.deepEqual(progress, Array.from({ length: EPISODES }, (_, index) => index + 1));
    assert.equal(ids.size, EPISODES);
    assertSameData(out, single);
    assert.equal(existsSync(join(out, '.partial')), false, 'parts are intermediate');
  });

  it('merges three shards, given in any order, into the single run', async () => {
    const shards = [0, 1, 2].map(() => temporaryDirectory());
    let covered = 0;
    for (const [index, dir] of shards.entries()) {
      const summary = await generateDataset({ lane, outDir: dir, seeds: SEEDS, shard: { index, count: 3 } });
      assert.equal(summary.shard?.index, index);
      covered += summary.episodes;
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
      assert.deepEqual(manifest.shard, { index, count: 3, ...shardSlice(EPISODES, { index, count: 3 }), plan_episodes: EPISODES });
    }
    assert.equal(covered, EPISODES);
    const merged = temporaryDirectory();
    const stages: string[] = [];
    const summary = await mergeShards({ sources: [shards[2]!, shards[0]!, shards[1]!], outDir: merged, onStage: (stage) => stages.push(stage) });
    assert.deepEqual(stages, [
      'checking shard 1 of 3 against its manifest',
      'checking shard 2 of 3 against its manifest',
      'checking shard 3 of 3 against its manifest',
      'writing the records',
      'copying the traces',
      'writing the Arrow and Parquet copies',
      'hashing the files into the manifest',
    ]);
    assert.equal(summary.shards, 3);
    assert.equal(summary.written + summary.rejected, EPISODES);
    assertSameData(merged, single);
    const manifest = JSON.parse(readFileSync(join(merged, 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(manifest.operation, 'merge');
    assert.equal(manifest.shard, undefined);

    // The command shows each step on a terminal (`script` gives it one), and nothing when piped.
    const command = [process.execPath, join(REPO_ROOT, 'bin', 'episode-factory.js'), 'merge', ...shards, '--out', temporaryDirectory()].map((part) => `'${part}'`).join(' ');
    const terminal = spawnSync('script', ['-qfec', `stty cols 160; ${command}`, '/dev/null'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(terminal.status, 0, terminal.stdout);
    assert.match(terminal.stdout, /\rmerge: checking shard 1 of 3 against its manifest \(\d+s\)/);
    assert.match(terminal.stdout, /merge tool-world-faults-v1: 3 shards, 60 episodes/);
    const piped = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'episode-factory.js'), 'merge', ...shards, '--out', temporaryDirectory()], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(piped.status, 0, piped.stderr);
    assert.doesNotMatch(piped.stderr, /\r|checking shard/);

    await assert.rejects(mergeShards({ sources: [shards[0]!, shards[2]!], outDir: temporaryDirectory() }), /shard 1\/3 missing/);
    await assert.rejects(mergeShards({ sources: [shards[0]!, shards[0]!, shards[1]!], outDir: temporaryDirectory() }), /given twice/);
    await assert.rejects(mergeShards({ sources: [single], outDir: temporaryDirectory() }), /not a shard/);
    const other = temporaryDirectory();
    await generateDataset({ lane, outDir: other, seeds: { from: 0, to: 2 }, shard: { index: 1, count: 3 } });
    await assert.rejects(mergeShards({ sources: [shards[0]!, other, shards[2]!], outDir: temporaryDirectory() }), /different runs/);
    // A shard edited after it was written is refused, not merged.
    const rejected = join(shards[1]!, 'episodes.jsonl');
    writeFileSync(rejected, readFileSync(rejected, 'utf8').replace('"seed":', '"seed" :'));
    await assert.rejects(mergeShards({ sources: shards, outDir: temporaryDirectory() }), /does not match its manifest/);
  });

  it('resumes from sealed parts, drops unsealed and torn ones, and refuses a different run', async () => {
    const out = temporaryDirectory();
    const first = await stopAfter(out, 23);
    assert.equal(first.interrupted, true);
    assert.equal(first.written + first.rejected, 23, 'the episodes in flight were finished and kept');
    assert.equal(existsSync(join(out, 'episodes.jsonl')), false, 'nothing is published before the run is complete');
    const staging = join(out, '.partial');
    const sealed = finishedParts(staging);
    assert.equal(sealed.reduce((sum, part) => sum + part.end - part.start, 0), 23);
    assert.ok(sealed.length >= 2);
    // What a kill leaves behind: a temporary file, and a part whose marker never landed (its records and its live trace archive).
    writeFileSync(join(staging, PARTS_DIR, '.000000023-000000030.episodes.jsonl.tmp'), '{"torn":');
    writeFileSync(join(staging, PARTS_DIR, '000000023-000000030.episodes.jsonl'), '{"not":"sealed"}\n');
    writeFileSync(join(staging, PARTS_DIR, '000000023-000000030.trace.jsonl'), '{"not":"sealed"}\n');
    // A sealed part whose trace archive changed since is not trusted: it runs again.
    const last = sealed[sealed.length - 1]!;
    appendFileSync(partTraceFile(staging, last), '{"torn":');

    await assert.rejects(generateDataset({ lane, outDir: out, seeds: SEEDS }), (error: unknown) => error instanceof FactoryError && new RegExp(`interrupted run \\(${last.start} of 60`).test(error.message) && /--resume/.test(error.fix ?? ''));
    await assert.rejects(generateDataset({ lane, outDir: out, seeds: { from: 0, to: 13 }, resume: true }), /different run \(seeds was "0\.\.11", now "0\.\.13"\)/);
    await assert.rejects(generateDataset({ lane, outDir: out, seeds: SEEDS, resume: true, formats: ['jsonl'] }), /different run \(formats/);

    const resumed = await generateDataset({ lane, outDir: out, seeds: SEEDS, resume: true, workers: 2 });
    assert.equal(resumed.resumed, last.start, 'the part with a changed trace archive ran again');
    assert.equal(resumed.interrupted, false);
    assert.equal(resumed.written + resumed.rejected, EPISODES, 'the summary covers the whole run');
    assertSameData(out, single);
    assert.equal(existsSync(staging), false);
  });

  it('builds each part\'s Arrow columns where it ran, and still joins parts sealed without them into the same bytes', async () => {
    const out = temporaryDirectory();
    const stopped = await stopAfter(out, 31);
    const staging = join(out, '.partial');
    for (const file of ['episodes.arrow', 'episodes.parquet']) assert.equal(existsSync(join(staging, file)), false, `a stopped run leaves no half-written ${file}`);
    const parts = finishedParts(staging);
    assert.ok(parts.length >= 2);
    for (const part of parts) {
      assert.match(part.files.arrow ?? '', /^[0-9a-f]{64}$/, 'a run that writes Arrow or Parquet seals each part with its columns');
      assert.equal(tableFromIPC(readFileSync(join(staging, PARTS_DIR, `${partName(part.start, part.end)}.arrow`))).numRows, part.written);
    }
    // A part sealed by a factory that did not build columns in the parts: its rows come from its JSONL.
    const old = parts[0]!;
    const marker = join(staging, PARTS_DIR, `${partName(old.start, old.end)}.done.json`);
    const { arrow: _arrow, ...files } = old.files;
    writeFileSync(marker, JSON.stringify({ ...old, files }) + '\n');
    rmSync(join(staging, PARTS_DIR, `${partName(old.start, old.end)}.arrow`));
    const resumed = await generateDataset({ lane, outDir: out, seeds: SEEDS, resume: true, workers: 2 });
    assert.equal(resumed.resumed, stopped.written + stopped.rejected);
    assertSameData(out, single);
  });

  it('fails with the fix when a sealed part\'s columns cannot be read, keeping every part', async () => {
    const out = temporaryDirectory();
    await stopAfter(out, 25);
    const staging = join(out, '.partial');
    const [part] = finishedParts(staging);
    // Sealed as it is now (the marker's hash matches), but not Arrow: what a bad disk or a foreign edit leaves.
    const garbage = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
    writeFileSync(join(staging, PARTS_DIR, `${partName(part!.start, part!.end)}.arrow`), garbage);
    const marker = join(staging, PARTS_DIR, `${partName(part!.start, part!.end)}.done.json`);
    writeFileSync(marker, JSON.stringify({ ...part, files: { ...part!.files, arrow: createHash('sha256').update(garbage).digest('hex') } }) + '\n');
    await assert.rejects(
      generateDataset({ lane, outDir: out, seeds: SEEDS, resume: true, workers: 1 }),
      (error: unknown) => error instanceof FactoryError && /writing the Arrow\/Parquet copies failed/.test(error.message) && /--resume/.test(error.fix ?? ''),
    );
    assert.equal(existsSync(join(out, 'episodes.jsonl')), false, 'nothing published');
    assert.equal(finishedParts(staging).length > 1, true, 'the sealed parts are kept');
  });

  it('runs a world registered at run time on this thread, since a worker would not know it', async () => {
    registerWorld(flakyWorld);
    const directory = temporaryDirectory();
    const lanePath = join(directory, 'flaky-lane.json');
    writeFileSync(lanePath, JSON.stringify(flakyLane));
    const summary = await generateDataset({ lane: loadLane(lanePath), outDir: join(directory, 'out'), workers: 2 });
    assert.equal(summary.workers, 1);
    assert.equal(summary.written + summary.rejected, summary.episodes);
    assert.ok(summary.rejections.every((rejection) => rejection.stage === 'replay'), 'the episodes ran (and failed replay, as this world is built to)');
  });

  it('--restart discards an interrupted run', async () => {
    const out = temporaryDirectory();
    const controller = new AbortController();
    controller.abort();
    const stopped = await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 1 }, signal: controller.signal });
    assert.equal(stopped.interrupted, true);
    assert.equal(stopped.written, 0);
    const again = await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 1 }, restart: true });
    assert.equal(again.interrupted, false);
    assert.equal(again.resumed, 0);
    assert.equal(again.written + again.rejected, 10);
  });
});

describe('run parts', () => {
  it('finds the ranges no sealed part covers', () => {
    assert.deepEqual(missingRanges([], 0, 10), [{ start: 0, end: 10 }]);
    assert.deepEqual(missingRanges([{ start: 0, end: 4 }, { start: 6, end: 8 }], 0, 10), [{ start: 4, end: 6 }, { start: 8, end: 10 }]);
    assert.deepEqual(missingRanges([{ start: 0, end: 10 }], 0, 10), []);
    assert.deepEqual(missingRanges([{ start: 12, end: 20 }], 10, 30), [{ start: 10, end: 12 }, { start: 20, end: 30 }]);
  });

  it('keeps a sealed part only while its files match the sealed hashes', () => {
    const staging = temporaryDirectory();
    const summary = { start: 0, end: 2, written: 1, rejected: 1, completed: 1, faults_fired: {}, rejections: [{ record_id: 'b', stage: 'run', reason: 'x' }] };
    writePart(staging, summary, ['{"id":"a"}'], ['{"id":"b"}'], sealedTrace(staging, 0, 2));
    writePart(staging, { ...summary, start: 2, end: 4 }, ['{"id":"c"}'], ['{"id":"d"}'], sealedTrace(staging, 2, 4));
    assert.deepEqual(finishedParts(staging).map((part) => [part.start, part.end]), [[0, 2], [2, 4]]);
    writeFileSync(join(staging, PARTS_DIR, '000000002-000000004.episodes.jsonl'), '{"id":"changed"}\n');
    assert.deepEqual(finishedParts(staging).map((part) => [part.start, part.end]), [[0, 2]]);
    assert.deepEqual(readdirSync(join(staging, PARTS_DIR)).sort(), [
      '000000000-000000002.done.json',
      '000000000-000000002.episodes.jsonl',
      '000000000-000000002.rejected.jsonl',
      '000000000-000000002.trace.jsonl',
    ]);
  });

  it('drops a sealed part whose trace archive changed or went missing, and one sealed before parts had archives', () => {
    const staging = temporaryDirectory();
    const summary = { start: 0, end: 1, written: 1, rejected: 0, completed: 1, faults_fired: {}, rejections: [] };
    for (const start of [0, 1, 2, 3]) writePart(staging, { ...summary, start, end: start + 1 }, ['{"id":"a"}'], [], sealedTrace(staging, start, start + 1));
    assert.deepEqual(finishedParts(staging).map((part) => part.start), [0, 1, 2, 3]);
    appendFileSync(partTraceFile(staging, { start: 1, end: 2 }), '{"torn":');
    rmSync(partTraceFile(staging, { start: 2, end: 3 }));
    const marker = join(staging, PARTS_DIR, `${partName(3, 4)}.done.json`);
    const old = JSON.parse(readFileSync(marker, 'utf8')) as { files: Record<string, string> };
    delete old.files.trace;
    writeFileSync(marker, JSON.stringify(old) + '\n');
    assert.deepEqual(finishedParts(staging).map((part) => part.start), [0]);
    assert.deepEqual(readdirSync(join(staging, PARTS_DIR)).filter((entry) => entry.endsWith('.trace.jsonl')), [`${partName(0, 1)}.trace.jsonl`]);
  });

  it('checks a part\'s sealed Arrow columns too, and drops the part when they changed or went missing', () => {
    const staging = temporaryDirectory();
    const summary = { start: 0, end: 1, written: 1, rejected: 0, completed: 1, faults_fired: {}, rejections: [] };
    for (const start of [0, 1, 2]) writePart(staging, { ...summary, start, end: start + 1 }, ['{"id":"a"}'], [], sealedTrace(staging, start, start + 1), new Uint8Array([1, 2, start]));
    assert.deepEqual(finishedParts(staging).map((part) => part.start), [0, 1, 2]);
    writeFileSync(join(staging, PARTS_DIR, `${partName(1, 2)}.arrow`), new Uint8Array([1, 2, 9]));
    rmSync(join(staging, PARTS_DIR, `${partName(2, 3)}.arrow`));
    assert.deepEqual(finishedParts(staging).map((part) => part.start), [0]);
    assert.ok(readdirSync(join(staging, PARTS_DIR)).includes(`${partName(0, 1)}.arrow`), 'an intact part keeps its columns');
  });
});

describe('shards', () => {
  it('cuts the plan into contiguous slices that cover it once', () => {
    for (const [episodes, count] of [[200, 3], [7, 7], [5, 8], [1000, 16]] as const) {
      let cursor = 0;
      for (let index = 0; index < count; index++) {
        const slice = shardSlice(episodes, { index, count });
        assert.equal(slice.start, cursor);
        assert.ok(slice.end >= slice.start);
        cursor = slice.end;
      }
      assert.equal(cursor, episodes);
    }
  });

  it('reads I/N, or the index from a Kubernetes Indexed Job or a Slurm array', () => {
    assert.deepEqual(parseShard('2/4', {}), { index: 2, count: 4 });
    assert.deepEqual(parseShard('auto/4', { JOB_COMPLETION_INDEX: '3' }), { index: 3, count: 4 });
    assert.deepEqual(parseShard('auto/4', { SLURM_ARRAY_TASK_ID: '2' }), { index: 2, count: 4 });
    assert.deepEqual(parseShard('auto/4', { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_MIN: '1' }), { index: 3, count: 4 });
    assert.throws(() => parseShard('4/4', {}), /must be below 4/);
    assert.throws(() => parseShard('auto/4', {}), /JOB_COMPLETION_INDEX/);
    assert.throws(() => parseShard('1-4', {}), /is not I\/N/);
    assert.throws(() => parseShard('auto/2', { JOB_COMPLETION_INDEX: 'x' }), /not a shard index/);
  });
});
