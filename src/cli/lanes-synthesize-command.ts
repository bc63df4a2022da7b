// Owns `lanes synthesize`: flags in, the synthesis job (synthesis/) called
// with progress on a terminal, the lane file written atomically, and a report
// of what was kept (by kind and tool) and why the rest was rejected.

import type { Command } from 'commander';
import { existsSync, mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname } from 'node:path';
import { FactoryError } from '../core/errors.js';
import type { JsonObject } from '../core/json-value.js';
import { parseSeedRange } from '../lanes/seed-range.js';
import { checkModel, formatModelSpec, MODEL_SPEC_EXAMPLES, parseModelSpec } from '../models/model-registry.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import { synthesizeLane, type CandidateEvent, type CandidateSource } from '../synthesis/task-synthesis.js';
import { createWriterSource } from '../synthesis/writer-proposal.js';
import { writerRecordingPath } from '../synthesis/writer-recording.js';
import { addModelServerFlags, modelServerOptions, type ModelServerFlags } from './model-server-flags.js';
import { parseCount } from './count-flag.js';
import { formatTable, ProgressLine, shortDuration, type Streams, writeJson } from './output.js';

interface SynthesizeFlags extends ModelServerFlags {
  writer?: string;
  count: string;
  seeds: string;
  checkSeeds: string;
  goldenSeeds: string;
  holdoutSeeds: string;
  maxCandidates?: string;
  out?: string;
  workers?: string;
  config?: string;
  force?: boolean;
  json?: boolean;
}

