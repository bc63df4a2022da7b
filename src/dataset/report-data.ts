// Owns what the HTML report shows, gathered from a dataset directory: the
// overview (records, rejected, duplicates dropped, worlds, tasks, policies and
// models with digests, user simulators, lanes), the series behind each plot, and the episodes
// the viewer embeds. The records file is streamed twice (tallies first, then
// the chosen episodes), so memory grows with the number of records (4 bytes
// each to check an id, and a place in the sample's tree), not with their
// size; when there are more records than the
// viewer embeds, it gets a sample in which worlds, then tasks, then policies,
// outcomes and fault kinds take turns, and it says so. Everything is in sorted or file order: same directory, same bytes.

import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { type DatasetProblem, MAX_LISTED_PROBLEMS, streamDataset } from './dataset-reader.js';
import { StatsAccumulator } from './dataset-stats.js';
import { DROPPED_FILE } from './dedup.js';
import { WholeNumbers } from './stats-distribution.js';
import { RateTally } from './stats-tallies.js';
import { MAX_LISTED, type ReportData, type ReportDataOptions } from './report-model.js';
import { policyKey } from './report-record-keys.js';
import { chooseSample, StrataTree, stratumOf } from './report-sample.js';
import { OverviewTally } from './report-overview.js';
import { countRows, readManifestFacts, readRejected } from './report-side-files.js';
import { collectEpisodes, RecordIdChecks } from './report-viewer-data.js';

export const DEFAULT_MAX_EPISODES = 2000;

type Progress = (lines: number) => void;

/** Pass 1: every tally the plots and the overview need, and the strata the sample is drawn from. */
async function tallyRecords(dir: string, progress: Progress): Promise<{
  stats: StatsAccumulator;
  overview: OverviewTally;
  errorTurns: WholeNumbers;
  byPolicy: RateTally;
  /** The first MAX_LISTED_PROBLEMS unreadable lines; `problemCount` counts them all. */
  problems: DatasetProblem[];
  problemCount: number;
  strata: StrataTree;
  ids: RecordIdChecks;
}> {
  const stats = new StatsAccumulator();
  const overview = new OverviewTally();
  const errorTurns = new WholeNumbers();
  const byPolicy = new RateTally();
  const problems: DatasetProblem[] = [];
  let problemCount = 0;
  const strata = new StrataTree();
  const ids = new RecordIdChecks();
  let lines = 0;
  for await (const entry of streamDataset(dir)) {
    progress(++lines);
    if (entry.problem) {
      if (problemCount++ < MAX_LISTED_PROBLEMS) problems.push(entry.problem);
      continue;
    }
    // A line is known by its place among all the lines read (`lines`), which is unique across a big dataset's files.
    const { record } = entry.row;
    const line = lines;
    stats.add(record);
    overview.add(record);
    errorTurns.add(record.recovery.error_turns);
    byPolicy.add(policyKey(record), record.result.task_completed);
    strata.add(stratumOf(record), line);
    ids.set(line, record.record_id);
  }
  return { stats, overview, errorTurns, byPolicy, problems, problemCount, strata, ids };
}

/** Everything the report shows, from the directory alone. */
export async function gatherReportData(dir: string, options: ReportDataOptions = {}): Promise<ReportData> {
  const maxEpisodes = options.maxEpisodes ?? DEFAULT_MAX_EPISODES;
  if (!Number.isInteger(maxEpisodes) || maxEpisodes < 0) {
    throw new FactoryError('usage', `the episode budget must be a whole number >= 0, got ${maxEpisodes}`, { fix: 'pass e.g. --max-episodes 2000' });
  }
  const onProgress = options.onProgress ?? (() => {});
  const tallies = await tallyRecords(dir, (lines) => onProgress(1, lines));
  const stats = tallies.stats.finish(tallies.problems, tallies.problemCount);
  const chosen = chooseSample(tallies.strata, Math.min(maxEpisodes, stats.records));
  const viewer = await collectEpisodes(dir, chosen, tallies.ids, stats.records, (lines) => onProgress(2, lines));
  const rejected = await readRejected(dir);
  const manifest = readManifestFacts(dir);
  const droppedPath = join(dir, DROPPED_FILE);
  const dropped = existsSync(droppedPath) ? await countRows(droppedPath) : manifest.dropped;
  const problems = [...tallies.problems, ...(rejected?.problems ?? [])];
  return {
    overview: {
      dataset: basename(resolve(dir)),
      records: stats.records,
      problems: tallies.problemCount + (rejected?.problems.length ?? 0),
      problem_examples: problems.slice(0, MAX_LISTED),
      rejected: rejected?.rows ?? null,
      rejected_by_stage: rejected?.by_stage ?? {},
      rejected_examples: rejected?.examples ?? [],
      duplicates_dropped: dropped,
      ...tallies.overview.finish(),
      operation: manifest.operation,
      seeds: manifest.seeds,
    },
    stats,
    error_turns: tallies.errorTurns.distribution(),
    completion_by_policy: tallies.byPolicy.rates(),
    viewer,
  };
}
