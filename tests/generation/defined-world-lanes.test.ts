// Every lane on a server world written as data alone (the factory's own
// worlds/; the three whose generators are code have tests of their own),
// as a user runs it through the CLI: the lane is sound, generating it gives
// records that name the pinned package and no sandbox path, replay verifies
// every record, the audit passes, and a second run gives the same bytes. A
// world added as a file with a lane is covered here with no new test code.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { listLaneFiles, loadLane } from '../../src/lanes/lane-loader.js';
import { loadDefinition } from '../../src/world/servers/definition/definition-loader.js';
import { definitionFiles, isWorldInCode } from '../../src/world/world-registry.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

/** One seed keeps the run short (git-mcp-server takes ~0.9 s to start, twice an episode); the whole lanes' figures are in docs/server-worlds.md. */
const SEEDS = '0..0';

const definitions = definitionFiles(REPO_ROOT);
const lanes = listLaneFiles(REPO_ROOT)
  .map((path) => loadLane(path, REPO_ROOT))
  // Synthesised lanes (lanes/synthesized/, hundreds of tasks) are proven by sample in lanes-check.test.ts.
  .filter((lane) => definitions.has(lane.document.world.name) && !isWorldInCode(lane.document.world.name) && !lane.document.tasks.some((task) => task.synthesized));

describe('lanes on server worlds written as data', () => {
  it('finds every such lane (the three new servers at least)', () => {
    const worlds = new Set(lanes.map((lane) => lane.document.world.name));
    for (const name of ['excel-workbook', 'git-server', 'obsidian-vault']) assert.ok(worlds.has(name), `no lane on ${name}`);
  });

  for (const lane of lanes) {
    const world = lane.document.world.name;
    it(`${lane.name} on ${world}: sound, generated, replayed, audited, byte-identical twice`, async () => {
      const { definition } = loadDefinition(definitions.get(world)!);
      assert.ok(lane.document.tasks.length >= 8, `${lane.name} has ${lane.document.tasks.length} tasks; a server lane holds at least 8`);
      const check = await runCliAsync(REPO_ROOT, 'lanes', 'check', lane.name, '--seeds', SEEDS);
      assert.equal(check.status, 0, check.stdout + check.stderr);
      assert.match(check.stdout, /all sound/);

      const root = temporaryDirectory(`ef-defined-${world}-`);
      const [first, second] = [join(root, 'first'), join(root, 'second')];
      const made = await runCliAsync(REPO_ROOT, 'generate', lane.name, '--seeds', SEEDS, '--out', first);
      assert.equal(made.status, 0, made.stderr);
      const text = readFileSync(join(first, 'episodes.jsonl'), 'utf8');
      const records = text.trim().split('\n').map((line) => JSON.parse(line));
      assert.ok(records.length > 0);
      const actor = records[0].provenance.actors.find((entry: { role: string }) => entry.role === 'world');
      const pinned = definition.launch.package;
      if (pinned) assert.equal(actor.package, `${pinned.name}@${pinned.version}`);
      assert.match(actor.integrity, /^sha512-|^command$/);
      assert.ok(!text.includes(`episode-factory-${world}-`), 'no sandbox path reaches a record');

      const replay = await runCliAsync(REPO_ROOT, 'replay', first);
      assert.equal(replay.status, 0, replay.stdout + replay.stderr);
      assert.match(replay.stdout, new RegExp(`${records.length} records, ${records.length} verified, 0 failed`));
      const audit = await runCliAsync(REPO_ROOT, 'audit', first);
      assert.equal(audit.status, 0, audit.stdout + audit.stderr);

      const again = await runCliAsync(REPO_ROOT, 'generate', lane.name, '--seeds', SEEDS, '--out', second);
      assert.equal(again.status, 0, again.stderr);
      assert.equal(readFileSync(join(second, 'episodes.jsonl'), 'utf8'), text, 'a second run gives the same bytes');
    });
  }
});
