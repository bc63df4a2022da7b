import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { substream } from '../../src/core/random.js';
import { issuesWorld } from '../../src/world/issues/issues-world.js';
import { connectInProcess } from '../../src/world/in-process-connection.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';

async function connect(seed = 1) {
  const state = issuesWorld.init(substream(seed, 'world'), {});
  const connection = await connectInProcess(createWorldServer({ world: issuesWorld, state }));
  return { state, ...connection };
}

describe('issues world served over MCP (real SDK client and server)', () => {
  it('lists every tool with its input and output schema', async () => {
    const { client, close } = await connect();
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['search_issues', 'get_issue', 'get_user', 'create_issue', 'update_issue', 'close_issue', 'add_label', 'remove_label', 'add_comment'],
      );
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, 'object');
        assert.ok(tool.outputSchema, `${tool.name} has an output schema`);
        assert.ok((tool.description ?? '').length > 20);
      }
    } finally {
      await close();
    }
  });

  it('answers a valid call with text and structured content that passes the output schema', async () => {
    const { client, close, state } = await connect(2);
    try {
      await client.listTools();
      const number = [...state.issues.keys()][0]!;
      const result = await client.callTool({ name: 'get_issue', arguments: { number } });
      assert.equal(result.isError, undefined);
      assert.equal((result.structuredContent as any).issue.number, number);
      assert.deepEqual(JSON.parse((result.content as any)[0].text), result.structuredContent);
    } finally {
      await close();
    }
  });

  it('answers bad arguments with an isError result naming every bad field', async () => {
    const { client, close } = await connect();
    try {
      const result = await client.callTool({ name: 'search_issues', arguments: { limit: 'ten', colour: 'red' } });
      assert.equal(result.isError, true);
      const text = (result.content as any)[0].text as string;
      assert.match(text, /^Invalid arguments for search_issues: /);
      for (const part of ['limit: expected integer, got string', 'query: missing required argument', 'colour: unknown field']) {
        assert.ok(text.includes(part), `${text} names ${part}`);
      }
    } finally {
      await close();
    }
  });

  it('answers a semantic failure with isError and leaves state unchanged', async () => {
    const { client, close, state } = await connect(3);
    try {
      const result = await client.callTool({ name: 'get_issue', arguments: { number: 12 } });
      assert.equal(result.isError, true);
      assert.match((result.content as any)[0].text, /Issue #12 not found/);
    } finally {
      await close();
    }
    assert.equal(state.issues.has(12), false);
  });

  it('answers an unknown tool with a JSON-RPC -32602 error', async () => {
    const { client, close } = await connect();
    try {
      await assert.rejects(
        client.callTool({ name: 'delete_everything', arguments: {} }),
        (error: unknown) => error instanceof McpError && error.code === ErrorCode.InvalidParams && /Unknown tool: delete_everything/.test(error.message),
      );
    } finally {
      await close();
    }
  });
});
