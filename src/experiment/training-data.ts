// Owns what an experiment trains on, made from verified records only:
// - SFT lines: the completed records of a dataset (a failed episode teaches
//   nothing to imitate), their first `limit` in record order, tokenized;
// - preference lines: step-aligned pairs from a dataset where every variant
//   played every (task, seed) against the same world and fault draw. For each
//   completed record whose turns were all meant, every other record of its
//   group is compared with it: at the first message where the two differ, if
//   both are assistant turns and the other one's turn was a mistake (a call
//   rejected as invalid) or led to a failed episode, the pair is kept.

import { readFileSync } from 'node:fs';
import { canonicalJson } from '../core/canonical-json.js';
import type { EpisodeRecord, RecordMessage } from '../records/episode-record.js';
import { corpusLines, preferenceLine, trainedTurns, type CorpusLine, type PreferenceLine, type Tokenize } from './training-corpus.js';

/** The records of a dataset's episodes.jsonl, in order. */
export function readEpisodes(path: string): EpisodeRecord[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as EpisodeRecord);
}

export interface SftSelection {
  records: EpisodeRecord[];
  /** Records of the dataset that were not completed, left out. */
  not_completed: number;
}

/** The first `limit` completed records (all of them without a limit). */
export function completedRecords(records: readonly EpisodeRecord[], limit = Infinity): SftSelection {
  const completed = records.filter((record) => record.result.task_completed);
  return { records: completed.slice(0, limit), not_completed: records.length - completed.length };
}

export function sftLines(records: readonly EpisodeRecord[], split: string, tokenize: Tokenize): CorpusLine[] {
  return records.flatMap((record) => corpusLines(record, split, tokenize));
}

/** A record with what pairing compares, computed once: each message as the policy saw and wrote it, and the turns it meant. */
interface Compared {
  record: EpisodeRecord;
  messages: string[];
  meant: Set<number>;
}

function compared(record: EpisodeRecord): Compared {
  return { record, messages: record.messages.map((message: RecordMessage) => canonicalJson(message)), meant: new Set(trainedTurns(record)) };
}

function firstDifference(left: Compared, right: Compared): number {
  const shorter = Math.min(left.messages.length, right.messages.length);
  for (let index = 0; index < shorter; index++) if (left.messages[index] !== right.messages[index]) return index;
  return shorter;
}

function sameCatalogBefore(left: EpisodeRecord, right: EpisodeRecord, index: number): boolean {
  const updates = (record: EpisodeRecord) => canonicalJson(record.catalog_updates.filter((update) => update.before_message <= index));
  return canonicalJson(left.tools) === canonicalJson(right.tools) && updates(left) === updates(right);
}

export interface PreferenceSelection {
  lines: PreferenceLine[];
  /** Pairs by the rejected record's variant. */
  by_rejected_variant: Record<string, number>;
}

export function preferencePairs(records: readonly EpisodeRecord[], tokenize: Tokenize): PreferenceSelection {
  const groups = new Map<string, Compared[]>();
  for (const record of records) {
    const { task, seed } = record.provenance.lineage;
    const key = `${task}\u0000${seed}`;
    const group = groups.get(key) ?? [];
    group.push(compared(record));
    groups.set(key, group);
  }
  const lines: PreferenceLine[] = [];
  const byVariant: Record<string, number> = {};
  const seen = new Set<string>();
  for (const group of groups.values()) {
    for (const chosen of group) {
      if (!chosen.record.result.task_completed) continue;
      const assistantTurns = chosen.record.messages.filter((message) => message.role === 'assistant').length;
      if (chosen.meant.size !== assistantTurns) continue;
      for (const rejected of group) {
        if (rejected === chosen) continue;
        const turn = firstDifference(chosen, rejected);
        if (chosen.record.messages[turn]?.role !== 'assistant' || rejected.record.messages[turn]?.role !== 'assistant') continue;
        const mistake = !rejected.meant.has(turn);
        if (!mistake && rejected.record.result.task_completed) continue;
        if (!sameCatalogBefore(chosen.record, rejected.record, turn)) continue;
        // Two completions often share the same correct turn: one pair per distinct (prompt, rejected turn).
        const { task, seed } = chosen.record.provenance.lineage;
        const key = `${task}\u0000${seed}\u0000${turn}\u0000${rejected.messages[turn]}`;
        if (seen.has(key)) continue;
        seen.add(key);
        lines.push(preferenceLine(`${chosen.record.record_id}>${rejected.record.record_id}@${turn}`, chosen.record, rejected.record, turn, tokenize));
        const variant = rejected.record.provenance.lineage.variant;
        byVariant[variant] = (byVariant[variant] ?? 0) + 1;
      }
    }
  }
  return { lines, by_rejected_variant: byVariant };
}
