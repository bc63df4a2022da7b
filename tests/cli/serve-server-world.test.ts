// `serve` on a server world: the real server-filesystem on the sandbox seed 3
// draws, forwarded to an outside MCP client over stdio with the sandbox shown
// as /sandbox, and --dump-state writing the probe's snapshot on exit.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI, temporaryDirectory } from '../helpers.js';

describe('serve a server world', () => {
  it('forwards the real catalog and answers, and dumps the sandbox state on exit', async () => {
    const dump = join(temporaryDirectory('ef-serve-server-'), 'state.json');
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', 'filesystem-server', '--seed', '3', '--dump-state', dump], stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
    const client = new Client({ name: 'serve-test', version: '1' });
    await client.connect(transport);
    try {
      assert.equal(client.getServerVersion()?.name, 'secure-filesystem-server');
      const { tools } = await client.listTools();
      assert.equal(tools.length, 14);
      const read = (await client.callTool({ name: 'read_text_file', arguments: { path: '/sandbox/config/settings.env' } })) as CallToolResult;
      assert.match((read.content[0] as { text: string }).text, /^# owner: [A-Z][a-z]+ [A-Z][a-z]+\n(?:.*\n)*MAX_RETRIES=[0-9]+\n/);
      const allowed = (await client.callTool({ name: 'list_allowed_directories', arguments: {} })) as CallToolResult;
      assert.equal((allowed.content[0] as { text: string }).text, 'Allowed directories:\n/sandbox');
      const write = (await client.callTool({ name: 'write_file', arguments: { path: '/sandbox/hello.txt', content: 'hi\n' } })) as CallToolResult;
      assert.equal((write.content[0] as { text: string }).text, 'Successfully wrote to /sandbox/hello.txt');
    } finally {
      await client.close();
    }
    for (let waited = 0; waited < 10_000 && !/stopped/.test(stderr); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.match(stderr, /world filesystem-server 1\.0\.0 \(@modelcontextprotocol\/server-filesystem@2026\.8\.31\), seed 3, 14 tools, on stdio/);
    const state = JSON.parse(readFileSync(dump, 'utf8'));
    assert.equal(state.files['hello.txt'].text, 'hi\n');
    assert.ok(state.files['config/settings.env']);
  });
});
