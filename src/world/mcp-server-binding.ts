// Owns the adaptation of a world to a real MCP server, built on the SDK's
// low-level `Server` (not `McpServer`, which cannot paginate `tools/list` nor
// answer with real JSON-RPC errors). The binding validates arguments strictly
// the way a real server does: an unknown tool is a JSON-RPC -32602, bad
// arguments are an `isError` result naming every bad field.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { canonicalJson } from '../core/canonical-json.js';
import { isJsonObject } from '../core/json-value.js';
import { compileValidator, formatFieldErrors, type Validator } from '../core/schema-validator.js';
import type { ToolSpec, World, WorldInstance } from './world-contract.js';

interface PreparedWorld {
  tools: Tool[];
  specs: Map<string, { spec: ToolSpec; validate: Validator }>;
}

const prepared = new WeakMap<World<any>, PreparedWorld>();

/**
 * Tool listings and compiled validators are per world, not per episode. A
 * world's listing never changes once built: kept connections rely on it to
 * reuse a pair's first tools/list (kept-connections.ts).
 */
function prepare(world: World<any>): PreparedWorld {
  let entry = prepared.get(world);
  if (!entry) {
    entry = {
      tools: world.tools.map(toMcpTool),
      specs: new Map(world.tools.map((spec) => [spec.name, { spec, validate: compileValidator(spec.inputSchema) }])),
    };
    prepared.set(world, entry);
  }
  return entry;
}

export function toMcpTool(spec: ToolSpec): Tool {
  const tool: Tool = { name: spec.name, description: spec.description, inputSchema: spec.inputSchema as Tool['inputSchema'] };
  if (spec.outputSchema) tool.outputSchema = spec.outputSchema as Tool['outputSchema'];
  if (spec.annotations) tool.annotations = { ...spec.annotations };
  return tool;
}

/**
 * The Server checks elicitation answers with it (worlds never elicit). Left
 * out, each Server builds its own Ajv instance with every format, which cost
 * more than running a whole episode's tool calls; validators it hands out are
 * pure, so one instance serves every server in the process.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * The handlers read `instance.state` at each call, never a copy taken here:
 * a kept server (kept-connections.ts) is re-pointed at the next episode's
 * state by assigning it, with no new Server and no new handshake.
 */
export function createWorldServer(instance: WorldInstance): Server {
  const { world } = instance;
  const { tools, specs } = prepare(world);
  sharedValidator ??= new AjvJsonSchemaValidator();
  const server = new Server(
    { name: world.name, version: world.version },
    { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: sharedValidator },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name } = request.params;
    const entry = specs.get(name);
    if (!entry) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    const args = request.params.arguments ?? {};
    const errors = entry.validate(args);
    if (errors.length > 0) {
      return errorResult(`Invalid arguments for ${name}: ${formatFieldErrors(errors)}`);
    }
    if (!isJsonObject(args)) return errorResult(`Invalid arguments for ${name}: (root): expected object`);
    const outcome = world.call(instance.state, name, args);
    if (!outcome.ok) return errorResult(outcome.message);
    return { content: [{ type: 'text', text: canonicalJson(outcome.value) }], structuredContent: outcome.value };
  });

  return server;
}

function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** What a host serves: a scripted world's live state, or a function that builds a server per session (a server world's forwarder). */
export type ServerSource = WorldInstance | (() => Server);

export function serverFrom(source: ServerSource): Server {
  return typeof source === 'function' ? source() : createWorldServer(source);
}
