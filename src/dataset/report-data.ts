// Owns what the HTML report shows, gathered from a dataset directory: the
// overview (records, rejected, duplicates dropped, worlds, tasks, policies and
// models with digests, user simulators, lanes), the series behind each plot, and the episodes
// the viewer embeds. The records file is streamed twice (tallies first, then
// the chosen episodes), so memory grows with the number of records (a few
// numbers each), not with their size; when there are more records than the
// viewer embeds, it gets a sample in which worlds, then tasks, then policies,
// outcomes and fault kinds take turns, and it says so. Everything is in sorted or file order: same directory, same bytes.

import { actorPin } from '../models/model-pin.js';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { canonicalJson } from '../core/canonical-json.js';
import { FactoryError, errorMessage } from '../core/errors.js';
import type { JsonObject } from '../core/json-value.js';
import type { EpisodeRecord, RecordTool } from '../records/episode-record.js';
import { readLines } from '../records/jsonl.js';
import { type DatasetProblem, EPISODES_FILE, streamDataset } from './dataset-reader.js';
import { compareKeys, type DatasetStats, type Distribution, distribution, RateTally, StatsAccumulator, toolCallCount } from './dataset-stats.js';
import type { Rate } from '../statistics/wilson-interval.js';

export const DEFAULT_MAX_EPISODES = 2000;
/** Problems and rejected rows named in the report; the counts are always complete. */
const MAX_LISTED = 20;
/** The user's request is shown in the list and searched; longer ones are cut. */
const MAX_PROMPT_CHARS = 240;

const REJECTED_FILE = 'rejected.jsonl';
const DROPPED_FILE = 'dropped.jsonl';
const MANIFEST_FILE = 'manifest.json';

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

type Progress = (lines: number) => void;

function worldKey(record: EpisodeRecord): string {
  return `${record.world.name}@${record.world.version}`;
}

function policyActor(record: EpisodeRecord): JsonObject | undefined {
  return record.provenance.actors.find((actor) => actor.role === 'policy');
}

/** Scripted episodes by variant; model episodes by model and digest, so two builds of one tag stay apart. */
export function policyKey(record: EpisodeRecord): string {
  const actor = policyActor(record);
  const variant = record.provenance.lineage.variant;
  if (actor?.kind === 'model') return `${variant} @${String(actor.version)}`;
  if (actor !== undefined && actor.name !== 'scripted-solution') return `${String(actor.name)} ${variant}`;
  return variant;
}

function faultKinds(record: EpisodeRecord): string[] {
  return [...new Set(record.recovery.faults_fired.map((fault) => fault.kind))].sort(compareKeys);
}

function simulatedUserTurns(record: EpisodeRecord): number {
  return Math.max(0, record.messages.filter((message) => message.role === 'user').length - 1);
}

function mostCallsInATurn(record: EpisodeRecord): number {
  let most = 0;
  for (const message of record.messages) if (message.role === 'assistant') most = Math.max(most, message.tool_calls?.length ?? 0);
  return most;
}

function firstUserText(record: EpisodeRecord): string {
  const user = record.messages.find((message) => message.role === 'user');
  const text = user?.content.replace(/\s+/g, ' ').trim() ?? '';
  return text.length > MAX_PROMPT_CHARS ? `${text.slice(0, MAX_PROMPT_CHARS - 1)}…` : text;
}

/** What the viewer's sample is spread over, outermost first. */
function stratumOf(record: EpisodeRecord): string[] {
  return [worldKey(record), record.task.id, policyKey(record), String(record.result.task_completed), faultKinds(record).join(',')];
}

/** Records grouped by stratum, level by level: world, then task, then policy, outcome and fault kinds. */
export class StrataTree {
  private readonly children = new Map<string, StrataTree>();
  private readonly lines: number[] = [];

  add(path: readonly string[], line: number): void {
    if (path.length === 0) {
      this.lines.push(line);
      return;
    }
    const [head, ...rest] = path as [string, ...string[]];
    let child = this.children.get(head);
    if (child === undefined) {
      child = new StrataTree();
      this.children.set(head, child);
    }
    child.add(rest, line);
  }

