// Owns the compiled JavaScript that generation workers run: on first use, every
// TypeScript source under src/ is transpiled file by file (esbuild, the
// compiler tsx itself uses) into a cache directory named by a hash of those
// sources, so a worker thread starts on plain Node instead of loading and
// compiling the TypeScript through tsx. Nothing is ever served stale: the key
// covers every source file (so every file a worker can import), the compiler
// and its options, and where the sources live. Two processes may build at
// once: each builds into its own temporary directory and renames it into
// place; the loser discards its copy. When nothing can be built (no esbuild,
// no writable place), workers fall back to tsx. EPISODE_FACTORY_CACHE names
// another cache root; EPISODE_FACTORY_WORKER_TSX=1 makes workers use tsx.
//
// Compiled files keep the repository's layout under the cache directory, and
// each file's `import.meta.url` is fixed at its source file's URL, so the
// files a module finds relative to itself (schemas/, lanes/, catalog JSON,
// package.json, node_modules through createRequire) are the repository's own.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../core/package-paths.js';

/** Bumped whenever the way sources are compiled or laid out changes. */
const SCHEME = 'episode-factory-workers-1';
const SOURCE_DIR = fileURLToPath(new URL('../', import.meta.url));
/** The generation worker's entry, relative to src/ (lanes check's is generation/soundness-worker). */
export const GENERATION_ENTRY = 'generation/generation-worker';
/** Builds kept beside the newest one (other checkouts, other branches share the cache); older ones are removed once they are this old. */
const KEEP_BUILDS = 4;
const PRUNE_AFTER_MS = 10 * 60 * 1000;
/** Marks a complete build; a directory is renamed into place only once it is written. */
const COMPLETE = 'complete.json';

interface Esbuild {
  version: string;
  transformSync(code: string, options: Record<string, unknown>): { code: string };
}

export interface WorkerEntry {
  /** The URL a worker thread imports. */
  url: string;
  /** True when the URL is compiled JavaScript; false when it is the TypeScript source, to load through tsx. */
  compiled: boolean;
  /** The cache directory's name (workers-<key>), when compiled. */
  cacheName?: string;
  /** Why the compiled entry is not used, when it is not. */
  reason?: string;
}

/** The compiled copy's directory, or why there is none: built once per process, whatever entry a thread runs. */
let memo: { directory: string } | { reason: string } | undefined;

/**
 * The entry a worker thread runs (a path under src/ without its extension; generation's by default): compiled
 * JavaScript (built once per source hash, every source at once), or the TypeScript source when that cannot be had.
 */
export function workerEntry(entry: string = GENERATION_ENTRY): WorkerEntry {
  const source = new URL(`${entry}.ts`, pathToFileURL(SOURCE_DIR)).href;
  if (process.env.EPISODE_FACTORY_WORKER_TSX === '1') return { url: source, compiled: false, reason: 'EPISODE_FACTORY_WORKER_TSX=1' };
  if (!memo) {
    try {
      memo = { directory: buildWorkerSources() };
    } catch (error) {
      memo = { reason: error instanceof Error ? error.message : String(error) };
    }
  }
  if ('reason' in memo) return { url: source, compiled: false, reason: memo.reason };
  return { url: pathToFileURL(join(memo.directory, 'src', `${entry}.js`)).href, compiled: true, cacheName: basename(memo.directory) };
}

/** Lists every TypeScript source under src/, sorted, as paths relative to src/. */
function sourceFiles(directory = SOURCE_DIR): string[] {
  return readdirSync(directory, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative(SOURCE_DIR, path)] : [];
    })
    .sort();
}

function loadEsbuild(): Esbuild {
  // esbuild comes with tsx (which the CLI already needs); resolved from tsx so a nested install is found too.
  const fromTsx = createRequire(fileURLToPath(import.meta.resolve('tsx')));
  return fromTsx('esbuild') as Esbuild;
}

/** The cache key: the scheme, the compiler and its options, where the sources live, and every source file's path and bytes. */
export function workerSourceKey(esbuildVersion: string, files: readonly string[], contents: (file: string) => Buffer | string): string {
  const hash = createHash('sha256');
  const field = (value: Buffer | string) => {
    hash.update(String(Buffer.byteLength(value)));
    hash.update(':');
    hash.update(value);
  };
  field(SCHEME);
  field(esbuildVersion);
  field(process.versions.node.split('.')[0]!);
  field(SOURCE_DIR);
  field(readFileSync(join(PACKAGE_ROOT, 'tsconfig.json')));
  for (const file of files) {
    field(file);
    field(contents(file));
  }
  return hash.digest('hex').slice(0, 32);
}

