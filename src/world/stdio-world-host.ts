// Owns serving one live world over MCP stdio, for any MCP client outside the
// factory. Stdout carries only protocol messages; the session ends when the
// client closes its end or the owner stops it.

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import { serverFrom, type ServerSource } from './mcp-server-binding.js';

export interface StdioWorldHost {
  /** Resolves when the session has ended, whoever ended it. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function hostWorldOverStdio(source: ServerSource, input: Readable, output: Writable): Promise<StdioWorldHost> {
  const server = serverFrom(source);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  // The stdio server transport does not notice the end of its input by itself.
  const clientGone = () => void server.close();
  input.once('end', clientGone);
  input.once('close', clientGone);
  await server.connect(new StdioServerTransport(input, output));
  void closed.then(() => {
    input.off('end', clientGone);
    input.off('close', clientGone);
  });
  return { closed, close: () => server.close() };
}
