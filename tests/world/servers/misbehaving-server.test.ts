// A third-party server that crashes, writes garbage to stdout, hangs, starts
// processes or is handed secrets: each is killed and recorded as a server
// fault at the turn it happened, the episode goes on against a fresh child
// on the same sandbox (its state survives), the run never hangs, nothing of
// the child outlives the episode, and no secret reaches it.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { substream } from '../../../src/core/random.js';
import type { Action, Observation, Policy } from '../../../src/policy/policy-contract.js';
import { DEFAULT_LIMITS } from '../../../src/runner/limits.js';
import { runWorldEpisode } from '../../../src/runner/world-episode.js';
import { sandboxPath } from '../../../src/world/servers/normalising-transport.js';
import type { ServerWorld } from '../../../src/world/server-world.js';
import { openWorldSession } from '../../../src/world/world-session.js';

const tool = (name: string) => ({ name, description: name, inputSchema: { type: 'object', properties: {} } });

const misbehaving: ServerWorld = {
  kind: 'server',
  name: 'misbehaving-server',
  version: '0.0.1',
  description: 'a test server that misbehaves on request',
  configSchema: { type: 'object' },
  tools: ['count', 'crash', 'garbage', 'hang', 'spawn', 'environment'].map(tool),
  package: { name: 'misbehaving', version: '0.0.1', entry: 'misbehaving-server.mjs' },
  shownRoot: '/sandbox',
  resolveEntry: () => fileURLToPath(new URL('../../fixtures/misbehaving-server.mjs', import.meta.url)),
  launch: (sandbox) => ({ args: [sandbox.root] }),
  populate: async (sandbox) => writeFileSync(join(sandbox.root, 'count.txt'), '0'),
  probe: async (sandbox) => ({ count: Number(readFileSync(join(sandbox.root, 'count.txt'), 'utf8')) }),
  normalisations: (sandbox) => [sandboxPath(sandbox.root, '/sandbox', sandbox.base)],
};

/** Calls the named tools one per turn, then answers. */
function callsInOrder(names: string[]): Policy {
  let next = 0;
  return {
    actor: { role: 'policy', kind: 'test', name: 'calls-in-order', version: '1' },
    async next(_observation: Observation): Promise<Action> {
      const name = names[next++];
      return name === undefined ? { kind: 'final_text', text: 'done' } : { kind: 'tool_call', name, arguments: {} };
    },
  } as Policy;
}

async function run(names: string[], timeoutMs = 2_000) {
  const session = await openWorldSession(misbehaving, substream(0, 'world'), {}, { pinnedDate: '2026-01-01T00:00:00Z' });
  try {
    const started = performance.now();
    const episode = await runWorldEpisode({
      connect: (options) => session.connect(options),
      policy: callsInOrder(names),
      messages: [{ role: 'user', content: 'go' }],
      limits: { ...DEFAULT_LIMITS, tool_timeout_ms: timeoutMs, wall_time_ms: 60_000 },
    });
    const tools = episode.run.messages.filter((message) => message.role === 'tool');
    return { episode, tools, ms: performance.now() - started, final: (await session.finalSnapshot()) as { count: number } };
  } finally {
    await session.dispose();
  }
}

function childPids(): number[] {
  const fixture = fileURLToPath(new URL('../../fixtures/misbehaving-server.mjs', import.meta.url));
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(fixture);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('a misbehaving third-party server', () => {
  it('crashes: recorded as a server fault, and the next call reaches a fresh child on the same state', async () => {
    const { episode, tools, final } = await run(['count', 'crash', 'count']);
    assert.deepEqual(episode.serverFaults.map((fault) => [fault.kind, fault.step]), [['crashed', 2]]);
    assert.equal(tools[0]!.content, 'count is 1 in /sandbox');
    assert.equal(tools[1]!.tool_result.ok, false);
    assert.equal(tools[2]!.content, 'count is 2 in /sandbox', 'the state on disk survived the crash');
    assert.equal(final.count, 2);
  });

  it('writes garbage to stdout: killed, recorded, replaced', async () => {
    const { episode, tools } = await run(['garbage', 'count']);
    assert.deepEqual(episode.serverFaults.map((fault) => fault.kind), ['garbage_output']);
    assert.match(episode.serverFaults[0]!.detail, /something other than JSON-RPC/);
    assert.equal(tools[0]!.tool_result.ok, false);
    assert.equal(tools[1]!.content, 'count is 1 in /sandbox');
  });

  it('hangs: the call times out, the child fails a ping, is killed and restarted; the run does not hang', async () => {
    const { episode, tools, ms } = await run(['hang', 'count'], 500);
    assert.deepEqual(episode.serverFaults.map((fault) => [fault.kind, fault.step]), [['hung', 1]]);
    assert.equal(tools[0]!.tool_result.kind, 'timeout');
    assert.equal(tools[1]!.content, 'count is 1 in /sandbox');
    assert.ok(ms < 10_000, `took ${ms} ms`);
    assert.deepEqual(childPids(), [], 'the hung child is gone');
  });

  it('starts a grandchild: the whole process group is killed with the episode', async () => {
    const { episode, tools } = await run(['spawn', 'count']);
    assert.deepEqual(episode.serverFaults, []);
    const grandchild = Number(/spawned ([0-9]+)/.exec(tools[0]!.content)![1]);
    assert.deepEqual(childPids(), []);
    assert.equal(running(grandchild), false, 'the grandchild died with its group');
  });

  it('gets no secret from our environment, only the allowlist', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { OPENAI_API_KEY: 'sk-test', GITHUB_TOKEN: 'ghp-test', DB_PASSWORD: 'pw', CLIENT_SECRET: 's', SOME_SETTING: 'plain' });
    try {
      const { tools } = await run(['environment']);
      assert.deepEqual(tools[0]!.content.split(','), ['HOME', 'LANG', 'PATH', 'TZ']);
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    }
  });
});
