// Owns the check `npm test` runs before anything else: what the suite needs
// beyond Node (Debian's Chromium for the report's browser test; the compiled
// sqlite3 of mcp-sqlite for the SQLite server world; git for the git-server
// world; python3 with venv, and
// the Python environment scripts/python-loaders.sh builds, for the loader test;
// the tiny model scripts/tiny-model.sh trains, for the engine tests) is there,
// or the run stops at once with one line saying what is missing and how to get
// it, instead of failing minutes in. Plain Node ESM, so
// it runs before the TypeScript build. Quiet when everything is there.
//
// EPISODE_FACTORY_SKIP_PREFLIGHT=1 skips it; the tests that need what is
// missing then fail as they always did (none of them skips).

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOADERS_SCRIPT = join(ROOT, 'scripts', 'python-loaders.sh');
const VENV = join(ROOT, '.cache', 'python-loaders');
/** Written after python-loaders.sh succeeds; while it matches, the script (2 s of Python imports) need not run again. */
const READY_STAMP = join(VENV, '.preflight-ready');

/** The same apt-get line for root and for everyone else. */
const install = (packages) => `apt-get install ${packages} as root, sudo apt-get install ${packages} otherwise`;

function stop(message, fix) {
  process.stderr.write(`test preflight: ${message} — fix: ${fix}\n`);
  process.exit(2);
}

function isExecutableFile(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

if (process.env.EPISODE_FACTORY_SKIP_PREFLIGHT === '1') {
  process.stderr.write('test preflight: skipped (EPISODE_FACTORY_SKIP_PREFLIGHT=1); tests that need Chromium or the Python environment fail if it is missing\n');
  process.exit(0);
}

// Chromium: where tests/headless-chromium.ts looks for it. Whether it starts is left to the browser test (a launch costs a second).
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!isExecutableFile(chromium)) {
  if (process.env.CHROMIUM_PATH !== undefined) {
    stop(`no Chromium at ${JSON.stringify(chromium)} (CHROMIUM_PATH)`, `set CHROMIUM_PATH=/path/to/chromium, or unset it and ${install('chromium')}`);
  }
  stop(`no Chromium at ${chromium} (the report's browser test drives Debian's Chromium)`, `${install('chromium')}, or set CHROMIUM_PATH=/path/to/chromium`);
}

// The SQLite server world runs mcp-sqlite, whose sqlite3 is a native module an install compiles when no
// prebuilt binary can be fetched (here it cannot): without a compiler the optional dependency is left out.
// (A checkout with no node_modules at all has bigger problems, which npm ci fixes; nothing is checked there.)
const SQLITE_SERVER = join(ROOT, 'node_modules', 'mcp-sqlite', 'package.json');
if (existsSync(join(ROOT, 'node_modules'))) {
  try {
    if (!existsSync(SQLITE_SERVER)) throw new Error('mcp-sqlite is not installed');
    createRequire(SQLITE_SERVER)('sqlite3');
  } catch (error) {
    stop(
      `mcp-sqlite's sqlite3 native module does not load (${String(error.message).split('\n')[0]}); the sqlite-server world needs it`,
      `${install('build-essential python3')}, then npm rebuild sqlite3 (or npm ci again)`,
    );
  }
}

/** What the environment was last found ready for: this version of the script, on this venv. */
function readiness() {
  const hash = (path) => (existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : 'none');
  return JSON.stringify({ script: hash(LOADERS_SCRIPT), venv: hash(join(VENV, 'pyvenv.cfg')) });
}

function lastError(output) {
  const lines = output.split('\n').map((line) => line.trim()).filter(Boolean);
  const line = lines.findLast((candidate) => /^ERROR\b/.test(candidate)) ?? lines.at(-1) ?? 'no output';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

const ready = existsSync(READY_STAMP) && readFileSync(READY_STAMP, 'utf8') === readiness();
if (!ready) {
  if (!existsSync(join(VENV, 'bin', 'python'))) {
    // python3 builds the venv; its venv module needs ensurepip, which Debian ships in python3-venv.
    const python = spawnSync('python3', ['-c', 'import venv, ensurepip'], { encoding: 'utf8' });
    if (python.error) stop('no python3 on PATH (the loader test builds a Python environment with it)', install('python3 python3-venv'));
    if (python.status !== 0) stop('python3 has no venv module with ensurepip (the loader test builds a Python environment with it)', install('python3 python3-venv'));
    process.stderr.write('test preflight: building the Python environment for the loader test (scripts/python-loaders.sh, once; a minute or more)\n');
  }
  const loaders = spawnSync(LOADERS_SCRIPT, [], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (loaders.error || loaders.status !== 0) {
    const why = loaders.error ? loaders.error.message : `exit ${loaders.status ?? loaders.signal}: ${lastError(`${loaders.stdout}\n${loaders.stderr}`)}`;
    const fix = existsSync('/opt/pypi/simple')
      ? "run scripts/python-loaders.sh to see pip's whole error (it installs from this machine's index, /opt/pypi/simple)"
      : "set PIP_INDEX_URL to a reachable package index, or run scripts/python-loaders.sh to see pip's whole error";
    stop(`scripts/python-loaders.sh could not make the Python environment (${why})`, fix);
  }
  try {
    writeFileSync(READY_STAMP, readiness());
  } catch {
    // Without the stamp the next run checks again: slower, not wrong.
  }
}

// The engine tests run the tiny model scripts/tiny-model.sh trains (about 8 minutes on 2 cores, once; .ci/run
// builds it before the tests). Built here when missing, so no engine test starts without it; a stale one is
// left for tests/tiny-model, which reruns the script and rebuilds when its inputs changed.
const TINY_MODEL = join(ROOT, '.cache', 'tiny-model', 'current', 'tiny-qwen2.gguf');
if (!existsSync(TINY_MODEL) && process.env.EPISODE_FACTORY_TINY_MODEL === undefined) {
  process.stderr.write('test preflight: building the tiny model for the engine tests (scripts/tiny-model.sh, once; about 8 minutes on 2 cores)\n');
  const built = spawnSync(join(ROOT, 'scripts', 'tiny-model.sh'), [], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 << 20 });
  if (built.error || built.status !== 0 || !existsSync(TINY_MODEL)) {
    const why = built.error ? built.error.message : `exit ${built.status ?? built.signal}: ${lastError(`${built.stdout}\n${built.stderr}`)}`;
    stop(`scripts/tiny-model.sh could not build the tiny model (${why})`, 'run scripts/tiny-model.sh to see its whole output (it needs npm ci and scripts/python-loaders.sh)');
  }
}

// The git-server world runs git-mcp-server, which drives the system's git; its seed commits with git too.
if (spawnSync('git', ['--version'], { stdio: 'ignore' }).status !== 0) {
  stop('no git on PATH (the git-server world and its lane need it)', install('git'));
}
