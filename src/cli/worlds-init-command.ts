// Owns `worlds init`: a pinned package already in node_modules turned into the
// first draft of a server world: its live tools/list written as the catalog,
// a definition that validates written beside it, and a plain account of what
// was guessed and what is left for a person to fill in.

import type { Command } from 'commander';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { SCHEMAS_DIR } from '../core/package-paths.js';
import { catalogText, definitionSkeleton, NETWORK_REASON, type SkeletonGuesses, worldNameOf } from '../world/servers/definition/definition-skeleton.js';
import { loadDefinition } from '../world/servers/definition/definition-loader.js';
import { listLiveCatalog, type LiveCatalog } from '../world/servers/definition/live-catalog.js';
import { findPackage, type FoundPackage, parsePackageSpec } from '../world/servers/definition/package-entry.js';
import { definitionFiles, worldNames } from '../world/world-registry.js';
import { type Streams, writeJson } from './output.js';

interface InitFlags {
  package: string;
  out?: string;
  name?: string;
  force?: boolean;
  json?: boolean;
}

interface InitReport {
  world: string;
  package: string;
  package_directory: string;
  entry: string;
  entry_note?: string;
  /** The launch arguments that worked, and every attempt. */
  args: string[];
  attempts: LiveCatalog['attempts'];
  server_info?: { name: string; version: string };
  definition: string;
  catalog: string;
  tools: string[];
  guessed: {
    paths_under_root: SkeletonGuesses['pathArguments'];
    deny_tools: { tools: string[]; reason: string };
  };
  to_fill_in: { what: string; why: string }[];
  check: string;
}

const HELP = `
What it does:
  Finds <name>@<version> in node_modules (the working directory's first, then
  the factory's own; it installs nothing: a missing package or another version
  is exit 2 naming \`npm install --save-exact <name>@<version>\`), reads its
  package.json \`bin\` (several: the one named like the package, else the
  first) or \`main\`, and starts it with this Node in a fresh sandbox with an
  empty root: with no arguments first, then, if it exits, does not answer
  initialize within 15 s or prints a usage line on stderr, with the root as
  its only argument (launch.args ["{root}"]). It lists the
  tools (every page), kills the server and writes, beside --out:
    <name>.catalog.json  the exact tools/list tools (the pinned catalog)
    <name>.json          a definition that validates: launch as found, sandbox
                         /sandbox, a seed with one example file, a file-tree
                         probe named "files", normalisations ["sandbox-path"],
                         guessed guards (paths-under-root over path-like
                         arguments; deny-tools for tools named like the network)
  Then it says what it guessed and what only you can say: the seed, views for
  predicates, volatile values, normalisations for what varies between runs
  (run \`episode-factory worlds check <file>\`), and read-only tools without a
  readOnlyHint. An existing --out is refused unless --force.

Example:
  episode-factory worlds init --package @cyanheads/git-mcp-server@2.15.3 --out worlds/git-mcp-server.json`;

export function registerWorldsInit(worlds: Command, streams: Streams): void {
  worlds
    .command('init')
    .description('Write a server world skeleton for an installed MCP server package: its live catalog and a definition that validates, with what was guessed and what to fill in.')
    .requiredOption('--package <name@version>', 'the npm package and its exact version, already installed')
    .option('--out <file>', 'the definition to write (default: worlds/<name>.json); the catalog goes beside it')
    .option('--name <world>', 'the world name (default: from the package name, e.g. git-mcp-server)')
    .option('--force', 'overwrite an existing definition and catalog')
    .option('--json', 'print what was written, guessed and left to fill in as JSON')
    .addHelpText('after', HELP)
    .action(async (flags: InitFlags) => {
      const report = await initWorld(flags);
      if (flags.json) return writeJson(streams, report);
      streams.stdout.write(describe(report));
    });
}

