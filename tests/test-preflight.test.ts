// Holds scripts/test-preflight.mjs to its promise: what the suite needs and
// lacks is said in one line with the fix, fast, with a non-zero exit, so
// `npm test` stops before minutes of tests; with everything there it is quiet
// and quick. The Python cases run a copy of the preflight beside a stand-in
// python-loaders.sh and python3, so they need neither a network nor a
// machine without Python.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, temporaryDirectory } from './helpers.js';

const PREFLIGHT = join(REPO_ROOT, 'scripts', 'test-preflight.mjs');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

function preflight(script: string, environment: Record<string, string | undefined>, cwd = REPO_ROOT): Run {
  const env = { ...process.env, ...environment };
  delete env.EPISODE_FACTORY_SKIP_PREFLIGHT;
  for (const [name, value] of Object.entries(environment)) if (value === undefined) delete env[name];
  const started = performance.now();
  const result = spawnSync(process.execPath, [script], { cwd, env, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, seconds: (performance.now() - started) / 1000 };
}

function executable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/** A stand-in scripts/tiny-model.sh that leaves a model file where the real one does, and counts its runs. */
const TINY_MODEL_BUILDS = '#!/bin/sh\nmkdir -p .cache/tiny-model/built && printf gguf > .cache/tiny-model/built/tiny-qwen2.gguf && ln -sfn built .cache/tiny-model/current\necho build >> tiny-builds\n';

/** A checkout with only the preflight and stand-in scripts/python-loaders.sh and scripts/tiny-model.sh; a bin directory for a stand-in python3. */
function sandbox(loaders: string, tinyModel = TINY_MODEL_BUILDS): { root: string; script: string; bin: string } {
  const root = temporaryDirectory('ef-preflight-');
  mkdirSync(join(root, 'scripts'));
  copyFileSync(PREFLIGHT, join(root, 'scripts', 'test-preflight.mjs'));
  executable(join(root, 'scripts', 'python-loaders.sh'), loaders);
  executable(join(root, 'scripts', 'tiny-model.sh'), tinyModel);
  const bin = join(root, 'bin');
  mkdirSync(bin);
  return { root, script: join(root, 'scripts', 'test-preflight.mjs'), bin };
}

/** An existing executable, standing in for Chromium: the preflight only looks for it. */
const SOME_EXECUTABLE = process.execPath;

describe('test preflight', () => {
  it('says when the SQLite server world\'s native module does not load, with the packages that build it', () => {
    const { root, script } = sandbox('#!/bin/sh\nexit 0\n');
    // An install where mcp-sqlite is present but its sqlite3 was never built.
    mkdirSync(join(root, 'node_modules', 'mcp-sqlite'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'mcp-sqlite', 'package.json'), '{"name":"mcp-sqlite","version":"1.0.9"}');
    const run = preflight(script, { CHROMIUM_PATH: SOME_EXECUTABLE }, root);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /^test preflight: mcp-sqlite's sqlite3 native module does not load \(Cannot find module 'sqlite3'\); the sqlite-server world needs it — fix: apt-get install build-essential python3 as root, sudo apt-get install build-essential python3 otherwise, then npm rebuild sqlite3 \(or npm ci again\)\n$/);
  });

  it('stops at once, in one line with the fix, when Chromium is missing', () => {
    const run = preflight(PREFLIGHT, { CHROMIUM_PATH: '/nonexistent/chromium' });
    assert.equal(run.status, 2);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr,
      'test preflight: no Chromium at "/nonexistent/chromium" (CHROMIUM_PATH) — fix: set CHROMIUM_PATH=/path/to/chromium, or unset it and ' +
        'apt-get install chromium as root, sudo apt-get install chromium otherwise\n',
    );
    assert.ok(run.seconds < 1.5, `took ${run.seconds.toFixed(2)} s`);
  });

  it('says python3 or its venv module is missing, with the Debian packages', () => {
    const { script, bin } = sandbox('#!/bin/sh\nexit 0\n');
    const none = preflight(script, { CHROMIUM_PATH: SOME_EXECUTABLE, PATH: bin });
    assert.equal(none.status, 2);
    assert.equal(
      none.stderr,
      'test preflight: no python3 on PATH (the loader test builds a Python environment with it) — fix: apt-get install python3 python3-venv as root, sudo apt-get install python3 python3-venv otherwise\n',
    );
    executable(join(bin, 'python3'), '#!/bin/sh\nexit 1\n');
    const noVenv = preflight(script, { CHROMIUM_PATH: SOME_EXECUTABLE, PATH: bin });
    assert.equal(noVenv.status, 2);
    assert.match(noVenv.stderr, /^test preflight: python3 has no venv module with ensurepip .* — fix: apt-get install python3 python3-venv as root, sudo apt-get install python3 python3-venv otherwise\n$/);
    assert.ok(none.seconds < 1.5 && noVenv.seconds < 1.5, `took ${none.seconds.toFixed(2)} s and ${noVenv.seconds.toFixed(2)} s`);
  });

  it('says git is missing, with the Debian package, once the rest is there', () => {
    const { script, bin } = sandbox('#!/bin/sh\nexit 0\n');
    executable(join(bin, 'python3'), '#!/bin/sh\nexit 0\n');
    // Only the stand-in python3 on PATH: no git (the tiny model is named, so none is built).
    const run = preflight(script, { CHROMIUM_PATH: SOME_EXECUTABLE, PATH: bin, EPISODE_FACTORY_TINY_MODEL: '/nonexistent/tiny.gguf' });
    assert.equal(run.status, 2, run.stderr);
    assert.equal(run.stderr.trimEnd().split('\n').at(-1), 'test preflight: no git on PATH (the git-server world and its lane need it) — fix: apt-get install git as root, sudo apt-get install git otherwise');
  });

  it("ends with one line naming pip's error and the fix when python-loaders.sh fails", () => {
    const { script, bin } = sandbox(
      '#!/bin/sh\necho "WARNING: Location is ignored" >&2\necho "ERROR: No matching distribution found for pyarrow" >&2\necho "[notice] A new release of pip" >&2\nexit 1\n',
    );
    executable(join(bin, 'python3'), '#!/bin/sh\nexit 0\n');
    const run = preflight(script, { CHROMIUM_PATH: SOME_EXECUTABLE, PATH: `${bin}:/usr/bin:/bin` });
    assert.equal(run.status, 2);
    const lines = run.stderr.trimEnd().split('\n');
    assert.match(lines[0]!, /^test preflight: building the Python environment/);
    assert.equal(lines.length, 2, run.stderr);
    assert.match(
      lines[1]!,
      /^test preflight: scripts\/python-loaders\.sh could not make the Python environment \(exit 1: ERROR: No matching distribution found for pyarrow\) — fix: (set PIP_INDEX_URL to a reachable package index, or run scripts\/python-loaders\.sh to see pip's whole error|run scripts\/python-loaders\.sh to see pip's whole error \(it installs from this machine's index, \/opt\/pypi\/simple\))$/,
    );
  });

  it('runs python-loaders.sh again only when the script or the environment changed', () => {
    const loaders = '#!/bin/sh\nmkdir -p .cache/python-loaders/bin\ntouch .cache/python-loaders/bin/python .cache/python-loaders/pyvenv.cfg\necho run >> runs\n';
    const { root, script, bin } = sandbox(loaders);
    executable(join(bin, 'python3'), '#!/bin/sh\nexit 0\n');
    const environment = { CHROMIUM_PATH: SOME_EXECUTABLE, PATH: `${bin}:/usr/bin:/bin` };
    const runs = () => (existsSync(join(root, 'runs')) ? readFileSync(join(root, 'runs'), 'utf8').split('\n').filter(Boolean).length : 0);
    assert.equal(preflight(script, environment).status, 0);
    assert.equal(runs(), 1);
    const again = preflight(script, environment);
    assert.deepEqual([again.status, again.stdout, again.stderr, runs()], [0, '', '', 1], 'ready: quiet, and the script not run');
    executable(join(root, 'scripts', 'python-loaders.sh'), `${loaders}# now also installs trl\n`);
    assert.equal(preflight(script, environment).status, 0);
    assert.equal(runs(), 2, 'a changed script runs again');
  });

  it('builds the tiny model once when it is missing, saying so, and names the script when the build fails', () => {
    const ready = '#!/bin/sh\nmkdir -p .cache/python-loaders/bin\ntouch .cache/python-loaders/bin/python .cache/python-loaders/pyvenv.cfg\n';
    const { root, script, bin } = sandbox(ready);
    executable(join(bin, 'python3'), '#!/bin/sh\nexit 0\n');
    const environment = { CHROMIUM_PATH: SOME_EXECUTABLE, PATH: `${bin}:/usr/bin:/bin`, EPISODE_FACTORY_TINY_MODEL: undefined };
    const builds = () => (existsSync(join(root, 'tiny-builds')) ? readFileSync(join(root, 'tiny-builds'), 'utf8').split('\n').filter(Boolean).length : 0);
    const first = preflight(script, environment);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stderr, /test preflight: building the tiny model for the engine tests \(scripts\/tiny-model\.sh, once; about 8 minutes on 2 cores\)\n$/);
    assert.equal(builds(), 1);
    const again = preflight(script, environment);
    assert.deepEqual([again.status, again.stderr, builds()], [0, '', 1], 'built: quiet, and the script not run again');

    const broken = sandbox(ready, '#!/bin/sh\necho "tiny-model: no Python environment at .cache/python-loaders; fix: scripts/python-loaders.sh" >&2\nexit 1\n');
    executable(join(broken.bin, 'python3'), '#!/bin/sh\nexit 0\n');
    const failed = preflight(broken.script, { ...environment, PATH: `${broken.bin}:/usr/bin:/bin` });
    assert.equal(failed.status, 2);
    assert.match(
      failed.stderr.trimEnd().split('\n').at(-1)!,
      /^test preflight: scripts\/tiny-model\.sh could not build the tiny model \(exit 1: tiny-model: no Python environment at \.cache\/python-loaders; fix: scripts\/python-loaders\.sh\) — fix: run scripts\/tiny-model\.sh to see its whole output/,
    );
  });

  it('is skipped with EPISODE_FACTORY_SKIP_PREFLIGHT=1, saying so', () => {
    const env = { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium', EPISODE_FACTORY_SKIP_PREFLIGHT: '1' };
    const skipped = spawnSync(process.execPath, [PREFLIGHT], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    assert.equal(skipped.status, 0);
    assert.equal(skipped.stdout, '');
    assert.match(skipped.stderr, /^test preflight: skipped \(EPISODE_FACTORY_SKIP_PREFLIGHT=1\); tests that need Chromium or the Python environment fail if it is missing\n$/);
  });

  it('is quiet and quick on this machine, where the suite has what it needs', { timeout: 15 * 60_000 }, () => {
    // The first run may check (or build) the Python environment; the second is the everyday case.
    const first = preflight(PREFLIGHT, {});
    assert.equal(first.status, 0, first.stderr);
    const run = preflight(PREFLIGHT, {});
    assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', '']);
    assert.ok(run.seconds < 2, `took ${run.seconds.toFixed(2)} s`);
  });
});
