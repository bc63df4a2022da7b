// Owns which codec serves which model: every codec by name, and the choice of
// codec from the family Ollama reports for a model (`details.family`), which
// names an architecture variant such as "qwen2moe" as often as a family.

import { hermesCodec } from './hermes-codec.js';
import { llama3Codec } from './llama3-codec.js';
import { mistralCodec } from './mistral-codec.js';
import type { CodecName, ModelCodec } from './model-codec.js';

export const CODECS: readonly ModelCodec[] = [hermesCodec, llama3Codec, mistralCodec];

export const CODEC_NAMES: readonly CodecName[] = CODECS.map((codec) => codec.name);

/** A known name always has its codec; any other text (a flag, a lane field) may not. */
export function codecByName(name: CodecName): ModelCodec;
export function codecByName(name: string): ModelCodec | undefined;
export function codecByName(name: string): ModelCodec | undefined {
  return CODECS.find((codec) => codec.name === name);
}

/**
 * The codec whose families include this one, ignoring case; failing that, the
 * codec with the longest family that starts it ("qwen2moe" → qwen2 → hermes).
 */
export function codecForFamily(family: string | null | undefined): ModelCodec | undefined {
  const wanted = family?.trim().toLowerCase();
  if (!wanted) return undefined;
  const exact = CODECS.find((codec) => codec.families.some((candidate) => candidate.toLowerCase() === wanted));
  if (exact) return exact;
  let best: { codec: ModelCodec; length: number } | undefined;
  for (const codec of CODECS) {
    for (const candidate of codec.families) {
      if (wanted.startsWith(candidate.toLowerCase()) && candidate.length > (best?.length ?? 0)) best = { codec, length: candidate.length };
    }
  }
  return best?.codec;
}
