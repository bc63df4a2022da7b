// Owns tokenizing text exactly as llama.cpp will at inference, from a
// vocab-only GGUF (the Qwen2 vocab node-llama-cpp's llama.cpp source ships),
// special tokens (<|im_start|>, <|im_end|>) parsed as specials.
// llama.cpp cuts text at special tokens first and runs BPE on each piece
// alone, so pieces between specials are tokenized once and remembered: every
// episode repeats the same ~1,800-token system turn. `whole` is llama.cpp's
// own whole-text tokenize, against which the shortcut is checked.

import type { Tokenize } from './training-corpus.js';

export interface VocabTokenizer {
  tokenize: Tokenize;
  whole: Tokenize;
  dispose(): Promise<void>;
}

// A vocab-only file has no tensors, so node-llama-cpp's memory estimate fails
// to load it and says so before falling back; those lines are expected.
const EXPECTED = /missing tensor 'token_embd\.weight'|failed to load model|Failed simulating model resource usage/;

export async function openVocabTokenizer(vocabPath: string): Promise<VocabTokenizer> {
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  const llama = await getLlama({
    gpu: false,
    build: 'never',
    logLevel: LlamaLogLevel.error,
    logger: (_level, message) => {
      if (!EXPECTED.test(message)) process.stderr.write(`llama.cpp: ${message.trimEnd()}\n`);
    },
  });
  const model = await llama.loadModel({ modelPath: vocabPath, vocabOnly: true });
  const whole: Tokenize = (text) => Array.from(model.tokenize(text, true), Number);
  const specials = new Map(
    ['<|im_start|>', '<|im_end|>'].map((text) => {
      const ids = whole(text);
      if (ids.length !== 1) throw new Error(`${text} is not one special token in ${vocabPath}`);
      return [text, ids[0]!] as const;
    }),
  );
  const pieces = new Map<string, number[]>();
  const tokenize: Tokenize = (text) =>
    text.split(/(<\|im_start\|>|<\|im_end\|>)/).flatMap((piece) => {
      if (piece === '') return [];
      const special = specials.get(piece);
      if (special !== undefined) return [special];
      let ids = pieces.get(piece);
      if (!ids) pieces.set(piece, (ids = Array.from(model.tokenize(piece, false), Number)));
      return ids;
    });
  return {
    tokenize,
    whole,
    async dispose() {
      await model.dispose();
      await llama.dispose();
    },
  };
}
