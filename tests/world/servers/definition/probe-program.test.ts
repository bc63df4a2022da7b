// A definition's probe run on real sandboxes: JSON and JSON-lines files (present,
// missing, garbage), a SQLite database written through sqlite3, a real git
// repository read by a `git log` command part, a failing command, views with
// where/select/key, the refusals of a definition at fault, volatile pointers,
// and two probes of an untouched sandbox being equal.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { canonicalJson } from '../../../../src/core/canonical-json.js';
import { FactoryError } from '../../../../src/core/errors.js';
import type { JsonObject } from '../../../../src/core/json-value.js';
import { runProbe, type ProbeContext } from '../../../../src/world/servers/definition/probe-program.js';
import type { ProbeDefinition } from '../../../../src/world/servers/definition/server-world-definition.js';
import { matchesVolatile, volatileLeaves } from '../../../../src/world/servers/definition/volatile-pointers.js';

const PINNED = '2026-01-15T09:30:00Z';
const WHERE = 'worlds/test.json';
const made: string[] = [];
after(async () => {
  for (const directory of made) await rm(directory, { recursive: true, force: true });
});

async function sandbox(files: Record<string, string> = {}): Promise<ProbeContext> {
  const base = await mkdtemp(join(tmpdir(), 'probe-program-'));
  made.push(base);
  const root = join(base, 'root');
  const home = join(base, 'home');
  await mkdir(root);
  await mkdir(home);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, dirname(path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return { root, home, pinnedDate: PINNED, definitionDirectory: base };
}

function definitionInvalid(pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof FactoryError && error.code === 'definition_invalid' && pattern.test(error.message);
}

interface SqliteDatabase {
  exec(sql: string, callback: (error: Error | null) => void): void;
  run(sql: string, params: unknown[], callback: (error: Error | null) => void): void;
  close(callback: (error: Error | null) => void): void;
}
const sqlite3 = createRequire(import.meta.url)('sqlite3') as { Database: new (path: string, callback: (error: Error | null) => void) => SqliteDatabase };

async function writeDatabase(path: string): Promise<void> {
  const db = await new Promise<SqliteDatabase>((resolve, reject) => {
    const opened = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(opened)));
  });
  const exec = (sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())));
  const run = (sql: string, params: unknown[]) => new Promise<void>((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())));
  await exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, photo BLOB)');
  await exec('CREATE INDEX items_by_name ON items (name)');
  await exec('CREATE VIEW cheap AS SELECT name FROM items WHERE price < 5');
  await run('INSERT INTO items (id, name, price, photo) VALUES (?, ?, ?, ?)', [2, 'pear', 3.5, null]);
  await run('INSERT INTO items (id, name, price, photo) VALUES (?, ?, ?, ?)', [1, 'apple', 7, Buffer.from('png bytes')]);
  await new Promise<void>((resolve, reject) => db.close((error) => (error ? reject(error) : resolve())));
}

const git = (root: string, args: string[]): string =>
  execFileSync('git', args, {
    cwd: root,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Ada Lovelace',
      GIT_AUTHOR_EMAIL: 'ada@example.test',
      GIT_COMMITTER_NAME: 'Ada Lovelace',
      GIT_COMMITTER_EMAIL: 'ada@example.test',
      GIT_AUTHOR_DATE: PINNED,
      GIT_COMMITTER_DATE: PINNED,
    },
  });

