// Owns the shape of what the HTML report shows: the overview (worlds, tasks,
// policies, user simulators, lanes, rejected episodes), the statistics and
// plot series, and the viewer's compacted episodes with their shared tables
// and catalogs. report-data.ts fills it; report-page.ts draws it.

import type { EpisodeRecord, RecordTool } from '../records/episode-record.js';
import type { DatasetProblem } from './dataset-reader.js';
import type { DatasetStats } from './dataset-stats.js';
import type { Distribution } from './stats-distribution.js';
import type { Rate } from '../statistics/wilson-interval.js';

/** Problems and rejected rows named in the report; the counts are always complete. */
export const MAX_LISTED = 20;

export interface ReportWorld {
  name: string;
  version: string;
  records: number;
  tools: number;
}

export interface ReportTask {
  id: string;
  title: string;
  world: string;
  records: number;
}

export interface ReportPolicy {
  /** The key the plots and filters use: a scripted variant, or `ollama:<model> @<digest>`. */
  key: string;
  kind: string;
  name: string;
  version: string;
  /** Models only: the full digest and what the factory pinned beside it. */
  digest: string | null;
  details: string[];
  records: number;
}

/** A user simulator that wrote user turns (or could have): scripted, or a model with its digest. */
export interface ReportUserSimulator {
  /** `kind:name@version`, as `stats` counts them. */
  key: string;
  kind: string;
  name: string;
  version: string;
  digest: string | null;
  records: number;
}

export interface ReportLane {
  name: string;
  sha256: string;
  records: number;
}

export interface RejectedExample {
  record_id: string;
  task: string;
  seed: number | null;
  stage: string;
  reason: string;
}

export interface ReportOverview {
  dataset: string;
  records: number;
  /** Unreadable lines of the records file: counted here, left out of everything else. */
  problems: number;
  problem_examples: DatasetProblem[];
  /** Rows of rejected.jsonl; null when the directory has none. */
  rejected: number | null;
  rejected_by_stage: Record<string, number>;
  rejected_examples: RejectedExample[];
  /** Rows of dropped.jsonl (or the manifest's count) after dedup; null when the dataset was never deduplicated. */
  duplicates_dropped: number | null;
  worlds: ReportWorld[];
  tasks: ReportTask[];
  policies: ReportPolicy[];
  user_simulators: ReportUserSimulator[];
  lanes: ReportLane[];
  produced_at: string[];
  factory_versions: string[];
  /** From manifest.json, when there is one. */
  operation: string | null;
  seeds: string | null;
}

/** One embedded episode as the viewer reads it: the record without its tool catalog, which is shared. */
export interface ViewerEpisode {
  record: Omit<EpisodeRecord, 'tools'>;
  catalog: number;
}

/** The list row of an embedded episode; string fields point into ViewerTables. */
export interface ViewerIndexEntry {
  id: string;
  world: number;
  task: number;
  policy: number;
  faults: number[];
  completed: boolean;
  outcome: number;
  error_turns: number;
  /** Calls the policy emitted, as the tool-calls plot counts them (rejected ones too). */
  tool_calls: number;
  messages: number;
  prompt: string;
  /** User messages after the opening request: the user simulator's replies. */
  user_turns: number;
  /** Calls in the episode's busiest assistant turn. */
  most_calls: number;
}

export interface ViewerTables {
  worlds: string[];
  tasks: string[];
  policies: string[];
  fault_kinds: string[];
  outcomes: string[];
}

export interface ViewerData {
  total: number;
  sampled: boolean;
  tables: ViewerTables;
  entries: ViewerIndexEntry[];
  episodes: ViewerEpisode[];
  /** Distinct tool catalogs, each stored once: most records of a lane share one. */
  catalogs: RecordTool[][];
}

export interface ReportData {
  overview: ReportOverview;
  stats: DatasetStats;
  error_turns: Distribution;
  completion_by_policy: Record<string, Rate>;
  viewer: ViewerData;
}

export interface ReportDataOptions {
  /** Episodes the viewer embeds at most; the plots always count every record. */
  maxEpisodes?: number;
  /** Called as lines are read: pass 1 tallies every line, pass 2 collects the embedded episodes. */
  onProgress?: (pass: 1 | 2, lines: number) => void;
}
