// Owns producing one judged episode: a fresh world from the seed, the task
// instantiated from its initial snapshot, the policy driven through the real
// MCP server, and the final state judged by the hidden predicates. Generation
// and replay both come through here; only the policy differs.

import type { Message } from '../core/conversation.js';
import type { JsonObject, JsonValue } from '../core/json-value.js';
import { enterPhase, exitPhase } from '../core/phase-profile.js';
import { substream, type Random } from '../core/random.js';
import { chooseVariant, type EpisodeSpec } from '../lanes/episode-plan.js';
import { instantiateTask } from '../lanes/task-instance.js';
import type { Policy } from '../policy/policy-contract.js';
import type { ScriptStep } from '../solutions/solution-script.js';
import { ScriptedUser } from '../policy/scripted-user.js';
import type { UserBrief, UserSimulator } from '../policy/user-simulator.js';
import { renderString } from '../core/template.js';
import type { EpisodeRecord, FaultFired } from '../records/episode-record.js';
import type { WallTimeHalt } from '../runner/agent-loop.js';
import type { TraceSink } from '../runner/trace.js';
import { runWorldEpisode } from '../runner/world-episode.js';
import { getWorld } from '../world/world-registry.js';
import { openWorldSession, type WorldSession } from '../world/world-session.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { checkClaims } from './claims.js';
import { evaluatePredicates } from './predicates.js';
import { assembleRecord } from './record-assembly.js';

/**
 * What a policy may be built from: the solution script, the drawn variant and
 * its own random substream. Never the seed itself, from which the world could
 * be rebuilt, and never the world or the predicates.
 */
export interface PolicyRequest {
  taskId: string;
  variant: string;
  script: ScriptStep[];
  random: Random;
  /** For tasks with a user simulator: what the dialogue variants play instead of asking, or ask needlessly. */
  dialogue?: { guess?: ScriptStep[]; told_question?: string };
}

export type PolicyFactory = (request: PolicyRequest) => Policy;

/** What a user simulator may be built from: the user's brief and its own substream. Never the predicates or the world. */
export interface UserRequest {
  taskId: string;
  brief: UserBrief;
  random: Random;
}

export type UserFactory = (request: UserRequest) => UserSimulator;

/** The default user: the task's facts, played by the scripted user. */
export const scriptedUserFor: UserFactory = (request) => new ScriptedUser(request.brief);

export interface ProduceOptions {
  producedAt: string;
  trace?: TraceSink;
  /** Replay only: see runWorldEpisode. */
  enforceWallTime?: boolean;
  halt?: WallTimeHalt;
  /** Who plays the user of a task with facts; the scripted user when absent. */
  userFor?: UserFactory;
  /** Task synthesis reads the state a run left behind (the record keeps only its hash). */
  onSnapshots?: (seen: { initial: JsonValue; final: JsonValue; params: Record<string, JsonValue> }) => void;
}

export const FACTORY_ACTOR: JsonObject = { role: 'factory', kind: 'program', name: 'episode-factory', version: FACTORY_VERSION };

export async function produceEpisode(spec: EpisodeSpec, policyFor: PolicyFactory, options: ProduceOptions): Promise<EpisodeRecord> {
  const { lane, seed } = spec;
  enterPhase('world_init');
  const world = await openWorldSession(getWorld(lane.document.world.name), substream(seed, 'world'), lane.document.world.config ?? {}, {
    pinnedDate: lane.document.produced_at,
    ...(options.trace ? { onEvent: (event: string, data: JsonObject) => options.trace!.emit(event, data) } : {}),
  }).finally(() => exitPhase('world_init'));
  try {
    return await produceOnWorld(spec, world, policyFor, options);
  } finally {
    enterPhase('connection');
    await world.dispose();
    exitPhase('connection');
  }
}

