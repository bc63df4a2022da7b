// Prototype server world (issue 15): the real @modelcontextprotocol/server-filesystem
// on a seeded sandbox, through the declared normalisations, gives byte-identical
// results and snapshots on two fresh sandboxes from the same seed; the child's
// process group is gone after close; no secret reaches it. Skipped until the
// package is a pinned dependency (docs/server-worlds.md, section 10); to run it
// now: npm install --prefix .scratch @modelcontextprotocol/server-filesystem@2026.8.31
// and NODE_PATH=.scratch/node_modules.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { substream } from '../../src/core/random.js';
import { groupAlive } from '../../src/world/servers/child-transport.js';
import {
  createSandbox,
  FILESYSTEM_SERVER_PACKAGE,
  populateFilesystemSandbox,
  probeFilesystemSandbox,
  removeSandbox,
  resolveServerEntry,
  serverEnvironment,
  SHOWN_ROOT,
  startFilesystemServer,
} from '../../src/world/servers/filesystem-server.js';
import { jsDateString, sandboxPath } from '../../src/world/servers/normalising-transport.js';

function installed(): boolean {
  try {
    resolveServerEntry(FILESYSTEM_SERVER_PACKAGE);
    return true;
  } catch {
    return false;
  }
}

const PINNED = '2026-01-15T12:00:00Z';

/** One episode's worth of calls on a fresh sandbox from `seed`; everything it returns is what a record would hold. */
async function episode(seed: number) {
  const sandbox = await createSandbox();
  try {
    const files = await populateFilesystemSandbox(sandbox, substream(seed, 'world'));
    const initial = await probeFilesystemSandbox(sandbox);
    const session = await startFilesystemServer(sandbox, { pinnedDate: PINNED, environment: { ...process.env, OPENAI_API_KEY: 'sk-test', GITHUB_TOKEN: 'x' } });
    const first = files[0]!;
    const calls: Array<[string, Record<string, unknown>]> = [
      ['list_allowed_directories', {}],
      ['list_directory', { path: SHOWN_ROOT }],
      ['read_text_file', { path: `${SHOWN_ROOT}/${first}` }],
      // The server does not make missing parents: a precondition an agent must discover.
      ['write_file', { path: `${SHOWN_ROOT}/out/report.md`, content: 'early\n' }],
      ['create_directory', { path: `${SHOWN_ROOT}/out` }],
      ['write_file', { path: `${SHOWN_ROOT}/out/report.md`, content: 'done\n' }],
      ['edit_file', { path: `${SHOWN_ROOT}/${first}`, edits: [{ oldText: '\n', newText: '\nEDITED\n' }] }],
      ['move_file', { source: `${SHOWN_ROOT}/out/report.md`, destination: `${SHOWN_ROOT}/report.md` }],
      ['search_files', { path: SHOWN_ROOT, pattern: '**/*.md' }],
      ['get_file_info', { path: `${SHOWN_ROOT}/report.md` }],
      ['read_text_file', { path: `${SHOWN_ROOT}/../escape.txt` }],
      ['read_text_file', { path: `${SHOWN_ROOT}/missing.txt` }],
    ];
    const results = [];
    try {
      for (const [name, args] of calls) results.push({ name, args, result: await session.call(name, args as never) });
    } finally {
      await session.close();
    }
    const final = await probeFilesystemSandbox(sandbox);
    return { sandbox, initial, final, results, pid: session.pid, faults: session.serverFaults, stderr: session.stderr };
  } finally {
    await removeSandbox(sandbox);
  }
}

describe('normalisations', () => {
  it('shows the sandbox as a fixed root both ways and its holder as /', () => {
    const rule = sandboxPath('/tmp/ef-abc/sandbox', '/sandbox', '/tmp/ef-abc');
    assert.equal(rule.down('/sandbox/docs/a.md'), '/tmp/ef-abc/sandbox/docs/a.md');
    assert.equal(rule.down('/sandbox'), '/tmp/ef-abc/sandbox');
    assert.equal(rule.down('/sandboxes/a'), '/sandboxes/a');
    assert.equal(rule.down('docs/a.md'), 'docs/a.md');
    assert.equal(rule.up('Successfully wrote to /tmp/ef-abc/sandbox/docs/a.md'), 'Successfully wrote to /sandbox/docs/a.md');
    assert.equal(rule.up('Access denied: /tmp/ef-abc/escape.txt not in /tmp/ef-abc/sandbox'), 'Access denied: /escape.txt not in /sandbox');
    assert.equal(rule.up('/tmp/ef-abcd/sandbox'), '/tmp/ef-abcd/sandbox');
  });

  it('prints every Date#toString() as the pinned instant in UTC', () => {
    const rule = jsDateString(PINNED);
    assert.equal(
      rule.up('created: Thu Dec 03 2026 09:23:13 GMT+0100 (Central European Standard Time)\nsize: 3'),
      'created: Thu Jan 15 2026 12:00:00 GMT+0000 (Coordinated Universal Time)\nsize: 3',
    );
  });

  it('lets no secret and nothing but the allowlist reach the child', () => {
    const env = serverEnvironment({ base: '/tmp/x', root: '/tmp/x/sandbox' }, { PATH: '/bin', OPENAI_API_KEY: 'k', HOME: '/root', NODE_OPTIONS: '--require=/evil.js' });
    assert.deepEqual(Object.keys(env).sort(), ['HOME', 'LANG', 'PATH', 'TZ']);
    assert.equal(env.HOME, '/tmp/x/sandbox');
  });
});

describe('filesystem server world (prototype)', { skip: installed() ? false : `${FILESYSTEM_SERVER_PACKAGE.name}@${FILESYSTEM_SERVER_PACKAGE.version} is not installed` }, () => {
  it('gives byte-identical normalised results and snapshots for the same seed on two fresh sandboxes', async () => {
    const a = await episode(7);
    const b = await episode(7);
    assert.notEqual(a.sandbox.root, b.sandbox.root);
    assert.equal(canonicalJson(a.initial), canonicalJson(b.initial));
    assert.equal(canonicalJson(a.results), canonicalJson(b.results));
    assert.equal(canonicalJson(a.final), canonicalJson(b.final));
    assert.deepEqual(a.faults, []);
    const text = canonicalJson(a.results);
    assert.ok(!text.includes(a.sandbox.base), 'no real sandbox path reaches a result');
    assert.ok(text.includes('Successfully wrote to /sandbox/out/report.md'));
    assert.ok(text.includes('GMT+0000 (Coordinated Universal Time)'));
    // The write, the edit and the move are in the final snapshot, relative to the sandbox.
    assert.equal(a.final.files['report.md']?.text, 'done\n');
    assert.ok(!('out/report.md' in a.final.files));
    assert.ok(a.final.dirs.includes('out'));
    // Reads outside the sandbox are refused by the server itself.
    const escape = a.results.find((entry) => String(entry.args.path).includes('..'))!.result;
    assert.equal(escape.isError, true);
    assert.ok(canonicalJson(escape).includes('/escape.txt not in /sandbox'));
    // The missing parent is an ENOENT error naming the shown path.
    assert.ok(text.includes("ENOENT: no such file or directory, open '/sandbox/out/report.md'"));
  });

  it('draws a different sandbox from a different seed', async () => {
    const a = await episode(7);
    const c = await episode(8);
    assert.notEqual(canonicalJson(a.initial), canonicalJson(c.initial));
  });

  it('leaves no process of the child behind', async () => {
    const a = await episode(9);
    assert.equal(groupAlive(a.pid), false);
  });
});
