// GRPO groups as data: K rollouts of one task and seed by one agent, each
// numbered in /reset, are kept by `env serve` as K records (deterministic ids
// with the rollout, a group id and the rollout index in the lineage); replay
// and audit take them like any record; `stats` reports pass^k and pass@k per
// task and the groups whose rollouts all scored the same; `export dpo` pairs a
// passed and a failed rollout of the group. pass^k and pass@k are checked
// against their definitions (τ-bench's) on hand-counted groups.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { datasetStats } from '../../src/dataset/dataset-stats.js';
import { formatStats } from '../../src/dataset/stats-text.js';
import { GroupTally, passAtK, passHatK } from '../../src/dataset/stats-groups.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { validateAgainst } from '../../src/records/schema-registry.js';
import { replayRecord } from '../../src/verify/replay.js';
import { assistantTurns, drive, environmentServers, generatedRecord, post } from '../environment-client.js';
import { REPO_ROOT, runCli, temporaryDirectory, withoutVariable } from '../helpers.js';

withoutVariable('SOURCE_DATE_EPOCH');

const serve = environmentServers();
const toolWorld = loadLane('tool-world-v1', REPO_ROOT);

describe('pass^k and pass@k', () => {
  it('are C(c,k)/C(n,k) and 1 - C(n-c,k)/C(n,k)', () => {
    // 4 rollouts, 2 passed: pass^2 = C(2,2)/C(4,2) = 1/6; pass@2 = 1 - C(2,2)/C(4,2) = 5/6.
    assert.equal(passHatK(4, 2, 1), 0.5);
    assert.equal(passHatK(4, 2, 2), 1 / 6);
    assert.equal(passHatK(4, 2, 3), 0);
    assert.equal(passAtK(4, 2, 2), 5 / 6);
    assert.equal(passAtK(4, 2, 3), 1);
    assert.equal(passHatK(3, 3, 3), 1);
    assert.equal(passAtK(3, 0, 3), 0);
  });

  it('are tallied over 200,000 groups of two (no argument list or copy that grows with the groups)', () => {
    const tally = new GroupTally();
    const record = (group: number, rollout: number, passed: boolean) =>
      ({ task: { id: `t${group % 3}` }, result: { predicates: [{ id: 'p', passed }] }, provenance: { lineage: { group_id: `g${group}`, rollout } } }) as unknown as EpisodeRecord;
    for (let group = 0; group < 200_000; group++) {
      tally.add(record(group, 0, true));
      tally.add(record(group, 1, group % 2 === 0));
    }
    const stats = tally.finish()!;
    assert.deepEqual([stats.groups, stats.rollouts, stats.by_size, stats.zero_variance], [200_000, 400_000, { '2': 200_000 }, 100_000]);
    assert.deepEqual(stats.pass_hat_k, { '1': 0.75, '2': 0.5 });
    assert.deepEqual(Object.keys(stats.by_task), ['t0', 't1', 't2']);
  });
});

