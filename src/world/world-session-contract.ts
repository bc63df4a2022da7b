// Owns what one episode's world is to the code that runs and replays it,
// whatever its kind: the session's shape and the options it opens with.
// Scripted worlds (world-session.ts) and server worlds
// (servers/server-session.ts) both implement it, so it lives apart from both.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import type { ConnectOptions, Connection } from './in-process-connection.js';
import type { RecordedServerFault } from './server-fault.js';
import type { ToolSpec } from './world-contract.js';

export type { RecordedServerFault };

export interface WorldSession {
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
  /**
   * What the record says of the faults of the world's own process: a server
   * world lists them (an empty list too), a scripted world has no process and
   * its records carry no such field (undefined), as they always have.
   */
  serverFaults(faults: readonly RecordedServerFault[]): RecordedServerFault[] | undefined;
  /** Ends the world: kills any child, removes any sandbox. Safe to call twice. */
  dispose(): Promise<void>;
}

export interface WorldSessionOptions {
  /** The lane's pinned date: a server world shows it for every date its server prints. */
  pinnedDate: string;
  /** Diagnostics that belong in the trace, never in a record (a child's stderr, spawn times). */
  onEvent?: (event: string, data: JsonObject) => void;
}
