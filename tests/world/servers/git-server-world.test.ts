// The git server world, written as data (worlds/git-server.json): the real
// @cyanheads/git-mcp-server lists exactly the pinned catalog; two fresh
// sandboxes from one seed give byte-identical results and snapshots, even for
// the answers git dates with the clock (blame of an uncommitted line, a
// relative `since`); another seed draws another repository; the guards keep
// every call inside /repo and away from the network; and no real path reaches
// an answer.

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../../src/core/canonical-json.js';
import { loadDefinition } from '../../../src/world/servers/definition/definition-loader.js';
import { serverWorldFromDefinition } from '../../../src/world/servers/definition/defined-server-world.js';
import { liveAndPinnedCatalog, PINNED, sessionCalls, type Call } from './server-world-harness.js';

const DEFINITION = new URL('../../../worlds/git-server.json', import.meta.url);
const gitServerWorld = serverWorldFromDefinition(loadDefinition(DEFINITION.pathname));

function textOf(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((part) => part.text ?? '').join('\n');
}

/** One episode's worth of calls on a fresh sandbox from `seed`, chosen from its initial snapshot. */
function episode(seed: number) {
  return sessionCalls(gitServerWorld, seed, (initial) => {
    const stray = (initial.unstaged as Array<{ path: string }>).find((entry) => entry.path !== 'CHANGELOG.md')!.path;
    const feature = (initial.branches as Array<{ name: string }>).find((branch) => branch.name.startsWith('feature/'))!.name;
    const calls: Call[] = [
      ['git_set_working_dir', { path: '/repo' }],
      ['git_status', {}],
      // A line not committed yet: git dates it with the clock.
      ['git_blame', { filePath: stray }],
      // Relative to GIT_TEST_DATE_NOW, not to the clock.
      ['git_log', { since: '2 days ago', oneline: true }],
      ['git_add', { paths: ['CHANGELOG.md'] }],
      ['git_commit', { message: 'Update the changelog' }],
      ['git_merge', { branch: feature }],
      ['git_tag', { mode: 'create', tagName: 'v1.1.0', message: 'Release 1.1.0' }],
      ['git_stash', { mode: 'pop', stashRef: 'stash@{1}' }],
      ['git_status', { path: '/repo/missing' }],
      ['git_clear_working_dir', { confirm: 'Y' }],
    ];
    return { calls, stray, feature };
  });
}

describe('git server world (a definition file)', () => {
  it('lists exactly the pinned catalog of @cyanheads/git-mcp-server 2.15.3', async () => {
    const { listed, pinned } = await liveAndPinnedCatalog(gitServerWorld, new URL('../../../worlds/git-server.catalog.json', import.meta.url));
    assert.equal(canonicalJson(listed as never), canonicalJson(pinned as never));
    assert.equal(listed.length, 28);
    assert.deepEqual(gitServerWorld.tools.map((tool) => tool.name), listed.map((tool) => tool.name));
  });

  it('gives byte-identical results and snapshots for the same seed, clock-dated answers included, and no real path', async () => {
    const a = await episode(3);
    const b = await episode(3);
    assert.equal(canonicalJson(a.initial), canonicalJson(b.initial));
    assert.equal(canonicalJson(a.results.map((entry) => textOf(entry.result))), canonicalJson(b.results.map((entry) => textOf(entry.result))));
    assert.equal(canonicalJson(a.final), canonicalJson(b.final));
    for (const entry of a.results.slice(0, 9)) assert.ok(!entry.result.isError, `${entry.name} failed: ${textOf(entry.result)}`);
    const blame = JSON.parse(textOf(a.results[2]!.result)) as { lines: Array<{ author: string; timestamp: number }> };
    const uncommitted = blame.lines.filter((line) => line.author === 'Not Committed Yet');
    assert.ok(uncommitted.length > 0);
    for (const line of uncommitted) assert.equal(line.timestamp, Date.parse(PINNED) / 1000);
    const since = JSON.parse(textOf(a.results[3]!.result)) as { commits: unknown[] };
    assert.equal(since.commits.length, (a.initial.main_log as unknown[]).length, 'every seeded commit is within two days of the pinned instant');
    assert.match(textOf(a.results[9]!.result), /\/repo\/missing/);
    const text = a.results.map((entry) => textOf(entry.result)).join('\n');
    assert.ok(!text.includes(tmpdir()), 'no real path reaches a result');
    assert.equal(a.final.head[0], 'main');
    assert.equal(a.final.main_log[0].parents.split(' ')[1], a.initial.branch[a.feature].hash, 'the merge commit has the feature as its second parent');
    assert.equal((a.final.stashes as unknown[]).length, 1);
    assert.equal(a.final.tag['v1.1.0'].type, 'tag');
  });

  it('draws a different repository from another seed', async () => {
    const [a, b] = await Promise.all([episode(3), episode(4)]);
    assert.notEqual(canonicalJson(a.initial.main_log), canonicalJson(b.initial.main_log));
  });

  it('refuses the network, worktrees and any path outside /repo before the server sees them', async () => {
    const run = await sessionCalls(gitServerWorld, 1, () => ({
      calls: [
        ['git_set_working_dir', { path: '/tmp' }],
        ['git_log', { path: '/repo/../..' }],
        ['git_add', { path: '/repo', paths: ['../../etc/passwd'] }],
        ['git_clone', { url: 'https://example.com/x.git', path: '/repo/x' }],
        ['git_remote', { path: '/repo', mode: 'add', name: 'out', url: '/tmp' }],
        ['git_worktree', { path: '/repo', mode: 'add', worktreePath: '/tmp/elsewhere' }],
      ] as Call[],
    }));
    const refusals = run.results.map((entry) => (entry.result.isError ? /Refused by ([a-z-]+)/.exec(textOf(entry.result))?.[1] : 'accepted'));
    assert.deepEqual(refusals, ['paths-in-sandbox', 'paths-in-sandbox', 'paths-in-sandbox', 'no-network', 'no-network', 'no-worktrees']);
    assert.equal(canonicalJson(run.final), canonicalJson(run.initial));
  });
});
