// Test helpers shared by the server world tests: a whole session of calls on
// a fresh sandbox from a seed (what a record would hold of it), and the live
// catalog of a server world beside its pinned copy.

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { substream } from '../../../src/core/random.js';
import { readListedCatalog, type ListedTool } from '../../../src/world/servers/listed-catalog.js';
import type { ServerWorld } from '../../../src/world/server-world.js';
import { openWorldSession } from '../../../src/world/world-session.js';

export const PINNED = '2026-01-15T12:00:00Z';

export type Call = [name: string, args: Record<string, unknown>];

/**
 * Opens a session of `world` on the sandbox `seed` draws, makes the calls
 * `plan` chooses from the initial snapshot, one connection for all, and
 * disposes of it: initial and final snapshots, every result, the world actor,
 * the pids of the children that served it, and whatever `plan` returned beside.
 */
export async function sessionCalls<Extra extends object>(world: ServerWorld, seed: number, plan: (initial: any) => { calls: Call[] } & Extra) {
  const pids: number[] = [];
  const session = await openWorldSession(world, substream(seed, 'world'), {}, {
    pinnedDate: PINNED,
    onEvent: (event, data) => {
      if (event === 'server_started' && typeof data.pid === 'number') pids.push(data.pid);
    },
  });
  try {
    const initial = session.initialSnapshot as any;
    const { calls, ...extra } = plan(initial);
    const connection = await session.connect({});
    const results: Array<{ name: string; args: Record<string, unknown>; result: CallToolResult }> = [];
    try {
      for (const [name, args] of calls) results.push({ name, args, result: (await connection.client.callTool({ name, arguments: args })) as CallToolResult });
    } finally {
      await connection.close();
    }
    const final = (await session.finalSnapshot()) as any;
    return { ...(extra as Omit<Extra, 'calls'>), initial, final, results, actor: session.actor(), pids };
  } finally {
    await session.dispose();
  }
}

/** What the live server lists (all pages) and says it is, beside the pinned catalog at `catalog` (a URL relative to this file's importer). */
export async function liveAndPinnedCatalog(world: ServerWorld, catalog: URL): Promise<{ listed: ListedTool[]; pinned: ListedTool[]; serverInfo: unknown }> {
  const session = await openWorldSession(world, substream(0, 'world'), {}, { pinnedDate: PINNED });
  try {
    const connection = await session.connect({});
    const listed: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await connection.client.listTools(cursor ? { cursor } : {});
      listed.push(...(page.tools as ListedTool[]));
      cursor = page.nextCursor;
    } while (cursor);
    const serverInfo = connection.client.getServerVersion();
    await connection.close();
    return { listed, pinned: readListedCatalog(catalog), serverInfo };
  } finally {
    await session.dispose();
  }
}
