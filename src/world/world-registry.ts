// Owns the catalog of worlds by name. Lanes name a world; the registry is the
// only place that maps the name to code. Tests and library users may register
// their own worlds.

import { FactoryError } from '../core/errors.js';
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

export function registerWorld(world: AnyWorld): void {
  worlds.set(world.name, world);
  builtIn.delete(world.name);
}

/** True when a worker thread, which imports this module afresh, will find the same world under this name. */
export function isBuiltInWorld(name: string): boolean {
  return builtIn.has(name);
}

export function findWorld(name: string): AnyWorld | undefined {
  return worlds.get(name);
}

export function getWorld(name: string): AnyWorld {
  const world = worlds.get(name);
  if (!world) {
    throw new FactoryError('world_unknown', `unknown world "${name}"`, {
      fix: `use one of: ${worldNames().join(', ')}`,
    });
  }
  return world;
}

export function worldNames(): string[] {
  return [...worlds.keys()].sort();
}

/** A scripted (in-memory) world by name; a server world or an unknown name is an error. */
export function getScriptedWorld(name: string): World<any> {
  const world = getWorld(name);
  if (isServerWorld(world)) throw new FactoryError('world_unknown', `"${name}" is a server world, not a scripted one`, { fix: `use one of: ${scriptedWorldNames().join(', ')}` });
  return world;
}

export function scriptedWorldNames(): string[] {
  return worldNames().filter((name) => !isServerWorld(worlds.get(name)!));
}

export function serverWorldNames(): string[] {
  return worldNames().filter((name) => isServerWorld(worlds.get(name)!));
}

export function getServerWorld(name: string): ServerWorld {
  const world = getWorld(name);
  if (!isServerWorld(world)) throw new FactoryError('world_unknown', `"${name}" is a scripted world, not a server world`, { fix: `use one of: ${serverWorldNames().join(', ')}` });
  return world;
}
