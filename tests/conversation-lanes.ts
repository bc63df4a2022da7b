// Test fixture: datasets of the two lanes whose conversations are not one call
// a turn and one user message: issues-parallel-v1 (several tool calls in one
// assistant turn) and issues-dialogue-v1 (a scripted user simulator answers
// the agent's questions). Each is generated once per test process.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateDataset, type OutputFormat } from '../src/generation/generate-dataset.js';
import { loadLane } from '../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from './helpers.js';

export const PARALLEL_LANE = 'issues-parallel-v1';
export const DIALOGUE_LANE = 'issues-dialogue-v1';
export type ConversationLane = typeof PARALLEL_LANE | typeof DIALOGUE_LANE;

// Made when the test file loads, so that it is removed after the whole file, not after the test that first asked.
const root = temporaryDirectory('ef-conversation-');
const generated = new Map<string, Promise<string>>();

/** A directory holding the lane's records for seeds 0..`to` (JSONL only unless asked), generated on first use. */
export function conversationDataset(lane: ConversationLane, options: { to?: number; formats?: OutputFormat[] } = {}): Promise<string> {
  const to = options.to ?? 3;
  const formats = options.formats ?? ['jsonl'];
  const key = `${lane} ${to} ${formats.join(',')}`;
  let dir = generated.get(key);
  if (!dir) {
    const out = join(root, `${lane}-${generated.size}`);
    delete process.env.SOURCE_DATE_EPOCH;
    dir = generateDataset({ lane: loadLane(lane, REPO_ROOT), outDir: out, seeds: { from: 0, to }, formats }).then(() => out);
    generated.set(key, dir);
  }
  return dir;
}

export function readRecords(dir: string): EpisodeRecord[] {
  return readFileSync(join(dir, 'episodes.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as EpisodeRecord);
}

/** Calls in the record's busiest assistant turn. */
export function mostCallsInATurn(record: EpisodeRecord): number {
  return Math.max(0, ...record.messages.map((message) => (message.role === 'assistant' ? (message.tool_calls?.length ?? 0) : 0)));
}

/** User messages after the opening one: the user simulator's replies. */
export function simulatedUserTurns(record: EpisodeRecord): number {
  return Math.max(0, record.messages.filter((message) => message.role === 'user').length - 1);
}
