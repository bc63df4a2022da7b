// Owns the named training recipes of `experiment train-eval --recipe`: the
// tiny model's shape and schedule. `standard` is the one the README's
// figures come from, chosen to train in at most 20 minutes on two CPU cores
// (docs/experiment.md says why this shape); `toy` proves the loop end to end
// in seconds and learns next to nothing.

import type { CheckpointRecipe } from './checkpoint-training.js';
import type { TinyRecipe } from './tiny-training.js';

export const RECIPE_NAMES = ['standard', 'toy'] as const;
export type RecipeName = (typeof RECIPE_NAMES)[number];

const QWEN2_SHAPE = { rope_base: 10000.0, rms_eps: 1e-6, context_length: 4096 };

export const TRAINING_RECIPES: Record<RecipeName, TinyRecipe> = {
  standard: {
    model: { layers: 4, hidden: 128, heads: 4, kv_heads: 4, ffn: 384, ...QWEN2_SHAPE },
    train: {
      seed: 36,
      threads: 2,
      steps: 0,
      steps_without_prefix: 0,
      batch_episodes: 8,
      lr: 0.01,
      warmup_steps: 10,
      weight_decay: 0.01,
      windows: { steps: 1100, batch: 16, width: 256, prefix_steps: 200 },
      heldout_every: 100,
      dpo: { steps: 60, beta: 0.1, batch: 4, lr: 0.0005 },
    },
  },
  toy: {
    model: { layers: 1, hidden: 32, heads: 2, kv_heads: 2, ffn: 64, ...QWEN2_SHAPE },
    train: {
      seed: 36,
      threads: 1,
      steps: 4,
      steps_without_prefix: 2,
      batch_episodes: 2,
      lr: 0.01,
      warmup_steps: 1,
      weight_decay: 0.01,
      recall: { steps: 2, batch: 2, length: 32, keep: 1 },
      windows: { steps: 2, batch: 2, width: 64, prefix_steps: 1 },
      heldout_every: 3,
      dpo: { steps: 2, beta: 0.1, batch: 2, lr: 0.001 },
    },
  },
};

/**
 * The same names for a real checkpoint (`--base <hf-dir>`), trained with TRL.
 * `standard` is sized for a GPU and a 0.5B–7B Qwen2.5 checkpoint: one pass
 * over about 1,300 completed episodes at 8 per step, the learning rate full
 * fine-tuning of such a model usually takes; `toy` proves the path on CPU
 * with a tiny checkpoint in seconds.
 */
export const CHECKPOINT_RECIPES: Record<RecipeName, CheckpointRecipe> = {
  standard: {
    seed: 36,
    threads: 2,
    max_length: 4096,
    sft: { steps: 160, lr: 1e-5, batch: 1, accumulation: 8 },
    dpo: { steps: 40, beta: 0.1, lr: 5e-7, batch: 1, accumulation: 8 },
  },
  toy: {
    seed: 36,
    threads: 1,
    max_length: 4096,
    sft: { steps: 2, lr: 1e-3, batch: 1 },
    // Short pairs: two logits tensors of 151,936 per token for each side make long DPO steps slow on CPU.
    dpo: { steps: 2, beta: 0.1, lr: 1e-4, batch: 1, max_length: 384 },
  },
};
