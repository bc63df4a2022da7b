// Owns the layout of a dataset's traces and reading one episode back from it.
// A run writes one trace archive per part, traces/<part>.jsonl, holding the
// events of every episode of that part (each line with its record_id), and
// traces/index.jsonl, one line per planned episode in plan order saying which
// archive holds it. A hundred thousand episodes make a few hundred files, and
// an episode is still found by its record id while reading one archive only.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { readLines, type JsonlProblem } from '../records/jsonl.js';
import { TRACE_SCHEMA, traceEventProblem, type TraceEvent } from './trace.js';

export const TRACES_DIR = 'traces';
/** Relative to the dataset directory. */
export const TRACE_INDEX_FILE = `${TRACES_DIR}/index.jsonl`;

export interface TraceIndexEntry {
  record_id: string;
  /** The archive holding the episode's events, relative to the dataset directory. */
  trace: string;
}

/** The archive of the part named `part` (see partName), relative to the dataset directory. */
export function traceArchivePath(part: string): string {
  return `${TRACES_DIR}/${part}.jsonl`;
}

/** The index line of one episode, exactly as it is written. */
export function traceIndexLine(entry: TraceIndexEntry): string {
  return JSON.stringify({ record_id: entry.record_id, trace: entry.trace });
}

/**
 * One episode's events, in the order they were written, found through the
 * index. A torn or unreadable line in the archive is a problem, not a throw:
 * it may be this episode's, and the events before it are still worth having.
 * A record id the index does not know is an error.
 */
export async function readEpisodeTrace(datasetDir: string, recordId: string): Promise<{ events: TraceEvent[]; problems: JsonlProblem[] }> {
  const indexPath = join(datasetDir, TRACE_INDEX_FILE);
  if (!existsSync(indexPath)) {
    throw new FactoryError('dataset_not_found', `${indexPath} does not exist: ${datasetDir} holds no trace index`, { fix: 'pass the --out directory of generate or merge' });
  }
  const archive = await findArchive(indexPath, recordId);
  if (archive === undefined) {
    throw new FactoryError('dataset_not_found', `${recordId} is not in ${indexPath}`, { fix: 'pass a record_id from episodes.jsonl or rejected.jsonl of that dataset' });
  }
  const path = join(datasetDir, archive);
  if (!existsSync(path)) throw new FactoryError('dataset_corrupt', `${path} is missing (${TRACE_INDEX_FILE} names it for ${recordId})`, { fix: 'regenerate the dataset' });
  const events: TraceEvent[] = [];
  const problems: JsonlProblem[] = [];
  const previous = new Map<string, number>();
  // The record id as it appears inside a line: lines without it are skipped unparsed.
  const needle = JSON.stringify(recordId);
  for await (const entry of readLines(path)) {
    if (!entry.terminated) {
      problems.push({ line: entry.line, reason: 'torn last line (no newline: the writer was interrupted)' });
      continue;
    }
    if (!entry.text.includes(needle)) {
      // Another episode's line, unparsed; one that is not even shaped like an object may have been this one's.
      if (!/^\{.*\}$/.test(entry.text)) problems.push({ line: entry.line, reason: 'not a JSON object (a damaged line: it may belong to this episode)' });
      continue;
    }
    let value: TraceEvent;
    try {
      value = JSON.parse(entry.text) as TraceEvent;
    } catch (error) {
      problems.push({ line: entry.line, reason: `not valid JSON (${(error as Error).message})` });
      continue;
    }
    if (value?.record_id !== recordId) continue;
    const problem = traceEventProblem(value, previous);
    if (problem !== undefined) problems.push({ line: entry.line, reason: problem });
    if (value.schema === TRACE_SCHEMA) events.push(value);
  }
  return { events, problems };
}

async function findArchive(indexPath: string, recordId: string): Promise<string | undefined> {
  const needle = JSON.stringify(recordId);
  for await (const entry of readLines(indexPath)) {
    if (!entry.terminated || !entry.text.includes(needle)) continue;
    try {
      const value = JSON.parse(entry.text) as TraceIndexEntry;
      if (value.record_id === recordId && typeof value.trace === 'string') return value.trace;
    } catch {
      // A damaged index line cannot name the episode; keep looking.
    }
  }
  return undefined;
}
