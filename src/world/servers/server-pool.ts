// Owns keeping one child per server world per thread alive across episodes,
// for servers that can be pointed at a fresh sandbox without a restart
// (ServerWorld.reuse): the child is started once in the pool's own directory,
// each episode's connection leases it (a fresh MCP initialize on the same
// pipe, request ids of its own so a late answer meant for an earlier lease is
// dropped, never delivered), and between leases the world re-points it at the
// next sandbox over a management channel that no record sees. A child that
// faults is killed and forgotten; the next lease starts another. Set
// EPISODE_FACTORY_FRESH_SERVERS=1 for a child per connection instead; records
// are the same bytes either way (a test proves it).

import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ChildEnvironment } from '../../core/child-environment.js';
import type { JsonObject } from '../../core/json-value.js';
import type { ManagementChannel, PopulateContext, ServerProgram, ServerWorld } from '../server-world.js';
import type { Sandbox } from './sandbox.js';
import type { ServerFault } from '../server-fault.js';
import { ChildTransport, killGroup } from './child-transport.js';

const MANAGEMENT_TIMEOUT_MS = 10_000;
/**
 * A kept child is retired after this many leases: a server may count requests per method over a minute
 * (obsidian-mcp refuses the 1,001st `initialize` in 60 s), and a fast run leases more often than that.
 */
export const LEASES_PER_CHILD = 150;

export function poolingEnabled(world: ServerWorld): boolean {
  return world.reuse !== undefined && process.env.EPISODE_FACTORY_FRESH_SERVERS !== '1';
}

type Id = string | number;

interface Lease {
  number: number;
  transport: LeaseTransport;
  onServerFault?: (fault: ServerFault) => void;
}

/** One kept child, its message routing, and the lease using it (if any). */
class KeptChild {
  readonly child: ChildTransport;
  private lease: Lease | undefined;
  private leases = 0;
  private readonly management = new Map<string, { resolve: (result: JsonObject) => void; reject: (error: Error) => void }>();
  private managementCount = 0;
  private serverRequestHandler: ((method: string, params: JsonObject | undefined) => JsonObject | undefined) | undefined;
  stderr = '';

  constructor(
    program: ServerProgram,
    args: readonly string[],
    /** The child's own directory inside the pool's: its cwd and HOME. */
    readonly directory: string,
    /** The pinned date its launch line was made for (a world's launch line may name it): it is leased for that date only. */
    readonly pinnedDate: string,
    env: ChildEnvironment,
    private readonly onGone: (kept: KeptChild) => void,
  ) {
    this.child = new ChildTransport({
      command: program.command,
      args: [...program.args, ...args],
      cwd: directory,
      env,
      onStderr: (text) => {
        if (this.stderr.length < 16 * 1024) this.stderr += text;
      },
      onServerFault: (fault) => this.lease?.onServerFault?.(fault),
    });
    this.child.onmessage = (message) => this.route(message);
    this.child.onclose = () => {
      for (const { reject } of this.management.values()) reject(new Error('the kept server closed'));
      this.management.clear();
      this.lease?.transport.lost();
      this.lease = undefined;
      this.onGone(this);
    };
  }

  get busy(): boolean {
    return this.lease !== undefined;
  }

  private route(message: JSONRPCMessage): void {
    const record = message as { id?: Id; method?: string; params?: JsonObject };
    if (record.method === undefined && typeof record.id === 'string' && this.management.has(record.id)) {
      const pending = this.management.get(record.id)!;
      this.management.delete(record.id);
      const error = (message as { error?: { message?: string } }).error;
      if (error) pending.reject(new Error(error.message ?? 'error'));
      else pending.resolve(((message as { result?: JsonObject }).result ?? {}) as JsonObject);
      return;
    }
    if (record.method !== undefined && record.id !== undefined && this.serverRequestHandler) {
      // A request the server makes of its client while we manage it (roots/list).
      const result = this.serverRequestHandler(record.method, record.params);
      void this.child.send((result ? { jsonrpc: '2.0', id: record.id, result } : { jsonrpc: '2.0', id: record.id, error: { code: -32601, message: 'Method not found' } }) as JSONRPCMessage).catch(() => undefined);
      return;
    }
    this.lease?.transport.deliver(message);
  }

  /** A channel of our own ids, for re-pointing the child between episodes. */
  channel(): ManagementChannel {
    return {
      request: (method, params) =>
        new Promise<JsonObject>((resolve, reject) => {
          const id = `episode-factory-pool-${++this.managementCount}`;
          const timer = setTimeout(() => {
            this.management.delete(id);
            reject(new Error(`the kept server did not answer ${method} within ${MANAGEMENT_TIMEOUT_MS} ms`));
          }, MANAGEMENT_TIMEOUT_MS);
          this.management.set(id, {
            resolve: (result) => {
              clearTimeout(timer);
              resolve(result);
            },
            reject: (error) => {
              clearTimeout(timer);
              reject(error);
            },
          });
          this.child.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) } as JSONRPCMessage).catch((error: Error) => {
            clearTimeout(timer);
            this.management.delete(id);
            reject(error);
          });
        }),
      notify: (method, params) => this.child.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) } as JSONRPCMessage),
      onServerRequest: (handler) => {
        this.serverRequestHandler = handler;
      },
    };
  }

  endManagement(): void {
    this.serverRequestHandler = undefined;
  }

  take(onServerFault: ((fault: ServerFault) => void) | undefined): LeaseTransport {
    const number = ++this.leases;
    const transport = new LeaseTransport(this, number);
    this.lease = { number, transport, ...(onServerFault ? { onServerFault } : {}) };
    this.child.setReferenced(true);
    return transport;
  }

  release(transport: LeaseTransport): void {
    if (this.lease?.transport !== transport) return;
    this.lease = undefined;
    this.child.setReferenced(false);
    if (this.spent) void this.child.close();
  }

  /** Leased as often as a child may be: the next lease starts another. */
  get spent(): boolean {
    return this.leases >= LEASES_PER_CHILD;
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.child.send(message);
  }
}

