// `serve`: every world as a standalone MCP server, over stdio and over
// Streamable HTTP, driven by the SDK's real clients from another process. The
// served world must be the very world the factory builds from the same seed.

import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { canonicalJson } from '../../src/core/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/core/json-value.js';
import { substream } from '../../src/core/random.js';
import type { World } from '../../src/world/world-contract.js';
import { getScriptedWorld, scriptedWorldNames } from '../../src/world/world-registry.js';
import { CLI, runCli, temporaryDirectory } from '../helpers.js';
import { startServeHttp, type ServedHttp } from '../serve-http.js';

const SEED = 3;

interface Call {
  name: string;
  arguments: JsonObject;
}

/** For each world: a read and a write that are valid on the world built from SEED, found from its snapshot. */
const PROBES: Record<string, (snapshot: any) => { read: Call; write: Call }> = {
  issues: (snapshot) => {
    const number = Number(Object.keys(snapshot.issues)[0]);
    return {
      read: { name: 'get_issue', arguments: { number } },
      write: { name: 'add_comment', arguments: { number, body: 'Seen from a served world.' } },
    };
  },
  calendar: (snapshot) => {
    const invited = Object.values<any>(snapshot.events).find(
      (event) => event.organizer !== snapshot.viewer && event.attendees.some((attendee: any) => attendee.email === snapshot.viewer) && event.status !== 'cancelled',
    )!;
    return {
      read: { name: 'get_event', arguments: { event_id: invited.id, time_zone: 'Asia/Tokyo' } },
      write: { name: 'respond_to_event', arguments: { event_id: invited.id, response: 'tentative' } },
    };
  },
  files: (snapshot) => {
    const file = Object.values<any>(snapshot.files).find((entry) => entry.type === 'file' && !entry.readonly)!;
    return {
      read: { name: 'read', arguments: { path: file.path } },
      write: { name: 'write', arguments: { path: `${file.dir}/served-note.txt`, content: 'Written through a served world.\n' } },
    };
  },
  shop: (snapshot) => {
    const pending = Object.values<any>(snapshot.orders).find((order) => order.status === 'pending' || order.status === 'paid')!;
    return {
      read: { name: 'find_customer', arguments: { email: pending.email } },
      write: { name: 'cancel_order', arguments: { order_id: pending.order_id, reason: 'changed_mind' } },
    };
  },
  tasks: (snapshot) => {
    const open = Object.values<any>(snapshot.tasks).find((task) => task.status !== 'done')!;
    return {
      read: { name: 'count_tasks', arguments: { filter: { project: open.project } } },
      write: { name: 'complete_task', arguments: { id: open.id } },
    };
  },
};

function fresh(world: World<any>) {
  return world.init(substream(SEED, 'world'), {});
}

/** What the factory's own world answers, and its snapshot after the write. */
function expected(world: World<any>) {
  const state = fresh(world);
  const probe = PROBES[world.name]!(world.snapshot(state));
  // Results are copied at once, as the server serialises them at once: a later write must not show in an earlier read.
  const read = structuredClone(world.call(state, probe.read.name, probe.read.arguments));
  const write = structuredClone(world.call(state, probe.write.name, probe.write.arguments));
  assert.ok(read.ok && write.ok, `${world.name}: the probe calls must succeed in process`);
  return { probe, read: read.value, write: write.value, after: world.snapshot(state) };
}

function startHttp(world: string, dumpFile: string): Promise<ServedHttp> {
  return startServeHttp([world, '--seed', String(SEED), '--dump-state', dumpFile]);
}

const exited = (child: ChildProcessWithoutNullStreams) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));