/** Candidate cache roots, in order: EPISODE_FACTORY_CACHE when set; else beside the dependencies (found by Node's own resolution), then the system's temporary directory. */
function cacheRoots(): string[] {
  const chosen = process.env.EPISODE_FACTORY_CACHE;
  if (chosen) return [chosen];
  return [join(PACKAGE_ROOT, 'node_modules', '.cache', 'episode-factory'), join(tmpdir(), 'episode-factory-cache')];
}

/** The directory holding this source tree's compiled copy, built now if no complete copy exists. */
export function buildWorkerSources(): string {
  const esbuild = loadEsbuild();
  const files = sourceFiles();
  const texts = new Map(files.map((file) => [file, readFileSync(join(SOURCE_DIR, file), 'utf8')]));
  const key = workerSourceKey(esbuild.version, files, (file) => texts.get(file)!);
  const failures: string[] = [];
  for (const root of cacheRoots()) {
    const target = join(root, `workers-${key}`);
    if (existsSync(join(target, COMPLETE))) return target;
    try {
      mkdirSync(root, { recursive: true });
      const scratch = mkdtempSync(join(root, `.building-${key}-`));
      try {
        writeBuild(esbuild, scratch, texts, root);
        writeFileSync(join(scratch, COMPLETE), `${JSON.stringify({ scheme: SCHEME, key, esbuild: esbuild.version, files: files.length })}\n`);
        try {
          renameSync(scratch, target);
        } catch (error) {
          // Another process renamed its copy first: same key, same bytes; keep theirs.
          if (!existsSync(join(target, COMPLETE))) throw error;
        }
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
      if (existsSync(join(target, COMPLETE))) {
        pruneOldBuilds(root, target);
        return target;
      }
      failures.push(`${target}: not complete after building`);
    } catch (error) {
      failures.push(`${root}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`could not build the worker sources (${failures.join('; ')})`);
}

function writeBuild(esbuild: Esbuild, scratch: string, texts: ReadonlyMap<string, string>, root: string): void {
  const tsconfigRaw = readFileSync(join(PACKAGE_ROOT, 'tsconfig.json'), 'utf8');
  for (const [file, text] of texts) {
    const sourceUrl = pathToFileURL(join(SOURCE_DIR, file)).href;
    const { code } = esbuild.transformSync(text, {
      loader: 'ts',
      format: 'esm',
      target: 'es2022',
      sourcefile: join(SOURCE_DIR, file),
      tsconfigRaw,
      // A module finds its neighbours (catalog JSON, schemas/, lanes/, node_modules) from the source tree, not from the cache.
      define: { 'import.meta.url': JSON.stringify(sourceUrl) },
    });
    const out = join(scratch, 'src', file.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, code);
  }
  // Bare imports (the SDK, ajv, ...) resolve by walking up from the compiled file: outside the package's node_modules, point the walk at it.
  if (!root.startsWith(join(PACKAGE_ROOT, 'node_modules'))) {
    const modules = nodeModulesOf(PACKAGE_ROOT);
    if (modules) symlinkSync(modules, join(scratch, 'node_modules'), 'dir');
  }
  // The compiled files are ES modules whatever package.json sits above the cache.
  writeFileSync(join(scratch, 'package.json'), '{ "type": "module" }\n');
}

/** The node_modules directory Node would search first from the package root. */
function nodeModulesOf(packageRoot: string): string | undefined {
  for (let directory = packageRoot; ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'node_modules'))) return join(directory, 'node_modules');
    if (dirname(directory) === directory) return undefined;
  }
}

/**
 * After a build, removes what a cache accumulates: builds beyond the newest
 * KEEP_BUILDS and half-built directories of killed builds, only once they are
 * PRUNE_AFTER_MS old. A process still running an old build's workers loses
 * nothing it has loaded, and a thread it starts later falls back to tsx.
 */
function pruneOldBuilds(root: string, keep: string): void {
  try {
    // "Now" is when the newest build was written: the file system's clock, not the process's.
    const now = statSync(keep).mtimeMs;
    const entries = readdirSync(root)
      .filter((name) => name.startsWith('workers-') || name.startsWith('.building-'))
      .map((name) => ({ name, path: join(root, name), modified: statSync(join(root, name)).mtimeMs }))
      .filter((entry) => entry.path !== keep)
      .sort((left, right) => right.modified - left.modified);
    const builds = entries.filter((entry) => entry.name.startsWith('workers-'));
    const stale = [...builds.slice(KEEP_BUILDS), ...entries.filter((entry) => entry.name.startsWith('.building-'))];
    for (const entry of stale) if (now - entry.modified > PRUNE_AFTER_MS) rmSync(entry.path, { recursive: true, force: true });
  } catch {
    // Pruning is housekeeping: a cache it cannot tidy still works.
  }
}
