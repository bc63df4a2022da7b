// Owns the `lanes` commands: list the lanes the factory can find, and show one
// lane in detail. A lane that does not validate is listed as invalid, not
// allowed to break the listing.

import type { Command } from 'commander';
import { basename } from 'node:path';
import { FactoryError, errorMessage } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import { listLaneFiles, loadLane } from '../lanes/lane-loader.js';
import { formatSeedRange } from '../lanes/seed-range.js';
import { getWorld } from '../world/world-registry.js';
import { type Streams, writeJson } from './output.js';

interface LaneRow {
  name: string;
  path: string;
  valid: boolean;
  world?: string;
  tasks?: number;
  seeds?: string;
  policy?: string;
  description?: string;
  problem?: string;
}

function laneRow(path: string): LaneRow {
  try {
    const lane = loadLane(path);
    return {
      name: lane.name,
      path,
      valid: true,
      world: lane.document.world.name,
      tasks: lane.document.tasks.length,
      seeds: formatSeedRange(lane.seeds),
      policy: lane.document.policy.kind,
      description: lane.document.description,
    };
  } catch (error) {
    const count = error instanceof FactoryError && error.problems.length > 0 ? ` (${error.problems.length} problems; run \`lanes show ${path}\`)` : '';
    return { name: basename(path, '.json'), path, valid: false, problem: `${errorMessage(error)}${count}` };
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n') + '\n';
}

export function describeLane(lane: Lane): object {
  const world = getWorld(lane.document.world.name);
  return {
    name: lane.name,
    path: lane.path,
    sha256: lane.sha256,
    description: lane.document.description,
    produced_at: lane.document.produced_at,
    world: { name: world.name, version: world.version, config: lane.document.world.config ?? {}, tools: world.tools.map((tool) => tool.name) },
    policy: { kind: lane.document.policy.kind, variants: lane.variants },
    seeds: formatSeedRange(lane.seeds),
    limits: lane.limits,
    tasks: lane.document.tasks.map((task) => ({
      id: task.id,
      title: task.title,
      tags: task.tags ?? [],
      params: Object.keys(task.params ?? {}),
      user: task.user,
      solution: task.solution.map((step) => ('call' in step ? step.call : 'answer')),
      predicates: task.predicates.map((predicate) => predicate.id),
    })),
  };
}

export function registerLanes(program: Command, streams: Streams): void {
  const lanes = program.command('lanes').summary('list lanes, or show one').description('Inspect the lanes the factory can find: lanes/ under the working directory, then the built-in lanes.');

  lanes
    .command('list')
    .description('One row per lane: name, world, task count, seed range, policy, description. Invalid lanes are listed with their problem.')
    .option('--json', 'print the rows as JSON')
    .action((flags: { json?: boolean }) => {
      const rows = listLaneFiles().map(laneRow);
      if (flags.json) return writeJson(streams, rows);
      if (rows.length === 0) {
        streams.stdout.write('no lanes found: add lanes/<name>.json (see README: "Adding a lane")\n');
        return;
      }
      streams.stdout.write(
        table([
          ['NAME', 'WORLD', 'TASKS', 'SEEDS', 'POLICY', 'DESCRIPTION'],
          ...rows.map((row) =>
            row.valid
              ? [row.name, row.world!, String(row.tasks), row.seeds!, row.policy!, clip(row.description!, 70)]
              : [row.name, '-', '-', '-', '-', `INVALID: ${row.problem}`],
          ),
        ]),
      );
    });

  lanes
    .command('show')
    .description('Everything about one lane: file, hash, world and tools, policy variants, seeds, limits, and each task (user message, solution steps, hidden predicate ids). A malformed lane prints every problem and exits 2.')
    .argument('<lane>', 'a lane name or path')
    .option('--json', 'print as JSON')
    .action((reference: string, flags: { json?: boolean }) => {
      const lane = loadLane(reference);
      const described = describeLane(lane) as ReturnType<typeof describeLane> & Record<string, any>;
      if (flags.json) return writeJson(streams, described);
      const out: string[] = [
        `lane        ${described.name}`,
        `file        ${described.path}`,
        `sha256      ${described.sha256}`,
        `about       ${described.description}`,
        `world       ${described.world.name} ${described.world.version} (${described.world.tools.length} tools: ${described.world.tools.join(', ')})`,
        `policy      ${described.policy.kind}, variants ${Object.entries(described.policy.variants).map(([name, weight]) => `${name}=${weight}`).join(' ')}`,
        `seeds       ${described.seeds}`,
        `limits      ${Object.entries(described.limits).map(([name, value]) => `${name}=${value}`).join(' ')}`,
        `produced_at ${described.produced_at}`,
        `tasks       ${described.tasks.length}`,
      ];
      for (const task of described.tasks) {
        out.push('', `  ${task.id}: ${task.title}${task.tags.length ? ` [${task.tags.join(', ')}]` : ''}`);
        out.push(`    user        ${task.user}`);
        if (task.params.length) out.push(`    params      ${task.params.join(', ')}`);
        out.push(`    solution    ${task.solution.join(' -> ')}`);
        out.push(`    predicates  ${task.predicates.join(', ')} (hidden from the policy)`);
      }
      streams.stdout.write(out.join('\n') + '\n');
    });
}

function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}
