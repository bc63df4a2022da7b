// Owns `export dpo`: preference pairs from episodes of the same task, seed and
// fault draw (the same world, the same user message, the same faults armed).
// `chosen` is a verified completion (a recovery first, when there is one),
// `rejected` a verified failure; both continue a shared prompt up to the turn
// where they diverge, and each ends before the user simulator speaks again.
// Memory is bounded: records are grouped by where their lines are, and each
// group is read back from the file when its pairs are made.

import { canonicalJson } from '../core/canonical-json.js';
import { FingerprintTable } from '../core/fingerprint-table.js';
import { sha256Hex } from '../core/hashing.js';
import { doubled } from '../core/typed-arrays.js';
import type { EpisodeRecord, RecordMessage } from '../records/episode-record.js';
import { type ArgumentsForm, textArguments, toChatMessages, toChatTools, type ChatMessage, type ChatTool } from '../records/chat-format.js';
import { FactoryError } from '../core/errors.js';
import { EPISODES_FILE, passOverDataset, readRowAt, RecordPlaces } from './dataset-reader.js';
import { type ExportOptions, writeRowsAtomically } from './export-sft.js';

export interface DpoRow {
  prompt: ChatMessage[];
  chosen: ChatMessage[];
  rejected: ChatMessage[];
  tools: ChatTool[];
  chosen_record_id: string;
  rejected_record_id: string;
  chosen_variant: string;
  rejected_variant: string;
  task: string;
  seed: number;
}

export interface DpoSummary {
  dir: string;
  /** The records file read. */
  source: string;
  out: string;
  records: number;
  /** Episodes sharing a lane, task and seed. */
  groups: number;
  pairs: number;
  /** Records in no pair: groups with only completions or only failures. */
  unpaired: number;
  pairs_by_rejected_variant: Record<string, number>;
  /**
   * Pairs left out because, up to the next simulated user turn, chosen and
   * rejected are the same: the conversations first differ in what the user
   * simulator said, not in anything the agent did.
   */
  same_agent_moves: number;
  arguments: ArgumentsForm;
  /** In the "object" form, calls whose arguments stayed text because the policy emitted no JSON object. */
  arguments_kept_as_text: number;
}

function groupKey(record: EpisodeRecord): string {
  const { lane, lane_sha256, task, seed } = record.provenance.lineage;
  return `${lane}\u0000${lane_sha256}\u0000${task}\u0000${seed}`;
}

/** Which completion to prefer as `chosen`: one that recovered from something, then the shorter, then by variant name. */
function preference(left: EpisodeRecord, right: EpisodeRecord): number {
  if (left.recovery.recovered !== right.recovery.recovered) return left.recovery.recovered ? -1 : 1;
  if (left.result.steps !== right.result.steps) return left.result.steps - right.result.steps;
  const [a, b] = [left.provenance.lineage.variant, right.provenance.lineage.variant];
  return a < b ? -1 : a > b ? 1 : 0;
}

/** How many leading messages two conversations share, ending before an assistant turn so both continue with the model's move. */
export function sharedPrompt(left: readonly ChatMessage[], right: readonly ChatMessage[]): number {
  let shared = 0;
  while (shared < left.length && shared < right.length && canonicalJson(left[shared]) === canonicalJson(right[shared])) shared++;
  while (shared > 0 && !(left[shared]?.role === 'assistant' && right[shared]?.role === 'assistant')) shared--;
  return shared;
}

/**
 * Where a continuation that starts at `from` ends: before the first user
 * message at or after it (a simulated user's reply: the opening request is
 * always in the prompt), or at the end of the conversation.
 *
 * Why cut there rather than keep the whole episode and ask trainers to mask
 * the user's turns: DPO trainers (TRL's DPOTrainer among them) score every
 * token of `chosen` and `rejected` and have no per-message mask, so a user
 * turn left in a continuation would be learned as something the model says.
 * The agent's move ends when it hands the conversation back to the user (a
 * question, an answer, or acting on a guess and reporting it), so the pair
 * still holds exactly the step that differs (asking versus guessing, or one
 * question too many) and what the agent did until the user spoke again. The
 * index is taken on the record's messages, not the chat form, where the
 * harness's reply to a malformed call also has role "user" and is no user's.
 */
export function continuationEnd(messages: readonly RecordMessage[], from: number): number {
  for (let index = from; index < messages.length; index++) if (messages[index]!.role === 'user') return index;
  return messages.length;
}

/**
 * The (task, seed) groups of the first pass, in typed arrays: each group
 * known by a fingerprint of its key, with its counts of completed and failed
 * records and a chain of its records' slots in file order. About 60 bytes a
 * record; a Map of key strings to arrays of slots was about ten times that.
 */
class RecordGroups {
  private readonly index = new FingerprintTable();
  private completed = new Int32Array(1024);
  private failed = new Int32Array(1024);
  private first = new Int32Array(1024);
  private last = new Int32Array(1024);
  /** Per record slot: the next slot of its group, or -1. */
  private next = new Int32Array(1024);

  get size(): number {
    return this.index.size;
  }

