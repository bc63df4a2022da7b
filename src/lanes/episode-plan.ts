// Owns the plan of a run: which (task, seed) episodes exist, in which order,
// what each record is called, and which policy variant each seed draws. The
// order is fixed (task by task, seeds ascending) so any split of the plan can
// be merged back into the same file.

import { FactoryError } from '../core/errors.js';
import { substream } from '../core/random.js';
import type { Lane, SeedRange, Task } from './lane.js';

export interface EpisodeSpec {
  lane: Lane;
  task: Task;
  seed: number;
  /** Set when the lane runs every variant (policy.draw "each"); otherwise drawn from the seed. */
  variant?: string;
  /** A model playing instead of the scripted policy, as `ollama:<model>`; it is then the episode's variant. */
  policy?: string;
  /**
   * One rollout of a GRPO group (0, 1, ...): the same task, seed and agent played again, kept as a record of its own.
   * It names the record only: the world, the faults and the task are the seed's, whatever the rollout.
   */
  rollout?: number;
}

/** A model policy names itself with a colon (`ollama:qwen2.5:1.5b`); scripted variants never do. */
export function isModelVariant(variant: string): boolean {
  return variant.includes(':');
}

/** Record ids end with the variant when it is not drawn from the seed; only characters safe in file names. */
export function recordId(lane: string, task: string, seed: number, variant?: string): string {
  return variant === undefined ? `${lane}.${task}.s${seed}` : `${lane}.${task}.s${seed}.${variant.replace(/[^A-Za-z0-9._-]/g, '-')}`;
}

/** A rollout's record id: its group's (every rollout's shared id) with `.r<rollout>`. */
export function rolloutRecordId(groupId: string, rollout: number): string {
  return `${groupId}.r${rollout}`;
}

export function specRecordId(spec: EpisodeSpec): string {
  const id = recordId(spec.lane.name, spec.task.id, spec.seed, spec.policy ?? spec.variant);
  return spec.rollout === undefined ? id : rolloutRecordId(id, spec.rollout);
}

/** The variants every (task, seed) runs, when the lane runs them all; in a fixed order. */
export function everyVariant(lane: Lane): string[] | undefined {
  if (lane.document.policy.draw !== 'each') return undefined;
  return Object.keys(lane.variants)
    .filter((variant) => lane.variants[variant]! > 0)
    .sort();
}

/**
 * A run's episodes in plan order, each made when asked for: a run of millions
 * of episodes holds its tasks, seed range and variants, not a spec per
 * episode (which cost about a hundred bytes each, on every thread that plans).
 */
export class EpisodePlan {
  readonly length: number;
  private readonly seedCount: number;

  constructor(
    readonly lane: Lane,
    readonly tasks: readonly Task[],
    private readonly seeds: SeedRange,
    private readonly variants: readonly (string | undefined)[],
    private readonly policy: string | undefined,
  ) {
    this.seedCount = seeds.to - seeds.from + 1;
    this.length = this.seedCount * tasks.length * variants.length;
  }

  /** The episode at `index`: task by task, seeds ascending, each seed's variants in order. */
  at(index: number): EpisodeSpec {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) throw new RangeError(`plan index ${index} is outside 0..${this.length - 1}`);
    const perTask = this.seedCount * this.variants.length;
    const task = this.tasks[Math.floor(index / perTask)]!;
    const within = index % perTask;
    const seed = this.seeds.from + Math.floor(within / this.variants.length);
    const variant = this.variants[within % this.variants.length];
    return { lane: this.lane, task, seed, ...(variant === undefined ? {} : { variant }), ...(this.policy === undefined ? {} : { policy: this.policy }) };
  }

  /** Every episode, as a list (for plans small enough to hold). */
  all(): EpisodeSpec[] {
    return Array.from({ length: this.length }, (_, index) => this.at(index));
  }
}

/** The episodes of a run as a list; `episodePlan` gives the same plan without holding it. */
export function planEpisodes(lane: Lane, seeds: SeedRange = lane.seeds, taskIds?: readonly string[], variantNames?: readonly string[], policy?: string): EpisodeSpec[] {
  return episodePlan(lane, seeds, taskIds, variantNames, policy).all();
}

export function episodePlan(lane: Lane, seeds: SeedRange = lane.seeds, taskIds?: readonly string[], variantNames?: readonly string[], policy?: string): EpisodePlan {
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
  return new EpisodePlan(lane, tasks, seeds, variants, policy);
}

const MAX_PLANNED_EPISODES = 10_000_000;

/** The policy variant of one episode: the model, the spec's own, or drawn from its own substream of the seed. */
export function chooseVariant(spec: EpisodeSpec): string {
  return spec.policy ?? spec.variant ?? substream(spec.seed, `variant:${spec.task.id}`).weighted(spec.lane.variants);
}
