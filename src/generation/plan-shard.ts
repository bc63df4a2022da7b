// Owns splitting a run across machines: `--shard I/N` names the I-th of N
// contiguous slices of the plan (0-based), so concatenating the shards'
// files in index order gives exactly the single run's files. The index may be
// `auto`, read from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or a Slurm
// job array (SLURM_ARRAY_TASK_ID, counted from SLURM_ARRAY_TASK_MIN).

import { FactoryError } from '../core/errors.js';

export interface Shard {
  index: number;
  count: number;
}

export function parseShard(text: string, environment: NodeJS.ProcessEnv = process.env): Shard {
  const match = /^([0-9]{1,6}|auto)\/([0-9]{1,6})$/.exec(text.trim());
  if (!match) throw new FactoryError('usage', `--shard "${text}" is not I/N`, { fix: 'pass e.g. --shard 0/4 (the first of four slices), or --shard auto/4 inside a Kubernetes Indexed Job or a Slurm array' });
  const count = Number(match[2]);
  if (count < 1) throw new FactoryError('usage', `--shard ${text}: N must be at least 1`, { fix: 'pass --shard 0/1 or more slices' });
  const index = match[1] === 'auto' ? indexFromEnvironment(environment) : Number(match[1]);
  if (index >= count) throw new FactoryError('usage', `--shard ${index}/${count}: the index counts from 0, so it must be below ${count}`, { fix: `use 0/${count} .. ${count - 1}/${count}` });
  return { index, count };
}

function indexFromEnvironment(environment: NodeJS.ProcessEnv): number {
  const kubernetes = environment.JOB_COMPLETION_INDEX;
  if (kubernetes !== undefined && kubernetes !== '') return wholeNumber('JOB_COMPLETION_INDEX', kubernetes);
  const slurm = environment.SLURM_ARRAY_TASK_ID;
  if (slurm !== undefined && slurm !== '') {
    const minimum = environment.SLURM_ARRAY_TASK_MIN ? wholeNumber('SLURM_ARRAY_TASK_MIN', environment.SLURM_ARRAY_TASK_MIN) : 0;
    return wholeNumber('SLURM_ARRAY_TASK_ID', slurm) - minimum;
  }
  throw new FactoryError('usage', '--shard auto/N needs JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm array) in the environment', {
    fix: 'pass the index yourself, e.g. --shard 2/8',
  });
}

function wholeNumber(name: string, value: string): number {
  if (!/^[0-9]{1,6}$/.test(value)) throw new FactoryError('usage', `${name}="${value}" is not a shard index`, { fix: `set ${name} to a whole number, or pass --shard I/N` });
  return Number(value);
}

/** The plan indices of a shard, end exclusive: as even as whole episodes allow. */
export function shardSlice(planEpisodes: number, shard: Shard | undefined): { start: number; end: number } {
  if (!shard) return { start: 0, end: planEpisodes };
  return { start: Math.floor((shard.index * planEpisodes) / shard.count), end: Math.floor(((shard.index + 1) * planEpisodes) / shard.count) };
}
