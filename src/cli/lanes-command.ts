// Owns the `lanes` commands: list the lanes the factory can find, show one
// lane in detail, and check that lanes' hidden predicates are sound. A lane
// that does not validate is listed as invalid, not allowed to break the listing.

import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { clip } from '../core/clipped-text.js';
import { FactoryError, errorMessage } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import { listLaneFiles, loadLane, resolveLanePath } from '../lanes/lane-loader.js';
import { rewriteLane, writerSeed } from '../rewriting/lane-rewrite.js';
import { checkModel, MODEL_SPEC_EXAMPLES, parseModelSpec } from '../models/model-registry.js';
import { ModelWriter } from '../policy/model-writer.js';
import { parseCount } from './count-flag.js';
import { addModelServerFlags, modelServerOptions, type ModelServerFlags } from './model-server-flags.js';
import { isGrammar, phrasingsOf } from '../lanes/phrasing-grammar.js';
import { formatSeedRange, parseSeedRange } from '../lanes/seed-range.js';
import { checkLanesSoundness } from '../generation/soundness-pool.js';
import { defaultCheckSeeds, DEFAULT_CHECK_SEEDS, label, type TaskSoundness } from '../verify/lane-soundness.js';
import { getWorld } from '../world/world-registry.js';
import { formatTable, ProgressLine, type Streams, writeJson } from './output.js';
import { registerLanesSynthesize } from './lanes-synthesize-command.js';
import { shortPin } from '../models/model-pin.js';

interface LaneRow {
  name: string;
  path: string;
  valid: boolean;
  world?: string;
  tasks?: number;
  /** Task ids: the same task in two lanes of one world is one task. */
  task_ids?: string[];
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
      task_ids: lane.document.tasks.map((task) => task.id),
      seeds: formatSeedRange(lane.seeds),
      policy: lane.document.policy.kind,
      description: lane.document.description,
    };
  } catch (error) {
    const count = error instanceof FactoryError && error.problems.length > 0 ? ` (${error.problems.length} problems; run \`lanes show ${path}\`)` : '';
    return { name: basename(path, '.json'), path, valid: false, problem: `${errorMessage(error)}${count}` };
  }
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
      /** How many ways the message is said: 1 for a sentence, every phrasing of a grammar. */
      phrasings: phrasingsOf(task.user, lane.document.phrasing).length,
      ...(task.facts?.length ? { facts: task.facts.map((fact) => (fact.withheld ? `${fact.id} (withheld)` : fact.id)) } : {}),
      solution: task.solution.map((step) =>
        'call' in step ? step.call : 'parallel' in step ? `[${step.parallel.map((call) => call.call).join(' + ')}]` : 'ask' in step ? `ask ${step.ask}` : 'answer',
      ),
      predicates: task.predicates.map((predicate) => predicate.id),
      wrong: (task.wrong ?? []).map((wrong) => wrong.id),
      ...(task.synthesized ? { synthesized: task.synthesized } : {}),
    })),
  };
}

