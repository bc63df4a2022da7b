// Owns the named training recipes of `experiment train-eval --recipe`: the
// tiny model's shape and schedule. `standard` is the one the README's
// figures come from, chosen to train in at most 20 minutes on two CPU cores
// (docs/experiment.md says why this shape); `toy` proves the loop end to end
// in seconds and learns next to nothing.

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
      recall: { steps: 2, batch: 2, length: 32, alphabet: 16 },
      windows: { steps: 2, batch: 2, width: 64, prefix_steps: 1 },
      heldout_every: 3,
      dpo: { steps: 2, beta: 0.1, batch: 2, lr: 0.001 },
    },
  },
};
