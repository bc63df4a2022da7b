// The plan of a run, made one episode at a time: the same episodes in the same
// order (task by task, seeds ascending, each seed's variants in order) as
// nested loops over the lane give, for a lane that draws a variant per seed
// and one that runs every variant, with a model policy, and for a slice of
// the tasks; an index outside the plan is refused.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { episodePlan, everyVariant, specRecordId, type EpisodeSpec } from '../../src/lanes/episode-plan.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { Lane } from '../../src/lanes/lane.js';
import { REPO_ROOT } from '../helpers.js';

function nestedLoops(lane: Lane, from: number, to: number, tasks: readonly string[], variants: readonly (string | undefined)[], policy?: string): string[] {
  const ids: string[] = [];
  for (const task of lane.document.tasks.filter((candidate) => tasks.includes(candidate.id))) {
    for (let seed = from; seed <= to; seed++) {
      for (const variant of variants) {
        const spec: EpisodeSpec = { lane, task, seed, ...(variant === undefined ? {} : { variant }), ...(policy === undefined ? {} : { policy }) };
        ids.push(specRecordId(spec));
      }
    }
  }
  return ids;
}

describe('episode plan', () => {
  it('gives, index by index, the episodes of nested loops over tasks, seeds and variants', () => {
    const drawn = loadLane('tool-world-v1', REPO_ROOT);
    const each = loadLane('tool-world-dpo-v1', REPO_ROOT);
    const variants = everyVariant(each)!;
    assert.ok(variants.length > 1);
    const cases: [Lane, ReturnType<typeof episodePlan>, string[]][] = [
      [drawn, episodePlan(drawn, { from: 3, to: 9 }), nestedLoops(drawn, 3, 9, drawn.document.tasks.map((task) => task.id), [undefined])],
      [each, episodePlan(each, { from: 0, to: 4 }), nestedLoops(each, 0, 4, each.document.tasks.map((task) => task.id), variants)],
      [each, episodePlan(each, { from: 2, to: 3 }, undefined, [variants[1]!]), nestedLoops(each, 2, 3, each.document.tasks.map((task) => task.id), [variants[1]!])],
      [drawn, episodePlan(drawn, { from: 0, to: 2 }, undefined, undefined, 'ollama:qwen'), nestedLoops(drawn, 0, 2, drawn.document.tasks.map((task) => task.id), [undefined], 'ollama:qwen')],
      [drawn, episodePlan(drawn, { from: 0, to: 5 }, [drawn.document.tasks[2]!.id]), nestedLoops(drawn, 0, 5, [drawn.document.tasks[2]!.id], [undefined])],
    ];
    for (const [lane, plan, expected] of cases) {
      assert.equal(plan.length, expected.length, lane.name);
      assert.deepEqual(Array.from({ length: plan.length }, (_, index) => specRecordId(plan.at(index))), expected);
      assert.deepEqual(plan.all().map(specRecordId), expected);
    }
  });

  it('refuses an index outside the plan', () => {
    const plan = episodePlan(loadLane('tool-world-v1', REPO_ROOT), { from: 0, to: 1 });
    for (const index of [-1, plan.length, 1.5]) assert.throws(() => plan.at(index), RangeError);
  });
});
