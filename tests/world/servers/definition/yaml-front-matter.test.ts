// The YAML front matter of a note as the probe reads it: the subset Obsidian
// notes and obsidian-mcp's own rewrites use (scalars, block and flow lists,
// quoted strings), the title from the first heading after the block, and
// notes without a block left to the older `# title` reading.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeFile } from '../../../../src/world/servers/definition/file-tree-probe.js';
import { readYamlFrontMatter } from '../../../../src/world/servers/definition/yaml-front-matter.js';

const lines = (text: string) => text.split('\n');

describe('YAML front matter', () => {
  it('reads scalars, block lists and flow lists as strings, and the first heading as the title', () => {
    const note = '---\nstatus: active\nowner: Ana Lima\ndate: 2026-11-25\ntags:\n  - design\n  - project\naliases: [Apollo, "The Apollo plan"]\n---\n\n# Apollo\n\nGoal: ship.\n';
    assert.deepEqual(readYamlFrontMatter(lines(note)), {
      title: 'Apollo',
      meta: { status: 'active', owner: 'Ana Lima', date: '2026-11-25', tags: ['design', 'project'], aliases: ['Apollo', 'The Apollo plan'] },
    });
  });

  it('reads a bare key as null and leaves a nested map out, as delete-note writes into .trash', () => {
    const note = '---\ntrash_metadata:\n  original_path: archive/lumen.md\n  deleted_at: 2026-12-01T00:00:00.000Z\nempty: []\n---\n\nbody';
    assert.deepEqual(readYamlFrontMatter(lines(note)), { meta: { trash_metadata: null, empty: [] } });
  });

  it('is undefined without a closed block, so the caller reads the note another way', () => {
    assert.equal(readYamlFrontMatter(lines('# Title\nowner: Ana\n')), undefined);
    assert.equal(readYamlFrontMatter(lines('---\nstatus: open\n\nno closing line\n')), undefined);
  });

  it('gives the probe entry meta and title for a YAML note, and keeps the `# title` reading for others', () => {
    const yaml = describeFile('projects/a.md', 'projects', 'a.md', Buffer.from('---\ntags:\n  - wip\n---\n\n# A\n'), 'front-matter');
    assert.deepEqual([yaml.title, yaml.meta], ['A', { tags: ['wip'] }]);
    const plain = describeFile('docs/b.md', 'docs', 'b.md', Buffer.from('# B\nowner: Ben Ortiz\nstatus: draft\n\ntext\n'), 'front-matter');
    assert.deepEqual([plain.title, plain.meta], ['B', { owner: 'Ben Ortiz', status: 'draft' }]);
  });
});
