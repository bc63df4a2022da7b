// Owns the harness side of the MCP boundary: the catalog as the client sees
// it (following nextCursor through empty and partial pages), refreshing it at
// the next turn boundary after notifications/tools/list_changed, executing
// validated calls under a per-call timeout (the SDK cancels with
// notifications/cancelled), reconnecting after the transport drops,
// turning whatever comes back into the text a model sees plus a tool_result,
// and saying at the end whether its connection may serve another episode.
// A tool failure is data, never an exception.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../core/canonical-json.js';
import type { ToolDescriptor, ToolResult } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';
import { sameData } from '../core/same-data.js';
import { compileValidator, formatFieldErrors } from '../core/schema-validator.js';
import type { Connection } from '../world/in-process-connection.js';
import { NULL_TRACE, type TraceSink } from './trace.js';

export interface ToolExecution {
  content: string;
  result: ToolResult;
}

export interface CatalogChange {
  removed: string[];
  added: ToolDescriptor[];
}

export interface CallOptions {
  timeoutMs: number;
  /** Cancels the call; omitted when nothing can cancel the episode. */
  signal?: AbortSignal;
}

/** What the agent loop needs from the tool side. */
export interface ToolSession {
  readonly catalog: readonly ToolDescriptor[];
  /** The model turn now starting; faults and harness events are attributed to it. */
  step: number;
  /** At a turn boundary: apply a catalog change the server announced, if any. */
  sync(): Promise<CatalogChange | undefined>;
  call(name: string, args: JsonObject, options: CallOptions): Promise<ToolExecution>;
}

export function contentText(content: CallToolResult['content']): string {
  return content
    .map((item) => {
      switch (item.type) {
        case 'text':
          return item.text;
        case 'resource':
          return 'text' in item.resource ? item.resource.text : `[resource ${item.resource.uri}]`;
        case 'resource_link':
          return `[resource ${item.uri}]`;
        default:
          return `[${item.type}${'mimeType' in item ? ` ${item.mimeType}` : ''}]`;
      }
    })
    .join('\n');
}

type ListedTool = { name: string; description?: string; inputSchema: unknown; outputSchema?: unknown; annotations?: unknown };

function toDescriptor(tool: ListedTool): ToolDescriptor {
  const descriptor: ToolDescriptor = { name: tool.name, description: tool.description ?? '', input_schema: tool.inputSchema as JsonObject };
  if (tool.outputSchema) descriptor.output_schema = tool.outputSchema as JsonObject;
  if (tool.annotations) descriptor.annotations = tool.annotations as JsonObject;
  return descriptor;
}

/**
 * Every episode lists the same tools, and a descriptor's schemas are compiled
 * into validators and printed into every record. A tool listed exactly as
 * before (sameData) gets the descriptor built then, so work keyed by the
 * descriptor or its schemas is done once, not per episode. Descriptors are
 * read, never changed, by everything downstream (the policy gets copies).
 */
const described = new Map<string, { tool: ListedTool; descriptor: ToolDescriptor }>();

function describeTool(tool: ListedTool): ToolDescriptor {
  const known = described.get(tool.name);
  if (known && sameData(known.tool, tool)) return known.descriptor;
  const descriptor = toDescriptor(tool);
  if (described.size >= 1024) described.clear();
  described.set(tool.name, { tool, descriptor });
  return descriptor;
}

