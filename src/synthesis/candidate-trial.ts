// Owns one candidate of `lanes synthesize` from its draw to its proof: the
// run every draw shares (the world's tools, its first initial state and
// collections, the frame of the lane being written), drawing the candidate,
// running its golden actions on fresh seeded worlds, writing hidden
// predicates from the state they leave (or, for a question, from the fact the
// calls returned), generating wrong trajectories, and the proof that keeps it
// or names why not. Nothing here depends on another draw: whether a task is
// the twin of one kept before it is decided by task-synthesis.ts, which sees
// the draws in order, so a draw can be tried on any thread.

import { canonicalEquals, canonicalJson } from '../core/canonical-json.js';
import { errorMessage, FactoryError } from '../core/errors.js';
import type { JsonObject, JsonValue } from '../core/json-value.js';
import { isJsonObject } from '../core/json-value.js';
import { collectionAt } from '../core/where-clause.js';
import { substream, type Random } from '../core/random.js';
import type { LaneDocument, Predicate, SeedRange, SolutionStep, Task, UserText } from '../lanes/lane.js';
import { parseLane } from '../lanes/lane-loader.js';
import { seedsOf } from '../lanes/seed-range.js';
import { boundResult, ScriptedPolicy } from '../policy/scripted-policy.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { drawInitialSnapshot } from '../world/world-session.js';
import { isServerWorld } from '../world/server-world.js';
import { getWorld } from '../world/world-registry.js';
import { guardRefusal } from '../world/servers/guarding-transport.js';
import { produceEpisode, type PolicyFactory } from '../verify/episode-production.js';
import { checkLaneSoundness } from '../verify/lane-soundness.js';
import type { FilledCall } from './argument-filling.js';
import { drawCandidate, type Candidate, type SamplerTool } from './candidate-sampler.js';
import { generateWrongs } from './generated-wrongs.js';
import { listQuestion } from './list-questions.js';
import { actionGrammar, questionGrammar, SHARED_PHRASING, toolPhrase } from './instruction-grammar.js';
import { narrowToUnmetGoal } from './unmet-goal.js';
import { DERIVED_FIELD, derivePredicates, type SeedState } from './state-diff-predicates.js';
import { singular, slug, surveyState, words, type Collection } from './state-survey.js';

export const SAMPLER = 'episode-factory.sampler.v1';
export const SYNTHESIS_PRODUCED_AT = '2026-12-01T00:00:00Z';

/** What every trial of one synthesis shares, as plain data, so a worker thread can open the same run. */
export interface TrialSettings {
  world: string;
  config?: JsonObject;
  /** The written lane's seeds; candidates are proven on the first `checkSeeds` of them. */
  seeds: SeedRange;
  checkSeeds?: number;
  /**
   * Golden calls run on this many of the first seeds (at least checkSeeds): a predicate must hold on all of
   * them and a guard leaves free whatever moved on any, so a view that only some seeds touch is seen.
   */
  goldenSeeds?: number;
  /**
   * A kept task is proven again on this many seeds after the lane's (default 16; 0 skips it): its predicates were
   * written from the golden seeds, and a task that is only sound on the seeds it was drawn from is rejected as `overfit`.
   */
  holdoutSeeds?: number;
  name: string;
  producedAt?: string;
}

export type RejectionReason = 'unfillable' | 'writer-garbage' | 'invalid' | 'call-failed' | 'no-effect' | 'inexpressible' | 'no-fact' | 'duplicate' | 'unsound' | 'overfit';

export interface CandidateEvent {
  draw: number;
  kept: boolean;
  task?: string;
  kind?: 'write' | 'read';
  tools?: string[];
  reason?: RejectionReason;
  detail?: string;
}

const DEFAULT_CHECK_SEEDS = 8;
const DEFAULT_GOLDEN_SEEDS = 8;
const DEFAULT_HOLDOUT_SEEDS = 16;
const SYSTEM_PROMPT = 'You are an assistant with access to tools. Use them to do exactly what the user asks, change nothing else, then answer in one or two sentences.';

