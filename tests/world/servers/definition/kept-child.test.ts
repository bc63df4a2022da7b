// A world written as data that keeps its child (`launch.keep: swapped-link`):
// git-server-v1 and obsidian-vault-v1 generated through the CLI with one kept
// child per thread give the same bytes as with a child per connection
// (EPISODE_FACTORY_FRESH_SERVERS=1), the kept child really is reused across
// episodes, its directory and link never reach a record, and nothing is left
// in TMPDIR. The link rule itself: the link's path shows as the shown root and
// the shown root goes down as the link's path.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { throughLink } from '../../../../src/world/servers/linked-root.js';
import { sandboxPath } from '../../../../src/world/servers/normalising-transport.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory, withoutVariable } from '../../../helpers.js';

withoutVariable('EPISODE_FACTORY_FRESH_SERVERS');

/** Runs the CLI with these variables set for the child. */
async function cliWith(variables: Record<string, string>, ...args: string[]) {
  const saved = Object.fromEntries(Object.keys(variables).map((key) => [key, process.env[key]]));
  Object.assign(process.env, variables);
  try {
    return await runCliAsync(REPO_ROOT, ...args);
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** Every `server_started` event of a generated dataset's traces. */
function serverStarts(out: string): Array<{ pid: number; kept: boolean }> {
  const directory = join(out, 'traces');
  return readdirSync(directory)
    .flatMap((name) => readFileSync(join(directory, name), 'utf8').trim().split('\n'))
    .filter((line) => line.includes('"server_started"'))
    .map((line) => {
      const found = JSON.parse(line) as Record<string, any>;
      const data = found.data ?? found.payload ?? found;
      return { pid: data.pid as number, kept: data.kept as boolean };
    });
}

describe('the link rule of a kept child', () => {
  const realRoot = '/private/base/repo';
  const link = '/pool/child-1/current/repo';
  const rule = throughLink(sandboxPath(realRoot, '/repo', '/private/base', { pathArguments: ['path'] }), realRoot, link);

  it('shows the link and the real root alike as the shown root, and keeps the rule\'s id', () => {
    assert.equal(rule.id, 'sandbox-path');
    assert.equal(rule.up(`Working directory set to ${link}/src`), 'Working directory set to /repo/src');
    assert.equal(rule.up(`fatal: ${realRoot}/x`), 'fatal: /repo/x');
    assert.equal(rule.up(`${link}-waiting/a`), `${link}-waiting/a`, 'a longer name is not the link');
  });

  it('sends the shown root down as the link, and leaves other text alone', () => {
    assert.equal(rule.down('/repo', 'path'), link);
    assert.equal(rule.down('/repo/src/a.ts', 'path'), `${link}/src/a.ts`);
    assert.equal(rule.down('src/a.ts', 'path'), 'src/a.ts');
    assert.equal(rule.down('see /repo/x', 'message'), 'see /repo/x');
  });
});

describe('a kept child of a world written as data', () => {
  // git's child takes ~0.9 s to start and its episodes are slow (one seed of ten tasks); obsidian's are quick (two seeds).
  for (const [lane, world, seeds, count, privateTmp] of [
    ['git-server-v1', 'git-server', '0..0', 10, true],
    ['obsidian-vault-v1', 'obsidian-vault', '0..1', 22, false],
  ] as const) {
    it(`${lane}: a kept child gives the bytes of a child per connection, and its path never reaches a record`, async () => {
      const root = temporaryDirectory('ef-kept-child-');
      // git's sandboxes and pool go under TMPDIR, so a private one shows what is left behind; obsidian's go under HOME (it refuses /tmp).
      const keptTmp = temporaryDirectory('ef-kept-tmp-');
      const freshTmp = temporaryDirectory('ef-kept-tmp-');
      const kept = await cliWith(privateTmp ? { TMPDIR: keptTmp } : {}, 'generate', lane, '--seeds', seeds, '--out', join(root, 'kept'));
      assert.equal(kept.status, 0, kept.stderr);
      const fresh = await cliWith({ EPISODE_FACTORY_FRESH_SERVERS: '1', ...(privateTmp ? { TMPDIR: freshTmp } : {}) }, 'generate', lane, '--seeds', seeds, '--out', join(root, 'fresh'));
      assert.equal(fresh.status, 0, fresh.stderr);

      const text = readFileSync(join(root, 'kept', 'episodes.jsonl'), 'utf8');
      assert.equal(text.trim().split('\n').length, count);
      assert.equal(readFileSync(join(root, 'fresh', 'episodes.jsonl'), 'utf8'), text);
      for (const trace of [`episode-factory-${world}-pool-`, 'child-', '/current/', '-waiting', `episode-factory-${world}-`]) {
        assert.ok(!text.includes(trace), `"${trace}" reaches a record`);
      }

      const keptStarts = serverStarts(join(root, 'kept'));
      assert.ok(keptStarts.length >= count && keptStarts.every((start) => start.kept), 'every connection leased the kept child');
      assert.ok(new Set(keptStarts.map((start) => start.pid)).size < keptStarts.length / 4, 'one child served many episodes');
      const freshStarts = serverStarts(join(root, 'fresh'));
      assert.ok(freshStarts.every((start) => !start.kept) && new Set(freshStarts.map((start) => start.pid)).size === freshStarts.length);
      if (privateTmp) {
        assert.deepEqual(readdirSync(keptTmp).filter((name) => !name.startsWith('tsx-')), []);
        assert.deepEqual(readdirSync(freshTmp).filter((name) => !name.startsWith('tsx-')), []);
      }

      const replay = await runCliAsync(REPO_ROOT, 'replay', join(root, 'kept'));
      assert.equal(replay.status, 0, replay.stdout + replay.stderr);
      assert.match(replay.stdout, new RegExp(`${count} records, ${count} verified, 0 failed`));
    });
  }
});
