// Argument guards: a refused tools/call is answered with an isError result
// naming the rule and never reaches the transport below; every other message
// passes both ways untouched.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { GuardingTransport, type ArgumentGuard } from '../../../src/world/servers/guarding-transport.js';

class Recorder implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  sent: JSONRPCMessage[] = [];
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.sent.push(message);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
}

const noShouting: ArgumentGuard = {
  id: 'no-shouting',
  describe: 'refuses text in capitals',
  check: (tool, args) => (tool === 'say' && typeof args.text === 'string' && args.text === args.text.toUpperCase() ? 'Refused by guard no-shouting: no capitals.' : undefined),
};

describe('guarding transport', () => {
  it('answers a refused call itself and forwards everything else', async () => {
    const inner = new Recorder();
    const guarded = new GuardingTransport(inner, [noShouting]);
    const received: JSONRPCMessage[] = [];
    guarded.onmessage = (message) => received.push(message);
    await guarded.start();
    await guarded.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'say', arguments: { text: 'HELLO' } } });
    await guarded.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'say', arguments: { text: 'hello' } } });
    await guarded.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'other', arguments: { text: 'HELLO' } } });
    await guarded.send({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(inner.sent.map((message) => (message as { id: number }).id), [2, 3, 4]);
    assert.deepEqual(received, [{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Refused by guard no-shouting: no capitals.' }], isError: true } }]);
    inner.onmessage!({ jsonrpc: '2.0', id: 2, result: { content: [] } });
    assert.equal(received.length, 2);
  });
});
