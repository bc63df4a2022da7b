// Owns the `worlds` commands: the catalog of tool worlds, each with its tools
// and the lanes that draw tasks from it, and one world in detail (`worlds
// check`, the conformance suite, is its own file).

import type { Command } from 'commander';
import { relative } from 'node:path';
import { canonicalJson } from '../core/canonical-json.js';
import { errorMessage } from '../core/errors.js';
import { listLaneFiles, loadLane } from '../lanes/lane-loader.js';
import { toMcpTool } from '../world/mcp-server-binding.js';
import { type AnyWorld, isServerWorld } from '../world/server-world.js';
import { definitionFiles, getWorld, worldNames } from '../world/world-registry.js';
import { type Streams, writeJson } from './output.js';
import { registerWorldsCheck } from './worlds-check-command.js';
import { registerWorldsInit } from './worlds-init-command.js';

interface WorldRow {
  name: string;
  version: string;
  /** scripted: our own world in memory; server: a pinned third-party MCP server run over stdio on a seeded sandbox. */
  kind: 'scripted' | 'server';
  /** Server worlds: the npm package and exact version that is run. */
  package?: string;
  /** A server world written as data: its definition file. */
  definition?: string;
  /** A definition file that does not load: why (the world cannot be used until it is fixed). */
  problem?: string;
  description: string;
  tools: string[];
  lanes: string[];
  /** Distinct task ids across the lanes on this world. */
  tasks: number;
}

/** Which valid lanes use each world, and how many distinct tasks they hold. */
export function worldRows(): WorldRow[] {
  const lanes = listLaneFiles().flatMap((path) => {
    try {
      return [loadLane(path)];
    } catch {
      return [];
    }
  });
  const files = definitionFiles();
  return worldNames().map((name): WorldRow => {
    const definition = files.has(name) ? relative(process.cwd(), files.get(name)!) : undefined;
    let world: AnyWorld;
    try {
      world = getWorld(name);
    } catch (error) {
      return { name, version: '?', kind: 'server', definition: definition!, problem: errorMessage(error), description: '(does not load)', tools: [], lanes: [], tasks: 0 };
    }
    const using = lanes.filter((lane) => lane.document.world.name === name);
    const tasks = new Set(using.flatMap((lane) => lane.document.tasks.map((task) => task.id)));
    return {
      name,
      version: world.version,
      kind: isServerWorld(world) ? 'server' : 'scripted',
      ...(isServerWorld(world) ? { package: `${world.package.name}@${world.package.version}` } : {}),
      ...(definition ? { definition } : {}),
      description: world.description,
      tools: world.tools.map((tool) => tool.name),
      lanes: using.map((lane) => lane.name),
      tasks: tasks.size,
    };
  });
}

export function registerWorlds(program: Command, streams: Streams, setExit: (status: number) => void): void {
  const worlds = program
    .command('worlds')
    .summary('list the tool worlds, show or check one, or write one for an MCP server package')
    .description('The tool worlds the factory can serve: scripted worlds of our own, and real MCP servers run on seeded sandboxes, built in or defined by a file in worlds/.');

  worlds
    .command('list')
    .description('One row per world: name, version, tools, the lanes that use it and their distinct tasks.')
    .option('--json', 'print the rows as JSON')
    .action((flags: { json?: boolean }) => {
      const rows = worldRows();
      if (flags.json) return writeJson(streams, rows);
      const width = Math.max(9, ...rows.map((row) => row.name.length));
      const lines = rows.map(
        (row) =>
          `${row.name.padEnd(width)} ${row.version.padEnd(6)} ${String(row.tools.length).padStart(2)} tools  ${String(row.tasks).padStart(2)} tasks  ${row.description}` +
          (row.package ? `\n${' '.repeat(width + 8)}server: ${row.package} over stdio, on a fresh seeded sandbox` : '') +
          (row.definition ? `\n${' '.repeat(width + 8)}defined in ${row.definition}` : '') +
          (row.problem ? `\n${' '.repeat(width + 8)}does not load: ${row.problem}` : '') +
          `\n${' '.repeat(width + 8)}tools: ${row.tools.join(', ')}\n${' '.repeat(width + 8)}lanes: ${row.lanes.join(', ') || 'none'}`,
      );
      const tasks = rows.reduce((sum, row) => sum + row.tasks, 0);
      const servers = rows.filter((row) => row.kind === 'server').length;
      streams.stdout.write(`${lines.join('\n')}\n${rows.length} worlds (${rows.length - servers} scripted, ${servers} real servers), ${tasks} distinct tasks\n`);
    });

  worlds
    .command('show')
    .description('One world in detail: every tool with its description, annotations and input schema, and the config a lane may give.')
    .argument('<world>', 'a world name')
    .option('--json', 'print as JSON (the tools exactly as tools/list returns them)')
    .action((name: string, flags: { json?: boolean }) => {
      const world = getWorld(name);
      const tools = world.tools.map(toMcpTool);
      if (flags.json) {
        const server = isServerWorld(world) ? { kind: 'server', package: `${world.package.name}@${world.package.version}`, shown_root: world.shownRoot } : { kind: 'scripted' };
        return writeJson(streams, { name: world.name, version: world.version, ...server, description: world.description, config_schema: world.configSchema, tools });
      }
      const out = [`world   ${world.name} ${world.version}`, `about   ${world.description}`];
      if (isServerWorld(world)) {
        out.push(`server  ${world.package.name}@${world.package.version} (node_modules/${world.package.name}/${world.package.entry}), over stdio, on a fresh sandbox shown as ${world.shownRoot}`);
        const definition = definitionFiles().get(world.name);
        if (definition) out.push(`defined ${relative(process.cwd(), definition)}`);
        if (world.notes) out.push(`why     ${world.notes}`);
      }
      out.push(`config  ${canonicalJson(world.configSchema)}`, `tools   ${tools.length}`);
      for (const tool of tools) {
        const hints = Object.entries(tool.annotations ?? {}).filter(([, value]) => value === true).map(([hint]) => hint.replace(/Hint$/, ''));
        out.push('', `  ${tool.name}${hints.length ? ` [${hints.join(', ')}]` : ''}`, `    ${tool.description}`, `    input  ${canonicalJson(tool.inputSchema)}`);
      }
      streams.stdout.write(out.join('\n') + '\n');
    });

  registerWorldsCheck(worlds, streams, setExit);
  registerWorldsInit(worlds, streams);
}
