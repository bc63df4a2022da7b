// Owns `merge`: combining the shards of one run (generate --shard I/N, run on
// one machine or many) into the dataset a single run writes. Every shard is
// verified first: its files against its manifest's hashes, its run against
// the others' (same lane, seeds, policy, formats, factory version), and the
// shards together must cover the plan exactly once, in order. The files are
// then concatenated in shard order, so the result is byte for byte a single
// run's episodes.jsonl (or data/ files, cut by size as a run cuts them),
// rejected.jsonl, Arrow and Parquet (for one file, the columnar copies from
// the shards' own Arrow columns, cut into the run's 1,000-row batches). The shards' trace
// archives are copied as they are (their names are plan indices, so they
// never collide) and their trace indexes joined in shard order.

import { copyFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { canonicalJson } from '../core/canonical-json.js';
import { FactoryError } from '../core/errors.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { rebatch } from '../records/arrow-concatenation.js';
import { ARROW_FILE } from '../records/columnar-names.js';
import { DEFAULT_MAX_FILE_BYTES, nameRecordFiles, RECORD_FORMATS, recordFiles, stagedCopies, stagedRecordFile, writeRecordFiles } from '../records/record-files.js';
import { arrowFileBatches, BATCH_ROWS, writeColumnar, writeColumnarBatches } from '../records/columnar-files.js';
import type { Manifest } from '../records/manifest.js';
import { compareWithManifest, readVerifiableManifest } from '../records/manifest-verification.js';
import { TRACE_INDEX_FILE } from '../runner/trace-archive.js';
import { claimDatasetDirectory, concatenateFiles, createStaging, publishDataset, REJECTED_FILE, STAGING_DIR } from '../generation/dataset-directory.js';
import { TRACES_DIR } from '../runner/trace-archive.js';

export interface MergeOptions {
  sources: readonly string[];
  outDir: string;
  /** Past this many bytes of JSONL, the records are written as data/ files, cut as one run cuts them (default 500 MiB). */
  maxFileBytes?: number;
  /** Each step of a long merge as it starts, e.g. "checking shard 2 of 8": a terminal's progress line. */
  onStage?: (stage: string) => void;
}

export interface MergeSummary {
  out_dir: string;
  lane: string;
  seeds: string;
  shards: number;
  episodes: number;
  written: number;
  rejected: number;
  /** Episodes the model server cut short, across the shards (rows of rejected.jsonl with stage infra). */
  infra_errors: number;
  completed: number;
  completion_rate: number;
  wall_seconds: number;
}

interface Shard {
  dir: string;
  manifest: Manifest & { shard: NonNullable<Manifest['shard']>; run: NonNullable<Manifest['run']> };
}

function readShard(dir: string): Shard {
  // Strict: a manifest naming a path outside its directory is refused before any file is read.
  const manifest = readVerifiableManifest(dir)?.manifest;
  if (!manifest) {
    throw new FactoryError('dataset_not_found', `${dir} has no manifest.json: it is not a finished run`, {
      fix: existsSync(join(dir, STAGING_DIR)) ? 'it holds an interrupted run: finish it with the same generate command and --resume' : 'pass the --out directories of generate --shard runs',
    });
  }
  if (!manifest.shard || !manifest.run) {
    throw new FactoryError('usage', `${dir} is not a shard (it was not generated with --shard I/N)`, { fix: 'pass only directories written by generate --shard I/N' });
  }
  return { dir, manifest: manifest as Shard['manifest'] };
}

/** Every file the shard's manifest lists must still have the bytes it had. */
async function verifyShardFiles(shard: Shard): Promise<void> {
  const [difference] = await compareWithManifest(shard.dir, shard.manifest);
  if (difference) {
    throw new FactoryError('dataset_tampered', `${join(shard.dir, difference.path)} does not match its manifest: ${difference.reason}; shard ${shard.dir} was edited or damaged`, {
      fix: 'regenerate that shard with the same generate --shard command',
    });
  }
}

function describeRun(run: Record<string, unknown>): string {
  const { shard: _shard, ...rest } = run;
  return canonicalJson(rest);
}

export async function mergeShards(options: MergeOptions): Promise<MergeSummary> {
  const started = performance.now();
  const { outDir } = options;
  if (options.sources.length === 0) throw new FactoryError('usage', 'merge needs the shard directories', { fix: 'pass every --out directory of generate --shard I/N, e.g. merge s0 s1 s2 s3 --out merged' });
  const target = resolve(outDir);
  if (options.sources.some((source) => resolve(source) === target)) {
    throw new FactoryError('usage', `--out ${outDir} is one of the shards`, { fix: 'merge into a new directory' });
  }
  const shards = options.sources.map(readShard);
  const first = shards[0]!;
  const count = first.manifest.shard.count;
  for (const shard of shards) {
    if (describeRun(shard.manifest.run) !== describeRun(first.manifest.run)) {
      throw new FactoryError('usage', `${shard.dir} and ${first.dir} are shards of different runs (lane, seeds, tasks, policy, formats or factory version differ)`, {
        fix: 'merge only the shards of one generate command',
      });
    }
    if (shard.manifest.shard.count !== count) {
      throw new FactoryError('usage', `${shard.dir} is shard ${shard.manifest.shard.index}/${shard.manifest.shard.count}, ${first.dir} is one of ${count}`, { fix: 'merge shards cut with the same N' });
    }
  }
  shards.sort((left, right) => left.manifest.shard.index - right.manifest.shard.index);
  const indices = shards.map((shard) => shard.manifest.shard.index);
  const duplicate = indices.find((index, position) => indices.indexOf(index) !== position);
  if (duplicate !== undefined) throw new FactoryError('usage', `shard ${duplicate}/${count} is given twice`, { fix: 'pass each shard directory once' });
  const missing = Array.from({ length: count }, (_, index) => index).filter((index) => !indices.includes(index));
  if (missing.length > 0) {
    throw new FactoryError('usage', `shard${missing.length === 1 ? '' : 's'} ${missing.map((index) => `${index}/${count}`).join(', ')} missing: the merge would not be the whole run`, {
      fix: `run generate --shard ${missing[0]}/${count} with the same lane and seeds, then merge all ${count}`,
    });
  }
  let cursor = 0;
  for (const shard of shards) {
    if (shard.manifest.shard.start !== cursor) {
      throw new FactoryError('dataset_corrupt', `${shard.dir}: shard ${shard.manifest.shard.index}/${count} starts at plan episode ${shard.manifest.shard.start}, expected ${cursor}`, { fix: 'regenerate that shard' });
    }
    cursor = shard.manifest.shard.end;
  }
  if (cursor !== first.manifest.shard.plan_episodes) {
    throw new FactoryError('dataset_corrupt', `the shards cover ${cursor} of ${first.manifest.shard.plan_episodes} planned episodes`, { fix: 'regenerate the last shard' });
  }
  const stage = options.onStage ?? (() => {});
  for (const [index, shard] of shards.entries()) {
    stage(`checking shard ${index + 1} of ${shards.length} against its manifest`);
    await verifyShardFiles(shard);
  }
  for (const shard of shards) {
    if (!shard.manifest.files.some((file) => file.path === TRACE_INDEX_FILE)) {
      throw new FactoryError('usage', `${shard.dir} has no ${TRACE_INDEX_FILE}: it was written before traces were kept per part`, { fix: 'regenerate that shard with this version' });
    }
  }

  const previousDataset = claimDatasetDirectory(outDir);
  const staging = createStaging(outDir);
  // The records cut into files by their sizes alone, so the layout is the one a single run of the plan writes.
  const layouts = shards.map((shard) => recordFiles(shard.dir));
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  stage('writing the records');
  const fileRows = writeRecordFiles(
    shards.flatMap((shard, index) => layouts[index]!.jsonl.map((file) => join(shard.dir, file))),
    (file) => stagedRecordFile(staging, file, 'jsonl'),
    maxFileBytes,
  );
  concatenateFiles(shards.map((shard) => join(shard.dir, REJECTED_FILE)), join(staging, REJECTED_FILE));
  const traces: string[] = [];
  stage('copying the traces');
  for (const shard of shards) {
    for (const file of shard.manifest.files) {
      if (!file.path.startsWith(`${TRACES_DIR}/`) || file.path === TRACE_INDEX_FILE) continue;
      copyFileSync(join(shard.dir, file.path), join(staging, file.path));
      traces.push(file.path);
    }
  }
  concatenateFiles(shards.map((shard) => join(shard.dir, TRACE_INDEX_FILE)), join(staging, TRACE_INDEX_FILE));
  traces.push(TRACE_INDEX_FILE);
  const formats = (first.manifest.run.formats as string[] | undefined) ?? ['jsonl', 'arrow', 'parquet'];
  const columnOutputs = (file: number) => stagedCopies(staging, file, (format) => formats.includes(format));
  if (fileRows.length === 1 && shards.every((shard) => shard.manifest.files.some((file) => file.path === ARROW_FILE))) {
    // Each shard's Arrow copy (its bytes checked against its manifest above) is cut into the whole run's
    // 1,000-row batches, without parsing its JSON again: the same bytes a single run writes.
    stage('writing the Arrow and Parquet copies');
    await writeColumnarBatches(rebatch(arrowFileBatches(shards.map((shard) => join(shard.dir, ARROW_FILE))), BATCH_ROWS), columnOutputs(0));
  } else {
    for (let file = 0; file < fileRows.length; file++) {
      stage(`writing the Arrow and Parquet copies of file ${file + 1} of ${fileRows.length}`);
      await writeColumnar(stagedRecordFile(staging, file, 'jsonl'), columnOutputs(file));
    }
  }
  const recordNames = nameRecordFiles(staging, fileRows.length, RECORD_FORMATS.filter((format) => format === 'jsonl' || formats.includes(format)));

  const total = (key: 'records' | 'rejected' | 'completed' | 'infra_errors') => shards.reduce((sum, shard) => sum + (shard.manifest.counts[key] ?? 0), 0);
  const written = total('records');
  const infraErrors = total('infra_errors');
  const { shard: _shard, ...run } = first.manifest.run;
  stage('hashing the files into the manifest');
  await publishDataset(
    staging,
    outDir,
    previousDataset,
    [...recordNames, REJECTED_FILE, ...traces],
    {
      operation: 'merge',
      lanes: first.manifest.lanes,
      ...(first.manifest.lane ? { lane: first.manifest.lane, lane_sha256: first.manifest.lane_sha256 } : {}),
      factory_version: FACTORY_VERSION,
      ...(first.manifest.seeds ? { seeds: first.manifest.seeds } : {}),
      ...(first.manifest.tasks ? { tasks: first.manifest.tasks } : {}),
      source: shards.map((shard) => shard.dir).join(', '),
      run: { ...run, shard: null },
      counts: {
        episodes: first.manifest.shard.plan_episodes,
        records: written,
        rejected: total('rejected'),
        completed: total('completed'),
        ...(infraErrors > 0 ? { infra_errors: infraErrors } : {}),
      },
    },
  );
  return {
    out_dir: outDir,
    lane: first.manifest.lane ?? first.manifest.lanes.map((lane) => lane.name).join(','),
    seeds: first.manifest.seeds ?? '',
    shards: count,
    episodes: first.manifest.shard.plan_episodes,
    written,
    rejected: total('rejected'),
    infra_errors: infraErrors,
    completed: total('completed'),
    completion_rate: written === 0 ? 0 : total('completed') / written,
    wall_seconds: Math.round(performance.now() - started) / 1000,
  };
}
