// Owns serving a server world to an outside MCP client (`serve`): an MCP
// server of ours whose tools/list and tools/call are forwarded, untouched
// apart from the declared normalisations below it, to the live third-party
// child, so a client sees the real catalog with the sandbox shown as
// /sandbox, exactly as an episode does.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServerWorld } from '../server-world.js';

export function createForwardingServer(client: Client, world: ServerWorld): Server {
  const info = client.getServerVersion();
  const server = new Server({ name: info?.name ?? world.name, version: info?.version ?? world.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => client.request({ method: 'tools/list', params: request.params ?? {} }, ListToolsResultSchema));
  // A raw request, not callTool: the outside client checks output schemas itself.
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    client.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, { signal: extra.signal, timeout: 60_000 }),
  );
  return server;
}
