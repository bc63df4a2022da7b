// Owns the writer-model source of candidate tasks (`lanes synthesize
// --writer`): a chat model is shown the world's catalog (tool names,
// descriptions, input schemas) and a bounded summary of its initial state
// (each surveyed collection: where it is, what names a record, a few records),
// and asked for one task as JSON with concrete values from that state.
// writer-answer.ts reads and parameterises the answer. Every request is made
// at temperature 0 with a seed drawn from the draw, and every answer is
// recorded (writer-recording.ts); a rerun with the same writer reads the
// recording instead of asking, so the lane is reproducible without the model.

import { canonicalJson } from '../core/canonical-json.js';
import { FactoryError } from '../core/errors.js';
import { sha256Hex } from '../core/hashing.js';
import { isJsonObject, type JsonValue } from '../core/json-value.js';
import { substream, type Random } from '../core/random.js';
import type { ChatModel, Sampling } from '../models/chat-model.js';
import { shortPin } from '../models/model-pin.js';
import type { SamplerTool } from './candidate-sampler.js';
import { parameteriseAnswer, readWriterAnswer, MOST_ACTIONS } from './writer-answer.js';
import { readWriterRecording, recordedAnswer, saveWriterAnswer, WRITER_RECORDING_FORMAT, type WriterRecording } from './writer-recording.js';
import type { CandidateSource, SourceContext } from './candidate-trial.js';

/** The prompt is bounded whatever the world: this many records per collection, collections, and characters per schema, description and value. */
const SHOWN_RECORDS = 3;
const SHOWN_COLLECTIONS = 12;
const SCHEMA_CHARACTERS = 1500;
const DESCRIPTION_CHARACTERS = 300;
const VALUE_CHARACTERS = 80;
const ANSWER_TOKENS = 1024;

const WRITER_PROMPT =
  'You write tasks for training an assistant that uses tools. You are shown the tools of a world and a summary of its current state. ' +
  'Propose ONE task a user could ask, and the exact tool calls that do it: either a change to the world, or a question about ' +
  'one record whose answer the calls read. ' +
  'Answer with one JSON object and nothing else: {"instruction": "...", "actions": [{"tool": "...", "arguments": {...}}]}; ' +
  'for a question, add "answer": the value the user is told, exactly as the state shows it, and do not state it in the instruction. ' +
  'The instruction is what the user says to the assistant: it must state every value the calls use (names, numbers, texts), ' +
  'and name records by the values shown in the state. Use only the tools listed, arguments that fit their input schemas, and records ' +
  `that exist in the state. Use 1 to ${MOST_ACTIONS} actions.`;

export interface WriterSourceOptions {
  world: string;
  /** The writer as --writer names it (openai:qwen2.5-7b-instruct), which a recording is matched by. */
  writer: string;
  /** Where answers are recorded and read back (`<lane>.writer.json`). */
  recordingPath: string;
  /** Reaches the model (checkModel); called at once when there is no recording of this writer, else only for a draw the recording lacks. */
  connect: () => Promise<ChatModel>;
}

/** A candidate source asking a writer model; the model is reached now unless a recording of this writer exists. */
export async function createWriterSource(options: WriterSourceOptions): Promise<CandidateSource & { readonly recording: WriterRecording }> {
  const recorded = readWriterRecording(options.recordingPath, options.writer, options.world);
  let model = recorded ? undefined : await options.connect();
  const recording: WriterRecording = recorded ?? { format: WRITER_RECORDING_FORMAT, world: options.world, writer: options.writer, by: model!.spec, writer_digest: model!.pin, answers: [] };
  const ask = async (draw: number, messages: { role: 'system' | 'user'; content: string }[], sampling: Sampling): Promise<string> => {
    if (!model) {
      model = await options.connect();
      // New answers from other weights would make a lane no one model wrote.
      if (model.pin !== recording.writer_digest) {
        throw new FactoryError('usage', `${options.recordingPath} was recorded from ${recording.by} pinned ${shortPin(recording.writer_digest)}, but the server now serves ${model.spec} pinned ${shortPin(model.pin)}, and draw ${draw} is not recorded`, {
          fix: 'point --base-url / --ollama-host at the recorded weights, or delete the recording to ask the new writer for every draw',
        });
      }
    }
    const turn = await model.chat({ messages, sampling, signal: new AbortController().signal });
    return turn.text;
  };
  return {
    recording,
    provenance: { by: recording.by, writer_digest: recording.writer_digest },
    async propose(draw: number, context: SourceContext, random: Random) {
      const messages = [
        { role: 'system' as const, content: WRITER_PROMPT },
        { role: 'user' as const, content: writerRequest(draw, context, random) },
      ];
      const sampling: Sampling = { seed: substream(draw, `writer:${options.world}`).int(0, 2 ** 31 - 1), temperature: 0, maxTokens: ANSWER_TOKENS };
      const request = sha256Hex(canonicalJson({ messages, sampling }));
      let text = recordedAnswer(recording, draw, request);
      if (text === undefined) {
        text = await ask(draw, messages, sampling);
        saveWriterAnswer(options.recordingPath, recording, { draw, request, text });
      }
      const answer = readWriterAnswer(text, context.tools);
      if ('problem' in answer) return { problem: answer.problem, reason: 'writer-garbage' };
      return parameteriseAnswer(answer, context, random);
    },
  };
}

/** The user message of one draw: the catalog, the state, and a tool to build this task around (so draws differ at temperature 0). */
function writerRequest(draw: number, context: SourceContext, random: Random): string {
  const writes = context.tools.filter((tool) => tool.annotations?.readOnlyHint !== true);
  const focus = random.pick(writes.length > 0 ? writes : context.tools);
  const lines = [`World: ${context.world}.`, '', 'Tools:'];
  for (const tool of context.tools) lines.push(...toolLines(tool));
  lines.push('', 'State (a few records of each collection; a record is named by the fields listed):');
  for (const collection of context.collections.slice(0, SHOWN_COLLECTIONS)) {
    const kinds = collection.kinds.map((kind) => `${kind.field} is one of ${kind.values.join(', ')}`).join('; ');
    lines.push(`- ${collection.noun} at ${collection.pointer}: ${collection.items.length} records, named by ${collection.naming.join(' or ')}${kinds ? `; ${kinds}` : ''}`);
    for (const record of random.sample(collection.items, Math.min(SHOWN_RECORDS, collection.items.length))) {
      lines.push(`  ${JSON.stringify(Object.fromEntries(collection.fields.map((field) => [field, clip(record[field])])))}`);
    }
  }
  if (context.shownRoot) lines.push('', `Paths are given under ${context.shownRoot}.`);
  lines.push('', `Proposal ${draw}: build the task around the tool ${focus.name}. Answer with the JSON object only.`);
  return lines.join('\n');
}

function toolLines(tool: SamplerTool & { description?: string }): string[] {
  const schema = JSON.stringify(tool.inputSchema);
  return [
    `- ${tool.name}${tool.annotations?.readOnlyHint ? ' (read-only)' : ''}${tool.description ? `: ${clipText(tool.description, DESCRIPTION_CHARACTERS)}` : ''}`,
    `  input schema: ${clipText(schema, SCHEMA_CHARACTERS)}`,
  ];
}

function clip(value: JsonValue | undefined): JsonValue {
  if (typeof value === 'string') return clipText(value, VALUE_CHARACTERS);
  return value === undefined || isJsonObject(value) || Array.isArray(value) ? null : value;
}

function clipText(text: string, most: number): string {
  return text.length > most ? `${text.slice(0, most - 1)}…` : text;
}