describe('runProbe: files', () => {
  it('reads JSON, gives the missing value for an absent file and records JSON that does not parse', async () => {
    const context = await sandbox({ 'config.json': '{"theme": "dark"}', 'broken.json': '{"theme": ' });
    const snapshot = await runProbe(
      {
        parts: [
          { name: 'config', kind: 'json', path: 'config.json' },
          { name: 'absent', kind: 'json', path: 'nope.json' },
          { name: 'absent_list', kind: 'json', path: 'nope.json', missing: [] },
          { name: 'broken', kind: 'json', path: 'broken.json' },
        ],
      },
      context,
      WHERE,
    );
    assert.deepEqual(snapshot.config, { theme: 'dark' });
    assert.equal(snapshot.absent, null);
    assert.deepEqual(snapshot.absent_list, []);
    assert.match(String((snapshot.broken as JsonObject).json_error), /JSON/);
  });

  it('reads JSON lines, skipping blank lines and collecting the unreadable ones beside the part', async () => {
    const context = await sandbox({ 'memory.jsonl': '{"type":"entity","name":"ada"}\n\n   \nnot json\n{"type":"relation"}\n{"half":\n' });
    const snapshot = await runProbe(
      {
        parts: [
          { name: 'graph', kind: 'json-lines', path: 'memory.jsonl' },
          { name: 'other', kind: 'json-lines', path: 'missing.jsonl', missing: [] },
        ],
      },
      context,
      WHERE,
    );
    assert.deepEqual(snapshot.graph, [{ type: 'entity', name: 'ada' }, { type: 'relation' }]);
    assert.deepEqual(snapshot.graph_unreadable_lines, ['not json', '{"half":']);
    assert.deepEqual(snapshot.other, []);
    assert.equal('other_unreadable_lines' in snapshot, false);
  });

  it('reads a SQLite database written through sqlite3: schema, columns, rows in rowid order, blobs as hashes', async () => {
    const context = await sandbox({ 'not-a-db.sqlite': 'plain text, not a database, long enough to have a header '.repeat(4) });
    await writeDatabase(join(context.root, 'shop.sqlite'));
    const snapshot = await runProbe(
      {
        parts: [
          { name: 'db', kind: 'sqlite', path: 'shop.sqlite' },
          { name: 'none', kind: 'sqlite', path: 'absent.sqlite' },
          { name: 'garbage', kind: 'sqlite', path: 'not-a-db.sqlite' },
        ],
      },
      context,
      WHERE,
    );
    const db = snapshot.db as JsonObject;
    assert.deepEqual(
      (db.schema as JsonObject[]).map((object) => [object.type, object.name]),
      [
        ['index', 'items_by_name'],
        ['table', 'items'],
        ['view', 'cheap'],
      ],
    );
    assert.match(String((db.schema as JsonObject[])[1]!.sql), /^CREATE TABLE items/);
    assert.deepEqual(db.tables, {
      items: {
        columns: ['id', 'name', 'price', 'photo'],
        rows: [
          { id: 1, name: 'apple', price: 7, photo: { blob_sha256: createHash('sha256').update('png bytes').digest('hex') } },
          { id: 2, name: 'pear', price: 3.5, photo: null },
        ],
      },
    });
    assert.equal(snapshot.none, null);
    assert.match(String((snapshot.garbage as JsonObject).sqlite_error), /not a database/);
    await assert.rejects(runProbe({ parts: [{ name: 'x', kind: 'sqlite', path: '../outside.sqlite' }] }, context, WHERE), definitionInvalid(/not inside the sandbox root/));
  });

  it('refuses a decoder no file format registers', async () => {
    const context = await sandbox({ 'book.bin': 'x' });
    await assert.rejects(runProbe({ parts: [{ name: 'book', kind: 'decoded', decoder: 'no-such-format', path: 'book.bin' }] }, context, WHERE), definitionInvalid(/no-such-format/));
  });
});

