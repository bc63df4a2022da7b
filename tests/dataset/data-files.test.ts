// A dataset past the size bound of one file is written as data/train-NNNNN-of-NNNNN.*
// files, named as the Hugging Face Hub expects. Whatever wrote it (one run on
// two threads, shards merged, dedup), its records are the bytes of the
// single-file run cut at record boundaries, each file within the bound, each
// columnar copy the copy of its own JSONL; every dataset command reads it as
// it reads one file; and a file missing, added or altered is named, never
// read as a shorter dataset.

import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { datasetStats } from '../../src/dataset/dataset-stats.js';
import { dedupDataset } from '../../src/dataset/dedup.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { writeColumnar } from '../../src/records/columnar-files.js';
import type { Manifest } from '../../src/records/manifest.js';
import { dataFileName, FileCutter, recordFiles } from '../../src/records/record-files.js';
import { mergeShards } from '../../src/shards/merge-shards.js';
import { REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

const lane = loadLane('tool-world-v1', REPO_ROOT);
const SEEDS = { from: 0, to: 5 };
/** About a quarter of the run's records a file: cuts fall inside the parts the threads write. */
const BOUND = 150_000;

const read = (path: string) => readFileSync(path);
const jsonlOf = (dir: string) => Buffer.concat(recordFiles(dir).jsonl.map((file) => read(join(dir, file))));

describe('records past the size bound are data/ files named as the Hub expects', () => {
  const work = temporaryDirectory();
  const single = join(work, 'single');
  const cut = join(work, 'cut');
  before(async () => {
    await generateDataset({ lane, seeds: SEEDS, outDir: single, workers: 1 });
    await generateDataset({ lane, seeds: SEEDS, outDir: cut, workers: 2, maxFileBytes: BOUND });
  });

  it('cuts the single-file run at record boundaries, each file within the bound and each copy written from its own JSONL', async () => {
    const files = recordFiles(cut);
    assert.equal(files.layout, 'data-files');
    assert.ok(files.jsonl.length >= 3, `${files.jsonl.length} files`);
    assert.deepEqual(files.jsonl, files.jsonl.map((_, index) => dataFileName(index, files.jsonl.length, 'jsonl')));
    assert.equal(existsSync(join(cut, 'episodes.jsonl')), false, 'one layout only');
    assert.ok(jsonlOf(cut).equals(read(join(single, 'episodes.jsonl'))), 'the files together are the single-file run, byte for byte');
    for (const file of files.jsonl) {
      assert.ok(statSync(join(cut, file)).size <= BOUND, `${file} is within the bound`);
      assert.ok(read(join(cut, file)).at(-1) === 0x0a, `${file} ends at a record boundary`);
    }
    for (const [index, file] of files.jsonl.entries()) {
      const reference = temporaryDirectory();
      await writeColumnar(join(cut, file), { arrow: join(reference, 'a.arrow'), parquet: join(reference, 'a.parquet') });
      assert.ok(read(join(cut, files.arrow[index]!)).equals(read(join(reference, 'a.arrow'))), `${files.arrow[index]} is the copy of ${file}`);
      assert.ok(read(join(cut, files.parquet[index]!)).equals(read(join(reference, 'a.parquet'))), `${files.parquet[index]} is the copy of ${file}`);
    }
    const manifest = JSON.parse(readFileSync(join(cut, 'manifest.json'), 'utf8')) as Manifest;
    const listed = manifest.files.map((file) => file.path);
    for (const file of [...files.jsonl, ...files.arrow, ...files.parquet]) assert.ok(listed.includes(file), `the manifest hashes ${file}`);
  });

  it('is read by every command as the single file is: the same stats, replay and audit', async () => {
    assert.deepEqual(JSON.stringify((await datasetStats(cut)).records), JSON.stringify((await datasetStats(single)).records));
    const replayed = await replayDataset(cut, { workers: 2 });
    assert.equal(replayed.failed, 0);
    assert.equal(replayed.verified, (await replayDataset(single)).verified);
    assert.deepEqual(replayed.manifest_problems, []);
    const audit = await auditDataset(cut, { full: true, workers: 2 });
    assert.deepEqual(audit.findings, []);
    assert.deepEqual(audit.sampled, (await auditDataset(single, { full: true })).sampled);
    for (const command of [['split', cut, '--test', '0.2'], ['export', 'sft', cut], ['export', 'dpo', cut, '--out', join(work, 'dpo.jsonl')], ['card', cut, '--license', 'mit'], ['report', cut]]) {
      const result = runCli(REPO_ROOT, ...command);
      assert.ok(result.status === 0 || (command[1] === 'dpo' && result.status === 1), `${command.join(' ')}: ${result.stderr}`);
    }
    const card = readFileSync(join(cut, 'README.md'), 'utf8');
    assert.match(card, /`data\/` \| 30 \|/, 'the card counts the records in data/');
  });

  it('splits a big dataset into splits/<side>-NNNNN-of-NNNNN.jsonl files that the exports, the card and audit read, and back into one file each', async () => {
    const split = join(work, 'split');
    cpSync(cut, split, { recursive: true });
    const cli = (...args: string[]) => {
      const result = runCli(REPO_ROOT, ...args);
      assert.equal(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    cli('split', split, '--test', '0.2', '--max-file-size', '100KB');
    const layout = JSON.parse(readFileSync(join(split, 'split.json'), 'utf8')) as { splits: Record<string, { path: string; rows: number }> };
    assert.equal(layout.splits.train!.path, 'splits/train-*.jsonl');
    const trainFiles = readdirSync(join(split, 'splits')).filter((name) => name.startsWith('train-'));
    assert.ok(trainFiles.length >= 2, `${trainFiles.length} train files`);
    const joined = Buffer.concat(trainFiles.sort().map((name) => read(join(split, 'splits', name))));
    assert.equal(joined.toString('utf8').trim().split('\n').length, layout.splits.train!.rows);
    for (const name of trainFiles) assert.ok(statSync(join(split, 'splits', name)).size <= 100 * 1024);
    assert.match(cli('export', 'sft', split), new RegExp(`sft/train\\.jsonl \\(${layout.splits.train!.rows}\\)`));
    cli('card', split, '--license', 'mit');
    assert.match(readFileSync(join(split, 'README.md'), 'utf8'), /- split: "?train"?\n\s+path: "splits\/train-\*\.jsonl"/);
    assert.deepEqual((await auditDataset(split)).findings, []);
    // A file of a split removed: the exports and audit name it.
    const removed = join(work, 'split-removed');
    cpSync(split, removed, { recursive: true });
    rmSync(join(removed, 'splits', trainFiles[0]!));
    const refused = runCli(REPO_ROOT, 'export', 'sft', removed);
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, new RegExp(`splits/${trainFiles[0]!.replace('.', '\\.')}`));
    // Split again within the bound: one file a side, and the earlier files are gone.
    cli('split', split, '--test', '0.2');
    assert.equal(existsSync(join(split, 'splits')), false);
    assert.ok(existsSync(join(split, 'train.jsonl')) && existsSync(join(split, 'test.jsonl')));
    assert.deepEqual((await auditDataset(split)).findings, []);
  });

  it('merges shards into the layout one run writes, and dedup lays out its output the same way', async () => {
    const shards = [0, 1].map((index) => join(work, `shard-${index}`));
    for (const [index, dir] of shards.entries()) await generateDataset({ lane, seeds: SEEDS, outDir: dir, workers: 1, shard: { index, count: 2 }, maxFileBytes: BOUND });
    const merged = join(work, 'merged');
    await mergeShards({ sources: shards, outDir: merged, maxFileBytes: BOUND });
    assert.deepEqual(readdirSync(join(merged, 'data')), readdirSync(join(cut, 'data')));
    for (const file of readdirSync(join(cut, 'data'))) assert.ok(read(join(merged, 'data', file)).equals(read(join(cut, 'data', file))), `data/${file} is the one run's`);

    const deduplicated = join(work, 'dedup');
    const summary = await dedupDataset({ dir: cut, outDir: deduplicated, maxFileBytes: BOUND });
    const fromSingle = await dedupDataset({ dir: single, outDir: join(work, 'dedup-single') });
    assert.equal(summary.kept, fromSingle.kept);
    assert.equal(recordFiles(deduplicated).layout, summary.kept > 0 && read(join(work, 'dedup-single', 'episodes.jsonl')).length > BOUND ? 'data-files' : 'single');
    assert.ok(jsonlOf(deduplicated).equals(read(join(work, 'dedup-single', 'episodes.jsonl'))), 'the same kept records, whichever layout they came from');
  });

  it('names a file missing, a file added or a file altered: replay and stats refuse, audit reports it', async () => {
    const files = recordFiles(cut).jsonl;
    const missing = join(work, 'missing');
    cpSync(cut, missing, { recursive: true });
    rmSync(join(missing, files[1]!));
    await assert.rejects(replayDataset(missing), new RegExp(`${files[1]!.replace(/[.*]/g, '\\$&')} is missing: the records are in ${files.length} files`));
    await assert.rejects(datasetStats(missing), /is missing/);
    const missingAudit = await auditDataset(missing);
    assert.equal(missingAudit.ok, false);
    assert.ok(missingAudit.findings.some((finding) => finding.where === files[1] && /listed in the manifest but missing/.test(finding.reason)));
    assert.ok(missingAudit.findings.some((finding) => /is missing: the records are in/.test(finding.reason)));
    const cli = runCli(REPO_ROOT, 'replay', missing);
    assert.equal(cli.status, 2);
    assert.match(cli.stderr, /train-00001-of-0000\d\.jsonl is missing/);

    const added = join(work, 'added');
    cpSync(cut, added, { recursive: true });
    const extra = dataFileName(files.length, files.length, 'jsonl');
    cpSync(join(added, files[0]!), join(added, extra));
    await assert.rejects(replayDataset(added), /does not belong with/);
    const addedAudit = await auditDataset(added);
    assert.ok(addedAudit.findings.some((finding) => finding.where === extra && /not in the manifest/.test(finding.reason)));

    const recounted = join(work, 'recounted');
    cpSync(cut, recounted, { recursive: true });
    // Every file renamed as if there were one more: the layout is whole, the manifest is not.
    for (const format of ['jsonl', 'arrow', 'parquet'] as const) {
      for (let index = 0; index < files.length; index++) renameSync(join(recounted, dataFileName(index, files.length, format)), join(recounted, dataFileName(index, files.length + 1, format)));
    }
    writeFileSync(join(recounted, dataFileName(files.length, files.length + 1, 'jsonl')), '');
    const recountedAudit = await auditDataset(recounted);
    assert.ok(recountedAudit.findings.some((finding) => finding.where === files[0] && /missing/.test(finding.reason)), 'the manifest names the files it had');
    assert.ok(recountedAudit.findings.some((finding) => /arrow.*missing|is missing/.test(finding.reason)));

    const altered = join(work, 'altered');
    cpSync(cut, altered, { recursive: true });
    const path = join(altered, files[2]!);
    writeFileSync(path, readFileSync(path, 'utf8').replace(/"seed":(\d+)/, (_, seed: string) => `"seed":${Number(seed) + 100}`));
    const alteredAudit = await auditDataset(altered);
    assert.ok(alteredAudit.findings.some((finding) => finding.check === 'manifest' && finding.where === files[2]));
    assert.ok(alteredAudit.findings.some((finding) => finding.check === 'columnar' && finding.where.startsWith(files[2]!.replace('.jsonl', '.arrow'))));
    const alteredReplay = await replayDataset(altered);
    assert.ok(alteredReplay.manifest_problems.some((problem) => problem.startsWith(files[2]!)));
  });
});

describe('cutting records into files', () => {
  it('closes a file before the record that would pass the bound, and gives a larger record a file of its own', () => {
    const cutter = new FileCutter(100);
    const starts = [40, 40, 30, 150, 10, 100].map((bytes) => cutter.take(bytes));
    assert.deepEqual(starts, [false, false, true, true, true, true]);
    assert.deepEqual(cutter.fileRows(), [2, 1, 1, 1, 1]);
    assert.deepEqual(new FileCutter(100).fileRows(), [0], 'no records still make one (empty) file');
  });

  it('refuses a directory with both layouts, and a stray name under data/', () => {
    const dir = temporaryDirectory();
    writeFileSync(join(dir, 'episodes.jsonl'), '');
    writeFileSync(join(dir, 'x'), '');
    cpSync(join(dir, 'x'), join(dir, 'data', dataFileName(0, 1, 'jsonl').slice('data/'.length)), { recursive: true });
    assert.throws(() => recordFiles(dir), /holds both episodes\.jsonl and record files under data\//);
    rmSync(join(dir, 'episodes.jsonl'));
    writeFileSync(join(dir, 'data', 'notes.txt'), '');
    assert.throws(() => recordFiles(dir), /data\/notes\.txt is not a record file/);
  });
});
