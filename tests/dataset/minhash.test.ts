import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readDataset } from '../../src/dataset/dataset-reader.js';
import {
  bandingFor,
  candidatePairs,
  candidateProbability,
  estimatedJaccard,
  exactJaccard,
  LshIndex,
  MinHasher,
  RECALL_AT_THRESHOLD,
  recordShingles,
  recordTokens,
  shingleSet,
} from '../../src/dataset/minhash.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT } from '../helpers.js';

const words = (from: number, to: number) => Array.from({ length: to - from }, (_, index) => `w${from + index}`);
/** A set of `to - from` distinct values: single-word shingles of distinct words. */
const setOf = (from: number, to: number) => shingleSet(words(from, to), 1);

describe('shingles and exact Jaccard', () => {
  it('makes sorted, repeat-free word n-gram sets', () => {
    const set = shingleSet(['a', 'b', 'c', 'a', 'b', 'c'], 3);
    // a b c, b c a, c a b, a b c again: three distinct shingles.
    assert.equal(set.length, 3);
    assert.deepEqual([...set], [...set].sort((left, right) => left - right));
    assert.equal(shingleSet(['only', 'two'], 3).length, 1, 'a stream shorter than the shingle size is one shingle');
    assert.equal(shingleSet([], 3).length, 0);
    assert.throws(() => shingleSet(['a'], 0), RangeError);
  });

  it('computes Jaccard as shared over union', () => {
    assert.equal(exactJaccard(setOf(0, 3), setOf(1, 4)), 2 / 4);
    assert.equal(exactJaccard(setOf(0, 10), setOf(0, 10)), 1);
    assert.equal(exactJaccard(setOf(0, 10), setOf(10, 20)), 0);
    assert.equal(exactJaccard(new Uint32Array(), new Uint32Array()), 1);
  });
});

describe('MinHash signatures', () => {
  const hasher = new MinHasher();

  it('estimates 1 for identical sets and about 0 for disjoint ones', () => {
    const left = setOf(0, 300);
    assert.equal(estimatedJaccard(hasher.signature(left), hasher.signature(setOf(0, 300))), 1);
    assert.ok(estimatedJaccard(hasher.signature(left), hasher.signature(setOf(300, 600))) <= 0.03);
  });

  it('estimates a known overlap within the sampling error of 128 permutations', () => {
    const errors: number[] = [];
    for (const [overlap, size] of [
      [250, 1000],
      [500, 1000],
      [800, 1000],
      [900, 1000],
      [50, 100],
    ] as const) {
      const left = setOf(0, size);
      const right = setOf(size - overlap, 2 * size - overlap);
      const truth = overlap / (2 * size - overlap);
      assert.equal(exactJaccard(left, right), truth);
      const estimate = estimatedJaccard(hasher.signature(left), hasher.signature(right));
      // Standard error is sqrt(J(1-J)/128) <= 0.045; 0.15 is more than three of them.
      assert.ok(Math.abs(estimate - truth) < 0.15, `overlap ${overlap}/${size}: estimate ${estimate} vs ${truth}`);
      errors.push(Math.abs(estimate - truth));
    }
    assert.ok(errors.reduce((sum, error) => sum + error, 0) / errors.length < 0.06, `mean error ${errors}`);
  });

  it('is deterministic: the same signature from another hasher and from another process', () => {
    const set = setOf(0, 50);
    const signature = hasher.signature(set);
    assert.deepEqual(new MinHasher().signature(set), signature);
    assert.equal(signature.length, 128);
    const script = `import { MinHasher, shingleSet } from ${JSON.stringify(join(REPO_ROOT, 'src/dataset/minhash.ts'))};
      const words = Array.from({ length: 50 }, (_, index) => 'w' + index);
      process.stdout.write(JSON.stringify([...new MinHasher().signature(shingleSet(words, 1))]));`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.deepEqual(JSON.parse(output), [...signature]);
  });

  it('signs an empty set without failing, and refuses signatures of different lengths', () => {
    assert.ok(hasher.signature(new Uint32Array()).every((value) => value === 0xffffffff));
    assert.throws(() => estimatedJaccard(new Uint32Array(4), new Uint32Array(8)), RangeError);
  });
});