  /** The group of a key (a new one gets the next number). */
  private groupOf(key: string): number {
    const group = this.index.getOrAdd(sha256Hex(key), this.index.size);
    if (group !== undefined) return group;
    const added = this.index.size - 1;
    if (added === this.completed.length) {
      this.completed = doubled(this.completed);
      this.failed = doubled(this.failed);
      this.first = doubled(this.first);
      this.last = doubled(this.last);
    }
    this.first[added] = -1;
    return added;
  }

  /** The group of a key the first pass saw, or undefined. */
  numberOf(key: string): number | undefined {
    return this.index.get(sha256Hex(key));
  }

  add(key: string, slot: number, completed: boolean): void {
    const group = this.groupOf(key);
    while (slot >= this.next.length) this.next = doubled(this.next);
    this.next[slot] = -1;
    if (this.first[group] === -1) this.first[group] = slot;
    else this.next[this.last[group]!] = slot;
    this.last[group] = slot;
    if (completed) this.completed[group]!++;
    else this.failed[group]!++;
  }

  counts(group: number): { completed: number; failed: number } {
    return { completed: this.completed[group]!, failed: this.failed[group]! };
  }

  *slots(group: number): Generator<number> {
    for (let slot = this.first[group]!; slot !== -1; slot = this.next[slot]!) yield slot;
  }
}

export async function exportDpo(dir: string, out: string, options: ExportOptions = {}): Promise<DpoSummary> {
  const form = options.arguments ?? 'string';
  const source = options.file ?? EPISODES_FILE;
  // Two passes in bounded memory: the first keeps only where each record of each (task, seed) group is; the
  // second reads a group's records back by place, one group at a time, in the order the groups first appear.
  const places = new RecordPlaces();
  // A group with no completed record, or no failed one, makes no pair: it is counted without being read again.
  const groups = new RecordGroups();
  const progress = options.onProgress ? { onProgress: options.onProgress } : {};
  options.onStage?.('grouping');
  const records = await passOverDataset(dir, 'exported', (row) => groups.add(groupKey(row.record), places.add(row), row.record.result.task_completed), { file: source, ...progress });
  const byVariant: Record<string, number> = {};
  let pairs = 0;
  let unpaired = 0;
  let keptAsText = 0;
  let sameMoves = 0;
  let done = 0;
  options.onStage?.('pairing');
  await writeRowsAtomically<DpoRow>(out, (append) => {
    for (let group = 0; group < groups.size; group++) {
      const counts = groups.counts(group);
      const size = counts.completed + counts.failed;
      done += size;
      if (options.onProgress && done % 1000 < size) options.onProgress({ records: done, bytes: done, totalBytes: records });
      if (counts.completed === 0 || counts.failed === 0) {
        unpaired += size;
        continue;
      }
      const members = [...groups.slots(group)].map((slot) => {
        const row = readRowAt(dir, places.get(slot));
        if (groups.numberOf(groupKey(row.record)) !== group) throw new FactoryError('dataset_corrupt', `${dir}/${row.file}:${row.line} is no longer the record the first pass read: the file changed during the export`, { fix: 'export again from a dataset no other process is writing' });
        return row.record;
      });
      const completed = members.filter((record) => record.result.task_completed).sort(preference);
      const failed = members.filter((record) => !record.result.task_completed);
      if (completed.length === 0 || failed.length === 0) {
        unpaired += members.length;
        continue;
      }
      const chosen = completed[0]!;
      unpaired += completed.length - 1;
      const chosenChat = toChatMessages(chosen.messages, form);
      for (const rejected of failed) {
        const rejectedChat = toChatMessages(rejected.messages, form);
        const shared = sharedPrompt(chosenChat, rejectedChat);
        const chosenMove = chosenChat.slice(shared, continuationEnd(chosen.messages, shared));
        const rejectedMove = rejectedChat.slice(shared, continuationEnd(rejected.messages, shared));
        if (canonicalJson(chosenMove) === canonicalJson(rejectedMove)) {
          sameMoves++;
          continue;
        }
        const row: DpoRow = {
          prompt: chosenChat.slice(0, shared),
          chosen: chosenMove,
          rejected: rejectedMove,
          tools: toChatTools([...chosen.tools, ...rejected.tools], [...chosen.catalog_updates, ...rejected.catalog_updates]),
          chosen_record_id: chosen.record_id,
          rejected_record_id: rejected.record_id,
          chosen_variant: chosen.provenance.lineage.variant,
          rejected_variant: rejected.provenance.lineage.variant,
          task: chosen.provenance.lineage.task,
          seed: chosen.provenance.lineage.seed,
        };
        append(row);
        if (form === 'object') keptAsText += textArguments([...row.prompt, ...row.chosen, ...row.rejected]);
        pairs++;
        byVariant[row.rejected_variant] = (byVariant[row.rejected_variant] ?? 0) + 1;
      }
    }
  });
  return {
    dir,
    source,
    out,
    records,
    groups: groups.size,
    pairs,
    unpaired,
    pairs_by_rejected_variant: Object.fromEntries(Object.entries(byVariant).sort(([left], [right]) => (left < right ? -1 : 1))),
    same_agent_moves: sameMoves,
    arguments: form,
    arguments_kept_as_text: keptAsText,
  };
}