describe('runProbe: commands and tools', () => {
  it('reads a real git history through a git log command part parsed as records', async () => {
    const context = await sandbox({ 'README.md': '# Demo\n' });
    git(context.root, ['init', '-q', '-b', 'main']);
    git(context.root, ['add', '-A']);
    git(context.root, ['commit', '-q', '-m', 'first commit']);
    await writeFile(join(context.root, 'notes.txt'), 'more\n');
    git(context.root, ['add', '-A']);
    git(context.root, ['commit', '-q', '-m', 'second\u001fwith a separator']);
    const probe: ProbeDefinition = {
      parts: [
        { name: 'log', kind: 'command', run: ['git', 'log', '--format=%H%x1f%an%x1f%aI%x1f%s'], parse: { records: { separator: '\u001f', fields: ['hash', 'author', 'date', 'subject'] } } },
        { name: 'branch', kind: 'command', run: ['git', 'branch', '--show-current'], parse: 'lines' },
        { name: 'where', kind: 'command', run: ['node', '-e', 'process.stdout.write(JSON.stringify({cwd: process.cwd(), arg: process.argv[1], home: process.env.HOME, tz: process.env.TZ}))', '{home}|{pinned_date}'], parse: 'json' },
      ],
      volatile: ['/log/*/hash'],
    };
    const snapshot = await runProbe(probe, context, WHERE);
    const log = snapshot.log as JsonObject[];
    assert.equal(log.length, 2);
    assert.deepEqual(log.map(({ author, date, subject }) => ({ author, date, subject })), [
      { author: 'Ada Lovelace', date: '2026-01-15T09:30:00+00:00', subject: 'second\u001fwith a separator' },
      { author: 'Ada Lovelace', date: '2026-01-15T09:30:00+00:00', subject: 'first commit' },
    ]);
    assert.match(String(log[0]!.hash), /^[0-9a-f]{40}$/);
    assert.deepEqual(snapshot.branch, ['main']);
    assert.deepEqual(snapshot.where, { cwd: context.root, arg: `${context.home}|${PINNED}`, home: context.home, tz: 'UTC' });
    assert.deepEqual(volatileLeaves(snapshot, probe.volatile!), ['/log/0/hash', '/log/1/hash']);
    assert.equal(canonicalJson(await runProbe(probe, context, WHERE)), canonicalJson(snapshot));
  });

  it('records a failing command as its exit code and stderr, and refuses a program not on PATH', async () => {
    const context = await sandbox();
    const snapshot = await runProbe({ parts: [{ name: 'log', kind: 'command', run: ['git', 'log'], parse: 'lines' }] }, context, WHERE);
    const failed = snapshot.log as JsonObject;
    assert.equal(failed.exit_code, 128);
    assert.match(String(failed.stderr), /not a git repository/);
    await assert.rejects(
      runProbe({ parts: [{ name: 'x', kind: 'command', run: ['no-such-program-for-a-probe'] }] }, context, WHERE),
      (error: unknown) => error instanceof FactoryError && error.code === 'server_requires' && /no-such-program-for-a-probe/.test(error.message),
    );
  });

  it('refuses a tool-call part without a running server, and reads the first text of a given one', async () => {
    const context = await sandbox();
    const probe: ProbeDefinition = { parts: [{ name: 'status', kind: 'tool-call', tool: 'git_status', arguments: { path: '.' }, parse: 'json' }] };
    await assert.rejects(runProbe(probe, context, WHERE), definitionInvalid(/needs a running server/));
    const calls: unknown[] = [];
    const snapshot = await runProbe(probe, { ...context, callTool: async (tool, args) => (calls.push([tool, args]), { content: [{ type: 'text', text: '{"clean": true}' }] }) }, WHERE);
    assert.deepEqual(calls, [['git_status', { path: '.' }]]);
    assert.deepEqual(snapshot.status, { clean: true });
    const refused = await runProbe(probe, { ...context, callTool: async () => ({ isError: true, content: [{ type: 'text', text: 'no repo' }] }) }, WHERE);
    assert.deepEqual(refused.status, { tool_error: 'no repo' });
  });
});

