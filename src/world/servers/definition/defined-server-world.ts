// Owns the server world a definition file describes: one generic ServerWorld
// whose launch line, sandbox, seeded generator, probe, normalisations and
// guards are the definition's data, with the escape hatch (a module of the
// user's, or a built-in world's own functions) where data cannot say it.
// Production, replay and the checks treat it like any other server world.

import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import { FactoryError } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { catalogSpecs } from '../listed-catalog.js';
import type { PopulateContext, ServerPackage, ServerProgram, ServerWorld } from '../../server-world.js';
import { type Sandbox, sandboxHome } from '../sandbox.js';
import { installedPackage } from '../server-package.js';
import type { LoadedDefinition } from './definition-loader.js';
import { definedGuards, definedNormalisations, isSandboxPathRule } from './definition-rules.js';
import { moduleExport, populateTwice, viewsTwice, type PopulateFunction, type ViewsFunction } from './escape-hatch.js';
import { runProbe } from './probe-program.js';
import { callProbeTool } from './probe-tool-call.js';
import { runSeedProgram } from './seed-program.js';
import { swappedLinkReuse } from './swapped-link.js';
import type { SandboxContext } from './server-world-definition.js';

/** A built-in world's own code where its definition's data cannot say it (the same contract as an escape-hatch module). */
export interface EscapeHatchCode {
  populate?: PopulateFunction;
  views?: ViewsFunction;
}

/** Where sandboxes go for servers that refuse TMPDIR (obsidian-mcp refuses /tmp and any path component starting with a dot). */
export function homeSandboxParent(): string {
  return join(homedir(), 'episode-factory-sandboxes');
}

function onPath(program: string): string | undefined {
  if (program.includes('/')) return program;
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  return undefined;
}

/** `{root}`, `{home}`, `{link}` (a kept child's), `{pinned_date}` and `{pinned_epoch}` in a launch line. */
function placeholders(text: string, sandbox: { root: string; home: string; link?: string }, pinnedDate: string): string {
  return text
    .replaceAll('{root}', sandbox.root)
    .replaceAll('{link}', sandbox.link ?? sandbox.root)
    .replaceAll('{home}', sandbox.home)
    .replaceAll('{pinned_date}', pinnedDate)
    .replaceAll('{pinned_epoch}', String(Math.floor(new Date(pinnedDate).getTime() / 1000)));
}

