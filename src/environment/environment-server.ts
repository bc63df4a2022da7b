// Owns `env serve`: a lane's tasks as an environment over HTTP (JSON bodies,
// loopback by default) for online training. /reset opens an episode on a
// fresh world of its own and answers with the opening messages and the tool
// catalog; /step takes one assistant message and answers with what the world
// and the user said back, and, when the episode ends, with the reward the
// hidden predicates give. A finished episode can be kept as a record,
// replay-verified on another fresh world before it is accepted and appended
// to the dataset directory of --out. Episodes are independent: each has its
// own world, a crash in one is answered to its client and closes it alone,
// an idle one is closed after a timeout, and on shutdown every world is
// disposed before the process ends. A body is bounded in size and depth
// before anything reads it; a step that fails in a way the server did not
// foresee closes its episode at once rather than leave it half-stepped.
// Beside its own routes it speaks OpenEnv's (openenv-socket.ts for /ws,
// openenv-mcp.ts for POST /mcp, and the routes OpenEnv's validator reads);
// every protocol drives the same episodes (environment-host.ts).

import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JsonLimitError, MAX_JSON_DEPTH, MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { errorMessage } from '../core/errors.js';
import type { JsonObject } from '../core/json-value.js';
import type { Lane } from '../lanes/lane.js';
import { EnvironmentHost } from './environment-host.js';
import { EnvironmentError, parseEpisodeId, parseResetRequest, parseStepRequest, rewardOf } from './environment-protocol.js';
import { openApiDocument } from './openapi-document.js';
import { answerJsonRpc, parseErrorAnswer } from './openenv-mcp.js';
import { metadataOf, schemasOf, stateOf } from './openenv-protocol.js';
import { attachOpenEnvSockets } from './openenv-socket.js';

export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * How deep a request body may nest. A tool call's arguments sit five levels
 * down in a /step body and are held to MAX_JSON_DEPTH on their own (so the
 * error names them); like a record line, the body has room to spare past that.
 */
export const MAX_BODY_DEPTH = MAX_RECORD_DEPTH;
export { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_EPISODES } from './environment-host.js';

export interface EnvironmentServerOptions {
  lane: Lane;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  idleTimeoutMs?: number;
  maxEpisodes?: number;
  /** A dataset directory finished episodes' records are appended to. */
  outDir?: string;
  /** A directory for one trace file per episode. */
  traceDir?: string;
  /** Lines worth telling the operator (an episode crashed, one closed for idleness). */
  onLog?: (message: string) => void;
}

export interface EnvironmentServer {
  url: string;
  host: string;
  port: number;
  /** Episodes open (live or finished and not yet closed). */
  episodes(): number;
  /** Stops accepting, closes every episode (disposing its world), finishes record writes in flight, and releases --out. */
  close(): Promise<void>;
}

