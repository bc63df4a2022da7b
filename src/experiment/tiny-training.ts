// Owns training a tiny qwen2 model through the project's Python environment:
// the vocab and chat template (Qwen2's, unpacked from the llama.cpp source
// node-llama-cpp ships, shared with scripts/tiny-model.sh), the recipe written
// as the trainer's config, and scripts/tiny-model/train.py run as a child
// (CPU torch, seeded, deterministic) that writes a GGUF llama.cpp serves, its
// stats, its learning curve and, for training on top of it, its state.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnvironment } from '../core/child-environment.js';
import { FactoryError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../core/package-paths.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import { hashFile } from '../records/manifest.js';
import { runPythonJob } from './python-job.js';
import { readTrainingRun, type TrainingRun } from './training-run.js';

export interface TinyVocab {
  vocab: string;
  template: string;
}

export const TINY_TRAINER = join(PACKAGE_ROOT, 'scripts', 'tiny-model', 'train.py');

const fileSha256 = async (path: string) => (await hashFile(path)).sha256;

/** Qwen2's vocab file and the Qwen2.5 chat template, unpacked once into .cache/tiny-model/vocab/<bundle sha256>/ (where scripts/tiny-model.sh puts them). */
export async function tinyVocab(): Promise<TinyVocab> {
  const bundle = join(PACKAGE_ROOT, 'node_modules', 'node-llama-cpp', 'llama', 'gitRelease.bundle');
  if (!existsSync(bundle)) throw new FactoryError('model_unavailable', `no llama.cpp source bundle at ${bundle}`, { fix: 'run npm ci (node-llama-cpp ships it)' });
  const dir = join(PACKAGE_ROOT, '.cache', 'tiny-model', 'vocab', await fileSha256(bundle));
  const found = { vocab: join(dir, 'ggml-vocab-qwen2.gguf'), template: join(dir, 'Qwen-Qwen2.5-7B-Instruct.jinja') };
  if (existsSync(found.template)) return found;
  mkdirSync(join(PACKAGE_ROOT, '.cache', 'tiny-model'), { recursive: true });
  const checkout = mkdtempSync(join(PACKAGE_ROOT, '.cache', 'tiny-model', 'llama.cpp.'));
  try {
    // The trainer and git get the environment without its secrets, like every child the factory starts.
    const env = childEnvironment(process.env).env;
    const clone = spawnSync('git', ['clone', '--quiet', '--no-checkout', bundle, checkout], { encoding: 'utf8', env });
    if (clone.status !== 0) throw new FactoryError('model_unavailable', `git could not unpack ${bundle}: ${clone.error?.message ?? clone.stderr.trim()}`, { fix: 'install git, or run npm ci to restore node-llama-cpp' });
    mkdirSync(dir, { recursive: true });
    for (const [inside, out] of [['models/ggml-vocab-qwen2.gguf', found.vocab], ['models/templates/Qwen-Qwen2.5-7B-Instruct.jinja', found.template]] as const) {
      const shown = spawnSync('git', ['-C', checkout, 'show', `HEAD:${inside}`], { maxBuffer: 1 << 30, env });
      if (shown.status !== 0) throw new FactoryError('model_unavailable', `${bundle} has no ${inside}`, { fix: 'run npm ci to restore node-llama-cpp' });
      writeFileAtomically(out, [shown.stdout]);
    }
  } finally {
    rmSync(checkout, { recursive: true, force: true });
  }
  return found;
}

/** The trainer's config: the model's shape and how it is trained (scripts/tiny-model/README.md explains each phase). */
export interface TinyRecipe {
  model: { layers: number; hidden: number; heads: number; kv_heads: number; ffn: number; rope_base: number; rms_eps: number; context_length: number };
  train: {
    seed: number;
    threads: number;
    /** Steps over whole episode tails; the last `steps - steps_without_prefix` of them attend to the shared system turn. */
    steps: number;
    steps_without_prefix: number;
    batch_episodes: number;
    lr: number;
    warmup_steps: number;
    weight_decay: number;
    /**
     * First, copying on random tokens (a span, filler, the span again; the lookup a call needs to copy a value), `batch`
     * sequences of up to `length` at rate `lr` (default the recipe's); `keep` more of them ride along with every windows step.
     */
    recall?: { steps: number; batch: number; length: number; lr?: number; keep?: number };
    /** Then short samples: the request and one trained turn with the `width` tokens before it; the last `prefix_steps` attend to the system turn. */
    windows?: { steps: number; batch: number; width: number; prefix_steps?: number };
    /** The held-out loss every this many steps (0: only at the end). */
    heldout_every?: number;
    dpo?: { steps: number; beta: number; batch: number; lr: number };
  };
}

export interface TrainingJob {
  recipe: TinyRecipe;
  corpus: string;
  dir: string;
  /** Train on top of this state (DPO after SFT). */
  stateIn?: string;
  preferences?: string;
  python?: string;
  onProgress?: (line: string) => void;
}

/** Runs the trainer into `dir` (written whole or not at all: a partial run leaves only `dir.partial`). */
export async function trainTinyModel(job: TrainingJob): Promise<TrainingRun> {
  const { vocab, template } = await tinyVocab();
  const partial = `${job.dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const config = join(partial, 'recipe.json');
  writeFileSync(config, JSON.stringify(job.recipe, null, 2) + '\n');
  const args = [TINY_TRAINER, config, job.corpus, vocab, template, join(partial, 'model.gguf'), join(partial, 'train.json'), `state-out=${join(partial, 'state.pt')}`, `curve=${join(partial, 'curve.jsonl')}`];
  if (job.stateIn) args.push(`state-in=${job.stateIn}`);
  if (job.preferences) args.push(`preferences=${job.preferences}`);
  await runPythonJob({ args, python: job.python, logDir: partial, what: 'the trainer', progressPrefix: 'tiny-model:', onProgress: job.onProgress });
  rmSync(job.dir, { recursive: true, force: true });
  renameSync(partial, job.dir);
  return readTrainingRun(job.dir);
}