async function initWorld(flags: InitFlags): Promise<InitReport> {
  const spec = parsePackageSpec(flags.package);
  const name = flags.name ?? worldNameOf(spec.name);
  if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new FactoryError('usage', `--name ${JSON.stringify(name)} is not a world name`, { fix: 'use lowercase letters, digits and -, starting with a letter' });
  const out = resolve(flags.out ?? join('worlds', `${name}.json`));
  if (basename(out) !== `${name}.json`) {
    throw new FactoryError('usage', `--out ${flags.out} must be named ${name}.json: lanes find a world by its file name`, { fix: `use --out ${join(dirname(flags.out!), `${name}.json`)}, or --name ${basename(out).replace(/\.json$/, '')}` });
  }
  const catalogPath = join(dirname(out), `${name}.catalog.json`);
  if (worldNames().includes(name) && !definitionFiles().has(name)) {
    throw new FactoryError('usage', `"${name}" is a built-in world`, { fix: 'give the new world another name with --name' });
  }
  for (const path of [out, catalogPath]) {
    if (existsSync(path) && !flags.force) throw new FactoryError('usage', `${shown(path)} already exists`, { fix: 'pass --force to overwrite it, or choose another --out' });
  }

  const found = findPackage(spec.name, spec.version);
  const live = await listLiveCatalog(found, name);
  const schema = join(SCHEMAS_DIR, 'server-world.v1.schema.json');
  const { definition, guesses } = definitionSkeleton({
    name,
    package: { name: found.name, version: found.version, entry: found.entry, description: found.description },
    args: live.args,
    tools: live.tools,
    catalogFile: basename(catalogPath),
    ...(existsSync(schema) ? { schemaPath: relative(dirname(out), schema) } : {}),
  });

  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(catalogPath, catalogText(live.tools));
  writeFileSync(out, JSON.stringify(definition, null, 1) + '\n');
  try {
    loadDefinition(out);
  } catch (error) {
    // A skeleton that does not load is our bug; leave nothing half-made behind.
    rmSync(out, { force: true });
    rmSync(catalogPath, { force: true });
    throw error;
  }
  return reportOf(name, found, live, guesses, out, catalogPath);
}

function shown(path: string): string {
  const here = relative(process.cwd(), path);
  return here.startsWith('..') ? path : here;
}

function reportOf(name: string, found: FoundPackage, live: LiveCatalog, guesses: SkeletonGuesses, out: string, catalogPath: string): InitReport {
  const check = `episode-factory worlds check ${shown(out)}`;
  const toFillIn = [
    { what: 'seed', why: 'what the sandbox starts with: vocabularies and draws from the seed, files, commands (now one example README.md)' },
    { what: 'probe.views', why: 'the parts of the snapshot predicates read, e.g. the files a task is about, keyed by id' },
    { what: 'probe.volatile', why: 'values that differ between runs (hashes, ids, times) that predicates must not pin' },
    { what: 'normalisations', why: `answers that vary between runs of the same seed (dates, temporary names): run \`${check}\` and add a rule for each difference it shows` },
  ];
  if (guesses.readingWithoutHint.length > 0) {
    toFillIn.push({ what: 'readOnlyHint', why: `these tools read by their names but say nothing about readOnlyHint, so nothing treats them as read-only (a tool-call probe needs one): ${guesses.readingWithoutHint.join(', ')}` });
  }
  return {
    world: name,
    package: `${found.name}@${found.version}`,
    package_directory: found.directory,
    entry: found.entry,
    ...(found.entryNote ? { entry_note: found.entryNote } : {}),
    args: live.args,
    attempts: live.attempts,
    ...(live.serverInfo ? { server_info: live.serverInfo } : {}),
    definition: shown(out),
    catalog: shown(catalogPath),
    tools: live.tools.map((tool) => tool.name),
    guessed: { paths_under_root: guesses.pathArguments, deny_tools: { tools: guesses.deniedTools, reason: NETWORK_REASON } },
    to_fill_in: toFillIn,
    check,
  };
}

function describe(report: InitReport): string {
  const started = report.args.length === 0 ? 'with no arguments' : `with the sandbox root as its only argument (${report.args.join(' ')}), after no arguments did not do`;
  const lines = [
    `worlds init ${report.package} -> ${report.definition}`,
    `  package   ${report.package_directory} (entry ${report.entry})`,
    ...(report.entry_note ? [`  entry     ${report.entry_note}`] : []),
    `  started   ${started}${report.server_info ? `: ${report.server_info.name} ${report.server_info.version}` : ''}`,
    ...report.attempts.filter((attempt) => attempt.outcome !== 'answered initialize and tools/list').map((attempt) => `            [${attempt.args.join(' ')}] ${attempt.outcome}`),
    `  catalog   ${report.tools.length} tools -> ${report.catalog}`,
    '',
    'Guessed from names (check each, then edit the definition):',
  ];
  const { paths_under_root: paths, deny_tools: deny } = report.guessed;
  if (paths.length === 0) lines.push('  paths-under-root  none: no argument is named like a path');
  for (const entry of paths) lines.push(`  paths-under-root  ${entry.argument}  (${entry.tools.join(', ')})`);
  lines.push(deny.tools.length === 0 ? '  deny-tools        none: no tool is named like the network' : `  deny-tools        ${deny.tools.join(', ')}  ("${deny.reason}")`);
  lines.push('', 'Not guessed (only you can say):');
  for (const item of report.to_fill_in) lines.push(`  ${item.what.padEnd(16)}  ${item.why}`);
  lines.push('', `Then: ${report.check}`);
  return lines.join('\n') + '\n';
}