export function registerLanesSynthesize(lanes: Command, streams: Streams, setExit: (status: number) => void): void {
  addModelServerFlags(
  lanes
    .command('synthesize')
    .description(
      'Write a lane of tasks made from a world itself, each proven sound. A seeded sampler draws candidates from the tool ' +
        'schemas and the initial state (a record that exists, arguments filled from its fields or fresh values), runs their ' +
        'golden calls on fresh seeded worlds, writes hidden predicates from the state the calls left (or, for a question, ' +
        'from the fact the calls returned), generates wrong trajectories, and keeps a candidate only if the lane loader and ' +
        'the proof of `lanes check` accept it. Same world, seeds and count: the same lane, byte for byte. Exits 1 when ' +
        'fewer tasks than --count were kept (the lane is still written), 2 for bad flags or an unknown world. ' +
        'With --writer, a model proposes each candidate instead of the sampler: it is shown the tools (names, descriptions, input ' +
        'schemas) and a few records of each collection of the initial state, and answers with JSON {"instruction", "actions"}; a ' +
        "value it takes from a record becomes a lane parameter, so the task instantiates on every seed. It is asked at temperature 0 " +
        'with a seed per draw, and every answer is recorded in <lane>.writer.json: a rerun with the same --writer reads the recording ' +
        'and writes the same lane without the model. A writer whose server does not answer at start is exit 2.',
    )
    .argument('<world>', 'a world name (see `worlds list`), scripted or server, built in or defined in worlds/')
    .option('--count <n>', 'sound tasks to keep', '20')
    .option('--seeds <range>', "the written lane's seeds, A..B", '0..7')
    .option('--check-seeds <n>', 'prove each candidate sound (solution, do-nothing, wrong trajectories) on this many of the first seeds', '8')
    .option('--golden-seeds <n>', 'run the golden calls on this many of the first seeds: predicates must hold on all of them', '8')
    .option('--holdout-seeds <n>', "prove each kept task again on this many seeds after the lane's, never used to write its predicates; one that fails there is rejected as overfit (0 skips this)", '16')
    .option('--max-candidates <n>', 'give up after this many candidates (default: 20 × count)')
    .option('--out <file>', 'where to write the lane (default: lanes/<world>-synth-v1.json)')
    .option('--workers <n>', "threads to try the sampler's candidates on (default: the number of cores; 1 starts no thread); the lane is the same whatever the number. A writer's draws are tried on one")
    .option('--config <json>', "the world's config, as JSON (see `worlds show <world>`)")
    .option('--force', 'replace the file if it exists')
    .option('--json', 'print the result as JSON')
    .option('--writer <model>', 'a writer model proposes the candidates: ollama:<model>, or openai:<model> (with --base-url); answers are recorded in <lane>.writer.json and read back on a rerun'),
  )
    .addHelpText('after', '\nExamples:\n  episode-factory lanes synthesize issues --count 20\n  episode-factory lanes synthesize git-server --count 100 --writer openai:qwen2.5-7b-instruct --base-url http://127.0.0.1:8000/v1 --model-digest <sha256>')
    .action(async (world: string, flags: SynthesizeFlags) => {
      const count = parseCount('--count', flags.count);
      const checkSeeds = parseCount('--check-seeds', flags.checkSeeds);
      const goldenSeeds = parseCount('--golden-seeds', flags.goldenSeeds);
      const holdoutSeeds = flags.holdoutSeeds === '0' ? 0 : parseCount('--holdout-seeds', flags.holdoutSeeds);
      const workers = flags.workers === undefined ? availableParallelism() : parseCount('--workers', flags.workers, 4);
      const maxCandidates = flags.maxCandidates === undefined ? undefined : parseCount('--max-candidates', flags.maxCandidates);
      const seeds = parseSeedRange(flags.seeds, '--seeds');
      const out = flags.out ?? `lanes/${world}-synth-v1.json`;
      // A lane is named after its file, as the loader requires.
      const name = basename(out, '.json');
      if (!out.endsWith('.json') || !/^[a-z0-9][a-z0-9._-]*$/.test(name)) throw new FactoryError('usage', `--out ${out}: a lane file is named <lane-name>.json, in lower-case letters, digits, dots and dashes`, { fix: 'e.g. --out lanes/memory-synth-v1.json' });
      if (existsSync(out) && !flags.force) throw new FactoryError('usage', `${out} already exists`, { fix: 'pass --force to replace it, or choose another --out' });
      const config = flags.config === undefined ? undefined : parseConfig(flags.config);
      const writerSpec = flags.writer === undefined ? undefined : parseModelSpec(flags.writer);
      if (flags.writer !== undefined && !writerSpec) throw new FactoryError('usage', `--writer "${flags.writer}" is not a model`, { fix: `use ${MODEL_SPEC_EXAMPLES}` });
      const serverOptions = modelServerOptions(flags, [writerSpec]);
      let source: CandidateSource | undefined;
      if (writerSpec) {
        mkdirSync(dirname(out) || '.', { recursive: true });
        source = await createWriterSource({
          world,
          writer: formatModelSpec(writerSpec),
          recordingPath: writerRecordingPath(out),
          connect: () => checkModel(writerSpec, { ...serverOptions, flag: '--writer' }),
        });
      }
      const progress = new ProgressLine(streams.stderr, !flags.json);
      const started = performance.now();
      const tally = { drawn: 0, executed: 0, kept: 0 };
      const result = await synthesizeLane({
        world,
        count,
        seeds,
        checkSeeds,
        goldenSeeds,
        holdoutSeeds,
        name,
        workers,
        ...(config ? { config } : {}),
        ...(maxCandidates ? { maxCandidates } : {}),
        ...(source ? { source } : {}),
        onCandidate: (event) => {
          tally.drawn++;
          if (event.reason !== 'unfillable' && event.reason !== 'invalid' && event.reason !== 'writer-garbage') tally.executed++;
          if (event.kept) tally.kept++;
          const rate = tally.drawn / Math.max(0.001, (performance.now() - started) / 1000);
          progress.update(`synthesize ${world}: ${tally.drawn} candidates drawn, ${tally.executed} executed, ${tally.kept}/${count} kept (${rate.toFixed(1)}/s)${event.kept ? '' : ` · last rejected: ${event.reason}`}`);
        },
      });
      progress.clear();
      const seconds = (performance.now() - started) / 1000;
      const kept = result.document.tasks.length;
      if (kept > 0) {
        mkdirSync(dirname(out) || '.', { recursive: true });
        writeFileAtomically(out, JSON.stringify(result.document, null, 2) + '\n');
      }
      const reasons = rejectionSummary(result.events);
      const byKind = keptSummary(result.events);
      if (flags.json) {
        writeJson(streams, {
          ok: kept >= count,
          world,
          lane: name,
          out: kept > 0 ? out : null,
          asked: count,
          kept,
          candidates: result.events.length,
          executed: tally.executed,
          kept_share: result.events.length === 0 ? 0 : kept / result.events.length,
          seconds: Math.round(seconds * 10) / 10,
          rejected: Object.fromEntries(reasons.map((row) => [row.reason, row.count])),
          kept_by_kind_and_tool: byKind,
          events: result.events,
        });
      } else {
        streams.stdout.write(`${kept} of ${result.events.length} candidates kept as sound (${percent(kept, result.events.length)}), ${tally.executed} executed, in ${shortDuration(seconds)}\n`);
        if (byKind.length > 0) {
          streams.stdout.write('\nkept tasks by kind and tool\n');
          streams.stdout.write(formatTable([['KIND', 'TOOLS', 'TASKS'], ...byKind.map((row) => [row.kind, row.tools, String(row.tasks)])]));
        }
        if (reasons.length > 0) {
          streams.stdout.write('\nrejected candidates by reason (one example each)\n');
          streams.stdout.write(formatTable([['REASON', 'COUNT', 'EXAMPLE'], ...reasons.map((row) => [row.reason, String(row.count), row.example.slice(0, 160)])]));
        }
        streams.stdout.write(kept > 0 ? `\nwrote ${out} (${kept} tasks); prove it with  episode-factory lanes check ${out}\n` : '\nwrote nothing: no candidate was sound\n');
        if (kept < count) streams.stdout.write(`kept ${kept} of the ${count} asked for after ${result.events.length} candidates; raise --max-candidates, or see the reasons above\n`);
      }
      setExit(kept >= count ? 0 : 1);
    });
}