  /**
   * Every line, in the order a sample takes them: at each level the groups
   * take turns (in key order), so the first n lines cover every world, then
   * every task of each world, and so on, before any group gives a second.
   */
  order(): number[] {
    if (this.children.size === 0) return this.lines;
    const groups = [...this.children.keys()].sort(compareKeys).map((key) => this.children.get(key)!.order());
    const out: number[] = [];
    const longest = Math.max(...groups.map((group) => group.length));
    for (let round = 0; round < longest; round++) {
      for (const group of groups) if (round < group.length) out.push(group[round]!);
    }
    return out;
  }
}

/** The lines to embed: all when they fit, else the first `budget` of the tree's order. */
export function chooseSample(strata: StrataTree, budget: number): Set<number> {
  return new Set(strata.order().slice(0, budget));
}

class Interner {
  readonly values: string[] = [];
  private readonly indexes = new Map<string, number>();

  index(value: string): number {
    let index = this.indexes.get(value);
    if (index === undefined) {
      index = this.values.length;
      this.values.push(value);
      this.indexes.set(value, index);
    }
    return index;
  }
}

function describePolicy(actor: JsonObject | undefined): Pick<ReportPolicy, 'kind' | 'name' | 'version' | 'digest' | 'details'> {
  if (actor === undefined) return { kind: 'unknown', name: 'unknown', version: '', digest: null, details: [] };
  const details: string[] = [];
  for (const field of ['provider', 'family', 'parameter_size', 'quantization', 'mode', 'codec', 'ollama_version', 'server', 'server_version', 'weights']) {
    const value = actor[field];
    if (typeof value === 'string' && value !== '') details.push(`${field.replace(/_/g, ' ')} ${value}`);
  }
  return {
    kind: String(actor.kind),
    name: String(actor.name),
    version: String(actor.version),
    // A served model pinned by its weights' revision has no digest: the pin stands in for it.
    digest: actorPin(actor) ?? null,
    details,
  };
}

/** Worlds, tasks, policies and lanes, tallied one record at a time. */
class OverviewTally {
  private readonly worlds = new Map<string, ReportWorld>();
  private readonly tasks = new Map<string, ReportTask>();
  private readonly policies = new Map<string, ReportPolicy>();
  private readonly users = new Map<string, ReportUserSimulator>();
  private readonly lanes = new Map<string, ReportLane>();
  private readonly producedAt = new Set<string>();
  private readonly factoryVersions = new Set<string>();

  add(record: EpisodeRecord): void {
    const world = this.worlds.get(worldKey(record)) ?? { name: record.world.name, version: record.world.version, records: 0, tools: 0 };
    world.records++;
    world.tools = Math.max(world.tools, record.tools.length);
    this.worlds.set(worldKey(record), world);
    const task = this.tasks.get(record.task.id) ?? { id: record.task.id, title: record.task.title, world: record.world.name, records: 0 };
    task.records++;
    this.tasks.set(record.task.id, task);
    const key = policyKey(record);
    const policy = this.policies.get(key) ?? { key, ...describePolicy(policyActor(record)), records: 0 };
    policy.records++;
    this.policies.set(key, policy);
    for (const actor of record.provenance.actors.filter((each) => each.role === 'user')) {
      const userKey = `${String(actor.kind)}:${String(actor.name)}@${String(actor.version)}`;
      const digest = typeof actor.digest === 'string' ? actor.digest : null;
      // Two builds of one model tag are two simulators.
      const mapKey = `${userKey}\u0000${digest ?? ''}`;
      const user = this.users.get(mapKey) ?? { key: userKey, kind: String(actor.kind), name: String(actor.name), version: String(actor.version), digest, records: 0 };
      user.records++;
      this.users.set(mapKey, user);
    }
    const lineage = record.provenance.lineage;
    // A lane edited between runs has a new hash: each (name, hash) is its own row.
    const laneKey = `${lineage.lane}\u0000${lineage.lane_sha256}`;
    const lane = this.lanes.get(laneKey) ?? { name: lineage.lane, sha256: lineage.lane_sha256, records: 0 };
    lane.records++;
    this.lanes.set(laneKey, lane);
    this.producedAt.add(record.provenance.produced_at);
    this.factoryVersions.add(lineage.factory_version);
  }