/** The run every draw of one synthesis shares; the same settings and source open the same run on any thread. */
export async function openTrialRun(options: TrialSettings, source: CandidateSource = SAMPLER_SOURCE): Promise<TrialRun> {
  const world = getWorld(options.world);
  const config = options.config ?? {};
  const producedAt = options.producedAt ?? SYNTHESIS_PRODUCED_AT;
  const all = seedsOf(options.seeds);
  const checkSeeds = all.slice(0, options.checkSeeds ?? DEFAULT_CHECK_SEEDS);
  const checkRange: SeedRange = { from: checkSeeds[0]!, to: checkSeeds[checkSeeds.length - 1]! };
  const goldenSeeds = all.slice(0, Math.max(checkSeeds.length, options.goldenSeeds ?? DEFAULT_GOLDEN_SEEDS));
  const holdout = options.holdoutSeeds ?? DEFAULT_HOLDOUT_SEEDS;
  const holdoutRange: SeedRange | undefined = holdout > 0 ? { from: options.seeds.to + 1, to: options.seeds.to + holdout } : undefined;
  const initial = await drawInitialSnapshot(world, substream(checkSeeds[0]!, 'world'), config, producedAt);
  const collections = surveyState(initial);
  const shownRoot = isServerWorld(world) ? world.shownRoot : undefined;
  const volatile = isServerWorld(world) ? world.volatile ?? [] : [];
  // A tool a guard refuses whatever its arguments (git_push under no-network) can only fail.
  const guards = isServerWorld(world) ? world.guards ?? [] : [];
  const tools = world.tools.filter((tool) => guardRefusal(guards, tool.name, {}) === undefined).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, ...(tool.annotations ? { annotations: tool.annotations } : {}) }));
  const base: LaneDocument = {
    format: 'episode-factory.lane.v1',
    name: options.name,
    description: `Tasks synthesised from the ${options.world} world by ${source.provenance.sampler ? `the seeded sampler (${source.provenance.sampler})` : `the writer model ${source.provenance.by}`}: golden actions run on the real world, hidden predicates written from the state they left, its golden calls passing on seeds ${goldenSeeds[0]}..${goldenSeeds[goldenSeeds.length - 1]} and each task proven sound on seeds ${checkRange.from}..${checkRange.to}${holdoutRange ? ` and on the held-out seeds ${holdoutRange.from}..${holdoutRange.to}` : ''}.`,
    produced_at: producedAt,
    world: { name: options.world, ...(Object.keys(config).length > 0 ? { config } : {}) },
    policy: { kind: 'scripted' },
    seeds: `${options.seeds.from}..${options.seeds.to}`,
    system_prompt: SYSTEM_PROMPT,
    phrasing: SHARED_PHRASING,
    tasks: [],
  };
  return { options, base, collections, shownRoot, volatile, tools, goldenSeeds, checkRange, holdoutRange, source, initial };
}

export interface TrialRun {
  options: TrialSettings;
  base: LaneDocument;
  collections: Collection[];
  shownRoot: string | undefined;
  volatile: readonly string[];
  tools: { name: string; description?: string; inputSchema: JsonObject; annotations?: { readOnlyHint?: boolean } }[];
  goldenSeeds: number[];
  checkRange: SeedRange;
  holdoutRange: SeedRange | undefined;
  source: CandidateSource;
  initial: JsonValue;
}

/** A draw's candidate ready for its proof, with the key its twins share; or why it was rejected before. */
export type Prepared = { rejected: CandidateEvent } | { task: Task; tools: string[]; key: string };

/** A proven candidate: kept with its task, or rejected with the reason. */
export type Attempt = CandidateEvent & { taskDefinition?: Task };

/** Where a draw's candidate comes from: the seeded sampler, or a writer model's proposal (writer-proposal.ts). */
export interface CandidateSource {
  /** Provenance every task it makes carries, besides its draw, kind and tools. */
  provenance: { by: string; sampler?: string; writer_digest?: string };
  /** The candidate for this draw; an `instruction` replaces the phrasing grammar's. A problem rejects the draw with its reason. */
  propose(draw: number, context: SourceContext, random: Random): Promise<(Candidate & { instruction?: UserText; answer?: { value: string | number; field?: string } }) | { problem: string; reason: RejectionReason }>;
}

