// A lane on a real third-party server, as a user runs it: generate
// filesystem-server-v1 through the CLI (one kept child re-pointed at each
// episode's sandbox), replay it byte for byte, audit it, get the same bytes
// again with a fresh child per connection, leave nothing behind in TMPDIR,
// and catch a tampered tool result or a tampered sandbox file (the seeded
// generator writing one different byte) at replay.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { replayRecord } from '../../src/verify/replay.js';
import { filesystemServerWorld } from '../../src/world/servers/filesystem/filesystem-world.js';
import { registerWorld } from '../../src/world/world-registry.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

const LANE = 'filesystem-server-v1';

describe('a lane on the real server-filesystem', () => {
  const root = temporaryDirectory('ef-server-lane-');
  const first = join(root, 'first');
  const second = join(root, 'second');
  let generated: { status: number | null; stdout: string; stderr: string } = { status: -1, stdout: '', stderr: '' };

  const firstTmp = temporaryDirectory('ef-server-tmp-');

  /** Runs the CLI with these variables set (TMPDIR: where sandboxes and the pool's directory go). */
  async function withEnvironment<T>(variables: Record<string, string>, run: () => Promise<T>): Promise<T> {
    const saved = Object.fromEntries(Object.keys(variables).map((key) => [key, process.env[key]]));
    Object.assign(process.env, variables);
    try {
      return await run();
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  }

  before(async () => {
    generated = await withEnvironment({ TMPDIR: firstTmp }, () => runCliAsync(REPO_ROOT, 'generate', LANE, '--seeds', '0..1', '--out', first));
  });

  it('generates records that name the real package and replay byte for byte', async () => {
    assert.equal(generated.status, 0, generated.stderr);
    const lines = readFileSync(join(first, 'episodes.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 18);
    const record = JSON.parse(lines[0]!);
    const world = record.provenance.actors.find((actor: any) => actor.role === 'world');
    assert.equal(world.package, '@modelcontextprotocol/server-filesystem@2026.8.31');
    assert.match(world.integrity, /^sha512-/);
    assert.equal(world.transport, 'stdio');
    assert.deepEqual(record.recovery.server_faults, []);
    assert.equal(record.tools.length, 14, 'the real catalog');
    assert.ok(!lines.some((line) => line.includes('episode-factory-filesystem-server-')), 'no sandbox path reaches a record');
    const replay = await runCliAsync(REPO_ROOT, 'replay', first);
    assert.equal(replay.status, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /18 records, 18 verified, 0 failed/);
    const audit = await runCliAsync(REPO_ROOT, 'audit', first);
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
    assert.match(audit.stdout, /provenance ok/);
  });

  it('leaves nothing in TMPDIR: every sandbox and the kept child\'s directory are removed', () => {
    assert.equal(generated.status, 0, generated.stderr);
    assert.deepEqual(readdirSync(firstTmp).filter((name) => !name.startsWith('tsx-')), []);
  });

  it('gives the same bytes with a fresh child per connection instead of a kept one', async () => {
    const secondTmp = temporaryDirectory('ef-server-tmp-');
    const again = await withEnvironment({ EPISODE_FACTORY_FRESH_SERVERS: '1', TMPDIR: secondTmp }, () => runCliAsync(REPO_ROOT, 'generate', LANE, '--seeds', '0..1', '--out', second));
    assert.equal(again.status, 0, again.stderr);
    assert.equal(readFileSync(join(second, 'episodes.jsonl'), 'utf8'), readFileSync(join(first, 'episodes.jsonl'), 'utf8'));
    assert.deepEqual(readdirSync(secondTmp).filter((name) => !name.startsWith('tsx-')), []);
  });

  it('catches one tampered tool result of the real server', async () => {
    const tampered = temporaryDirectory('ef-server-tamper-');
    const lines = readFileSync(join(first, 'episodes.jsonl'), 'utf8').trim().split('\n');
    const index = lines.findIndex((line) => line.includes('"name":"read_text_file"') && line.includes('MAX_RETRIES='));
    assert.ok(index >= 0);
    lines[index] = lines[index]!.replace(/MAX_RETRIES=([0-9]+)/, (_, value: string) => `MAX_RETRIES=${Number(value) + 1}`);
    for (const name of readdirSync(first)) if (name === 'manifest.json') writeFileSync(join(tampered, name), readFileSync(join(first, name)));
    writeFileSync(join(tampered, 'episodes.jsonl'), lines.join('\n') + '\n');
    const replay = await runCliAsync(REPO_ROOT, 'replay', tampered, '--json');
    assert.equal(replay.status, 1, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /tool result of [^ ]+ differs at \/messages\/[0-9]+\/content/);
  });

  describe('a tampered sandbox', () => {
    after(() => registerWorld(filesystemServerWorld));

    it('is caught: the generator writing one different byte fails replay with the diff', async () => {
      const lane = loadLane(LANE);
      const record = JSON.parse(readFileSync(join(first, 'episodes.jsonl'), 'utf8').split('\n')[0]!);
      assert.equal((await replayRecord(record, lane)).ok, true);
      registerWorld({
        ...filesystemServerWorld,
        async populate(sandbox, random, config) {
          await filesystemServerWorld.populate(sandbox, random, config, { pinnedDate: '2026-12-01T00:00:00Z' });
          const path = join(sandbox.root, 'notes', 'todo.txt');
          writeFileSync(path, readFileSync(path, 'utf8').replace('- ', '* '));
        },
      });
      const verdict = await replayRecord(record, lane);
      assert.equal(verdict.ok, false);
      assert.ok(verdict.problems.some((problem) => /snapshot_sha256/.test(problem)), verdict.problems.join('\n'));
    });
  });
});

describe('lanes on the real server-memory and mcp-sqlite', () => {
  for (const [lane, count, kept] of [
    ['memory-server-v1', 10, true],
    ['sqlite-server-v1', 8, false],
  ] as const) {
    it(`${lane}: generate, replay byte for byte, audit; ${kept ? 'a kept child and a fresh one give the same bytes' : 'a child per connection'}`, async () => {
      const root = temporaryDirectory('ef-server-lane-');
      const out = join(root, 'out');
      const generated = await runCliAsync(REPO_ROOT, 'generate', lane, '--seeds', '0..0', '--out', out);
      assert.equal(generated.status, 0, generated.stderr);
      const text = readFileSync(join(out, 'episodes.jsonl'), 'utf8');
      assert.equal(text.trim().split('\n').length, count);
      const world = JSON.parse(text.split('\n')[0]!).provenance.actors.find((actor: any) => actor.role === 'world');
      assert.match(world.package, lane.startsWith('memory') ? /^@modelcontextprotocol\/server-memory@2026\.8\.31$/ : /^mcp-sqlite@1\.0\.9$/);
      assert.match(world.integrity, /^sha512-/);
      const replay = await runCliAsync(REPO_ROOT, 'replay', out);
      assert.equal(replay.status, 0, replay.stdout + replay.stderr);
      assert.match(replay.stdout, new RegExp(`${count} records, ${count} verified, 0 failed`));
      const audit = await runCliAsync(REPO_ROOT, 'audit', out);
      assert.equal(audit.status, 0, audit.stdout + audit.stderr);
      if (kept) {
        process.env.EPISODE_FACTORY_FRESH_SERVERS = '1';
        try {
          const fresh = await runCliAsync(REPO_ROOT, 'generate', lane, '--seeds', '0..0', '--out', join(root, 'fresh'));
          assert.equal(fresh.status, 0, fresh.stderr);
        } finally {
          delete process.env.EPISODE_FACTORY_FRESH_SERVERS;
        }
        assert.equal(readFileSync(join(root, 'fresh', 'episodes.jsonl'), 'utf8'), text);
      }
    });
  }
});
