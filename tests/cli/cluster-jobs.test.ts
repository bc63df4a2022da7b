// The cluster job files in deploy/ are run here as the cluster would run
// them: the Slurm array script once per SLURM_ARRAY_TASK_ID, the Kubernetes
// Indexed Job's command once per JOB_COMPLETION_INDEX, then their merge steps.
// Only the seed range and the shared directory are made small and local. The
// merged dataset must be byte for byte a single run.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

const DATA_FILES = ['episodes.jsonl', 'rejected.jsonl', 'episodes.arrow', 'episodes.parquet'];
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const SHARDS = 8;

function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.SOURCE_DATE_EPOCH;
  return env;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): void {
  const result = spawnSync(command, args, { cwd: REPO_ROOT, env, encoding: 'utf8' });
  assert.equal(result.status, 0, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
}

function singleRun(lane: string, seeds: string): string {
  const out = temporaryDirectory();
  const result = runCli(REPO_ROOT, 'generate', lane, '--seeds', seeds, '--out', out, '--quiet');
  assert.equal(result.status, 0, result.stderr);
  return out;
}

/** The folded `args: - >-` block of a container in a Job manifest, as the shell will see it. */
function containerCommand(manifest: string): string {
  const match = /args:\n\s+- >-\n((?:\s{14,}.*\n)+)/.exec(manifest);
  assert.ok(match, 'the manifest has a folded args block');
  return match[1]!.split('\n').map((line) => line.trim()).filter(Boolean).join(' ');
}

describe('cluster job files', () => {
  it('Slurm: the array script per task, then the merge script, equal a single run', () => {
    const shared = temporaryDirectory();
    for (let task = 0; task < SHARDS; task++) {
      run('bash', ['deploy/slurm/generate-shards.sbatch'], environment({ LANE: 'tool-world-v1', SEEDS: '0..1', EPISODE_DATA: shared, SLURM_ARRAY_TASK_ID: String(task), SLURM_CPUS_PER_TASK: '1' }));
    }
    run('bash', ['deploy/slurm/merge-shards.sbatch'], environment({ LANE: 'tool-world-v1', EPISODE_DATA: shared }));
    const single = singleRun('tool-world-v1', '0..1');
    for (const file of DATA_FILES) assert.equal(sha256(join(shared, 'tool-world-v1', 'merged', file)), sha256(join(single, file)), file);
  });

  it('Kubernetes: the Indexed Job command per completion index, then the merge Job, equal a single run', () => {
    const shared = temporaryDirectory();
    const small = (command: string) => command.replaceAll('/data/', `${shared}/`).replace('--seeds 0..99999', '--seeds 0..1');
    const generate = small(containerCommand(readFileSync(join(REPO_ROOT, 'deploy/kubernetes/generate-shards.yaml'), 'utf8')));
    assert.match(generate, /--shard auto\/8/);
    for (let index = 0; index < SHARDS; index++) run('/bin/sh', ['-c', generate], environment({ JOB_COMPLETION_INDEX: String(index) }));
    run('/bin/sh', ['-c', small(containerCommand(readFileSync(join(REPO_ROOT, 'deploy/kubernetes/merge-shards.yaml'), 'utf8')))], environment({}));
    const single = singleRun('tool-world-faults-v1', '0..1');
    for (const file of DATA_FILES) assert.equal(sha256(join(shared, 'tool-world-faults-v1', 'merged', file)), sha256(join(single, file)), file);
  });
});
