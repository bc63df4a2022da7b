// Owns serving one live world over MCP Streamable HTTP on loopback, for any
// MCP client outside the factory. Every client session gets its own SDK
// `Server` (a server connects to one transport), all bound to the same world
// state, so a change one client makes is what the next one reads. Browsers
// are held off: a request carrying an `Origin` the operator did not allow is
// refused before it reaches any session (a web page must not drive a world on
// the operator's machine), and the Host header is checked against loopback.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { serverFrom, type ServerSource } from './mcp-server-binding.js';

export const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** A client that vanished without DELETE leaves its session; it is closed after this long without a request. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

class BodyTooLarge extends Error {}

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
  /**
   * Browser origins (`scheme://host[:port]`, or `null`) whose pages may call the server, answered with CORS headers.
   * A request with any other Origin gets 403; a request with no Origin (a non-browser client) is served.
   */
  allowedOrigins?: readonly string[];
}

/** How the operator allows an origin (the `serve` flag), named in the 403 body. */
const ALLOW_ORIGIN_FLAG = '--allow-origin';

/** Request headers a browser page's MCP client sends, and response headers it must read. */
const CORS_ALLOW_HEADERS = 'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';
const CORS_EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version';

const LOOPBACK = '127.0.0.1';

export async function hostWorldOverHttp(source: ServerSource, options: HttpHostOptions): Promise<HttpWorldHost> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const lastSeen = new Map<string, number>();
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
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
      let body: unknown;
      try {
        body = JSON.parse(await readBody(request));
      } catch (error) {
        if (error instanceof BodyTooLarge) return sendJsonRpcError(response, 413, -32600, `Request too large: ${error.message}`);
        return sendJsonRpcError(response, 400, -32700, `Parse error: ${(error as Error).message}`);
      }
      if (sessionId !== undefined) {
        const transport = transports.get(sessionId);
        if (!transport) return sendJsonRpcError(response, 404, -32001, `Session not found: ${sessionId}; start a new one with initialize`);
        return transport.handleRequest(request, response, body);
      }
      if (!isInitializeRequest(body)) {
        return sendJsonRpcError(response, 400, -32000, 'Bad request: send initialize first, then the Mcp-Session-Id header it returns');
      }
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
      return transport.handleRequest(request, response, body);
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

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge(`the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJsonRpcError(response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
