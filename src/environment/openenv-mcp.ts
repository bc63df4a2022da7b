// Owns OpenEnv's JSON-RPC (`POST /mcp`, and `mcp` frames on its socket):
// tools/list and tools/call, and its session methods mapped onto episodes (a
// session id is an episode id, so the native API reaches the same episode).
// A request without a session runs on an episode opened for it alone and
// closed after, as OpenEnv runs one on a temporary environment. Every answer
// is a JSON-RPC 2.0 object, errors included; the HTTP status is always 200.

import { errorMessage } from '../core/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';
import type { Lane } from '../lanes/lane.js';
import type { EnvironmentEpisode } from './environment-episode.js';
import type { EnvironmentHost } from './environment-host.js';
import { EnvironmentError } from './environment-protocol.js';
import { callToolResult, OpenEnvError, parseOpenEnvReset } from './openenv-protocol.js';

/** JSON-RPC's error codes, as OpenEnv answers them. */
export const JSON_RPC = { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internalError: -32603, serverError: -32000 } as const;

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: JsonValue = null,
  ) {
    super(message);
  }
}

export interface JsonRpcContext {
  host: EnvironmentHost;
  /** On a socket: the episode its last reset opened (a session there is the socket's own). */
  socket?: { episode(): EnvironmentEpisode | undefined };
}

const ENVELOPE_KEYS = ['jsonrpc', 'method', 'params', 'id'];

/** A JSON-RPC error object for a body that could not be read at all. */
export function parseErrorAnswer(detail?: string): JsonObject {
  return { jsonrpc: '2.0', id: null, error: { code: JSON_RPC.parseError, message: detail ? `Parse error: ${detail}` : 'Parse error', data: null } };
}

/** The answer to one JSON-RPC request (already parsed from JSON). */
export async function answerJsonRpc(request: unknown, context: JsonRpcContext): Promise<JsonObject> {
  // OpenEnv takes one request per body: a batch (a list) or any other value is not one it can read.
  if (!isJsonObject(request)) return parseErrorAnswer('a request is one JSON object (batches are not taken)');
  const invalid = envelopeProblem(request);
  if (invalid !== undefined) return { jsonrpc: '2.0', id: null, error: { code: JSON_RPC.invalidRequest, message: `Invalid request: ${invalid}`, data: null } };
  const id = (request.id ?? null) as JsonValue;
  try {
    const result = await dispatch(request.method as string, (request.params ?? {}) as JsonObject, context);
    return { jsonrpc: '2.0', id, result };
  } catch (error) {
    const refused = rpcErrorOf(error, context.host);
    return { jsonrpc: '2.0', id, error: { code: refused.code, message: refused.message, data: refused.data } };
  }
}

function envelopeProblem(request: JsonObject): string | undefined {
  const extra = Object.keys(request).filter((key) => !ENVELOPE_KEYS.includes(key));
  if (extra.length > 0) return `${extra[0]}: is not a field of a JSON-RPC request (the fields are ${ENVELOPE_KEYS.join(', ')})`;
  if (request.jsonrpc !== '2.0') return 'jsonrpc: must be "2.0"';
  if (typeof request.method !== 'string' || request.method.length === 0) return 'method: is required (a string, e.g. "tools/list")';
  if (request.params !== undefined && !isJsonObject(request.params)) return 'params: must be an object';
  if (request.id !== undefined && request.id !== null && typeof request.id !== 'string' && !Number.isInteger(request.id)) return 'id: must be a string, an integer or null';
  return undefined;
}