  finish(): Pick<ReportOverview, 'worlds' | 'tasks' | 'policies' | 'user_simulators' | 'lanes' | 'produced_at' | 'factory_versions'> {
    const sorted = <T>(map: Map<string, T>): T[] => [...map.keys()].sort(compareKeys).map((key) => map.get(key)!);
    return {
      worlds: sorted(this.worlds),
      tasks: sorted(this.tasks),
      policies: sorted(this.policies),
      user_simulators: sorted(this.users),
      lanes: sorted(this.lanes),
      produced_at: [...this.producedAt].sort(compareKeys),
      factory_versions: [...this.factoryVersions].sort(compareKeys),
    };
  }
}

interface RejectedSummary {
  rows: number;
  by_stage: Record<string, number>;
  examples: RejectedExample[];
  problems: DatasetProblem[];
}

async function readRejected(dir: string): Promise<RejectedSummary | null> {
  const path = join(dir, REJECTED_FILE);
  if (!existsSync(path)) return null;
  const byStage = new Map<string, number>();
  const summary: RejectedSummary = { rows: 0, by_stage: {}, examples: [], problems: [] };
  for await (const entry of readLines(path)) {
    if (entry.text.trim() === '') continue;
    let row: { record_id?: unknown; task?: unknown; seed?: unknown; stage?: unknown; reason?: unknown };
    try {
      row = JSON.parse(entry.text) as typeof row;
    } catch (error) {
      summary.problems.push({ file: REJECTED_FILE, line: entry.line, reason: `not valid JSON (${errorMessage(error)})` });
      continue;
    }
    summary.rows++;
    const stage = typeof row.stage === 'string' ? row.stage : 'unknown';
    byStage.set(stage, (byStage.get(stage) ?? 0) + 1);
    if (summary.examples.length < MAX_LISTED) {
      summary.examples.push({
        record_id: String(row.record_id ?? `line ${entry.line}`),
        task: String(row.task ?? ''),
        seed: typeof row.seed === 'number' ? row.seed : null,
        stage,
        reason: String(row.reason ?? ''),
      });
    }
  }
  for (const key of [...byStage.keys()].sort(compareKeys)) summary.by_stage[key] = byStage.get(key)!;
  return summary;
}

interface ManifestFacts {
  operation: string | null;
  seeds: string | null;
  dropped: number | null;
}

/** What the manifest adds; a missing or unreadable manifest only leaves these blank, it never stops the report. */
function readManifestFacts(dir: string): ManifestFacts {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(path)) return { operation: null, seeds: null, dropped: null };
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as { operation?: unknown; seeds?: unknown; counts?: { dropped?: unknown } };
    return {
      operation: typeof manifest.operation === 'string' ? manifest.operation : null,
      seeds: typeof manifest.seeds === 'string' ? manifest.seeds : null,
      dropped: typeof manifest.counts?.dropped === 'number' ? manifest.counts.dropped : null,
    };
  } catch {
    return { operation: null, seeds: null, dropped: null };
  }
}

async function countRows(path: string): Promise<number> {
  let rows = 0;
  for await (const entry of readLines(path)) if (entry.text.trim() !== '') rows++;
  return rows;
}

