// A server world written as data, end to end on the real server-filesystem:
// the registry finds it in the working directory's worlds/, the loader names
// a bad field by its pointer, the seed and probe run, guards refuse before
// the child sees a call, a regex normalisation rewrites values and keys, the
// escape hatch is refused when it is not deterministic, and a missing system
// program is a clear exit-2 error.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { canonicalJson } from '../../../../src/core/canonical-json.js';
import { FactoryError } from '../../../../src/core/errors.js';
import { substream } from '../../../../src/core/random.js';
import type { ServerWorld } from '../../../../src/world/server-world.js';
import { loadDefinition } from '../../../../src/world/servers/definition/definition-loader.js';
import { serverWorldFromDefinition } from '../../../../src/world/servers/definition/defined-server-world.js';
import { drawServerSnapshot } from '../../../../src/world/servers/server-session.js';
import { findWorld, isBuiltInWorld, worldNames } from '../../../../src/world/world-registry.js';
import { sessionCalls, PINNED } from '../server-world-harness.js';

const CATALOG = readFileSync(new URL('../../../../worlds/filesystem-server.catalog.json', import.meta.url), 'utf8');

function definition(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    format: 'episode-factory.server-world.v1',
    name: 'notes-test',
    version: '1',
    description: 'server-filesystem on a few seeded notes',
    launch: { package: { name: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', entry: 'dist/index.js' }, args: ['{root}'] },
    sandbox: { shown_as: '/notes' },
    catalog: 'notes-test.catalog.json',
    seed: {
      vocabularies: { people: ['Ana Lima', 'Bo Chen', 'Cy Park', 'Di Rossi'], topics: ['budget', 'hiring', 'roadmap', 'offsite', 'security'] },
      draws: [
        { let: 'owner', pick: 'people' },
        { let: 'topics', sample: 'topics', count: { min: 2, max: 4 } },
      ],
      files: [{ for_each: 'topics', as: 'topic', path: 'notes/{{topic}}.md', text: '# {{topic|upper}}\nowner: {{owner}}\n' }],
    },
    probe: {
      parts: [{ name: 'tree', kind: 'file-tree', parsers: { '**/*.md': 'front-matter' } }],
      views: [{ name: 'owned', from: '/tree/files', where: { 'meta.owner': { exists: true } }, key: 'name', select: ['meta'] }],
    },
    normalisations: ['sandbox-path', { id: 'uppercase-notes', kind: 'regex', pattern: '\\.md\\b', flags: 'g', replace: '.note', keys: true }],
    guards: [
      { kind: 'paths-under-root', id: 'stay-in-notes', arguments: ['path', 'paths[]', 'source', 'destination'] },
      { kind: 'deny-tools', id: 'no-moving', tools: ['move_file'], reason: 'notes are never moved in this world' },
    ],
    ...overrides,
  };
}

let directory: string;
const previous = process.cwd();

function writeWorld(name: string, document: Record<string, unknown>): string {
  const path = join(directory, 'worlds', `${name}.json`);
  writeFileSync(path, JSON.stringify(document, null, 1));
  writeFileSync(join(directory, 'worlds', `${name}.catalog.json`), CATALOG);
  return path;
}

function expectProblem(path: string, pointer: string, words: RegExp): void {
  assert.throws(
    () => loadDefinition(path),
    (error: unknown) => {
      assert.ok(error instanceof FactoryError, String(error));
      assert.equal(error.code, 'definition_invalid');
      assert.equal(error.exitStatus, 2);
      const problem = error.problems.find((found) => found.where.endsWith(`: ${pointer}`));
      assert.ok(problem, `no problem at ${pointer}: ${JSON.stringify(error.problems)}`);
      assert.match(problem.reason, words);
      return true;
    },
  );
}

before(() => {
  directory = mkdtempSync(join(tmpdir(), 'defined-world-test-'));
  mkdirSync(join(directory, 'worlds'));
  writeWorld('notes-test', definition());
  process.chdir(directory);
});

after(() => {
  process.chdir(previous);
  rmSync(directory, { recursive: true, force: true });
});

describe('loading a definition', () => {
  test('the registry finds worlds/<name>.json in the working directory, as every worker thread would', () => {
    assert.ok(worldNames().includes('notes-test'));
    assert.ok(isBuiltInWorld('notes-test'));
    const world = findWorld('notes-test') as ServerWorld;
    assert.equal(world.kind, 'server');
    assert.equal(world.tools.length, 14);
    assert.deepEqual(world.guards?.map((guard) => guard.id), ['stay-in-notes', 'no-moving']);
  });

  test('a bad field is exit 2 naming its JSON pointer', () => {
    expectProblem(writeWorld('bad-version', definition({ name: 'bad-version', launch: { package: { name: 'x', version: 'latest', entry: 'a.js' } } })), '/launch/package/version', /pattern/);
    expectProblem(writeWorld('bad-guard', definition({ name: 'bad-guard', guards: [{ kind: 'deny-tools', tools: ['git_clone'] }] })), '/guards/0/tools/0', /no tool "git_clone" in the catalog/);
    expectProblem(writeWorld('bad-name', definition()), '/name', /name the file notes-test\.json/);
    expectProblem(writeWorld('bad-regex', definition({ name: 'bad-regex', normalisations: [{ id: 'x', kind: 'regex', pattern: '(', replace: '' }] })), '/normalisations/0/pattern', /not a regular expression/);
    expectProblem(writeWorld('bad-views', definition({ name: 'bad-views', probe: { parts: [{ name: 'tree', kind: 'file-tree' }], views: [{ name: 'tree', from: '/tree' }] } })), '/probe/views/0/name', /names two parts or views/);
  });
});

describe('a session on a defined world', () => {
  test('same seed, same snapshot bytes; another seed, others', async () => {
    const world = findWorld('notes-test') as ServerWorld;
    const first = canonicalJson(await drawServerSnapshot(world, substream(3, 'world'), {}, PINNED));
    const again = canonicalJson(await drawServerSnapshot(world, substream(3, 'world'), {}, PINNED));
    const other = canonicalJson(await drawServerSnapshot(world, substream(4, 'world'), {}, PINNED));
    assert.equal(first, again);
    assert.notEqual(first, other);
  });

  test('guards refuse before the child sees the call; the regex rule rewrites answers and snapshot keys; the actor lists every rule', async () => {
    const world = findWorld('notes-test') as ServerWorld;
    const run = await sessionCalls(world, 3, (initial) => {
      const file = Object.keys(initial.tree.files)[0] as string;
      return {
        file,
        calls: [
          ['read_text_file', { path: '/etc/passwd' }],
          ['read_text_file', { path: '/notes/../../etc/passwd' }],
          ['move_file', { source: `/notes/${file.replace('.note', '.md')}`, destination: '/notes/moved.md' }],
          ['list_directory', { path: '/notes/notes' }],
          ['write_file', { path: '/notes/notes/new.md', content: '# NEW\nowner: Zed Ward\n' }],
        ],
      };
    });
    const texts = run.results.map((entry) => (entry.result.content as Array<{ text: string }>)[0]!.text);
    assert.match(texts[0]!, /^Refused by stay-in-notes: path "\/etc\/passwd" is outside \/notes/);
    assert.match(texts[1]!, /^Refused by stay-in-notes/);
    assert.match(texts[2]!, /^Refused by no-moving: the tool move_file is not available/);
    assert.ok(run.results.slice(0, 3).every((entry) => entry.result.isError === true));
    // The rule rewrote the listing's file names, and the snapshot's keys as well as its values.
    assert.match(texts[3]!, /\.note/);
    assert.doesNotMatch(texts[3]!, /\.md/);
    assert.ok(Object.keys(run.final.tree.files).every((key) => key.endsWith('.note')));
    assert.equal(run.final.owned['new.note'].meta.owner, 'Zed Ward');
    assert.equal(run.initial.owned['new.note'], undefined);
    assert.deepEqual(
      (run.actor.normalisations as Array<{ id: string }>).map((rule) => rule.id),
      ['sandbox-path', 'uppercase-notes'],
    );
    assert.deepEqual((run.actor.guards as Array<{ id: string }>).map((guard) => guard.id), ['stay-in-notes', 'no-moving']);
    assert.match(String(run.actor.package), /server-filesystem@2026\.8\.31/);
  });

  test('a system program the world requires and this machine lacks is exit 2 naming it', async () => {
    const world = serverWorldFromDefinition(loadDefinition(writeWorld('needs-tool', definition({ name: 'needs-tool', launch: { ...(definition().launch as object), requires: ['no-such-program-here'] } }))));
    await assert.rejects(drawServerSnapshot(world, substream(1, 'world'), {}, PINNED), (error: unknown) => {
      assert.ok(error instanceof FactoryError);
      assert.equal(error.code, 'server_requires');
      assert.equal(error.exitStatus, 2);
      assert.match(error.message, /no-such-program-here/);
      return true;
    });
  });
});

describe('a probe that asks the server', () => {
  test('a tool-call part calls a read-only tool on a child of its own, in the model\'s view of paths', async () => {
    const base = definition() as { probe: { parts: object[] } };
    const world = serverWorldFromDefinition(
      loadDefinition(writeWorld('with-tool-probe', definition({ name: 'with-tool-probe', probe: { parts: [...base.probe.parts, { name: 'listing', kind: 'tool-call', tool: 'list_directory', arguments: { path: '/notes/notes' } }] } }))),
    );
    const snapshot = (await drawServerSnapshot(world, substream(3, 'world'), {}, PINNED)) as any;
    const names = Object.keys(snapshot.tree.files).map((path) => `[FILE] ${path.slice('notes/'.length)}`);
    assert.equal(snapshot.listing, names.join('\n'));
    const writing = serverWorldFromDefinition(
      loadDefinition(writeWorld('with-write-probe', definition({ name: 'with-write-probe', probe: { parts: [{ name: 'oops', kind: 'tool-call', tool: 'write_file', arguments: { path: '/notes/x', content: '' } }] } }))),
    );
    await assert.rejects(drawServerSnapshot(writing, substream(3, 'world'), {}, PINNED), /does not mark read-only/);
  });
});

describe('the escape hatch', () => {
  test('a deterministic populate module runs after the data and its files are probed', async () => {
    writeFileSync(join(directory, 'worlds', 'extra.mjs'), "import { writeFileSync } from 'node:fs';\nexport function populate({ random, root }) { writeFileSync(root + '/extra.md', '# EXTRA\\nowner: ' + random.pick(['Eve', 'Fay']) + '\\n'); }\nexport function views({ snapshot }) { return { file_count: Object.keys(snapshot.tree.files).length }; }\n");
    const base = definition() as { seed: object; probe: object };
    const world = serverWorldFromDefinition(loadDefinition(writeWorld('with-module', definition({ name: 'with-module', seed: { ...base.seed, module: 'extra.mjs' }, probe: { ...base.probe, module: 'extra.mjs' } }))));
    const snapshot = (await drawServerSnapshot(world, substream(5, 'world'), {}, PINNED)) as any;
    assert.match(snapshot.owned['extra.note'].meta.owner, /^(Eve|Fay)$/);
    assert.equal(snapshot.file_count, Object.keys(snapshot.tree.files).length);
  });

  test('a views module that is not deterministic is refused the first time the world is probed', async () => {
    writeFileSync(join(directory, 'worlds', 'clock-views.mjs'), 'export function views() { return { now: String(process.hrtime.bigint()) }; }\n');
    const base = definition() as { probe: object };
    const world = serverWorldFromDefinition(loadDefinition(writeWorld('with-clock-views', definition({ name: 'with-clock-views', probe: { ...base.probe, module: 'clock-views.mjs' } }))));
    await assert.rejects(drawServerSnapshot(world, substream(5, 'world'), {}, PINNED), (error: unknown) => {
      assert.ok(error instanceof FactoryError);
      assert.equal(error.code, 'escape_hatch_nondeterministic');
      assert.match(error.message, /views module gave different views/);
      return true;
    });
  });

  test('a populate module that is not deterministic is refused, naming the file that differed', async () => {
    writeFileSync(join(directory, 'worlds', 'clock.mjs'), "import { writeFileSync } from 'node:fs';\nexport function populate({ root }) { writeFileSync(root + '/clock.txt', String(process.hrtime.bigint())); }\n");
    const base = definition() as { seed: object };
    const world = serverWorldFromDefinition(loadDefinition(writeWorld('with-clock', definition({ name: 'with-clock', seed: { ...base.seed, module: 'clock.mjs' } }))));
    await assert.rejects(drawServerSnapshot(world, substream(5, 'world'), {}, PINNED), (error: unknown) => {
      assert.ok(error instanceof FactoryError);
      assert.equal(error.code, 'escape_hatch_nondeterministic');
      assert.match(error.message, /clock\.txt/);
      return true;
    });
  });
});
