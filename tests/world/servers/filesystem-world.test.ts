// The filesystem server world: the real @modelcontextprotocol/server-filesystem
// on a seeded sandbox, through the declared normalisations, gives
// byte-identical results and snapshots on two fresh sandboxes from the same
// seed; its pinned catalog is what the live server lists; the unchanged fault
// layer works in front of it; the child's process group is gone after close;
// no secret reaches it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../../src/core/canonical-json.js';
import { substream } from '../../../src/core/random.js';
import { FaultState } from '../../../src/world/faults/fault-state.js';
import { readdirSync, readFileSync } from 'node:fs';
import { ChildTransport, groupAlive } from '../../../src/world/servers/child-transport.js';
import { closeKeptChildren } from '../../../src/world/servers/server-pool.js';
import { filesystemServerWorld } from '../../../src/world/servers/filesystem/filesystem-world.js';
import { jsDateString, sandboxPath } from '../../../src/world/servers/normalising-transport.js';
import { serverEnvironment } from '../../../src/world/servers/server-session.js';
import { openWorldSession } from '../../../src/world/world-session.js';
import { liveAndPinnedCatalog, PINNED, sessionCalls, type Call } from './server-world-harness.js';

const SHOWN_ROOT = '/sandbox';

/** One episode's worth of calls on a fresh sandbox from `seed`; everything it returns is what a record would hold. */
function episode(seed: number) {
  return sessionCalls(filesystemServerWorld, seed, (initial) => {
    const first = Object.keys(initial.files)[0]!;
    const calls: Call[] = [
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
    return { calls };
  });
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

  it('shows the holder itself as /, under any spelling of it, and never asks the server about a path above it', () => {
    const rule = sandboxPath('/private/tmp/ef-abc/sandbox', '/sandbox', '/private/tmp/ef-abc', { pathArguments: ['path', 'paths'], aliases: ['/tmp/ef-abc'] });
    assert.equal(rule.up('Access denied: /private/tmp/ef-abc not in /private/tmp/ef-abc/sandbox'), 'Access denied: / not in /sandbox');
    assert.equal(rule.up("scandir '/tmp/ef-abc/sandbox/x', '/tmp/ef-abc', '/tmp/ef-abc/home'"), "scandir '/sandbox/x', '/', '/home'");
    assert.equal(rule.up('/private/tmp/ef-abcd and /tmp/ef-abc.old'), '/private/tmp/ef-abcd and /tmp/ef-abc.old', 'another directory is not the holder');
    assert.equal(rule.up('/tmp/cache and /private/tmp'), '/tmp/cache and /private/tmp', 'TMPDIR as text is left alone');
    // Path arguments: what stays inside the holder goes down as before; what would climb above it goes down as the path the model means.
    assert.equal(rule.down('/sandbox/../escape.txt', 'path'), '/private/tmp/ef-abc/sandbox/../escape.txt');
    assert.equal(rule.down('/sandbox/..', 'path'), '/private/tmp/ef-abc/sandbox/..');
    assert.equal(rule.down('/sandbox/../..', 'path'), '/private/tmp/ef-abc');
    assert.equal(rule.down('/sandbox/../../etc/passwd', 'path'), '/private/tmp/ef-abc/etc/passwd');
    assert.equal(rule.down('../../x', 'paths'), '/private/tmp/ef-abc/x');
    assert.equal(rule.down('../x', 'path'), '../x');
    assert.equal(rule.down('docs/a.md', 'path'), 'docs/a.md');
    assert.equal(rule.down('/etc/passwd', 'path'), '/private/tmp/ef-abc/etc/passwd');
    assert.equal(rule.down('/etc/../sandbox/a', 'path'), '/private/tmp/ef-abc/sandbox/a');
    assert.equal(rule.down('~', 'path'), '/private/tmp/ef-abc/home');
    assert.equal(rule.down('~/../../x', 'path'), '/private/tmp/ef-abc/x');
    assert.equal(rule.down('C:/x', 'path'), 'C:/x', 'the server refuses a drive path itself');
    // Other arguments (contents) are rewritten only where they name the shown root, as before.
    assert.equal(rule.down('/sandbox/../..', 'content'), '/private/tmp/ef-abc/sandbox/../..');
    assert.equal(rule.down('../../x', 'content'), '../../x');
    assert.equal(rule.down('/sandbox/../..'), '/private/tmp/ef-abc/sandbox/../..');
    // A holder of `/` has no spelling to rewrite: nothing else is touched.
    assert.equal(sandboxPath('/sandbox', '/sandbox', '/').up('a /b c/ /sandbox/x'), 'a /b c/ /sandbox/x');
  });

  it('prints every Date#toString() as the pinned instant in UTC', () => {
    const rule = jsDateString(PINNED);
    assert.equal(
      rule.up('created: Thu Dec 03 2026 09:23:13 GMT+0100 (Central European Standard Time)\nsize: 3'),
      'created: Thu Jan 15 2026 12:00:00 GMT+0000 (Coordinated Universal Time)\nsize: 3',
    );
  });

  it('lets no secret and nothing but the allowlist reach the child', () => {
    const env = serverEnvironment({ base: '/tmp/x', root: '/tmp/x/sandbox' }, { MEMORY_FILE_PATH: '/tmp/x/sandbox/m.jsonl', GITHUB_TOKEN: 'from-an-adapter' }, { PATH: '/bin', OPENAI_API_KEY: 'k', HOME: '/root', NODE_OPTIONS: '--require=/evil.js' });
    assert.deepEqual(Object.keys(env).sort(), ['HOME', 'LANG', 'MEMORY_FILE_PATH', 'PATH', 'TZ']);
    assert.equal(env.HOME, '/tmp/x/home');
  });
});

