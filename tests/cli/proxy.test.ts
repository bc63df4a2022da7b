// The standalone fault proxy in front of a real third-party MCP server from npm
// (@modelcontextprotocol/server-memory), driven by the real SDK client.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { listCatalog } from '../../src/runner/tool-session.js';
import { FAULT_KINDS } from '../../src/world/faults/fault-plan.js';
import { childEnvironment } from '../../src/core/child-environment.js';
import { CLI, REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SERVER_MEMORY = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js');

/** One fault per call, so a single session shows every kind in a known order. */
const SCENARIO = {
  select: 'each',
  faults: [
    { id: 'empty', kind: 'empty_first_page', lists: [1] },
    { id: 'pages', kind: 'paginate_tools', lists: [1], params: { page_size: 4 } },
    { id: 'busy', kind: 'tool_error', calls: [1], params: { messages: ['rate limited, retry after 2s'] } },
    { id: 'flaky', kind: 'transient', calls: [2], params: { failures: 1 } },
    { id: 'slow', kind: 'latency', calls: [5], params: { ms: 50 } },
    { id: 'stale', kind: 'stale_read', calls: [6] },
    { id: 'bad', kind: 'wrong_result_schema', calls: [7] },
    { id: 'cut', kind: 'truncated_result', calls: [8], params: { keep_fraction: 0.3 } },
    { id: 'error', kind: 'jsonrpc_error', calls: [9], params: { codes: [-32603] } },
    { id: 'silent', kind: 'timeout', calls: [10] },
    { id: 'renamed', kind: 'tool_renamed', calls: [11] },
    { id: 'dropped', kind: 'disconnect', calls: [13] },
  ],
};

function startProxy(directory: string, plan: unknown, extraEnv: Record<string, string> = {}) {
  const planPath = join(directory, 'plan.json');
  writeFileSync(planPath, JSON.stringify(plan));
  const logPath = join(directory, 'faults.jsonl');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'proxy', '--faults', planPath, '--seed', '5', '--log', logPath, '--', process.execPath, SERVER_MEMORY],
    env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(directory, 'memory.jsonl'), ...extraEnv },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  return { transport, logPath, stderr: () => stderr };
}

