// Owns executing an already-validated tool call over an MCP client and turning
// whatever comes back (a result, an isError result, a JSON-RPC error, a
// timeout, a dropped transport) into the text the model will see and a
// `tool_result` for the record. A tool failure is data, never an exception.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';

export interface ToolExecution {
  content: string;
  result: ToolResult;
}

export interface ToolGateway {
  call(name: string, args: JsonObject, options: { timeoutMs: number; signal: AbortSignal }): Promise<ToolExecution>;
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
          return `[${item.type} ${'mimeType' in item ? item.mimeType : ''}]`.replace(' ]', ']');
      }
    })
    .join('\n');
}

export class McpToolGateway implements ToolGateway {
  constructor(private readonly client: Client) {}

  async call(name: string, args: JsonObject, options: { timeoutMs: number; signal: AbortSignal }): Promise<ToolExecution> {
    try {
      const result = (await this.client.callTool({ name, arguments: args }, undefined, {
        timeout: options.timeoutMs,
        signal: options.signal,
      })) as CallToolResult;
      const text = contentText(result.content ?? []);
      if (result.isError) return { content: text, result: { ok: false, kind: 'tool_error', error: firstLine(text) } };
      return { content: text, result: { ok: true } };
    } catch (error) {
      return fromThrown(error);
    }
  }
}

function fromThrown(error: unknown): ToolExecution {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return { content: `Tool call timed out: ${error.message}`, result: { ok: false, kind: 'timeout', error: error.message, code: error.code } };
    }
    if (error.code === ErrorCode.ConnectionClosed) {
      return { content: `Tool call failed: ${error.message}`, result: { ok: false, kind: 'transport_error', error: error.message, code: error.code } };
    }
    return { content: error.message, result: { ok: false, kind: 'jsonrpc_error', error: error.message, code: error.code } };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { content: `Tool call failed: ${message}`, result: { ok: false, kind: 'transport_error', error: message } };
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 500 ? line.slice(0, 500) + '…' : line;
}
