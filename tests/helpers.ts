// Shared test helpers: temporary directories that clean themselves up, the
// repository's own paths, the CLI and other children run with hard limits, and
// the Python environment of the loader and training tests.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, beforeEach } from 'node:test';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
export const CLI = join(REPO_ROOT, 'bin', 'episode-factory.js');

export function temporaryDirectory(prefix = 'ef-test-'): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/**
 * Runs every test of the calling file without the environment variable
 * `name`, and puts back what was there after each: for settings a user's run
 * would not have (SOURCE_DATE_EPOCH, EPISODE_FACTORY_FRESH_CONNECTIONS).
 */
export function withoutVariable(name: string): void {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env[name];
    delete process.env[name];
  });
  afterEach(() => {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  });
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the installed command in `cwd`, as a user would, without SOURCE_DATE_EPOCH from the test's environment. */
export function runCli(cwd: string, ...args: string[]): CliResult {
  const environment = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', env: environment });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The same, without blocking this process: for tests whose other half (a fake
 * server) runs in the test process itself and must keep answering.
 */
export function runCliAsync(cwd: string, ...args: string[]): Promise<CliResult> {
  const environment = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: environment });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface TimedCliResult extends CliResult {
  /** The child outlived its limit and was killed. */
  timedOut: boolean;
  seconds: number;
}

/**
 * Runs `command` with a hard limit: past `limitMs` the child is killed with
 * SIGKILL (a process stuck in a regular expression runs no signal handler), so
 * a regression fails the test instead of hanging the suite.
 */
export function runWithin(limitMs: number, command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<TimedCliResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, options);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, timedOut, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/** The installed command in `cwd` with a hard limit (see runWithin), without SOURCE_DATE_EPOCH from the test's environment. */
export function runCliWithin(limitMs: number, cwd: string, ...args: string[]): Promise<TimedCliResult> {
  const environment = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  return runWithin(limitMs, process.execPath, [CLI, ...args], { cwd, env: environment });
}

/**
 * The Python of the loader and training tests: EPISODE_FACTORY_PYTHON, or the
 * environment scripts/python-loaders.sh builds (run here, so a test that needs
 * it builds it when it is missing and never silently skips).
 */
export function pythonEnvironment(): string {
  if (process.env.EPISODE_FACTORY_PYTHON) return process.env.EPISODE_FACTORY_PYTHON;
  const venvPython = join(REPO_ROOT, '.cache', 'python-loaders', 'bin', 'python');
  // Checked once per test file: the check imports torch and the rest, seconds each time.
  if (pythonChecked) return venvPython;
  execFileSync(join(REPO_ROOT, 'scripts', 'python-loaders.sh'), { stdio: ['ignore', 'ignore', 'inherit'], timeout: 20 * 60_000 });
  if (!existsSync(venvPython)) throw new Error(`scripts/python-loaders.sh did not build ${venvPython}`);
  pythonChecked = true;
  return venvPython;
}
let pythonChecked = false;

/** A value nested `depth` levels deep, objects and arrays in turn, around `leaf`: for depth limits and cycles. */
export function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = level % 2 ? [value] : { k: value };
  return value;
}

/**
 * A dataset's trace index, checked: every episode once, each in an archive
 * that is there, and nothing else under traces/. Returns the record ids in
 * index (plan) order: what two runs of one plan must agree on, whatever
 * their part boundaries.
 */
export function traceIndexIds(datasetDir: string): string[] {
  const entries = readFileSync(join(datasetDir, 'traces', 'index.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { record_id: string; trace: string });
  const ids = entries.map((entry) => entry.record_id);
  if (new Set(ids).size !== ids.length) throw new Error(`${datasetDir}: the trace index names an episode twice`);
  const expected = [...new Set(entries.map((entry) => entry.trace)), 'traces/index.jsonl'].sort();
  const present = readdirSync(join(datasetDir, 'traces')).map((file) => `traces/${file}`).sort();
  if (JSON.stringify(present) !== JSON.stringify(expected)) throw new Error(`${datasetDir}: traces/ holds ${present.join(', ')}, the index names ${expected.join(', ')}`);
  return ids;
}

/**
 * A committed sample dataset's committed files (the records), copied into
 * `target`: what a user's own run left beside them (a manifest, columnar
 * copies, traces, a report) stays behind, so a test that edits the copy sees
 * a dataset with no manifest, whatever was run in the checkout before.
 */
export function copySample(name: string, target: string): void {
  mkdirSync(target, { recursive: true });
  for (const file of ['episodes.jsonl', 'rejected.jsonl']) {
    const path = join(REPO_ROOT, 'datasets', name, file);
    if (existsSync(path)) copyFileSync(path, join(target, file));
  }
}
