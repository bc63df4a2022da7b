// Owns the proof that the tiny model works through real llama.cpp: it loads
// the GGUF with node-llama-cpp (CPU, prebuilt binaries), renders every
// learned turn of the held-out episodes with the project's hermes codec (the
// prompt raw mode sends), decodes greedily until <|im_end|>, and reads the
// text back with hermesCodec.parse. A call counts when its tool name and
// arguments equal the scripted policy's; a final answer when its text does.
//
// Usage: node --import tsx scripts/tiny-model/check-model.ts MODEL_GGUF HELDOUT_DIR [OUT_JSON]
// (HELDOUT_DIR holds <lane>/episodes.jsonl, as build-corpus.ts writes them.)

import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getLlama, LlamaLogLevel, type Token } from 'node-llama-cpp';
import { canonicalJson } from '../../src/core/canonical-json.js';
import type { Message } from '../../src/core/conversation.js';
import type { Action } from '../../src/policy/policy-contract.js';
import { hermesCodec } from '../../src/models/codecs/hermes-codec.js';
import { fromRecordMessage, fromRecordTool } from '../../src/records/episode-record.js';
import { lossTurns, readRecords } from './episode-turns.js';

export interface TurnResult {
  record_id: string;
  turn: number;
  kind: 'tool_call' | 'final_text';
  correct: boolean;
  expected: string;
  got: string;
}

export interface CheckReport {
  model: string;
  episodes: number;
  tool_call_turns: number;
  tool_calls_correct: number;
  tool_call_accuracy: number;
  final_turns: number;
  finals_exact: number;
  final_accuracy: number;
  generated_tokens: number;
  tokens_per_second: number;
  /** A fresh sequence: the whole prompt (system turn, tool catalog, conversation) evaluated, then the first token. */
  cold_first_token_ms: number;
  /** Later turns of an episode: the cached prompt is reused, only the new turns are evaluated. */
  warm_first_token_ms: number;
  prompt_tokens_per_second: number;
  turns: TurnResult[];
}

const MAX_TURN_TOKENS = 300;

/** What the scripted policy did in that turn, in the shape the codec's parse returns. */
function expectedAction(message: Message): Action {
  if (message.role !== 'assistant') throw new Error('a learned turn must be an assistant message');
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return { kind: 'final_text', text: message.content };
  if (calls.length === 1) return { kind: 'tool_call', name: calls[0]!.name, arguments: calls[0]!.arguments as never };
  return { kind: 'tool_calls', calls: calls.map((call) => ({ name: call.name, arguments: call.arguments as never })) };
}

function describe(action: Action): string {
  switch (action.kind) {
    case 'final_text':
      return action.text;
    case 'tool_call':
      return `${action.name}(${canonicalJson(action.arguments)})`;
    case 'tool_calls':
      return action.calls.map((call) => `${call.name}(${canonicalJson(call.arguments)})`).join('; ');
    default:
      return `${action.kind}: ${'reason' in action ? action.reason : ''}`;
  }
}