export interface SourceContext {
  world: string;
  /** With their descriptions, which a writer reads. */
  tools: readonly (SamplerTool & { description?: string })[];
  collections: readonly Collection[];
  /** The first golden seed's initial state, which a writer sees. */
  initial: JsonValue;
  shownRoot?: string;
}

export const SAMPLER_SOURCE: CandidateSource = {
  provenance: { by: 'sampler', sampler: SAMPLER },
  async propose(_draw, context, random) {
    const drawn = drawCandidate(context, random);
    return 'problem' in drawn ? { problem: drawn.problem, reason: 'unfillable' } : drawn;
  },
};

/** Everything a draw's candidate goes through before its proof; the twin check and the proof are the caller's to order. */
export async function prepareCandidate(run: TrialRun, draw: number): Promise<Prepared> {
  const random = substream(draw, `synthesize:${run.options.world}`);
  const context: SourceContext = { world: run.options.world, tools: run.tools, collections: run.collections, initial: run.initial, ...(run.shownRoot ? { shownRoot: run.shownRoot } : {}) };
  const drawn = await run.source.propose(draw, context, random);
  if ('problem' in drawn) return { rejected: { draw, kept: false, reason: drawn.reason, detail: drawn.problem } };
  const tools = drawn.calls.map((call) => call.call);
  const instruction = drawn.instruction ?? actionGrammar(drawn.calls);
  const provenance = run.source.provenance;
  const reject = (reason: RejectionReason, detail: string): Prepared => ({ rejected: { draw, kept: false, tools, reason, detail } });
  const id = taskId(tools, draw);
  const solution: SolutionStep[] = drawn.calls.map((call, index) => ({ call: call.call, arguments: call.arguments, as: `r${index + 1}` }));
  const probe: Task = {
    id,
    title: 'probe',
    params: drawn.pool.params,
    user: instruction,
    solution: [...solution, { answer: 'Done.' }],
    predicates: [{ id: 'probe', calls: { tool: tools[0]! }, min: 0 }],
  };
  let laneProblem = loadProblem(run, probe);
  if (laneProblem) return reject('invalid', laneProblem);
  let golden = await playGolden(run, probe);
  if ('problem' in golden) {
    // A call that needs its record in some state (an order still pending, an issue still open): try the
    // record's kinds one by one, the first under which every seed's calls succeed is the precondition.
    const found = await findPrecondition(run, probe, drawn);
    if (!found) return reject('call-failed', golden.problem);
    golden = found;
  }
  const changed = golden.states.some((state) => !canonicalEquals(state.initial, state.final));
  let task: Task;
  if (changed) {
    const derived = derivePredicates(golden.states, run.collections, run.volatile);
    if (derived.problem) return reject('inexpressible', derived.problem);
    const predicates = [...derived.changes, ...derived.guards];
    const writes = drawn.calls.map((_, index) => index).filter((index) => golden.writes.has(index));
    const params = narrowToUnmetGoal(drawn.pool.params, derived.changes);
    task = {
      id,
      title: `${capital(tools.map(toolPhrase).join(', then '))}${drawn.target ? ` on ${article(singular(drawn.target.noun))}` : ''}`,
      tags: ['synthesized', 'write', drawn.calls.length > 1 ? 'multi-call' : 'single-call'],
      params,
      user: instruction,
      solution: [...solution, { answer: 'Done.' }],
      predicates,
      wrong: generateWrongs({ solution: [...solution, { answer: 'Done.' }], params, bindings: drawn.pool.bindings, fresh: drawn.pool.fresh, predicates, writes, initials: golden.states.map((state) => state.initial) }),
      synthesized: { ...provenance, draw, kind: 'write', tools },
    };
  } else {
    // A writer's words ask for a change unless it says what the user is told: then they ask for that field, and no other.
    if (drawn.instruction !== undefined && drawn.answer === undefined) return reject('no-effect', 'its calls changed nothing on any seed, though the instruction asks for a change (a question says its "answer")');
    if (drawn.pool.fresh.size > 0) return reject('no-effect', `its calls changed nothing on any seed, though they were given new values (${[...drawn.pool.fresh].join(', ')})`);
    const question = answerFact(drawn, golden.states, golden.results, random, drawn.answer);
    if (drawn.instruction !== undefined) {
      if ('problem' in question) return reject('no-fact', question.problem);
      const told = String(drawn.answer!.value);
      // A short value (a count of 3) turns up inside any number; only a longer one gives the answer away.
      const wording = JSON.stringify(drawn.instruction);
      if (wording.includes(question.expected) || (told.length >= 3 && wording.includes(told))) return reject('no-fact', `the instruction states its own answer (${told})`);
    }
    if ('problem' in question) {
      const listed = listQuestion(drawn, run.tools, run.collections, golden.states, golden.results);
      if ('problem' in listed) return reject('no-fact', drawn.pool.bindings.length === 0 ? listed.problem : question.problem);
      task = {
        id,
        title: `List the ${words(listed.collection.noun)} with ${words(listed.field)} ${listed.value}`,
        tags: ['synthesized', 'read-only', 'single-call', 'list'],
        params: drawn.pool.params,
        user: listed.user,
        solution: [...solution, listed.answer],
        predicates: listed.predicates,
        wrong: listed.wrong,
        synthesized: { ...provenance, draw, kind: 'read', tools },
      };
      return { task, tools, key: dedupKey(task) };
    }
    const predicates: (Predicate & { id: string })[] = [
      { id: `names-the-${slug(question.field, 'task')}`, answer: { contains: question.expected } },
      { id: 'changes-nothing', unchanged: '' },
    ];
    const answerStep: SolutionStep = { answer: `The ${words(question.field)} is {{${question.reference}}}.` };
    task = {
      id,
      title: `Report the ${words(question.field)} of ${article(singular(question.collection.noun))}`,
      tags: ['synthesized', 'read-only', drawn.calls.length > 1 ? 'multi-call' : 'single-call'],
      params: drawn.pool.params,
      user: drawn.instruction ?? questionGrammar(question.field, question.collection.noun, question.identity),
      solution: [...solution, answerStep],
      predicates,
      wrong: generateWrongs({ solution: [...solution, answerStep], params: drawn.pool.params, bindings: drawn.pool.bindings, fresh: drawn.pool.fresh, predicates, writes: [], initials: golden.states.map((state) => state.initial) }),
      synthesized: { ...provenance, draw, kind: 'read', tools },
    };
  }
  return { task, tools, key: dedupKey(task) };
}

