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
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { parseSeedRange } from '../../src/lanes/seed-range.js';
import { corpusLines, type CorpusLine } from '../../src/experiment/training-corpus.js';
import { openVocabTokenizer } from '../../src/experiment/vocab-tokenizer.js';
import { readRecords } from './episode-turns.js';

interface CorpusConfig {
  lanes: string[];
  train_seeds: string;
  heldout_seeds: string;
}

const [configPath, vocabPath, outDir] = process.argv.slice(2);
if (!configPath || !vocabPath || !outDir) {
  console.error('usage: build-corpus.ts CONFIG VOCAB_GGUF OUT_DIR');
  process.exit(2);
}
const config = (JSON.parse(readFileSync(configPath, 'utf8')) as { corpus: CorpusConfig }).corpus;

/** One training line per episode: the corpus lanes play no faults, so no catalog changes mid-episode. */
function corpusLine(record: Parameters<typeof corpusLines>[0], split: 'train' | 'heldout', tokenize: (text: string) => number[]): CorpusLine & { lane: string } {
  if (record.catalog_updates.length > 0) throw new Error(`${record.record_id}: catalog updates are not expected in the tiny model's corpus`);
  const [line] = corpusLines(record, split, tokenize);
  if (!line) throw new Error(`${record.record_id}: no turn to learn`);
  // The corpus line format: the lane after the record id.
  return { record_id: line.record_id, lane: record.provenance.lineage.lane, split, ids: line.ids, loss: line.loss };
}

const tokenizer = await openVocabTokenizer(vocabPath);
const { tokenize, whole } = tokenizer;
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
      const line = corpusLine(record, split, tokenize);
      if (split === 'heldout' || index < CHECKED_PER_SPLIT) {
        const again = corpusLine(record, split, whole);
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
await tokenizer.dispose();
console.log(`corpus: ${Object.entries(summary).map(([split, s]) => `${split} ${s.episodes} episodes, ${s.tokens} tokens (${s.loss_tokens} trained)`).join('; ')}`);
