// The seed program of a server world definition: its template language (each
// filter, the each/if blocks, a lone expression keeping its JSON value, an
// unknown name named with the names in scope), its draws (for_each child
// scopes, sample ranges), and the program run on real directories: one seed
// gives a byte-identical tree and another seed a different one, a SQLite file
// reads back through the real sqlite3 module, real git run with the pinned
// environment gives the same commit hash twice, a failing command is
// seed_failed with its stderr, and no path or symlink lets a file land
// outside the root.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FactoryError } from '../../../../src/core/errors.js';
import { sha256Hex } from '../../../../src/core/hashing.js';
import type { JsonValue } from '../../../../src/core/json-value.js';
import { substream } from '../../../../src/core/random.js';
import { render, renderValue } from '../../../../src/world/servers/definition/definition-template.js';
import { drawScope } from '../../../../src/world/servers/definition/seed-draws.js';
import { runSeedProgram } from '../../../../src/world/servers/definition/seed-program.js';
import type { SandboxContext, SeedDefinition } from '../../../../src/world/servers/definition/server-world-definition.js';

const PINNED = '2025-03-14T09:26:53Z';
const WHERE = 'worlds/test-world.json';
const made: string[] = [];

after(() => {
  for (const directory of made) rmSync(directory, { recursive: true, force: true });
});

function sandbox(): SandboxContext {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'seed-program-test-')));
  made.push(base);
  mkdirSync(join(base, 'root'));
  mkdirSync(join(base, 'home'));
  return { root: join(base, 'root'), home: join(base, 'home'), pinnedDate: PINNED, definitionDirectory: base };
}

/** Every file and directory under `directory`, with each file's sha256, in sorted order. */
function treeListing(directory: string, prefix = ''): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const relative = prefix + entry.name;
    if (entry.isDirectory()) lines.push(`${relative}/`, ...treeListing(join(directory, entry.name), `${relative}/`));
    else lines.push(`${relative} ${sha256Hex(readFileSync(join(directory, entry.name)))}`);
  }
  return lines;
}

