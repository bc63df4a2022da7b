import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import type { JsonObject } from '../../src/core/json-value.js';
import { substream } from '../../src/core/random.js';
import { compileValidator } from '../../src/core/schema-validator.js';
import { splitLines, STALE_BEFORE_DAY, timestamp, type FilesState } from '../../src/world/files/files-state.js';
import { FILES_TOOLS } from '../../src/world/files/files-tools.js';
import { filesWorld } from '../../src/world/files/files-world.js';
import { connectInProcess } from '../../src/world/in-process-connection.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';

const fresh = (seed = 1): FilesState => filesWorld.init(substream(seed, 'world'), {});
const snap = (state: FilesState) => canonicalJson(filesWorld.snapshot(state));
const spec = (name: string) => FILES_TOOLS.find((tool) => tool.name === name)!;

/** Calls a tool with arguments that must pass its input schema, and checks a success against the output schema. */
function call(state: FilesState, tool: string, args: JsonObject) {
  assert.deepEqual(compileValidator(spec(tool).inputSchema)(args), [], `${tool} arguments ${canonicalJson(args)} pass the input schema`);
  const outcome = filesWorld.call(state, tool, args);
  if (outcome.ok) assert.deepEqual(compileValidator(spec(tool).outputSchema!)(outcome.value), [], `${tool} result passes its output schema`);
  return outcome;
}

const ok = (outcome: ReturnType<typeof filesWorld.call>) => {
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.message);
  return outcome.value as any;
};

/** A call that must fail with a message matching `pattern` and leave the tree exactly as it was. */
function refused(state: FilesState, tool: string, args: JsonObject, pattern: RegExp): string {
  const before = snap(state);
  const outcome = call(state, tool, args);
  assert.equal(outcome.ok, false, `${tool} ${canonicalJson(args)} should fail`);
  const message = (outcome as { message: string }).message;
  assert.match(message, pattern);
  assert.equal(snap(state), before, `${tool} failure left the snapshot unchanged`);
  return message;
}

const envWith = (state: FilesState) => state.planted.settings[0]!;

