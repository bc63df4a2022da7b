// Owns serving one live world over MCP Streamable HTTP on loopback, for any
// MCP client outside the factory. Every client session gets its own SDK
// `Server` (a server connects to one transport), all bound to the same world
// state, so a change one client makes is what the next one reads. Browsers
// are held off: a request carrying an `Origin` the operator did not allow is
// refused before it reaches any session (a web page must not drive a world on
// the operator's machine), and the Host header is checked against loopback.
// Every body is read behind the wire limits before the SDK sees it: past
// MAX_HTTP_BODY_BYTES it is answered 413 at once (the rest is read and
// dropped, so even a client that sends its whole body before reading hears
// why), too deep or not JSON-RPC is 400 with the request's id; and sessions
// are capped (maxSessions), one more initialize answered 503 until one ends.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcId } from '../core/json-rpc-id-scanner.js';
import { describeRefusal, oversizedRefusal, readIncomingBody, type Refusal } from './incoming-message.js';
import { serverFrom, type ServerSource } from './mcp-server-binding.js';

export const MCP_PATH = '/mcp';
/** The largest request body served; a larger one is answered 413. */
export const MAX_HTTP_BODY_BYTES = 4 * 1024 * 1024;
/**
 * After a 413 the rest of the body is read and dropped, so a client that
 * sends all of it before reading still hears the answer instead of a reset;
 * past this much more, the connection is cut.
 */
const MAX_DROPPED_BYTES = 64 * 1024 * 1024;
/** A client that vanished without DELETE leaves its session; it is closed after this long without a request. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
/** Sessions open at once by default: each holds an SDK server in memory until DELETE or its idle limit. */
export const DEFAULT_MAX_SESSIONS = 64;

export interface HttpWorldHost {
  /** The endpoint clients connect to, e.g. http://127.0.0.1:8931/mcp */
  url: string;
  port: number;
  /** Sessions currently open. */
  sessions(): number;
  close(): Promise<void>;
}

export interface HttpHostOptions {
  /** 0 picks a free port. */
  port: number;
  /** Problems worth telling the operator about (a bad request, a session error). */
  onProblem?: (message: string) => void;
  /** Close a session after this long without a request; default DEFAULT_SESSION_IDLE_MS. */
  sessionIdleMs?: number;
  /** Sessions open at once; one more initialize gets 503. Default DEFAULT_MAX_SESSIONS. */
  maxSessions?: number;
  /**
   * Browser origins (`scheme://host[:port]`, or `null`) whose pages may call the server, answered with CORS headers.
   * A request with any other Origin gets 403; a request with no Origin (a non-browser client) is served.
   */
  allowedOrigins?: readonly string[];
}

/** How the operator allows an origin (the `serve` flag), named in the 403 body. */
const ALLOW_ORIGIN_FLAG = '--allow-origin';
/** How the operator sets the session cap (the `serve` flag), named in the 503 body. */
const MAX_SESSIONS_FLAG = '--max-sessions';

/** Request headers a browser page's MCP client sends, and response headers it must read. */
const CORS_ALLOW_HEADERS = 'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';
const CORS_EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version';

const LOOPBACK = '127.0.0.1';

