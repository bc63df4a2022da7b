// The memory server world: the real @modelcontextprotocol/server-memory on a
// seeded knowledge graph lists exactly the pinned catalog, gives byte-identical
// results and snapshots on two fresh sandboxes from the same seed, draws a
// different graph from another seed, keeps its file inside the sandbox (never
// in the package directory), and leaves no process or sandbox behind. The
// generator's graph is one the server reads back unchanged, and the probe reads
// it the way the server does.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../../src/core/canonical-json.js';
import { substream } from '../../../src/core/random.js';
import { groupAlive } from '../../../src/world/servers/child-transport.js';
import { closeKeptChildren, LEASES_PER_CHILD } from '../../../src/world/servers/server-pool.js';
import { drawMemoryGraph, memoryFileText, memoryServerWorld, memorySnapshot, parseMemoryFile, probeMemorySandbox } from '../../../src/world/servers/memory/memory-world.js';
import { createSandbox, removeSandbox } from '../../../src/world/servers/sandbox.js';
import { openWorldSession } from '../../../src/world/world-session.js';
import { liveAndPinnedCatalog, PINNED, sessionCalls, type Call } from './server-world-harness.js';

const PACKAGE_DIR = dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json'));

/** Everything under the package directory, relative, sorted: a write there would show. */
function packageTree(directory = PACKAGE_DIR, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = `${prefix}${entry.name}`;
    return entry.isDirectory() ? [`${path}/`, ...packageTree(join(directory, entry.name), `${path}/`)] : [path];
  }).sort();
}

/** One episode's worth of calls on a fresh sandbox from `seed`; everything it returns is what a record would hold. */
function episode(seed: number) {
  return sessionCalls(memoryServerWorld, seed, (initial) => {
    const person = Object.keys(initial.people)[0]!;
    const newcomer = Object.keys(initial.newcomers)[0]!;
    const project = (Object.values(initial.projects) as any[]).find((entry) => entry.has_twin && !entry.legacy).name as string;
    const calls: Call[] = [
      ['read_graph', {}],
      ['search_nodes', { query: project }],
      ['open_nodes', { names: [person, 'Nobody'] }],
      // The missing precondition: the server refuses an observation for a name it has no entity for.
      ['add_observations', { observations: [{ entityName: newcomer, contents: ['based in Oslo'] }] }],
      ['create_entities', { entities: [{ name: newcomer, entityType: 'person', observations: ['based in Oslo'] }] }],
      // A name it already has is skipped without a word.
      ['create_entities', { entities: [{ name: project, entityType: 'project', observations: ['ignored'] }] }],
      ['create_relations', { relations: [{ from: newcomer, to: person, relationType: 'reports_to' }] }],
      ['add_observations', { observations: [{ entityName: person, contents: ['prefers email', 'on call this week'] }] }],
      ['delete_observations', { deletions: [{ entityName: person, observations: ['on call this week'] }] }],
      ['delete_relations', { relations: [{ from: newcomer, to: person, relationType: 'reports_to' }] }],
      ['delete_entities', { entityNames: [Object.keys(initial.duplicates)[0]!] }],
      ['open_nodes', {}],
    ];
    return { calls, person, newcomer, project };
  });
}