describe('files world state', () => {
  it('is the same for the same seed and different for another', () => {
    assert.equal(snap(fresh(5)), snap(fresh(5)));
    assert.notEqual(snap(fresh(5)), snap(fresh(6)));
  });

  it('plants unguessable tokens that differ from seed to seed', () => {
    const keys = new Set<string>();
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const state = fresh(seed);
      assert.equal(state.planted.settings.length, 6);
      for (const setting of state.planted.settings) {
        assert.match(setting.name, /^[A-Z]+_API_KEY$/);
        assert.match(setting.value, /^key-[0-9a-f]{16}$/);
        assert.match(setting.owner, /^[a-z]+\.[a-z]+@[a-z]+\.example\.com$/);
        keys.add(setting.value);
      }
      for (const lock of state.planted.locks) assert.match(lock.hold, /^RH-\d{5}$/);
    }
    assert.equal(keys.size, 48, 'no API key repeats across seeds');
  });

  it('keeps the planted facts true of the tree it generated', () => {
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const state = fresh(seed);
      for (const setting of state.planted.settings) {
        const lines = state.nodes.get(setting.path)!.content.split('\n');
        const at = lines.indexOf(`${setting.name}=${setting.value}`);
        assert.ok(at > 0, `${setting.name} is in ${setting.path}`);
        assert.equal(lines[at - 1], `${setting.name}_PREVIOUS=${setting.previous}`, 'the rotated-out twin sits right above it');
        assert.equal(lines[0], `# owner: ${setting.owner}`);
        const definers = [...state.nodes.values()].filter((node) => node.path.endsWith('.env') && node.content.includes(`\n${setting.name}=`));
        assert.equal(definers.length, 1, `${setting.name} is defined in exactly one .env file`);
      }
      for (const setting of state.planted.etc_settings) {
        assert.ok(state.nodes.get(setting.path)!.content.includes(`\n${setting.name} = ${setting.value}\n`));
        assert.notEqual(setting.target, setting.value);
      }
      for (const lock of state.planted.locks) {
        assert.ok(lock.path.includes('LOCKED'));
        assert.ok(state.nodes.get(lock.path)!.content.startsWith(`# LOCKED: retention hold ${lock.hold} (`));
        assert.ok(state.nodes.get(lock.path)!.content.includes(`\n# Hold contact: ${lock.contact}\n`));
      }
      const markdown = [...state.nodes.values()].filter((node) => node.type === 'file' && node.path.startsWith('/workspace/') && node.path.endsWith('.md'));
      assert.equal(state.planted.extensions.find((entry) => entry.extension === 'md')!.count, markdown.length);
    }
  });

  it('puts three stale build logs and a LOCKED audit log before the cutoff, two recent ones after it', () => {
    const cutoff: string = timestamp(STALE_BEFORE_DAY * 24 * 60);
    assert.equal(timestamp(STALE_BEFORE_DAY * 24 * 60), '2026-03-01T00:00:00Z', 'the cutoff the lane states');
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const state = fresh(seed);
      const logs = [...state.nodes.values()].filter((node) => node.path.startsWith('/workspace/logs/'));
      const old = logs.filter((node) => timestamp(node.modified) < cutoff);
      assert.equal(old.length, 4);
      assert.deepEqual(old.filter((node) => node.tags.includes('stale-log')).length, 3);
      assert.ok(old.some((node) => node.tags.includes('locked')));
      const recent = logs.filter((node) => timestamp(node.modified) >= cutoff);
      assert.equal(recent.length, 2);
      const newest = recent.find((node) => node.tags.includes('newest-build-log'))!;
      assert.ok(recent.every((node) => node.modified <= newest.modified));
    }
  });

  it('takes snapshots keyed without "/" or "~", that do not change when the state does', () => {
    const state = fresh(2);
    const before = filesWorld.snapshot(state) as any;
    for (const key of Object.keys(before.files)) assert.doesNotMatch(key, /[/~]/);
    assert.equal(before.files['workspace:TODO.md'].path, '/workspace/TODO.md');
    assert.equal(before.files['workspace:TODO.md'].lines[0].text, '# TODO');
    const text = canonicalJson(before);
    ok(call(state, 'write', { path: '/workspace/TODO.md', content: 'x\n', overwrite: true }));
    assert.equal(canonicalJson(before), text);
    assert.notEqual(snap(state), text);
  });

  it('never shows the hidden tags through a tool', () => {
    const state = fresh(3);
    const listing = ok(call(state, 'ls', { path: '/', recursive: true }));
    assert.ok(listing.total > 30);
    assert.ok(!canonicalJson(listing).includes('stale-log'));
    assert.ok(listing.entries.every((entry: any) => !('tags' in entry)));
  });
});