describe('env serve: a GRPO group kept as data', () => {
  it('keeps every numbered rollout as its own record, replay and audit take them, stats reads pass^k, and export dpo pairs within the group', async () => {
    const out = join(temporaryDirectory(), 'groups');
    const server = await serve(toolWorld, { outDir: out });
    const solution = assistantTurns(await generatedRecord(toolWorld, 'assignee-email', 2));
    const wrong = [{ role: 'assistant' as const, content: 'No idea.' }];
    // Rollouts 0 and 2 solve the task, 1 and 3 give up; a second task's group all give up (zero variance).
    const plays: [string, number, typeof wrong][] = [
      ['assignee-email', 0, solution],
      ['assignee-email', 1, wrong],
      ['assignee-email', 2, solution],
      ['assignee-email', 3, wrong],
      ['relabel-issue', 0, wrong],
      ['relabel-issue', 1, wrong],
    ];
    const records: EpisodeRecord[] = [];
    for (const [task, rollout, turns] of plays) {
      const { reset } = await drive(server.url, { task, seed: 2, agent: 'grpo', rollout }, turns);
      assert.equal(reset.body.rollout, rollout, 'the reset answers with the rollout it opened');
      const kept = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      records.push(kept.body.record as EpisodeRecord);
    }
    assert.deepEqual(
      records.map((record) => record.record_id),
      plays.map(([task, rollout]) => `tool-world-v1.${task}.s2.remote-grpo.r${rollout}`),
    );
    for (const [index, record] of records.entries()) {
      const [task, rollout] = plays[index]!;
      assert.equal(record.provenance.lineage.group_id, `tool-world-v1.${task}.s2.remote-grpo`);
      assert.equal(record.provenance.lineage.rollout, rollout);
      assert.equal(record.provenance.lineage.seed, 2, 'every rollout plays the same seed');
    }
    assert.deepEqual(
      records.map((record) => record.result.task_completed),
      [true, false, true, false, false, false],
    );
    // The same world and the same request for every rollout of a group: only the rollout names the record.
    assert.equal(records[1]!.result.initial_snapshot_sha256, records[0]!.result.initial_snapshot_sha256);
    assert.deepEqual(records[1]!.messages.slice(0, 2), records[0]!.messages.slice(0, 2));

    // A rollout kept twice is refused, naming the rollout; an unnumbered episode of the same group is a record of its own.
    const again = await drive(server.url, { task: 'assignee-email', seed: 2, agent: 'grpo', rollout: 1 }, wrong);
    const refused = await post(server.url, `/episodes/${again.reset.body.episode_id}/record`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'duplicate_record');
    assert.match(refused.body.error.fix, /rollout/);
    const bad = await post(server.url, '/reset', { task: 'assignee-email', seed: 2, rollout: -1 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.field, 'rollout');
    assert.match(bad.body.error.message, /from 0 to 9999/);
    await server.close();

    const replayed = await replayDataset(out, { workers: 2 });
    assert.deepEqual([replayed.records, replayed.verified, replayed.failed], [6, 6, 0], JSON.stringify(replayed.failures));
    const audited = await auditDataset(out, { full: true });
    assert.deepEqual(audited.findings, []);

    // A record whose rollout was edited no longer replays: the rollout is part of what is verified.
    const edited = structuredClone(records[1]!);
    edited.provenance.lineage.rollout = 7;
    assert.deepEqual(validateAgainst('episode-record.v1', edited), [], 'still a well-formed record');
    const verdict = await replayRecord(edited, toolWorld, { text: JSON.stringify(edited) });
    assert.equal(verdict.ok, false);
    assert.match(verdict.problems.join('\n'), /\/record_id: record has "[^"]*\.r1", replay gives "[^"]*\.r7"/);
    const { group_id: _group, ...ungrouped } = edited.provenance.lineage;
    assert.ok(validateAgainst('episode-record.v1', { ...edited, provenance: { ...edited.provenance, lineage: ungrouped } }).length > 0, 'a rollout without its group is refused by the schema');

    const stats = await datasetStats(out);
    assert.deepEqual(stats.groups, {
      groups: 2,
      rollouts: 6,
      by_size: { '2': 1, '4': 1 },
      zero_variance: 1,
      // (0.25 + 0) / 2
      mean_within_group_variance: 0.125,
      // k up to the smallest group (2): assignee-email 0.5 and 1/6, relabel-issue 0 and 0.
      pass_hat_k: { '1': 0.25, '2': 0.0833 },
      pass_at_k: { '1': 0.25, '2': 0.4167 },
      by_task: {
        'assignee-email': { groups: 1, zero_variance: 0, pass_hat_k: { '1': 0.5, '2': 0.1667, '3': 0, '4': 0 }, pass_at_k: { '1': 0.5, '2': 0.8333, '3': 1, '4': 1 } },
        'relabel-issue': { groups: 1, zero_variance: 1, pass_hat_k: { '1': 0, '2': 0 }, pass_at_k: { '1': 0, '2': 0 } },
      },
    });
    const text = formatStats(stats);
    assert.match(text, /GRPO groups: 2 groups of 6 rollouts \(1 of 2, 1 of 4\); 1 with zero reward variance/);
    assert.match(text, /assignee-email\s+1\s+0\s+0\.500\s+0\.500\s+0\.167\s+0\.833/);
    const cli = runCli(REPO_ROOT, 'stats', out, '--json');
    assert.equal(cli.status, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout).groups, stats.groups);

    // Two solved and two failed rollouts of one group: export dpo pairs them, the prompt shared up to the first differing turn.
    const dpo = join(out, '..', 'dpo.jsonl');
    const exported = runCli(REPO_ROOT, 'export', 'dpo', out, '--out', dpo, '--json');
    assert.equal(exported.status, 0, exported.stderr);
    const rows = readFileSync(dpo, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.ok(rows.length >= 1, 'at least one pair from the group');
    for (const row of rows) {
      assert.equal(row.task, 'assignee-email');
      assert.match(row.chosen_record_id, /\.r[02]$/);
      assert.match(row.rejected_record_id, /\.r[13]$/);
      assert.deepEqual(row.prompt.slice(0, 2).map((message: any) => message.role), ['system', 'user']);
    }
    // A group of only failures makes no pair.
    assert.ok(rows.every((row) => !row.chosen_record_id.includes('relabel-issue')));
  });
});