export function serverWorldFromDefinition(loaded: LoadedDefinition, code: EscapeHatchCode = {}): ServerWorld {
  const { definition, directory, catalog } = loaded;
  const where = loaded.path;
  const launch = definition.launch;
  const shownRoot = definition.sandbox.shown_as;
  const pkg: ServerPackage = launch.package
    ? { name: launch.package.name, version: launch.package.version, entry: launch.package.entry ?? '' }
    : { name: basename(launch.command![0]!), version: 'command', entry: '' };
  const guardDefinitions = definition.guards ?? [];
  const guards = definedGuards(guardDefinitions, shownRoot);
  const declared = definition.normalisations ?? [];
  // The sandbox's path never reaches a record, declared or not.
  const normalisationRules = declared.some(isSandboxPathRule) ? declared : ['sandbox-path' as const, ...declared];
  /** What each live sandbox was populated with: the probe's command and tool-call parts need the pinned date too. */
  const contexts = new WeakMap<Sandbox, PopulateContext>();
  let required = false;

  const requireBinaries = () => {
    if (required) return;
    const missing = (launch.requires ?? []).filter((program) => onPath(program) === undefined);
    if (missing.length > 0) {
      throw new FactoryError('server_requires', `the ${definition.name} world needs ${missing.join(', ')} on PATH, which ${missing.length === 1 ? 'is' : 'are'} not installed here`, {
        fix: `install ${missing.join(' and ')} (e.g. \`apt-get install ${missing.join(' ')}\`), then run again`,
      });
    }
    required = true;
  };

  const program = (): ServerProgram => {
    if (launch.command) {
      const found = onPath(launch.command[0]!);
      if (!found) throw new FactoryError('server_requires', `the ${definition.name} world runs ${launch.command[0]}, which is not on PATH`, { fix: `install ${launch.command[0]}, or give its absolute path in /launch/command of ${where}` });
      return { command: found, args: launch.command.slice(1), integrity: 'command' };
    }
    const installed = installedPackage(pkg);
    const platform = `${process.platform}-${process.arch}`;
    const binary = launch.package!.binary![platform];
    if (!binary) {
      throw new FactoryError('server_package', `${pkg.name}@${pkg.version} ships no server binary for ${platform} that ${where} names`, { fix: `add /launch/package/binary/${platform} to the definition (it names: ${Object.keys(launch.package!.binary!).join(', ')})` });
    }
    return { command: join(installed.entry, binary), args: [], integrity: installed.integrity };
  };

  const sandboxContext = (sandbox: Sandbox, pinnedDate: string): SandboxContext => ({ root: sandbox.root, home: sandboxHome(sandbox), pinnedDate, definitionDirectory: directory });

  const world: ServerWorld = {
    kind: 'server',
    name: definition.name,
    version: definition.version,
    description: definition.description,
    configSchema: definition.config_schema ?? { type: 'object', additionalProperties: false, properties: {} },
    tools: catalogSpecs(catalog, definition.claims ?? {}),
    package: pkg,
    shownRoot,
    ...(definition.notes ? { notes: definition.notes } : {}),
    ...(definition.sandbox.parent === 'home-cache' ? { sandboxParent: homeSandboxParent } : {}),
    ...(launch.command || launch.package?.binary ? { program } : {}),
    ...(guards.length > 0 ? { guards } : {}),
    ...(definition.probe.volatile?.length ? { volatile: definition.probe.volatile } : {}),
    preflight: requireBinaries,
    launch(sandbox, context) {
      const at = { root: sandbox.root, home: sandboxHome(sandbox) };
      return {
        args: (launch.args ?? []).map((argument) => placeholders(argument, at, context.pinnedDate)),
        env: Object.fromEntries(Object.entries(launch.env ?? {}).map(([name, value]) => [name, placeholders(value, at, context.pinnedDate)])),
      };
    },
    async populate(sandbox, random, config, context) {
      requireBinaries();
      contexts.set(sandbox, context);
      const at = sandboxContext(sandbox, context.pinnedDate);
      await runSeedProgram(definition.seed, random, at, where);
      const populate = code.populate ?? (definition.seed.module ? await moduleExport<PopulateFunction>(directory, definition.seed.module, 'populate') : undefined);
      if (populate) await populateTwice(definition.name, populate, { random, root: sandbox.root, home: at.home, config, pinnedDate: context.pinnedDate }, sandbox.base);
    },
    async probe(sandbox): Promise<JsonValue> {
      const context = contexts.get(sandbox) ?? { pinnedDate: '1970-01-01T00:00:00Z' };
      const at = sandboxContext(sandbox, context.pinnedDate);
      const needsChild = definition.probe.parts.some((part) => part.kind === 'tool-call');
      const snapshot = await runProbe(definition.probe, needsChild ? { ...at, callTool: (tool: string, args: JsonObject) => callProbeTool(world, sandbox, context, tool, args) } : at, where);
      const views = code.views ?? (definition.probe.module ? await moduleExport<ViewsFunction>(directory, definition.probe.module, 'views') : undefined);
      if (!views) return snapshot;
      const added = await viewsTwice(definition.name, views, snapshot, sandbox.root);
      const clash = Object.keys(added).find((key) => key in snapshot);
      if (clash) throw new FactoryError('definition_invalid', `${definition.name}'s views module returns "${clash}", which a probe part already names`, { fix: 'give the view another name' });
      return { ...snapshot, ...added } as JsonObject;
    },
    normalisations: (sandbox, pinnedDate) => definedNormalisations(normalisationRules, guardDefinitions, sandbox, shownRoot, pinnedDate),
  };
  if (launch.keep?.kind === 'swapped-link') {
    const reuse = swappedLinkReuse(launch.keep, {
      name: definition.name,
      where,
      rootName: shownRoot.split('/').filter(Boolean).pop() ?? 'sandbox',
      args: launch.args ?? [],
      env: launch.env ?? {},
      placeholders,
      normalisations: world.normalisations,
    });
    return { ...world, reuse };
  }
  return world;
}