describe('LSH banding', () => {
  it('picks the largest rows per band that still catches a pair at the threshold 99% of the time', () => {
    assert.deepEqual({ ...bandingFor(0.9), recall_at_threshold: undefined }, { bands: 12, rows: 10, recall_at_threshold: undefined });
    for (const threshold of [0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99, 1]) {
      const { bands, rows, recall_at_threshold: recall } = bandingFor(threshold);
      assert.ok(bands * rows <= 128);
      assert.ok(recall >= RECALL_AT_THRESHOLD, `${threshold}: ${bands}x${rows} recall ${recall}`);
      assert.equal(recall, candidateProbability(threshold, bands, rows));
      if (rows < 128) {
        const longer = rows + 1;
        assert.ok(candidateProbability(threshold, Math.floor(128 / longer), longer) < RECALL_AT_THRESHOLD, `${threshold}: ${longer} rows would also do`);
      }
    }
    assert.throws(() => bandingFor(0), RangeError);
    assert.throws(() => bandingFor(1.5), RangeError);
  });

  it('makes candidates of similar sets and not of unrelated ones', () => {
    const hasher = new MinHasher();
    const base = hasher.signature(setOf(0, 200));
    const similar = hasher.signature(setOf(5, 205)); // Jaccard 195/205 = 0.95
    const unrelated = hasher.signature(setOf(1000, 1200));
    const banding = bandingFor(0.9);
    assert.deepEqual(candidatePairs([base, similar, unrelated], banding), [[0, 1]]);
    const index = new LshIndex(banding);
    index.add(7, base);
    index.add(3, unrelated);
    assert.deepEqual(index.candidates(similar), [7]);
    assert.deepEqual(index.candidates(hasher.signature(setOf(1000, 1200))), [3]);
    assert.throws(() => index.candidates(new Uint32Array(10)), RangeError);
  });

  it('gives, with a limit per bucket, only the most recently added items of each bucket', () => {
    const hasher = new MinHasher();
    const signature = hasher.signature(setOf(0, 200));
    const index = new LshIndex(bandingFor(0.9));
    // Ten items with the same signature share every bucket.
    for (let item = 0; item < 10; item++) index.add(item, signature);
    assert.deepEqual(index.candidates(signature), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(index.candidates(signature, 3), [7, 8, 9]);
  });

  it('finds every pair of real records at or above the threshold that a brute-force comparison finds', async () => {
    const hasher = new MinHasher();
    for (const lane of ['tool-world-v1', 'tool-world-faults-v1']) {
      const records = (await readDataset(join(REPO_ROOT, 'datasets', lane))).rows.map((row) => row.record);
      const sets = records.map((record) => recordShingles(record));
      const signatures = sets.map((set) => hasher.signature(set));
      for (const threshold of [0.6, 0.8, 0.9]) {
        const truth: string[] = [];
        for (let left = 0; left < sets.length; left++) {
          for (let right = left + 1; right < sets.length; right++) if (exactJaccard(sets[left]!, sets[right]!) >= threshold) truth.push(`${left},${right}`);
        }
        const found = new Set(candidatePairs(signatures, bandingFor(threshold)).map((pair) => pair.join(',')));
        assert.ok(truth.length > 0, `${lane} has pairs at ${threshold}`);
        assert.deepEqual(truth.filter((pair) => !found.has(pair)), [], `${lane} at ${threshold}: pairs LSH missed`);
      }
    }
  });
});

describe('record tokens', () => {
  it('keeps roles, texts, calls with canonical arguments and tool outcomes, but not tool result contents or ids', async () => {
    const rows = (await readDataset(join(REPO_ROOT, 'datasets', 'tool-world-v1'))).rows;
    const record = rows.find((row) => row.record.provenance.lineage.variant === 'wrong_type_first' && row.record.task.id === 'find-open-bugs')!.record;
    const tokens = recordTokens(record);
    assert.deepEqual(tokens.slice(0, 1), ['<system>']);
    assert.ok(tokens.includes('<call:search_issues>'));
    assert.ok(tokens.includes('twenty'), 'the wrongly typed argument is part of the call');
    assert.ok(tokens.includes('<error:invalid_arguments>'));
    assert.ok(tokens.includes('<ok>'));
    const toolResult = record.messages.find((message) => message.role === 'tool' && message.tool_result.ok)!;
    const title = (JSON.parse(toolResult.content) as { issues: { title: string }[] }).issues[0]!.title;
    const titleWords = title.toLowerCase().match(/[\p{L}\p{N}]+/gu)!.filter((word) => !tokens.includes(word));
    assert.ok(titleWords.length > 0, `words of a result title (${title}) stay out of the tokens`);
    const userWords = record.messages.find((message) => message.role === 'user')!.content.toLowerCase().match(/[\p{L}\p{N}]+/gu)!;
    const systemWords = new Set(record.messages[0]!.content.toLowerCase().match(/[\p{L}\p{N}]+/gu)!);
    assert.ok(tokens.includes('<user>'), 'the user turn counts as a turn');
    const callWords = new Set(record.messages.flatMap((message) => (message.role === 'assistant' ? [message.content, ...(message.tool_calls ?? []).map((call) => call.arguments)] : [])).join(' ').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
    assert.deepEqual(userWords.filter((word) => tokens.includes(word) && !systemWords.has(word) && !callWords.has(word)), [], 'the user\'s wording stays out: what they asked shows in the calls and the answer');

    const renamed: EpisodeRecord = structuredClone(record);
    renamed.record_id = 'another-id';
    renamed.provenance.lineage.seed = 999;
    for (const message of renamed.messages) if (message.role === 'assistant') for (const call of message.tool_calls ?? []) call.id = `other_${call.id}`;
    assert.deepEqual(recordTokens(renamed), tokens);
  });
});
