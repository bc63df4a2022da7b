// Owns the experiment's arms when they start from a real Hugging Face
// checkpoint (`--base <hf-dir>`): the checkpoint's digest (every file's
// sha256, so the run pins exactly what it started from), training it with
// TRL through scripts/experiment/train_hf.py (SFT on the corpus's token ids,
// or DPO on top of a trained arm), and converting each arm to a GGUF with
// llama.cpp's own converter (scripts/experiment/convert_to_gguf.py, from the
// llama.cpp source node-llama-cpp ships), so the engine serves it like the
// tiny model. Each arm lands whole in its directory, as the tiny trainer's do.

import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { hashCanonical } from '../core/hashing.js';
import { PACKAGE_ROOT } from '../core/package-paths.js';
import { hashFile } from '../records/manifest.js';
import { runPythonJob } from './python-job.js';
import { readTrainingRun, type TrainingRun } from './training-run.js';

export const CHECKPOINT_TRAINER = join(PACKAGE_ROOT, 'scripts', 'experiment', 'train_hf.py');
export const GGUF_CONVERTER = join(PACKAGE_ROOT, 'scripts', 'experiment', 'convert_to_gguf.py');

/** How a checkpoint is trained: TRL's SFT and DPO settings (scripts/experiment/train_hf.py reads them). */
export interface CheckpointRecipe {
  seed: number;
  /** CPU threads when no GPU is found. */
  threads: number;
  /** Longer lines are cut: an episode of the faults lane is about 2,500 tokens in the Qwen2.5 template. */
  max_length: number;
  sft: { steps: number; lr: number; batch: number; accumulation?: number };
  /** `max_length` here cuts a pair's prompt from its oldest end (default the one above). */
  dpo: { steps: number; beta: number; lr: number; batch: number; accumulation?: number; max_length?: number };
}

export interface Checkpoint {
  dir: string;
  /** sha256 over every file's path and sha256: the checkpoint the run started from. */
  sha256: string;
}

/** Checks `dir` is a checkpoint directory and pins its content. */
export async function readCheckpoint(dir: string): Promise<Checkpoint> {
  const root = resolve(dir);
  if (!existsSync(join(root, 'config.json'))) {
    throw new FactoryError('usage', `--base ${dir}: no config.json there`, { fix: 'pass a Hugging Face checkpoint directory (config.json, *.safetensors, tokenizer files), or --base tiny' });
  }
  const files: { path: string; sha256: string }[] = [];
  const walk = async (at: string) => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) await walk(path);
      else files.push({ path: relative(root, path), sha256: (await hashFile(path)).sha256 });
    }
  };
  await walk(root);
  return { dir: root, sha256: hashCanonical(files) };
}

export interface CheckpointJob {
  recipe: CheckpointRecipe;
  /** The checkpoint to start from: the --base one, or the SFT arm's for DPO. */
  from: string;
  dir: string;
  /** SFT on this corpus (its held-out lines give the held-out loss). */
  corpus: string;
  /** DPO on these pairs instead of SFT. */
  preferences?: string;
  /** Convert `from` as it is: the base arm. */
  untrained?: boolean;
  python?: string;
  onProgress?: (line: string) => void;
}

/** Trains (or, for the base, only converts) into `dir`: model.gguf, hf/, train.json and curve.jsonl, or nothing. */
export async function trainCheckpoint(job: CheckpointJob): Promise<TrainingRun> {
  const partial = `${job.dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  let trained = job.from;
  if (job.untrained) {
    writeFileSync(join(partial, 'train.json'), JSON.stringify({ base: job.from, steps: 0 }, null, 2) + '\n');
    writeFileSync(join(partial, 'curve.jsonl'), '');
  } else {
    const config = join(partial, 'recipe.json');
    writeFileSync(config, JSON.stringify(job.recipe, null, 2) + '\n');
    const args = [CHECKPOINT_TRAINER, job.from, config, job.corpus, partial];
    if (job.preferences) args.push(`preferences=${job.preferences}`);
    await runPythonJob({ args, python: job.python, logDir: partial, what: 'the checkpoint trainer (TRL)', progressPrefix: 'train-hf:', onProgress: job.onProgress });
    trained = join(partial, 'hf');
  }
  await runPythonJob({ args: [GGUF_CONVERTER, trained, join(partial, 'model.gguf')], python: job.python, logDir: partial, what: "llama.cpp's GGUF converter", progressPrefix: 'convert:', onProgress: job.onProgress });
  rmSync(join(partial, 'trainer'), { recursive: true, force: true });
  rmSync(job.dir, { recursive: true, force: true });
  renameSync(partial, job.dir);
  return readTrainingRun(job.dir);
}
