// A real `generate` process killed part-way (SIGKILL: no chance to clean up)
// or stopped with Ctrl-C must lose nothing it finished and leave no partial
// record; `--resume` then writes exactly the bytes of an uninterrupted run.
// The progress line is checked in a real pseudo-terminal.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { CLI, REPO_ROOT, runCli, temporaryDirectory, traceIndexIds } from '../helpers.js';

const LANE = 'tool-world-v1';
const SEEDS = '0..59';
const DATA_FILES = ['episodes.jsonl', 'rejected.jsonl', 'episodes.arrow', 'episodes.parquet'];
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function sealedParts(out: string): number {
  const parts = join(out, '.partial', 'parts');
  return existsSync(parts) ? readdirSync(parts).filter((name) => name.endsWith('.done.json')).length : 0;
}

/** Starts generate, waits until it has sealed `parts` parts, then sends `signal`; resolves with the exit. */
async function interruptAfterParts(out: string, parts: number, signal: NodeJS.Signals, extra: string[] = []): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const environment = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  const child = spawn(process.execPath, [CLI, 'generate', LANE, '--seeds', SEEDS, '--out', out, ...extra], { cwd: REPO_ROOT, env: environment });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const deadline = performance.now() + 120_000;
  while (sealedParts(out) < parts && child.exitCode === null && performance.now() < deadline) await sleep(20);
  assert.ok(sealedParts(out) >= parts, `the run sealed ${parts} part(s) before it was interrupted; stderr: ${stderr}`);
  child.kill(signal);
  return { ...(await exited), stderr };
}

describe('generate, interrupted', () => {
  const reference = temporaryDirectory();
  before(() => {
    const result = runCli(REPO_ROOT, 'generate', LANE, '--seeds', SEEDS, '--out', reference, '--workers', '1', '--quiet');
    assert.equal(result.status, 0, result.stderr);
  });

  it('survives SIGKILL: nothing published, finished parts kept, --resume gives the same bytes', async () => {
    const out = temporaryDirectory();
    const killed = await interruptAfterParts(out, 2, 'SIGKILL', ['--workers', '2']);
    assert.equal(killed.signal, 'SIGKILL');
    for (const file of DATA_FILES) assert.equal(existsSync(join(out, file)), false, `${file} is not published by a killed run`);
    const kept = sealedParts(out);
    assert.ok(kept >= 2);

    const again = runCli(REPO_ROOT, 'generate', LANE, '--seeds', SEEDS, '--out', out);
    assert.equal(again.status, 2, 'a rerun without --resume must not throw the finished work away');
    assert.match(again.stderr, /holds an interrupted run .* --resume/);

    const resumed = runCli(REPO_ROOT, 'generate', LANE, '--seeds', SEEDS, '--out', out, '--resume', '--workers', '2', '--json');
    assert.equal(resumed.status, 0, resumed.stderr);
    const summary = JSON.parse(resumed.stdout) as { resumed: number; written: number; rejected: number; interrupted: boolean };
    assert.ok(summary.resumed > 0, 'sealed parts were kept, not redone');
    assert.equal(summary.written + summary.rejected, 300);
    for (const file of DATA_FILES) assert.equal(sha256(join(out, file)), sha256(join(reference, file)), `${file} after --resume`);
    assert.deepEqual(traceIndexIds(out), traceIndexIds(reference), 'after --resume the trace index covers every planned episode once, in plan order');
    assert.equal(traceIndexIds(out).length, 300);
    assert.equal(existsSync(join(out, '.partial')), false);
    assert.equal(runCli(REPO_ROOT, 'audit', out).status, 0);
  });

  it('stops cleanly on Ctrl-C and says how to resume', async () => {
    const out = temporaryDirectory();
    const stopped = await interruptAfterParts(out, 1, 'SIGINT', ['--workers', '1']);
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stderr, /stopped with \d+ of 300 episodes finished, kept in .*\.partial\. To finish, rerun the same command with --resume/);
    assert.equal(existsSync(join(out, 'episodes.jsonl')), false);
    const resumed = runCli(REPO_ROOT, 'generate', LANE, '--seeds', SEEDS, '--out', out, '--resume', '--quiet');
    assert.equal(resumed.status, 0, resumed.stderr);
    for (const file of DATA_FILES) assert.equal(sha256(join(out, file)), sha256(join(reference, file)), `${file} after Ctrl-C and --resume`);
  });

  it('shows a live progress line in a terminal, and none when piped or --quiet', () => {
    const out = temporaryDirectory();
    const command = [process.execPath, CLI, 'generate', LANE, '--seeds', '0..19', '--out', out].map((part) => `'${part}'`).join(' ');
    // `script` gives the command a real pseudo-terminal, as a person's shell would.
    const terminal = spawnSync('script', ['-qfec', `stty cols 160; ${command}`, '/dev/null'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(terminal.status, 0, terminal.stderr + terminal.stdout);
    assert.match(terminal.stdout, /\r[^\n]*tool-world-v1: \d+\/100 episodes, [0-9.]+\/s, ETA \S+, 0 rejected/);
    assert.match(terminal.stdout, /100\/100 episodes/);
    const piped = runCli(REPO_ROOT, 'generate', LANE, '--seeds', '0..19', '--out', temporaryDirectory());
    assert.equal(piped.status, 0);
    assert.doesNotMatch(piped.stderr, /\r|ETA/);
    const quiet = spawnSync('script', ['-qfec', `${command} --quiet --restart`, '/dev/null'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(quiet.status, 0);
    assert.doesNotMatch(quiet.stdout, /ETA/);
  });
});
