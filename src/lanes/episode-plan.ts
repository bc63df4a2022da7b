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
}

export function recordId(lane: string, task: string, seed: number): string {
  return `${lane}.${task}.s${seed}`;
}

export function planEpisodes(lane: Lane, seeds: SeedRange = lane.seeds, taskIds?: readonly string[]): EpisodeSpec[] {
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
  const episodes = (seeds.to - seeds.from + 1) * tasks.length;
  if (episodes > MAX_PLANNED_EPISODES) {
    throw new FactoryError('usage', `${seeds.from}..${seeds.to} × ${tasks.length} tasks is ${episodes} episodes, more than one run plans (${MAX_PLANNED_EPISODES})`, {
      fix: 'split the seed range across several runs',
    });
  }
  return tasks.flatMap((task) => seedsOf(seeds).map((seed) => ({ lane, task, seed })));
}

const MAX_PLANNED_EPISODES = 10_000_000;

/** The policy variant of one episode, drawn from its own substream of the seed. */
export function chooseVariant(lane: Lane, taskId: string, seed: number): string {
  return substream(seed, `variant:${taskId}`).weighted(lane.variants);
}
