// Every dataset command reads a dataset larger than the heap it is given: the
// records file (about 70 MB) could not be held in a 64 MB heap even as text,
// let alone parsed, so a command that read it whole would die out of memory.
// The control at the start shows that it would. The big sizes (250,000
// records) are the bench's (`npm run bench -- --scale`); this proves, at a
// size a test can afford, that each command streams.

import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { layOutJsonl } from '../../src/records/record-files.js';
import { sealDataset } from '../fixtures/sealed-dataset.js';
import { CLI, REPO_ROOT, runWithin, temporaryDirectory } from '../helpers.js';

const HEAP_MB = 64;
const COPIES = 90;
const SAMPLE = 'tool-world-v1';

/** The sample's records, each copied with its seed moved by 1,000 per copy: distinct ids, groups and commands. */
function bigDataset(dir: string): number {
  const lines = readFileSync(join(REPO_ROOT, 'datasets', SAMPLE, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
  const out: string[] = [];
  for (let copy = 0; copy < COPIES; copy++) {
    for (const line of lines) {
      const record = JSON.parse(line) as EpisodeRecord;
      const lineage = record.provenance.lineage;
      const [from, to] = [lineage.seed, lineage.seed + 1000 * copy];
      const id = record.record_id.replace(new RegExp(`\\.s${from}$`), `.s${to}`);
      lineage.generate_command = lineage.generate_command.replace(`--seeds ${from}..${from}`, `--seeds ${to}..${to}`).replaceAll(record.record_id, id);
      lineage.replay_command = lineage.replay_command.replaceAll(record.record_id, id);
      lineage.seed = to;
      record.record_id = id;
      out.push(JSON.stringify(record));
    }
  }
  writeFileSync(join(dir, 'episodes.jsonl'), out.join('\n') + '\n');
  writeFileSync(join(dir, 'rejected.jsonl'), '');
  return out.length;
}

function bounded(...args: string[]) {
  return runWithin(180_000, process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` } });
}

describe(`dataset commands in a ${HEAP_MB} MB heap`, () => {
  const work = temporaryDirectory('ef-bounded-');
  const dir = join(work, 'big');
  let records = 0;
  let completed = 0;

  before(async () => {
    cpSync(join(REPO_ROOT, 'datasets', SAMPLE), dir, { recursive: true });
    records = bigDataset(dir);
    completed = readFileSync(join(dir, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line.includes('"task_completed":true')).length;
    await sealDataset(dir);
  });

  it('is a dataset that does not fit: reading it whole dies at this heap', async () => {
    assert.ok(statSync(join(dir, 'episodes.jsonl')).size > HEAP_MB * 1024 * 1024, 'the records file is larger than the heap');
    const whole = `const lines = require('node:fs').readFileSync(${JSON.stringify(join(dir, 'episodes.jsonl'))}, 'utf8').split('\\n'); const records = lines.filter(Boolean).map((line) => JSON.parse(line)); console.log(records.length);`;
    const control = await runWithin(120_000, process.execPath, [`--max-old-space-size=${HEAP_MB}`, '-e', whole], { cwd: work, env: process.env });
    assert.notEqual(control.status, 0, 'holding every record must not fit in the heap');
    assert.match(control.stderr, /heap out of memory|Allocation failed/);
  });

  it('stats, export sft and dpo, and dedup stream it', async () => {
    const stats = await bounded('stats', dir, '--json');
    assert.equal(stats.status, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { records: number }).records, records);

    const sft = await bounded('export', 'sft', dir, '--out', join(work, 'sft.jsonl'), '--json');
    assert.equal(sft.status, 0, sft.stderr);
    assert.equal((JSON.parse(sft.stdout) as { exported: number }).exported, completed);

    const dpo = await bounded('export', 'dpo', dir, '--out', join(work, 'dpo.jsonl'), '--json');
    assert.equal(dpo.status, 0, dpo.stderr);
    assert.equal((JSON.parse(dpo.stdout) as { records: number }).records, records);

    // The copies hold the same conversations: all but the first of each are exact duplicates.
    const dedup = await bounded('dedup', dir, '--out', join(work, 'dedup'), '--json');
    assert.equal(dedup.status, 0, dedup.stderr);
    const summary = JSON.parse(dedup.stdout) as { records: number; kept: number; by_reason: { exact: number; near: number } };
    assert.equal(summary.records, records);
    assert.equal(summary.by_reason.exact, records - records / COPIES);
    assert.equal(summary.kept + summary.by_reason.near, records / COPIES);
  });

  it('audit and replay stream it', async () => {
    const audit = await bounded('audit', dir, '--sample', '0', '--json');
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
    assert.equal((JSON.parse(audit.stdout) as { records: number }).records, records);
    // The copies with moved seeds are not what their lane makes: replay reads every one and says so.
    const replay = await bounded('replay', dir, '--json');
    const replayed = JSON.parse(replay.stdout) as { records: number; verified: number };
    assert.equal(replay.status, 1, replay.stderr);
    assert.equal(replayed.records, records);
    assert.equal(replayed.verified, records / COPIES);
  });

  it('reads it cut into data/ files as it reads one file', async () => {
    const cut = join(work, 'cut');
    cpSync(dir, cut, { recursive: true });
    rmSync(join(cut, 'manifest.json'));
    const files = layOutJsonl(cut, 8 * 1024 * 1024);
    assert.ok(files.length >= 8, `${files.length} files`);
    await sealDataset(cut);
    const stats = await bounded('stats', cut, '--json');
    assert.equal(stats.status, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { records: number }).records, records);
    const audit = await bounded('audit', cut, '--sample', '0', '--json');
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
    assert.equal((JSON.parse(audit.stdout) as { records: number }).records, records);
  });

  it('split and card write into it', async () => {
    const split = await bounded('split', dir, '--test', '0.2', '--json');
    assert.equal(split.status, 0, split.stderr);
    const layout = JSON.parse(split.stdout) as { splits: { train: { rows: number }; test: { rows: number } } };
    assert.equal(layout.splits.train.rows + layout.splits.test.rows, records);
    const card = await bounded('card', dir, '--license', 'mit', '--json');
    assert.equal(card.status, 0, card.stderr);
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), new RegExp(`${records.toLocaleString('en-US')}|${records}`));
  });
});
