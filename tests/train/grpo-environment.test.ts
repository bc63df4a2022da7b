// A real GRPOTrainer run against `env serve` (examples/train/grpo_environment.py):
// TRL 1.13's GRPOTrainer with environment_factory, the tiny Qwen2 model
// scripts/tiny-model.sh trains (loaded into transformers), two steps on CPU
// with groups of two rollouts. Its rollouts call the world's tools, its rewards
// are the episodes' hidden checks, and the episodes it kept are records that
// replay and audit.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tinyModelPath } from '../../src/cli/engine-command.js';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { datasetStats } from '../../src/dataset/dataset-stats.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { environmentServers } from '../environment-client.js';
import { pythonEnvironment, REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

withoutVariable('SOURCE_DATE_EPOCH');

const serve = environmentServers();

describe('GRPO with TRL against env serve', () => {
  it('trains two GRPO steps of the tiny model whose rollouts call the world\'s tools, scored by the hidden checks; the kept episodes replay and audit', async () => {
    const out = join(temporaryDirectory(), 'grpo');
    const server = await serve(loadLane('tool-world-v1', REPO_ROOT), { outDir: out });
    const run = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        pythonEnvironment(),
        [join(REPO_ROOT, 'examples/train/grpo_environment.py'), '--url', server.url, '--model', tinyModelPath(), '--steps', '2', '--generations', '2', '--tasks', 'assignee-email', '--keep-records'],
        { timeout: 15 * 60_000, maxBuffer: 64 << 20 },
        (error, stdout, stderr) => resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    assert.equal(run.status, 0, run.stderr.slice(-3000));
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.steps, 2);
    assert.ok(summary.losses.every((loss: number) => Number.isFinite(loss)));
    assert.ok(summary.tool_call_frequency.some((frequency: number) => frequency > 0), `the rollouts called tools: ${JSON.stringify(summary.tool_call_frequency)}`);
    assert.ok(summary.rewards.every((reward: number) => reward >= 0 && reward <= 1));

    // Every scored episode was kept, each rollout of a group as its own record.
    const lines = readFileSync(join(out, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.ok(lines.length >= 4, `two steps of groups of two: ${lines.length} records`);
    const groups = new Map<string, number[]>();
    for (const record of lines) {
      assert.equal(record.task.id, 'assignee-email');
      assert.match(record.record_id, /\.remote-grpo-tiny\.r\d+$/);
      assert.ok(record.result.predicates.length > 0, 'judged by the hidden checks');
      groups.set(record.provenance.lineage.group_id, [...(groups.get(record.provenance.lineage.group_id) ?? []), record.provenance.lineage.rollout]);
    }
    for (const [group, rollouts] of groups) {
      assert.deepEqual([...rollouts].sort((left, right) => left - right), rollouts.map((_, index) => index), `${group}: rollouts 0..K-1`);
      assert.ok(rollouts.length >= 2, `${group}: a group of at least two`);
    }
    const stats = await datasetStats(out);
    assert.equal(stats.groups?.rollouts, lines.length);
    assert.equal(stats.groups?.groups, groups.size);
    assert.ok(stats.groups!.pass_hat_k['2']! <= stats.groups!.pass_hat_k['1']!, 'pass^2 is at most pass^1');
    assert.ok(lines.some((record) => record.result.tool_calls > 0), 'a kept rollout called the world\'s tools');
    const replayed = await replayDataset(out);
    assert.deepEqual([replayed.verified, replayed.failed], [lines.length, 0], JSON.stringify(replayed.failures));
    assert.deepEqual((await auditDataset(out, { full: true })).findings, []);
  });
});