describe('files world tools', () => {
  it('lists a folder, recursively to a depth, and a single file', () => {
    const state = fresh(4);
    const top = ok(call(state, 'ls', { path: '/workspace' }));
    assert.ok(top.entries.every((entry: any) => entry.path.split('/').length === 3));
    assert.deepEqual(top.entries.map((entry: any) => entry.path), [...top.entries.map((entry: any) => entry.path)].sort());
    const config = top.entries.find((entry: any) => entry.path === '/workspace/config');
    assert.equal(config.type, 'dir');
    assert.ok(config.children >= 5);
    const two = ok(call(state, 'ls', { path: '/workspace', recursive: true, depth: 2 }));
    assert.ok(two.entries.some((entry: any) => entry.path === '/workspace/config/app.env'));
    assert.ok(!two.entries.some((entry: any) => entry.path === '/workspace/config/overrides/README.md'));
    const all = ok(call(state, 'ls', { path: '/workspace', recursive: true }));
    assert.ok(all.entries.some((entry: any) => entry.path === '/workspace/config/overrides/README.md'));
    const etc = ok(call(state, 'ls', { path: '/etc' }));
    assert.ok(etc.entries.every((entry: any) => entry.readonly === true));
    const one = ok(call(state, 'ls', { path: '/workspace/TODO.md' }));
    assert.equal(one.total, 1);
    assert.match(one.entries[0].revision, /^r[0-9a-f]{10}$/);
  });

  it('finds by glob, exclusion, time window and sort order', () => {
    const state = fresh(5);
    const old = ok(
      call(state, 'find', { path: '/workspace/logs', name_glob: '*.log', exclude_glob: '*LOCKED*', modified: { before: '2026-03-01T00:00:00Z' } }),
    );
    assert.equal(old.total, 3);
    assert.ok(old.entries.every((entry: any) => entry.name.startsWith('build-') && entry.modified_at < '2026-03-01'));
    const newest = ok(call(state, 'find', { path: '/workspace/logs', name_glob: 'build-*.log', sort: 'newest', limit: 1 }));
    assert.equal(newest.entries.length, 1);
    assert.equal(newest.total, 5);
    assert.equal(newest.truncated, true);
    const expected = [...state.nodes.values()].find((node) => node.tags.includes('newest-build-log'))!;
    assert.equal(newest.entries[0].path, expected.path);
    const oldest = ok(call(state, 'find', { path: '/workspace/logs', name_glob: 'build-*.log', sort: 'oldest' }));
    assert.equal(oldest.entries[4].path, expected.path);
    const recent = ok(call(state, 'find', { path: '/workspace/logs', modified: { after: '2026-03-01T00:00:00Z' }, type: 'file' }));
    assert.equal(recent.total, 2);
    const dirs = ok(call(state, 'find', { path: '/workspace', type: 'dir' }));
    assert.ok(dirs.entries.every((entry: any) => entry.type === 'dir'));
    const single = ok(call(state, 'find', { path: '/workspace/config', name_glob: 'app.env.ba?' }));
    assert.deepEqual(single.entries.map((entry: any) => entry.name), ['app.env.bak']);
  });

  it('greps with a pattern that repeats a repeating group in bounded time, with the answers of a JavaScript RegExp', () => {
    const state = fresh(5);
    const lines = [...state.nodes.values()].filter((node) => node.type === 'file').flatMap((node) => splitLines(node.content));
    // The same language as each pattern, written so that V8 does not backtrack on it.
    const equivalents: Record<string, string> = {
      '^(\\w+\\s*)*$': '^(?:\\w[\\w\\s]*)?$',
      '((ab)+c)+': 'abc',
      '(a*){2,}': '',
      '(?:x+)+': 'x',
      '(\\w+)\\s+=': '\\w\\s+=',
      '[(+)]+': '[(+)]',
      '\\(a+\\)+': '\\(a+\\)',
      '(ab)+': 'ab',
      'key-[0-9a-f]{16}': 'key-[0-9a-f]{16}',
    };
    for (const [pattern, equivalent] of Object.entries(equivalents)) {
      const started = performance.now();
      const found = ok(call(state, 'grep', { pattern }));
      assert.ok(performance.now() - started < 1000, pattern);
      assert.equal(found.total, lines.filter((line) => new RegExp(equivalent).test(line)).length, pattern);
    }
    assert.ok(ok(call(state, 'grep', { pattern: '^(\\w+\\s*)*$' })).total > 0);
    assert.ok(call(state, 'grep', { pattern: '(a+)+', literal: true }).ok, 'a literal pattern is only text');
    const message = refused(state, 'grep', { pattern: '(\\w)\\1' }, /backreferences \(\\1\) are not supported; patterns run on a linear-time engine/);
    assert.match(message, /or pass literal: true\.$/);
    refused(state, 'grep', { pattern: 'key(?=-)' }, /lookahead "\(\?=…\)" is not supported/);
  });

  it('reads every date-time form the schema accepts by the standard, not by the engine', () => {
    const state = fresh(5);
    const paths = (before: string) => ok(call(state, 'find', { path: '/workspace/logs', name_glob: '*.log', modified: { before } })).entries.map((entry: any) => entry.path);
    const utc = paths('2026-03-01T00:00:00Z');
    assert.ok(utc.length > 0);
    // Date.parse reads none of these two as the same instant; the schema accepts both.
    assert.deepEqual(paths('2026-03-01T02:00:00+02'), utc);
    assert.deepEqual(paths('2026-03-01 01:00:00+0100'), utc);
    assert.deepEqual(paths('2026-02-28T23:59:60Z'), utc, 'a leap second is the next minute');
  });

  it('reads a whole file byte for byte, or an inclusive line range with an end past the last line clamped', () => {
    const state = fresh(6);
    const todo = state.nodes.get('/workspace/TODO.md')!;
    const whole = ok(call(state, 'read', { path: '/workspace/TODO.md' }));
    assert.equal(whole.content, todo.content);
    assert.equal(whole.start_line, 1);
    assert.equal(whole.total_lines, todo.content.trimEnd().split('\n').length);
    const range = ok(call(state, 'read', { path: '/workspace/TODO.md', start_line: 2, end_line: 3 }));
    assert.deepEqual(range.lines.map((line: any) => line.n), [2, 3]);
    assert.equal(range.content, `${todo.content.split('\n').slice(1, 3).join('\n')}\n`);
    const tail = ok(call(state, 'read', { path: '/workspace/TODO.md', start_line: 2, end_line: 999 }));
    assert.equal(tail.end_line, whole.total_lines);
  });

  it('greps a regular expression or literal text, filtered by file name, in path and line order', () => {
    const state = fresh(7);
    const setting = envWith(state);
    const exact = ok(call(state, 'grep', { pattern: `^${setting.name}=`, path: '/workspace', glob: '*.env' }));
    assert.deepEqual(exact.matches, [{ path: setting.path, line: exact.matches[0].line, text: `${setting.name}=${setting.value}` }]);
    const literal = ok(call(state, 'grep', { pattern: setting.name, path: '/workspace', literal: true }));
    assert.equal(literal.matches[0].text, `${setting.name}_PREVIOUS=${setting.previous}`, 'the plain-text search meets the rotated-out twin first');
    assert.ok(literal.total >= 2);
    const dots = ok(call(state, 'grep', { pattern: '.', path: '/workspace/TODO.md', literal: true, max_results: 1 }));
    assert.equal(dots.files_searched, 1);
    assert.equal(dots.truncated, dots.total > 1);
    const caseless = ok(call(state, 'grep', { pattern: '# todo', ignore_case: true }));
    assert.equal(caseless.matches[0].path, '/workspace/TODO.md');
  });

  it('creates, refuses to clobber, and overwrites only when asked, with a new revision each time', () => {
    const state = fresh(8);
    const created = ok(call(state, 'write', { path: '/workspace/notes.txt', content: 'one\n' }));
    assert.equal(created.created, true);
    assert.equal(created.size, 4);
    refused(state, 'write', { path: '/workspace/notes.txt', content: 'two\n' }, /already exists \(4 bytes, revision r[0-9a-f]{10}\)\. Pass overwrite: true/);
    const replaced = ok(call(state, 'write', { path: '/workspace/notes.txt', content: 'two\n', overwrite: true }));
    assert.equal(replaced.created, false);
    assert.notEqual(replaced.revision, created.revision);
    assert.equal(state.nodes.get('/workspace/notes.txt')!.content, 'two\n');
  });

  it('edits exact text once, or every occurrence with replace_all', () => {
    const state = fresh(9);
    ok(call(state, 'write', { path: '/workspace/a.txt', content: 'x = 1\nx = 1\ny = 2\n' }));
    refused(state, 'edit', { path: '/workspace/a.txt', old_text: 'x = 1', new_text: 'x = 3' }, /occurs 2 times.*replace_all: true/);
    refused(state, 'edit', { path: '/workspace/a.txt', old_text: 'z = 9', new_text: 'z = 1' }, /old_text was not found/);
    assert.equal(ok(call(state, 'edit', { path: '/workspace/a.txt', old_text: 'y = 2', new_text: 'y = 5' })).replacements, 1);
    assert.equal(ok(call(state, 'edit', { path: '/workspace/a.txt', old_text: 'x = 1', new_text: 'x = 3', replace_all: true })).replacements, 2);
    assert.equal(state.nodes.get('/workspace/a.txt')!.content, 'x = 3\nx = 3\ny = 5\n');
  });

  it('copies a file, out of /etc too, and moves files and whole folders', () => {
    const state = fresh(10);
    const conf = state.planted.etc_settings[0]!.path;
    const copied = ok(call(state, 'copy', { source: conf, target: '/workspace/config/overrides/copy.conf' }));
    assert.equal(copied.overwritten, false);
    assert.equal(state.nodes.get('/workspace/config/overrides/copy.conf')!.content, state.nodes.get(conf)!.content);
    const moved = ok(call(state, 'move', { source: '/workspace/config', target: '/workspace/settings' }));
    assert.equal(moved.type, 'dir');
    assert.ok(moved.entries_moved >= 8);
    assert.ok(![...state.nodes.keys()].some((path) => path.startsWith('/workspace/config')));
    assert.ok(state.nodes.has('/workspace/settings/overrides/copy.conf'));
    const renamed = ok(call(state, 'move', { source: '/workspace/TODO.md', target: '/workspace/settings/TODO.md' }));
    assert.equal(renamed.entries_moved, 1);
  });

  it('deletes files, empty folders, and full folders only with recursive, all or nothing', () => {
    const state = fresh(11);
    const tmp = [...state.nodes.keys()].filter((path) => path.startsWith('/workspace/tmp/'));
    refused(state, 'delete', { paths: ['/workspace/tmp'] }, /is a folder with \d entries; pass recursive: true/);
    refused(state, 'delete', { paths: [tmp[0]!, '/workspace/tmp/nope.tmp'] }, /^Nothing was deleted: \/workspace\/tmp\/nope\.tmp does not exist\.$/);
    const one = ok(call(state, 'delete', { paths: [tmp[0]!] }));
    assert.deepEqual(one, { deleted: [tmp[0]], entries_removed: 1 });
    const all = ok(call(state, 'delete', { paths: ['/workspace/tmp'], recursive: true }));
    assert.equal(all.entries_removed, tmp.length);
    ok(call(state, 'mkdir', { path: '/workspace/empty' }));
    assert.equal(ok(call(state, 'delete', { paths: ['/workspace/empty'] })).entries_removed, 1);
  });

  it('creates folders, with parents when asked', () => {
    const state = fresh(12);
    refused(state, 'mkdir', { path: '/workspace/a/b' }, /parent \/workspace\/a does not exist\. Pass parents: true/);
    assert.deepEqual(ok(call(state, 'mkdir', { path: '/workspace/a/b', parents: true })).created, ['/workspace/a', '/workspace/a/b']);
    assert.deepEqual(ok(call(state, 'mkdir', { path: '/workspace/a/b', parents: true })).created, []);
    refused(state, 'mkdir', { path: '/workspace/a/b' }, /already exists \(a folder\)/);
    refused(state, 'mkdir', { path: '/workspace/TODO.md/x', parents: true }, /\/workspace\/TODO\.md is a file/);
  });

  it('keeps every change deterministic: same calls, same results and revisions', () => {
    const [a, b] = [fresh(13), fresh(13)];
    for (const state of [a, b]) {
      ok(call(state, 'mkdir', { path: '/workspace/releases' }));
      ok(call(state, 'write', { path: '/workspace/releases/x.txt', content: 'hello\n' }));
    }
    assert.equal(snap(a), snap(b));
    assert.ok(a.clock > fresh(13).clock);
  });
});