describe('episode-factory proxy in front of @modelcontextprotocol/server-memory', () => {
  it('fires every fault kind of the plan, as the client sees it, and logs each one', async () => {
    const directory = temporaryDirectory('ef-proxy-');
    const { transport, logPath, stderr } = startProxy(directory, SCENARIO);
    const client = new Client({ name: 'proxy-test', version: '1' });
    await client.connect(transport);
    let listChanged = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged++;
    });
    try {
      const first = await client.listTools();
      assert.deepEqual(first.tools, [], 'empty first page');
      const catalog = await listCatalog(client);
      assert.ok(catalog.some((tool) => tool.name === 'create_entities') && catalog.some((tool) => tool.name === 'read_graph'));

      const create = { name: 'create_entities', arguments: { entities: [{ name: 'ada', entityType: 'person', observations: ['wrote the first program'] }] } };
      const readGraph = { name: 'read_graph', arguments: {} };
      const busy = await client.callTool(create);
      assert.equal(busy.isError, true);
      assert.match(JSON.stringify(busy.content), /rate limited/);
      assert.equal((await client.callTool(create)).isError, true, 'transient failure');
      assert.equal((await client.callTool(create)).isError, undefined, 'then it succeeds');
      const before = (await client.callTool(readGraph)).structuredContent as any;
      assert.deepEqual(before.entities[0].observations, ['wrote the first program']);
      const started = performance.now();
      await client.callTool({ name: 'add_observations', arguments: { observations: [{ entityName: 'ada', contents: ['designed the analytical engine notes'] }] } });
      assert.ok(performance.now() - started >= 45, 'latency');
      const stale = (await client.callTool(readGraph)).structuredContent as any;
      assert.deepEqual(stale, before, 'a stale read shows the graph from before the write');
      await assert.rejects(client.callTool(readGraph), (error: unknown) => error instanceof McpError && /structured content/i.test(error.message));
      const cut = await client.callTool({ name: 'search_nodes', arguments: { query: 'ada' } });
      assert.throws(() => JSON.parse((cut.content as any)[0].text), SyntaxError);
      await assert.rejects(client.callTool({ name: 'search_nodes', arguments: { query: 'ada' } }), (error: unknown) => error instanceof McpError && error.code === -32603);
      await assert.rejects(
        client.callTool({ name: 'open_nodes', arguments: { names: ['ada'] } }, undefined, { timeout: 300 }),
        (error: unknown) => error instanceof McpError && error.code === ErrorCode.RequestTimeout,
      );
      await assert.rejects(client.callTool(readGraph), /Unknown tool: read_graph/);
      assert.equal(listChanged, 1);
      const renamed = (await listCatalog(client)).map((tool) => tool.name);
      assert.ok(renamed.includes('read_graph_v2') && !renamed.includes('read_graph'));
      const fresh = (await client.callTool({ name: 'read_graph_v2', arguments: {} })).structuredContent as any;
      assert.equal(fresh.entities[0].observations.length, 2, 'the renamed tool reaches the real server');
      await assert.rejects(client.callTool({ name: 'read_graph_v2', arguments: {} }), (error: unknown) => error instanceof McpError && error.code === ErrorCode.ConnectionClosed);
    } finally {
      await client.close().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const log = readFileSync(logPath, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(new Set(log.map((entry) => entry.kind)), new Set(FAULT_KINDS));
    assert.deepEqual(log.map((entry) => entry.seq), log.map((_, index) => index + 1));
    assert.ok(log.every((entry) => entry.schema === 'episode-factory.proxy-fault.v1' && entry.seed === 5));
    assert.match(stderr(), /fault stale_read \(stale\) on read_graph/);
    assert.match(stderr(), /session ended \(disconnect_fault\); 12 faults fired/);
  });

  it('writes nothing but JSON-RPC messages to stdout', async () => {
    const directory = temporaryDirectory('ef-proxy-');
    const planPath = join(REPO_ROOT, 'lanes', 'plans', 'chaos.json');
    const child = spawn(process.execPath, [CLI, 'proxy', '--faults', planPath, '--seed', '1', '--log', join(directory, 'log.jsonl'), '--', process.execPath, SERVER_MEMORY], {
      env: { ...process.env, MEMORY_FILE_PATH: join(directory, 'memory.jsonl'), SOME_API_KEY: 'do-not-leak' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const send = (message: object) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list', params: {} });
    for (let id = 3; id < 13; id++) send({ id, method: 'tools/call', params: { name: 'read_graph', arguments: {} } });
    // Wait for the handshake and the listing to be answered (the chaos plan may
    // slow calls down), then leave: the proxy must end the session cleanly.
    const answered = (id: number) => stdout.split('\n').slice(0, -1).some((line) => JSON.parse(line).id === id);
    for (let waited = 0; waited < 30_000 && !(answered(1) && answered(2)); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
    const lines = stdout.trim().split('\n');
    assert.ok(lines.length >= 3, stdout);
    for (const line of lines) {
      const message = JSON.parse(line);
      assert.equal(message.jsonrpc, '2.0', line);
    }
    assert.match(stderr, /not passing (.*, )?SOME_API_KEY(, .*)? to the server/);
    assert.match(stderr, /session ended \(client_closed\)/);
  });

  it('keeps secrets from the server unless asked', () => {
    const { env, withheld } = childEnvironment({ PATH: '/bin', OPENAI_API_KEY: 'x', GITHUB_TOKEN: 'y', EPISODE_FACTORY_DEBUG: '1', HF_API_TOKEN: 'z' }, ['HF_API_TOKEN']);
    assert.deepEqual(withheld, ['EPISODE_FACTORY_DEBUG', 'GITHUB_TOKEN', 'OPENAI_API_KEY']);
    assert.deepEqual(Object.keys(env).sort(), ['HF_API_TOKEN', 'PATH']);
  });

  it('rejects a bad plan or a missing server with exit 2 and the fix', () => {
    const directory = temporaryDirectory('ef-proxy-');
    const bad = join(directory, 'bad.json');
    writeFileSync(bad, JSON.stringify({ faults: [{ id: 'x', kind: 'gremlins' }, { id: 'y', kind: 'latency', lists: [1] }] }));
    const result = spawnSync(process.execPath, [CLI, 'proxy', '--faults', bad, '--', 'node', 'server.js'], { encoding: 'utf8' });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /bad\.json: \/faults\/0\/kind: must be one of: empty_first_page/);
    assert.match(result.stderr, /is not a valid fault plan \(1 problem\) — fix: /);
    assert.equal(result.stdout, '');
    const missing = spawnSync(process.execPath, [CLI, 'proxy', '--faults', join(REPO_ROOT, 'lanes', 'plans', 'chaos.json'), '--log', join(directory, 'l.jsonl'), '--', '/no/such/server'], {
      encoding: 'utf8',
      input: '',
    });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /cannot start the server "\/no\/such\/server": .*ENOENT.* — fix: check the command after --/);
  });

  it('exits 2 when the server quits before the handshake, while the client is still there', async () => {
    const directory = temporaryDirectory('ef-proxy-');
    const child = spawn(process.execPath, [CLI, 'proxy', '--faults', join(REPO_ROOT, 'lanes', 'plans', 'chaos.json'), '--log', join(directory, 'l.jsonl'), '--', process.execPath, '-e', 'process.exit(3)']);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const status = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.destroy();
    assert.equal(status, 2);
    assert.match(stderr, /exited before answering initialize — fix: /);
  });
});
