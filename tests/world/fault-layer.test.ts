// Each fault kind at the MCP boundary, seen through the real SDK client talking
// to the real issues server with the fault layer between them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { substream } from '../../src/core/random.js';
import { compileValidator } from '../../src/core/schema-validator.js';
import { listCatalog, McpToolSession } from '../../src/runner/tool-session.js';
import type { FaultEntry, FaultPlan, FiredFault } from '../../src/world/faults/fault-plan.js';
import { FaultState } from '../../src/world/faults/fault-state.js';
import { FaultLayer } from '../../src/world/faults/fault-layer.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { issuesWorld } from '../../src/world/issues/issues-world.js';
import { connectInProcess } from '../../src/world/in-process-connection.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';

async function faulty(entries: FaultEntry[], options: { seed?: number; select?: FaultPlan['select'] } = {}) {
  const state = issuesWorld.init(substream(1, 'world'), {});
  const fired: FiredFault[] = [];
  const faults = new FaultState({ faults: entries, select: options.select }, substream(options.seed ?? 1, 'faults'), (fault) => fired.push(fault));
  const connection = await connectInProcess(createWorldServer({ world: issuesWorld, state }), { faults });
  const openIssue = [...state.issues.values()].find((issue) => issue.state === 'open')!;
  return { state, fired, faults, client: connection.client, close: connection.close, openIssue };
}

type Faulty = Awaited<ReturnType<typeof faulty>>;

async function withFaults(entries: FaultEntry[], body: (world: Faulty) => Promise<void>, options: { seed?: number; select?: FaultPlan['select'] } = {}) {
  const world = await faulty(entries, options);
  try {
    await body(world);
  } finally {
    await world.close().catch(() => undefined);
  }
}

const text = (result: any) => (result.content as { text: string }[]).map((item) => item.text).join('\n');

describe('fault layer: catalog listings', () => {
  it('empty_first_page: the first page is empty with a nextCursor; following it yields every tool', () =>
    withFaults([{ id: 'e', kind: 'empty_first_page', lists: [1] }], async ({ client, fired }) => {
      const first = await client.listTools();
      assert.deepEqual(first.tools, []);
      assert.ok(first.nextCursor);
      const second = await client.listTools({ cursor: first.nextCursor! });
      assert.equal(second.tools.length, 9);
      assert.deepEqual(fired.map((fault) => [fault.kind, fault.tool, fault.call]), [['empty_first_page', null, 1]]);
      assert.equal((await client.listTools()).tools.length, 9, 'only the first listing is hit');
    }));

  it('paginate_tools: the catalog comes in pages of N and the harness follows every cursor', () =>
    withFaults([{ id: 'p', kind: 'paginate_tools', params: { page_size: 2 } }], async ({ client, fired }) => {
      const first = await client.listTools();
      assert.equal(first.tools.length, 2);
      const all = await listCatalog(client);
      assert.equal(all.length, 9);
      assert.equal(fired.length, 1);
      assert.match(fired[0]!.detail, /9 tools served in 5 pages of 2/);
      await assert.rejects(client.listTools({ cursor: 'bogus' }), (error: unknown) => error instanceof McpError && error.code === -32602);
    }));
});