function rejectsWith(code: string, pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof FactoryError, `expected a FactoryError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    return true;
  };
}

const SCOPE = {
  owner: 'Ana Lima',
  size: 4,
  urgent: true,
  none: null,
  empty: [],
  topics: ['Tax Returns', "Kid's Art", 'São Paulo trip'],
  notes: [{ topic: 'Tax Returns', index: 0, priority: 'high' }, { topic: 'Garden', index: 1, priority: 'low' }],
} satisfies Record<string, JsonValue>;

describe('definition templates', () => {
  it('walks dotted paths, numeric segments indexing lists', () => {
    assert.equal(render('{{owner}} has {{notes.1.topic}} ({{notes.0.priority}})', SCOPE), 'Ana Lima has Garden (high)');
    assert.equal(render('{{ size }} {{urgent}} {{none}}', SCOPE), '4 true null');
    assert.equal(render('{{notes.1}}', SCOPE), '{"index":1,"priority":"low","topic":"Garden"}');
  });

  it('applies each filter', () => {
    assert.equal(render('{{owner|lower}}', SCOPE), 'ana lima');
    assert.equal(render('{{owner|upper}}', SCOPE), 'ANA LIMA');
    assert.equal(render('{{topics.1|slug}} {{topics.2|slug}}', SCOPE), 'kid-s-art sao-paulo-trip');
    assert.equal(render('{{owner|json}} {{topics|json}}', SCOPE), `"Ana Lima" ["Tax Returns","Kid's Art","São Paulo trip"]`);
    assert.equal(render('{{topics.1|sql}}, {{size|sql}}, {{none|sql}}', SCOPE), `'Kid''s Art', 4, NULL`);
    assert.equal(render('{{topics|join:/}}', SCOPE), "Tax Returns/Kid's Art/São Paulo trip");
    assert.equal(render('{{topics|join:" | "}}', SCOPE), "Tax Returns | Kid's Art | São Paulo trip");
    assert.equal(render('{{topics|count}} {{empty|count}}', SCOPE), '3 0');
    assert.equal(render('{{topics|first}}; {{topics|last|upper}}', SCOPE), 'Tax Returns; SÃO PAULO TRIP');
    assert.equal(render('{{notes|first|json}}', SCOPE), '{"index":0,"priority":"high","topic":"Tax Returns"}');
  });

  it('renders each and if blocks, with index bound and else taken on falsy values', () => {
    assert.equal(render('{{#each notes as note}}{{index}}:{{note.topic|slug}};{{/each}}', SCOPE), '0:tax-returns;1:garden;');
    assert.equal(render('{{#each empty as x}}never{{/each}}done', SCOPE), 'done');
    assert.equal(render('{{#if urgent}}URGENT{{else}}calm{{/if}}', SCOPE), 'URGENT');
    assert.equal(render('{{#if empty}}items{{else}}no items{{/if}}', SCOPE), 'no items');
    assert.equal(render('{{#if none}}x{{/if}}|', SCOPE), '|');
    assert.equal(
      render('{{#each topics as t}}{{#if index}}, {{/if}}{{t|lower}}{{/each}}', SCOPE),
      "tax returns, kid's art, são paulo trip",
    );
    assert.throws(() => render('{{#each topics as t}}x', SCOPE), rejectsWith('definition_invalid', /never closed/));
    assert.throws(() => render('x{{/if}}', SCOPE), rejectsWith('definition_invalid', /closes no open/));
  });

  it('gives a lone expression its JSON value and renders every other string inside JSON', () => {
    const rendered = renderValue({ owner: '{{owner}}', size: '{{size}}', count: '{{ topics|count }}', list: '{{notes}}', label: 'n={{size}}', flag: '{{urgent}}', keep: 7 }, SCOPE);
    assert.deepEqual(rendered, { owner: 'Ana Lima', size: 4, count: 3, list: SCOPE.notes, label: 'n=4', flag: true, keep: 7 });
    assert.deepEqual(renderValue(['{{none}}', '{{owner}} and {{size}}'], SCOPE), [null, 'Ana Lima and 4']);
  });

  it('refuses an unknown name, naming the expression and the names in scope', () => {
    assert.throws(
      () => render('hello {{ownr|upper}}', SCOPE),
      rejectsWith('definition_invalid', /\{\{ownr\|upper\}\}.*unknown name "ownr".*names in scope: empty, none, notes, owner, size, topics, urgent/),
    );
    assert.throws(() => renderValue({ a: '{{notes.0.colour}}' }, SCOPE), rejectsWith('definition_invalid', /notes\.0\.colour.*no field "colour"/));
    assert.throws(() => render('{{owner|shout}}', SCOPE), rejectsWith('definition_invalid', /unknown filter "shout"/));
  });
});

const DRAWS: SeedDefinition = {
  vocabularies: { people: ['Ana Lima', 'Bo Chen', 'Cy Diaz', 'Di Eze'], topics: ['Taxes', 'Garden', 'Travel', 'Cooking', 'Music'], levels: ['low', 'high'] },
  draws: [
    { let: 'owner', pick: 'people' },
    { let: 'chosen', sample: 'topics', count: { min: 2, max: 4 } },
    { let: 'size', integer: { min: 1, max: 9 } },
    { let: 'urgent', chance: 0.5 },
    { let: 'label', value: '{{owner|slug}}-{{size}}' },
    { let: 'notes', for_each: 'chosen', as: 'topic', draws: [{ let: 'priority', pick: 'levels' }, { let: 'title', value: '{{topic}} for {{owner}}' }] },
  ],
};

describe('seed draws', () => {
  it('binds each draw in order and builds for_each child scopes that see the parent', () => {
    const scope = drawScope(DRAWS, substream(7, 'world'), WHERE);
    assert.ok(DRAWS.vocabularies!.people!.includes(scope.owner!));
    const chosen = scope.chosen as string[];
    assert.ok(chosen.length >= 2 && chosen.length <= 4);
    assert.equal(new Set(chosen).size, chosen.length);
    assert.ok(typeof scope.size === 'number' && scope.size >= 1 && scope.size <= 9);
    assert.equal(typeof scope.urgent, 'boolean');
    assert.equal(scope.label, `${String(scope.owner).toLowerCase().replace(' ', '-')}-${scope.size}`);
    const notes = scope.notes as Record<string, JsonValue>[];
    assert.deepEqual(notes.map((note) => note.topic), chosen);
    notes.forEach((note, index) => {
      assert.deepEqual(Object.keys(note).sort(), ['index', 'priority', 'title', 'topic']);
      assert.equal(note.index, index);
      assert.ok(note.priority === 'low' || note.priority === 'high');
      assert.equal(note.title, `${chosen[index]} for ${scope.owner}`);
    });
    // The child's names stay in the child.
    assert.equal(scope.priority, undefined);
    assert.deepEqual(drawScope(DRAWS, substream(7, 'world'), WHERE), scope);
  });

  it('refuses a sample larger than its list and a pick of a name that is not a list, naming the draw', () => {
    assert.throws(() => drawScope({ vocabularies: { a: [1, 2] }, draws: [{ let: 'x', sample: 'a', count: 3 }] }, substream(1, 'world'), WHERE), rejectsWith('definition_invalid', /\/seed\/draws\/0\/count: sample of 3/));
    assert.throws(() => drawScope({ draws: [{ let: 'n', integer: { min: 1, max: 2 } }, { let: 'x', pick: 'n' }] }, substream(1, 'world'), WHERE), rejectsWith('definition_invalid', /\/seed\/draws\/1\/pick: "n" is not a list/));
    assert.throws(() => drawScope({ draws: [{ let: 'x', value: '{{missing}}' }] }, substream(1, 'world'), WHERE), rejectsWith('definition_invalid', /test-world\.json: \/seed\/draws\/0: .*unknown name "missing"/));
  });
});

const PROGRAM: SeedDefinition = {
  ...DRAWS,
  files: [
    { path: 'README.md', text: '# {{owner}}\n\n{{#each notes as note}}- {{note.topic}} ({{note.priority}}){{#if urgent}} !{{/if}}\n{{/each}}' },
    { for_each: 'notes', as: 'note', path: 'notes/{{note.topic|slug}}.md', text: '---\npriority: {{note.priority}}\nindex: {{index}}\n---\n{{note.title}}\n' },
    { path: 'config.json', json: { owner: '{{owner}}', size: '{{size}}', topics: '{{chosen}}' } },
    { path: 'data/log.jsonl', json_lines: '{{notes}}' },
    {
      path: 'data/shop.sqlite',
      sqlite: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, priority TEXT NOT NULL);\n{{#each notes as note}}INSERT INTO notes VALUES ({{index}}, {{note.topic|sql}}, {{note.priority|sql}});\n{{/each}}CREATE TABLE owner (name TEXT, size INTEGER);\nINSERT INTO owner VALUES ({{owner|sql}}, {{size|sql}});',
    },
  ],
};

describe('the seed program on disk', () => {
  it('writes a byte-identical tree from the same seed and a different one from another seed', async () => {
    const first = sandbox();
    const second = sandbox();
    const other = sandbox();
    await runSeedProgram(PROGRAM, substream(11, 'world'), first, WHERE);
    await runSeedProgram(PROGRAM, substream(11, 'world'), second, WHERE);
    await runSeedProgram(PROGRAM, substream(12, 'world'), other, WHERE);
    const listing = treeListing(first.root);
    assert.ok(listing.includes('README.md ' + sha256Hex(readFileSync(join(first.root, 'README.md')))));
    assert.ok(listing.includes('notes/'));
    assert.ok(listing.some((line) => /^notes\/[a-z]+\.md [0-9a-f]{64}$/.test(line)));
    assert.ok(listing.includes('data/shop.sqlite ' + sha256Hex(readFileSync(join(first.root, 'data/shop.sqlite')))));
    assert.deepEqual(treeListing(second.root), listing);
    assert.notDeepEqual(treeListing(other.root), listing);
  });

  it('renders each kind of file as listed', async () => {
    const context = sandbox();
    await runSeedProgram(PROGRAM, substream(11, 'world'), context, WHERE);
    const scope = drawScope(DRAWS, substream(11, 'world'), WHERE);
    const notes = scope.notes as Record<string, JsonValue>[];
    const config = readFileSync(join(context.root, 'config.json'), 'utf8');
    assert.equal(config, JSON.stringify({ owner: scope.owner, size: scope.size, topics: scope.chosen }, null, 2) + '\n');
    assert.equal(readFileSync(join(context.root, 'data/log.jsonl'), 'utf8'), notes.map((note) => JSON.stringify(note)).join('\n') + '\n');
    const readme = readFileSync(join(context.root, 'README.md'), 'utf8');
    assert.equal(readme.split('\n')[0], `# ${scope.owner}`);
    assert.equal(readme.match(/^- /gm)?.length, notes.length);
    for (const note of notes) {
      const slugged = String(note.topic).toLowerCase();
      assert.equal(readFileSync(join(context.root, 'notes', `${slugged}.md`), 'utf8'), `---\npriority: ${note.priority}\nindex: ${note.index}\n---\n${note.title}\n`);
    }
    assert.deepEqual(readdirSync(join(context.root, 'notes')).length, notes.length);
  });

  it('writes a SQLite file that reads back through the sqlite3 module, with 4096-byte pages', async () => {
    const context = sandbox();
    await runSeedProgram(PROGRAM, substream(11, 'world'), context, WHERE);
    const scope = drawScope(DRAWS, substream(11, 'world'), WHERE);
    const sqlite3 = createRequire(createRequire(import.meta.url).resolve('mcp-sqlite/package.json'))('sqlite3') as {
      Database: new (path: string, mode: number, callback: (error: Error | null) => void) => {
        all(sql: string, callback: (error: Error | null, rows: Record<string, unknown>[]) => void): void;
        close(callback: (error: Error | null) => void): void;
      };
      OPEN_READONLY: number;
    };
    const path = join(context.root, 'data/shop.sqlite');
    const db = await new Promise<InstanceType<typeof sqlite3.Database>>((resolve, reject) => {
      const opened = new sqlite3.Database(path, sqlite3.OPEN_READONLY, (error) => (error ? reject(error) : resolve(opened)));
    });
    const all = (sql: string) => new Promise<Record<string, unknown>[]>((resolve, reject) => db.all(sql, (error, rows) => (error ? reject(error) : resolve(rows))));
    try {
      const notes = scope.notes as Record<string, JsonValue>[];
      assert.deepEqual(await all('SELECT id, topic, priority FROM notes ORDER BY id'), notes.map((note) => ({ id: note.index, topic: note.topic, priority: note.priority })));
      assert.deepEqual(await all('SELECT name, size FROM owner'), [{ name: scope.owner, size: scope.size }]);
      assert.deepEqual(await all('PRAGMA page_size'), [{ page_size: 4096 }]);
    } finally {
      await new Promise<void>((resolve, reject) => db.close((error) => (error ? reject(error) : resolve())));
    }
    const quoted: SeedDefinition = { vocabularies: { names: ["O'Hara"] }, files: [{ path: 'q.sqlite', sqlite: 'CREATE TABLE t (v TEXT); INSERT INTO t VALUES ({{names.0|sql}});' }] };
    await runSeedProgram(quoted, substream(1, 'world'), context, WHERE);
    assert.ok(existsSync(join(context.root, 'q.sqlite')));
  });

  it('reports SQL SQLite refuses as a definition error naming the file', async () => {
    const program: SeedDefinition = { files: [{ path: 'bad.sqlite', sqlite: 'CREATE TABLE t (;' }] };
    await assert.rejects(runSeedProgram(program, substream(1, 'world'), sandbox(), WHERE), rejectsWith('definition_invalid', /\/seed\/files\/0\/sqlite: SQLite refuses the SQL for "bad\.sqlite"/));
  });

  it('refuses an encoder the registry does not know', async () => {
    const program: SeedDefinition = { files: [{ path: 'book.bin', encoder: 'no-such-format', value: {} }] };
    await assert.rejects(runSeedProgram(program, substream(1, 'world'), sandbox(), WHERE), rejectsWith('definition_invalid', /\/seed\/files\/0\/encoder: .*no file format named "no-such-format"/));
  });
});

