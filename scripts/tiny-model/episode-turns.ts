// Owns which assistant turns of a record the tiny model learns and is judged
// on: every turn the scripted policy meant, i.e. all but the calls it typed
// wrongly on purpose (the wrong_type_first variant), whose results are
// invalid_arguments errors. Those stay in the context, so the model still
// learns the repair that follows them.

import { readFileSync } from 'node:fs';
import type { EpisodeRecord } from '../../src/records/episode-record.js';

export function readRecords(path: string): EpisodeRecord[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as EpisodeRecord);
}

/** Indexes of the assistant messages to learn: final texts, and calls none of whose results was an invalid_arguments error. */
export function lossTurns(record: EpisodeRecord): number[] {
  const turns: number[] = [];
  record.messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const ids = new Set((message.tool_calls ?? []).map((call) => call.id));
    const rejected = record.messages.some(
      (other) => other.role === 'tool' && other.tool_call_id !== null && ids.has(other.tool_call_id) && other.tool_result.kind === 'invalid_arguments',
    );
    if (!rejected) turns.push(index);
  });
  return turns;
}