const ROUTES = [
  'GET /',
  'GET /tasks',
  'POST /reset',
  'POST /step',
  'GET /episodes',
  'GET /episodes/{id}',
  'DELETE /episodes/{id}',
  'POST /episodes/{id}/record',
  // OpenEnv's (docs/environment.md): its socket, its JSON-RPC and what its validator reads.
  'WebSocket /ws',
  'POST /mcp',
  'GET /health',
  'GET /metadata',
  'GET /schema',
  'GET /state',
  'GET /openapi.json',
];
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export async function startEnvironmentServer(options: EnvironmentServerOptions): Promise<EnvironmentServer> {
  const { lane } = options;
  const host = options.host ?? '127.0.0.1';
  const episodes = new EnvironmentHost({
    lane,
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    ...(options.maxEpisodes !== undefined ? { maxEpisodes: options.maxEpisodes } : {}),
    ...(options.outDir !== undefined ? { outDir: options.outDir } : {}),
    ...(options.traceDir !== undefined ? { traceDir: options.traceDir } : {}),
    ...(options.onLog ? { onLog: options.onLog } : {}),
  });
  const log = options.onLog ?? (() => {});

  const reset = async (body: unknown): Promise<JsonObject> => {
    const request = parseResetRequest(body, lane);
    const { episode, start } = await episodes.open(request);
    return {
      episode_id: episode.id,
      task: { id: request.task.id, title: request.task.title },
      seed: request.seed,
      agent: { ...request.agent },
      ...(request.rollout === undefined ? {} : { rollout: request.rollout }),
      messages: start.messages as unknown as JsonObject[],
      tools: start.tools as unknown as JsonObject[],
      done: start.done,
      ...(start.done ? { reward: rewardOf(episode.record!) as unknown as JsonObject } : {}),
    };
  };

  const step = async (body: unknown): Promise<JsonObject> => {
    const request = parseStepRequest(body);
    // What each call reported is in the tool messages already: the native answer is the conversation.
    const { tool_results: _results, ...answer } = await episodes.step(request.episodeId, request.action, request.clientIds);
    return {
      episode_id: request.episodeId,
      ...(answer as unknown as JsonObject),
      ...(answer.reward ? { outcome: answer.reward.outcome } : {}),
    };
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    refuseForeign(request.headers);
    const path = (request.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const method = request.method ?? 'GET';
    const route = routeOf(path);
    if (!route) throw new EnvironmentError(404, 'not_found', `no route ${path}`, { fix: `the routes are: ${ROUTES.join(', ')}` });
    if (!route.methods.includes(method)) {
      response.setHeader('Allow', route.methods.join(', '));
      throw new EnvironmentError(405, 'method_not_allowed', `${method} ${path} is not served; ${path} takes ${route.methods.join(', ')}`, { fix: `the routes are: ${ROUTES.join(', ')}` });
    }
    // JSON-RPC answers every request with a JSON-RPC object and HTTP 200, a body that is not JSON included.
    if (route.name === 'mcp') return send(response, 200, await answerJsonRpcBody(request, episodes));
    const body = method === 'POST' ? await readJson(request, `the body of POST ${path}`) : undefined;
    switch (route.name) {
      case 'info':
        return send(response, 200, { ...episodes.info(), routes: ROUTES });
      case 'reset':
        return send(response, 200, await reset(body));
      case 'step':
        return send(response, 200, await step(body));
      case 'episodes':
        return send(response, 200, { episodes: episodes.list() });
      case 'episode': {
        const id = parseEpisodeId(decodedSegment(route.id!), 'path');
        if (method === 'GET') return send(response, 200, episodes.status(id));
        const episode = await episodes.close(id, 'deleted by the client');
        return send(response, 200, { episode_id: id, closed: true, state: episode.phase });
      }
      case 'record':
        return send(response, 200, await episodes.keep(parseEpisodeId(decodedSegment(route.id!), 'path')));
      case 'health':
        return send(response, 200, { status: 'healthy' });
      case 'metadata':
        return send(response, 200, metadataOf(lane));
      case 'schema':
        return send(response, 200, schemasOf());
      case 'state':
        // OpenEnv's HTTP state is a fresh session's: episodes live on /ws (or the native /episodes/{id}).
        return send(response, 200, stateOf(undefined, 0));
      case 'openapi':
        return send(response, 200, openApiDocument(lane));
    }
  };

  /** A request from a browser page, or to a Host that is not this loopback server (DNS rebinding), is refused before anything reads it. */
  const refuseForeign = (headers: IncomingMessage['headers']): void => {
    if (headers.origin !== undefined) {
      throw new EnvironmentError(403, 'forbidden_origin', `requests from web pages (Origin ${String(headers.origin)}) are refused`, {
        fix: 'call the environment from a program (Python, curl), not from a browser page',
      });
    }
    if (LOOPBACK_NAMES.has(host) && !LOOPBACK_NAMES.has(hostName(headers.host))) {
      throw new EnvironmentError(403, 'forbidden_host', `the Host header ${JSON.stringify(headers.host ?? '')} is not this loopback server`, { fix: `use ${url}` });
    }
  };

  /** A path segment as sent; a malformed %-escape is the client's mistake, not the server's. */
  const decodedSegment = (segment: string): string => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new EnvironmentError(400, 'invalid_request', `path: "${segment.slice(0, 80)}" is not a well-formed percent-encoded episode id`, { field: 'path', fix: 'use the episode_id /reset answered' });
    }
  };

  const server: HttpServer = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const refused =
        error instanceof EnvironmentError
          ? error
          : new EnvironmentError(500, 'internal', `internal error: ${errorMessage(error)}`, { fix: 'this is a bug; the server goes on. Report it with the request that caused it' });
      if (!(error instanceof EnvironmentError)) log(`request ${request.method} ${request.url} failed: ${errorMessage(error)}`);
      if (response.headersSent) return void response.end();
      send(response, refused.status, refused.body());
    });
  });
  server.keepAliveTimeout = 60_000;
  const sockets = attachOpenEnvSockets(server, episodes, {
    maxFrameBytes: MAX_BODY_BYTES,
    maxDepth: MAX_BODY_DEPTH,
    refuse: (request) => refuseForeign(request.headers),
    onLog: log,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    episodes.abandon();
    throw error;
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closedDown: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    episodes: () => episodes.size,
    close() {
      closedDown ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        sockets.close();
        await episodes.shutdown();
        // Answers to requests in flight have been sent by now; nothing else is waited for.
        setTimeout(() => server.closeAllConnections(), 200).unref();
        await stopped;
      })();
      return closedDown;
    },
  };
}

