// A run killed (SIGKILL: no clean-up) at each step of publishing its dataset
// keeps its sealed parts until the manifest is in place, and `--resume`
// finishes the publication with the bytes of an uninterrupted run. The steps
// are reached exactly through EPISODE_FACTORY_FAILPOINT.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { CLI, REPO_ROOT, temporaryDirectory, traceIndexIds } from '../helpers.js';

const TIMEOUT = 60_000;
const LANE = 'tool-world-v1';
const DATA_FILES = ['episodes.jsonl', 'rejected.jsonl', 'episodes.arrow', 'episodes.parquet'];
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function run(args: string[], failpoint?: string): { status: number | null; signal: string | null; stdout: string; stderr: string } {
  const environment: NodeJS.ProcessEnv = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  delete environment.EPISODE_FACTORY_FAILPOINT;
  if (failpoint) environment.EPISODE_FACTORY_FAILPOINT = failpoint;
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', env: environment, timeout: TIMEOUT, killSignal: 'SIGKILL' });
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

describe('a kill while publishing loses nothing', { timeout: 10 * TIMEOUT }, () => {
  const reference = temporaryDirectory('ef-hostile-reference-');
  before(() => {
    const result = run(['generate', LANE, '--seeds', '0..3', '--out', reference, '--quiet']);
    assert.equal(result.status, 0, result.stderr);
  });

  for (const point of ['publish-planned', 'publish-removed', 'publish-moved', 'publish-sealed']) {
    it(`killed at ${point}, over an earlier dataset: parts kept, --resume publishes the same bytes`, () => {
      const out = temporaryDirectory('ef-hostile-publish-');
      assert.equal(run(['generate', LANE, '--seeds', '0..1', '--out', out, '--quiet']).status, 0, 'an earlier dataset is in place');

      const killed = run(['generate', LANE, '--seeds', '0..3', '--out', out, '--quiet'], point);
      assert.equal(killed.signal, 'SIGKILL', `the run was killed at ${point}: ${killed.stderr}`);
      assert.ok(existsSync(join(out, '.partial', 'parts')), 'the sealed parts are kept until the manifest is in place');
      assert.ok(readdirSync(join(out, '.partial', 'parts')).some((name) => name.endsWith('.done.json')));

      const again = run(['generate', LANE, '--seeds', '0..3', '--out', out]);
      assert.equal(again.status, 2, 'a rerun without --resume does not throw the finished work away');
      assert.match(again.stderr, /holds an interrupted run .* --resume/);

      const resumed = run(['generate', LANE, '--seeds', '0..3', '--out', out, '--resume', '--json']);
      assert.equal(resumed.status, 0, resumed.stderr);
      const summary = JSON.parse(resumed.stdout) as { written: number; rejected: number; resumed: number };
      assert.equal(summary.written + summary.rejected, 20);
      assert.equal(summary.resumed, 20, 'nothing was run again');
      for (const file of DATA_FILES) assert.equal(sha256(join(out, file)), sha256(join(reference, file)), `${file} after --resume`);
      assert.deepEqual(traceIndexIds(out), traceIndexIds(reference), 'the trace index covers every planned episode once, in plan order');
      assert.deepEqual(readdirSync(join(out, 'traces')).sort(), readdirSync(join(reference, 'traces')).sort(), 'the same parts, as nothing ran again');
      assert.equal(existsSync(join(out, '.partial')), false);
      const audit = run(['audit', out]);
      assert.equal(audit.status, 0, audit.stdout + audit.stderr);
    });
  }
});
