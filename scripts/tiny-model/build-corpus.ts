// Owns the tiny model's training corpus: the scripted policy's verified
// episodes of the configured lanes, rendered with the project's own Qwen2.5
// codec (hermes) and tokenized by llama.cpp itself from the Qwen2 vocab file,
// so the ids the model trains on are the ids llama.cpp feeds it at inference.
//
// Usage: node --import tsx scripts/tiny-model/build-corpus.ts CONFIG VOCAB_GGUF OUT_DIR
// Writes OUT_DIR/{train,heldout}/<lane>/episodes.jsonl (the records),
// OUT_DIR/corpus.jsonl (one episode a line: ids and the spans that carry loss)
// and OUT_DIR/corpus-summary.json. Deterministic: same sources, same bytes.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, type LlamaModel } from 'node-llama-cpp';
import type { Message } from '../../src/core/conversation.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { parseSeedRange } from '../../src/lanes/seed-range.js';
import { hermesCodec } from '../../src/models/codecs/hermes-codec.js';
import { renderTranscript } from '../../src/models/codecs/model-codec.js';
import { fromRecordMessage, fromRecordTool, type EpisodeRecord } from '../../src/records/episode-record.js';
import { lossTurns, readRecords } from './episode-turns.js';

interface CorpusConfig {
  lanes: string[];
  train_seeds: string;
  heldout_seeds: string;
}

interface CorpusLine {
  record_id: string;
  lane: string;
  split: 'train' | 'heldout';
  ids: number[];
  /** [start, end) token positions whose next-token loss is trained: each assistant turn's text and its <|im_end|>. */
  loss: [number, number][];
}

const [configPath, vocabPath, outDir] = process.argv.slice(2);
if (!configPath || !vocabPath || !outDir) {
  console.error('usage: build-corpus.ts CONFIG VOCAB_GGUF OUT_DIR');
  process.exit(2);
}
const config = (JSON.parse(readFileSync(configPath, 'utf8')) as { corpus: CorpusConfig }).corpus;

/**
 * Token ids exactly as llama.cpp reads the text, special tokens (<|im_start|>,
 * <|im_end|>) parsed as specials. llama.cpp cuts the text at special tokens
 * first and runs BPE on each piece alone, so the pieces between specials can
 * be tokenized once and remembered: every episode repeats the same ~1,800-token
 * system turn. `checked` compares the shortcut with a whole-text tokenize.
 */
function tokenizer(model: LlamaModel): { tokenize: (text: string) => number[]; whole: (text: string) => number[] } {
  const whole = (text: string) => Array.from(model.tokenize(text, true), Number);
  const specials = new Map(['<|im_start|>', '<|im_end|>'].map((text) => {
    const ids = whole(text);
    if (ids.length !== 1) throw new Error(`${text} is not one special token in this vocab`);
    return [text, ids[0]!] as const;
  }));
  const pieces = new Map<string, number[]>();
  const tokenize = (text: string): number[] =>
    text.split(/(<\|im_start\|>|<\|im_end\|>)/).flatMap((piece) => {
      if (piece === '') return [];
      const special = specials.get(piece);
      if (special !== undefined) return [special];
      let ids = pieces.get(piece);
      if (!ids) pieces.set(piece, (ids = Array.from(model.tokenize(piece, false), Number)));
      return ids;
    });
  return { tokenize, whole };
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  return prefix.length <= ids.length && prefix.every((id, index) => ids[index] === id);
}

/**
 * One training line per episode. The prompt of each trained turn is tokenized
 * alone, as inference will tokenize it, and must be a prefix of the whole
 * transcript's ids: otherwise the model would learn from ids it never sees.
 */