const GIT_PROGRAM: SeedDefinition = {
  vocabularies: { people: ['Ana Lima', 'Bo Chen', 'Cy Diaz'] },
  draws: [{ let: 'owner', pick: 'people' }],
  files: [{ path: 'README.md', text: '# {{owner}}\n' }],
  commands: [
    { run: ['git', 'init', '-q', '-b', 'main'] },
    { run: ['git', 'add', '-A'] },
    { run: ['git', 'commit', '-q', '-m', 'Initial commit by {{owner}}'] },
    { run: ['sh', '-c', 'echo later > later.txt'] },
    { run: ['git', 'add', '-A'] },
    {
      run: ['git', 'commit', '-q', '-m', 'Later, by {{owner|upper}}'],
      env: { GIT_AUTHOR_DATE: '{pinned_date+3600}', GIT_COMMITTER_DATE: '{pinned_date+3600}', GIT_AUTHOR_NAME: '{{owner}}' },
    },
    { run: ['sh', '-c', 'printf "%s|%s|%s" "$HOME" "$TZ" "$1" > env.txt', 'sh', '{root}|{pinned_epoch}|{{owner}}'] },
  ],
};

function git(root: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } }).trim();
}

describe('seed commands', () => {
  it('gives the same commit hashes on two runs with the pinned environment, through real git', async () => {
    const first = sandbox();
    const second = sandbox();
    await runSeedProgram(GIT_PROGRAM, substream(5, 'world'), first, WHERE);
    await runSeedProgram(GIT_PROGRAM, substream(5, 'world'), second, WHERE);
    const head = git(first.root, 'rev-parse', 'HEAD');
    assert.match(head, /^[0-9a-f]{40}$/);
    assert.equal(git(second.root, 'rev-parse', 'HEAD'), head);
    const owner = readFileSync(join(first.root, 'README.md'), 'utf8').slice(2).trim();
    const log = git(first.root, 'log', '--format=%an|%ae|%cn|%aI|%cI|%s').split('\n');
    assert.deepEqual(log, [
      `${owner}|factory@example.invalid|Episode Factory|2025-03-14T10:26:53+00:00|2025-03-14T10:26:53+00:00|Later, by ${owner.toUpperCase()}`,
      `Episode Factory|factory@example.invalid|Episode Factory|2025-03-14T09:26:53+00:00|2025-03-14T09:26:53+00:00|Initial commit by ${owner}`,
    ]);
    assert.equal(readFileSync(join(first.root, 'env.txt'), 'utf8'), `${first.home}|UTC|${first.root}|${Date.parse(PINNED) / 1000}|${owner}`);
  });

  it('makes a failing command seed_failed, naming the command, its exit code and its stderr', async () => {
    const program: SeedDefinition = { commands: [{ run: ['sh', '-c', 'echo "something broke here" >&2; exit 3'] }] };
    await assert.rejects(
      runSeedProgram(program, substream(1, 'world'), sandbox(), WHERE),
      rejectsWith('seed_failed', /test-world\.json: \/seed\/commands\/0\/run: `sh -c ".*exit 3"` failed with exit code 3: something broke here/),
    );
    await assert.rejects(
      runSeedProgram({ commands: [{ run: ['git', 'commit', '-m', 'x'] }] }, substream(1, 'world'), sandbox(), WHERE),
      rejectsWith('seed_failed', /failed with exit code 128: fatal: not a git repository/),
    );
    await assert.rejects(runSeedProgram({ commands: [{ run: ['no-such-program-here'] }] }, substream(1, 'world'), sandbox(), WHERE), rejectsWith('seed_failed', /did not start: .*ENOENT/));
  });
});

