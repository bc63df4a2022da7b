// Owns the contract of a server world: a pinned third-party MCP server, run as
// a child over stdio in a fresh sandbox that our own seeded generator fills,
// read back by a state probe into the JSON snapshot that replay hashes and
// hidden predicates judge. Its declared normalisations make replay exact. The
// factory treats it like a scripted world through WorldSession
// (world-session.ts); policies, runner and verify cannot tell them apart.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import type { ArgumentGuard } from './servers/guarding-transport.js';
import type { Normalisation } from './servers/normalising-transport.js';
import type { Sandbox } from './servers/sandbox.js';
import type { ToolSpec, World } from './world-contract.js';

export interface ServerPackage {
  /** The npm package, exactly as installed in node_modules. */
  name: string;
  /** Exactly pinned in package.json; any other installed version is refused. */
  version: string;
  /** The server's entry file inside the package, run with this Node (a world whose `program` starts it otherwise may leave it empty). */
  entry: string;
}

/** How a child is started: a program, its first arguments (before the launch's), and the integrity the record names. */
export interface ServerProgram {
  command: string;
  args: string[];
  /** The lockfile's integrity of the package it comes from; `command` for a program found on PATH, `fixture` for a test's. */
  integrity: string;
}

/** What the generator and the launch line may need besides the sandbox. */
export interface PopulateContext {
  /** The lane's produced_at (ISO 8601): every date a generator writes, so the same seed gives the same bytes. */
  pinnedDate: string;
}

export interface ServerLaunch {
  /** Arguments after the entry file. */
  args: string[];
  /** Variables the adapter adds to the allowlisted environment (they still go through the secret filter). */
  env?: Record<string, string>;
}

export interface ServerWorld {
  readonly kind: 'server';
  readonly name: string;
  /** The adapter's version: bumped when its generator, probe or normalisations change. */
  readonly version: string;
  readonly description: string;
  /** Schema of the lane's `world.config` for this world. */
  readonly configSchema: JsonObject;
  /**
   * The pinned package's tools exactly as its tools/list answers them (a test
   * compares them with the live server), plus our `claims` overlays. Lanes are
   * checked against these; records carry what the live server listed.
   */
  readonly tools: readonly ToolSpec[];
  readonly package: ServerPackage;
  /** Where the sandbox shows to the model, in arguments and results (e.g. /sandbox). */
  readonly shownRoot: string;
  /** Why this server and what it varies, for `worlds show` and the README. */
  readonly notes?: string;
  launch(sandbox: Sandbox, context: PopulateContext): ServerLaunch;
  /** The seeded generator: fills an empty sandbox from `random` alone, inside `sandbox.root` only. */
  populate(sandbox: Sandbox, random: Random, config: JsonObject, context: PopulateContext): Promise<void>;
  /** Where sandboxes are made: by default under TMPDIR (some servers refuse paths under /tmp). */
  readonly sandboxParent?: () => string;
  /** Snapshot pointers (`*` for any one key or index) whose values differ between honest runs: `lanes check` refuses a predicate that pins one. */
  readonly volatile?: readonly string[];
  /** Throws a FactoryError (exit 2) when this machine cannot run the world: a system program it needs is missing. */
  preflight?(): void;
  /** How the child starts, where it is not `node <entry>` of the pinned package (a binary inside it, a program on PATH). */
  program?(): ServerProgram;
  /** The state probe: the sandbox as JSON, before normalisation. */
  probe(sandbox: Sandbox): Promise<JsonValue>;
  /** The declared normalisations, applied to every answer and to the snapshot, listed in the record. */
  normalisations(sandbox: Sandbox, pinnedDate: string): Normalisation[];
  /**
   * Declared argument guards, for a server that does not contain itself: a
   * call one refuses is answered with an isError result naming the rule and
   * never reaches the child (servers/guarding-transport.ts). Listed in the record.
   */
  readonly guards?: readonly ArgumentGuard[];
  /**
   * How one child per thread is kept alive across episodes and pointed at each
   * episode's fresh sandbox without a restart (servers/server-pool.ts). Absent:
   * a child per connection.
   */
  readonly reuse?: ServerReuse;
  /** The entry file to run; by default the pinned package's, resolved from node_modules. Test fixtures override it. */
  resolveEntry?(): string;
}

/** A JSON-RPC channel to a kept child of the pool's own, used between episodes and never recorded. */
export interface ManagementChannel {
  request(method: string, params?: JsonObject): Promise<JsonObject>;
  notify(method: string, params?: JsonObject): Promise<void>;
  /** Answers the requests the server makes of its client meanwhile (roots/list); undefined answers "method not found". */
  onServerRequest(handler: (method: string, params: JsonObject | undefined) => JsonObject | undefined): void;
}

export interface ServerReuse {
  /** How a kept child starts: arguments and variables, given a directory of its own (never an episode's sandbox). */
  launch(childDirectory: string, context: PopulateContext): ServerLaunch;
  /** Readies a new child's directory before it starts, given the first sandbox it will serve (a server that checks its directory as it starts). */
  prepare?(sandbox: Sandbox, childDirectory: string): Promise<void>;
  /** Points the live child at this episode's sandbox before the episode's session begins. */
  repoint(channel: ManagementChannel, sandbox: Sandbox, childDirectory: string): Promise<void>;
  /**
   * The rules a connection to the kept child applies instead of
   * `normalisations(sandbox, pinnedDate)`, where the child sees the root under
   * another path (a link in its own directory): the same ids and descriptions,
   * so a record cannot tell a kept child from a fresh one.
   */
  normalisations?(childDirectory: string, sandbox: Sandbox, pinnedDate: string): Normalisation[];
}

export type AnyWorld = World<any> | ServerWorld;

export function isServerWorld(world: AnyWorld): world is ServerWorld {
  return (world as ServerWorld).kind === 'server';
}
