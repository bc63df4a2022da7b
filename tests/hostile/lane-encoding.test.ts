// A lane or a fault plan with bytes that are not UTF-8 is refused with the byte
// offset of the first bad one, instead of being read with U+FFFD in their place
// (which would change what the lane says, and its hash, without a word).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { firstInvalidOffset } from '../../src/core/utf8-text.js';
import { CLI, REPO_ROOT, temporaryDirectory } from '../helpers.js';

const TIMEOUT = 30_000;

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: TIMEOUT, killSignal: 'SIGKILL' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The lane's bytes with one byte of its description replaced by a Latin-1 "é" (0xE9), which is not UTF-8: read loosely, a valid lane. */
function corruptLane(): { path: string; offset: number } {
  const bytes = readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'));
  const offset = bytes.indexOf('Issue-tracker') + 5;
  const corrupt = Buffer.from(bytes);
  corrupt[offset] = 0xe9;
  const path = join(temporaryDirectory('ef-hostile-lane-'), 'tool-world-v1.json');
  writeFileSync(path, corrupt);
  return { path, offset };
}

describe('lanes and fault plans are UTF-8 or refused', { timeout: 4 * TIMEOUT }, () => {
  it('generate refuses a lane with an invalid byte, naming its offset, and writes nothing', () => {
    const { path, offset } = corruptLane();
    const out = join(temporaryDirectory('ef-hostile-lane-out-'), 'out');
    const result = run('generate', path, '--out', out);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`invalid UTF-8 at byte offset ${offset}: a lane is UTF-8 JSON; re-save it as UTF-8`));
    assert.match(result.stderr, /is not a valid lane \(1 problem\) — fix:/);
    assert.equal(spawnSync('test', ['-e', out]).status, 1, 'no output directory was made');
  });

  it('lanes check and lanes show refuse it too', () => {
    const { path, offset } = corruptLane();
    for (const args of [['lanes', 'show', path], ['lanes', 'check', path]]) {
      const result = run(...args);
      assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`byte offset ${offset}`));
    }
  });

  it('proxy refuses a fault plan with an invalid byte', () => {
    const plan = join(temporaryDirectory('ef-hostile-plan-'), 'plan.json');
    writeFileSync(plan, Buffer.concat([Buffer.from('{"faults": [], "note": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]));
    const result = run('proxy', '--faults', plan, '--', process.execPath, '-e', '');
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /is not UTF-8: invalid UTF-8 at byte offset 27/);
  });

  it('finds the first invalid sequence exactly as the strict decoder rejects', () => {
    const cases: [number[], number][] = [
      [[0x61, 0x62], -1],
      [[0xc3, 0xa9], -1],
      [[0xf0, 0x9f, 0x98, 0x80], -1],
      [[0x61, 0xe9, 0x62], 1],
      [[0xc0, 0xaf], 0], // overlong
      [[0x61, 0xed, 0xa0, 0x80], 1], // surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // past U+10FFFF
      [[0x61, 0x62, 0xe2, 0x82], 2], // cut short
      [[0x80], 0],
    ];
    const strict = new TextDecoder('utf-8', { fatal: true });
    for (const [bytes, expected] of cases) {
      assert.equal(firstInvalidOffset(Uint8Array.from(bytes)), expected, JSON.stringify(bytes));
      let valid = true;
      try {
        strict.decode(Uint8Array.from(bytes));
      } catch {
        valid = false;
      }
      assert.equal(valid, expected === -1, `the decoder agrees on ${JSON.stringify(bytes)}`);
    }
  });
});
