// The walk from generate to training files of docs/dataset-operations.md, run as a user would:
// generate, dedup, audit, split, export sft and dpo, stats, card, audit again.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli, temporaryDirectory } from '../helpers.js';

const cli = runCli;

describe('from generate to training-ready files', () => {
  const workdir = temporaryDirectory('ef-pipeline-');

  it('runs every step, and the final dataset passes its audit', () => {
    const steps: [string[], RegExp][] = [
      [['generate', 'tool-world-dpo-v1', '--seeds', '0..0'], /^generate tool-world-dpo-v1: 35 episodes, 35 records written, 0 rejected/],
      [['dedup', 'datasets/tool-world-dpo-v1', '--out', 'datasets/dpo-clean'], /^dedup datasets\/tool-world-dpo-v1: 35 records, \d+ kept, \d+ dropped \(exact \d+, near \d+, semantic 0\)/],
      [['audit', 'datasets/dpo-clean', '--parent', 'datasets/tool-world-dpo-v1'], /manifest ok, lines ok, ids ok, lineage ok, provenance ok, turns ok, columnar ok, reproduction ok\n$/],
      [['split', 'datasets/dpo-clean', '--test', '0.2'], /^split datasets\/dpo-clean: train \d+ records \(4 tasks\), test \d+ records \(1 task: /],
      [['export', 'sft', 'datasets/dpo-clean', '--out', 'sft.jsonl'], /^export sft datasets\/dpo-clean: \d+ rows from \d+ records/],
      [['export', 'sft', 'datasets/dpo-clean', '--out', 'sft-qwen.jsonl', '--render', 'hermes'], /rendered with hermes -> sft-qwen\.jsonl\n$/],
      [['export', 'dpo', 'datasets/tool-world-dpo-v1', '--out', 'dpo.jsonl'], /^export dpo datasets\/tool-world-dpo-v1: [1-9]\d* pairs from 5 task\/seed groups/],
      [['card', 'datasets/dpo-clean'], /^datasets\/dpo-clean\/README\.md\n$/],
      [['audit', 'datasets/dpo-clean', '--parent', 'datasets/tool-world-dpo-v1'], /reproduction ok\n$/],
    ];
    for (const [args, expected] of steps) {
      const result = cli(workdir, ...args);
      assert.equal(result.status, 0, `${args.join(' ')}\n${result.stdout}${result.stderr}`);
      assert.match(result.stdout, expected, args.join(' '));
    }
    for (const file of ['episodes.jsonl', 'episodes.arrow', 'episodes.parquet', 'dropped.jsonl', 'dedup.json', 'train.jsonl', 'test.jsonl', 'split.json', 'README.md', 'manifest.json']) {
      assert.ok(existsSync(join(workdir, 'datasets', 'dpo-clean', file)), file);
    }
    const rendered = JSON.parse(readFileSync(join(workdir, 'sft-qwen.jsonl'), 'utf8').split('\n')[0]!);
    assert.ok(rendered.text.startsWith('<|im_start|>system\n') && rendered.text.endsWith('<|im_end|>\n'), 'the conversation in Qwen\'s template');
    const stats = JSON.parse(cli(workdir, 'stats', 'datasets/dpo-clean', '--json').stdout);
    const kept = readFileSync(join(workdir, 'datasets', 'dpo-clean', 'episodes.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    assert.equal(stats.records, kept);
    const manifest = JSON.parse(readFileSync(join(workdir, 'datasets', 'dpo-clean', 'manifest.json'), 'utf8'));
    assert.equal(manifest.operation, 'card');
    assert.equal(manifest.source, 'datasets/tool-world-dpo-v1');
  });

  it('exits 1 when a file of the dataset was edited or cut short', () => {
    const file = join(workdir, 'datasets', 'dpo-clean', 'train.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, -100));
    const result = cli(workdir, 'audit', 'datasets/dpo-clean', '--sample', '0');
    assert.equal(result.status, 1);
    assert.match(result.stdout, /^FAIL manifest: train\.jsonl: sha256 is /m);
    assert.match(result.stdout, /^FAIL lines: train\.jsonl:\d+: torn last line/m);
  });
});
