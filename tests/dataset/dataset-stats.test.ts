// Tests dataset statistics on the committed samples, with every expectation
// derived here from the raw JSONL, plus duplicates, problems and the length
// distribution on constructed data.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readDataset } from '../../src/dataset/dataset-reader.js';
import { computeStats } from '../../src/dataset/dataset-stats.js';
import { distribution } from '../../src/dataset/stats-distribution.js';
import { formatStats } from '../../src/dataset/stats-text.js';
import { wilsonInterval } from '../../src/statistics/wilson-interval.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';
import { conversationDataset, DIALOGUE_LANE, PARALLEL_LANE } from '../conversation-lanes.js';

interface RawRecord {
  record_id: string;
  world: { name: string; version: string };
  task: { id: string };
  messages: { role: string; content: string; tool_calls?: unknown[] }[];
  recovery: { error_turns: number; recovered: boolean; faults_fired: { kind: string }[] };
  result: { task_completed: boolean; outcome: string };
  provenance: { actors: { role: string; kind: string; name: string; version: string }[]; lineage: { lane: string; variant: string; seed: number; phrasing?: string } };
}

const SAMPLES = ['tool-world-v1', 'tool-world-faults-v1'].map((name) => join(REPO_ROOT, 'datasets', name));

function rawLines(dir: string): string[] {
  return readFileSync(join(dir, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
}

function rawRecords(dir: string): RawRecord[] {
  return rawLines(dir).map((line) => JSON.parse(line) as RawRecord);
}

function tally(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

function asSortedObject(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...counts.entries()].sort(([left], [right]) => (left < right ? -1 : 1)));
}

const nearestRank = (sorted: number[], q: number) => sorted[Math.ceil(q * sorted.length) - 1];

for (const dir of SAMPLES) {
  describe(`computeStats on ${dir.split('/').pop()}`, () => {
    const raw = rawRecords(dir);

    it('counts records by world, task, variant, policy and outcome', async () => {
      const stats = computeStats(await readDataset(dir));
      assert.equal(stats.format, 'episode-factory.stats.v1');
      assert.equal(stats.records, raw.length);
      assert.deepEqual(stats.problems, []);
      assert.deepEqual(stats.counts.by_world, asSortedObject(tally(raw.map((record) => `${record.world.name}@${record.world.version}`))));
      assert.deepEqual(stats.counts.by_task, asSortedObject(tally(raw.map((record) => record.task.id))));
      assert.deepEqual(stats.counts.by_variant, asSortedObject(tally(raw.map((record) => record.provenance.lineage.variant))));
      assert.deepEqual(stats.counts.by_outcome, asSortedObject(tally(raw.map((record) => record.result.outcome))));
      const policies = raw.flatMap((record) =>
        record.provenance.actors.filter((actor) => actor.role === 'policy').map((actor) => `${actor.kind}:${actor.name}@${actor.version}`),
      );
      assert.deepEqual(stats.counts.by_policy, asSortedObject(tally(policies)));
      for (const counts of Object.values(stats.counts)) {
        const keys = Object.keys(counts);
        assert.deepEqual(keys, [...keys].sort(), 'keys are sorted');
      }
    });

    it('gives completion overall, per task and per variant with Wilson intervals', async () => {
      const stats = computeStats(await readDataset(dir));
      const completed = raw.filter((record) => record.result.task_completed).length;
      assert.deepEqual(stats.completion.overall, wilsonInterval(completed, raw.length));
      for (const [key, of] of [
        ['by_task', (record: RawRecord) => record.task.id],
        ['by_variant', (record: RawRecord) => record.provenance.lineage.variant],
      ] as const) {
        const groups = new Set(raw.map(of));
        assert.deepEqual(Object.keys(stats.completion[key]), [...groups].sort());
        for (const group of groups) {
          const members = raw.filter((record) => of(record) === group);
          const successes = members.filter((record) => record.result.task_completed).length;
          assert.deepEqual(stats.completion[key][group], wilsonInterval(successes, members.length), `${key} ${group}`);
        }
      }
    });

    it('gives recovery among episodes with an error turn or a fired fault', async () => {
      const stats = computeStats(await readDataset(dir));
      const troubled = raw.filter((record) => record.recovery.error_turns > 0 || record.recovery.faults_fired.length > 0);
      assert.deepEqual(stats.recovery, wilsonInterval(troubled.filter((record) => record.recovery.recovered).length, troubled.length));
    });

    it('counts fault kinds by firings and by episodes, with completion per kind', async () => {
      const stats = computeStats(await readDataset(dir));
      const fired = raw.flatMap((record) => record.recovery.faults_fired.map((fault) => fault.kind));
      assert.equal(stats.faults.fired, fired.length);
      assert.equal(stats.faults.episodes_with_fault, raw.filter((record) => record.recovery.faults_fired.length > 0).length);
      const kinds = [...new Set(fired)].sort();
      assert.deepEqual(Object.keys(stats.faults.by_kind), kinds);
      for (const kind of kinds) {
        const episodes = raw.filter((record) => record.recovery.faults_fired.some((fault) => fault.kind === kind));
        const entry = stats.faults.by_kind[kind]!;
        assert.equal(entry.fired, fired.filter((candidate) => candidate === kind).length, kind);
        assert.equal(entry.episodes, episodes.length, kind);
        assert.deepEqual(entry.completed, wilsonInterval(episodes.filter((record) => record.result.task_completed).length, episodes.length), kind);
      }
    });

    it('describes messages and tool calls per episode', async () => {
      const stats = computeStats(await readDataset(dir));
      const series = {
        messages: raw.map((record) => record.messages.length),
        tool_calls: raw.map((record) =>
          record.messages.reduce((sum, message) => sum + (message.role === 'assistant' ? (message.tool_calls?.length ?? 0) : 0), 0),
        ),
      };
      for (const key of ['messages', 'tool_calls'] as const) {
        const sorted = [...series[key]].sort((left, right) => left - right);
        const summary = stats.lengths[key];
        assert.equal(summary.count, sorted.length);
        assert.equal(summary.min, sorted[0]);
        assert.equal(summary.max, sorted[sorted.length - 1]);
        assert.equal(summary.p50, nearestRank(sorted, 0.5));
        assert.equal(summary.p90, nearestRank(sorted, 0.9));
        assert.ok(Math.abs(summary.mean! - sorted.reduce((sum, value) => sum + value, 0) / sorted.length) < 1e-12);
        assert.equal(summary.histogram.reduce((sum, bin) => sum + bin.count, 0), sorted.length);
        for (const bin of summary.histogram) {
          assert.equal(bin.count, sorted.filter((value) => value >= bin.from && value <= bin.to).length, `${key} ${bin.from}-${bin.to}`);
        }
      }
    });

    it('finds no duplicates among distinct seeds', async () => {
      const stats = computeStats(await readDataset(dir));
      assert.equal(stats.duplicates.duplicates, 0);
      assert.equal(stats.duplicates.distinct_trajectories, raw.length);
      assert.deepEqual(stats.duplicates.examples, []);
    });

    it('gives wording diversity per task: distinct first user messages, phrasings and trajectories', async () => {
      const stats = computeStats(await readDataset(dir));
      const tasks = [...new Set(raw.map((record) => record.task.id))].sort();
      assert.deepEqual(Object.keys(stats.wording.by_task), tasks);
      for (const task of tasks) {
        const members = raw.filter((record) => record.task.id === task);
        const distinct = (of: (record: RawRecord) => string) => new Set(members.map(of)).size;
        assert.deepEqual(stats.wording.by_task[task], {
          records: members.length,
          user_messages: distinct((record) => record.messages.find((message) => message.role === 'user')!.content),
          phrasings: distinct((record) => `${record.provenance.lineage.lane} ${record.provenance.lineage.phrasing ?? ''}`),
          // No two records of the sample are the same episode.
          trajectories: members.length,
        }, task);
      }
      const text = formatStats(stats);
      const [first] = tasks;
      const row = stats.wording.by_task[first!]!;
      assert.match(text, new RegExp(`\\n  ${first} +${row.records} +${row.user_messages} +${row.phrasings} +${row.trajectories}\\n`));
    });

    it('formats rates as rate [low, high] n=N', async () => {
      const stats = computeStats(await readDataset(dir));
      const text = formatStats(stats);
      const completed = raw.filter((record) => record.result.task_completed).length;
      const expected = `${(completed / raw.length).toFixed(3)} [`;
      assert.match(text, new RegExp(`task completion +${expected.replace(/[.[]/g, '\\$&')}\\d\\.\\d{3}, \\d\\.\\d{3}\\] n=${raw.length}\\n`));
      for (const task of new Set(raw.map((record) => record.task.id))) assert.ok(text.includes(task), task);
      assert.equal(formatStats(stats), text, 'same text for the same stats');
    });
  });
}

describe('turn shapes: several calls in a turn and the user simulator', () => {
  /** The figures counted the obvious way from the raw records. */
  function expectedTurns(raw: RawRecord[]) {
    const perTurn = raw.flatMap((record) => record.messages.filter((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0).map((message) => message.tool_calls!.length));
    const simulated = raw.map((record) => record.messages.filter((message) => message.role === 'user').length - 1);
    const simulators = raw.flatMap((record) => record.provenance.actors.filter((actor) => actor.role === 'user').map((actor) => `${actor.kind}:${actor.name}@${actor.version}`));
    return {
      with_calls: perTurn.length,
      calls_per_turn: Object.fromEntries([...tally(perTurn.map(String))].sort(([left], [right]) => Number(left) - Number(right))),
      with_several_calls: perTurn.filter((calls) => calls > 1).length,
      episodes_with_several_calls: raw.filter((record) => record.messages.some((message) => (message.tool_calls?.length ?? 0) > 1)).length,
      simulated_user: simulated.reduce((sum, count) => sum + count, 0),
      episodes_with_simulated_user: simulated.filter((count) => count > 0).length,
      by_user_simulator: asSortedObject(tally(simulators)),
    };
  }

  it("counts turns by their calls and the simulator's replies, on every lane shape", async () => {
    const dirs = [...SAMPLES, await conversationDataset(PARALLEL_LANE), await conversationDataset(DIALOGUE_LANE)];
    for (const dir of dirs) {
      const raw = rawRecords(dir);
      const stats = computeStats(await readDataset(dir));
      assert.deepEqual(stats.turns, expectedTurns(raw), dir);
    }
    const [tools, , parallel, dialogue] = await Promise.all(dirs.map(async (dir) => computeStats(await readDataset(dir)).turns));
    assert.equal(tools!.with_several_calls, 0);
    assert.equal(tools!.simulated_user, 0);
    assert.ok(parallel!.with_several_calls > 0 && parallel!.episodes_with_several_calls > 0, 'the parallel lane batches reads');
    assert.ok(dialogue!.simulated_user > 0 && dialogue!.by_user_simulator['scripted:scripted-user@1']! > 0, 'the dialogue lane has a scripted user');
  });

  it('states both in the text and in the JSON', async () => {
    const parallel = computeStats(await readDataset(await conversationDataset(PARALLEL_LANE)));
    const turns = parallel.turns;
    const most = Math.max(...Object.keys(turns.calls_per_turn).map(Number));
    const mean = Object.entries(turns.calls_per_turn).reduce((sum, [calls, count]) => sum + Number(calls) * count, 0) / turns.with_calls;
    const text = formatStats(parallel);
    assert.ok(
      text.includes(`calls per turn   ${mean.toFixed(2)} mean over ${turns.with_calls} turns with calls; ${turns.with_several_calls} turns with several (up to ${most}) in ${turns.episodes_with_several_calls} episodes\n`),
      text,
    );
    assert.match(text, /simulated user   none \(no user simulator\)\n/);
    const dialogue = computeStats(await readDataset(await conversationDataset(DIALOGUE_LANE)));
    assert.ok(
      formatStats(dialogue).includes(
        `simulated user   ${dialogue.turns.simulated_user} replies in ${dialogue.turns.episodes_with_simulated_user} episodes (user messages after the first), from scripted:scripted-user@1\n`,
      ),
    );
    assert.match(formatStats(dialogue), /calls per turn +1\.00 mean over \d+ turns with calls; none with several\n/);
    assert.deepEqual(JSON.parse(JSON.stringify(parallel)).turns, turns, 'the JSON keeps the figures, calls_per_turn in numeric order');
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify({ calls: { '10': 1, '2': 1, '1': 1 } })).calls), ['1', '2', '10']);
  });
});