interface Route {
  name: 'info' | 'reset' | 'step' | 'episodes' | 'episode' | 'record' | 'mcp' | 'health' | 'metadata' | 'schema' | 'state' | 'openapi';
  methods: string[];
  id?: string;
}

function routeOf(path: string): Route | undefined {
  if (path === '/' || path === '/tasks') return { name: 'info', methods: ['GET'] };
  if (path === '/reset') return { name: 'reset', methods: ['POST'] };
  if (path === '/step') return { name: 'step', methods: ['POST'] };
  if (path === '/episodes') return { name: 'episodes', methods: ['GET'] };
  if (path === '/mcp') return { name: 'mcp', methods: ['POST'] };
  if (path === '/health') return { name: 'health', methods: ['GET'] };
  if (path === '/metadata') return { name: 'metadata', methods: ['GET'] };
  if (path === '/schema') return { name: 'schema', methods: ['GET'] };
  if (path === '/state') return { name: 'state', methods: ['GET'] };
  if (path === '/openapi.json') return { name: 'openapi', methods: ['GET'] };
  const record = /^\/episodes\/([^/]+)\/record$/.exec(path);
  if (record) return { name: 'record', methods: ['POST'], id: record[1]! };
  const episode = /^\/episodes\/([^/]+)$/.exec(path);
  if (episode) return { name: 'episode', methods: ['GET', 'DELETE'], id: episode[1]! };
  return undefined;
}

function hostName(header: string | undefined): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

/** The body as JSON, within MAX_BODY_DEPTH; past MAX_BODY_BYTES the rest is read and dropped, so the client hears the 413. */
async function readJson(request: IncomingMessage, where: string): Promise<unknown> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) throw tooLarge();
  const text = await new Promise<string | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.once('error', reject);
    request.once('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
  });
  if (text === undefined) throw tooLarge();
  if (text.trim() === '') return undefined;
  try {
    return parseBoundedJson(text, { maxDepth: MAX_BODY_DEPTH, maxBytes: MAX_BODY_BYTES, where });
  } catch (error) {
    if (error instanceof JsonLimitError) {
      if (error.limit === 'size') throw tooLarge();
      throw new EnvironmentError(400, 'body_too_deep', error.message, {
        fix: `a request is a few levels deep, and a tool call's arguments may nest at most ${MAX_JSON_DEPTH} levels: send flatter JSON`,
      });
    }
    throw new EnvironmentError(400, 'invalid_json', `the body is not JSON: ${errorMessage(error)}`, { fix: 'send a JSON object with Content-Type: application/json' });
  }
}

/** A POST /mcp body as JSON-RPC answers it: what cannot be read as JSON is a parse error (-32700), never an HTTP error. */
async function answerJsonRpcBody(request: IncomingMessage, host: EnvironmentHost): Promise<JsonObject> {
  let body: unknown;
  try {
    body = await readJson(request, 'the body of POST /mcp');
  } catch (error) {
    return parseErrorAnswer(errorMessage(error));
  }
  // OpenEnv's validator posts {} and expects a JSON-RPC answer (an invalid-request error).
  return answerJsonRpc(body ?? {}, { host });
}

function tooLarge(): EnvironmentError {
  return new EnvironmentError(413, 'body_too_large', `the body is larger than ${MAX_BODY_BYTES} bytes`, { fix: 'send one assistant message per /step' });
}

function send(response: ServerResponse, status: number, body: JsonObject): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}
