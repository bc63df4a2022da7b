// Tests what the report shows, gathered from real dataset directories: the
// streamed statistics equal `stats`, the overview counts rejected and dropped
// rows and unreadable lines, model policies keep their digests, the viewer's
// catalogs are shared without losing a tool, and the sample takes turns over
// worlds, tasks, policies, outcomes and fault kinds.

import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readDataset } from '../../src/dataset/dataset-reader.js';
import { computeStats } from '../../src/dataset/dataset-stats.js';
import { distribution } from '../../src/dataset/stats-distribution.js';
import { chooseSample, StrataTree } from '../../src/dataset/report-sample.js';
import { gatherReportData } from '../../src/dataset/report-data.js';
import { policyKey } from '../../src/dataset/report-record-keys.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { conversationDataset, DIALOGUE_LANE, mostCallsInATurn, PARALLEL_LANE, readRecords, simulatedUserTurns } from '../conversation-lanes.js';
import { copySample, REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1');

function sampleRecords(): EpisodeRecord[] {
  return readFileSync(join(SAMPLE, 'episodes.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as EpisodeRecord);
}

function copyOfSample(): string {
  const dir = join(temporaryDirectory('ef-report-data-'), 'dataset');
  copySample('tool-world-faults-v1', dir);
  return dir;
}

describe('gatherReportData on the faults sample', () => {
  it('computes the same statistics as `stats`, streaming', async () => {
    const data = await gatherReportData(SAMPLE);
    assert.deepEqual(data.stats, computeStats(await readDataset(SAMPLE)));
  });

  it('describes the overview from the records and the files beside them', async () => {
    const records = sampleRecords();
    // The committed sample keeps no manifest (it carries run-specific hashes): the overview does without one.
    const bare = copyOfSample();
    rmSync(join(bare, 'manifest.json'), { force: true });
    const { overview } = await gatherReportData(bare);
    assert.equal(overview.dataset, 'dataset');
    assert.equal(overview.records, records.length);
    assert.equal(overview.problems, 0);
    assert.equal(overview.rejected, 0, 'rejected.jsonl is present and empty');
    assert.equal(overview.duplicates_dropped, null, 'never deduplicated');
    assert.deepEqual(overview.lanes, [{ name: 'tool-world-faults-v1', sha256: records[0]!.provenance.lineage.lane_sha256, records: records.length }]);
    assert.deepEqual([overview.operation, overview.seeds], [null, null]);
    writeFileSync(join(bare, 'manifest.json'), JSON.stringify({ operation: 'dedup', seeds: '0..15', counts: { records: records.length, dropped: 4 } }));
    const withManifest = (await gatherReportData(bare)).overview;
    assert.deepEqual([withManifest.operation, withManifest.seeds, withManifest.duplicates_dropped], ['dedup', '0..15', 4]);
    writeFileSync(join(bare, 'manifest.json'), '{ torn');
    assert.equal((await gatherReportData(bare)).overview.operation, null, 'an unreadable manifest only leaves its facts blank');
    assert.deepEqual(overview.worlds, [{ name: 'issues', version: '1.0.0', records: records.length, tools: records[0]!.tools.length }]);
    const perTask = new Map<string, number>();
    for (const record of records) perTask.set(record.task.id, (perTask.get(record.task.id) ?? 0) + 1);
    assert.deepEqual(
      overview.tasks.map((task) => [task.id, task.records]),
      [...perTask].sort(([left], [right]) => (left < right ? -1 : 1)),
    );
    const perVariant = new Map<string, number>();
    for (const record of records) perVariant.set(record.provenance.lineage.variant, (perVariant.get(record.provenance.lineage.variant) ?? 0) + 1);
    assert.deepEqual(new Map(overview.policies.map((policy) => [policy.key, policy.records])), perVariant);
    assert.ok(overview.policies.every((policy) => policy.kind === 'scripted' && policy.digest === null));
  });

  it('gives the plots error turns per episode and completion per policy', async () => {
    const records = sampleRecords();
    const data = await gatherReportData(SAMPLE);
    assert.deepEqual(data.error_turns, distribution(records.map((record) => record.recovery.error_turns)));
    assert.deepEqual(data.completion_by_policy, data.stats.completion.by_variant, 'scripted policies are keyed by variant');
  });

  it('embeds every record when they fit, in file order, with the tool catalogs stored once', async () => {
    const records = sampleRecords();
    const { viewer } = await gatherReportData(SAMPLE);
    assert.equal(viewer.sampled, false);
    assert.equal(viewer.total, records.length);
    assert.deepEqual(viewer.entries.map((entry) => entry.id), records.map((record) => record.record_id));
    assert.ok(viewer.catalogs.length < records.length / 4, `${viewer.catalogs.length} catalogs for ${records.length} records`);
    viewer.episodes.forEach((episode, index) => {
      const { tools, ...rest } = records[index]!;
      assert.deepEqual(viewer.catalogs[episode.catalog], tools);
      assert.deepEqual(episode.record, rest);
      const entry = viewer.entries[index]!;
      assert.equal(viewer.tables.tasks[entry.task], rest.task.id);
      assert.equal(entry.completed, rest.result.task_completed);
      assert.deepEqual(
        entry.faults.map((kind) => viewer.tables.fault_kinds[kind]),
        [...new Set(rest.recovery.faults_fired.map((fault) => fault.kind))].sort(),
      );
    });
  });

  it('samples when the budget is smaller, covering every task first, and embeds nothing at 0', async () => {
    const records = sampleRecords();
    const tasks = new Set(records.map((record) => record.task.id));
    const data = await gatherReportData(SAMPLE, { maxEpisodes: tasks.size });
    assert.equal(data.viewer.sampled, true);
    assert.equal(data.viewer.entries.length, tasks.size);
    assert.deepEqual(new Set(data.viewer.entries.map((entry) => data.viewer.tables.tasks[entry.task])), tasks, 'one episode of each task');
    assert.equal(data.stats.records, records.length, 'the plots still count every record');
    const positions = data.viewer.entries.map((entry) => records.findIndex((record) => record.record_id === entry.id));
    assert.deepEqual(positions, [...positions].sort((left, right) => left - right), 'file order');

    const none = await gatherReportData(SAMPLE, { maxEpisodes: 0 });
    assert.equal(none.viewer.entries.length, 0);
    assert.equal(none.viewer.sampled, true);
    await assert.rejects(gatherReportData(SAMPLE, { maxEpisodes: -1 }), /whole number >= 0/);
  });
});

describe('chooseSample', () => {
  it('lets groups take turns at every level before any group gives a second line', () => {
    const tree = new StrataTree();
    tree.add(['w1', 'a', 'x'], 1);
    tree.add(['w1', 'a', 'x'], 2);
    tree.add(['w1', 'a', 'y'], 3);
    tree.add(['w1', 'b', 'x'], 4);
    tree.add(['w1', 'b', 'x'], 5);
    tree.add(['w2', 'c', 'x'], 6);
    assert.deepEqual(tree.first(100), [1, 6, 4, 3, 5, 2]);
    // Each prefix is the prefix of the whole order: a group gives no more than the limit, and that is enough.
    for (let limit = 0; limit <= 6; limit++) assert.deepEqual(tree.first(limit), [1, 6, 4, 3, 5, 2].slice(0, limit));
    assert.deepEqual([...chooseSample(tree, 2)], [1, 6], 'both worlds first');
    assert.deepEqual([...chooseSample(tree, 3)].sort(), [1, 4, 6], 'then the other task of w1');
    assert.equal(chooseSample(tree, 100).size, 6);
    assert.equal(chooseSample(new StrataTree(), 5).size, 0);
  });
});

describe('gatherReportData on damaged and derived datasets', () => {
  it('counts unreadable lines, names them, and leaves them out', async () => {
    const dir = copyOfSample();
    const records = sampleRecords();
    appendFileSync(join(dir, 'episodes.jsonl'), '{"record_id": "broken"\n{"not":"a record"}\n{"torn":');
    const data = await gatherReportData(dir);
    assert.equal(data.overview.records, records.length);
    assert.equal(data.overview.problems, 3);
    assert.deepEqual(
      data.overview.problem_examples.map((problem) => problem.line),
      [records.length + 1, records.length + 2, records.length + 3],
    );
    assert.match(data.overview.problem_examples[0]!.reason, /not valid JSON/);
    assert.match(data.overview.problem_examples[1]!.reason, /not a valid record/);
    assert.match(data.overview.problem_examples[2]!.reason, /torn last line/);
    assert.equal(data.viewer.entries.length, records.length);
  });

  it('reads rejected rows by stage and the duplicates dedup dropped', async () => {
    const dir = copyOfSample();
    const rejected = [
      { record_id: 'lane.t.s1', lane: 'lane', task: 't', seed: 1, stage: 'replay', reason: 'tool result 2 differs on replay', record: null },
      { record_id: 'lane.t.s2', lane: 'lane', task: 't', seed: 2, stage: 'run', reason: 'server died', record: null },
      { record_id: 'lane.t.s3', lane: 'lane', task: 't', seed: 3, stage: 'replay', reason: 'final snapshot differs', record: null },
    ];
    writeFileSync(join(dir, 'rejected.jsonl'), rejected.map((row) => JSON.stringify(row)).join('\n') + '\n');
    writeFileSync(join(dir, 'dropped.jsonl'), '{"record_id":"a"}\n{"record_id":"b"}\n');
    const { overview } = await gatherReportData(dir);
    assert.equal(overview.rejected, 3);
    assert.deepEqual(overview.rejected_by_stage, { replay: 2, run: 1 });
    assert.deepEqual(overview.rejected_examples.map((row) => [row.record_id, row.stage, row.seed]), [
      ['lane.t.s1', 'replay', 1],
      ['lane.t.s2', 'run', 2],
      ['lane.t.s3', 'replay', 3],
    ]);
    assert.equal(overview.duplicates_dropped, 2);
  });

  it('refuses a file that changed between its two passes', async () => {
    const dir = copyOfSample();
    const path = join(dir, 'episodes.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');
    const reversed = [...lines].reverse().join('\n') + '\n';
    await assert.rejects(
      gatherReportData(dir, {
        // The first pass has read the last line: another writer replaces the file before the second pass.
        onProgress: (pass, line) => {
          if (pass === 1 && line === lines.length) writeFileSync(path, reversed);
        },
      }),
      /changed while the report was reading it \(line 1\)/,
    );
  });

  it('keys model episodes by model and digest and keeps what was pinned', async () => {
    const dir = copyOfSample();
    const records = sampleRecords();
    const digest = `sha256:${'ab12'.repeat(16)}`;
    const modelled = records.slice(0, 10).map((record) => {
      const copy = structuredClone(record);
      copy.provenance.lineage.variant = 'ollama:qwen3:8b';
      copy.provenance.actors = copy.provenance.actors.map((actor) =>
        actor.role === 'policy'
          ? { role: 'policy', kind: 'model', name: 'qwen3:8b', version: digest.slice(7, 19), provider: 'ollama', digest, family: 'qwen3', quantization: 'Q4_K_M' }
          : actor,
      );
      return copy;
    });
    writeFileSync(join(dir, 'episodes.jsonl'), [...modelled, ...records.slice(10)].map((record) => JSON.stringify(record)).join('\n') + '\n');
    const data = await gatherReportData(dir);
    const key = `ollama:qwen3:8b @${digest.slice(7, 19)}`;
    assert.equal(policyKey(modelled[0]!), key);
    const model = data.overview.policies.find((policy) => policy.key === key);
    assert.ok(model, 'the model is a policy of its own');
    assert.equal(model.records, 10);
    assert.equal(model.digest, digest);
    assert.deepEqual(model.details, ['provider ollama', 'family qwen3', 'quantization Q4_K_M']);
    assert.equal(data.completion_by_policy[key]!.n, 10);
  });

  it("lists the user simulators, with a model's digest, and gives each list entry its simulated turns and busiest turn", async () => {
    const dialogue = await conversationDataset(DIALOGUE_LANE);
    const records = readRecords(dialogue);
    const data = await gatherReportData(dialogue);
    assert.deepEqual(data.overview.user_simulators, [{ key: 'scripted:scripted-user@1', kind: 'scripted', name: 'scripted-user', version: '1', digest: null, records: records.length }]);
    assert.deepEqual(
      data.viewer.entries.map((entry) => [entry.id, entry.user_turns, entry.most_calls]),
      records.map((record) => [record.record_id, simulatedUserTurns(record), mostCallsInATurn(record)]),
    );
    const parallel = await gatherReportData(await conversationDataset(PARALLEL_LANE));
    assert.deepEqual(parallel.overview.user_simulators, []);
    assert.ok(parallel.viewer.entries.some((entry) => entry.most_calls > 1));

    const dir = copyOfSample();
    const digest = `sha256:${'cd34'.repeat(16)}`;
    const modelled = records.slice(0, 3).map((record) => {
      const copy = structuredClone(record);
      copy.provenance.actors = copy.provenance.actors.map((actor) => (actor.role === 'user' ? { role: 'user', kind: 'model', name: 'qwen3:0.6b', version: digest.slice(7, 19), digest } : actor));
      return copy;
    });
    writeFileSync(join(dir, 'episodes.jsonl'), [...modelled, ...records.slice(3)].map((record) => JSON.stringify(record)).join('\n') + '\n');
    const mixed = (await gatherReportData(dir)).overview.user_simulators;
    assert.deepEqual(mixed.map((user) => [user.key, user.digest, user.records]), [
      [`model:qwen3:0.6b@${digest.slice(7, 19)}`, digest, 3],
      ['scripted:scripted-user@1', null, records.length - 3],
    ]);
  });
});