/** Reads the whole catalog, following nextCursor through empty and partial pages. */
export async function listCatalog(client: Client, trace: TraceSink = NULL_TRACE): Promise<ToolDescriptor[]> {
  const catalog: ToolDescriptor[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    pages++;
    catalog.push(...page.tools.map(describeTool));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  if (pages > 1) trace.emit('harness_recovery', { action: 'followed_cursor', pages, tools: catalog.length });
  return catalog;
}

/**
 * Classifies a thrown error by where it came from, never by its code alone: a
 * server may answer with -32000 or -32001 itself, which is a JSON-RPC error,
 * not a dropped connection or the client's own timeout.
 */
function fromThrown(error: unknown, connectionClosed: boolean): ToolExecution {
  if (error instanceof McpError) {
    const data = error.data as { timeout?: unknown } | undefined;
    if (error.code === ErrorCode.RequestTimeout && typeof data === 'object' && data !== null && data.timeout !== undefined) {
      return { content: `Tool call timed out: ${error.message}`, result: { ok: false, kind: 'timeout', error: error.message, code: error.code } };
    }
    if (error.code === ErrorCode.ConnectionClosed && connectionClosed) {
      return { content: `Tool call failed: ${error.message}`, result: { ok: false, kind: 'transport_error', error: error.message, code: error.code } };
    }
    if (/structured content/i.test(error.message)) return invalidResult(error.message);
    return { content: error.message, result: { ok: false, kind: 'jsonrpc_error', error: error.message, code: error.code } };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { content: `Tool call failed: ${message}`, result: { ok: false, kind: 'transport_error', error: message } };
}

function invalidResult(message: string): ToolExecution {
  return { content: `Tool returned an invalid result: ${message}`, result: { ok: false, kind: 'invalid_result', error: message } };
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 500 ? line.slice(0, 500) + '…' : line;
}

export interface CallContext {
  /** The tool as listed, for checking structured content against its output schema. */
  tool?: ToolDescriptor;
  /** Whether the transport has closed: only then is a -32000 a dropped connection. */
  connectionClosed: () => boolean;
}

export async function executeCall(client: Client, name: string, args: JsonObject, options: CallOptions, context: CallContext): Promise<ToolExecution> {
  try {
    const requestOptions = { timeout: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) };
    const result = (await client.callTool({ name, arguments: args }, undefined, requestOptions)) as CallToolResult;
    const text = contentText(result.content ?? []);
    if (result.isError) return { content: text, result: { ok: false, kind: 'tool_error', error: firstLine(text) } };
    // The SDK's own check only knows the tools of the last tools/list page it
    // read, so a paginated catalog would switch it off: check here as well.
    const outputSchema = context.tool?.output_schema;
    if (outputSchema) {
      if (result.structuredContent === undefined) return invalidResult(`Tool ${name} has an output schema but did not return structured content`);
      const errors = compileValidator(outputSchema)(result.structuredContent);
      if (errors.length > 0) return invalidResult(`Structured content does not match the tool's output schema: ${formatFieldErrors(errors)}`);
    }
    return { content: text, result: { ok: true } };
  } catch (error) {
    return fromThrown(error, context.connectionClosed());
  }
}

export function diffCatalog(before: readonly ToolDescriptor[], after: readonly ToolDescriptor[]): CatalogChange | undefined {
  const previous = new Map(before.map((tool) => [tool.name, canonicalJson(tool)]));
  const next = new Set(after.map((tool) => tool.name));
  const removed = before.filter((tool) => !next.has(tool.name)).map((tool) => tool.name);
  const added = after.filter((tool) => previous.get(tool.name) !== canonicalJson(tool));
  return removed.length === 0 && added.length === 0 ? undefined : { removed, added };
}

/** A tool session over an MCP client that the harness can reconnect. */
export class McpToolSession implements ToolSession {
  step = 0;
  catalog: ToolDescriptor[] = [];
  private connection!: Connection;
  private stale = false;
  private transportClosed = false;
  /** A call timed out, was cancelled or lost its transport: the connection is not handed on to another episode. */
  private troubled = false;

  private constructor(
    private readonly connect: () => Promise<Connection>,
    private readonly trace: TraceSink,
  ) {}

  /** Connects and reads the catalog (or takes it from a kept connection that has read it before). */
  static async open(connect: () => Promise<Connection>, trace: TraceSink = NULL_TRACE): Promise<McpToolSession> {
    const session = new McpToolSession(connect, trace);
    await session.attach();
    try {
      const { listed } = session.connection;
      if (listed?.catalog) session.catalog = listed.catalog.slice();
      else {
        session.catalog = await listCatalog(session.connection.client, trace);
        listed?.remember(session.catalog);
      }
    } catch (error) {
      await session.connection.close().catch(() => undefined);
      throw error;
    }
    trace.emit('catalog_listed', { tools: session.catalog.length });
    return session;
  }

  private async attach(): Promise<void> {
    this.connection = await this.connect();
    this.transportClosed = false;
    const client = this.connection.client;
    const previous = client.onclose;
    client.onclose = () => {
      this.transportClosed = true;
      previous?.();
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.stale = true;
      this.trace.emit('list_changed_received', { step: this.step });
    });
  }

  async sync(): Promise<CatalogChange | undefined> {
    if (!this.stale) return undefined;
    this.stale = false;
    const next = await listCatalog(this.connection.client, this.trace);
    const change = diffCatalog(this.catalog, next);
    this.catalog = next;
    this.trace.emit('harness_recovery', {
      action: 'catalog_refreshed',
      step: this.step,
      removed: change?.removed ?? [],
      added: change?.added.map((tool) => tool.name) ?? [],
    });
    return change;
  }

  async call(name: string, args: JsonObject, options: CallOptions): Promise<ToolExecution> {
    const execution = await executeCall(this.connection.client, name, args, options, {
      tool: this.catalog.find((candidate) => candidate.name === name),
      connectionClosed: () => this.transportClosed,
    });
    if (execution.result.kind === 'timeout' || execution.result.kind === 'transport_error' || options.signal?.aborted) this.troubled = true;
    if (execution.result.kind === 'timeout') {
      this.trace.emit('harness_recovery', { action: 'cancelled_after_timeout', step: this.step, tool: name, timeout_ms: options.timeoutMs });
      // A server world's child that stopped answering altogether is restarted on the same state.
      if (this.connection.unresponsive && (await this.connection.unresponsive())) await this.reconnect('restarted_hung_server', name);
    } else if (execution.result.kind === 'transport_error') {
      await this.reconnect('reconnected', name);
    }
    return execution;
  }

  /**
   * Same world, new connection: the next call goes through a fresh
   * handshake, and the catalog is read again at the next turn boundary.
   */
  private async reconnect(action: string, tool: string): Promise<void> {
    await this.connection.close().catch(() => undefined);
    await this.attach();
    this.stale = true;
    this.trace.emit('harness_recovery', { action, step: this.step, tool });
  }

  /** `clean`: the episode ended normally; the connection may then be kept for another (when nothing went wrong on it). */
  async close(ending?: { clean: boolean }): Promise<void> {
    await this.connection.close({ clean: ending?.clean === true && !this.troubled });
  }
}