describe('files world rules', () => {
  it('treats everything under /etc as read-only', () => {
    const state = fresh(14);
    const conf = state.planted.etc_settings[0]!.path;
    refused(state, 'write', { path: conf, content: 'x\n', overwrite: true }, /Cannot write \/etc\/.*read-only/);
    refused(state, 'write', { path: '/etc/new.conf', content: 'x\n' }, /read-only/);
    refused(state, 'edit', { path: conf, old_text: 'workers', new_text: 'threads' }, /Cannot edit .*read-only/);
    refused(state, 'copy', { source: '/workspace/TODO.md', target: '/etc/TODO.md' }, /Cannot copy to \/etc\/TODO\.md: .*read-only/);
    refused(state, 'move', { source: conf, target: '/workspace/service.conf' }, /Cannot move .*read-only/);
    refused(state, 'delete', { paths: ['/etc/hosts'] }, /Nothing was deleted: \/etc\/hosts is under \/etc, which is read-only/);
    refused(state, 'mkdir', { path: '/etc/extra' }, /Cannot create \/etc\/extra: .*read-only/);
  });

  it('names what is missing and where to look instead', () => {
    const state = fresh(15);
    refused(state, 'read', { path: '/workspace/docs/nope.md' }, /No such file: \/workspace\/docs\/nope\.md\. The nearest existing folder is \/workspace\/docs/);
    refused(state, 'ls', { path: '/workspace/nowhere/deep' }, /nearest existing folder is \/workspace;/);
    refused(state, 'move', { source: '/workspace/nope', target: '/workspace/yes' }, /No such file or folder/);
    refused(state, 'copy', { source: '/workspace/nope', target: '/workspace/yes' }, /No such file/);
    refused(state, 'grep', { pattern: 'x', path: '/nope' }, /No such file or folder: \/nope/);
    refused(state, 'read', { path: '/workspace/TODO.md/inner' }, /No such file: \/workspace\/TODO\.md\/inner\. \/workspace\/TODO\.md is a file, not a folder\./);
    refused(state, 'write', { path: '/workspace/releases/a.txt', content: 'x' }, /its folder \/workspace\/releases does not exist\. Create it first with mkdir/);
  });

  it('refuses read ranges that make no sense and reading a folder', () => {
    const state = fresh(16);
    refused(state, 'read', { path: '/workspace/TODO.md', start_line: 4, end_line: 2 }, /end_line \(2\) is before start_line \(4\)/);
    refused(state, 'read', { path: '/workspace/TODO.md', start_line: 500 }, /start_line 500 is past the end of \/workspace\/TODO\.md, which has \d lines/);
    refused(state, 'read', { path: '/workspace/docs' }, /is a folder, not a file: list it with ls/);
  });

  it('never lets a move or copy replace something by accident', () => {
    const state = fresh(17);
    refused(state, 'move', { source: '/workspace/TODO.md', target: '/workspace/README.md' }, /already exists; move never replaces anything/);
    refused(state, 'move', { source: '/workspace/TODO.md', target: '/workspace/docs' }, /e\.g\. \/workspace\/docs\/TODO\.md/);
    refused(state, 'move', { source: '/workspace/config', target: '/workspace/config/inner' }, /into itself/);
    refused(state, 'copy', { source: '/workspace/config/app.env', target: '/workspace/config/app.env.bak' }, /already exists .*Pass overwrite: true/);
    refused(state, 'copy', { source: '/workspace/config', target: '/workspace/config2' }, /is a folder; copy works on single files/);
    refused(state, 'copy', { source: '/workspace/TODO.md', target: '/workspace/docs' }, /is a folder; give the full path of the copy/);
    refused(state, 'write', { path: '/workspace/docs', content: 'x', overwrite: true }, /is a folder; write needs a file path/);
  });

  it('refuses a file larger than the limit, a bad pattern and an empty time window', () => {
    const state = fresh(18);
    refused(state, 'write', { path: '/workspace/big.txt', content: 'é'.repeat(9000) }, /content is 18000 bytes; a file holds at most 16384 bytes/);
    refused(state, 'grep', { pattern: '([a-z' }, /not a valid regular expression.*literal: true/);
    refused(state, 'find', { path: '/workspace', modified: { after: '2026-03-01T00:00:00Z', before: '2026-02-01T00:00:00Z' } }, /modified\.after \(2026-03-01T00:00:00Z\) must be earlier than modified\.before/);
    refused(state, 'find', { path: '/workspace/TODO.md' }, /is a file: find searches below a folder/);
    refused(state, 'ls', { path: '/workspace', recursive: false, depth: 2 }, /depth only applies to a recursive listing/);
    refused(state, 'delete', { paths: ['/'] }, /root folder and cannot be deleted/);
  });

  it('rejects relative paths, "." and ".." segments in the schema and in the world', () => {
    const validate = compileValidator(spec('read').inputSchema);
    for (const bad of ['workspace/README.md', '/workspace/../etc/hosts', '/workspace/./README.md', '/workspace/', '/work space', '/a:b', '/..']) {
      assert.notDeepEqual(validate({ path: bad }), [], `${bad} fails the schema`);
    }
    for (const good of ['/', '/workspace/.env', '/workspace/config/app.env.bak', '/a..b']) assert.deepEqual(validate({ path: good }), [], `${good} passes`);
    assert.notDeepEqual(compileValidator(spec('find').inputSchema)({ path: '/workspace', modified: {} }), [], 'an empty time window fails the schema');
    assert.notDeepEqual(compileValidator(spec('find').inputSchema)({ path: '/workspace', modified: { before: 'March' } }), [], 'before is a date-time');
    const state = fresh(19);
    const before = snap(state);
    const outcome = filesWorld.call(state, 'read', { path: '/workspace/../etc/hosts' });
    assert.equal(outcome.ok, false);
    assert.match((outcome as any).message, /has a "\.\." segment/);
    assert.equal(snap(state), before);
  });

  it('gives every tool a description, annotations, an output schema and strict input', () => {
    assert.ok(FILES_TOOLS.length >= 5 && FILES_TOOLS.length <= 12);
    for (const tool of FILES_TOOLS) {
      assert.ok(tool.description.length > 40, tool.name);
      assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
      assert.ok(tool.outputSchema, tool.name);
      assert.ok(tool.annotations, tool.name);
      if (tool.annotations!.readOnlyHint === false) assert.ok((tool.claims ?? []).length > 0, `${tool.name} has claim patterns`);
    }
  });
});