/** Pass 1: every tally the plots and the overview need, and the strata the sample is drawn from. */
async function tallyRecords(dir: string, progress: Progress): Promise<{
  stats: StatsAccumulator;
  overview: OverviewTally;
  errorTurns: number[];
  byPolicy: RateTally;
  problems: DatasetProblem[];
  strata: StrataTree;
  ids: Map<number, string>;
}> {
  const stats = new StatsAccumulator();
  const overview = new OverviewTally();
  const errorTurns: number[] = [];
  const byPolicy = new RateTally();
  const problems: DatasetProblem[] = [];
  const strata = new StrataTree();
  const ids = new Map<number, string>();
  let lines = 0;
  for await (const entry of streamDataset(dir)) {
    progress(++lines);
    if (entry.problem) {
      problems.push(entry.problem);
      continue;
    }
    const { record, line } = entry.row;
    stats.add(record);
    overview.add(record);
    errorTurns.push(record.recovery.error_turns);
    byPolicy.add(policyKey(record), record.result.task_completed);
    strata.add(stratumOf(record), line);
    ids.set(line, record.record_id);
  }
  return { stats, overview, errorTurns, byPolicy, problems, strata, ids };
}

/** Pass 2: the chosen episodes in file order, compacted for the viewer. */
async function collectEpisodes(dir: string, chosen: ReadonlySet<number>, ids: ReadonlyMap<number, string>, total: number, progress: Progress): Promise<ViewerData> {
  const worlds = new Interner();
  const tasks = new Interner();
  const policies = new Interner();
  const kinds = new Interner();
  const outcomes = new Interner();
  const catalogs = new Interner();
  const catalogValues: RecordTool[][] = [];
  const entries: ViewerIndexEntry[] = [];
  const episodes: ViewerEpisode[] = [];
  let lines = 0;
  const path = join(dir, EPISODES_FILE);
  // Pass 1 validated every line: here only the chosen ones are parsed, and checked to be the same records.
  for await (const entry of chosen.size === 0 ? [] : readLines(path)) {
    progress(++lines);
    if (!chosen.has(entry.line)) continue;
    const line = entry.line;
    let record: EpisodeRecord | undefined;
    try {
      record = JSON.parse(entry.text) as EpisodeRecord;
    } catch {
      record = undefined;
    }
    if (record === undefined || ids.get(line) !== record.record_id) {
      throw new FactoryError('dataset_corrupt', `${path} changed while the report was reading it (line ${line})`, {
        fix: 'let the command writing it finish, then run the report again',
      });
    }
    const catalogKey = canonicalJson(record.tools);
    const catalog = catalogs.index(catalogKey);
    if (catalog === catalogValues.length) catalogValues.push(record.tools);
    const { tools: _tools, ...rest } = record;
    episodes.push({ record: rest, catalog });
    entries.push({
      id: record.record_id,
      world: worlds.index(worldKey(record)),
      task: tasks.index(record.task.id),
      policy: policies.index(policyKey(record)),
      faults: faultKinds(record).map((kind) => kinds.index(kind)),
      completed: record.result.task_completed,
      outcome: outcomes.index(record.result.outcome),
      error_turns: record.recovery.error_turns,
      tool_calls: toolCallCount(record),
      messages: record.messages.length,
      prompt: firstUserText(record),
      user_turns: simulatedUserTurns(record),
      most_calls: mostCallsInATurn(record),
    });
    // The rest of the file holds no chosen line.
    if (episodes.length === chosen.size) break;
  }
  return {
    total,
    sampled: episodes.length < total,
    tables: { worlds: worlds.values, tasks: tasks.values, policies: policies.values, fault_kinds: kinds.values, outcomes: outcomes.values },
    entries,
    episodes,
    catalogs: catalogValues,
  };
}

/** Everything the report shows, from the directory alone. */
export async function gatherReportData(dir: string, options: ReportDataOptions = {}): Promise<ReportData> {
  const maxEpisodes = options.maxEpisodes ?? DEFAULT_MAX_EPISODES;
  if (!Number.isInteger(maxEpisodes) || maxEpisodes < 0) {
    throw new FactoryError('usage', `the episode budget must be a whole number >= 0, got ${maxEpisodes}`, { fix: 'pass e.g. --max-episodes 2000' });
  }
  const onProgress = options.onProgress ?? (() => {});
  const tallies = await tallyRecords(dir, (lines) => onProgress(1, lines));
  const stats = tallies.stats.finish(tallies.problems);
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
      problems: problems.length,
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
    error_turns: distribution(tallies.errorTurns),
    completion_by_policy: tallies.byPolicy.rates(),
    viewer,
  };
}
