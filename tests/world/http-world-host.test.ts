// The Streamable HTTP host's housekeeping: a client that vanishes without
// DELETE must not keep its session forever, and an oversized body gets 413
// instead of being buffered without bound.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { substream } from '../../src/core/random.js';
import { hostWorldOverHttp } from '../../src/world/http-world-host.js';
import { getScriptedWorld } from '../../src/world/world-registry.js';

function issuesInstance() {
  const world = getScriptedWorld('issues');
  return { world, state: world.init(substream(1, 'world'), {}) };
}

describe('http world host', () => {
  it('closes a session that sends nothing for longer than the idle limit', async () => {
    const problems: string[] = [];
    const host = await hostWorldOverHttp(issuesInstance(), { port: 0, sessionIdleMs: 150, onProblem: (message) => problems.push(message) });
    try {
      const client = new Client({ name: 'idle-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(host.url)));
      const tools = await client.listTools();
      assert.ok(tools.tools.length > 0);
      assert.equal(host.sessions(), 1);
      // The client goes quiet: no request, no DELETE.
      const deadline = performance.now() + 5000;
      while (host.sessions() > 0 && performance.now() < deadline) await sleep(25);
      assert.equal(host.sessions(), 0);
      assert.ok(problems.some((message) => /closed after .* without a request/.test(message)), problems.join('\n'));
      await client.close().catch(() => undefined);
    } finally {
      await host.close();
    }
  });

  it('keeps a session that keeps talking', async () => {
    const host = await hostWorldOverHttp(issuesInstance(), { port: 0, sessionIdleMs: 400 });
    try {
      const client = new Client({ name: 'busy-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(host.url)));
      for (let round = 0; round < 8; round++) {
        await client.listTools();
        await sleep(100);
      }
      assert.equal(host.sessions(), 1);
      await client.close();
    } finally {
      await host.close();
    }
  });

  it('answers 413 to a body over 4 MiB', async () => {
    const host = await hostWorldOverHttp(issuesInstance(), { port: 0 });
    try {
      const response = await fetch(host.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { padding: 'x'.repeat(5 * 1024 * 1024) } }),
      });
      assert.equal(response.status, 413);
      const body = (await response.json()) as { error: { message: string } };
      assert.match(body.error.message, /too large/i);
    } finally {
      await host.close();
    }
  });
});
