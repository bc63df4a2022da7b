// Owns the episodes the report's viewer embeds, read in a second pass over
// the records file: each chosen record without its tool catalog (catalogs
// are shared), and a list row whose strings point into interned tables, so
// the page stays small however many episodes it holds.

import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { canonicalJson } from '../core/canonical-json.js';
import { clip } from '../core/clipped-text.js';
import { sha256Hex } from '../core/hashing.js';
import { doubled } from '../core/typed-arrays.js';
import type { EpisodeRecord, RecordTool } from '../records/episode-record.js';
import { type JsonlLine, readLines } from '../records/jsonl.js';
import { recordFiles } from '../records/record-files.js';
import { toolCallCount } from './dataset-stats.js';
import type { ViewerData, ViewerEpisode, ViewerIndexEntry } from './report-model.js';
import { faultKinds, policyKey, worldKey } from './report-record-keys.js';

/** The user's request is shown in the list and searched; longer ones are cut. */
const MAX_PROMPT_CHARS = 240;

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
  return clip(text, MAX_PROMPT_CHARS);
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

/**
 * What pass 1 saw on each line, to check that pass 2 reads the same record:
 * 32 bits of the sha256 of its record_id, 4 bytes a line (a Map of the ids
 * spent about 140). The check is against a file rewritten between the
 * passes, not against tampering: the audit is for that.
 */
export class RecordIdChecks {
  private checks = new Uint32Array(1024);

  /** `line` counts from 1 over every line read, across a big dataset's files. */
  set(line: number, id: string): void {
    while (line >= this.checks.length) this.checks = doubled(this.checks);
    this.checks[line] = idCheck(id);
  }

  matches(line: number, id: string): boolean {
    return line < this.checks.length && this.checks[line] === idCheck(id);
  }
}

function idCheck(id: string): number {
  return Number.parseInt(sha256Hex(id).slice(0, 8), 16) >>> 0;
}

/** Every line of the record files in order, with the path of its file. */
async function* everyLine(dir: string): AsyncGenerator<{ path: string; entry: JsonlLine }> {
  for (const file of recordFiles(dir).jsonl) {
    const path = join(dir, file);
    for await (const entry of readLines(path)) yield { path, entry };
  }
}

/** Pass 2: the chosen episodes in file order, compacted for the viewer. */
export async function collectEpisodes(dir: string, chosen: ReadonlySet<number>, ids: RecordIdChecks, total: number, progress: (lines: number) => void): Promise<ViewerData> {
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
  // Pass 1 validated every line: here only the chosen ones are parsed, and checked to be the same records.
  for await (const { path, entry } of chosen.size === 0 ? [] : everyLine(dir)) {
    const line = ++lines;
    progress(line);
    if (!chosen.has(line)) continue;
    let record: EpisodeRecord | undefined;
    try {
      record = JSON.parse(entry.text) as EpisodeRecord;
    } catch {
      record = undefined;
    }
    if (record === undefined || !ids.matches(line, record.record_id)) {
      throw new FactoryError('dataset_corrupt', `${path} changed while the report was reading it (line ${entry.line})`, {
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
