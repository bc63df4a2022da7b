import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { substream } from '../../src/core/random.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { InfrastructureError, type Action, type Policy } from '../../src/policy/policy-contract.js';
import { DEFAULT_LIMITS } from '../../src/runner/limits.js';
import { McpToolSession } from '../../src/runner/tool-session.js';
import { Trace } from '../../src/runner/trace.js';
import { runWorldEpisode } from '../../src/runner/world-episode.js';
import { ReplayPolicy } from '../../src/verify/replay-policy.js';
import type { IssuesState } from '../../src/world/issues/issues-state.js';
import { issuesWorld } from '../../src/world/issues/issues-world.js';
import { connectScriptedWorld, keptConnectionCounts, keptServerOf } from '../../src/world/kept-connections.js';
import type { World } from '../../src/world/world-contract.js';
import { REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

const actor = { role: 'policy', kind: 'test', name: 'listed-actions', version: '1' };
const opening = [
  { role: 'system' as const, content: 'You manage issues.' },
  { role: 'user' as const, content: 'Do the thing.' },
];

/** A world of its own for each test: the pool is keyed by the world object, so counts start from nothing. */
const ownWorld = (): World<IssuesState> => ({ ...issuesWorld });

const firstOpen = (state: IssuesState) => [...state.issues.values()].find((issue) => issue.state === 'open')!;

function readAndComment(state: IssuesState): Action[] {
  const issue = firstOpen(state);
  return [
    { kind: 'tool_call', name: 'get_issue', arguments: { number: issue.number } },
    { kind: 'tool_call', name: 'add_comment', arguments: { number: issue.number, body: 'seen' } },
    { kind: 'final_text', text: 'Done.' },
  ];
}

async function episode(world: World<IssuesState>, seed: number, policyFor: (state: IssuesState) => Policy = (state) => new ReplayPolicy(readAndComment(state), actor)) {
  const state = world.init(substream(seed, 'world'), {});
  const trace = new Trace('kept-test', undefined, undefined, { keepInMemory: true });
  const result = await runWorldEpisode({ connect: (options) => connectScriptedWorld({ world, state }, options), policy: policyFor(state), messages: opening, limits: DEFAULT_LIMITS, trace: trace.phase('test') });
  return { result, state, events: trace.events! };
}

const delta = (before: ReturnType<typeof keptConnectionCounts>) => {
  const now = keptConnectionCounts();
  return { opened: now.opened - before.opened, leased: now.leased - before.leased, closed: now.closed - before.closed };
};

withoutVariable('EPISODE_FACTORY_FRESH_CONNECTIONS');

describe('kept connections', () => {
  it('handshakes once and re-points the kept pair at each clean episode, with the results of a fresh connection', async () => {
    const world = ownWorld();
    const before = keptConnectionCounts();
    const kept = [];
    for (const seed of [1, 2, 3]) kept.push(await episode(world, seed));
    assert.deepEqual(delta(before), { opened: 1, leased: 3, closed: 0 });
    // Each episode read and changed its own state, not the one before it.
    for (const { state } of kept) assert.equal(firstOpen(state).comments.at(-1)?.body, 'seen');

    process.env.EPISODE_FACTORY_FRESH_CONNECTIONS = '1';
    const freshBefore = keptConnectionCounts();
    const fresh = [];
    for (const seed of [1, 2, 3]) fresh.push(await episode(world, seed));
    assert.deepEqual(delta(freshBefore), { opened: 0, leased: 0, closed: 0 });
    for (let index = 0; index < 3; index++) {
      assert.equal(canonicalJson(kept[index]!.result.run.messages), canonicalJson(fresh[index]!.result.run.messages));
      assert.equal(canonicalJson(kept[index]!.result.catalog), canonicalJson(fresh[index]!.result.catalog));
      assert.equal(canonicalJson(world.snapshot(kept[index]!.state)), canonicalJson(world.snapshot(fresh[index]!.state)));
      // The same trace events in the same order: a kept connection is invisible there too.
      assert.deepEqual(
        kept[index]!.events.map((event) => event.event_type),
        fresh[index]!.events.map((event) => event.event_type),
      );
    }
  });

  it('closes the pair of an episode that ended with an error, and opens another for the next', async () => {
    const world = ownWorld();
    await episode(world, 1);
    const before = keptConnectionCounts();
    const failing: Policy = {
      actor,
      next: async () => {
        throw new InfrastructureError('the model server went away');
      },
    };
    await assert.rejects(episode(world, 2, () => failing), /went away/);
    assert.deepEqual(delta(before), { opened: 0, leased: 1, closed: 1 });
    await episode(world, 3);
    assert.deepEqual(delta(before), { opened: 1, leased: 2, closed: 1 });
  });

  it('does not hand on a pair whose session cancelled a call, nor one with a request still in flight', async () => {
    const world = ownWorld();
    await episode(world, 1);
    const state = world.init(substream(4, 'world'), {});
    const before = keptConnectionCounts();
    const session = await McpToolSession.open(() => connectScriptedWorld({ world, state }));
    const cancelled = new AbortController();
    cancelled.abort();
    const execution = await session.call('get_issue', { number: firstOpen(state).number }, { timeoutMs: 1000, signal: cancelled.signal });
    assert.equal(execution.result.ok, false);
    // The cancelled call reconnected (closing the first pair, leasing a new one); ending the session closes that one too.
    await session.close({ clean: true });
    assert.deepEqual(delta(before), { opened: 1, leased: 2, closed: 2 });

    const inFlight = await connectScriptedWorld({ world, state });
    const listing = inFlight.client.listTools().catch(() => undefined);
    await inFlight.close({ clean: true });
    await listing;
    assert.deepEqual(delta(before), { opened: 2, leased: 3, closed: 3 });

    // An ending that does not say clean closes it as well.
    const unsaid = await connectScriptedWorld({ world, state });
    await unsaid.close();
    assert.deepEqual(delta(before), { opened: 3, leased: 4, closed: 4 });
  });

  it('hands each episode in flight a pair of its own, each serving its own state, and keeps them all', async () => {
    const world = ownWorld();
    const before = keptConnectionCounts();
    const states = [5, 6, 7, 8].map((seed) => world.init(substream(seed, 'world'), {}));
    const round = async () => {
      const connections = await Promise.all(states.map((state) => connectScriptedWorld({ world, state })));
      const answers = await Promise.all(
        connections.map((connection, index) => connection.client.callTool({ name: 'get_issue', arguments: { number: firstOpen(states[index]!).number } })),
      );
      answers.forEach((answer, index) => {
        const expected = world.call(states[index]!, 'get_issue', { number: firstOpen(states[index]!).number });
        assert.ok(expected.ok);
        assert.equal(canonicalJson(answer.structuredContent), canonicalJson(expected.value));
      });
      await Promise.all(connections.map((connection) => connection.close({ clean: true })));
      return connections.map((connection) => connection.client);
    };
    const first = await round();
    assert.equal(new Set(first).size, 4);
    const second = await round();
    assert.deepEqual(new Set(second), new Set(first));
    assert.deepEqual(delta(before), { opened: 4, leased: 8, closed: 0 });
  });

  it('lists the catalog once per pair, and points a kept client at the current session only: a tools/list_changed reaches it, never an earlier one', async () => {
    const world = ownWorld();
    const state = world.init(substream(9, 'world'), {});
    const traceA = new Trace('kept-a', undefined, undefined, { keepInMemory: true });
    const a = await McpToolSession.open(() => connectScriptedWorld({ world, state }), traceA.phase('test'));
    const client = (a as unknown as { connection: { client: import('@modelcontextprotocol/sdk/client/index.js').Client } }).connection.client;
    await a.close({ clean: true });
    // Count the listings the kept client sends from here on.
    let listings = 0;
    const listTools = client.listTools.bind(client);
    client.listTools = (...args: Parameters<typeof listTools>) => {
      listings++;
      return listTools(...args);
    };
    // Between leases, an announcement reaches nobody.
    await keptServerOf(client)!.sendToolListChanged();
    await new Promise((resolve) => setImmediate(resolve));

    const traceB = new Trace('kept-b', undefined, undefined, { keepInMemory: true });
    const b = await McpToolSession.open(() => connectScriptedWorld({ world, state }), traceB.phase('test'));
    assert.equal((b as unknown as { connection: { client: unknown } }).connection.client, client, 'the same kept client');
    assert.equal(listings, 0, 'the pair listed its catalog for A: B takes it without a tools/list');
    assert.equal(canonicalJson(b.catalog), canonicalJson(a.catalog));
    assert.notEqual(b.catalog, a.catalog, 'a copy of its own');
    assert.equal(await b.sync(), undefined, 'nothing announced to this session yet');
    await keptServerOf(client)!.sendToolListChanged();
    await new Promise((resolve) => setImmediate(resolve));
    b.step = 3;
    assert.equal(await b.sync(), undefined, 'the same catalog: no change, but read again');
    assert.equal(listings, 1, 'after tools/list_changed, over the wire');
    await b.close({ clean: true });
    // Handed back, the client no longer tells B anything.
    await keptServerOf(client)!.sendToolListChanged();
    await new Promise((resolve) => setImmediate(resolve));

    const typesA = traceA.events!.map((event) => event.event_type);
    const typesB = traceB.events!.map((event) => event.event_type);
    assert.deepEqual(typesA, ['catalog_listed']);
    assert.deepEqual(typesB, ['catalog_listed', 'list_changed_received', 'harness_recovery']);
    assert.deepEqual(traceB.events![2]!.data, { action: 'catalog_refreshed', step: 3, removed: [], added: [] });
  });

  it('leaves an episode with a fault plan on a fresh connection behind the fault layer', async () => {
    const world = ownWorld();
    const state = world.init(substream(10, 'world'), {});
    const before = keptConnectionCounts();
    const { run } = await runWorldEpisode({
      connect: (options) => connectScriptedWorld({ world, state }, options),
      policy: new ReplayPolicy(readAndComment(state), actor),
      messages: opening,
      limits: DEFAULT_LIMITS,
      faults: { plan: { faults: [{ id: 'err', kind: 'tool_error', calls: [1] }] }, random: substream(10, 'faults:test') },
    });
    assert.deepEqual(delta(before), { opened: 0, leased: 0, closed: 0 });
    assert.equal(run.messages.filter((message) => message.role === 'tool')[0]!.tool_result.ok, false);
  });

  it('writes the same bytes with EPISODE_FACTORY_FRESH_CONNECTIONS=1 as with kept connections, one and four episodes in flight', async () => {
    for (const name of ['tool-world-v1', 'issues-dialogue-v1']) {
      const lane = loadLane(name, REPO_ROOT);
      const outputs: Record<string, string> = {};
      for (const fresh of [false, true]) {
        for (const concurrency of [1, 4]) {
          if (fresh) process.env.EPISODE_FACTORY_FRESH_CONNECTIONS = '1';
          else delete process.env.EPISODE_FACTORY_FRESH_CONNECTIONS;
          const before = keptConnectionCounts();
          const out = temporaryDirectory();
          await generateDataset({ lane, outDir: out, seeds: { from: 0, to: 3 }, workers: 1, concurrency, formats: ['jsonl'] });
          const used = delta(before);
          // Generation and replay both lease; with keeping off, nothing does.
          if (fresh) assert.equal(used.leased, 0);
          else assert.ok(used.leased > 0 && used.opened <= concurrency * 2, `${name}: ${JSON.stringify(used)}`);
          outputs[`${fresh}/${concurrency}`] = ['episodes.jsonl', 'rejected.jsonl'].map((file) => readFileSync(join(out, file), 'utf8')).join('\u0000');
        }
      }
      const kept = outputs['false/1']!;
      assert.ok(kept.length > 1000);
      for (const [key, text] of Object.entries(outputs)) assert.equal(text, kept, `${name} ${key}: not the bytes of the kept path`);
    }
  });
});