describe('computeStats on the faults sample', () => {
  it('agrees with the summary line docs/faults.md quotes for that lane', async () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'faults.md'), 'utf8');
    const line = /generate tool-world-faults-v1: (\d+) episodes, (\d+) records written, \d+ rejected, tasks completed (\d+)\/(\d+) .*faults fired (\d+) \((\d+) kinds\)/.exec(page);
    assert.ok(line, 'docs/faults.md quotes a generate line for tool-world-faults-v1');
    const [, , written, completed, of, fired, kinds] = line.map(Number);
    const stats = computeStats(await readDataset(SAMPLES[1]!));
    assert.equal(stats.records, written);
    assert.equal(stats.completion.overall.successes, completed);
    assert.equal(stats.completion.overall.n, of);
    assert.equal(stats.faults.fired, fired);
    assert.equal(Object.keys(stats.faults.by_kind).length, kinds);
  });
});

describe('computeStats on constructed data', () => {
  const dir = temporaryDirectory();
  const lines = rawLines(SAMPLES[0]!);

  it('counts records whose trajectory equals an earlier one as duplicates, whatever their ids and seeds', async () => {
    const first = JSON.parse(lines[0]!) as RawRecord;
    const second = JSON.parse(lines[1]!) as RawRecord;
    const copyOfFirst = { ...first, record_id: 'copy.of.first', provenance: { ...first.provenance, lineage: { ...first.provenance.lineage, seed: 99 } } };
    const otherCopy = { ...first, record_id: 'another.copy' };
    const changed = { ...first, record_id: 'changed.user', messages: first.messages.map((message) => (message.role === 'user' ? { ...message, content: message.content + ' Please.' } : message)) };
    const rows = [first, second, copyOfFirst, changed, otherCopy, second].map((record) => JSON.stringify(record));
    writeFileSync(join(dir, 'episodes.jsonl'), rows.join('\n') + '\n');
    const stats = computeStats(await readDataset(dir));
    assert.equal(stats.records, 6);
    assert.equal(stats.duplicates.duplicates, 3);
    assert.equal(stats.duplicates.distinct_trajectories, 3);
    assert.deepEqual(stats.duplicates.examples, [
      { record_id: 'copy.of.first', duplicate_of: first.record_id },
      { record_id: 'another.copy', duplicate_of: first.record_id },
      { record_id: second.record_id, duplicate_of: second.record_id },
    ]);
    assert.match(formatStats(stats), /3 duplicate records, 3 distinct trajectories/);
  });

  it('counts a reworded message as a new message and phrasing but the same values said again as neither', async () => {
    const wordingDir = temporaryDirectory();
    const first = JSON.parse(lines[0]!) as RawRecord;
    const withPhrasing = (record: RawRecord, id: string, phrasing: string, say: (text: string) => string): RawRecord => ({
      ...record,
      record_id: id,
      messages: record.messages.map((message) => (message.role === 'user' ? { ...message, content: say(message.content) } : message)),
      provenance: { ...record.provenance, lineage: { ...record.provenance.lineage, phrasing } },
    });
    const rows = [
      withPhrasing(first, 'a', 'say=0 greet=-', (text) => text),
      withPhrasing(first, 'b', 'say=0 greet=0', (text) => `Hi! ${text}`),
      withPhrasing(first, 'c', 'say=0 greet=0', (text) => `Hi! ${text}`),
      // The same path in another lane is another grammar's phrasing.
      { ...withPhrasing(first, 'd', 'say=0 greet=-', (text) => text), provenance: { ...first.provenance, lineage: { ...first.provenance.lineage, lane: 'other-lane', phrasing: 'say=0 greet=-' } } },
    ];
    writeFileSync(join(wordingDir, 'episodes.jsonl'), rows.map((record) => JSON.stringify(record)).join('\n') + '\n');
    const stats = computeStats(await readDataset(wordingDir));
    assert.deepEqual(stats.wording.by_task[first.task.id], { records: 4, user_messages: 2, phrasings: 3, trajectories: 2 });
  });

  it('reports torn and corrupt lines as problems and leaves them out of every count', async () => {
    const problemsDir = temporaryDirectory();
    const text = [lines[0], '{"not": "a record"}', lines[1], '{broken', lines[2]!.slice(0, 100)].join('\n');
    writeFileSync(join(problemsDir, 'episodes.jsonl'), text);
    const stats = computeStats(await readDataset(problemsDir));
    assert.equal(stats.records, 2);
    assert.deepEqual(stats.problems.map((problem) => problem.line), [2, 4, 5]);
    assert.match(stats.problems[2]!.reason, /torn/);
    assert.equal(stats.completion.overall.n, 2);
    assert.match(formatStats(stats), /problems +3 /);
  });

  it('is empty-safe: no records gives n=0 rates and null lengths', () => {
    const stats = computeStats({ dir: '/nowhere', file: 'episodes.jsonl', rows: [], problems: [] });
    assert.equal(stats.records, 0);
    assert.deepEqual(stats.completion.overall, wilsonInterval(0, 0));
    assert.equal(stats.recovery.n, 0);
    assert.equal(stats.lengths.messages.p50, null);
    assert.deepEqual(stats.lengths.messages.histogram, []);
    assert.match(formatStats(stats), /task completion +- \[0\.000, 1\.000\] n=0/);
  });
});

describe('distribution', () => {
  it('uses nearest-rank percentiles, so each is a value that occurs', () => {
    const summary = distribution([10, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(summary.min, 1);
    assert.equal(summary.p50, 5);
    assert.equal(summary.p90, 9);
    assert.equal(summary.max, 10);
    assert.equal(summary.mean, 5.5);
    assert.equal(distribution([4]).p90, 4);
  });

  it('keeps at most ten bins, empty ones included, covering min to max', () => {
    const wide = distribution([0, 1, 2, 50, 99]);
    assert.ok(wide.histogram.length <= 10);
    assert.equal(wide.histogram[0]!.from, 0);
    assert.ok(wide.histogram[wide.histogram.length - 1]!.to >= 99);
    assert.deepEqual(wide.histogram.map((bin) => bin.count), [3, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
    const narrow = distribution([5, 7, 7, 9]);
    assert.deepEqual(narrow.histogram, [
      { from: 5, to: 5, count: 1 },
      { from: 6, to: 6, count: 0 },
      { from: 7, to: 7, count: 2 },
      { from: 8, to: 8, count: 0 },
      { from: 9, to: 9, count: 1 },
    ]);
  });
});