export async function hostWorldOverHttp(source: ServerSource, options: HttpHostOptions): Promise<HttpWorldHost> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const lastSeen = new Map<string, number>();
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  /** Initialize requests being served: their sessions are not in `transports` yet, but count against the cap. */
  let opening = 0;
  let allowedHosts: string[] = [];
  const allowedOrigins = new Set(options.allowedOrigins ?? []);
  // Idle expiry is operational housekeeping, never part of a record, so the wall clock is fine here.
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const [id, seen] of lastSeen) {
      if (now - seen < idleMs) continue;
      lastSeen.delete(id);
      const transport = transports.get(id);
      transports.delete(id);
      void transport?.close().catch(() => undefined);
      options.onProblem?.(`session ${id} closed after ${Math.round(idleMs / 1000)} s without a request`);
    }
  }, Math.max(10, Math.min(60_000, Math.floor(idleMs / 2))));
  sweeper.unref();

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const origin = headerValue(request.headers.origin);
    if (origin !== undefined) {
      if (!allowedOrigins.has(origin)) {
        options.onProblem?.(`refused a ${request.method} request from origin ${origin} (not allowed; ${ALLOW_ORIGIN_FLAG} ${origin} allows it)`);
        return sendJsonRpcError(
          response,
          403,
          -32000,
          `Forbidden: cross-origin request from ${origin}; this server answers browser pages only from origins allowed with ${ALLOW_ORIGIN_FLAG} ORIGIN (restart it with ${ALLOW_ORIGIN_FLAG} ${origin} if that page is yours)`,
        );
      }
      response.setHeader('Access-Control-Allow-Origin', origin);
      response.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
      response.setHeader('Vary', 'Origin');
    }
    const path = (request.url ?? '/').split('?')[0];
    if (path !== MCP_PATH) return sendJsonRpcError(response, 404, -32000, `Not found: the MCP endpoint is ${MCP_PATH}`);
    const sessionId = headerValue(request.headers['mcp-session-id']);
    if (sessionId !== undefined && transports.has(sessionId)) lastSeen.set(sessionId, performance.now());
    if (request.method === 'POST') {
      const body = await readBody(request);
      if ('tooLarge' in body) {
        const refusal = oversizedRefusal('the request body', MAX_HTTP_BODY_BYTES, body.tooLarge, null, body.atLeast);
        options.onProblem?.(describeRefusal(refusal));
        return refuseUnread(request, response, refusal);
      }
      // A session that is gone is the first thing such a client must hear: it has to start over whatever it sent.
      const transport = sessionId === undefined ? undefined : transports.get(sessionId);
      if (sessionId !== undefined && !transport) return sendJsonRpcError(response, 404, -32001, `Session not found: ${sessionId}; start a new one with initialize`);
      const incoming = readIncomingBody(body.bytes, 'the request body');
      if ('refusal' in incoming) {
        options.onProblem?.(describeRefusal(incoming.refusal));
        return sendRefusal(response, 400, incoming.refusal);
      }
      if (transport) return transport.handleRequest(request, response, incoming.value);
      const [first] = incoming.messages;
      if (incoming.messages.length !== 1 || !isInitializeRequest(first)) {
        return sendJsonRpcError(response, 400, -32000, 'Bad request: send initialize first, then the Mcp-Session-Id header it returns');
      }
      if (transports.size + opening >= maxSessions) {
        options.onProblem?.(`refused a new session: ${maxSessions} are open (${MAX_SESSIONS_FLAG})`);
        return sendJsonRpcError(
          response,
          503,
          -32000,
          `Server busy: ${maxSessions} sessions are open, the most this server holds at once (${MAX_SESSIONS_FLAG}); ` +
            `end one with DELETE ${MCP_PATH} and its Mcp-Session-Id, wait for one to go ${Math.round(idleMs / 1000)} s without a request, ` +
            `or restart the server with a larger ${MAX_SESSIONS_FLAG}`,
          (first as { id?: JsonRpcId }).id ?? null,
        );
      }
      opening++;
      try {
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, transport);
            lastSeen.set(id, performance.now());
          },
          onsessionclosed: (id) => {
            transports.delete(id);
            lastSeen.delete(id);
          },
          // Loopback only, and no DNS-rebinding from a web page; the SDK checks the Origin again.
          enableDnsRebindingProtection: true,
          allowedHosts,
          allowedOrigins: [...allowedOrigins],
        });
        transport.onclose = () => {
          if (transport.sessionId) {
            transports.delete(transport.sessionId);
            lastSeen.delete(transport.sessionId);
          }
        };
        transport.onerror = (error) => options.onProblem?.(`session ${transport.sessionId ?? '(new)'}: ${error.message}`);
        await serverFrom(source).connect(transport);
        return await transport.handleRequest(request, response, incoming.value);
      } finally {
        opening--;
      }
    }
    if (request.method === 'OPTIONS' && origin !== undefined) {
      // A CORS preflight from an allowed origin.
      response.writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST, DELETE',
        'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
        'Access-Control-Max-Age': '600',
      });
      return void response.end();
    }
    if (request.method === 'GET' || request.method === 'DELETE') {
      const transport = sessionId === undefined ? undefined : transports.get(sessionId);
      if (!transport) return sendJsonRpcError(response, sessionId === undefined ? 400 : 404, -32000, 'Bad request: missing or unknown Mcp-Session-Id');
      return transport.handleRequest(request, response);
    }
    response.setHeader('Allow', 'GET, POST, DELETE');
    return sendJsonRpcError(response, 405, -32000, `Method not allowed: ${request.method}`);
  };

  const server: HttpServer = createServer((request, response) => {
    handle(request, response).catch((error: Error) => {
      options.onProblem?.(`request failed: ${error.message}`);
      if (!response.headersSent) sendJsonRpcError(response, 500, -32603, `Internal error: ${error.message}`);
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts = [`${LOOPBACK}:${port}`, `localhost:${port}`];
  // The server's own origins are not cross-origin.
  for (const host of allowedHosts) allowedOrigins.add(`http://${host}`);

  return {
    url: `http://${LOOPBACK}:${port}${MCP_PATH}`,
    port,
    sessions: () => transports.size,
    async close() {
      clearInterval(sweeper);
      await Promise.all([...transports.values()].map((transport) => transport.close().catch(() => undefined)));
      transports.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

type Body = { bytes: Buffer } | { tooLarge: number; atLeast: boolean };

/**
 * The body, unless it is over MAX_HTTP_BODY_BYTES: a Content-Length over it is
 * refused before a byte is read, a body without one as soon as it passes the
 * limit. Either way the rest is left unread for refuseUnread.
 */
function readBody(request: IncomingMessage): Promise<Body> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_HTTP_BODY_BYTES) return Promise.resolve({ tooLarge: declared, atLeast: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (body: Body | Error) => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      if (body instanceof Error) reject(body);
      else resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_HTTP_BODY_BYTES) {
        request.pause();
        return settle({ tooLarge: size, atLeast: true });
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle({ bytes: Buffer.concat(chunks) });
    const onError = (error: Error) => settle(error);
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', onError);
  });
}

/**
 * Answers 413 at once, then reads what is left of the body and drops it (up to
 * MAX_DROPPED_BYTES; past that the connection is cut). The answer's bytes go
 * out now, so a client that reads while it sends hears it at once; the
 * response is ended only when the body is in, because ending it earlier makes
 * Node stop reading the body and close the connection, and a client that
 * sends its whole body before it reads (urllib, requests) would see a reset.
 */
function refuseUnread(request: IncomingMessage, response: ServerResponse, refusal: Refusal): void {
  const text = JSON.stringify({ jsonrpc: '2.0', error: { code: refusal.code, message: refusal.message }, id: refusal.id });
  response.writeHead(413, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.write(text);
  let dropped = 0;
  request.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DROPPED_BYTES) request.destroy();
  });
  request.once('end', () => response.end());
  request.on('error', () => undefined);
  request.resume();
}

function sendRefusal(response: ServerResponse, status: number, refusal: Refusal): void {
  sendJsonRpcError(response, status, refusal.code, refusal.message, refusal.id);
}

function sendJsonRpcError(response: ServerResponse, status: number, code: number, message: string, id: JsonRpcId | null = null): void {
  const text = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id });
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}
