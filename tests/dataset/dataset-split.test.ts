import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sha256Hex } from '../../src/core/hashing.js';
import { splitDataset, testTasks } from '../../src/dataset/dataset-split.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const copySample = () => {
  const dir = temporaryDirectory();
  cpSync(join(REPO_ROOT, 'datasets', 'tool-world-faults-v1', 'episodes.jsonl'), join(dir, 'episodes.jsonl'));
  return dir;
};
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('split by task', () => {
  it('puts every record of a task on one side, copying lines byte for byte', async () => {
    const dir = copySample();
    const summary = await splitDataset(dir, 0.2);
    const train = lines(join(dir, 'train.jsonl'));
    const test = lines(join(dir, 'test.jsonl'));
    const source = lines(join(dir, 'episodes.jsonl'));
    assert.equal(train.length + test.length, source.length);
    assert.deepEqual([...train, ...test].sort(), [...source].sort(), 'the same lines, unchanged');
    const taskOf = (line: string) => {
      const record = JSON.parse(line) as EpisodeRecord;
      return `${record.provenance.lineage.lane}/${record.provenance.lineage.task}`;
    };
    const trainTasks = new Set(train.map(taskOf));
    const testTasksSeen = new Set(test.map(taskOf));
    assert.deepEqual([...trainTasks].filter((task) => testTasksSeen.has(task)), [], 'no task on both sides');
    assert.equal(testTasksSeen.size, 1, '0.2 of 5 tasks is one task');
    assert.deepEqual(summary.splits.test.tasks, [...testTasksSeen]);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'split.json'), 'utf8')), summary);
  });

  it('chooses test tasks by their names alone, so more seeds never move a task', () => {
    const tasks = ['lane/a', 'lane/b', 'lane/c', 'lane/d', 'lane/e', 'lane/f', 'lane/g', 'lane/h', 'lane/i', 'lane/j'];
    const chosen = testTasks(tasks, 0.3);
    assert.equal(chosen.size, 3);
    assert.deepEqual(testTasks([...tasks].reverse(), 0.3), chosen, 'order of appearance does not matter');
    const expected = [...tasks].sort((left, right) => (sha256Hex(`split\u0000${left}`) < sha256Hex(`split\u0000${right}`) ? -1 : 1)).slice(0, 3);
    assert.deepEqual([...chosen].sort(), expected.sort());
    assert.equal(testTasks(['lane/only'], 0.5).size, 0, 'one task stays in train');
    assert.equal(testTasks(tasks, 0).size, 0);
    assert.equal(testTasks(tasks, 0.01).size, 1, 'any test share above 0 holds out at least one task');
    assert.throws(() => testTasks(tasks, 1), /not a fraction/);
  });
});