describe('files world served over MCP (real SDK client and server)', () => {
  async function connect(seed: number) {
    const state = fresh(seed);
    const connection = await connectInProcess(createWorldServer({ world: filesWorld, state }));
    return { state, ...connection };
  }

  it('lists the tools and answers reads with structured content', async () => {
    const { client, close, state } = await connect(20);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), ['ls', 'find', 'read', 'grep', 'write', 'edit', 'copy', 'move', 'delete', 'mkdir']);
      const setting = envWith(state);
      const grep = await client.callTool({ name: 'grep', arguments: { pattern: `^${setting.name}=`, path: '/workspace' } });
      assert.equal(grep.isError, undefined);
      assert.equal((grep.structuredContent as any).matches[0].path, setting.path);
      const read = await client.callTool({ name: 'read', arguments: { path: setting.path, start_line: 1, end_line: 1 } });
      assert.equal((read.structuredContent as any).lines[0].text, `# owner: ${setting.owner}`);
      assert.deepEqual(JSON.parse((read.content as any)[0].text), read.structuredContent);
    } finally {
      await close();
    }
  });

  it('answers bad paths and rule violations with isError and changes nothing', async () => {
    const { client, close, state } = await connect(21);
    const before = snap(state);
    try {
      const dotted = await client.callTool({ name: 'read', arguments: { path: '/workspace/../etc/hosts' } });
      assert.equal(dotted.isError, true);
      assert.match((dotted.content as any)[0].text, /^Invalid arguments for read: path/);
      const clobber = await client.callTool({ name: 'write', arguments: { path: '/workspace/TODO.md', content: 'gone\n' } });
      assert.equal(clobber.isError, true);
      assert.match((clobber.content as any)[0].text, /already exists/);
      const etc = await client.callTool({ name: 'delete', arguments: { paths: ['/etc/hosts'] } });
      assert.equal(etc.isError, true);
    } finally {
      await close();
    }
    assert.equal(snap(state), before);
  });
});