export function registerLanes(program: Command, streams: Streams, setExit: (status: number) => void): void {
  const lanes = program.command('lanes').summary('list lanes, or show one').description('Inspect the lanes the factory can find: lanes/ under the working directory, then the built-in lanes.');

  lanes
    .command('list')
    .description('One row per lane: name, world, task count, seed range, policy, description. Invalid lanes are listed with their problem.')
    .option('--json', 'print the rows as JSON')
    .action((flags: { json?: boolean }) => {
      const rows = listLaneFiles().map(laneRow);
      if (flags.json) return writeJson(streams, rows);
      if (rows.length === 0) {
        streams.stdout.write('no lanes found: add lanes/<name>.json (see docs/lanes-and-tasks.md, "Adding a task or a lane")\n');
        return;
      }
      const valid = rows.filter((row) => row.valid);
      const worlds = new Set(valid.map((row) => row.world));
      const tasks = new Set(valid.flatMap((row) => (row.task_ids ?? []).map((id) => `${row.world}/${id}`)));
      streams.stdout.write(
        formatTable([
          ['NAME', 'WORLD', 'TASKS', 'SEEDS', 'POLICY', 'DESCRIPTION'],
          ...rows.map((row) =>
            row.valid
              ? [row.name, row.world!, String(row.tasks), row.seeds!, row.policy!, clip(row.description!, 70)]
              : [row.name, '-', '-', '-', '-', `INVALID: ${row.problem}`],
          ),
        ]) + `${rows.length} lanes on ${worlds.size} worlds, ${tasks.size} distinct tasks${rows.length > valid.length ? `, ${rows.length - valid.length} invalid` : ''}\n`,
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
        out.push(
          isGrammar(task.user)
            ? `    user        ${task.phrasings} phrasings, e.g. ${phrasingsOf(task.user, lane.document.phrasing)[0]!.template}`
            : `    user        ${task.user}`,
        );
        if (task.params.length) out.push(`    params      ${task.params.join(', ')}`);
        if (task.facts) out.push(`    facts       ${task.facts.join(', ')} (the user simulator plays them)`);
        out.push(`    solution    ${task.solution.join(' -> ')}`);
        out.push(`    predicates  ${task.predicates.join(', ')} (hidden from the policy)`);
        if (task.wrong.length) out.push(`    wrong       ${task.wrong.join(', ')} (must fail; see lanes check)`);
        if (task.synthesized) out.push(`    made by     lanes synthesize: ${task.synthesized.by}${task.synthesized.sampler ? ` (${task.synthesized.sampler})` : ''}, draw ${task.synthesized.draw}, a ${task.synthesized.kind} task`);
      }
      streams.stdout.write(out.join('\n') + '\n');
    });

  addModelServerFlags(
    lanes
      .command('rewrite')
    .description(
      'Ask a local model (the writer) for new phrasings of each task\'s request, ahead of any run. What it returns is kept only if it ' +
        'has exactly the request\'s {{placeholders}}, no < or >, says something new, and the lane still passes its checks with it. ' +
        'The survivors go to <lane>.rewrites.json next to the lane, with the model\'s name and digest; a lane whose "rewrites" field ' +
        'names that file draws each message from its own phrasings and the cached ones alike, and every record of a rewritten task ' +
        'names the writer. Runs read the cache, never the model, so they stay deterministic. Rewriting again replaces the cache. ' +
        'Exits 0 when the cache was written, 2 for a bad lane or an unavailable model.',
    )
    .argument('<lane>', 'a lane name or path')
    .requiredOption('--model <model>', 'the writer: ollama:<model>, or openai:<model> (with --base-url)')
    .option('--count <n>', 'new phrasings to ask for, per task', '4')
    .option('--task <id...>', 'only these tasks')
    .option('--json', 'print the result as JSON'),
  )
    .addHelpText('after', '\nExample:\n  episode-factory lanes rewrite issues-v1 --model ollama:qwen2.5:7b --count 6\n  # then add  "rewrites": "issues-v1.rewrites.json"  to lanes/issues-v1.json, and run  episode-factory lanes check issues-v1')
    .action(async (reference: string, flags: ModelServerFlags & { model: string; count: string; task?: string[]; json?: boolean }) => {
      const spec = parseModelSpec(flags.model);
      if (!spec) throw new FactoryError('usage', `--model "${flags.model}" is not a model`, { fix: `use ${MODEL_SPEC_EXAMPLES}` });
      const serverOptions = modelServerOptions(flags, [spec]);
      const count = Number(flags.count);
      if (!Number.isInteger(count) || count < 1 || count > 50) throw new FactoryError('usage', `--count "${flags.count}" is not a whole number from 1 to 50`, { fix: 'pass e.g. --count 4' });
      const path = resolveLanePath(reference);
      const checked = await checkModel(spec, { ...serverOptions, flag: '--model' });
      const laneName = basename(path, '.json');
      const writer = new ModelWriter(checked, { seed: writerSeed(laneName), temperature: 0.8, maxTokens: 1024 });
      const progress = new ProgressLine(streams.stderr, !flags.json);
      const result = await rewriteLane(path, writer, {
        count,
        ...(flags.task ? { tasks: flags.task } : {}),
        onTask: (task) => progress.update(`rewriting ${laneName}: ${task.task} ${task.kept.length} kept, ${task.rejected.length} rejected`),
      });
      progress.clear();
      if (flags.json) return writeJson(streams, result);
      for (const task of result.tasks) {
        streams.stdout.write(`${task.task}: ${task.kept.length} kept of ${task.returned}\n`);
        for (const text of task.kept) streams.stdout.write(`  + ${text}\n`);
        for (const rejected of task.rejected) streams.stdout.write(`  - ${rejected.text}\n      (${rejected.reason})\n`);
      }
      streams.stdout.write(`lanes rewrite ${result.lane}: ${result.kept} phrasings by ${spec.model} (${shortPin(checked.pin)}) -> ${result.file}\n`);
      if (!result.named) {
        streams.stdout.write(`to draw from them, add  "rewrites": "${basename(result.file)}"  to ${path}, then run  episode-factory lanes check ${laneName}\n`);
      }
    });

  registerLanesSynthesize(lanes, streams, setExit);

  lanes
    .command('check')
    .description(
      'Prove lanes\' hidden predicates sound, task by task, on several seeds with no faults: the scripted solution must pass ' +
        'every predicate, a policy that answers at once must fail, and every wrong trajectory the task declares (the wrong ' +
        'record, a near-twin tool, a forbidden side effect) must fail a predicate. Every phrasing of the user message, rendered ' +
        'on each seed, must state the told facts and the values the solution uses, and no withheld fact. Prints a row per task; exits 1 if any ' +
        'task is unsound, 2 for a lane that does not load.',
    )
    .argument('[lanes...]', 'lane names or paths')
    .option('--all', 'check every lane `lanes list` finds')
    .option('--seeds <range>', `seeds to play, A..B (default: each lane's first ${DEFAULT_CHECK_SEEDS})`)
    .option('--task <id...>', 'only these tasks')
    .option('--sample <n>', "only n tasks of each lane, spread evenly through it: a quick spot-check of a long (synthesised) lane")
    .option('--workers <n>', 'worker threads, one task\'s proof at a time each (default: the number of cores; 1 starts no thread); the results are the same whatever the number')
    .option('--json', 'print the results as JSON')
    .action(async (references: string[], flags: { all?: boolean; seeds?: string; task?: string[]; sample?: string; workers?: string; json?: boolean }) => {
      if (flags.all && references.length > 0) throw new FactoryError('usage', 'name lanes or pass --all, not both', { fix: 'drop the lane names or --all' });
      const workers = flags.workers === undefined ? availableParallelism() : parseCount('--workers', flags.workers, 4);
      const paths = flags.all ? listLaneFiles() : references;
      if (paths.length === 0) throw new FactoryError('usage', 'no lane to check', { fix: 'name a lane (see `lanes list`) or pass --all' });
      const loaded = paths.map((path) => loadLane(path));
      const seeds = flags.seeds === undefined ? undefined : parseSeedRange(flags.seeds);
      const progress = new ProgressLine(streams.stderr, !flags.json);
      const results = await checkLanesSoundness(loaded, {
        workers,
        ...(seeds ? { seeds } : {}),
        ...(flags.task ? { taskIds: flags.task } : {}),
        ...(flags.sample !== undefined ? { sample: parseCount('--sample', flags.sample) } : {}),
        onLane: (lane) => progress.update(`checking ${lane.name}…`),
        onTask: (result) => progress.update(`checking ${result.lane}: ${result.task} ${result.sound ? 'sound' : 'UNSOUND'}`),
      });
      progress.clear();
      const unsound = results.filter((result) => !result.sound);
      if (flags.json) {
        writeJson(streams, { ok: unsound.length === 0, lanes: loaded.length, tasks: results.length, unsound: unsound.length, results });
      } else {
        streams.stdout.write(soundnessTable(results));
        for (const result of unsound) {
          streams.stdout.write(`\nUNSOUND ${result.lane} ${result.task}\n`);
          for (const problem of result.problems) streams.stdout.write(`  ${problem}\n`);
        }
        const seedNote = seeds ? formatSeedRange(seeds) : loaded.length === 1 ? formatSeedRange(defaultCheckSeeds(loaded[0]!)) : `each lane's first ${DEFAULT_CHECK_SEEDS}`;
        streams.stdout.write(
          `lanes check: ${loaded.length} lane${loaded.length === 1 ? '' : 's'}, ${results.length} task${results.length === 1 ? '' : 's'}, seeds ${seedNote}: ` +
            (unsound.length === 0 ? 'all sound\n' : `${unsound.length} unsound\n`),
        );
      }
      setExit(unsound.length === 0 ? 0 : 1);
    });
}


