// Owns one episode's world, whatever its kind: the initial snapshot, fresh
// connections to it (behind the fault layer when asked), the final snapshot,
// how it names itself in the record, and disposing of it. A scripted world is
// an in-memory state served in-process; a server world is a child process on
// a seeded sandbox (servers/server-session.ts); a fault-free connection to a
// scripted world leases a kept in-process pair (kept-connections.ts). Episode production and replay
// go through this seam only, so neither can tell the kinds apart.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { connectScriptedWorld } from './kept-connections.js';
import { isServerWorld, type AnyWorld } from './server-world.js';
import { drawServerSnapshot, openServerSession } from './servers/server-session.js';
import { worldActor } from './world-actor.js';
import type { WorldSession, WorldSessionOptions } from './world-session-contract.js';

export type { WorldSession, WorldSessionOptions };

export async function openWorldSession(world: AnyWorld, random: Random, config: JsonObject, options: WorldSessionOptions): Promise<WorldSession> {
  if (isServerWorld(world)) return openServerSession(world, random, config, options);
  const state = world.init(random, config);
  const instance = { world, state };
  return {
    name: world.name,
    version: world.version,
    tools: world.tools,
    initialSnapshot: world.snapshot(state),
    connect: (connectOptions) => connectScriptedWorld(instance, connectOptions),
    finalSnapshot: async () => world.snapshot(state),
    actor: () => worldActor(world, 'in-memory'),
    serverFaults: () => undefined,
    dispose: async () => undefined,
  };
}

/** The initial snapshot a seed gives, without serving anything (a server world's sandbox is made, probed and removed). */
export async function drawInitialSnapshot(world: AnyWorld, random: Random, config: JsonObject, pinnedDate: string): Promise<JsonValue> {
  if (isServerWorld(world)) return drawServerSnapshot(world, random, config, pinnedDate);
  return world.snapshot(world.init(random, config));
}
