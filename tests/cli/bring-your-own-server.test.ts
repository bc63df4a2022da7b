// A new user's server, from nothing to a verified dataset, with no TypeScript:
// a project of their own has an MCP server package in its node_modules (a
// note store that obeys any path, so only the world's guard keeps it in its
// sandbox), `worlds init` writes the catalog and a skeleton, the user fills in
// the seed and writes a lane, and `worlds check`, `lanes check`, `generate`,
// `replay` and `audit` all pass from that project's directory; `lanes synthesize`
// then writes tasks for it that `lanes check` proves.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, it } from 'node:test';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

const project = process.env.KEEP_PROJECT ?? temporaryDirectory('ef-own-server-');

/** The fixture server as a package of the user's project, its SDK imports pointed at the factory's copy. */
function installServerPackage(): void {
  const directory = join(project, 'node_modules', '@acme', 'notes-server');
  mkdirSync(directory, { recursive: true });
  const sdk = pathToFileURL(join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm')).href;
  const source = readFileSync(join(REPO_ROOT, 'tests', 'fixtures', 'escaping-server.mjs'), 'utf8').replaceAll("'@modelcontextprotocol/sdk/", `'${sdk}/`);
  writeFileSync(join(directory, 'server.mjs'), source);
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: '@acme/notes-server', version: '1.2.3', description: 'Notes kept as files', type: 'module', bin: { 'notes-server': 'server.mjs' } }));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'acme-training-data', private: true }));
  // What `npm install` records: the audit requires a third-party server's lockfile integrity.
  const integrity = `sha512-${createHash('sha512').update(source).digest('base64')}`;
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify({ name: 'acme-training-data', lockfileVersion: 3, packages: { '': {}, 'node_modules/@acme/notes-server': { version: '1.2.3', integrity } } }));
}

const LANE = {
  format: 'episode-factory.lane.v1',
  name: 'acme-notes-v1',
  description: 'Notes filed for the owners a seeded note store names.',
  produced_at: '2026-12-01T00:00:00Z',
  world: { name: 'acme-notes', config: {} },
  policy: { kind: 'scripted', variants: { clean: 1, retry_on_transient: 1 } },
  seeds: '0..2',
  faults: { select: 'one', faults: [{ id: 'flaky', kind: 'transient', params: { failures: 1, message: 'temporary failure' } }] },
  system_prompt: 'You keep notes in a note store through tools. Paths start with /sandbox.',
  tasks: [
    {
      id: 'file-note',
      title: 'File a note for the owner',
      tags: ['write'],
      params: { owner: { from: '/owners' } },
      user: 'Write a note at /sandbox/for-{{owner}}.txt saying "Thanks, {{owner}}".',
      solution: [{ call: 'write_note', arguments: { path: '/sandbox/for-{{owner}}.txt', content: 'Thanks, {{owner}}' } }, { answer: 'I wrote the note.' }],
      predicates: [
        { id: 'note-written', count: { path: '/files/files', where: { path: 'for-{{owner}}.txt', text: 'Thanks, {{owner}}' } }, equals: 1 },
        { id: 'nothing-else', unchanged: '/files/files', allow_added: true },
      ],
      wrong: [{ id: 'outside', description: 'Writes the note above the sandbox.', solution: [{ call: 'write_note', arguments: { path: '../for-{{owner}}.txt', content: 'Thanks, {{owner}}' } }, { answer: 'I wrote the note.' }] }],
    },
  ],
};