/**
 * What an episode's connection talks to instead of the child itself: its
 * request ids are made its own on the way down and restored on the way up, so
 * an answer to an earlier lease's request (a call that timed out) is dropped.
 * Closing it returns the child to the pool; killing the child is the pool's.
 */
export class LeaseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private open = true;
  private readonly prefix: string;

  constructor(
    private readonly kept: KeptChild,
    number: number,
  ) {
    this.prefix = `lease-${number}:`;
  }

  get child(): ChildTransport {
    return this.kept.child;
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.open) throw new Error('not connected');
    const record = message as { id?: Id; method?: string };
    if (record.method !== undefined && record.id !== undefined) {
      return this.kept.send({ ...message, id: `${this.prefix}${JSON.stringify(record.id)}` } as JSONRPCMessage);
    }
    return this.kept.send(message);
  }

  deliver(message: JSONRPCMessage): void {
    if (!this.open) return;
    const record = message as { id?: Id; method?: string };
    if (record.method === undefined && record.id !== undefined) {
      if (typeof record.id !== 'string' || !record.id.startsWith(this.prefix)) return;
      this.onmessage?.({ ...message, id: JSON.parse(record.id.slice(this.prefix.length)) as Id } as JSONRPCMessage);
      return;
    }
    this.onmessage?.(message);
  }

  /** The child died under this lease. */
  lost(): void {
    if (!this.open) return;
    this.open = false;
    this.onclose?.();
  }

  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    this.kept.release(this);
    this.onclose?.();
  }
}

/** The kept children of this thread, by world name. */
const kept = new Map<string, { directory: string; children: Set<KeptChild> }>();
let exitHook = false;

function poolOf(world: ServerWorld) {
  let pool = kept.get(world.name);
  if (!pool) {
    // Beside the world's sandboxes: a server that refuses TMPDIR (obsidian-mcp) refuses its kept child's directory there too.
    const parent = world.sandboxParent?.() ?? tmpdir();
    mkdirSync(parent, { recursive: true });
    const directory = realpathSync(mkdtempSync(join(parent, `episode-factory-${world.name}-pool-`)));
    pool = { directory, children: new Set() };
    kept.set(world.name, pool);
  }
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const { directory, children } of kept.values()) {
        for (const child of children) killGroup(child.child.pid);
        rmSync(directory, { recursive: true, force: true });
      }
    });
  }
  return pool;
}

export interface PooledLease {
  transport: LeaseTransport;
  stderr: () => string;
  pid: number | undefined;
  /** The kept child's own directory (where a world's link to the sandbox lives). */
  directory: string;
}

/**
 * A lease on a kept child pointed at `sandbox`: an idle one if the thread has
 * it, else a new one. `environment` builds the child's environment from the
 * pool's directory (the same allowlist as a fresh child).
 */
export async function leaseKeptChild(
  world: ServerWorld,
  program: ServerProgram,
  context: PopulateContext,
  sandbox: Sandbox,
  environment: (poolDirectory: string, added: Record<string, string> | undefined) => ChildEnvironment,
  onServerFault: ((fault: ServerFault) => void) | undefined,
): Promise<PooledLease> {
  const reuse = world.reuse!;
  const pool = poolOf(world);
  let child = [...pool.children].find((candidate) => !candidate.busy && !candidate.spent && !candidate.child.closed && candidate.pinnedDate === context.pinnedDate);
  if (!child) {
    // A directory of the child's own (its cwd, HOME and whatever its world keeps there, e.g. server-memory's link), so two kept children never share one.
    const directory = mkdtempSync(join(pool.directory, 'child-'));
    mkdirSync(join(directory, 'home'));
    const launch = reuse.launch(directory, context);
    child = new KeptChild(program, launch.args, directory, context.pinnedDate, environment(directory, launch.env), (gone) => {
      pool.children.delete(gone);
      rmSync(directory, { recursive: true, force: true });
    });
    pool.children.add(child);
  }
  const chosen = child;
  // Taken before any await: another episode of this thread (a model run with --concurrency) must not pick it too.
  const transport = chosen.take(onServerFault);
  try {
    if (!chosen.child.pid) {
      await reuse.prepare?.(sandbox, chosen.directory);
      await chosen.child.start();
    }
    await reuse.repoint(chosen.channel(), sandbox, chosen.directory);
  } catch (error) {
    await chosen.child.close();
    throw error;
  } finally {
    chosen.endManagement();
  }
  return { transport, stderr: () => chosen.stderr, pid: chosen.child.pid, directory: chosen.directory };
}

/** Kills every kept child of this thread (tests; a thread about to end). */
export async function closeKeptChildren(): Promise<void> {
  for (const [name, { directory, children }] of kept) {
    await Promise.all([...children].map((child) => child.child.close()));
    rmSync(directory, { recursive: true, force: true });
    kept.delete(name);
  }
}