/** The last gates of a candidate that is no twin of a kept task: it loads as a lane, and is proven sound, on the lane's seeds and then on the held-out ones. */
export async function proveCandidate(run: TrialRun, draw: number, task: Task, tools: string[]): Promise<Attempt> {
  const reject = (reason: RejectionReason, detail: string): Attempt => ({ draw, kept: false, tools, reason, detail });
  const laneProblem = loadProblem(run, task);
  if (laneProblem) return reject('invalid', laneProblem);
  const lane = parseLane(JSON.stringify({ ...run.base, tasks: [task] }), `${run.options.name}.json`);
  const [proof] = await checkLaneSoundness(lane, { seeds: run.checkRange, stopEarly: true });
  if (!proof!.sound) return reject('unsound', proof!.problems[0]!);
  if (run.holdoutRange) {
    const [heldOut] = await checkLaneSoundness(lane, { seeds: run.holdoutRange, stopEarly: true });
    if (!heldOut!.sound) return reject('overfit', `sound on seeds ${run.checkRange.from}..${run.checkRange.to} but not on a held-out one: ${heldOut!.problems[0]!}`);
  }
  return { draw, kept: true, task: task.id, kind: task.synthesized!.kind, tools, taskDefinition: task };
}

function loadProblem(run: TrialRun, task: Task): string | undefined {
  try {
    parseLane(JSON.stringify({ ...run.base, tasks: [task] }), `${run.options.name}.json`);
    return undefined;
  } catch (error) {
    if (error instanceof FactoryError) {
      const problems = error.problems;
      if (problems.length) return `${problems[0]!.where.replace(/^[^:]*: /, '')}: ${problems[0]!.reason}`;
    }
    return errorMessage(error);
  }
}

