import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { readDataset } from '../../src/dataset/dataset-reader.js';
import { DEDUP_REPORT_FILE, dedupDataset, type DedupReport, DROPPED_FILE } from '../../src/dataset/dedup.js';
import { exactJaccard, recordShingles } from '../../src/dataset/minhash.js';
import { trajectoryHash } from '../../src/dataset/trajectory.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-v1');
const FAULTS = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1');

interface Expected {
  kept: string[];
  dropped: { record_id: string; reason: string; duplicate_of: string; similarity: number }[];
}

/**
 * The expected outcome, computed the slow and obvious way: in file order, a
 * record whose trajectory hash equals a kept record's is an exact duplicate;
 * otherwise the kept record with the highest shingle Jaccard (earliest on a
 * tie), compared with every kept record rather than through LSH, decides near.
 */
function bruteForce(records: EpisodeRecord[], near: number | false): Expected {
  const kept: { record: EpisodeRecord; hash: string; shingles: Uint32Array }[] = [];
  const expected: Expected = { kept: [], dropped: [] };
  for (const record of records) {
    const hash = trajectoryHash(record);
    const same = kept.find((entry) => entry.hash === hash);
    if (same) {
      expected.dropped.push({ record_id: record.record_id, reason: 'exact', duplicate_of: same.record.record_id, similarity: 1 });
      continue;
    }
    const shingles = recordShingles(record);
    if (near !== false) {
      let best: { id: string; similarity: number } | undefined;
      for (const entry of kept) {
        const similarity = exactJaccard(shingles, entry.shingles);
        if (similarity >= near && (!best || similarity > best.similarity)) best = { id: entry.record.record_id, similarity };
      }
      if (best) {
        expected.dropped.push({ record_id: record.record_id, reason: 'near', duplicate_of: best.id, similarity: best.similarity });
        continue;
      }
    }
    kept.push({ record, hash, shingles });
    expected.kept.push(record.record_id);
  }
  return expected;
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1);
const sourceLines = (dir: string) => lines(join(dir, 'episodes.jsonl'));
const records = (dir: string) => sourceLines(dir).map((line) => JSON.parse(line) as EpisodeRecord);

function actual(outDir: string): Expected {
  return {
    kept: lines(join(outDir, 'episodes.jsonl')).map((line) => (JSON.parse(line) as EpisodeRecord).record_id),
    dropped: lines(join(outDir, DROPPED_FILE)).map((line) => {
      const { record_id, reason, duplicate_of, similarity } = JSON.parse(line) as Expected['dropped'][number];
      return { record_id, reason, duplicate_of, similarity };
    }),
  };
}

/** A copy of the sample in which some episodes were reproduced by other seeds: same trajectory, new id, seed and provenance. */
function datasetWithReproducedSeeds(dir: string): { dir: string; clones: number } {
  const source = sourceLines(SAMPLE);
  const output: string[] = [...source];
  let clones = 0;
  for (const line of source) {
    const record = JSON.parse(line) as EpisodeRecord;
    if (record.task.id !== 'close-named-issue' && record.task.id !== 'relabel-issue') continue;
    const clone: EpisodeRecord = structuredClone(record);
    clone.record_id = `${record.record_id}.reproduced`;
    clone.provenance.lineage.seed = record.provenance.lineage.seed + 1000;
    clone.provenance.produced_at = '2030-01-01T00:00:00Z';
    output.push(JSON.stringify(clone));
    clones++;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'episodes.jsonl'), output.join('\n') + '\n');
  return { dir, clones };
}

