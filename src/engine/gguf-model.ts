// Owns one GGUF model run by llama.cpp through node-llama-cpp on the CPU: what
// the file says it is (architecture, parameter count, quantisation, context
// length, chat template, the sha256 of its bytes that pins it), and turning a
// prompt into text: the prompt tokenised by the model's own tokenizer with its
// special tokens parsed (a string prompt would read `<|im_start|>` as plain
// text), decoded token by token until an end-of-generation token, a stop
// string or the token limit. One sequence serves one request at a time; the
// tokens a new prompt shares with the last one are kept in the KV cache, so a
// multi-turn episode pays only for each turn's new tokens.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { FactoryError } from '../core/errors.js';
import { readGgufHeader } from './gguf-header.js';

/** GGUF `general.file_type` as Ollama names the quantisation level. */
const FILE_TYPES: Record<number, string> = { 0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K', 11: 'Q3_K_S', 12: 'Q3_K_M', 13: 'Q3_K_L', 14: 'Q4_K_S', 15: 'Q4_K_M', 16: 'Q5_K_S', 17: 'Q5_K_M', 18: 'Q6_K', 32: 'BF16' };

export interface GgufDescription {
  /** The file's path as given. */
  path: string;
  /** sha256 of the file's bytes, hex: what pins these weights in a record. */
  sha256: string;
  bytes: number;
  /** `general.architecture` (qwen2, llama, ...): the family a codec is chosen by. */
  architecture: string;
  /** `general.name`, when the file has one. */
  name: string | null;
  parameters: number;
  /** Ollama's style: "9.7M", "494.03M", "7.6B". */
  parameter_size: string;
  quantization: string;
  /** The context length the model was trained with. */
  context_length: number;
  /** `tokenizer.chat_template`, when the file has one. */
  chat_template: string | null;
}

export interface CompletionRequest {
  prompt: string;
  /** Text that ends the answer where it first appears (not included). */
  stop: readonly string[];
  /** The most tokens to generate. */
  maxTokens: number;
  /** 0 decodes greedily (the same prompt always gives the same text); above 0 samples with `seed`. */
  temperature: number;
  seed?: number;
  signal?: AbortSignal;
  /** Called with each piece of text as soon as no stop string can still begin in it. */
  onText?: (piece: string) => void;
}

export interface Completion {
  text: string;
  /** "stop": an end-of-generation token or a stop string; "length": the token limit. */
  doneReason: 'stop' | 'length';
  promptTokens: number;
  /** Of the prompt's tokens, how many were evaluated (the rest were still in the cache from the last request). */
  evaluatedPromptTokens: number;
  outputTokens: number;
  /** Nanoseconds, as Ollama reports durations. */
  promptNanoseconds: number;
  outputNanoseconds: number;
}

/** Ollama prints a parameter count with two decimals below 1B at most, e.g. 494.03M. */
export function parameterSize(count: number): string {
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
  for (const [size, unit] of units) if (count >= size) return `${Number((count / size).toFixed(count / size >= 100 ? 2 : 1))}${unit}`;
  return String(count);
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The longest end of `text` that begins some stop string: held back while streaming, since the next token may complete it. */
function heldBack(text: string, stop: readonly string[]): number {
  let longest = 0;
  for (const candidate of stop) {
    for (let length = Math.min(candidate.length - 1, text.length); length > longest; length--) {
      if (text.endsWith(candidate.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

export interface LoadOptions {
  /** Tokens the context holds (prompt and answer); default 8192, at most what the model was trained with unless `allowLongerContext`. */
  contextSize?: number;
  /** CPU threads for evaluation; default 1. */
  threads?: number;
}

export class GgufModel {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly description: GgufDescription,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly sequence: LlamaContextSequence,
    /** Nanoseconds the load took, reported once as Ollama's load_duration. */
    readonly loadNanoseconds: number,
  ) {}

  static async load(path: string, options: LoadOptions = {}): Promise<GgufModel> {
    const started = performance.now();
    const size = await stat(path).catch(() => undefined);
    if (!size?.isFile()) throw new FactoryError('usage', `no model file at ${path}`, { fix: 'pass the path of a .gguf file (scripts/tiny-model.sh builds one and prints its path)' });
    // Before node-llama-cpp's parser and llama.cpp's: both loop as often as the header says and allocate what it says.
    readGgufHeader(path);
    // Imported here: loading the native addon costs about a second and every other command does without it.
    const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
    let llama: Llama;
    try {
      llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, logger: (_level, message) => process.stderr.write(`llama.cpp: ${message.trimEnd()}\n`) });
    } catch (error) {
      throw new FactoryError('model_unavailable', `node-llama-cpp has no prebuilt llama.cpp binary for this machine: ${error instanceof Error ? error.message : String(error)}`, {
        fix: 'reinstall with `npm ci` on a supported platform (Linux, macOS or Windows on x64 or arm64)',
        cause: error,
      });
    }
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: path });
    } catch (error) {
      await llama.dispose();
      throw new FactoryError('model_unavailable', `llama.cpp could not load ${path}: ${error instanceof Error ? error.message : String(error)}`, { fix: 'pass a GGUF model file llama.cpp reads (rebuild the tiny model with scripts/tiny-model.sh)', cause: error });
    }
    const metadata = model.fileInfo.metadata as unknown as { general?: { architecture?: string; name?: string; file_type?: number }; tokenizer?: { chat_template?: string } };
    const architecture = metadata.general?.architecture ?? 'unknown';
    let parameters = 0;
    for (const tensor of model.fileInfo.tensorInfo ?? []) parameters += tensor.dimensions.reduce<number>((product, dimension) => product * Number(dimension), 1);
    const fileType = metadata.general?.file_type;
    const description: GgufDescription = {
      path,
      sha256: await fileSha256(path),
      bytes: size.size,
      architecture,
      name: metadata.general?.name ?? null,
      parameters,
      parameter_size: parameterSize(parameters),
      quantization: fileType === undefined ? 'unknown' : (FILE_TYPES[fileType] ?? `file_type ${fileType}`),
      context_length: model.trainContextSize,
      chat_template: metadata.tokenizer?.chat_template ?? null,
    };
    const contextSize = options.contextSize ?? Math.min(8192, model.trainContextSize);
    // One thread unless asked: llama.cpp's threads spin while they wait for each other, and on a small or busy machine
    // two of them made a token take 800 ms instead of 6 (measured on 2 cores).
    const context = await model.createContext({ contextSize, sequences: 1, threads: options.threads ?? 1 });
    return new GgufModel(description, llama, model, context, context.getSequence(), Math.round((performance.now() - started) * 1e6));
  }

  /** A default name for the served model: the file's name without `.gguf`, tagged `latest`. */
  static defaultName(path: string): string {
    return `${basename(path).replace(/\.gguf$/i, '')}:latest`;
  }

  get contextSize(): number {
    return this.context.contextSize;
  }

  /** The prompt's tokens, special tokens parsed, as the model will see them. */
  tokenize(prompt: string): Token[] {
    return this.model.tokenize(prompt, true);
  }

  /** Runs requests one after another, in the order they came. */
  complete(request: CompletionRequest): Promise<Completion> {
    const run = this.queue.then(() => this.run(request));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(request: CompletionRequest): Promise<Completion> {
    request.signal?.throwIfAborted();
    const tokens = this.tokenize(request.prompt);
    if (tokens.length + 1 > this.contextSize) {
      throw new FactoryError('usage', `the prompt is ${tokens.length} tokens and the context holds ${this.contextSize}`, { fix: 'start the engine with a larger --context, or send a shorter conversation' });
    }
    const promptStarted = performance.now();
    // Keep what the cache already holds of this prompt; at least one token is evaluated, for the next token's logits.
    const cached = this.sequence.contextTokens;
    let common = 0;
    while (common < cached.length && common < tokens.length - 1 && cached[common] === tokens[common]) common++;
    if (common < this.sequence.nextTokenIndex) await this.sequence.eraseContextTokenRanges([{ start: common, end: this.sequence.nextTokenIndex }]);
    const maxTokens = Math.max(0, Math.min(request.maxTokens, this.contextSize - tokens.length));
    const output: Token[] = [];
    let text = '';
    let sent = 0;
    let doneReason: Completion['doneReason'] = 'stop';
    let firstTokenAt: number | undefined;
    const options = request.temperature > 0 ? { temperature: request.temperature, ...(request.seed !== undefined ? { seed: request.seed } : {}) } : { temperature: 0 };
    if (maxTokens === 0) doneReason = 'length';
    else {
      for await (const token of this.sequence.evaluate(tokens.slice(common), options)) {
        firstTokenAt ??= performance.now();
        output.push(token);
        text = this.model.detokenize(output);
        const stopAt = request.stop.reduce((first, stop) => {
          const at = stop === '' ? -1 : text.indexOf(stop);
          return at >= 0 && (first < 0 || at < first) ? at : first;
        }, -1);
        if (stopAt >= 0) {
          text = text.slice(0, stopAt);
          break;
        }
        // A token may end inside a multi-byte character; it is sent once the next token completes it.
        const ready = text.endsWith('\uFFFD') ? text.length - 1 : text.length - heldBack(text, request.stop);
        if (ready > sent) {
          request.onText?.(text.slice(sent, ready));
          sent = ready;
        }
        if (request.signal?.aborted || output.length >= maxTokens) {
          if (output.length >= maxTokens) doneReason = 'length';
          break;
        }
      }
    }
    request.signal?.throwIfAborted();
    if (text.length > sent) request.onText?.(text.slice(sent));
    const finished = performance.now();
    const promptEnd = firstTokenAt ?? finished;
    return {
      text,
      doneReason,
      promptTokens: tokens.length,
      evaluatedPromptTokens: tokens.length - common,
      outputTokens: output.length,
      promptNanoseconds: Math.round((promptEnd - promptStarted) * 1e6),
      outputNanoseconds: Math.round((finished - promptEnd) * 1e6),
    };
  }

  async dispose(): Promise<void> {
    await this.queue.catch(() => undefined);
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}
