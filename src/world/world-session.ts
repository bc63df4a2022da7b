// Owns one episode's world, whatever its kind: the initial snapshot, fresh
// connections to it (behind the fault layer when asked), the final snapshot,
// how it names itself in the record, and disposing of it. A scripted world is
// an in-memory state served in-process; a server world is a child process on
// a seeded sandbox (servers/server-session.ts); a fault-free connection to a
// scripted world leases a kept in-process pair (kept-connections.ts). Episode production and replay
// go through this seam only, so neither can tell the kinds apart.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import type { ConnectOptions, Connection } from './in-process-connection.js';
import { connectScriptedWorld } from './kept-connections.js';
import { isServerWorld, type AnyWorld } from './server-world.js';
import { drawServerSnapshot, openServerSession } from './servers/server-session.js';
import { worldActor } from './world-actor.js';
import type { ToolSpec } from './world-contract.js';

export interface WorldSession {
  readonly kind: 'scripted' | 'server';
  readonly name: string;
  readonly version: string;
  /** The declared catalog with our overlays (claims), for evidence checks. */
  readonly tools: readonly ToolSpec[];
  readonly initialSnapshot: JsonValue;
  /** A connection to the same world (fresh, or a kept one re-pointed at it); called again after a dropped connection. */
  connect(options: ConnectOptions): Promise<Connection>;
  finalSnapshot(): Promise<JsonValue>;
  /** The world actor of the record (for a server world: package, integrity, what it said it was, normalisations). */
  actor(): JsonObject;
  /** Ends the world: kills any child, removes any sandbox. Safe to call twice. */
  dispose(): Promise<void>;
}

export interface WorldSessionOptions {
  /** The lane's pinned date: a server world shows it for every date its server prints. */
  pinnedDate: string;
  /** Diagnostics that belong in the trace, never in a record (a child's stderr, spawn times). */
  onEvent?: (event: string, data: JsonObject) => void;
}

export async function openWorldSession(world: AnyWorld, random: Random, config: JsonObject, options: WorldSessionOptions): Promise<WorldSession> {
  if (isServerWorld(world)) return openServerSession(world, random, config, options);
  const state = world.init(random, config);
  const instance = { world, state };
  return {
    kind: 'scripted',
    name: world.name,
    version: world.version,
    tools: world.tools,
    initialSnapshot: world.snapshot(state),
    connect: (connectOptions) => connectScriptedWorld(instance, connectOptions),
    finalSnapshot: async () => world.snapshot(state),
    actor: () => worldActor(world, 'in-memory'),
    dispose: async () => undefined,
  };
}

/** The initial snapshot a seed gives, without serving anything (a server world's sandbox is made, probed and removed). */
export async function drawInitialSnapshot(world: AnyWorld, random: Random, config: JsonObject, pinnedDate: string): Promise<JsonValue> {
  if (isServerWorld(world)) return drawServerSnapshot(world, random, config, pinnedDate);
  return world.snapshot(world.init(random, config));
}