describe('serve: worlds as standalone MCP servers', () => {
  it('has a probe for every world', () => {
    assert.deepEqual(Object.keys(PROBES).sort(), scriptedWorldNames());
  });

  for (const name of scriptedWorldNames()) {
    it(`serves ${name} over stdio: the same tools, and the same answers as the factory's world from that seed`, async () => {
      const world = getScriptedWorld(name);
      const want = expected(world);
      const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', name, '--seed', String(SEED)], stderr: 'pipe' });
      let stderr = '';
      transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
      const client = new Client({ name: 'serve-test', version: '1' });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((tool) => tool.name), world.tools.map((tool) => tool.name));
        const read = await client.callTool(want.probe.read);
        assert.equal(read.isError, undefined, JSON.stringify(read.content));
        assert.equal(canonicalJson(read.structuredContent as JsonValue), canonicalJson(want.read));
        const write = await client.callTool(want.probe.write);
        assert.equal(canonicalJson(write.structuredContent as JsonValue), canonicalJson(want.write));
        const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((error: Error) => error);
        assert.ok(unknown instanceof Error && /Unknown tool: no_such_tool/.test(unknown.message));
      } finally {
        await client.close();
      }
      assert.match(stderr, new RegExp(`serve: world ${name} [0-9.]+, seed ${SEED}, ${world.tools.length} tools, on stdio`));
    });

    it(`serves ${name} over Streamable HTTP: sessions share one world, and --dump-state writes it on exit`, async () => {
      const world = getScriptedWorld(name);
      const want = expected(world);
      const dump = join(temporaryDirectory('ef-serve-'), 'state.json');
      const server = await startHttp(name, dump);
      try {
        const first = new Client({ name: 'serve-test-1', version: '1' });
        const firstTransport = new StreamableHTTPClientTransport(new URL(server.url));
        await first.connect(firstTransport);
        assert.ok(firstTransport.sessionId, 'a session id');
        assert.deepEqual((await first.listTools()).tools.map((tool) => tool.name), world.tools.map((tool) => tool.name));
        assert.equal(canonicalJson((await first.callTool(want.probe.write)).structuredContent as JsonValue), canonicalJson(want.write));
        await firstTransport.terminateSession();
        await first.close();

        const second = new Client({ name: 'serve-test-2', version: '1' });
        const secondTransport = new StreamableHTTPClientTransport(new URL(server.url));
        await second.connect(secondTransport);
        assert.notEqual(secondTransport.sessionId, firstTransport.sessionId);
        const read = await second.callTool(want.probe.read);
        assert.equal(read.isError, undefined);
        await second.close();
      } finally {
        server.child.kill('SIGTERM');
      }
      assert.equal(await exited(server.child), 0, server.stderr());
      assert.equal(canonicalJson(JSON.parse(readFileSync(dump, 'utf8'))), canonicalJson(want.after), 'the dumped state is the factory world after the same write');
    });
  }

  it('answers requests that are not MCP with a JSON-RPC error, and only on loopback', async () => {
    const server = await startHttp('issues', join(temporaryDirectory('ef-serve-'), 'state.json'));
    try {
      const noSession = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      assert.equal(noSession.status, 400);
      assert.match(((await noSession.json()) as any).error.message, /send initialize first/);
      const garbage = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":' });
      assert.equal(garbage.status, 400);
      assert.equal(((await garbage.json()) as any).error.code, -32700);
      const elsewhere = await fetch(server.url.replace('/mcp', '/other'));
      assert.equal(elsewhere.status, 404);
      const staleSession = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', 'mcp-session-id': 'nope' }, body: '{}' });
      assert.equal(staleSession.status, 404);
    } finally {
      server.child.kill('SIGTERM');
    }
    assert.equal(await exited(server.child), 0);
  });

  it('ends a stdio session when the client closes stdin, dumping the state to stderr', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', 'issues', '--dump-state']);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.stdin.end();
    assert.equal(await exited(child), 0, stderr);
    assert.equal(stdout, '', 'stdout carries MCP messages only');
    const json = stderr.slice(stderr.indexOf('{'), stderr.lastIndexOf('}') + 1);
    assert.equal(canonicalJson(JSON.parse(json)), canonicalJson(getScriptedWorld('issues').snapshot(getScriptedWorld('issues').init(substream(0, 'world'), {}))));
  });

  it('exits 2 with the fix for an unknown world, a bad config, a bad port or two transports', () => {
    const directory = temporaryDirectory('ef-serve-');
    const unknown = runCli(directory, 'serve', 'spreadsheets');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown world "spreadsheets" — fix: use one of: calendar, (?:[a-z-]+, )*files, filesystem-server, (?:[a-z-]+, )*issues, (?:[a-z-]+, )*shop, (?:[a-z-]+, )*tasks/);
    const config = runCli(directory, 'serve', 'issues', '--config', '{"issues_per_topic":[1,9]}');
    assert.equal(config.status, 2);
    assert.match(config.stderr, /--config does not fit the issues world: issues_per_topic.*/);
    assert.equal(runCli(directory, 'serve', 'issues', '--http', 'eighty').status, 2);
    assert.equal(runCli(directory, 'serve', 'issues', '--http', '0', '--stdio').status, 2);
  });
});