function parseConfig(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FactoryError('usage', `--config is not JSON: ${(error as Error).message}`, { fix: `e.g. --config '{"issues_per_topic": [3, 4]}'` });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FactoryError('usage', '--config must be a JSON object', { fix: `e.g. --config '{"issues_per_topic": [3, 4]}'` });
  return value as JsonObject;
}

function rejectionSummary(events: readonly CandidateEvent[]): { reason: string; count: number; example: string }[] {
  const rows = new Map<string, { reason: string; count: number; example: string }>();
  for (const event of events) {
    if (event.kept || !event.reason) continue;
    const row = rows.get(event.reason) ?? { reason: event.reason, count: 0, example: `${(event.tools ?? []).join('+') || '-'}: ${event.detail ?? ''}` };
    row.count++;
    rows.set(event.reason, row);
  }
  return [...rows.values()].sort((left, right) => right.count - left.count || left.reason.localeCompare(right.reason));
}

function keptSummary(events: readonly CandidateEvent[]): { kind: string; tools: string; tasks: number }[] {
  const rows = new Map<string, { kind: string; tools: string; tasks: number }>();
  for (const event of events) {
    if (!event.kept) continue;
    const key = `${event.kind}\u0000${(event.tools ?? []).join(' then ')}`;
    const row = rows.get(key) ?? { kind: event.kind ?? '-', tools: (event.tools ?? []).join(' then '), tasks: 0 };
    row.tasks++;
    rows.set(key, row);
  }
  return [...rows.values()].sort((left, right) => right.tasks - left.tasks || left.tools.localeCompare(right.tools));
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${Math.round((100 * part) / whole)}%`;
}

