// lanes check's worker threads seen from the library: an error a thread throws
// comes back as the same FactoryError (code, message, fix, problems, exit
// status) or the same plain error, the first failed task in lane order is the
// one reported, and a lane file that changed under the check is refused.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { parseLane } from '../../src/lanes/lane-loader.js';
import { checkLanesSoundness } from '../../src/generation/soundness-pool.js';
import { carryError, rethrown } from '../../src/generation/soundness-worker.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

/** tasks-v1 under another name: a lane's name is its file's. */
const text = (name = 'tasks-v1') => {
  const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tasks-v1.json'), 'utf8'));
  document.name = name;
  return JSON.stringify(document);
};
const seeds = { from: 0, to: 0 };

describe('lanes check on worker threads', () => {
  it('carries a FactoryError across the thread whole, and a plain error as a plain error', () => {
    const original = new FactoryError('lane_invalid', 'lanes/x.json is not a valid lane (1 problem)', { fix: 'fix it', problems: [{ where: 'lanes/x.json#/tasks/0', reason: 'bad' }] });
    const back = rethrown(structuredClone(carryError(original)));
    assert.ok(back instanceof FactoryError);
    assert.equal(back.code, original.code);
    assert.equal(back.message, original.message);
    assert.equal(back.fix, original.fix);
    assert.deepEqual(back.problems, original.problems);
    assert.equal(back.exitStatus, original.exitStatus);
    const plain = rethrown(structuredClone(carryError(new TypeError('x is not a function'))));
    assert.ok(!(plain instanceof FactoryError));
    assert.equal(plain.message, 'x is not a function');
  });

  it('reports the error a thread threw, of the first failed lane in lane order', async () => {
    const directory = temporaryDirectory('ef-pool-');
    // Lanes read from text at paths with no file behind them: the threads, which load each lane from its file, fail on
    // both; one task each, so both are in flight at once.
    const first = parseLane(text('first'), join(directory, 'first.json'));
    const second = parseLane(text('second'), join(directory, 'second.json'));
    await assert.rejects(checkLanesSoundness([first, second], { workers: 2, seeds, taskIds: ['rename-task'] }), (error: unknown) => {
      assert.ok(error instanceof FactoryError, String(error));
      assert.equal(error.code, 'lane_not_found');
      assert.match(error.message, /first\.json does not exist/);
      return true;
    });
  });

  it('refuses a lane whose file changed after it was loaded', async () => {
    const directory = temporaryDirectory('ef-pool-');
    const path = join(directory, 'tasks-v1.json');
    const lane = parseLane(text(), path);
    const document = JSON.parse(text());
    document.description = 'changed under the check';
    writeFileSync(path, JSON.stringify(document));
    await assert.rejects(checkLanesSoundness([lane], { workers: 2, seeds, taskIds: ['rename-task', 'create-task'] }), /tasks-v1\.json changed while lanes check was running/);
  });

  it('proves on one thread, with no worker, what it proves on two', async () => {
    const directory = temporaryDirectory('ef-pool-');
    const path = join(directory, 'tasks-v1.json');
    writeFileSync(path, text());
    const lane = parseLane(text(), path);
    const order: string[] = [];
    const one = await checkLanesSoundness([lane], { workers: 1, seeds, onTask: (result) => order.push(result.task) });
    const two = await checkLanesSoundness([lane], { workers: 2, seeds });
    assert.deepEqual(two, one);
    assert.deepEqual(order, lane.document.tasks.map((task) => task.id));
  });
});
