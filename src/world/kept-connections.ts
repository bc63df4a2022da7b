// Owns keeping in-process MCP Server+Client pairs for scripted worlds alive
// across episodes on this thread (issue 17): a pair is built and handshaken
// once, then leased to one episode at a time, its server re-pointed at that
// episode's fresh world state. The handshake and the Server and Client objects
// are then paid per pair, not per episode, and so is tools/list: a kept server
// answers it from its world's prepared listing (mcp-server-binding.ts, built
// once per world object, one page) with no fault layer in between, so every
// listing on a pair answers what the first one did, and later sessions take
// that catalog instead of asking again (a tools/list_changed still makes a
// session list over the wire at its next turn boundary). Only fault-free
// episodes lease: an episode with a fault plan gets a fresh pair with the
// fault layer between client and server, exactly as before. A pair goes back
// to the pool only after a clean episode (the session says so, nothing left
// in flight, no transport or protocol error seen); anything else closes it.
// Set EPISODE_FACTORY_FRESH_CONNECTIONS=1 for a fresh pair per connection
// instead; records are the same bytes either way (a test proves it). Each
// worker thread has its own module instance, hence its own pool.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDescriptor } from '../core/conversation.js';
import { connectInProcess, createClient, type ConnectOptions, type Connection } from './in-process-connection.js';
import { createWorldServer } from './mcp-server-binding.js';
import type { World, WorldInstance } from './world-contract.js';

/** More free pairs than this per world are closed instead of kept (the pool only grows to the concurrency in use). */
const MAX_FREE_PER_WORLD = 64;

export function keptConnectionsEnabled(): boolean {
  return process.env.EPISODE_FACTORY_FRESH_CONNECTIONS !== '1';
}

type Id = string | number;

interface KeptPair {
  /** What the server's handlers read; re-pointed at each lease's state, emptied between leases. */
  readonly instance: { world: World<any>; state: unknown };
  readonly server: Server;
  readonly client: Client;
  /** Requests the client sent that have no response yet. */
  readonly pending: Set<Id>;
  /** A transport close or a protocol error: never lent again. */
  broken: boolean;
  /** The pool's own onclose and onerror: they mark the pair broken. */
  readonly markBroken: () => void;
  /** The catalog the first session on this pair listed: what every later listing would answer. */
  catalog: readonly ToolDescriptor[] | undefined;
}

const free = new WeakMap<World<any>, KeptPair[]>();
const serverOfClient = new WeakMap<Client, Server>();
const counts = { opened: 0, leased: 0, closed: 0 };

/** Pairs handshaken, leases handed out and pairs closed on this thread since it started (for tests). */
export function keptConnectionCounts(): Readonly<typeof counts> {
  return { ...counts };
}

/** The server a kept client talks to (tests use it to speak as the world's server). */
export function keptServerOf(client: Client): Server | undefined {
  return serverOfClient.get(client);
}

/**
 * A connection to a scripted world's live state: a leased kept pair when the
 * episode has no fault plan and keeping is on, otherwise a fresh pair (behind
 * the fault layer when asked), as every episode had before.
 */
export function connectScriptedWorld(instance: WorldInstance, options: ConnectOptions = {}): Promise<Connection> {
  if (options.faults || !keptConnectionsEnabled()) return connectInProcess(createWorldServer(instance), options);
  return leaseKeptConnection(instance);
}

async function leaseKeptConnection(instance: WorldInstance): Promise<Connection> {
  const pair = takeFree(instance.world) ?? (await openPair(instance.world));
  pair.instance.state = instance.state;
  counts.leased++;
  let ended = false;
  return {
    client: pair.client,
    listed: {
      catalog: pair.catalog,
      remember: (catalog) => {
        pair.catalog ??= catalog.slice();
      },
    },
    close: async (ending) => {
      if (ended) return;
      ended = true;
      await release(pair, ending?.clean === true);
    },
  };
}

function takeFree(world: World<any>): KeptPair | undefined {
  const list = free.get(world);
  while (list && list.length > 0) {
    const pair = list.pop()!;
    if (!pair.broken) return pair;
    void closePair(pair);
  }
  return undefined;
}

async function openPair(world: World<any>): Promise<KeptPair> {
  const instance: KeptPair['instance'] = { world, state: undefined };
  const server = createWorldServer(instance);
  const client = createClient();
  const pending = new Set<Id>();
  const pair: KeptPair = {
    instance,
    server,
    client,
    pending,
    broken: false,
    markBroken: () => {
      pair.broken = true;
    },
    catalog: undefined,
  };
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  try {
    await server.connect(serverTransport);
    await client.connect(clientTransport);
  } catch (error) {
    await client.close().catch(() => undefined);
    await server.close().catch(() => undefined);
    throw error;
  }
  counts.opened++;
  serverOfClient.set(client, server);
  // Count what is in flight at the transport, whoever sent it: a pair is
  // lent again only when every request it carried has been answered.
  const send = clientTransport.send.bind(clientTransport);
  clientTransport.send = (message: JSONRPCMessage, options) => {
    if ('method' in message && 'id' in message) pending.add(message.id);
    return send(message, options);
  };
  const deliver = clientTransport.onmessage;
  clientTransport.onmessage = (message, extra) => {
    if (!('method' in message) && 'id' in message && message.id !== undefined) pending.delete(message.id);
    deliver?.(message, extra);
  };
  client.onclose = pair.markBroken;
  client.onerror = pair.markBroken;
  server.onerror = pair.markBroken;
  return pair;
}

/**
 * Back to the pool after a clean lease, with everything the episode's tool
 * session hung on the client taken off again (its onclose wrapper, its
 * list_changed handler) and the server pointed at no state, so nothing of one
 * episode reaches the next. The client's output-schema cache stays as the
 * pair's first tools/list left it, which is what any later listing would
 * leave (and the harness checks output against its own catalog anyway).
 */
async function release(pair: KeptPair, clean: boolean): Promise<void> {
  pair.instance.state = undefined;
  if (!clean || pair.broken || pair.pending.size > 0) {
    await closePair(pair);
    return;
  }
  pair.client.onclose = pair.markBroken;
  pair.client.removeNotificationHandler('notifications/tools/list_changed');
  let list = free.get(pair.instance.world);
  if (!list) free.set(pair.instance.world, (list = []));
  if (list.length >= MAX_FREE_PER_WORLD) {
    await closePair(pair);
    return;
  }
  list.push(pair);
}

async function closePair(pair: KeptPair): Promise<void> {
  pair.broken = true;
  counts.closed++;
  await pair.client.close().catch(() => undefined);
  await pair.server.close().catch(() => undefined);
}
