// Owns a server world's argument guards: declared rules that answer a tool
// call themselves, with an isError result naming the rule, when its arguments
// would take the server outside its sandbox (a third-party server that does
// not contain itself, docs/server-worlds.md, "Normalisations and guards"). The transport sits
// between the fault layer and the normaliser, so the fault layer, the client
// and the record see a refusal like any other tool error, the child never sees
// the call, and the guard judges the arguments exactly as the model sent them.
// Each guard has an id that the record's world actor lists.

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../core/json-value.js';
import { WrappingTransport } from './wrapping-transport.js';

export interface ArgumentGuard {
  /** Stable id, listed in the record and named in every refusal. */
  id: string;
  /** What it refuses and why, for the record and the README. */
  describe: string;
  /** The refusal text when the call must not reach the server; undefined lets it through. */
  check(tool: string, args: JsonObject): string | undefined;
}

/** The first guard's refusal of a call, if any. */
export function guardRefusal(guards: readonly ArgumentGuard[], tool: string, args: JsonObject): string | undefined {
  for (const guard of guards) {
    const refusal = guard.check(tool, args);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

/**
 * Wraps the transport towards the child: a tools/call a guard refuses is
 * answered here with an isError result and never sent on; everything else
 * passes both ways untouched.
 */
export class GuardingTransport extends WrappingTransport {
  constructor(
    inner: Transport,
    private readonly guards: readonly ArgumentGuard[],
  ) {
    super(inner);
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    const record = message as Record<string, any>;
    if (record.method === 'tools/call' && 'id' in record && record.params && typeof record.params === 'object') {
      const args = record.params.arguments;
      const refusal = guardRefusal(this.guards, String(record.params.name), args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as JsonObject) : {});
      if (refusal !== undefined) {
        const answer = { jsonrpc: '2.0', id: record.id, result: { content: [{ type: 'text', text: refusal }], isError: true } } as JSONRPCMessage;
        // Answered after send returns, as a server's answer would be.
        queueMicrotask(() => this.onmessage?.(answer));
        return;
      }
    }
    return super.send(message);
  }
}