describe('filesystem server world', () => {
  it('lists exactly the pinned catalog the adapter declares', async () => {
    const { listed, pinned, serverInfo } = await liveAndPinnedCatalog(filesystemServerWorld, new URL('../../../worlds/filesystem-server.catalog.json', import.meta.url));
    assert.equal(canonicalJson(listed as never), canonicalJson(pinned as never));
    assert.deepEqual(filesystemServerWorld.tools.map((tool) => tool.name), listed.map((tool) => tool.name));
    assert.deepEqual(serverInfo, { name: 'secure-filesystem-server', version: '0.2.0' });
  });

  it('gives byte-identical normalised results and snapshots for the same seed on two fresh sandboxes', async () => {
    const a = await episode(7);
    const b = await episode(7);
    assert.equal(canonicalJson(a.initial), canonicalJson(b.initial));
    assert.equal(canonicalJson(a.results as never), canonicalJson(b.results as never));
    assert.equal(canonicalJson(a.final), canonicalJson(b.final));
    const text = canonicalJson(a.results as never);
    assert.ok(!/episode-factory-filesystem-server-/.test(text), 'no real sandbox path reaches a result');
    assert.equal(a.actor.package, '@modelcontextprotocol/server-filesystem@2026.8.31');
    assert.match(String(a.actor.integrity), /^sha512-/);
    assert.equal(a.actor.server_info, 'secure-filesystem-server 0.2.0');
    assert.deepEqual((a.actor.normalisations as Array<{ id: string }>).map((rule) => rule.id), ['sandbox-path', 'js-date-string']);
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

  it('works behind the unchanged fault layer, which fires the same faults on the same bytes on every run', async () => {
    async function faulted(seed: number) {
      const session = await openWorldSession(filesystemServerWorld, substream(seed, 'world'), {}, { pinnedDate: PINNED });
      try {
        const fired: unknown[] = [];
        const plan = {
          faults: [
            { id: 'pages', kind: 'paginate_tools' as const, lists: [1], params: { page_size: 5 } },
            { id: 'error', kind: 'tool_error' as const, calls: [2] },
            { id: 'cut', kind: 'truncated_result' as const, calls: [3] },
            { id: 'stale', kind: 'stale_read' as const, calls: [5] },
          ],
        };
        const faults = new FaultState(plan, substream(seed, 'faults'), (fault) => fired.push(fault));
        const connection = await session.connect({ faults });
        const client = connection.client;
        const pages: number[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : {});
          pages.push(page.tools.length);
          cursor = page.nextCursor;
        } while (cursor);
        const first = Object.keys((session.initialSnapshot as any).files)[0]!;
        const path = `${SHOWN_ROOT}/${first}`;
        const read = { name: 'read_text_file', arguments: { path } };
        const results = [];
        for (const call of [read, read, read, { name: 'write_file', arguments: { path, content: 'changed\n' } }, read, read]) results.push(await client.callTool(call));
        await connection.close();
        return { pages, results, fired, original: first };
      } finally {
        await session.dispose();
      }
    }
    const a = await faulted(3);
    const b = await faulted(3);
    assert.equal(canonicalJson(a as never), canonicalJson(b as never));
    assert.deepEqual(a.pages, [5, 5, 4]);
    assert.deepEqual((a.fired as Array<{ kind: string }>).map((fault) => fault.kind), ['paginate_tools', 'tool_error', 'truncated_result', 'stale_read']);
    // The stale read answers with the text from before the write; the next read sees the write.
    assert.equal(canonicalJson(a.results[4]!.content as never), canonicalJson(a.results[0]!.content as never));
    assert.equal((a.results[5]!.content as Array<{ text: string }>)[0]!.text, 'changed\n');
  });

  it('gives two episodes of one thread that connect at once a kept child each, each pointed at its own sandbox', async () => {
    await closeKeptChildren();
    // One idle kept child, which both would take if taking it waited for its re-pointing.
    const warm = await openWorldSession(filesystemServerWorld, substream(10, 'world'), {}, { pinnedDate: PINNED });
    await (await warm.connect({})).close();
    await warm.dispose();
    const sessions = await Promise.all([11, 12].map((seed) => openWorldSession(filesystemServerWorld, substream(seed, 'world'), {}, { pinnedDate: PINNED })));
    try {
      const connections = await Promise.all(sessions.map((session) => session.connect({})));
      const reads = await Promise.all(connections.map((connection) => connection.client.callTool({ name: 'read_text_file', arguments: { path: `${SHOWN_ROOT}/config/settings.env` } })));
      sessions.forEach((session, index) => {
        assert.equal((reads[index]!.content as Array<{ text: string }>)[0]!.text, (session.initialSnapshot as any).files['config/settings.env'].text);
      });
      assert.notEqual(canonicalJson(reads[0] as never), canonicalJson(reads[1] as never));
      await Promise.all(connections.map((connection) => connection.close()));
    } finally {
      await Promise.all(sessions.map((session) => session.dispose()));
      await closeKeptChildren();
    }
  });

  it('leaves no process of the child behind, whether it was fresh or kept for the next episode', async () => {
    const serverPids = () =>
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .filter((name) => {
          try {
            return readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('server-filesystem');
          } catch {
            return false;
          }
        })
        .map(Number);
    await closeKeptChildren();
    const episodeOn = async (seed: number) => {
      const session = await openWorldSession(filesystemServerWorld, substream(seed, 'world'), {}, { pinnedDate: PINNED });
      const connection = await session.connect({});
      await connection.client.listTools();
      const pids = serverPids();
      await session.dispose();
      return pids;
    };
    // Kept: the same child serves the next episode, and is killed when the thread's pool closes.
    const first = await episodeOn(9);
    const second = await episodeOn(10);
    assert.equal(first.length, 1);
    assert.deepEqual(second, first);
    assert.deepEqual(serverPids(), first, 'kept alive between episodes');
    await closeKeptChildren();
    assert.equal(groupAlive(first[0]!), false);
    // Fresh: the child dies with its episode.
    process.env.EPISODE_FACTORY_FRESH_SERVERS = '1';
    try {
      const fresh = await episodeOn(9);
      assert.equal(fresh.length, 1);
      assert.notDeepEqual(fresh, first);
      assert.deepEqual(serverPids(), []);
    } finally {
      delete process.env.EPISODE_FACTORY_FRESH_SERVERS;
    }
  });
});

describe('child transport', () => {
  const env = serverEnvironment({ base: '/tmp', root: '/tmp' });

  it('reports garbage on stdout as a server fault, closes, and kills what the child started', async () => {
    const faults: string[] = [];
    let closed = false;
    const transport = new ChildTransport({
      command: process.execPath,
      // A grandchild that would outlive a plain kill of the child, then garbage on stdout.
      args: ['-e', "require('child_process').spawn('sleep', ['30'], { stdio: 'ignore' }); setTimeout(() => console.log('not json'), 100); setInterval(() => {}, 1000)"],
      cwd: '/tmp',
      env,
      onServerFault: (fault) => faults.push(fault.kind),
    });
    transport.onclose = () => (closed = true);
    await transport.start();
    const pid = transport.pid!;
    for (let waited = 0; !closed && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(faults, ['garbage_output']);
    assert.equal(closed, true);
    assert.equal(groupAlive(pid), false);
  });

  it('reports a child that exits during the session as crashed', async () => {
    const faults: string[] = [];
    const transport = new ChildTransport({ command: process.execPath, args: ['-e', 'setTimeout(() => process.exit(3), 50)'], cwd: '/tmp', env, onServerFault: (fault) => faults.push(fault.kind) });
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await transport.start();
    await closed;
    assert.deepEqual(faults, ['crashed']);
  });
});