async function findPrecondition(run: TrialRun, probe: Task, drawn: Candidate): Promise<Golden | undefined> {
  const binding = drawn.pool.bindings[0];
  const spec = binding ? drawn.pool.params[binding.param] : undefined;
  if (!binding || !spec || !('from' in spec) || spec.where) return undefined;
  for (const kind of binding.collection.kinds) {
    for (const value of kind.values) {
      spec.where = { [kind.field]: value };
      const golden = await playGolden(run, probe);
      if (!('problem' in golden)) return golden;
    }
  }
  delete spec.where;
  return undefined;
}

interface Golden {
  states: SeedState[];
  /** Each seed's tool results as the scripted policy read them, in call order. */
  results: JsonValue[][];
  /** Indexes of the calls after which the world had changed (on any seed). */
  writes: Set<number>;
}

const scripted: PolicyFactory = (request) => new ScriptedPolicy({ script: request.script, variant: 'clean', random: request.random });

async function playGolden(run: TrialRun, probe: Task): Promise<Golden | { problem: string }> {
  const lane = parseLane(JSON.stringify({ ...run.base, tasks: [probe] }), `${run.options.name}.json`);
  const quiet = { ...lane, variants: { clean: 1 } };
  const states: SeedState[] = [];
  const results: JsonValue[][] = [];
  const writes = new Set<number>();
  for (const seed of run.goldenSeeds) {
    let seen: SeedState | undefined;
    let record: EpisodeRecord;
    try {
      record = await produceEpisode({ lane: quiet, task: probe, seed, variant: 'clean' }, scripted, { producedAt: lane.document.produced_at, onSnapshots: (state) => (seen = state) });
    } catch (error) {
      return { problem: `seed ${seed}: could not be played: ${errorMessage(error)}` };
    }
    const toolMessages = record.messages.filter((message) => message.role === 'tool');
    const failed = toolMessages.find((message) => message.role === 'tool' && !message.tool_result.ok);
    if (failed && failed.role === 'tool') return { problem: `seed ${seed}: ${failed.name} failed: ${oneLine(failed.tool_result.error ?? failed.content)}` };
    if (toolMessages.length !== probe.solution.length - 1) return { problem: `seed ${seed}: ${toolMessages.length} of ${probe.solution.length - 1} calls were made (${record.result.outcome})` };
    states.push(seen!);
    results.push(toolMessages.map((message) => (message.role === 'tool' ? boundResult(message.content) ?? { text: message.content } : null)));
    // A call writes when a read-only annotation does not say otherwise; the snapshot decides whether anything changed at all.
    probe.solution.forEach((step, index) => {
      if ('call' in step && !run.tools.find((tool) => tool.name === step.call)?.annotations?.readOnlyHint) writes.add(index);
    });
  }
  return { states, results, writes };
}

interface Question {
  field: string;
  collection: Collection;
  identity: { property: string; text: string };
  /** The template the answer predicate checks, e.g. {{target.city}}. */
  expected: string;
  /** Where the answer reads it in the results, e.g. r1.entities.0.city. */
  reference: string;
}

const SEGMENT = /^(?:[0-9]+|[A-Za-z_][A-Za-z0-9_-]*)$/;
/** Quoting a whole result longer than this is not an answer. */
const LONGEST_QUOTE = 300;

