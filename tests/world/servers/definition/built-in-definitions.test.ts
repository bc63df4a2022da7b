// The three built-in server worlds written as definition files
// (worlds/<name>.json): each loads and is the world the registry serves under
// its name (its module's, with the kept-child reuse only code gives), the
// bare file run without the registry's code reaches the same seeded generator
// and probe through its escape-hatch modules, loaded by path from the
// factory's own file it is that same world (a copy elsewhere is refused), and
// a sandbox-path rule that declares path arguments resolves them as the model
// means them without a guard, while a plain one leaves them as sent.

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FactoryError } from '../../../../src/core/errors.js';
import { PACKAGE_ROOT } from '../../../../src/core/package-paths.js';
import { substream } from '../../../../src/core/random.js';
import { loadDefinition } from '../../../../src/world/servers/definition/definition-loader.js';
import { serverWorldFromDefinition } from '../../../../src/world/servers/definition/defined-server-world.js';
import { filesystemServerWorld } from '../../../../src/world/servers/filesystem/filesystem-world.js';
import { memoryServerWorld } from '../../../../src/world/servers/memory/memory-world.js';
import { createSandbox, removeSandbox, type Sandbox } from '../../../../src/world/servers/sandbox.js';
import { sqliteServerWorld } from '../../../../src/world/servers/sqlite/sqlite-world.js';
import type { ServerWorld } from '../../../../src/world/server-world.js';
import { definitionFiles, getServerWorld, loadWorldFile } from '../../../../src/world/world-registry.js';

const PINNED = '2026-12-01T00:00:00Z';
const sandboxes: Sandbox[] = [];
const scratch: string[] = [];

after(async () => {
  for (const sandbox of sandboxes) await removeSandbox(sandbox);
  for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
});

async function sandboxOf(world: ServerWorld): Promise<Sandbox> {
  const sandbox = await createSandbox(world.name, world.shownRoot.slice(1));
  sandboxes.push(sandbox);
  return sandbox;
}

async function seededSnapshot(world: ServerWorld, seed: number): Promise<string> {
  const sandbox = await sandboxOf(world);
  await world.populate(sandbox, substream(seed, 'world'), {}, { pinnedDate: PINNED });
  return JSON.stringify(await world.probe(sandbox));
}

describe('the built-in server worlds as definition files', () => {
  const worlds = [filesystemServerWorld, memoryServerWorld, sqliteServerWorld];

  it('are found in the factory\'s worlds/ and served by the registry as their modules\' worlds, reuse included', () => {
    const files = definitionFiles(PACKAGE_ROOT);
    for (const world of worlds) {
      assert.equal(files.get(world.name), join(PACKAGE_ROOT, 'worlds', `${world.name}.json`));
      assert.equal(getServerWorld(world.name), world, `${world.name} is the module's world, not the bare file's`);
    }
    assert.equal(typeof filesystemServerWorld.reuse?.repoint, 'function');
    assert.equal(typeof memoryServerWorld.reuse?.repoint, 'function');
    assert.equal(sqliteServerWorld.reuse, undefined);
    assert.deepEqual(sqliteServerWorld.guards?.map((guard) => guard.id), ['sql-no-other-files']);
  });

  it('load by path as the registered world from the factory\'s own file, and are refused as a copy elsewhere', () => {
    for (const world of worlds) assert.equal(loadWorldFile(join(PACKAGE_ROOT, 'worlds', `${world.name}.json`)), world);
    const directory = mkdtempSync(join(tmpdir(), 'built-in-definitions-test-'));
    scratch.push(directory);
    for (const file of ['memory-server.json', 'memory-server.catalog.json']) copyFileSync(join(PACKAGE_ROOT, 'worlds', file), join(directory, file));
    const definition = JSON.parse(readFileSync(join(directory, 'memory-server.json'), 'utf8'));
    definition.seed.module = definition.probe.module = join(PACKAGE_ROOT, 'src/world/servers/memory/memory-world.ts');
    writeFileSync(join(directory, 'memory-server.json'), JSON.stringify(definition));
    assert.throws(() => loadWorldFile(join(directory, 'memory-server.json')), (error: unknown) => error instanceof FactoryError && error.code === 'definition_invalid' && /built-in world/.test(error.message));
    assert.equal(getServerWorld('memory-server'), memoryServerWorld);
  });

  it('list one sandbox-path rule each, whether declared by name or with path arguments', async () => {
    for (const world of worlds) {
      const sandbox = await sandboxOf(world);
      const ids = world.normalisations(sandbox, PINNED).map((rule) => rule.id);
      assert.deepEqual(ids, world === memoryServerWorld ? ['sandbox-path'] : ['sandbox-path', 'js-date-string'], world.name);
    }
  });

  it('resolve declared path arguments as the model means them, and leave others as sent', async () => {
    const filesystem = await sandboxOf(filesystemServerWorld);
    const [declared] = filesystemServerWorld.normalisations(filesystem, PINNED);
    for (const argument of ['path', 'paths', 'source', 'destination']) assert.equal(declared!.down('../../etc/passwd', argument), `${filesystem.base}/etc/passwd`, argument);
    assert.equal(declared!.down('../../etc/passwd', 'content'), '../../etc/passwd');
    const memory = await sandboxOf(memoryServerWorld);
    const [plain] = memoryServerWorld.normalisations(memory, PINNED);
    assert.equal(plain!.down('../../etc/passwd', 'path'), '../../etc/passwd');
  });

  it('run from the bare file through their escape-hatch modules, giving the registered world\'s snapshot', async () => {
    for (const world of [filesystemServerWorld, memoryServerWorld]) {
      const bare = serverWorldFromDefinition(loadDefinition(join(PACKAGE_ROOT, 'worlds', `${world.name}.json`)));
      assert.equal(bare.reuse, undefined);
      const fromFile = await seededSnapshot(bare, 7);
      assert.equal(fromFile, await seededSnapshot(world, 7), world.name);
      assert.notEqual(fromFile, await seededSnapshot(world, 8), `${world.name}: another seed, another sandbox`);
    }
  });

  it('refuse a declared path argument that is not an argument name', () => {
    const directory = mkdtempSync(join(tmpdir(), 'built-in-definitions-test-'));
    scratch.push(directory);
    const definition = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'worlds', 'filesystem-server.json'), 'utf8'));
    definition.normalisations[0].path_arguments.push('../path');
    delete definition.seed.module;
    delete definition.probe.module;
    writeFileSync(join(directory, 'filesystem-server.json'), JSON.stringify(definition));
    copyFileSync(join(PACKAGE_ROOT, 'worlds', 'filesystem-server.catalog.json'), join(directory, 'filesystem-server.catalog.json'));
    assert.throws(
      () => loadDefinition(join(directory, 'filesystem-server.json')),
      (error: unknown) => error instanceof FactoryError && error.code === 'definition_invalid' && error.problems.some((problem) => problem.where.includes('/normalisations/0')),
    );
  });
});
