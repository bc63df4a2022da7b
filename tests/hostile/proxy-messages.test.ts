// Hostile: a client that sends the fault proxy what no well-behaved client
// sends, in front of a real npm MCP server (@modelcontextprotocol/server-memory).
// Each bad message gets a JSON-RPC error naming what is wrong (-32700 not JSON,
// -32600 past a limit or not a JSON-RPC message), with the request's id when
// it has one, and the session goes on; the proxy ends as "client_closed" only
// when the client closes its stdin.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/core/bounded-json.js';
import { MAX_STDIO_MESSAGE_BYTES } from '../../src/world/bounded-stdio-transport.js';
import { CLI, temporaryDirectory } from '../helpers.js';
import { deepCall, oversizedCall, startInitializedSession, type StdioSession } from '../stdio-session.js';

const SERVER_MEMORY = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js');

async function startProxy(): Promise<StdioSession> {
  const directory = temporaryDirectory('ef-hostile-proxy-');
  const plan = join(directory, 'plan.json');
  writeFileSync(plan, JSON.stringify({ select: 'each', faults: [] }));
  return startInitializedSession([CLI, 'proxy', '--faults', plan, '--', process.execPath, SERVER_MEMORY], { ...process.env, MEMORY_FILE_PATH: join(directory, 'memory.jsonl') }, 'memory-server');
}

/** The session still works: a real call reaches the server and its answer comes back. */
async function stillServes(session: StdioSession, id: number): Promise<void> {
  session.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_graph', arguments: {} } }));
  const answer = await session.answer((candidate) => candidate.id === id);
  assert.deepEqual(answer.result?.structuredContent, { entities: [], relations: [] }, JSON.stringify(answer));
}

describe('hostile: messages the proxy must answer', () => {
  it(`answers a request nested 10,000 deep with -32600 naming the limit (${MAX_JSON_DEPTH}) and its id, and goes on`, { timeout: 120_000 }, async () => {
    const session = await startProxy();
    try {
      session.send(deepCall(2, 'read_graph', 10_000));
      const refused = await session.answer((answer) => answer.id === 2);
      assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
      assert.match(refused.error!.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
      await stillServes(session, 3);
      assert.doesNotMatch(session.stderr(), /Maximum call stack/);
      assert.equal(await session.end(), 0);
      assert.match(session.stderr(), /session ended \(client_closed\)/);
    } finally {
      session.child.kill('SIGKILL');
    }
  });

  it('answers text that is not JSON with -32700 and a message that is not JSON-RPC with -32600 and its id', { timeout: 120_000 }, async () => {
    const session = await startProxy();
    try {
      session.send('this is not json');
      const notJson = await session.answer((answer) => answer.error?.code === -32700);
      assert.equal(notJson.id, null);
      assert.match(notJson.error!.message, /^Parse error: /);
      session.send('{"jsonrpc":"2.0","id":7,"method":5}');
      const notRpc = await session.answer((answer) => answer.id === 7);
      assert.equal(notRpc.error?.code, -32600, JSON.stringify(notRpc));
      assert.match(notRpc.error!.message, /"method" must be a string/);
      session.send('[1,2]');
      const batch = await session.answer((answer) => answer.error?.code === -32600 && answer.id === null);
      assert.match(batch.error!.message, /array/);
      await stillServes(session, 8);
      assert.equal(await session.end(), 0);
      assert.match(session.stderr(), /session ended \(client_closed\)/);
    } finally {
      session.child.kill('SIGKILL');
    }
  });

  it('answers a message over the size limit with -32600 and its id, read past the whole line, and the session goes on', { timeout: 120_000 }, async () => {
    const session = await startProxy();
    try {
      session.send(oversizedCall(4, 'read_graph', MAX_STDIO_MESSAGE_BYTES + 1024 * 1024));
      const refused = await session.answer((answer) => answer.id === 4);
      assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
      assert.match(refused.error!.message, new RegExp(`over the limit of ${MAX_STDIO_MESSAGE_BYTES} bytes`));
      assert.ok(session.running(), 'the proxy is still running');
      assert.doesNotMatch(session.stderr(), /session ended/);
      await stillServes(session, 5);
      assert.equal(await session.end(), 0);
      assert.match(session.stderr(), /session ended \(client_closed\)/);
    } finally {
      session.child.kill('SIGKILL');
    }
  });
});
