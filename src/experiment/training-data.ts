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

/** A message as the policy saw and wrote it: what two episodes must agree on to share a prompt. */
function messageKey(message: RecordMessage): string {
  return canonicalJson(message as never);
}

function firstDifference(left: EpisodeRecord, right: EpisodeRecord): number {
  const shorter = Math.min(left.messages.length, right.messages.length);
  for (let index = 0; index < shorter; index++) if (messageKey(left.messages[index]!) !== messageKey(right.messages[index]!)) return index;
  return shorter;
}

function sameCatalogBefore(left: EpisodeRecord, right: EpisodeRecord, index: number): boolean {
  const updates = (record: EpisodeRecord) => canonicalJson(record.catalog_updates.filter((update) => update.before_message <= index) as never);
  return canonicalJson(left.tools as never) === canonicalJson(right.tools as never) && updates(left) === updates(right);
}

export interface PreferenceSelection {
  lines: PreferenceLine[];
  /** Pairs by the rejected record's variant. */
  by_rejected_variant: Record<string, number>;
}

export function preferencePairs(records: readonly EpisodeRecord[], tokenize: Tokenize): PreferenceSelection {
  const groups = new Map<string, EpisodeRecord[]>();
  for (const record of records) {
    const { task, seed } = record.provenance.lineage;
    const key = `${task}\u0000${seed}`;
    groups.set(key, [...(groups.get(key) ?? []), record]);
  }
  const lines: PreferenceLine[] = [];
  const byVariant: Record<string, number> = {};
  const seen = new Set<string>();
  for (const group of groups.values()) {
    for (const chosen of group) {
      if (!chosen.result.task_completed) continue;
      const meant = trainedTurns(chosen);
      const assistantTurns = chosen.messages.flatMap((message, index) => (message.role === 'assistant' ? [index] : []));
      if (meant.length !== assistantTurns.length) continue;
      for (const rejected of group) {
        if (rejected === chosen) continue;
        const turn = firstDifference(chosen, rejected);
        if (chosen.messages[turn]?.role !== 'assistant' || rejected.messages[turn]?.role !== 'assistant') continue;
        const mistake = !trainedTurns(rejected).includes(turn);
        if (!mistake && rejected.result.task_completed) continue;
        if (!sameCatalogBefore(chosen, rejected, turn)) continue;
        // Two completions often share the same correct turn: one pair per distinct (prompt, rejected turn).
        const key = `${chosen.provenance.lineage.task}\u0000${chosen.provenance.lineage.seed}\u0000${turn}\u0000${messageKey(rejected.messages[turn]!)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        lines.push(preferenceLine(`${chosen.record_id}>${rejected.record_id}@${turn}`, chosen, rejected, turn, tokenize));
        const variant = rejected.provenance.lineage.variant;
        byVariant[variant] = (byVariant[variant] ?? 0) + 1;
      }
    }
  }
  return { lines, by_rejected_variant: byVariant };
}