describe('dedup on the committed samples', () => {
  const work = temporaryDirectory('ef-dedup-');

  it('drops exactly what an independent brute-force comparison drops, at several thresholds', async () => {
    for (const [dir, near] of [
      [SAMPLE, 0.9],
      [SAMPLE, 0.7],
      [FAULTS, 0.9],
      [FAULTS, 0.6],
    ] as const) {
      const source = records(dir);
      const expected = bruteForce(source, near);
      // The samples hold no two identical trajectories (each seed draws a new world), only near ones.
      assert.equal(new Set(source.map(trajectoryHash)).size, source.length);
      assert.ok(expected.dropped.length > 0, `${dir} has near duplicates at ${near}`);
      const outDir = join(work, `${dir.split('/').pop()}-${near}`);
      const summary = await dedupDataset({ dir, outDir, near });
      assert.deepEqual(actual(outDir), expected, `${dir} at ${near}`);
      assert.equal(summary.records, source.length);
      assert.equal(summary.kept, expected.kept.length);
      assert.equal(summary.dropped, expected.dropped.length);
      assert.deepEqual(summary.by_reason, { exact: 0, near: expected.dropped.length, semantic: 0 });
      assert.equal(summary.near_threshold, near);
      assert.ok(summary.wall_seconds >= 0);
      assert.ok(expected.dropped.every((row) => row.similarity >= near && row.similarity < 1));
    }
  });

  it('keeps every record with --no-near on a sample without identical trajectories', async () => {
    const outDir = join(work, 'no-near');
    const summary = await dedupDataset({ dir: SAMPLE, outDir, near: false });
    assert.equal(summary.kept, 40);
    assert.equal(summary.near_threshold, null);
    assert.equal(readFileSync(join(outDir, DROPPED_FILE), 'utf8'), '');
  });

  it('collapses seeds that reproduce an identical episode to the first one, as exact duplicates', async () => {
    const { dir, clones } = datasetWithReproducedSeeds(join(work, 'reproduced'));
    const source = records(dir);
    const groups = new Map<string, string[]>();
    for (const record of source) groups.set(trajectoryHash(record), [...(groups.get(trajectoryHash(record)) ?? []), record.record_id]);
    const duplicates = [...groups.values()].filter((ids) => ids.length > 1);
    assert.equal(duplicates.length, clones);

    const outDir = join(work, 'reproduced-exact');
    const summary = await dedupDataset({ dir, outDir, near: false });
    assert.deepEqual(summary.by_reason, { exact: clones, near: 0, semantic: 0 });
    const result = actual(outDir);
    assert.deepEqual(result.kept, [...groups.values()].map((ids) => ids[0]));
    assert.deepEqual(
      result.dropped,
      duplicates.map(([first, second]) => ({ record_id: second, reason: 'exact', duplicate_of: first, similarity: 1 })),
    );

    const both = join(work, 'reproduced-both');
    const combined = await dedupDataset({ dir, outDir: both });
    const expected = bruteForce(source, 0.9);
    assert.deepEqual(actual(both), expected);
    // A reproduction of a kept episode is an exact duplicate of it, never a near one.
    const keptOriginals = duplicates.filter(([first]) => expected.kept.includes(first!));
    assert.ok(keptOriginals.length > 0);
    for (const [first, second] of keptOriginals) {
      assert.deepEqual(actual(both).dropped.find((row) => row.record_id === second), { record_id: second, reason: 'exact', duplicate_of: first, similarity: 1 });
    }
    assert.equal(combined.by_reason.exact, keptOriginals.length);
  });

  it('writes dropped rows with the original record bytes, and kept records with dedup lineage', async () => {
    const { dir } = datasetWithReproducedSeeds(join(work, 'contents'));
    const outDir = join(work, 'contents-out');
    await dedupDataset({ dir, outDir, near: 0.8 });
    const source = new Map(sourceLines(dir).map((line) => [(JSON.parse(line) as EpisodeRecord).record_id, line]));

    const kept = lines(join(outDir, 'episodes.jsonl'));
    const keptIds = new Set<string>();
    for (const line of kept) {
      const record = JSON.parse(line) as EpisodeRecord;
      keptIds.add(record.record_id);
      const original = JSON.parse(source.get(record.record_id)!) as EpisodeRecord;
      assert.equal(record.provenance.lineage.operation, 'dedup');
      assert.equal(record.provenance.lineage.source_record_id, record.record_id);
      // Apart from those two fields, the line is the source line byte for byte.
      record.provenance.lineage.operation = original.provenance.lineage.operation;
      record.provenance.lineage.source_record_id = original.provenance.lineage.source_record_id;
      assert.equal(JSON.stringify(record), source.get(record.record_id));
    }
    const reread = await readDataset(outDir);
    assert.deepEqual(reread.problems, [], 'kept records are valid records');

    const dropped = lines(join(outDir, DROPPED_FILE));
    assert.ok(dropped.length > 0);
    for (const line of dropped) {
      const row = JSON.parse(line) as { record_id: string; reason: string; duplicate_of: string; similarity: number; record: EpisodeRecord };
      assert.deepEqual(Object.keys(row), ['record_id', 'reason', 'duplicate_of', 'similarity', 'record']);
      assert.ok(['exact', 'near'].includes(row.reason));
      assert.ok(keptIds.has(row.duplicate_of), `${row.record_id} names a kept record`);
      assert.ok(!keptIds.has(row.record_id));
      assert.equal(row.record.record_id, row.record_id);
      assert.ok(line.endsWith(`,"record":${source.get(row.record_id)}}`), 'the dropped record is the source line, unchanged');
      assert.ok(row.reason === 'exact' ? row.similarity === 1 : row.similarity >= 0.8);
    }
    assert.equal(kept.length + dropped.length, source.size);

    const report = JSON.parse(readFileSync(join(outDir, DEDUP_REPORT_FILE), 'utf8')) as DedupReport;
    assert.equal(report.format, 'episode-factory.dedup.v2');
    assert.deepEqual(report.source.map((file) => [file.path, file.rows]), [['episodes.jsonl', source.size]], 'the source is named by its record files');
    assert.deepEqual(report.counts.records, source.size);
    assert.deepEqual(report.near, { threshold: 0.8, permutations: 128, shingle_size: 3, bands: 21, rows: 6 });
    assert.equal(report.semantic, null);
    assert.deepEqual(report.files.map((file) => [file.path, file.rows]), [[DROPPED_FILE, dropped.length], ['episodes.jsonl', kept.length]]);
    assert.deepEqual(readdirSync(outDir).sort(), [DEDUP_REPORT_FILE, DROPPED_FILE, 'episodes.jsonl']);
  });

  it('writes byte-identical files from the same input, and may replace its own earlier output', async () => {
    const first = join(work, 'bytes-1');
    const second = join(work, 'bytes-2');
    await dedupDataset({ dir: FAULTS, outDir: first, near: 0.6 });
    await dedupDataset({ dir: FAULTS, outDir: second, near: 0.6 });
    for (const file of ['episodes.jsonl', DROPPED_FILE, DEDUP_REPORT_FILE]) {
      assert.ok(readFileSync(join(first, file)).equals(readFileSync(join(second, file))), file);
    }
    const before = readFileSync(join(first, 'episodes.jsonl'));
    await dedupDataset({ dir: FAULTS, outDir: first, near: 0.9 });
    assert.notEqual(readFileSync(join(first, 'episodes.jsonl')).length, before.length, 'the earlier output was replaced');
    await dedupDataset({ dir: FAULTS, outDir: first, near: 0.6 });
    assert.ok(readFileSync(join(first, 'episodes.jsonl')).equals(before));
  });

  it('is not fooled by varied wording: the same episode asked another way is a near duplicate, never a new episode', async () => {
    const source = sourceLines(SAMPLE);
    const originals = source.map((line) => JSON.parse(line) as EpisodeRecord).filter((record) => record.task.id === 'close-named-issue');
    const reworded = originals.map((record) => {
      const copy: EpisodeRecord = structuredClone(record);
      copy.record_id = `${record.record_id}.reworded`;
      const user = copy.messages.find((message) => message.role === 'user')!;
      // Another greeting, the facts in another order, a synonym: every value the agent used is still there.
      const number = /#(\d+)/.exec(user.content)![1];
      user.content = `Good evening. Could you shut issue #${number} as completed and say who had it? It was fixed in the last release.`;
      copy.provenance.lineage.phrasing = 'say=9 greet=9';
      return copy;
    });
    const dir = join(work, 'reworded');
    mkdirSync(dir);
    writeFileSync(join(dir, 'episodes.jsonl'), [...source, ...reworded.map((record) => JSON.stringify(record))].join('\n') + '\n');
    for (const [index, copy] of reworded.entries()) {
      assert.notEqual(trajectoryHash(copy), trajectoryHash(originals[index]!), 'what the user said differs, so it is not an exact duplicate');
      assert.equal(exactJaccard(recordShingles(copy), recordShingles(originals[index]!)), 1, 'what the episode did is the same');
    }
    const outDir = join(work, 'reworded-out');
    const summary = await dedupDataset({ dir, outDir });
    const dropped = actual(outDir).dropped.filter((row) => row.record_id.endsWith('.reworded'));
    const kept = new Set(actual(outDir).kept);
    assert.equal(dropped.length, reworded.length, 'every rewording is dropped');
    for (const row of dropped) {
      assert.equal(row.reason, 'near');
      assert.equal(row.similarity, 1);
      assert.ok(kept.has(row.duplicate_of), `${row.record_id} names a kept record`);
    }
    assert.equal(summary.by_reason.exact, 0);
    // Records drawn with a phrasing grammar keep the phrasing in their lineage through dedup.
    for (const line of lines(join(outDir, 'episodes.jsonl'))) {
      const record = JSON.parse(line) as EpisodeRecord;
      const original = [...originals, ...reworded].find((entry) => entry.record_id === record.record_id);
      if (original) assert.equal(record.provenance.lineage.phrasing, original.provenance.lineage.phrasing);
    }
  });

  it('finds nothing more to drop in its own output', async () => {
    const once = join(work, 'once');
    const twice = join(work, 'twice');
    const first = await dedupDataset({ dir: FAULTS, outDir: once, near: 0.6 });
    const second = await dedupDataset({ dir: once, outDir: twice, near: 0.6 });
    assert.equal(second.records, first.kept);
    assert.equal(second.dropped, 0);
  });
});