async function dispatch(method: string, params: JsonObject, context: JsonRpcContext): Promise<JsonValue> {
  const { host } = context;
  switch (method) {
    case 'tools/list':
      return withEpisode(params, context, async (episode) => ({ tools: episode.tools().map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.input_schema })) }));
    case 'tools/call': {
      if (typeof params.name !== 'string' || params.name.length === 0) throw new RpcError(JSON_RPC.invalidParams, "Missing 'name' in params");
      if (params.arguments !== undefined && !isJsonObject(params.arguments)) throw new RpcError(JSON_RPC.invalidParams, "'arguments' must be an object");
      const name = params.name;
      return withEpisode(params, context, async (episode) => {
        const answer = await host.step(episode.id, { kind: 'tool_call', name, arguments: params.arguments ?? {} }, []);
        const reply = answer.messages.find((message) => message.role === 'tool');
        if (!reply) throw new RpcError(JSON_RPC.internalError, `episode ${episode.id} ended before the call was made (${answer.reward?.outcome ?? 'done'})`);
        return { ...callToolResult(reply.content, answer.tool_results[0]), meta: null };
      });
    }
    case 'openenv/session/create': {
      const own = context.socket?.episode();
      if (context.socket) {
        if (!own) throw new RpcError(JSON_RPC.serverError, 'this socket has no episode yet: send {"type": "reset"} first');
        return { session_id: own.id };
      }
      const { episode } = await host.open(resetOf(params, host.lane));
      return { session_id: episode.id };
    }
    case 'openenv/session/close': {
      const sessionId = params.session_id;
      if (typeof sessionId !== 'string' || sessionId.length === 0) throw new RpcError(JSON_RPC.invalidParams, "Invalid params - 'session_id' is required");
      if (context.socket?.episode()?.id === sessionId) throw new RpcError(JSON_RPC.invalidRequest, 'Cannot close active WebSocket-managed session via MCP method');
      try {
        await host.close(sessionId, 'closed by openenv/session/close');
      } catch (error) {
        if (error instanceof EnvironmentError && error.status === 404) throw new RpcError(JSON_RPC.invalidParams, `Unknown session_id: ${sessionId}`);
        throw error;
      }
      return { session_id: sessionId, closed: true };
    }
    default:
      throw new RpcError(JSON_RPC.methodNotFound, `Method not found: ${method}`);
  }
}

/** The episode a request without a session opens: its params read as a socket's reset reads its data (task, seed, agent). */
function resetOf(params: JsonObject, lane: Lane) {
  const { session_id: _session, name: _name, arguments: _arguments, ...rest } = params;
  return parseOpenEnvReset(rest, lane);
}

/**
 * Runs `work` on the episode the request names: `session_id` (over HTTP), the
 * socket's own, or else one opened for this request alone (task and seed as a
 * reset with the same params) and closed after.
 */
async function withEpisode<T>(params: JsonObject, context: JsonRpcContext, work: (episode: EnvironmentEpisode) => Promise<T>): Promise<T> {
  const { host } = context;
  const sessionId = params.session_id;
  if (context.socket) {
    const own = context.socket.episode();
    if (own) return work(own);
  } else if (sessionId !== undefined && sessionId !== null) {
    if (typeof sessionId !== 'string') throw new RpcError(JSON_RPC.invalidParams, "'session_id' must be a string");
    let episode: EnvironmentEpisode;
    try {
      episode = host.find(sessionId);
    } catch (error) {
      if (error instanceof EnvironmentError && error.status === 404) throw new RpcError(JSON_RPC.invalidParams, `Unknown session_id: ${sessionId}`, { reason: error.code, detail: error.message });
      throw error;
    }
    return work(episode);
  }
  const { episode } = await host.open(resetOf(params, host.lane));
  try {
    return await work(episode);
  } finally {
    await host.close(episode.id, 'a JSON-RPC request without a session ended').catch(() => undefined);
  }
}

function rpcErrorOf(error: unknown, host: EnvironmentHost): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof OpenEnvError) return new RpcError(error.code === 'VALIDATION_ERROR' ? JSON_RPC.invalidParams : JSON_RPC.internalError, error.message, error.extra);
  if (error instanceof EnvironmentError) {
    const native: JsonObject = { reason: error.code, ...(error.details.fix ? { fix: error.details.fix } : {}) };
    if (error.code === 'too_many_episodes' || error.code === 'shutting_down') {
      return new RpcError(JSON_RPC.serverError, error.message, { active_sessions: host.liveCount(), max_sessions: host.maxEpisodes, ...native });
    }
    return new RpcError(error.status === 400 ? JSON_RPC.invalidParams : JSON_RPC.internalError, error.message, native);
  }
  return new RpcError(JSON_RPC.internalError, errorMessage(error));
}
