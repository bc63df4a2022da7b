// Tests the warm start of generation workers: the compiled copy of the sources
// (keyed by every source's bytes, built by two processes at once without harm,
// finding the repository's own files from the cache, old builds pruned), the Node flags a
// compiled thread drops, and the parts that shrink towards the end of a run.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { guidedParts, MIN_PART_EPISODES } from '../../src/generation/part-schedule.js';
import { workerSourceKey } from '../../src/generation/worker-build.js';
import { flagsWithoutTsx } from '../../src/generation/worker-thread.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const BUILD = pathToFileURL(join(REPO_ROOT, 'src', 'generation', 'worker-build.ts')).href;

/** Runs `code` (an ES module body) in a fresh Node process with tsx, with `env` added. */
function node(code: string, env: Record<string, string>, withTsx = true): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...(withTsx ? ['--import', 'tsx'] : []), '--input-type=module', '-e', code], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('worker build', () => {
  it('keys the cache by every source file: one changed byte, one renamed file, a new file each change the key', () => {
    const files = ['a.ts', 'b/c.ts'];
    const texts: Record<string, string> = { 'a.ts': 'export const a = 1;\n', 'b/c.ts': 'export const c = 2;\n' };
    const key = workerSourceKey('0.0.0', files, (file) => texts[file]!);
    assert.equal(workerSourceKey('0.0.0', files, (file) => texts[file]!), key, 'the same sources give the same key');
    assert.notEqual(workerSourceKey('0.0.0', files, (file) => (file === 'a.ts' ? 'export const a = 2;\n' : texts[file]!)), key);
    assert.notEqual(workerSourceKey('0.0.0', ['a.ts', 'b/d.ts'], (file) => texts[file] ?? texts['b/c.ts']!), key);
    assert.notEqual(workerSourceKey('0.0.0', [...files, 'e.ts'], (file) => texts[file] ?? ''), key);
    assert.notEqual(workerSourceKey('0.0.1', files, (file) => texts[file]!), key, 'another compiler, another key');
  });

  it('builds once when two processes build at once, and the compiled code finds the repository files and packages from the cache', async () => {
    const root = temporaryDirectory('ef-worker-cache-');
    // What an old cache holds: builds of other sources (an hour old and older) and a killed build's half-written directory.
    const hour = 3600;
    for (let index = 0; index < 6; index++) {
      mkdirSync(join(root, `workers-old${index}`));
      utimesSync(join(root, `workers-old${index}`), Date.now() / 1000 - hour * (index + 1), Date.now() / 1000 - hour * (index + 1));
    }
    mkdirSync(join(root, '.building-killed'));
    utimesSync(join(root, '.building-killed'), Date.now() / 1000 - hour, Date.now() / 1000 - hour);
    const build = `const { buildWorkerSources } = await import(${JSON.stringify(BUILD)}); process.stdout.write(buildWorkerSources());`;
    const [first, second] = await Promise.all([node(build, { EPISODE_FACTORY_CACHE: root }), node(build, { EPISODE_FACTORY_CACHE: root })]);
    assert.equal(first.status, 0, first.stderr);
    assert.equal(second.status, 0, second.stderr);
    assert.equal(first.stdout, second.stdout, 'both use the same directory');
    assert.deepEqual(
      readdirSync(root).sort(),
      [first.stdout.slice(root.length + 1), 'workers-old0', 'workers-old1', 'workers-old2', 'workers-old3'].sort(),
      'no half-built directory is left behind, and only the newest old builds are kept',
    );
    assert.ok(existsSync(join(first.stdout, 'complete.json')));

    // Plain Node (no tsx): the compiled package paths point at the repository, and the worker's whole import graph (SDK, ajv, worlds' catalogs) loads.
    const compiled = (path: string) => JSON.stringify(pathToFileURL(join(first.stdout, 'src', path)).href);
    const check = [
      `const paths = await import(${compiled('core/package-paths.js')});`,
      `await import(${compiled('generation/generation-worker.js')});`,
      `await import(${compiled('world/servers/filesystem/filesystem-world.js')});`,
      `process.stdout.write(JSON.stringify([paths.SCHEMAS_DIR, paths.BUILTIN_LANES_DIR, paths.FACTORY_VERSION]));`,
    ].join('\n');
    const loaded = await node(check, {}, false);
    assert.equal(loaded.status, 0, loaded.stderr);
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    assert.deepEqual(JSON.parse(loaded.stdout), [join(REPO_ROOT, 'schemas/'), join(REPO_ROOT, 'lanes/'), version]);
  });

  it('drops only the flags that load tsx from a compiled thread', () => {
    assert.deepEqual(flagsWithoutTsx(['--import', 'tsx', '--enable-source-maps']), ['--enable-source-maps']);
    assert.deepEqual(flagsWithoutTsx(['--import=tsx', '--max-old-space-size=512']), ['--max-old-space-size=512']);
    assert.deepEqual(flagsWithoutTsx(['--loader', 'file:///x/node_modules/tsx/dist/esm/index.mjs', '--import', './setup.js']), ['--import', './setup.js']);
    assert.deepEqual(flagsWithoutTsx(['--require', 'tsx/cjs', '--conditions', 'tsx']), ['--conditions', 'tsx']);
  });

  it('starts threads under a flag of the whole process, which a thread cannot be given (node --v8-pool-size=2)', async () => {
    const replayed = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--v8-pool-size=2', join(REPO_ROOT, 'bin', 'episode-factory.js'), 'replay', join(REPO_ROOT, 'datasets', 'tool-world-faults-v1'), '--workers', '2', '--json'], { cwd: REPO_ROOT });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += String(chunk)));
      child.stderr.on('data', (chunk) => (stderr += String(chunk)));
      child.once('exit', (status) => resolve({ status, stdout, stderr }));
    });
    assert.equal(replayed.status, 0, replayed.stderr || replayed.stdout);
    const summary = JSON.parse(replayed.stdout) as { records: number; verified: number };
    assert.ok(summary.records > 0 && summary.verified === summary.records);
  });
});

describe('guided parts', () => {
  it('covers the ranges exactly, in plan order, within the largest part, shrinking towards the end', () => {
    const ranges = [
      { start: 0, end: 700 },
      { start: 900, end: 1400 },
    ];
    const parts = guidedParts(ranges, 2, 200);
    const covered = parts.flatMap((part) => Array.from({ length: part.end - part.start }, (_, index) => part.start + index));
    assert.deepEqual(covered, [...Array.from({ length: 700 }, (_, index) => index), ...Array.from({ length: 500 }, (_, index) => 900 + index)]);
    assert.ok(parts.every((part) => part.end - part.start <= 200 && part.end > part.start));
    const sizes = parts.map((part) => part.end - part.start);
    assert.equal(sizes[0], 200);
    assert.ok(sizes.at(-2)! <= MIN_PART_EPISODES + 1, `the parts near the end are small: ${sizes.join(' ')}`);
    assert.deepEqual(guidedParts([{ start: 3, end: 5 }], 4, 200), [{ start: 3, end: 5 }]);
  });
});