describe('fault layer: tool calls', () => {
  it('jsonrpc_error: answers with a JSON-RPC error of a listed code, without reaching the server', () =>
    withFaults([{ id: 'j', kind: 'jsonrpc_error', params: { codes: [-32000] } }], async ({ client, fired, state, openIssue }) => {
      await client.listTools();
      await assert.rejects(
        client.callTool({ name: 'close_issue', arguments: { number: openIssue.number, reason: 'completed' } }),
        (error: unknown) => error instanceof McpError && error.code === -32000,
      );
      assert.equal(state.issues.get(openIssue.number)!.state, 'open');
      assert.equal(fired[0]!.kind, 'jsonrpc_error');
      assert.equal(fired[0]!.tool, 'close_issue');
      assert.equal(fired[0]!.call, 1);
    }));

  it('tool_error: answers isError with a realistic message', () =>
    withFaults([{ id: 't', kind: 'tool_error', params: { messages: ['rate limited, retry after 2s'] } }], async ({ client, openIssue }) => {
      const result = await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
      assert.equal(result.isError, true);
      assert.equal(text(result), 'rate limited, retry after 2s');
      const again = await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
      assert.equal(again.isError, undefined, 'max_fires defaults to 1');
    }));

  it('transient: the first N attempts of the same call fail, then it succeeds; other calls are untouched', () =>
    withFaults([{ id: 'tr', kind: 'transient', params: { failures: 2 } }], async ({ client, fired, openIssue, state }) => {
      const call = { name: 'get_issue', arguments: { number: openIssue.number } };
      assert.equal((await client.callTool(call)).isError, true);
      const other = [...state.issues.keys()].find((number) => number !== openIssue.number)!;
      assert.equal((await client.callTool({ name: 'get_issue', arguments: { number: other } })).isError, undefined);
      assert.equal((await client.callTool(call)).isError, true);
      assert.equal((await client.callTool(call)).isError, undefined);
      assert.deepEqual(fired.map((fault) => fault.detail), ['attempt 1 of 2 fails', 'attempt 2 of 2 fails']);
    }));

  it('timeout: never answers; the client times out and cancels; the call never ran', () =>
    withFaults([{ id: 'to', kind: 'timeout' }], async ({ client, fired, state, openIssue }) => {
      await assert.rejects(
        client.callTool({ name: 'close_issue', arguments: { number: openIssue.number, reason: 'completed' } }, undefined, { timeout: 80 }),
        (error: unknown) => error instanceof McpError && error.code === ErrorCode.RequestTimeout,
      );
      assert.equal(state.issues.get(openIssue.number)!.state, 'open');
      assert.equal(fired[0]!.kind, 'timeout');
      const after = await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
      assert.equal(after.isError, undefined, 'the connection still works after the cancellation');
    }));

  it('timeout with reaches_server: the call ran, but its answer is lost', () =>
    withFaults([{ id: 'to', kind: 'timeout', params: { reaches_server: true } }], async ({ client, state, openIssue }) => {
      await assert.rejects(client.callTool({ name: 'close_issue', arguments: { number: openIssue.number, reason: 'completed' } }, undefined, { timeout: 80 }));
      assert.equal(state.issues.get(openIssue.number)!.state, 'closed');
    }));

  it('latency: answers correctly, later', () =>
    withFaults([{ id: 'l', kind: 'latency', params: { ms: 60 } }], async ({ client, openIssue, fired }) => {
      const started = performance.now();
      const result = await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
      assert.ok(performance.now() - started >= 55);
      assert.equal((result.structuredContent as any).issue.number, openIssue.number);
      assert.match(fired[0]!.detail, /extra 60 ms/);
    }));

  it('wrong_result_schema: structuredContent breaks the declared output schema', () =>
    withFaults([{ id: 'w', kind: 'wrong_result_schema' }], async ({ client, openIssue, fired }) => {
      const tool = (await client.listTools()).tools.find((candidate) => candidate.name === 'get_issue')!;
      const result = await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
      const errors = compileValidator(tool.outputSchema!)(result.structuredContent);
      assert.ok(errors.length > 0, 'the structured content no longer fits the output schema');
      assert.match(fired[0]!.detail, /structuredContent/);
      const session = await McpToolSession.open(async () => ({ client, close: async () => undefined }));
      const next = await session.call('get_issue', { number: openIssue.number }, { timeoutMs: 1000 });
      assert.equal(next.result.ok, true, 'the fault fired once; the harness accepts the next, valid result');
    }));

  it('the harness rejects structured content that breaks the output schema, whichever catalog page the tool was on', () =>
    withFaults(
      [
        { id: 'p', kind: 'paginate_tools', params: { page_size: 2 } },
        { id: 'w', kind: 'wrong_result_schema', tools: ['get_issue'] },
      ],
      async ({ client, openIssue }) => {
        const session = await McpToolSession.open(async () => ({ client, close: async () => undefined }));
        assert.equal(session.catalog.length, 9);
        const execution = await session.call('get_issue', { number: openIssue.number }, { timeoutMs: 1000 });
        assert.equal(execution.result.kind, 'invalid_result');
        assert.match(execution.result.error!, /Structured content does not match the tool's output schema/);
      },
    ));

  it('truncated_result: the text is cut short, or padded far past any result limit', async () => {
    await withFaults([{ id: 'c', kind: 'truncated_result', params: { mode: 'cut', keep_fraction: 0.3 } }], async ({ client, openIssue, fired }) => {
      const result = await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
      assert.throws(() => JSON.parse(text(result)));
      assert.match(fired[0]!.detail, /text cut to \d+ of \d+ characters/);
    });
    await withFaults([{ id: 'o', kind: 'truncated_result', params: { mode: 'oversize', oversize_bytes: 50_000 } }], async ({ client, openIssue }) => {
      const result = await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
      assert.ok(text(result).length > 50_000);
    });
  });

  it('tool_renamed: list_changed is sent, the old name is gone, the new name reaches the same tool', () =>
    withFaults([{ id: 'r', kind: 'tool_renamed', tools: ['get_issue'] }], async ({ client, openIssue, fired }) => {
      let notified = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notified++;
      });
      await client.listTools();
      await assert.rejects(
        client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } }),
        (error: unknown) => error instanceof McpError && /Unknown tool: get_issue/.test(error.message),
      );
      assert.equal(notified, 1);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      assert.ok(names.includes('get_issue_v2') && !names.includes('get_issue'));
      const result = await client.callTool({ name: 'get_issue_v2', arguments: { number: openIssue.number } });
      assert.equal((result.structuredContent as any).issue.number, openIssue.number);
      assert.match(fired[0]!.detail, /renamed to get_issue_v2/);
    }));

  it('disconnect: the transport closes mid-call and the pending call fails with ConnectionClosed', async () => {
    await withFaults([{ id: 'd', kind: 'disconnect' }], async ({ client, state, openIssue }) => {
      await assert.rejects(
        client.callTool({ name: 'close_issue', arguments: { number: openIssue.number, reason: 'completed' } }),
        (error: unknown) => error instanceof McpError && error.code === ErrorCode.ConnectionClosed,
      );
      assert.equal(state.issues.get(openIssue.number)!.state, 'open');
    });
    await withFaults([{ id: 'd', kind: 'disconnect', params: { reaches_server: true } }], async ({ client, state, openIssue }) => {
      await assert.rejects(client.callTool({ name: 'close_issue', arguments: { number: openIssue.number, reason: 'completed' } }));
      assert.equal(state.issues.get(openIssue.number)!.state, 'closed', 'the write happened before the connection dropped');
    });
  });

  it('stale_read: after a write, one read returns the state from before it', () =>
    withFaults([{ id: 's', kind: 'stale_read' }], async ({ client, openIssue, fired }) => {
      await client.listTools();
      const read = () => client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } }).then((result) => (result.structuredContent as any).issue.state);
      assert.equal(await read(), 'open');
      assert.equal(fired.length, 0, 'nothing stale to serve before a write');
      await client.callTool({ name: 'close_issue', arguments: { number: openIssue.number, reason: 'completed' } });
      assert.equal(await read(), 'open', 'stale');
      assert.equal(await read(), 'closed', 'fresh again');
      assert.equal(fired[0]!.detail, 'answered with the result from before the last write');
    }));
});