/** A field of the record the calls read that the results show; with `told`, the field whose value the writer gave as the answer. */
function answerFact(candidate: Candidate, states: readonly SeedState[], results: readonly JsonValue[][], random: { pick<T>(items: readonly T[]): T }, told?: { value: string | number; field?: string }): Question | { problem: string } {
  const binding = candidate.pool.bindings[0];
  if (!binding) return { problem: 'a read that names no record: there is no fact to ask about' };
  const mention = candidate.calls.flatMap((call: FilledCall) => call.mentions).find((entry) => entry.text.includes(`{{${binding.param}.`));
  if (!mention) return { problem: 'no argument states which record to read' };
  const stated = new Set(candidate.calls.flatMap((call) => call.mentions.map((entry) => entry.text)));
  const options: { field: string; reference: string }[] = [];
  const spec = candidate.pool.params[binding.param];
  const filtered = new Set(spec && 'from' in spec ? Object.keys(spec.where ?? {}) : []);
  for (const field of binding.collection.fields) {
    if (DERIVED_FIELD.test(field) || filtered.has(field) || [...stated].some((text) => text.includes(`{{${binding.param}.${field}}}`))) continue;
    let reference: string | undefined;
    let agreed = true;
    states.forEach((state, seed) => {
      const target = state.params[binding.param];
      const value = isJsonObject(target) ? target[field] : undefined;
      if (value === undefined || value === null || String(value).length < 2) return void (agreed = false);
      // Only a value no other record has tells the right record from a sibling.
      if (!uniqueIn(state.initial, binding.collection.pointer, field, value)) return void (agreed = false);
      const found = findValue(results[seed]!, value);
      if (!found || (reference !== undefined && found !== reference)) agreed = false;
      reference ??= found;
    });
    if (agreed && reference) options.push({ field, reference });
  }
  const noun = singular(binding.collection.noun);
  if (options.length === 0) return { problem: `the results do not show any field of the ${noun} beyond what the question states` };
  let chosen: { field: string; reference: string } | undefined;
  if (told === undefined) chosen = random.pick(options);
  else {
    chosen = options.find((option) => option.field === told.field);
    if (!chosen) return { problem: `the writer's answer "${String(told.value)}" is no field of the ${noun} it named that the results show and no other ${noun} has` };
  }
  return { field: chosen.field, collection: binding.collection, identity: mention, expected: `{{${binding.param}.${chosen.field}}}`, reference: chosen.reference };
}

function uniqueIn(snapshot: JsonValue, pointer: string, field: string, value: JsonValue): boolean {
  const items = collectionAt(snapshot, pointer) ?? [];
  return items.filter((item) => isJsonObject(item) && canonicalEquals(item[field] ?? null, value)).length === 1;
}

/** Where a value appears in the results, as a template path ("r1.entities.0.city"), on the shortest route. */
function findValue(results: readonly JsonValue[], value: JsonValue): string | undefined {
  const queue: { node: JsonValue; path: string[] }[] = results.map((node, index) => ({ node, path: [`r${index + 1}`] }));
  while (queue.length > 0) {
    const { node, path } = queue.shift()!;
    if (canonicalEquals(node, value)) return path.join('.');
    if (typeof node === 'string' && typeof value === 'string' && value.length >= 3 && node.length <= LONGEST_QUOTE && node.includes(value)) return path.join('.');
    const children: [string, JsonValue][] = Array.isArray(node) ? node.map((child, index) => [String(index), child]) : isJsonObject(node) ? Object.entries(node) : [];
    for (const [key, child] of children) if (SEGMENT.test(key)) queue.push({ node: child, path: [...path, key] });
  }
  return undefined;
}

/**
 * Two tasks with the same solution and predicates are one task, whatever
 * records their parameters draw from: the predicates are written through the
 * parameters, so the checks are the same. The second is a `duplicate`.
 */
function dedupKey(task: Task): string {
  return canonicalJson({ solution: task.solution, predicates: task.predicates.map(({ id: _id, ...predicate }) => predicate) } as unknown as JsonValue);
}

function taskId(tools: readonly string[], draw: number): string {
  const stem = tools.map((tool) => slug(tool, 'task')).join('-then-').slice(0, 50).replace(/-$/, '');
  return `${stem}-${draw}`;
}


function article(noun: string): string {
  return `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}