async function produceOnWorld(spec: EpisodeSpec, world: WorldSession, policyFor: PolicyFactory, options: ProduceOptions): Promise<EpisodeRecord> {
  const { lane, task, seed } = spec;
  const { initialSnapshot } = world;
  const instance = instantiateTask(task, initialSnapshot, substream(seed, `task:${task.id}`), { random: substream(seed, `text:${task.id}`), rules: lane.document.phrasing });
  const variant = chooseVariant(spec);
  const toldQuestion = instance.facts.find((fact) => !fact.withheld)?.question;
  const dialogue = instance.guess || toldQuestion !== undefined ? { ...(instance.guess ? { guess: instance.guess } : {}), ...(toldQuestion !== undefined ? { told_question: toldQuestion } : {}) } : undefined;
  const policy = policyFor({ taskId: task.id, variant, script: instance.script, random: substream(seed, `policy:${task.id}`), ...(dialogue ? { dialogue } : {}) });
  // Only a task that says what its user means has a user who talks back.
  const user =
    instance.facts.length > 0
      ? (options.userFor ?? scriptedUserFor)({
          taskId: task.id,
          brief: { goal: renderString(task.goal ?? task.title, instance.params), opening: instance.userMessage, facts: instance.facts },
          random: substream(seed, `user:${task.id}`),
        })
      : undefined;
  const messages: Message[] = [
    { role: 'system', content: lane.document.system_prompt },
    { role: 'user', content: instance.userMessage },
  ];
  options.trace?.emit('episode_started', { lane: lane.name, lane_sha256: lane.sha256, task: task.id, seed, variant, policy: policy.actor, ...(user ? { user: user.actor } : {}) });
  enterPhase('tool_calls');
  const { catalog, run, faults, serverFaults } = await runWorldEpisode({
    connect: (connectOptions) => world.connect(connectOptions),
    policy,
    ...(user ? { user } : {}),
    messages,
    limits: lane.limits,
    trace: options.trace,
    faults: { plan: lane.faults, random: substream(seed, `faults:${task.id}`) },
    ...(options.enforceWallTime === false ? { enforceWallTime: false } : {}),
    ...(options.halt ? { halt: options.halt } : {}),
  }).finally(() => exitPhase('tool_calls'));
  enterPhase('snapshot');
  const finalSnapshot = await world.finalSnapshot();
  exitPhase('snapshot');
  options.onSnapshots?.({ initial: initialSnapshot, final: finalSnapshot, params: instance.params });
  enterPhase('predicates');
  const aliases = new Map(faults.filter((fault) => fault.renamed_to).map((fault) => [fault.renamed_to!, fault.tool!]));
  const verdicts = evaluatePredicates(task.predicates, {
    initial: initialSnapshot,
    final: finalSnapshot,
    answer: run.final_text,
    messages: run.messages,
    params: instance.params,
    aliases,
    facts: instance.facts,
  });
  const evidence = checkClaims(run.final_text, world.tools, run.messages, aliases);
  exitPhase('predicates');
  const faultsFired: FaultFired[] = faults.map((fault) => ({
    kind: fault.kind,
    fault: fault.fault,
    step: fault.step,
    tool: fault.tool,
    call: fault.call,
    detail: fault.detail,
  }));
  enterPhase('record_assembly');
  const serverFaultsRecorded = world.serverFaults(serverFaults);
  const record = assembleRecord({
    lane,
    task,
    seed,
    variant,
    rollout: spec.rollout,
    phrasing: instance.phrasing,
    world: { name: world.name, version: world.version },
    catalog,
    run,
    verdicts,
    evidence,
    initialSnapshot,
    finalSnapshot,
    // A task whose message may be a model's rewording names that model, as the cache pinned it.
    actors: [policy.actor, ...(user ? [user.actor] : []), ...(lane.rewrites?.tasks[task.id] ? [lane.rewrites.writer] : []), world.actor(), FACTORY_ACTOR],
    producedAt: options.producedAt,
    faultsFired,
    ...(serverFaultsRecorded ? { serverFaults: serverFaultsRecorded } : {}),
  });
  exitPhase('record_assembly');
  return record;
}
