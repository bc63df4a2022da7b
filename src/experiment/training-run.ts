// Owns what a finished arm's training directory holds, read back: the GGUF
// the engine serves and its digest (each evaluation record pins it), the
// trainer's stats and learning curve, and the state a later arm trains on
// (the tiny trainer's state.pt, or the checkpoint trainer's hf/ directory).

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashFile } from '../records/manifest.js';

export interface TrainingRun {
  gguf: string;
  /** sha256 of the GGUF: the digest the engine reports and each evaluation record pins. */
  digest: string;
  stats: Record<string, unknown>;
  curve: { step: number; phase: string; loss: number; heldout_loss?: number }[];
  state: string;
}

export async function readTrainingRun(dir: string): Promise<TrainingRun> {
  const gguf = join(dir, 'model.gguf');
  const curveText = readFileSync(join(dir, 'curve.jsonl'), 'utf8');
  return {
    gguf,
    digest: (await hashFile(gguf)).sha256,
    stats: JSON.parse(readFileSync(join(dir, 'train.json'), 'utf8')) as Record<string, unknown>,
    curve: curveText.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as TrainingRun['curve'][number]),
    state: existsSync(join(dir, 'hf')) ? join(dir, 'hf') : join(dir, 'state.pt'),
  };
}
