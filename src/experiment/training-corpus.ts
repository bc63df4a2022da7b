// Owns turning verified records into what a model trains on: token ids of the
// conversation exactly as the serving engine will render and tokenize it
// (Qwen2.5's Hermes template, the codec `engine` uses for qwen2 files), and
// the spans whose next-token loss is trained. Which turns are trained: every
// assistant turn the policy meant, i.e. all but calls rejected as
// invalid_arguments (the scripted wrong_type_first variant's deliberate
// mistakes, or a model's real ones): those stay in the context, so the repair
// after them is learned and the mistake is not.
// A catalog that changes mid-episode (a tool renamed by a fault) changes the
// system turn the model sees from then on, so such a record gives one line per
// catalog it was played under, each with only that catalog's turns trained.

import type { Message, ToolDescriptor } from '../core/conversation.js';
import { hermesCodec } from '../models/codecs/hermes-codec.js';
import { renderTranscript } from '../models/codecs/model-codec.js';
import { fromRecordMessage, fromRecordTool, type EpisodeRecord } from '../records/episode-record.js';

export type Tokenize = (text: string) => number[];

export interface CorpusLine {
  record_id: string;
  split: string;
  ids: number[];
  /** [start, end) token positions whose next-token loss is trained: each trained assistant turn's text and its <|im_end|>. */
  loss: [number, number][];
}

/** A step-aligned preference: one prompt, the turn to prefer and the turn to avoid, as ids with their trained spans. */
export interface PreferenceLine {
  pair_id: string;
  chosen: { ids: number[]; loss: [number, number] };
  rejected: { ids: number[]; loss: [number, number] };
}

/** Indexes of the assistant messages to learn: final texts, and calls none of whose results was an invalid_arguments error. */
export function trainedTurns(record: EpisodeRecord): number[] {
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

/**
 * The catalog the policy saw before message `index`. The fault layer renames
 * a tool in place, so an update that removes as many tools as it adds puts
 * each new tool where the old one was; any other update drops and appends.
 */
export function catalogBefore(record: EpisodeRecord, index: number): ToolDescriptor[] {
  let catalog = record.tools.map(fromRecordTool);
  for (const update of record.catalog_updates) {
    if (update.before_message > index) break;
    const added = update.added.map(fromRecordTool);
    if (update.removed.length === added.length) {
      const replacement = new Map(update.removed.map((name, position) => [name, added[position]!]));
      catalog = catalog.map((tool) => replacement.get(tool.name) ?? tool);
    } else {
      catalog = [...catalog.filter((tool) => !update.removed.includes(tool.name)), ...added];
    }
  }
  return catalog;
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  return prefix.length <= ids.length && prefix.every((id, index) => ids[index] === id);
}

/** The trained span of the assistant message at `turn`: from the end of its prompt to its <|im_end|>, checked to be a prefix of `ids`. */
function turnSpan(messages: readonly Message[], turn: number, tools: readonly ToolDescriptor[], ids: readonly number[], tokenize: Tokenize, where: string): [number, number] {
  const prompt = tokenize(hermesCodec.render(messages.slice(0, turn), tools));
  // The turn ends at its <|im_end|>: the transcript through the turn, minus the newline after it.
  const through = tokenize(renderTranscript(hermesCodec, messages.slice(0, turn + 1), tools).replace(/\n$/, ''));
  // Inference tokenizes the prompt alone: if it were not a prefix of the transcript, the model would learn from ids it never sees.
  if (!startsWith(ids, prompt) || !startsWith(ids, through)) throw new Error(`${where}: turn ${turn} does not tokenize as a prefix of the transcript`);
  return [prompt.length, through.length];
}

/** One line per catalog the record was played under that has a trained turn. */
export function corpusLines(record: EpisodeRecord, split: string, tokenize: Tokenize): CorpusLine[] {
  const messages = record.messages.map(fromRecordMessage);
  const starts = [0, ...record.catalog_updates.map((update) => update.before_message)];
  const turns = trainedTurns(record);
  const lines: CorpusLine[] = [];
  starts.forEach((start, segment) => {
    const end = starts[segment + 1] ?? messages.length;
    const mine = turns.filter((turn) => turn >= start && turn < end);
    if (mine.length === 0) return;
    const tools = catalogBefore(record, start);
    const last = mine[mine.length - 1]!;
    const ids = tokenize(renderTranscript(hermesCodec, messages.slice(0, last + 1), tools));
    const id = segment === 0 ? record.record_id : `${record.record_id}#catalog${segment}`;
    lines.push({ record_id: id, split, ids, loss: mine.map((turn) => turnSpan(messages, turn, tools, ids, tokenize, id)) });
  });
  return lines;
}

/**
 * A preference at one step: the conversation up to (not including) message
 * `turn` of `chosen` and of `rejected` must be the same; the line holds each
 * continuation's ids through its next assistant turn.
 */
export function preferenceLine(pairId: string, chosen: EpisodeRecord, rejected: EpisodeRecord, turn: number, tokenize: Tokenize): PreferenceLine {
  const side = (record: EpisodeRecord) => {
    const messages = record.messages.map(fromRecordMessage);
    const tools = catalogBefore(record, turn);
    const ids = tokenize(renderTranscript(hermesCodec, messages.slice(0, turn + 1), tools).replace(/\n$/, ''));
    return { ids, loss: turnSpan(messages, turn, tools, ids, tokenize, `${pairId} (${record.record_id})`) };
  };
  const preferred = side(chosen);
  const avoided = side(rejected);
  if (!startsWith(preferred.ids, avoided.ids.slice(0, avoided.loss[0])) || preferred.loss[0] !== avoided.loss[0]) {
    throw new Error(`${pairId}: chosen and rejected do not share the prompt before message ${turn}`);
  }
  return { pair_id: pairId, chosen: preferred, rejected: avoided };
}
