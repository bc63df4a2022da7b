// Owns running `lanes check` on worker threads: the lanes' selected tasks
// become one queue of jobs (one task's whole proof each), handed out in lane
// order to as many threads as asked for, and the results put back into lane
// order, so the verdicts and the printed bytes are the same whatever the number
// of threads. A task that throws stops the handing out; once the tasks in
// flight end, the error of the first failed task in lane order is thrown, as
// one thread would have thrown it. With one worker no thread starts.

import type { Lane, SeedRange } from '../lanes/lane.js';
import { checkLaneSoundness, defaultCheckSeeds, tasksToCheck, type TaskSoundness } from '../verify/lane-soundness.js';
import { isBuiltInWorld } from '../world/world-registry.js';
import { rethrown, SOUNDNESS_WORKER_DATA, type FromSoundnessWorker, type SoundnessJob, type ToSoundnessWorker } from './soundness-worker.js';
import { closeThread, startThread } from './worker-thread.js';

const SOUNDNESS_ENTRY = 'generation/soundness-worker';

export interface LanesSoundnessOptions {
  /** Threads to prove tasks on; 1 proves them on this thread. At most one per task starts. */
  workers: number;
  seeds?: SeedRange;
  taskIds?: readonly string[];
  /** Only this many of each lane's tasks, evenly spaced. */
  sample?: number;
  /** Called when a lane's first task starts. */
  onLane?: (lane: Lane) => void;
  /** Called after each task, for progress: in lane order on one thread, as they finish on several. */
  onTask?: (result: TaskSoundness) => void;
}

interface SoundnessWorker {
  check(job: SoundnessJob): Promise<TaskSoundness>;
  close(): Promise<void>;
}

/** Every selected task of every lane proven, in lane order then task order. */
export async function checkLanesSoundness(lanes: readonly Lane[], options: LanesSoundnessOptions): Promise<TaskSoundness[]> {
  const jobs: (SoundnessJob & { lane: Lane })[] = [];
  for (const lane of lanes) {
    const seeds = options.seeds ?? defaultCheckSeeds(lane);
    for (const task of tasksToCheck(lane, options.taskIds, options.sample)) {
      jobs.push({ index: jobs.length, lane, lanePath: lane.path, laneSha256: lane.sha256, task: lane.document.tasks.indexOf(task), seeds });
    }
  }
  // A world registered at run time (a library user's own) exists only on this thread.
  const threads = lanes.every((lane) => isBuiltInWorld(lane.document.world.name)) ? Math.min(options.workers, jobs.length) : 1;
  if (threads <= 1) {
    const results: TaskSoundness[] = [];
    for (const lane of lanes) {
      options.onLane?.(lane);
      results.push(...(await checkLaneSoundness(lane, { ...(options.seeds ? { seeds: options.seeds } : {}), ...(options.taskIds ? { taskIds: options.taskIds } : {}), ...(options.sample !== undefined ? { sample: options.sample } : {}), ...(options.onTask ? { onTask: options.onTask } : {}) })));
    }
    return results;
  }

  const results: TaskSoundness[] = new Array(jobs.length);
  const failures = new Map<number, unknown>();
  const started = new Set<Lane>();
  let next = 0;
  const workers = Array.from({ length: threads }, startSoundnessWorker);
  try {
    await Promise.all(
      workers.map(async (worker) => {
        while (failures.size === 0 && next < jobs.length) {
          const { lane, ...job } = jobs[next++]!;
          if (!started.has(lane)) {
            started.add(lane);
            options.onLane?.(lane);
          }
          try {
            const result = await worker.check(job);
            results[job.index] = result;
            options.onTask?.(result);
          } catch (error) {
            failures.set(job.index, error);
          }
        }
      }),
    );
  } finally {
    await Promise.all(workers.map((worker) => worker.close()));
  }
  if (failures.size > 0) throw failures.get(Math.min(...failures.keys()));
  return results;
}

function startSoundnessWorker(): SoundnessWorker {
  const worker = startThread(SOUNDNESS_ENTRY, SOUNDNESS_WORKER_DATA);
  let current: { resolve: (result: TaskSoundness) => void; reject: (error: unknown) => void } | undefined;
  let crashed: Error | undefined;
  const settle = () => {
    const settling = current;
    current = undefined;
    return settling;
  };
  const crash = (error: Error) => {
    crashed ??= error;
    settle()?.reject(error);
  };
  worker.on('message', (message: FromSoundnessWorker) => {
    if (message.type === 'task') settle()?.resolve(message.result);
    else if (message.type === 'failed') settle()?.reject(rethrown(message.error));
  });
  worker.on('error', (error) => crash(new Error(`a lanes check worker crashed: ${error.message}`)));
  worker.on('exit', (code) => crash(new Error(`a lanes check worker exited (code ${code}) in the middle of a task`)));
  return {
    check(job) {
      if (crashed) return Promise.reject(crashed);
      return new Promise((resolve, reject) => {
        current = { resolve, reject };
        worker.postMessage({ type: 'check', job } satisfies ToSoundnessWorker);
      });
    },
    close() {
      return closeThread(worker, !crashed);
    },
  };
}