describe('dedup refusals', () => {
  const work = temporaryDirectory('ef-dedup-refusals-');

  const refusal = async (options: Parameters<typeof dedupDataset>[0], message: RegExp) => {
    const error = await dedupDataset(options).then(
      () => assert.fail('dedup should have refused'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof FactoryError, String(error));
    assert.match(error.message, message);
    assert.ok(error.fix, 'names a fix');
    return error;
  };

  it('refuses a dataset with a torn or corrupt line, listing each one, and writes nothing', async () => {
    const dir = join(work, 'torn');
    mkdirSync(dir);
    const source = sourceLines(SAMPLE);
    const torn = source.slice(0, 5);
    torn[2] = '{"record_id": "broken", ';
    writeFileSync(join(dir, 'episodes.jsonl'), torn.join('\n') + '\n' + source[5]!.slice(0, 200));
    const outDir = join(work, 'torn-out');
    const error = await refusal({ dir, outDir }, /has 2 unreadable lines; nothing was deduplicated/);
    assert.deepEqual(
      error.problems.map((problem) => [problem.where, /not valid JSON|torn last line/.test(problem.reason)]),
      [
        [join(dir, 'episodes.jsonl') + ':3', true],
        [join(dir, 'episodes.jsonl') + ':6', true],
      ],
    );
    assert.match(error.problems[1]!.reason, /torn last line/);
    assert.equal(existsSync(outDir), false);
  });

  it('refuses a line that parses but is not a valid record', async () => {
    const dir = join(work, 'invalid');
    mkdirSync(dir);
    const source = sourceLines(SAMPLE);
    writeFileSync(join(dir, 'episodes.jsonl'), [source[0], '{"record_id":"x"}', source[1]].join('\n') + '\n');
    const error = await refusal({ dir, outDir: join(work, 'invalid-out') }, /has 1 unreadable line; nothing was deduplicated/);
    assert.equal(error.problems[0]!.where, join(dir, 'episodes.jsonl') + ':2');
    assert.match(error.problems[0]!.reason, /not a valid record/);
  });

  it('never writes over its input', async () => {
    await refusal({ dir: SAMPLE, outDir: SAMPLE }, /is the source dataset/);
    await refusal({ dir: SAMPLE, outDir: SAMPLE + '/' }, /is the source dataset/);
  });

  it('refuses a non-empty directory that an earlier dedup did not write', async () => {
    const outDir = join(work, 'occupied');
    mkdirSync(outDir);
    writeFileSync(join(outDir, 'notes.txt'), 'mine');
    const error = await refusal({ dir: SAMPLE, outDir }, /not empty and is not the output of an earlier dedup/);
    assert.match(error.fix!, /pass an empty or new directory/);
    assert.deepEqual(readdirSync(outDir), ['notes.txt']);
  });

  it('refuses thresholds outside (0, 1] and a cosine threshold without an embedder', async () => {
    await refusal({ dir: SAMPLE, outDir: join(work, 'zero'), near: 0 }, /must be a number in \(0, 1\]/);
    await refusal({ dir: SAMPLE, outDir: join(work, 'big'), near: 1.2 }, /must be a number in \(0, 1\]/);
    await refusal({ dir: SAMPLE, outDir: join(work, 'cos'), cosine: 0.9 }, /without an embedder/);
  });

  it('refuses a directory without episodes.jsonl', async () => {
    const error = await dedupDataset({ dir: work, outDir: join(work, 'none') }).catch((caught: unknown) => caught);
    assert.ok(error instanceof FactoryError);
    assert.equal(error.code, 'dataset_not_found');
  });
});
