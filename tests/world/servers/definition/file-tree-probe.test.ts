// The file-tree probe on real directories: entries carry size, sha256, text
// and numbered lines, plus what each file's parser (chosen by glob) reads;
// excluded directories are skipped whole; a symlink is listed under `other`
// and never followed; JSON that does not parse is recorded, not thrown; two
// probes of an untouched tree are equal.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { canonicalJson } from '../../../../src/core/canonical-json.js';
import { FactoryError } from '../../../../src/core/errors.js';
import { probeFileTree } from '../../../../src/world/servers/definition/file-tree-probe.js';
import { matchesGlob } from '../../../../src/world/servers/definition/path-glob.js';

const made: string[] = [];
after(async () => {
  for (const directory of made) await rm(directory, { recursive: true, force: true });
});

async function tree(files: Record<string, string | Buffer>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'file-tree-probe-'));
  made.push(root);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, dirname(path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

const PARSERS = { '**/*.md': 'front-matter', '**/*.env': 'settings', '**/*.json': 'json' };

describe('matchesGlob', () => {
  it('keeps * within one component and lets ** cross them, **/ also matching no directory', () => {
    assert.equal(matchesGlob('a.md', '*.md'), true);
    assert.equal(matchesGlob('docs/a.md', '*.md'), false);
    assert.equal(matchesGlob('docs/a.md', '**/*.md'), true);
    assert.equal(matchesGlob('a.md', '**/*.md'), true);
    assert.equal(matchesGlob('docs/deep/a.md', 'docs/*.md'), false);
    assert.equal(matchesGlob('docs/deep/a.md', 'docs/**'), true);
    assert.equal(matchesGlob('a.mdx', '*.md'), false);
    assert.equal(matchesGlob('.env', '**/*.env'), true);
  });
});

describe('probeFileTree', () => {
  it('reads front matter, settings and JSON by glob, and skips excluded paths', async () => {
    const root = await tree({
      'docs/plan.md': '# Plan\nowner: ada\nstatus: open\n\nbody text\n',
      'config/app.env': 'PORT=8080\n# comment\nDEBUG=true\n',
      'data/ok.json': '{"a": [1, 2]}',
      'data/bad.json': '{"a": ',
      'notes.txt': 'one\ntwo\n',
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.git/objects/ab/cdef': 'x',
      'build/out.log': 'noise\n',
      'keep/out.log': 'kept\n',
    });
    const probed = await probeFileTree(root, '.', ['.git', 'build/*.log'], PARSERS);
    assert.deepEqual(probed.dirs, ['build', 'config', 'data', 'docs', 'keep']);
    assert.deepEqual(Object.keys(probed.files).sort(), ['config/app.env', 'data/bad.json', 'data/ok.json', 'docs/plan.md', 'keep/out.log', 'notes.txt']);
    assert.deepEqual(probed.other, []);

    const plan = probed.files['docs/plan.md']!;
    assert.equal(plan.title, 'Plan');
    assert.deepEqual(plan.meta, { owner: 'ada', status: 'open' });
    assert.equal(plan.path, 'docs/plan.md');
    assert.equal(plan.dir, 'docs');
    assert.equal(plan.name, 'plan.md');
    assert.equal(plan.bytes, Buffer.byteLength('# Plan\nowner: ada\nstatus: open\n\nbody text\n'));
    assert.equal(plan.sha256, createHash('sha256').update('# Plan\nowner: ada\nstatus: open\n\nbody text\n').digest('hex'));
    assert.equal(plan.settings, undefined);

    assert.deepEqual(probed.files['config/app.env']!.settings, [
      { key: 'PORT', value: '8080', line: 1 },
      { key: 'DEBUG', value: 'true', line: 3 },
    ]);
    assert.equal(probed.files['config/app.env']!.title, undefined);
    assert.deepEqual(probed.files['data/ok.json']!.json, { a: [1, 2] });
    assert.equal(probed.files['data/bad.json']!.json, undefined);
    assert.match(String(probed.files['data/bad.json']!.json_error), /JSON/);

    const notes = probed.files['notes.txt']!;
    assert.equal(notes.text, 'one\ntwo\n');
    assert.deepEqual(notes.lines, [
      { n: 1, text: 'one' },
      { n: 2, text: 'two' },
    ]);
    assert.equal(notes.json, undefined);
    for (const entry of Object.values(probed.files)) {
      for (const key of ['mtime', 'mode', 'uid', 'gid', 'atime', 'ctime']) assert.equal(key in entry, false);
    }
  });

  it('lists a symlink under other and never follows it', async () => {
    const outside = await tree({ 'secret.txt': 'do not read\n', 'sub/also.txt': 'nor this\n' });
    const root = await tree({ 'real.txt': 'here\n' });
    await symlink(outside, join(root, 'link-to-dir'));
    await symlink(join(outside, 'secret.txt'), join(root, 'link-to-file'));
    const probed = await probeFileTree(root, '.', [], PARSERS);
    assert.deepEqual(probed.other, ['link-to-dir', 'link-to-file']);
    assert.deepEqual(probed.dirs, []);
    assert.deepEqual(Object.keys(probed.files), ['real.txt']);
    assert.equal(canonicalJson(probed).includes('do not read'), false);
  });

  it('gives a binary file its size and hash only, and paths relative to a start directory', async () => {
    const root = await tree({ 'assets/logo.bin': Buffer.from([0xff, 0xfe, 0x00, 0x01]), 'assets/sub/a.md': '# A\n', 'top.md': '# Top\n' });
    const probed = await probeFileTree(root, 'assets', [], PARSERS);
    assert.deepEqual(probed.dirs, ['sub']);
    assert.deepEqual(Object.keys(probed.files).sort(), ['logo.bin', 'sub/a.md']);
    assert.deepEqual(probed.files['logo.bin'], { path: 'logo.bin', dir: '', name: 'logo.bin', bytes: 4, sha256: createHash('sha256').update(Buffer.from([0xff, 0xfe, 0x00, 0x01])).digest('hex') });
    assert.equal(probed.files['sub/a.md']!.title, 'A');
  });

  it('gives an empty tree for a missing start, and refuses a start outside the root or an unknown parser', async () => {
    const root = await tree({ 'a.txt': 'a\n' });
    assert.deepEqual(await probeFileTree(root, 'gone', [], {}), { dirs: [], files: {}, other: [] });
    await assert.rejects(probeFileTree(root, '../', [], {}), (error: unknown) => error instanceof FactoryError && error.code === 'definition_invalid');
    await assert.rejects(probeFileTree(root, '.', [], { '*.txt': 'no-such-format' }), (error: unknown) => error instanceof FactoryError && error.code === 'definition_invalid' && /no-such-format/.test(error.message));
  });

  it('gives equal probes of an untouched tree and a different one after a change', async () => {
    const root = await tree({ 'docs/a.md': '# A\nstatus: open\n', 'x.env': 'K=v\n', 'd.json': '[1]' });
    const first = canonicalJson(await probeFileTree(root, '.', [], PARSERS));
    assert.equal(canonicalJson(await probeFileTree(root, '.', [], PARSERS)), first);
    await writeFile(join(root, 'x.env'), 'K=w\n');
    assert.notEqual(canonicalJson(await probeFileTree(root, '.', [], PARSERS)), first);
  });
});
