// Hostile: tool arguments nested far past the depth limit, sent to the fault
// layer in process (as the factory's agent loop would pass a model's call on).
// The layer keys every call by its canonical arguments, a recursion that such
// a value overflowed: the call then got no answer at all and the client waited
// for its timeout. Now it is answered at once with -32602 naming the limit, and
// the session goes on.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { MAX_JSON_DEPTH } from '../../src/core/bounded-json.js';
import { substream } from '../../src/core/random.js';
import { FaultState } from '../../src/world/faults/fault-state.js';
import { connectInProcess } from '../../src/world/in-process-connection.js';
import { issuesWorld } from '../../src/world/issues/issues-world.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';
import { nested } from '../helpers.js';

describe('hostile: deep arguments through the fault layer in process', () => {
  it(`answers a call whose arguments nest 10,000 deep with -32602 naming the limit (${MAX_JSON_DEPTH}), and goes on`, { timeout: 60_000 }, async () => {
    const state = issuesWorld.init(substream(1, 'world'), {});
    const faults = new FaultState({ faults: [] }, substream(1, 'faults'), () => undefined);
    const connection = await connectInProcess(createWorldServer({ world: issuesWorld, state }), { faults });
    try {
      await assert.rejects(
        connection.client.callTool({ name: 'search_issues', arguments: { query: nested(10_000, 1) as object } }, undefined, { timeout: 10_000 }),
        (error: unknown) => {
          assert.ok(error instanceof McpError, String(error));
          assert.equal(error.code, -32602, error.message);
          assert.match(error.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
          return true;
        },
      );
      const listed = await connection.client.listTools(undefined, { timeout: 10_000 });
      assert.ok(listed.tools.some((tool) => tool.name === 'search_issues'));
    } finally {
      await connection.close();
    }
  });
});
