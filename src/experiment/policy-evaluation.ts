// Owns playing an experiment's held-out episodes: a GGUF served by the
// project's own engine (llama.cpp behind Ollama's API, on a free loopback
// port, for the length of the evaluation) plays them as the policy through the
// ordinary `generate` path, so every episode is replayed and judged by the
// hidden predicates and written as a verified record that pins the model's
// digest; or a policy served elsewhere plays them (a model trained outside
// the experiment); or the scripted solution plays them, as the reference.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { startEngine } from '../engine/engine-server.js';
import { generateDataset, type EpisodeProgress, type GenerateSummary } from '../generation/generate-dataset.js';
import type { Lane, SeedRange } from '../lanes/lane.js';
import { preparePolicy, type PreparedPolicy } from '../selection/policy-selection.js';
import { EPISODES_FILE } from '../dataset/dataset-reader.js';

export interface Evaluation {
  dir: string;
  records: string;
  summary: GenerateSummary;
}

export interface EvaluationJob {
  lane: Lane;
  seeds: SeedRange;
  /** Only these tasks of the lane (default: all). */
  tasks?: string[];
  dir: string;
  /** The model to serve; none: the lane's scripted policy plays. */
  gguf?: string;
  /** The name the engine serves it as (the records' policy is `ollama:<name>`). */
  name?: string;
  /** A policy served elsewhere, already checked (a model trained outside the experiment): plays instead of the scripted one. */
  policy?: PreparedPolicy;
  onEpisode?: (progress: EpisodeProgress) => void;
}

/** Plays the episodes into `dir`; an interrupted evaluation resumes from its sealed parts. */
export async function evaluatePolicy(job: EvaluationJob): Promise<Evaluation> {
  const play = async (policy: PreparedPolicy | undefined, server: string): Promise<Evaluation> => {
    const summary = await generateDataset({ lane: job.lane, outDir: job.dir, seeds: job.seeds, tasks: job.tasks, formats: ['jsonl'], ...(policy ? { policy } : {}), resume: true, onEpisode: job.onEpisode });
    if (policy && summary.infra_errors > 0) {
      throw new FactoryError('model_unavailable', `${summary.infra_errors} evaluation episodes of ${policy.policy} were cut short by ${server}`, { fix: `read ${join(job.dir, 'rejected.jsonl')}, then rerun the experiment with the same --out: it resumes` });
    }
    return { dir: job.dir, records: join(job.dir, EPISODES_FILE), summary };
  };
  if (!job.gguf) return play(job.policy, 'its server');
  if (!existsSync(job.gguf)) throw new FactoryError('model_unavailable', `no model file at ${job.gguf}`, { fix: 'train it again: rerun the experiment with the same --out' });
  const engine = await startEngine({ modelPath: job.gguf, ...(job.name ? { name: job.name } : {}), host: '127.0.0.1', port: 0, version: `episode-factory-engine ${FACTORY_VERSION}` });
  try {
    const policy = await preparePolicy(job.lane, { kind: 'model', model: { provider: 'ollama', model: engine.served.name } }, { host: engine.url, mode: 'native' });
    return await play(policy, `the engine serving ${job.gguf}`);
  } finally {
    await engine.close();
  }
}
