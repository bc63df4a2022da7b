// Owns running one episode against a live world: start the world as a real MCP
// server, connect a client in-process, read the catalog through tools/list
// (following every page), run the agent loop, and always close the connection.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Message, ToolDescriptor } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';
import type { Policy } from '../policy/policy-contract.js';
import { connectInProcess } from '../world/in-process-connection.js';
import { createWorldServer } from '../world/mcp-server-binding.js';
import type { WorldInstance } from '../world/world-contract.js';
import { runAgentLoop, type AgentRun } from './agent-loop.js';
import type { Limits } from './limits.js';
import { McpToolGateway } from './mcp-tool-gateway.js';
import { NULL_TRACE, type TraceSink } from './trace.js';

export interface WorldEpisodeOptions {
  instance: WorldInstance;
  policy: Policy;
  messages: readonly Message[];
  limits: Limits;
  trace?: TraceSink;
}

export interface WorldEpisode {
  catalog: ToolDescriptor[];
  run: AgentRun;
}

export async function listCatalog(client: Client): Promise<ToolDescriptor[]> {
  const catalog: ToolDescriptor[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    for (const tool of page.tools) {
      const descriptor: ToolDescriptor = {
        name: tool.name,
        description: tool.description ?? '',
        input_schema: tool.inputSchema as JsonObject,
      };
      if (tool.outputSchema) descriptor.output_schema = tool.outputSchema as JsonObject;
      catalog.push(descriptor);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return catalog;
}

export async function runWorldEpisode(options: WorldEpisodeOptions): Promise<WorldEpisode> {
  const trace = options.trace ?? NULL_TRACE;
  const connection = await connectInProcess(createWorldServer(options.instance));
  try {
    const catalog = await listCatalog(connection.client);
    trace.emit('catalog_listed', { tools: catalog.length });
    const run = await runAgentLoop({
      policy: options.policy,
      catalog,
      gateway: new McpToolGateway(connection.client),
      messages: options.messages,
      limits: options.limits,
      trace,
    });
    return { catalog, run };
  } finally {
    await connection.close();
  }
}