describe('memory server world', () => {
  it('lists exactly the pinned catalog the adapter declares', async () => {
    const { listed, pinned, serverInfo } = await liveAndPinnedCatalog(memoryServerWorld, new URL('../../../worlds/memory-server.catalog.json', import.meta.url));
    assert.equal(canonicalJson(listed as never), canonicalJson(pinned as never));
    assert.deepEqual(memoryServerWorld.tools.map((tool) => tool.name), listed.map((tool) => tool.name));
    assert.deepEqual(listed.map((tool) => tool.name).sort(), [
      'add_observations', 'create_entities', 'create_relations', 'delete_entities', 'delete_observations', 'delete_relations', 'open_nodes', 'read_graph', 'search_nodes',
    ]);
    assert.deepEqual(serverInfo, { name: 'memory-server', version: '0.6.3' });
  });

  it('gives byte-identical results and snapshots for the same seed on two fresh sandboxes, and the writes land in the file', async () => {
    const before = packageTree();
    const a = await episode(5);
    const b = await episode(5);
    assert.equal(canonicalJson(a.initial), canonicalJson(b.initial));
    assert.equal(canonicalJson(a.results as never), canonicalJson(b.results as never));
    assert.equal(canonicalJson(a.final), canonicalJson(b.final));
    const text = canonicalJson(a.results as never);
    assert.ok(!text.includes(tmpdir()) && !text.includes('episode-factory-memory-server-'), 'no real path reaches a result');
    assert.equal(a.actor.package, '@modelcontextprotocol/server-memory@2026.8.31');
    assert.match(String(a.actor.integrity), /^sha512-/);
    assert.equal(a.actor.server_info, 'memory-server 0.6.3');
    assert.deepEqual((a.actor.normalisations as Array<{ id: string }>).map((rule) => rule.id), ['sandbox-path']);
    const byName = (name: string) => a.results.find((entry) => entry.name === name)!.result;
    assert.equal(byName('add_observations').isError, true);
    assert.ok(text.includes(`Entity with name ${a.newcomer} not found`));
    // The twin is listed before the project it was superseded by.
    const found = (a.results[1]!.result.structuredContent as any).entities.map((entity: any) => entity.name);
    assert.equal(found.length, 2);
    assert.equal(found[1], a.project);
    assert.equal(found[0], a.initial.projects[a.project].twin);
    // The skipped duplicate create answers an empty list.
    assert.deepEqual(a.results[5]!.result.structuredContent, { entities: [] });
    // The final snapshot is the file after the writes.
    assert.equal(a.final.entities_by_name[a.newcomer].entityType, 'person');
    // add_observations appends only what the entity lacks; delete_observations removes exact matches.
    const notes = a.initial.entities_by_name[a.person].observations as string[];
    assert.deepEqual(a.final.entities_by_name[a.person].observations, [...notes, ...(notes.includes('prefers email') ? [] : ['prefers email'])]);
    assert.deepEqual(Object.keys(a.final.duplicates), []);
    assert.equal(canonicalJson(a.final.relations_by_key), canonicalJson(a.initial.relations_by_key));
    assert.deepEqual(a.final.other_files, []);
    assert.equal(a.final.unreadable_lines, 0);
    // The server wrote only inside the sandbox: nothing appeared in its package directory.
    assert.deepEqual(packageTree(), before);
    assert.ok(!existsSync(join(PACKAGE_DIR, 'dist', 'memory.jsonl')) && !existsSync(join(PACKAGE_DIR, 'dist', 'memory.json')));
  });

  it('draws a different graph from a different seed', async () => {
    const a = await episode(5);
    const c = await episode(6);
    assert.notEqual(canonicalJson(a.initial), canonicalJson(c.initial));
  });

  it('points MEMORY_FILE_PATH at an absolute path inside the sandbox, and leaves no process or sandbox behind', async (t) => {
    // A child per connection here; the kept child is the next test.
    process.env.EPISODE_FACTORY_FRESH_SERVERS = '1';
    t.after(() => {
      delete process.env.EPISODE_FACTORY_FRESH_SERVERS;
    });
    assert.deepEqual(memoryServerWorld.launch({ base: '/tmp/x', root: '/tmp/x/sandbox' }, { pinnedDate: '2026-12-01T00:00:00Z' }), { args: [], env: { MEMORY_FILE_PATH: '/tmp/x/sandbox/memory.jsonl' } });
    let pid = 0;
    const session = await openWorldSession(memoryServerWorld, substream(9, 'world'), {}, {
      pinnedDate: PINNED,
      onEvent: (event, data) => {
        if (event === 'server_started') pid = data.pid as number;
      },
    });
    const connection = await session.connect({});
    await connection.client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Probe', entityType: 'test', observations: [] }] } });
    assert.ok(pid > 0, 'the child runs while connected');
    const environment = Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    const file = environment.MEMORY_FILE_PATH!;
    assert.ok(isAbsolute(file), file);
    assert.match(file, /\/episode-factory-memory-server-[^/]+\/sandbox\/memory\.jsonl$/);
    assert.ok(readFileSync(file, 'utf8').includes('"name":"Probe"'), 'the write went to that file');
    await session.dispose();
    assert.equal(groupAlive(pid), false);
    assert.equal(existsSync(dirname(dirname(file))), false, 'the sandbox is removed');
  });

  it('kept across episodes: MEMORY_FILE_PATH goes through a link the pool moves to each episode\'s sandbox', async () => {
    await closeKeptChildren();
    const pids: number[] = [];
    const files: string[] = [];
    for (const seed of [3, 4]) {
      const session = await openWorldSession(memoryServerWorld, substream(seed, 'world'), {}, {
        pinnedDate: PINNED,
        onEvent: (event, data) => {
          if (event === 'server_started') pids.push(data.pid as number);
        },
      });
      const connection = await session.connect({});
      await connection.client.callTool({ name: 'create_entities', arguments: { entities: [{ name: `Probe ${seed}`, entityType: 'test', observations: [] }] } });
      const pid = pids.at(-1)!;
      const file = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((line) => line.startsWith('MEMORY_FILE_PATH='))!.slice('MEMORY_FILE_PATH='.length);
      assert.match(file, /\/episode-factory-memory-server-pool-[^/]+\/child-[^/]+\/current\/memory\.jsonl$/);
      files.push(realpathSync(file));
      const final = (await session.finalSnapshot()) as { entities: Array<{ name: string }> };
      assert.ok(final.entities.some((entity) => entity.name === `Probe ${seed}`), 'the write landed in this episode\'s sandbox');
      assert.ok(!final.entities.some((entity) => entity.name === `Probe ${seed - 1}`), 'and not the last one\'s');
      await session.dispose();
    }
    assert.equal(pids[0], pids[1], 'one child served both episodes');
    assert.notEqual(files[0], files[1], 'each through its own sandbox');
    await closeKeptChildren();
    assert.equal(groupAlive(pids[0]!), false);
  });

  it(`retires a kept child after ${LEASES_PER_CHILD} leases (a server may limit requests per minute) and starts another`, { timeout: 120_000 }, async () => {
    await closeKeptChildren();
    const pids: number[] = [];
    for (let lease = 0; lease <= LEASES_PER_CHILD; lease++) {
      const session = await openWorldSession(memoryServerWorld, substream(lease, 'world'), {}, {
        pinnedDate: PINNED,
        onEvent: (event, data) => {
          if (event === 'server_started') pids.push(data.pid as number);
        },
      });
      const connection = await session.connect({});
      await connection.client.listTools();
      await session.dispose();
    }
    const distinct = [...new Set(pids)];
    assert.equal(distinct.length, 2, `one child for the first ${LEASES_PER_CHILD} leases, another for the next: ${distinct.join(', ')}`);
    assert.equal(pids.filter((pid) => pid === distinct[0]).length, LEASES_PER_CHILD);
    assert.equal(groupAlive(distinct[0]!), false, 'the retired child is gone');
    await closeKeptChildren();
  });

  it('kept children of episodes that run at once each have their own link: every write lands in its own sandbox', async () => {
    await closeKeptChildren();
    const warm = await openWorldSession(memoryServerWorld, substream(20, 'world'), {}, { pinnedDate: PINNED });
    await (await warm.connect({})).close();
    await warm.dispose();
    const sessions = await Promise.all([21, 22].map((seed) => openWorldSession(memoryServerWorld, substream(seed, 'world'), {}, { pinnedDate: PINNED })));
    try {
      const connections = await Promise.all(sessions.map((session) => session.connect({})));
      await Promise.all(connections.map((connection, index) => connection.client.callTool({ name: 'create_entities', arguments: { entities: [{ name: `Concurrent ${index}`, entityType: 'test', observations: [] }] } })));
      await Promise.all(connections.map((connection) => connection.close()));
      for (const [index, session] of sessions.entries()) {
        const names = ((await session.finalSnapshot()) as { entities: Array<{ name: string }> }).entities.map((entity) => entity.name);
        assert.ok(names.includes(`Concurrent ${index}`) && !names.includes(`Concurrent ${1 - index}`), names.join(', '));
      }
    } finally {
      await Promise.all(sessions.map((session) => session.dispose()));
      await closeKeptChildren();
    }
  });
});

