// The obsidian-vault world, a server world written as data
// (worlds/obsidian-vault.json): the real obsidian-mcp 1.0.6 on a seeded vault
// under HOME lists exactly the pinned catalog, gives byte-identical normalised
// results and snapshots on two fresh sandboxes from the same seed (the call
// times, the trash and backup names and the real root all normalised away),
// reads the notes' YAML front matter back after the server rewrites it, keeps
// what delete-note trashes out of the file tree but in the trash part, and
// refuses a folder that climbs out of the vault before the server sees it.

import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../../src/core/canonical-json.js';
import { loadDefinition } from '../../../src/world/servers/definition/definition-loader.js';
import { serverWorldFromDefinition } from '../../../src/world/servers/definition/defined-server-world.js';
import { liveAndPinnedCatalog, sessionCalls, type Call } from './server-world-harness.js';

const DEFINITION = new URL('../../../worlds/obsidian-vault.json', import.meta.url);
const world = serverWorldFromDefinition(loadDefinition(DEFINITION.pathname));

function episode(seed: number) {
  return sessionCalls(world, seed, (initial) => {
    const copy = Object.values(initial.archive as Record<string, any>).find((note) => note.front_matter.replaced_by !== undefined);
    const old = Object.values(initial.archive as Record<string, any>).find((note) => note.front_matter.replaced_by === undefined);
    const twin = initial.projects[copy.name];
    const wip = Object.values(initial.projects as Record<string, any>).find((note) => note.front_matter.tags.includes('wip'));
    const day = Object.values(initial.daily as Record<string, any>)[0];
    const calls: Call[] = [
      ['read-note', { vault: 'vault', filename: twin.name, folder: 'projects' }],
      ['search-vault', { vault: 'vault', query: twin.front_matter.project, path: 'meetings' }],
      ['add-tags', { vault: 'vault', files: [twin.path], tags: ['followup'] }],
      ['rename-tag', { vault: 'vault', oldTag: 'wip', newTag: 'ongoing' }],
      ['edit-note', { vault: 'vault', filename: day.name, folder: 'daily', operation: 'append', content: '- [ ] book the train' }],
      ['delete-note', { vault: 'vault', path: old.path, reason: 'obsolete' }],
      ['read-note', { vault: 'vault', filename: 'passwd', folder: '../../../etc' }],
    ];
    return { calls, twin, old, wip, day };
  });
}

describe('obsidian-vault world (a definition file)', () => {
  it('lists exactly the pinned catalog', async () => {
    const { listed, pinned, serverInfo } = await liveAndPinnedCatalog(world, new URL('../../../worlds/obsidian-vault.catalog.json', import.meta.url));
    assert.equal(canonicalJson(listed as never), canonicalJson(pinned as never));
    assert.equal(listed.length, 11);
    assert.deepEqual(serverInfo, { name: 'obsidian-mcp', version: '1.0.6' });
  });

  it('gives byte-identical normalised results and snapshots for the same seed, and the writes show in the snapshot', async () => {
    const a = await episode(3);
    const b = await episode(3);
    assert.equal(canonicalJson(a.initial), canonicalJson(b.initial));
    assert.equal(canonicalJson(a.results as never), canonicalJson(b.results as never));
    assert.equal(canonicalJson(a.final), canonicalJson(b.final));
    const text = canonicalJson(a.results as never);
    assert.ok(!text.includes(homedir()), 'no real path reaches a result');
    assert.ok(text.includes('Created backup at: /vault/.backup/vault-backup-2026-01-15T12:00:00Z'), 'the backup folder shows the pinned time');
    assert.ok(a.results.every((entry) => !('_meta' in entry.result) || (entry.result._meta as { timestamp: string }).timestamp === '2026-01-15T12:00:00Z'));
    assert.ok(text.includes(`Moved note \\"${a.old.path}\\" to trash as \\"${a.old.name.slice(0, -3)}_2026-01-15T12:00:00Z.md\\"`));
    // The path guard answers the escape itself.
    assert.equal(a.results[6]!.result.isError, true);
    // The server's YAML rewrite reads back: the new tag sorted in, the renamed tag in front matter and inline.
    assert.deepEqual(a.final.projects[a.twin.name].front_matter.tags, [...a.twin.front_matter.tags, 'followup'].sort());
    assert.ok(a.final.projects[a.wip.name].front_matter.tags.includes('ongoing') && !a.final.projects[a.wip.name].front_matter.tags.includes('wip'));
    assert.ok(a.final.projects[a.wip.name].text.includes('#ongoing'));
    assert.ok(a.final.daily[a.day.name].text.endsWith('\n\n- [ ] book the train'));
    // The trashed note left the tree; the trash part names where it came from.
    assert.equal(a.final.archive[a.old.name], undefined);
    assert.deepEqual(a.final.trash, [`original_path: ${a.old.path}`]);
    assert.equal(Object.keys(a.final.files.files).some((path) => path.startsWith('.')), false);
  });

  it('draws a different vault from a different seed', async () => {
    const a = await episode(3);
    const c = await episode(4);
    assert.notEqual(canonicalJson(a.initial), canonicalJson(c.initial));
  });
});
