// Owns what every check of the world conformance suite shares: the shape of a
// check's outcome, the world under test with the seed's config and pinned
// date, and the small moves each check makes on a live connection (list every
// page of tools, call a tool and say whether it was refused).

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../core/errors.js';
import type { JsonObject } from '../core/json-value.js';
import { substream } from '../core/random.js';
import type { Lane } from '../lanes/lane.js';
import type { LaneEpisode } from './conformance-episodes.js';
import type { Connection } from '../world/in-process-connection.js';
import type { ListedTool } from '../world/servers/listed-catalog.js';
import type { AnyWorld } from '../world/server-world.js';
import { openWorldSession, type WorldSession, type WorldSessionOptions } from '../world/world-session.js';

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface ConformanceCheck {
  /** Stable id, for scripts: seed, probe, catalog, sandbox, cleanup, faults, replay. */
  id: string;
  title: string;
  status: CheckStatus;
  /** What was seen; for a skip, why the check cannot apply to this world. */
  detail: string;
}

export interface ConformanceContext {
  world: AnyWorld;
  /** The lane's `world.config` when a lane names the world, else {}. */
  config: JsonObject;
  pinnedDate: string;
  /** The lane whose scripted episode the replay check plays; undefined when none names this world. */
  lane: Lane | undefined;
  /** Why no scripted episode can be drawn for this world, or undefined when one can. */
  noEpisode: string | undefined;
  /** The lane's scripted episodes (produced once, on first use); empty when `noEpisode` says why. */
  episodes: () => Promise<LaneEpisode[]>;
}

/** The date a world shows for every date it prints when no lane pins one. */
export const DEFAULT_PINNED_DATE = '2026-01-15T12:00:00Z';

export function openSeeded(context: ConformanceContext, seed: number, options: Partial<WorldSessionOptions> = {}, world: AnyWorld = context.world): Promise<WorldSession> {
  return openWorldSession(world, substream(seed, 'world'), context.config, { pinnedDate: context.pinnedDate, ...options });
}

/** Every page of tools/list, as the client sees it. */
export async function listEveryTool(connection: Connection): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    if (++pages > 1000) throw new Error('tools/list did not end after 1000 pages');
    const page = await connection.client.listTools(cursor ? { cursor } : {});
    tools.push(...(page.tools as ListedTool[]));
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

export interface CallOutcome {
  /** Answered without isError and without a JSON-RPC error. */
  ok: boolean;
  result?: CallToolResult;
  /** The JSON-RPC error or transport failure, when there was no result. */
  error?: string;
  /** Everything the answer said, as text (to search for leaked content). */
  text: string;
}

export async function callTool(connection: Connection, name: string, args: JsonObject, timeoutMs = 15_000): Promise<CallOutcome> {
  try {
    const result = (await connection.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })) as CallToolResult;
    return { ok: result.isError !== true, result, text: JSON.stringify(result) };
  } catch (error) {
    return { ok: false, error: errorMessage(error), text: errorMessage(error) };
  }
}

export function check(id: string, title: string, status: CheckStatus, detail: string): ConformanceCheck {
  return { id, title, status, detail };
}