describe('memory graph generator and probe', () => {
  it('writes the server\'s own format, which parses back to the same graph, with no trailing newline', () => {
    for (let seed = 0; seed < 16; seed++) {
      const graph = drawMemoryGraph(substream(seed, 'world'));
      const text = memoryFileText(graph);
      assert.ok(!text.endsWith('\n'));
      assert.deepEqual(parseMemoryFile(text), { graph, unreadable: 0 });
      const first = JSON.parse(text.split('\n')[0]!);
      assert.deepEqual(Object.keys(first), ['type', 'name', 'entityType', 'observations']);
    }
  });

  it('plants what the lane draws from on every seed, and no name hides in another entity\'s text but the twin\'s', () => {
    for (let seed = 0; seed < 16; seed++) {
      const graph = drawMemoryGraph(substream(seed, 'world'));
      const names = graph.entities.map((entity) => entity.name);
      assert.equal(new Set(names).size, names.length, `seed ${seed}: names are unique`);
      const keys = graph.relations.map((relation) => `${relation.from}|${relation.relationType}|${relation.to}`);
      assert.equal(new Set(keys).size, keys.length, `seed ${seed}: relations are unique`);
      // The lane's scripted answers read a person's city as their first observation, their project as the first
      // relation open_nodes lists for them, and a lead's team as the third.
      const snapshot = memorySnapshot(graph) as any;
      for (const person of Object.values(snapshot.people) as any[]) {
        const listed = graph.relations.filter((relation) => relation.from === person.name || relation.to === person.name);
        assert.equal(person.observations[0], `based in ${person.city}`);
        assert.deepEqual(listed[0], { from: person.name, to: person.project, relationType: 'works_on' });
        if (person.is_lead) assert.deepEqual(listed[2], { from: person.name, to: person.leads, relationType: 'manages' });
      }
      for (const key of ['newcomers', 'duplicates', 'leaves']) assert.ok(Object.keys(snapshot[key]).length >= 1, `seed ${seed}: ${key}`);
      assert.ok((Object.values(snapshot.people) as any[]).some((person) => person.is_lead && person.has_reports), `seed ${seed}: a lead with reports`);
      assert.ok((Object.values(snapshot.tools) as any[]).some((tool) => tool.has_users && tool.has_non_users), `seed ${seed}: a tool with users and non-users`);
      assert.ok(Object.keys(snapshot.cities).length >= 2, `seed ${seed}: two cities`);
      assert.equal((Object.values(snapshot.projects) as any[]).filter((project) => project.has_twin && !project.legacy).length, 1, `seed ${seed}: one project with a twin`);
      for (const entity of graph.entities.filter((candidate) => candidate.entityType === 'project' || candidate.entityType === 'tool')) {
        // What search_nodes matches: a substring of a name, a type or an observation, case-insensitively.
        const hits = graph.entities.filter((other) => [other.name, other.entityType, ...other.observations].some((text) => text.toLowerCase().includes(entity.name.toLowerCase())));
        const twin = graph.entities.find((other) => other.observations.includes(`superseded by ${entity.name}`));
        assert.deepEqual(hits.map((hit) => hit.name), twin ? [twin.name, entity.name] : [entity.name], `seed ${seed}: searching ${entity.name}`);
      }
    }
  });

  it('reads memory.jsonl only: an absent file is the empty graph, temp files are ignored, other files are listed', async () => {
    const sandbox = await createSandbox('memory-server');
    try {
      const empty = (await probeMemorySandbox(sandbox)) as any;
      assert.deepEqual([empty.entities, empty.relations, empty.other_files], [[], [], []]);
      writeFileSync(join(sandbox.root, 'memory.jsonl'), '{"type":"entity","name":"A","entityType":"t","observations":[]}\n\nnot json');
      writeFileSync(join(sandbox.root, 'memory.jsonl.0123456789abcdef0123456789abcdef.tmp'), '{"type":"entity","name":"B","entityType":"t","observations":[]}');
      mkdirSync(join(sandbox.root, 'stray'));
      const read = (await probeMemorySandbox(sandbox)) as any;
      assert.deepEqual(Object.keys(read.entities_by_name), ['A']);
      assert.equal(read.unreadable_lines, 1);
      assert.deepEqual(read.other_files, ['stray']);
    } finally {
      await removeSandbox(sandbox);
    }
  });
});
