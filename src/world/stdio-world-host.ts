// Owns serving one live world over MCP stdio, for any MCP client outside the
// factory. Stdout carries only protocol messages; every message the client
// sends is read behind the wire limits (bounded-stdio-transport), and one that
// is refused is answered with a JSON-RPC error while the session goes on. The
// session ends when the client closes its end or the owner stops it.

import type { Readable, Writable } from 'node:stream';
import { BoundedStdioServerTransport } from './bounded-stdio-transport.js';
import { describeRefusal } from './incoming-message.js';
import { serverFrom, type ServerSource } from './mcp-server-binding.js';

export interface StdioWorldHost {
  /** Resolves when the session has ended, whoever ended it. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export interface StdioHostOptions {
  /** Problems worth telling the operator about (a refused message). */
  onProblem?: (message: string) => void;
}

export async function hostWorldOverStdio(source: ServerSource, input: Readable, output: Writable, options: StdioHostOptions = {}): Promise<StdioWorldHost> {
  const server = serverFrom(source);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const transport = new BoundedStdioServerTransport(input, output, { onRefused: (refusal) => options.onProblem?.(describeRefusal(refusal)) });
  await server.connect(transport);
  return { closed, close: () => server.close() };
}