describe('bringing your own MCP server, as a new user does', () => {
  let init: Awaited<ReturnType<typeof runCliAsync>>;
  before(async () => {
    installServerPackage();
    init = await runCliAsync(project, 'worlds', 'init', '--package', '@acme/notes-server@1.2.3', '--name', 'acme-notes', '--out', 'worlds/acme-notes.json');
  });

  it('worlds init finds the package in the project, lists its tools and guards its path argument', () => {
    assert.equal(init.status, 0, init.stdout + init.stderr);
    const written = JSON.parse(readFileSync(join(project, 'worlds', 'acme-notes.json'), 'utf8'));
    assert.deepEqual(written.launch.package, { name: '@acme/notes-server', version: '1.2.3', entry: 'server.mjs' });
    const catalog = JSON.parse(readFileSync(join(project, 'worlds', 'acme-notes.catalog.json'), 'utf8'));
    assert.deepEqual(catalog.map((tool: { name: string }) => tool.name), ['write_note', 'read_note', 'count', 'peek']);
    assert.ok(written.guards.some((guard: { kind: string; arguments?: string[] }) => guard.kind === 'paths-under-root' && guard.arguments?.includes('path')));
  });

  it('with a seed of the user\'s own, worlds check, lanes check, generate, replay and audit all pass', async () => {
    const path = join(project, 'worlds', 'acme-notes.json');
    const definition = JSON.parse(readFileSync(path, 'utf8'));
    // The fixture serves the directory it is given: init saw it answer without one, so the user says so.
    definition.launch.args = ['{root}'];
    definition.seed = {
      vocabularies: { people: ['ana', 'bo', 'cy', 'di', 'ed'] },
      draws: [{ let: 'owners', sample: 'people', count: 2 }],
      files: [{ path: 'owners.json', json: '{{owners}}' }],
    };
    definition.probe = {
      parts: [
        { name: 'files', kind: 'file-tree' },
        { name: 'owners', kind: 'json', path: 'owners.json' },
      ],
    };
    writeFileSync(path, JSON.stringify(definition, null, 1));
    mkdirSync(join(project, 'lanes'), { recursive: true });
    writeFileSync(join(project, 'lanes', 'acme-notes-v1.json'), JSON.stringify(LANE, null, 1));

    const check = await runCliAsync(project, 'worlds', 'check', 'worlds/acme-notes.json');
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /✓ sandbox/);
    assert.match(check.stdout, /✓ replay/);

    const sound = await runCliAsync(project, 'lanes', 'check', 'acme-notes-v1');
    assert.equal(sound.status, 0, sound.stdout + sound.stderr);
    assert.match(sound.stdout, /all sound/);

    const made = await runCliAsync(project, 'generate', 'acme-notes-v1', '--out', 'datasets/acme');
    assert.equal(made.status, 0, made.stdout + made.stderr);
    const records = readFileSync(join(project, 'datasets', 'acme', 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(records.length, 3);
    const actor = records[0].provenance.actors.find((entry: { role: string }) => entry.role === 'world');
    assert.equal(actor.package, '@acme/notes-server@1.2.3');
    assert.ok(actor.guards.length > 0);

    const replay = await runCliAsync(project, 'replay', 'datasets/acme');
    assert.equal(replay.status, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /3 records, 3 verified, 0 failed/);
    const audit = await runCliAsync(project, 'audit', 'datasets/acme');
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
  });

  it('lanes synthesize writes tasks for the user\'s own server that lanes check proves sound', async () => {
    const made = await runCliAsync(project, 'lanes', 'synthesize', 'acme-notes', '--count', '1', '--seeds', '0..2', '--out', 'lanes/acme-synth-v1.json');
    assert.equal(made.status, 0, made.stdout + made.stderr);
    const lane = JSON.parse(readFileSync(join(project, 'lanes', 'acme-synth-v1.json'), 'utf8'));
    assert.equal(lane.world.name, 'acme-notes');
    assert.equal(lane.tasks[0].synthesized.by, 'sampler');
    const sound = await runCliAsync(project, 'lanes', 'check', 'acme-synth-v1', '--workers', '1');
    assert.equal(sound.status, 0, sound.stdout + sound.stderr);
    assert.match(sound.stdout, /1 task, seeds 0\.\.2: all sound/);
  });

  it('a world whose package is missing is exit 2 naming the install line', async () => {
    const path = join(project, 'worlds', 'acme-missing.json');
    const definition = JSON.parse(readFileSync(join(project, 'worlds', 'acme-notes.json'), 'utf8'));
    writeFileSync(path, JSON.stringify({ ...definition, name: 'acme-missing', catalog: 'acme-notes.catalog.json', launch: { ...definition.launch, package: { name: '@acme/not-installed', version: '0.1.0', entry: 'server.mjs' } } }));
    const check = await runCliAsync(project, 'worlds', 'check', 'worlds/acme-missing.json');
    assert.equal(check.status, 2, check.stdout + check.stderr);
    assert.match(check.stderr, /npm install --save-exact @acme\/not-installed@0\.1\.0/);
  });
});