describe('runProbe: views', () => {
  const files = {
    'notes/a.md': '# A\nid: n1\nstatus: open\n',
    'notes/b.md': '# B\nid: n2\nstatus: done\n',
    'notes/c.md': '# C\nid: n3\nstatus: open\n',
    'notes/d.md': '# D\nid: n1\nstatus: open\n',
    'notes/e.md': '# E\nstatus: open\n',
  };
  const tree = { name: 'files', kind: 'file-tree', path: '.', parsers: { '**/*.md': 'front-matter' } } as const;

  it('filters with where, keeps the selected fields nested, and keys by a field with the first of a duplicate winning', async () => {
    const context = await sandbox(files);
    const snapshot = await runProbe(
      {
        parts: [tree],
        views: [
          { name: 'open_titles', from: '/files/files', where: { 'meta.status': 'open' }, select: ['title', 'meta.id'] },
          { name: 'open_by_id', from: '/files/files', where: { 'meta.status': { in: ['open'] } }, key: 'meta.id', select: ['path', 'meta.status'] },
          { name: 'done', from: '/files/files', where: { 'meta.status': 'done' }, key: 'meta.id' },
        ],
      },
      context,
      WHERE,
    );
    assert.deepEqual(snapshot.open_titles, [{ title: 'A', meta: { id: 'n1' } }, { title: 'C', meta: { id: 'n3' } }, { title: 'D', meta: { id: 'n1' } }, { title: 'E' }]);
    assert.deepEqual(snapshot.open_by_id, {
      n1: { path: 'notes/a.md', meta: { status: 'open' } },
      n3: { path: 'notes/c.md', meta: { status: 'open' } },
    });
    assert.deepEqual(snapshot.open_by_id_duplicate_keys, ['n1']);
    assert.deepEqual(Object.keys(snapshot.done as JsonObject), ['n2']);
    assert.equal((snapshot.done as JsonObject).n2 !== undefined && ((snapshot.done as JsonObject).n2 as JsonObject).text, '# B\nid: n2\nstatus: done\n');
    assert.equal('done_duplicate_keys' in snapshot, false);
  });

  it('gives an empty view over a part that found nothing, and refuses a clashing name or a view from no part', async () => {
    const context = await sandbox(files);
    const empty = await runProbe({ parts: [{ name: 'graph', kind: 'json-lines', path: 'none.jsonl' }], views: [{ name: 'people', from: '/graph', where: { type: 'entity' } }] }, context, WHERE);
    assert.deepEqual(empty.people, []);
    await assert.rejects(runProbe({ parts: [tree], views: [{ name: 'files', from: '/files/files' }] }, context, WHERE), definitionInvalid(/"files"/));
    await assert.rejects(runProbe({ parts: [tree, { name: 'files', kind: 'json', path: 'x.json' }] }, context, WHERE), definitionInvalid(/two probe parts/));
    await assert.rejects(runProbe({ parts: [tree], views: [{ name: 'v', from: '/nothing/here' }] }, context, WHERE), definitionInvalid(/names no probe part/));
  });
});

describe('volatile pointers', () => {
  it('matches a * against exactly one segment', () => {
    assert.equal(matchesVolatile('/log/0/hash', ['/log/*/hash']), true);
    assert.equal(matchesVolatile('/log/12/hash', ['/other', '/log/*/hash']), true);
    assert.equal(matchesVolatile('/log/0/subject', ['/log/*/hash']), false);
    assert.equal(matchesVolatile('/log/0/x/hash', ['/log/*/hash']), false);
    assert.equal(matchesVolatile('/log/hash', ['/log/*/hash']), false);
    assert.equal(matchesVolatile('/files/a~1b/sha256', ['/files/*/sha256']), true);
    assert.equal(matchesVolatile('/anything', []), false);
  });

  it('lists the concrete pointers a pattern names, each once', () => {
    const snapshot = { log: [{ hash: 'a' }, { hash: 'b' }, { subject: 'no hash' }], files: { 'a/b.md': { sha256: 'x' } } };
    assert.deepEqual(volatileLeaves(snapshot, ['/log/*/hash', '/log/0/hash', '/files/*/sha256', '/missing/*']), ['/files/a~1b.md/sha256', '/log/0/hash', '/log/1/hash']);
  });
});

describe('runProbe: determinism', () => {
  it('gives equal snapshots for two probes of an untouched sandbox with every kind of file part', async () => {
    const context = await sandbox({ 'a.md': '# A\nid: 1\n', 'c.json': '{"k": 1}', 'g.jsonl': '{"x": 1}\nbad\n' });
    await writeDatabase(join(context.root, 'db.sqlite'));
    const probe: ProbeDefinition = {
      parts: [
        { name: 'files', kind: 'file-tree', parsers: { '*.md': 'front-matter', '*.json': 'json' } },
        { name: 'config', kind: 'json', path: 'c.json' },
        { name: 'graph', kind: 'json-lines', path: 'g.jsonl' },
        { name: 'db', kind: 'sqlite', path: 'db.sqlite' },
        { name: 'listing', kind: 'command', run: ['ls', '-a'], parse: 'lines' },
      ],
      views: [{ name: 'ids', from: '/files/files', key: 'meta.id', select: ['title'] }],
    };
    const first = canonicalJson(await runProbe(probe, context, WHERE));
    assert.equal(canonicalJson(await runProbe(probe, context, WHERE)), first);
    assert.deepEqual(JSON.parse(first).ids, { '1': { title: 'A' } });
  });
});
