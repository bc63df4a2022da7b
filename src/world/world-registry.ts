// Owns the catalog of worlds by name. Lanes name a world; the registry is the
// only place that maps the name to code or to a definition file. Server worlds
// written as data are found as `worlds/<name>.json` in the working directory
// and in the factory's own `worlds/`, loaded when first named, so every worker
// thread finds the same ones. Tests and library users may register their own.

import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../core/package-paths.js';
import { loadDefinition } from './servers/definition/definition-loader.js';
import { serverWorldFromDefinition } from './servers/definition/defined-server-world.js';
import { isServerWorld, type AnyWorld, type ServerWorld } from './server-world.js';
import type { World } from './world-contract.js';
import { filesystemServerWorld } from './servers/filesystem/filesystem-world.js';
import { memoryServerWorld } from './servers/memory/memory-world.js';
import { sqliteServerWorld } from './servers/sqlite/sqlite-world.js';
import { calendarWorld } from './calendar/calendar-world.js';
import { filesWorld } from './files/files-world.js';
import { issuesWorld } from './issues/issues-world.js';
import { shopWorld } from './shop/shop-world.js';
import { tasksWorld } from './tasks/tasks-world.js';

const worlds = new Map<string, AnyWorld>([issuesWorld, filesWorld, calendarWorld, shopWorld, tasksWorld, filesystemServerWorld, memoryServerWorld, sqliteServerWorld].map((world) => [world.name, world]));

/** The worlds every thread has from this module alone; a world registered at run time exists only in the thread that registered it. */
const builtIn = new Set(worlds.keys());
/** The worlds written in code here, whose names a definition file may not take. */
const inCode = new Set(worlds.keys());

export function registerWorld(world: AnyWorld): void {
  worlds.set(world.name, world);
  builtIn.delete(world.name);
}

/** True when a worker thread, which imports this module afresh, will find the same world under this name. */
export function isBuiltInWorld(name: string): boolean {
  return builtIn.has(name) || (!worlds.has(name) && definitionFiles().has(name));
}

/** Directories searched for definition files, in order: the working directory's worlds/, then the factory's own. */
export function worldDirectories(cwd = process.cwd()): string[] {
  const local = resolve(cwd, 'worlds');
  const builtin = resolve(PACKAGE_ROOT, 'worlds');
  return local === builtin ? [builtin] : [local, builtin];
}

/** Every definition file by world name (the first directory wins); catalogs beside them (`*.catalog.json`) are not definitions. */
export function definitionFiles(cwd = process.cwd()): Map<string, string> {
  const found = new Map<string, string>();
  for (const directory of worldDirectories(cwd)) {
    if (!existsSync(directory)) continue;
    for (const file of readdirSync(directory).sort()) {
      if (!file.endsWith('.json') || file.endsWith('.catalog.json')) continue;
      const name = file.slice(0, -'.json'.length);
      if (!found.has(name)) found.set(name, join(directory, file));
    }
  }
  return found;
}

/** Loads a definition file into a world and registers it under its name; the file's problems are exit 2. */
export function loadWorldFile(path: string): AnyWorld {
  const world = serverWorldFromDefinition(loadDefinition(path));
  if (inCode.has(world.name)) {
    throw new FactoryError('definition_invalid', `${path} names its world "${world.name}", which is a built-in world`, { fix: 'give the definition (and its file) another name' });
  }
  worlds.set(world.name, world);
  return world;
}

export function findWorld(name: string): AnyWorld | undefined {
  const known = worlds.get(name);
  if (known) return known;
  const file = definitionFiles().get(name);
  if (!file) return undefined;
  const world = serverWorldFromDefinition(loadDefinition(file));
  worlds.set(name, world);
  // Found by name from a file every thread can read: as good as built in.
  builtIn.add(name);
  return world;
}

export function getWorld(name: string): AnyWorld {
  const world = findWorld(name);
  if (!world) {
    throw new FactoryError('world_unknown', `unknown world "${name}"`, {
      fix: `use one of: ${worldNames().join(', ')}`,
    });
  }
  return world;
}

export function worldNames(): string[] {
  return [...new Set([...worlds.keys(), ...definitionFiles().keys()])].sort();
}

/** A scripted (in-memory) world by name; a server world or an unknown name is an error. */
export function getScriptedWorld(name: string): World<any> {
  const world = getWorld(name);
  if (isServerWorld(world)) throw new FactoryError('world_unknown', `"${name}" is a server world, not a scripted one`, { fix: `use one of: ${scriptedWorldNames().join(', ')}` });
  return world;
}

export function scriptedWorldNames(): string[] {
  return [...worlds.keys()].filter((name) => !isServerWorld(worlds.get(name)!)).sort();
}

/** Server worlds, those of definition files among them (listed without being loaded). */
export function serverWorldNames(): string[] {
  return worldNames().filter((name) => !worlds.has(name) || isServerWorld(worlds.get(name)!));
}

export function getServerWorld(name: string): ServerWorld {
  const world = getWorld(name);
  if (!isServerWorld(world)) throw new FactoryError('world_unknown', `"${name}" is a scripted world, not a server world`, { fix: `use one of: ${serverWorldNames().join(', ')}` });
  return world;
}