export async function checkTinyModel(modelPath: string, heldoutDir: string): Promise<CheckReport> {
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  // One thread: llama.cpp's threads spin at every barrier, so on a busy or small
  // machine two threads for a model this small are many times slower than one.
  const context = await model.createContext({ contextSize: 4096, sequences: 1, threads: 1 });
  const sequence = context.getSequence();
  const report: CheckReport = {
    model: modelPath,
    episodes: 0,
    tool_call_turns: 0,
    tool_calls_correct: 0,
    tool_call_accuracy: 0,
    final_turns: 0,
    finals_exact: 0,
    final_accuracy: 0,
    generated_tokens: 0,
    tokens_per_second: 0,
    cold_first_token_ms: 0,
    warm_first_token_ms: 0,
    prompt_tokens_per_second: 0,
    turns: [],
  };
  let decodeMs = 0;
  const cold: number[] = [];
  const warm: number[] = [];
  let promptTokens = 0;
  let promptMs = 0;
  try {
    for (const lane of readdirSync(heldoutDir).sort()) {
      for (const record of readRecords(join(heldoutDir, lane, 'episodes.jsonl'))) {
        report.episodes++;
        const messages = record.messages.map(fromRecordMessage);
        const tools = record.tools.map(fromRecordTool);
        // Each episode starts on a fresh sequence, so its first turn measures a cold prompt.
        await sequence.clearHistory();
        for (const turn of lossTurns(record)) {
          // A string prompt would turn <|im_start|> into plain text: pass ids parsed with specials.
          const prompt = model.tokenize(hermesCodec.render(messages.slice(0, turn), tools), true);
          const isCold = sequence.nextTokenIndex === 0;
          // Keep the part of the cache the new prompt shares; at least one token must be evaluated to get logits.
          await sequence.adaptStateToTokens(prompt, false);
          if (sequence.nextTokenIndex >= prompt.length) await sequence.eraseContextTokenRanges([{ start: prompt.length - 1, end: sequence.nextTokenIndex }]);
          const fresh = prompt.slice(sequence.nextTokenIndex);
          const output: Token[] = [];
          const started = performance.now();
          let first = 0;
          for await (const token of sequence.evaluate(fresh, { temperature: 0 })) {
            if (output.length === 0 && first === 0) first = performance.now();
            if (model.isEogToken(token)) break;
            output.push(token);
            if (output.length >= MAX_TURN_TOKENS) break;
          }
          const ended = performance.now();
          (isCold ? cold : warm).push(first - started);
          promptTokens += fresh.length;
          promptMs += first - started;
          decodeMs += ended - first;
          report.generated_tokens += output.length + 1;
          const got = hermesCodec.parse(model.detokenize(output, true));
          const want = expectedAction(messages[turn]!);
          const kind = want.kind === 'final_text' ? 'final_text' : 'tool_call';
          // Same action: kind, tool names and arguments (compared canonically, so key order does not matter).
          const correct = got.kind === want.kind && describe(got) === describe(want);
          if (kind === 'tool_call') {
            report.tool_call_turns++;
            if (correct) report.tool_calls_correct++;
          } else {
            report.final_turns++;
            if (correct) report.finals_exact++;
          }
          report.turns.push({ record_id: record.record_id, turn, kind, correct, expected: describe(want), got: describe(got) });
        }
      }
    }
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
  report.tool_call_accuracy = report.tool_call_turns === 0 ? 0 : report.tool_calls_correct / report.tool_call_turns;
  report.final_accuracy = report.final_turns === 0 ? 0 : report.finals_exact / report.final_turns;
  // The first token of each turn is timed with its prompt; the rest are decode.
  report.tokens_per_second = (report.generated_tokens - report.turns.length) / (decodeMs / 1000);
  report.cold_first_token_ms = mean(cold);
  report.warm_first_token_ms = mean(warm);
  report.prompt_tokens_per_second = promptTokens / (promptMs / 1000);
  return report;
}

function round(value: number, digits: number): number {
  return Number(value.toFixed(digits));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [modelPath, heldoutDir, out] = process.argv.slice(2);
  if (!modelPath || !heldoutDir) {
    console.error('usage: check-model.ts MODEL_GGUF HELDOUT_DIR [OUT_JSON]');
    process.exit(2);
  }
  const report = await checkTinyModel(modelPath, heldoutDir);
  const summary = {
    episodes: report.episodes,
    tool_call_turns: report.tool_call_turns,
    tool_calls_correct: report.tool_calls_correct,
    tool_call_accuracy: round(report.tool_call_accuracy, 4),
    final_turns: report.final_turns,
    finals_exact: report.finals_exact,
    final_accuracy: round(report.final_accuracy, 4),
    tokens_per_second: round(report.tokens_per_second, 1),
    prompt_tokens_per_second: round(report.prompt_tokens_per_second, 1),
    cold_first_token_ms: round(report.cold_first_token_ms, 1),
    warm_first_token_ms: round(report.warm_first_token_ms, 1),
  };
  if (out) writeFileSync(out, JSON.stringify({ ...summary, turns: report.turns }, null, 2) + '\n');
  console.log(
    `tiny-model check: tool calls ${report.tool_calls_correct}/${report.tool_call_turns} (${(100 * report.tool_call_accuracy).toFixed(1)}%), ` +
      `final answers ${report.finals_exact}/${report.final_turns} exact, ${summary.tokens_per_second} tokens/s, ` +
      `first token ${summary.cold_first_token_ms} ms cold (${report.turns.length ? 'whole prompt' : '-'}), ${summary.warm_first_token_ms} ms warm`,
  );
}