/** "3/3": how many runs of a kind behaved as they must, out of how many there were. */
function tally(result: TaskSoundness, kind: TaskSoundness['runs'][number]['kind']): string {
  const runs = result.runs.filter((run) => run.kind === kind);
  if (runs.length === 0) return 'none';
  return `${runs.filter((run) => run.sound).length}/${runs.length} ${runs[0]!.expected === 'pass' ? 'pass' : 'fail'}`;
}

/** "22 ok": phrasings of the message, and how many renderings of them (phrasing × seed) left out or gave away a fact. */
function phrasingTally(result: TaskSoundness): string {
  const { phrasings, rendered, failed } = result.phrasing;
  return failed === 0 ? `${phrasings} ok` : `${failed}/${rendered} bad`;
}

function unsoundParts(result: TaskSoundness): string[] {
  const parts = [...new Set(result.runs.filter((run) => !run.sound).map(label))];
  if (result.phrasing.failed > 0) parts.push('phrasing');
  return parts;
}

function soundnessTable(results: readonly TaskSoundness[]): string {
  return formatTable([
    ['LANE', 'TASK', 'KIND', 'SOLUTION', 'DO-NOTHING', 'WRONG', 'PHRASINGS', 'VERDICT'],
    ...results.map((result) => [
      result.lane,
      result.task,
      result.tags.join(',') || '-',
      tally(result, 'solution'),
      tally(result, 'do-nothing'),
      tally(result, 'wrong'),
      phrasingTally(result),
      result.sound ? 'sound' : `UNSOUND (${unsoundParts(result).join(', ') || 'no wrong trajectory'})`,
    ]),
  ]);
}
