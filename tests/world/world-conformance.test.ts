// The world conformance suite over every registered world, one test per
// world, so a world added to the registry is checked with no new test code:
// every check passes, or is skipped for a reason that fits the world's kind
// (a scripted world has no sandbox and no child; a server world may skip only
// the replay, when no lane names it). And the suite can fail: a world whose
// snapshot counts its own probes, a catalog that is not what the server lists,
// and a server that obeys paths outside its sandbox each fail their check.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { checkWorldConformance, CHECK_IDS, type ConformanceReport } from '../../src/verify/world-conformance.js';
import { filesystemServerWorld } from '../../src/world/servers/filesystem/filesystem-world.js';
import { isServerWorld, type ServerWorld } from '../../src/world/server-world.js';
import type { ToolSpec, World } from '../../src/world/world-contract.js';
import { getWorld, worldNames } from '../../src/world/world-registry.js';

/** The checks a world of this kind may skip, and nothing else. */
const MAY_SKIP = { scripted: ['sandbox', 'cleanup'], server: ['replay'] } as const;

function summary(report: ConformanceReport): string {
  return report.checks.map((check) => `${check.status} ${check.id}: ${check.detail}`).join('\n');
}

function status(report: ConformanceReport, id: string): string | undefined {
  return report.checks.find((check) => check.id === id)?.status;
}

describe('every registered world conforms', () => {
  for (const name of worldNames()) {
    test(name, async () => {
      const world = getWorld(name);
      const report = await checkWorldConformance(world);
      assert.deepEqual(report.checks.map((check) => check.id), [...CHECK_IDS], 'every check ran');
      const kind = isServerWorld(world) ? 'server' : 'scripted';
      for (const check of report.checks) {
        if (check.status === 'skip') {
          assert.ok((MAY_SKIP[kind] as readonly string[]).includes(check.id), `${name}: a ${kind} world may not skip ${check.id} (${check.detail})\n${summary(report)}`);
          assert.ok(check.detail.length > 20, `${name}: the skip of ${check.id} says why`);
        } else {
          assert.equal(check.status, 'pass', `${name}: ${check.id} failed: ${check.detail}\n${summary(report)}`);
        }
      }
      assert.equal(report.passed, true);
    });
  }
});

/** A scripted world whose snapshot counts how often it was taken: two probes of the same untouched state differ. */
const countingWorld: World<{ token: string; probes: number }> = {
  name: 'counting-probe',
  version: '0.0.1',
  description: 'a world whose snapshot changes each time it is taken',
  tools: [{ name: 'token', description: 'The token.', inputSchema: { type: 'object', properties: {}, additionalProperties: false } }],
  configSchema: { type: 'object' },
  init: (random) => ({ token: random.hex(8), probes: 0 }),
  call: (state) => ({ ok: true, value: { token: state.token } }),
  snapshot: (state) => ({ token: state.token, probes: ++state.probes }),
};

const ESCAPING_TOOLS: ToolSpec[] = [
  { name: 'write_note', description: 'Writes a note at a path.', inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } },
  { name: 'read_note', description: 'Reads the note at a path.', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, annotations: { readOnlyHint: true } },
  { name: 'count', description: 'Adds one to the counter.', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'peek',
    description: 'The counter.',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] },
    annotations: { readOnlyHint: true },
  },
];

/** A server world on a server that writes wherever it is told (tests/fixtures/escaping-server.mjs), with no guard in front. */
const escapingWorld: ServerWorld = {
  kind: 'server',
  name: 'escaping-server',
  version: '0.0.1',
  description: 'a note store that obeys paths outside its sandbox',
  configSchema: { type: 'object' },
  tools: ESCAPING_TOOLS,
  package: { name: 'escaping', version: '0.0.1', entry: 'escaping-server.mjs' },
  shownRoot: '/sandbox',
  resolveEntry: () => fileURLToPath(new URL('../fixtures/escaping-server.mjs', import.meta.url)),
  launch: (sandbox) => ({ args: [sandbox.root] }),
  populate: async (sandbox, random) => {
    writeFileSync(join(sandbox.root, 'count.txt'), '0');
    writeFileSync(join(sandbox.root, 'seed.txt'), random.hex(16));
  },
  probe: async (sandbox) => Object.fromEntries(readdirSync(sandbox.root).sort().map((name) => [name, readFileSync(join(sandbox.root, name), 'utf8')])),
  normalisations: () => [],
};

describe('the suite can fail', () => {
  test('a snapshot that changes each time it is taken fails the probe check, and nothing else', async () => {
    const report = await checkWorldConformance(countingWorld, { lanes: [] });
    assert.equal(status(report, 'probe'), 'fail', summary(report));
    assert.match(report.checks.find((check) => check.id === 'probe')!.detail, /nobody touched differs from its initial one/);
    for (const id of ['seed', 'catalog', 'faults']) assert.equal(status(report, id), 'pass', `${id}\n${summary(report)}`);
    for (const id of ['sandbox', 'cleanup', 'replay']) assert.equal(status(report, id), 'skip', `${id}\n${summary(report)}`);
    assert.match(report.checks.find((check) => check.id === 'replay')!.detail, /no lane/);
    assert.equal(report.passed, false);
  });

  test('a server world whose declared catalog is not what the server lists fails the catalog check', async () => {
    const [first, ...rest] = filesystemServerWorld.tools;
    const drifted: ServerWorld = { ...filesystemServerWorld, tools: [{ ...first!, description: `${first!.description} (edited by hand)` }, ...rest] };
    const report = await checkWorldConformance(drifted, { lanes: [], only: ['catalog'] });
    assert.equal(report.checks.length, 1);
    assert.equal(status(report, 'catalog'), 'fail');
    assert.match(report.checks[0]!.detail, new RegExp(`^${first!.name}: the live description differs`));
  });

  test('a server that obeys paths outside its sandbox fails the sandbox check, and passes the rest', async () => {
    const report = await checkWorldConformance(escapingWorld, { lanes: [] });
    const sandbox = report.checks.find((check) => check.id === 'sandbox')!;
    assert.equal(sandbox.status, 'fail', summary(report));
    assert.match(sandbox.detail, /outside the sandbox root changed: .*conformance-outside-probe/);
    for (const id of ['seed', 'probe', 'catalog', 'cleanup', 'faults']) assert.equal(status(report, id), 'pass', `${id}\n${summary(report)}`);
    assert.equal(status(report, 'replay'), 'skip');
    assert.equal(report.passed, false);
  });
});