describe('fault selection', () => {
  it('honours tools, calls, probability and max_fires', () =>
    withFaults(
      [
        { id: 'only-third', kind: 'tool_error', calls: [3] },
        { id: 'only-add-label', kind: 'jsonrpc_error', tools: ['add_label'], max_fires: 2 },
      ],
      async ({ client, fired, openIssue }) => {
        const get = () => client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
        const label = () => client.callTool({ name: 'add_label', arguments: { number: openIssue.number, label: 'docs' } });
        assert.equal((await get()).isError, undefined);
        await assert.rejects(label());
        assert.equal((await get()).isError, true);
        await assert.rejects(label());
        assert.equal((await label()).isError, undefined);
        assert.deepEqual(fired.map((fault) => [fault.fault, fault.call]), [['only-add-label', 2], ['only-third', 3], ['only-add-label', 4]]);
      },
    ));

  it('fires the same faults in the same places for the same seed, and differently for others', async () => {
    const plan: FaultEntry[] = [{ id: 'sometimes', kind: 'tool_error', probability: 0.5, max_fires: 10 }];
    const firedCalls = async (seed: number) => {
      let calls: (number | null)[] = [];
      await withFaults(plan, async ({ client, fired, openIssue }) => {
        for (let index = 0; index < 12; index++) await client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } });
        calls = fired.map((fault) => fault.call);
      }, { seed });
      return calls;
    };
    const first = await firedCalls(7);
    assert.deepEqual(await firedCalls(7), first);
    assert.ok(first.length > 0 && first.length < 12);
    assert.notDeepEqual(await firedCalls(8), first);
  });

  it('with select "one", draws a single live entry per episode from the seed', () => {
    const entries: FaultEntry[] = ['a', 'b', 'c', 'd'].map((id) => ({ id, kind: 'tool_error' }));
    const drawn = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const state = new FaultState({ select: 'one', faults: entries }, substream(seed, 'faults'));
      assert.equal(state.live.length, 1);
      assert.equal(new FaultState({ select: 'one', faults: entries }, substream(seed, 'faults')).live[0]!.id, state.live[0]!.id);
      drawn.add(state.live[0]!.id);
    }
    assert.deepEqual([...drawn].sort(), ['a', 'b', 'c', 'd']);
  });
});

