// A task's record is drawn among those its change would still change: the
// parameter's `where` gains the negation of one change the predicates ask for,
// so on a seed where the first record already holds the goal (an issue already
// closed, a label already there) another is drawn and doing nothing fails.
// The narrowed parameters are evaluated by the real instantiation code.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ParamSpec, Predicate, Task } from '../../src/lanes/lane.js';
import { bindParams } from '../../src/lanes/task-instance.js';
import { substream } from '../../src/core/random.js';
import { narrowToUnmetGoal } from '../../src/synthesis/unmet-goal.js';

const state = {
  issues: {
    '1': { number: 1, state: 'closed', labels: ['bug'] },
    '2': { number: 2, state: 'open', labels: ['bug'] },
    '3': { number: 3, state: 'open', labels: [] },
  },
};

describe('narrowToUnmetGoal', () => {
  it('negates a literal field change, so only records not yet in that state are drawn', () => {
    const params: Record<string, ParamSpec> = { target: { from: '/issues' } };
    const changes: Predicate[] = [{ count: { path: '/issues', where: { number: '{{target.number}}', state: 'closed' } }, equals: 1 }];
    const narrowed = narrowToUnmetGoal(params, changes);
    assert.deepEqual(narrowed.target, { from: '/issues', where: { state: { not: 'closed' } } });
    assert.deepEqual(params.target, { from: '/issues' }, 'the input is left as it was');
    for (let seed = 0; seed < 20; seed++) {
      const task = { id: 'close', params: narrowed } as unknown as Task;
      const drawn = bindParams(task, state, substream(seed, 'params')) as { target: { state: string } };
      assert.equal(drawn.target.state, 'open', `seed ${seed} draws an issue still open`);
    }
  });

  it('turns includes into excludes and the reverse, and keeps a kind the sampler already chose', () => {
    const added = narrowToUnmetGoal({ target: { from: '/issues', where: { state: 'open' } } }, [
      { count: { path: '/issues', where: { number: '{{target.number}}', state: 'open' } }, equals: 1 },
      { count: { path: '/issues', where: { number: '{{target.number}}', labels: { includes: 'bug' } } }, equals: 1 },
    ]);
    assert.deepEqual(added.target, { from: '/issues', where: { state: 'open', labels: { excludes: 'bug' } } });
    const closing = narrowToUnmetGoal({ target: { from: '/issues', where: { state: 'open' } } }, [
      { count: { path: '/issues', where: { number: '{{target.number}}', state: 'closed', closed_reason: 'completed' } }, equals: 1 },
    ]);
    // The first change on a field the kind does not already fix is negated: redundant here, and harmless.
    assert.deepEqual(closing.target, { from: '/issues', where: { state: 'open', closed_reason: { not: 'completed' } } });
    const removed = narrowToUnmetGoal({ target: { from: '/issues' } }, [{ count: { path: '/issues', where: { number: '{{target.number}}', labels: { excludes: 'bug' } } }, equals: 1 }]);
    assert.deepEqual(removed.target, { from: '/issues', where: { labels: { includes: 'bug' } } });
  });

  it('leaves alone what it cannot negate on the record alone: templates, removals, records no parameter draws', () => {
    const params: Record<string, ParamSpec> = { target: { from: '/issues' }, title: { choice: ['a', 'b'] } };
    const unchanged = narrowToUnmetGoal(params, [
      { count: { path: '/issues', where: { number: '{{target.number}}', title: '{{title}}' } }, equals: 1 },
      { count: { path: '/issues', where: { number: '{{target.number}}' } }, equals: 0 },
      { count: { path: '/issues', where: { title: '{{title}}', state: 'open' } }, equals: 1 },
      { count: { path: '/issues', where: { number: '{{target.number}}', body: { contains: 'x' } } }, equals: 1 },
    ]);
    assert.deepEqual(unchanged, params);
  });
});
