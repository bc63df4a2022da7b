// Owns a definition's escape hatch: a module of the user's (or a built-in
// world's own functions) that fills the sandbox or adds views where data
// cannot say it. Either is run twice and refused when the two runs differ:
// populate a second time into a scratch root with the same draws played
// again, views a second time on a copy of the snapshot. A draw sequence
// proven once in a process is not proven again, nor a world's views once
// proven: every episode probes twice (and replay twice more), and running the
// probe a second time each time would double the cost of every snapshot.

import { createHash } from 'node:crypto';
import { cp, lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { canonicalJson } from '../../../core/canonical-json.js';
import { errorMessage, FactoryError } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { randomFrom, type Random } from '../../../core/random.js';

export interface PopulateArguments {
  random: Random;
  root: string;
  home: string;
  config: JsonObject;
  pinnedDate: string;
}

export type PopulateFunction = (input: PopulateArguments) => Promise<void> | void;
export type ViewsFunction = (input: { snapshot: JsonObject; root: string }) => Promise<JsonObject> | JsonObject;

/** An escape-hatch module's export, loaded once per path. */
const loaded = new Map<string, Promise<Record<string, unknown>>>();

export async function moduleExport<T>(directory: string, module: string, name: string): Promise<T> {
  const path = resolve(directory, module);
  let exports = loaded.get(path);
  if (!exports) {
    exports = import(pathToFileURL(path).href) as Promise<Record<string, unknown>>;
    loaded.set(path, exports);
  }
  let found: unknown;
  try {
    found = (await exports)[name];
  } catch (error) {
    throw new FactoryError('definition_invalid', `the escape-hatch module ${module} does not load: ${errorMessage(error)}`, { fix: `run \`node ${path}\` to see why` });
  }
  if (typeof found !== 'function') throw new FactoryError('definition_invalid', `the escape-hatch module ${module} exports no function ${name}`, { fix: `export async function ${name}(...) from ${module}` });
  return found as T;
}

/** Every file and directory under `root`, by relative path: a directory as "dir", a file as its sha256, anything else by its kind. */
export async function treeDigest(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (relative: string) => {
    const names = (await readdir(join(root, relative))).sort();
    for (const name of names) {
      const path = relative ? `${relative}/${name}` : name;
      const stat = await lstat(join(root, path));
      if (stat.isDirectory()) {
        out.set(path, 'dir');
        await walk(path);
      } else if (stat.isFile()) {
        out.set(path, createHash('sha256').update(await readFile(join(root, path))).digest('hex'));
      } else out.set(path, stat.isSymbolicLink() ? 'symlink' : 'other');
    }
  };
  await walk('');
  return out;
}

function firstDifference(left: Map<string, string>, right: Map<string, string>): string | undefined {
  for (const path of [...new Set([...left.keys(), ...right.keys()])].sort()) {
    if (left.get(path) !== right.get(path)) return path;
  }
  return undefined;
}

const proven = new Set<string>();

/**
 * Runs `populate` on the real root, then (once per distinct draw sequence in
 * this process) again on a scratch root beside it with the same draws, and
 * refuses the world when the two trees differ or the second run wants a draw
 * the first did not make.
 */
export async function populateTwice(world: string, populate: PopulateFunction, input: PopulateArguments, scratchParent: string): Promise<void> {
  const draws: number[] = [];
  const recording = randomFrom(() => {
    const value = input.random.next();
    draws.push(value);
    return value;
  });
  // The second run starts from what the data part of the seed wrote, as the first did.
  const scratch = await mkdtemp(join(scratchParent, 'escape-check-'));
  const scratchRoot = join(scratch, 'root');
  try {
    await cp(input.root, scratchRoot, { recursive: true, verbatimSymlinks: true });
    await populate({ ...input, random: recording });
    const key = `${world}\u0000${createHash('sha256').update(draws.join(',')).digest('hex')}`;
    if (proven.has(key)) return;
    let position = 0;
    const played = randomFrom(() => {
      if (position >= draws.length) throw new FactoryError('escape_hatch_nondeterministic', `${world}'s populate module drew more on its second run than on its first`, { fix: 'draw every choice from the random it is given, never from the clock or Math.random' });
      return draws[position++]!;
    });
    await populate({ ...input, random: played, root: scratchRoot });
    const difference = firstDifference(await treeDigest(input.root), await treeDigest(scratchRoot));
    if (difference !== undefined || position !== draws.length) {
      throw new FactoryError('escape_hatch_nondeterministic', `${world}'s populate module wrote different sandboxes on two runs with the same draws${difference !== undefined ? ` (first difference: ${difference})` : ` (it drew ${position} times, then ${draws.length})`}`, {
        fix: 'draw every choice from the random it is given, write no times or process ids, and list directories in sorted order',
      });
    }
    proven.add(key);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The module's views of a snapshot, run twice on copies and compared. */
const provenViews = new Set<string>();

/** The module's views of a snapshot; the first time in a process for this world, run twice on copies and compared. */
export async function viewsTwice(world: string, views: ViewsFunction, snapshot: JsonObject, root: string): Promise<JsonObject> {
  const copy = () => JSON.parse(JSON.stringify(snapshot)) as JsonObject;
  const first = await views({ snapshot: copy(), root });
  if (provenViews.has(world)) return first;
  const second = await views({ snapshot: copy(), root });
  if (canonicalJson(first) !== canonicalJson(second)) {
    throw new FactoryError('escape_hatch_nondeterministic', `${world}'s views module gave different views of the same snapshot on two runs`, { fix: 'compute views from the snapshot alone, in a fixed order' });
  }
  provenViews.add(world);
  return first as JsonObject & Record<string, JsonValue>;
}