describe('fault layer as a transparent bridge', () => {
  async function bridge(onServerMessage: (message: any, send: (reply: object) => void) => void) {
    const [client, layerDown] = InMemoryTransport.createLinkedPair();
    const [layerUp, server] = InMemoryTransport.createLinkedPair();
    const layer = new FaultLayer(new FaultState({ faults: [] }, substream(0, 'faults')), layerDown, layerUp);
    const seen: any[] = [];
    client.onmessage = (message) => seen.push(message);
    server.onmessage = (message) => onServerMessage(message, (reply) => void server.send({ jsonrpc: '2.0', ...reply } as any));
    await layer.start();
    await client.start();
    await server.start();
    return { seen, send: (message: object) => client.send({ jsonrpc: '2.0', ...message } as any), layer };
  }

  it('delivers server messages in the order the server sent them', async () => {
    const { seen, send } = await bridge((message, reply) => {
      if (message.method === 'tools/list') reply({ id: message.id, result: { tools: [{ name: 't', inputSchema: { type: 'object' } }] } });
      if (message.method === 'tools/call') {
        reply({ id: message.id, result: { content: [] } });
        reply({ method: 'notifications/tools/list_changed' });
      }
    });
    await send({ id: 1, method: 'tools/call', params: { name: 't', arguments: {} } });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(seen.map((message) => message.method ?? `response ${message.id}`), ['response 1', 'notifications/tools/list_changed']);
  });

  it("passes the server's own tools/list error through unchanged, and answers a null result without hanging", async () => {
    const { seen, send } = await bridge((message, reply) => {
      if (message.method === 'tools/list') reply({ id: message.id, error: { code: -32601, message: 'Method not found' } });
      if (message.method === 'tools/call') reply({ id: message.id, result: null });
    });
    await send({ id: 7, method: 'tools/list' });
    await send({ id: 8, method: 'tools/call', params: { name: 't', arguments: {} } });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(seen.find((message) => message.id === 7).error, { code: -32601, message: 'Method not found' });
    assert.ok(seen.some((message) => message.id === 8), 'the call was answered');
  });

  it('refuses its own requests once closed instead of leaving them pending', async () => {
    const { layer, send } = await bridge(() => undefined);
    await layer.close();
    await send({ id: 9, method: 'tools/list' }).catch(() => undefined);
    await assert.rejects((layer as any).requestServer('tools/list', {}), /fault layer closed/);
  });

  it('never gives a renamed tool the name of a tool that exists', () =>
    withFaults([{ id: 'r', kind: 'tool_renamed', tools: ['get_issue'], params: { new_name: 'get_user' } }], async ({ client, openIssue }) => {
      await client.listTools();
      await assert.rejects(client.callTool({ name: 'get_issue', arguments: { number: openIssue.number } }));
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      assert.equal(names.filter((name) => name === 'get_user').length, 1);
      assert.ok(names.includes('get_user_2'));
    }));
});
