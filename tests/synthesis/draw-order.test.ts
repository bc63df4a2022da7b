// Candidates tried several at a time must give the lane one thread gives:
// which draws are twins of a kept task, which are kept, and where the run
// stops are decided in draw order, however the trials finish. The trials here
// are scripted (a key and a verdict per draw, finishing after delays drawn from
// a seeded stream) so that late draws often finish before early ones; the real
// threads are exercised by tests/cli/lanes-synthesize.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { substream } from '../../src/core/random.js';
import type { Task } from '../../src/lanes/lane.js';
import type { Attempt, Prepared } from '../../src/synthesis/candidate-trial.js';
import type { CandidateTrials } from '../../src/synthesis/synthesis-pool.js';
import { tryInOrder } from '../../src/synthesis/task-synthesis.js';

/** Per draw: rejected before its proof, or a key (several draws share one) and whether its proof passes. */
type Script = { rejected: true } | { key: string; sound: boolean };

function scriptOf(draws: number, seed: number): Script[] {
  const random = substream(seed, 'draw-order-test');
  return Array.from({ length: draws }, () => (random.next() < 0.25 ? { rejected: true as const } : { key: `k${Math.floor(random.next() * 6)}`, sound: random.next() < 0.5 }));
}

function scriptedTrials(script: Script[], window: number, seed: number, proved: number[]): CandidateTrials {
  const delays = substream(seed, 'draw-order-delays');
  const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), Math.floor(delays.next() * 6)));
  const task = (draw: number): Task => ({ id: `task-${draw}`, user: 'x', solution: [], predicates: [], synthesized: { by: 'sampler', draw, kind: 'write', tools: ['t'] } }) as unknown as Task;
  return {
    window,
    prepare(draw) {
      const entry = script[draw]!;
      const prepared: Prepared = 'rejected' in entry ? { rejected: { draw, kept: false, reason: 'no-effect', detail: 'scripted' } } : { task: task(draw), tools: ['t'], key: entry.key };
      return later(prepared);
    },
    prove(draw, proven) {
      proved.push(draw);
      const entry = script[draw] as { sound: boolean };
      const attempt: Attempt = entry.sound ? { draw, kept: true, task: proven.id, taskDefinition: proven } : { draw, kept: false, reason: 'unsound', detail: 'scripted' };
      return later(attempt);
    },
    close: async () => undefined,
  };
}

describe('tryInOrder', () => {
  it('keeps, rejects as twins and stops at the same draws with 12 in flight as with one', async () => {
    for (let seed = 0; seed < 6; seed++) {
      const script = scriptOf(80, seed);
      for (const count of [3, 6, 200]) {
        const oneProved: number[] = [];
        const one = await tryInOrder(scriptedTrials(script, 1, seed, oneProved), count, 80);
        const manyProved: number[] = [];
        const many = await tryInOrder(scriptedTrials(script, 12, seed, manyProved), count, 80);
        assert.deepEqual(many.events, one.events, `seed ${seed}, count ${count}`);
        assert.deepEqual(many.kept.map((task) => task.id), one.kept.map((task) => task.id));
        if (count === 200) assert.ok(one.events.some((event) => event.reason === 'duplicate'), 'the script has twins');
        // A twin is never proven; beyond one thread's proofs, only draws past the stop (started ahead) are.
        const stop = one.events.length;
        assert.deepEqual(manyProved.filter((draw) => draw < stop).sort((a, b) => a - b), [...oneProved].sort((a, b) => a - b));
      }
    }
  });

  it('a twin names the kept task it repeats, and an unsound draw does not stop a later one with its key from being kept', async () => {
    const script: Script[] = [{ key: 'a', sound: false }, { key: 'a', sound: true }, { key: 'a', sound: true }, { rejected: true }, { key: 'a', sound: true }];
    const result = await tryInOrder(scriptedTrials(script, 5, 1, []), 10, 5);
    assert.deepEqual(result.events.map((event) => (event.kept ? 'kept' : event.reason)), ['unsound', 'kept', 'duplicate', 'no-effect', 'duplicate']);
    assert.equal(result.events[2]!.detail, 'its solution and predicates are those of task-1');
    assert.equal(result.events[4]!.detail, 'its solution and predicates are those of task-1');
  });
});
