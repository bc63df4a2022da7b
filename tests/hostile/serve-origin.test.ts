// Hostile: a web page in the operator's browser calling `serve --http`. A
// request with an Origin the operator did not allow is refused with 403 before
// it reaches any session, so nothing runs; --allow-origin lets one origin in
// (with CORS headers); clients that send no Origin, like the SDK's, keep
// working; the Host check against DNS rebinding stays.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { substream } from '../../src/core/random.js';
import { getScriptedWorld } from '../../src/world/world-registry.js';
import { runCli, temporaryDirectory } from '../helpers.js';
import { startServeHttp, stopServe } from '../serve-http.js';

const SEED = 4;
const EVIL = 'http://evil.example';
const world = getScriptedWorld('tasks');
const initial = world.snapshot(world.init(substream(SEED, 'world'), {})) as any;
const openTask = Object.values<any>(initial.tasks).find((task) => task.status !== 'done')!;

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function sdkClient(url: string, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'hostile-origin', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

describe('hostile: serve --http and web pages', () => {
  it('refuses a request from a foreign Origin with 403 before anything runs; the SDK client (no Origin) keeps working', { timeout: 60_000 }, async () => {
    const dump = join(temporaryDirectory('ef-hostile-origin-'), 'state.json');
    const server = await startServeHttp(['tasks', '--seed', String(SEED), '--dump-state', dump]);
    try {
      const refused = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, origin: EVIL }, body: JSON.stringify(INITIALIZE) });
      assert.equal(refused.status, 403);
      assert.equal(refused.headers.get('mcp-session-id'), null, 'no session was opened');
      assert.equal(refused.headers.get('access-control-allow-origin'), null);
      const body = (await refused.json()) as any;
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /cross-origin request from http:\/\/evil\.example/);
      assert.match(body.error.message, /--allow-origin/);

      // A real client opens a session; the page then tries to ride it.
      const { client, transport } = await sdkClient(server.url);
      const sessionHeaders = { ...MCP_HEADERS, 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' };
      const write = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'complete_task', arguments: { id: openTask.id } } };
      const ride = await fetch(server.url, { method: 'POST', headers: { ...sessionHeaders, origin: EVIL }, body: JSON.stringify(write) });
      assert.equal(ride.status, 403);
      for (const [method, origin] of [['OPTIONS', EVIL], ['GET', EVIL], ['DELETE', EVIL], ['POST', 'http://localhost:5173'], ['POST', 'null']] as const) {
        const response = await fetch(server.url, { method, headers: { ...sessionHeaders, origin }, body: method === 'POST' ? JSON.stringify(write) : undefined });
        assert.equal(response.status, 403, `${method} from ${origin}`);
        await response.body?.cancel();
      }
      // The session the page tried to use is intact, and the write never ran.
      const tools = await client.listTools();
      assert.ok(tools.tools.some((tool) => tool.name === 'complete_task'));
      await client.close();
    } finally {
      assert.equal(await stopServe(server.child), 0, server.stderr());
    }
    assert.equal(canonicalJson(JSON.parse(readFileSync(dump, 'utf8'))), canonicalJson(initial), 'the world is as built: nothing ran');
    assert.match(server.stderr(), /refused a POST request from origin http:\/\/evil\.example/);
  });

  it('serves an origin named with --allow-origin, with CORS headers, and still refuses others', { timeout: 60_000 }, async () => {
    const dump = join(temporaryDirectory('ef-hostile-origin-'), 'state.json');
    const server = await startServeHttp(['tasks', '--seed', String(SEED), '--dump-state', dump, '--allow-origin', EVIL, '--allow-origin', 'http://localhost:5173/']);
    try {
      assert.match(server.stderr(), /web pages from http:\/\/evil\.example, http:\/\/localhost:5173 may call it/);
      const preflight = await fetch(server.url, {
        method: 'OPTIONS',
        headers: { origin: EVIL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-session-id' },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), EVIL);
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Mcp-Session-Id/);

      // The SDK's own client, sending the page's Origin, goes all the way through.
      const { client } = await sdkClient(server.url, { origin: EVIL });
      const result = await client.callTool({ name: 'complete_task', arguments: { id: openTask.id } });
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      await client.close();

      const raw = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, origin: 'http://localhost:5173' }, body: JSON.stringify(INITIALIZE) });
      assert.equal(raw.status, 200);
      assert.equal(raw.headers.get('access-control-allow-origin'), 'http://localhost:5173');
      assert.match(raw.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/);
      await raw.body?.cancel();

      const other = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, origin: 'http://evil.example:8080' }, body: JSON.stringify(INITIALIZE) });
      assert.equal(other.status, 403);
      await other.body?.cancel();

      // No Origin at all: the SDK client as usual.
      const plain = await sdkClient(server.url);
      assert.ok((await plain.client.listTools()).tools.length > 0);
      await plain.client.close();
    } finally {
      assert.equal(await stopServe(server.child), 0, server.stderr());
    }
    const after = JSON.parse(readFileSync(dump, 'utf8'));
    assert.equal(after.tasks[openTask.id].status, 'done', 'the allowed page did complete the task');
  });

  it('keeps the Host check against DNS rebinding', { timeout: 60_000 }, async () => {
    const server = await startServeHttp(['tasks', '--seed', String(SEED), '--dump-state', join(temporaryDirectory('ef-hostile-origin-'), 'state.json')]);
    try {
      const url = new URL(server.url);
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...MCP_HEADERS, host: `evil.example:${url.port}` } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.once('error', reject);
        request.end(JSON.stringify(INITIALIZE));
      });
      assert.equal(status, 403);
    } finally {
      assert.equal(await stopServe(server.child), 0, server.stderr());
    }
  });

  it('takes --allow-origin only as an origin, and only with --http', { timeout: 30_000 }, () => {
    const directory = temporaryDirectory('ef-hostile-origin-');
    const path = runCli(directory, 'serve', 'tasks', '--http', '0', '--allow-origin', 'http://localhost:5173/app');
    assert.equal(path.status, 2);
    assert.match(path.stderr, /--allow-origin "http:\/\/localhost:5173\/app" is not an origin — fix: pass scheme:\/\/host\[:port\] with no path/);
    assert.equal(runCli(directory, 'serve', 'tasks', '--http', '0', '--allow-origin', '*').status, 2);
    const stdio = runCli(directory, 'serve', 'tasks', '--allow-origin', EVIL);
    assert.equal(stdio.status, 2);
    assert.match(stdio.stderr, /--allow-origin applies to --http only/);
  });
});
