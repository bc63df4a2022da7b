// A directory that is not a dataset of ours is never written into or cleared:
// a stranger's manifest.json, a file of the user's under traces/, a .partial/
// the factory did not make, an episodes.jsonl that is not ours. Each case is
// run through the real command and every file is compared before and after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { CLI, REPO_ROOT, temporaryDirectory, traceIndexIds } from '../helpers.js';

const TIMEOUT = 60_000;

function run(...args: string[]): { status: number | null; stderr: string } {
  const environment = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', env: environment, timeout: TIMEOUT, killSignal: 'SIGKILL' });
  return { status: result.status, stderr: result.stderr };
}

/** Every file below a directory with its sha256: what must not change. */
function contents(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (directory: string) => {
    for (const entry of readdirSync(directory)) {
      const path = join(directory, entry);
      if (statSync(path).isDirectory()) visit(path);
      else out[relative(root, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  visit(root);
  return out;
}

function userDirectory(files: Record<string, string>): string {
  const directory = temporaryDirectory('ef-hostile-out-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(directory, path, '..'), { recursive: true });
    writeFileSync(join(directory, path), text);
  }
  return directory;
}

describe('generate and merge never touch a directory that is not their dataset', { timeout: 5 * TIMEOUT }, () => {
  it('refuses --out holding a manifest.json that is not ours, and keeps traces/mine.txt', () => {
    const out = userDirectory({ 'manifest.json': '{"name": "my project", "files": []}\n', 'traces/mine.txt': 'my notes\n' });
    const before = contents(out);
    const result = run('generate', 'tool-world-v1', '--seeds', '0..0', '--out', out);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /is not a dataset of episode-factory: its manifest\.json is not one of ours .* fix: choose a new or empty directory/);
    assert.deepEqual(contents(out), before, 'nothing in the directory changed');
    assert.deepEqual(readdirSync(out).sort(), ['manifest.json', 'traces']);
  });

  it('refuses a manifest.json that is not JSON', () => {
    const out = userDirectory({ 'manifest.json': 'not json', 'episodes.jsonl': '' });
    const before = contents(out);
    const result = run('generate', 'tool-world-v1', '--seeds', '0..0', '--out', out);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /manifest\.json is not one of ours \(not valid JSON/);
    assert.deepEqual(contents(out), before);
  });

  it('refuses to replace traces/ of a real dataset that holds a file the dataset does not list', () => {
    const out = temporaryDirectory('ef-hostile-out-');
    assert.equal(run('generate', 'tool-world-v1', '--seeds', '0..0', '--out', out, '--quiet').status, 0);
    writeFileSync(join(out, 'traces', 'mine.txt'), 'my notes\n');
    const before = contents(out);
    const result = run('generate', 'tool-world-v1', '--seeds', '0..1', '--out', out);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /traces\/mine\.txt is not part of the dataset there.* fix: move it out of .*traces, or choose another --out; nothing was changed/);
    assert.deepEqual(contents(out), before, 'the dataset and the user file are as they were');
  });

  it('refuses an episodes.jsonl that is not ours when there is no manifest', () => {
    const out = userDirectory({ 'episodes.jsonl': '{"prompt": "hello", "completion": "world"}\n', 'notes.md': 'mine\n' });
    const before = contents(out);
    const result = run('generate', 'tool-world-v1', '--seeds', '0..0', '--out', out);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /episodes\.jsonl is not one of ours \(its first line is not a record of episode-factory\)/);
    assert.deepEqual(contents(out), before);
  });

  it('refuses a .partial/ directory the factory did not make', () => {
    const out = userDirectory({ '.partial/draft.txt': 'mine\n' });
    const before = contents(out);
    const result = run('generate', 'tool-world-v1', '--seeds', '0..0', '--out', out);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /\.partial is not a staging directory of episode-factory/);
    assert.deepEqual(contents(out), before);
  });

  it('still replaces a dataset of ours, and a committed sample without a manifest, keeping unrelated files beside them', () => {
    const out = temporaryDirectory('ef-hostile-out-');
    assert.equal(run('generate', 'tool-world-v1', '--seeds', '0..1', '--out', out, '--quiet').status, 0);
    writeFileSync(join(out, 'NOTES.md'), 'mine\n');
    assert.equal(run('generate', 'tool-world-v1', '--seeds', '0..0', '--out', out, '--quiet').status, 0);
    assert.equal(readFileSync(join(out, 'NOTES.md'), 'utf8'), 'mine\n');
    assert.equal(traceIndexIds(out).length, 5, 'the earlier run\'s traces are replaced (and nothing else is left under traces/)');

    const sample = userDirectory({
      'episodes.jsonl': readFileSync(join(REPO_ROOT, 'datasets', 'tool-world-v1', 'episodes.jsonl'), 'utf8'),
      'rejected.jsonl': '',
    });
    assert.equal(run('generate', 'tool-world-v1', '--seeds', '0..0', '--out', sample, '--quiet').status, 0);
  });

  it('merge refuses an --out holding a manifest.json that is not ours', () => {
    const shards = [0, 1].map((index) => {
      const directory = temporaryDirectory('ef-hostile-shard-');
      assert.equal(run('generate', 'tool-world-v1', '--seeds', '0..1', '--shard', `${index}/2`, '--out', directory, '--quiet').status, 0);
      return directory;
    });
    const out = userDirectory({ 'manifest.json': '{"mine": true}\n', 'traces/mine.txt': 'my notes\n' });
    const before = contents(out);
    const result = run('merge', ...shards, '--out', out);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /is not a dataset of episode-factory/);
    assert.deepEqual(contents(out), before);
  });
});