function corpusLine(record: EpisodeRecord, lane: string, split: CorpusLine['split'], tokenize: (text: string) => number[]): CorpusLine {
  // A catalog that changes mid-episode would need rendering per turn; no corpus lane has one yet.
  if (record.catalog_updates.length > 0) throw new Error(`${record.record_id}: catalog updates are not supported`);
  const messages: Message[] = record.messages.map(fromRecordMessage);
  const tools = record.tools.map(fromRecordTool);
  const ids = tokenize(renderTranscript(hermesCodec, messages, tools));
  const loss: [number, number][] = [];
  for (const turn of lossTurns(record)) {
    const prompt = tokenize(hermesCodec.render(messages.slice(0, turn), tools));
    // The turn ends at its <|im_end|>: the transcript through the turn, minus the newline after it.
    const through = tokenize(renderTranscript(hermesCodec, messages.slice(0, turn + 1), tools).replace(/\n$/, ''));
    if (!startsWith(ids, prompt) || !startsWith(ids, through)) {
      throw new Error(`${record.record_id}: turn ${turn} does not tokenize as a prefix of the transcript`);
    }
    loss.push([prompt.length, through.length]);
  }
  return { record_id: record.record_id, lane, split, ids, loss };
}

// A vocab-only file has no tensors, so node-llama-cpp's memory estimate fails
// to load it and says so before falling back; those lines are expected here.
const EXPECTED = /missing tensor 'token_embd\.weight'|failed to load model|Failed simulating model resource usage/;
const llama = await getLlama({
  gpu: false,
  build: 'never',
  logLevel: LlamaLogLevel.error,
  logger: (_level, message) => {
    if (!EXPECTED.test(message)) console.error(`[node-llama-cpp] ${message}`);
  },
});
const model = await llama.loadModel({ modelPath: vocabPath, vocabOnly: true });
const { tokenize, whole } = tokenizer(model);
// The shortcut is checked against llama.cpp's whole-text tokenize on the first episodes of each split and every held-out one.
const CHECKED_PER_SPLIT = 25;
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const lines: string[] = [];
const summary: Record<string, { episodes: number; tokens: number; loss_tokens: number }> = {};
for (const laneName of config.lanes) {
  const lane = loadLane(laneName);
  for (const split of ['train', 'heldout'] as const) {
    const dir = join(outDir, split, laneName);
    const seeds = parseSeedRange(split === 'train' ? config.train_seeds : config.heldout_seeds);
    // One worker: the records are the same bytes whatever the count, and the machine is shared.
    const run = await generateDataset({ lane, outDir: dir, seeds, formats: ['jsonl'], workers: 1 });
    if (run.rejected > 0 || run.completed !== run.written) throw new Error(`${laneName} ${split}: ${run.rejected} rejected, ${run.completed}/${run.written} completed`);
    // Traces and manifests carry wall-clock times; only the records are inputs.
    rmSync(join(dir, 'traces'), { recursive: true, force: true });
    rmSync(join(dir, 'manifest.json'), { force: true });
    const tally = (summary[split] ??= { episodes: 0, tokens: 0, loss_tokens: 0 });
    for (const [index, record] of readRecords(join(dir, 'episodes.jsonl')).entries()) {
      const line = corpusLine(record, laneName, split, tokenize);
      if (split === 'heldout' || index < CHECKED_PER_SPLIT) {
        const again = corpusLine(record, laneName, split, whole);
        if (JSON.stringify(again) !== JSON.stringify(line)) throw new Error(`${record.record_id}: piecewise tokenization differs from llama.cpp's whole-text tokenization`);
      }
      tally.episodes++;
      tally.tokens += line.ids.length;
      tally.loss_tokens += line.loss.reduce((sum, [start, end]) => sum + end - start, 0);
      lines.push(JSON.stringify(line));
    }
  }
}
writeFileSync(join(outDir, 'corpus.jsonl'), lines.join('\n') + '\n');
writeFileSync(join(outDir, 'corpus-summary.json'), JSON.stringify({ lanes: config.lanes, splits: summary }, null, 2) + '\n');
await model.dispose();
await llama.dispose();
console.log(`corpus: ${Object.entries(summary).map(([split, s]) => `${split} ${s.episodes} episodes, ${s.tokens} tokens (${s.loss_tokens} trained)`).join('; ')}`);
