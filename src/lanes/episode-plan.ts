// Owns the plan of a run: which (task, seed) episodes exist, in which order,
// what each record is called, and which policy variant each seed draws. The
// order is fixed (task by task, seeds ascending) so any split of the plan can
// be merged back into the same file.

import { FactoryError } from '../core/errors.js';
import { substream } from '../core/random.js';
import type { Lane, SeedRange, Task } from './lane.js';
import { seedsOf } from './seed-range.js';

export interface EpisodeSpec {
  lane: Lane;
  task: Task;
  seed: number;
  /** Set when the lane runs every variant (policy.draw "each"); otherwise drawn from the seed. */
  variant?: string;
  /** A model playing instead of the scripted policy, as `ollama:<model>`; it is then the episode's variant. */
  policy?: string;
}

/** A model policy names itself with a colon (`ollama:qwen2.5:1.5b`); scripted variants never do. */
export function isModelVariant(variant: string): boolean {
  return variant.includes(':');
}

/** Record ids end with the variant when it is not drawn from the seed; only characters safe in file names. */
export function recordId(lane: string, task: string, seed: number, variant?: string): string {
  return variant === undefined ? `${lane}.${task}.s${seed}` : `${lane}.${task}.s${seed}.${variant.replace(/[^A-Za-z0-9._-]/g, '-')}`;
}

export function specRecordId(spec: EpisodeSpec): string {
  return recordId(spec.lane.name, spec.task.id, spec.seed, spec.policy ?? spec.variant);
}

/** The variants every (task, seed) runs, when the lane runs them all; in a fixed order. */
export function everyVariant(lane: Lane): string[] | undefined {
  if (lane.document.policy.draw !== 'each') return undefined;
  return Object.keys(lane.variants)
    .filter((variant) => lane.variants[variant]! > 0)
    .sort();
}

export function planEpisodes(
  lane: Lane,
  seeds: SeedRange = lane.seeds,
  taskIds?: readonly string[],
  variantNames?: readonly string[],
  policy?: string,
): EpisodeSpec[] {
  let tasks = lane.document.tasks;
  if (taskIds && taskIds.length > 0) {
    const unknown = taskIds.filter((id) => !tasks.some((task) => task.id === id));
    if (unknown.length > 0) {
      throw new FactoryError('usage', `lane ${lane.name} has no task ${unknown.map((id) => `"${id}"`).join(', ')}`, {
        fix: `tasks are: ${tasks.map((task) => task.id).join(', ')}`,
      });
    }
    tasks = tasks.filter((task) => taskIds.includes(task.id));
  }
  const chosen = variantNames !== undefined && variantNames.length > 0;
  if (policy !== undefined && chosen) throw new FactoryError('usage', '--variant picks scripted variants; a model plays instead of them', { fix: 'drop --variant, or drop --policy' });
  // A model plays every episode itself; otherwise a lane may run every scripted variant.
  const all = policy === undefined ? everyVariant(lane) : undefined;
  if (chosen) {
    if (!all) throw new FactoryError('usage', `lane ${lane.name} draws one variant per seed; --variant only applies to lanes whose policy.draw is "each"`, { fix: 'drop --variant' });
    const unknown = variantNames.filter((name) => !all.includes(name));
    if (unknown.length > 0) throw new FactoryError('usage', `lane ${lane.name} has no variant ${unknown.map((name) => `"${name}"`).join(', ')}`, { fix: `variants are: ${all.join(', ')}` });
  }
  const variants: (string | undefined)[] = all ? all.filter((name) => !chosen || variantNames.includes(name)) : [undefined];
  const episodes = (seeds.to - seeds.from + 1) * tasks.length * variants.length;
  if (episodes > MAX_PLANNED_EPISODES) {
    throw new FactoryError('usage', `${seeds.from}..${seeds.to} × ${tasks.length} tasks is ${episodes} episodes, more than one run plans (${MAX_PLANNED_EPISODES})`, {
      fix: 'split the seed range across several runs',
    });
  }
  return tasks.flatMap((task) =>
    seedsOf(seeds).flatMap((seed) =>
      variants.map((variant): EpisodeSpec => ({ lane, task, seed, ...(variant === undefined ? {} : { variant }), ...(policy === undefined ? {} : { policy }) })),
    ),
  );
}

const MAX_PLANNED_EPISODES = 10_000_000;

/** The policy variant of one episode: the model, the spec's own, or drawn from its own substream of the seed. */
export function chooseVariant(spec: EpisodeSpec): string {
  return spec.policy ?? spec.variant ?? substream(spec.seed, `variant:${spec.task.id}`).weighted(spec.lane.variants);
}
