import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { substream } from '../../src/core/random.js';
import type { Task } from '../../src/lanes/lane.js';
import { instantiateTask, TaskBindingError } from '../../src/lanes/task-instance.js';

const snapshot = {
  topics: ['login', 'export'],
  issues: {
    '1423': { number: 1423, state: 'open', labels: ['bug'], assignee: 'ines.okafor27' },
    '2077': { number: 2077, state: 'closed', labels: ['bug'], assignee: null },
    '3310': { number: 3310, state: 'open', labels: ['enhancement'], assignee: null },
  },
};

const task: Task = {
  id: 'close',
  title: 'close one',
  params: {
    target: { from: '/issues', where: { state: 'open', assignee: { exists: true } } },
    build: { token: { length: 6, prefix: 'rc-' } },
    mood: { choice: ['terse', 'chatty'] },
  },
  user: 'Close #{{target.number}} (build {{build}}).',
  solution: [
    { call: 'close_issue', arguments: { number: '{{target.number}}', note: 'on {{build}}' }, as: 'closed' },
    { answer: 'Closed #{{closed.issue.number}} for {{target.assignee}}.' },
  ],
  predicates: [{ id: 'closed', path: '/issues/{{target.number}}/state', equals: 'closed' }],
};

describe('task instances', () => {
  it('draw parameters from the snapshot with the where clause, deterministically', () => {
    const one = instantiateTask(task, snapshot, substream(1, 'task:close'));
    const again = instantiateTask(task, snapshot, substream(1, 'task:close'));
    assert.deepEqual(one, again);
    assert.equal((one.params.target as any).number, 1423, 'only one issue is open with an assignee');
    assert.match(one.params.build as string, /^rc-[0-9a-f]{6}$/);
    assert.ok(['terse', 'chatty'].includes(one.params.mood as string));
    assert.equal(one.userMessage, `Close #1423 (build ${one.params.build}).`);
  });

  it('render the solution with parameters and leave result references for the episode', () => {
    const instance = instantiateTask(task, snapshot, substream(2, 'task:close'));
    assert.deepEqual(instance.script, [
      { call: 'close_issue', arguments: { number: 1423, note: `on ${instance.params.build}` }, as: 'closed' },
      { answer: 'Closed #{{closed.issue.number}} for ines.okafor27.' },
    ]);
  });

  it('fail with the parameter and the filter when nothing matches', () => {
    const impossible: Task = { ...task, params: { target: { from: '/issues', where: { state: 'merged' } } } };
    assert.throws(
      () => instantiateTask(impossible, snapshot, substream(1, 't')),
      (error: unknown) => error instanceof TaskBindingError && error.message === 'task close: parameter "target": no item of /issues matches {"state":"merged"}',
    );
    const missing: Task = { ...task, params: { target: { from: '/milestones' } } };
    assert.throws(() => instantiateTask(missing, snapshot, substream(1, 't')), /\/milestones is not a list or map/);
  });
});