describe('containment', () => {
  it('refuses a path that is absolute, has "..", or renders its way out of the root', async () => {
    const context = sandbox();
    const outside = join(context.root, '..', 'escaped.txt');
    for (const path of ['/tmp/escaped.txt', '../escaped.txt', 'a/../../escaped.txt', '{{up}}/escaped.txt', 'a\\..\\..\\escaped.txt', '{{empty}}']) {
      const program: SeedDefinition = { draws: [{ let: 'up', value: '..' }, { let: 'empty', value: '' }], files: [{ path, text: 'x' }] };
      await assert.rejects(runSeedProgram(program, substream(1, 'world'), context, WHERE), rejectsWith('definition_invalid', /\/seed\/files\/0\/path: /), path);
    }
    assert.equal(existsSync(outside), false);
    assert.deepEqual(readdirSync(context.root), []);
  });

  it('never writes through a symlink, as a directory or as the file', async () => {
    const context = sandbox();
    const elsewhere = join(context.home, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(context.root, 'linked'));
    symlinkSync(join(elsewhere, 'target.txt'), join(context.root, 'file.txt'));
    await assert.rejects(runSeedProgram({ files: [{ path: 'linked/inside.txt', text: 'x' }] }, substream(1, 'world'), context, WHERE), rejectsWith('seed_failed', /"linked" is a symlink/));
    await assert.rejects(runSeedProgram({ files: [{ path: 'file.txt', text: 'x' }] }, substream(1, 'world'), context, WHERE), rejectsWith('seed_failed', /cannot write "file\.txt"/));
    await assert.rejects(runSeedProgram({ files: [{ path: 'file.txt', sqlite: 'CREATE TABLE t (a);' }] }, substream(1, 'world'), context, WHERE), rejectsWith('seed_failed', /"file\.txt" is a symlink/));
    assert.deepEqual(readdirSync(elsewhere), []);
  });
});
