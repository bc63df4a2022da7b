// Owns `gate`: a fixed battery of a lane's episodes played by one policy,
// measured the way a tool-calling model is judged: did every episode answer,
// did any hit a cap, how many episodes used tools, how many calls were emitted
// and executed (each call of a turn counted), how many kept the contract
// (well-formed, aimed at a real tool and a real entity), and how many tasks
// were completed (with a Wilson 95% interval).
// `compare` plays two policies on the same episodes and tests the paired
// difference with an exact McNemar test. An episode the model server cut
// short says nothing about the model, and a battery with a hole in it gives
// no verdict: the gate stops there, as a precondition that failed.

import { FactoryError } from '../core/errors.js';
import { mcnemarExact, type McNemar } from '../statistics/mcnemar-test.js';
import { wilsonInterval, type Rate } from '../statistics/wilson-interval.js';
import { planEpisodes, specRecordId, type EpisodeSpec } from '../lanes/episode-plan.js';
import { InfrastructureError } from '../policy/policy-contract.js';
import type { Lane, SeedRange } from '../lanes/lane.js';
import type { ToolMessage } from '../core/conversation.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { produceEpisode } from '../verify/episode-production.js';
import type { PreparedPolicy } from '../selection/policy-selection.js';
import { resolveProducedAt } from '../generation/produced-at.js';

export interface GateEpisode {
  index: number;
  record_id: string;
  task: string;
  /** Calls the policy tried to make, well-formed or not: each call of a turn, and a malformed turn as one. */
  emitted: number;
  /** Calls that reached a tool. */
  executed: number;
  rejected: number;
  /** Calls well-formed, to a real tool, about an entity that exists. */
  contract: number;
  answered: boolean;
  cap_hit: boolean;
  completed: boolean;
  wall_seconds: number;
  /** The start of the user message, to tell episodes apart in the listing. */
  prompt: string;
}

export interface GateResult {
  policy: string;
  episodes: GateEpisode[];
  answered: number;
  cap_hits: number;
  tool_turns: number;
  calls_emitted: number;
  calls_executed: number;
  contract_kept: number;
  completion: Rate;
  wall_seconds: number;
  pass: boolean;
  /** Each pass condition that was missed, in words. */
  missed: string[];
}

export const GATE_CONDITIONS = {
  /** Share of episodes that must emit at least one tool call. */
  tool_turn_share: 0.6,
  /** Share of emitted calls that must keep the contract. */
  contract_share: 0.9,
};

/** An executed call whose result says the entity it named does not exist kept the syntax, not the contract. */
const MISSING_ENTITY = /not found|no such|no user with/i;

/**
 * Each call is judged by its own answer, the tool message with its id: a turn
 * of several calls is several emitted calls, so `calls_executed` (which counts
 * every executed call) never exceeds `calls_emitted`, and one bad call of a
 * turn does not spoil the others. A call left unanswered (the episode ran out
 * of time before it) kept no contract.
 */
export function measureEpisode(record: EpisodeRecord, index: number, seconds: number): GateEpisode {
  let emitted = 0;
  let contract = 0;
  const messages = record.messages;
  messages.forEach((message, position) => {
    if (message.role !== 'assistant') return;
    if (message.malformed_tool_call && !message.tool_calls) {
      emitted++;
      return;
    }
    const calls = message.tool_calls ?? [];
    emitted += calls.length;
    // The answers follow the turn, before anything else is said.
    const answers = new Map<string, ToolMessage>();
    for (let next = position + 1; next < messages.length && messages[next]!.role === 'tool'; next++) {
      const reply = messages[next] as ToolMessage;
      if (reply.tool_call_id !== null) answers.set(reply.tool_call_id, reply);
    }
    for (const call of calls) {
      const reply = answers.get(call.id);
      if (!reply) continue;
      const kind = reply.tool_result.kind;
      const rejectedBeforeTool = kind === 'invalid_arguments' || kind === 'unknown_tool' || kind === 'malformed_tool_call';
      const missingEntity = kind === 'tool_error' && MISSING_ENTITY.test(reply.content);
      if (!rejectedBeforeTool && !missingEntity) contract++;
    }
  });
  const user = messages.find((message) => message.role === 'user')?.content ?? '';
  return {
    index,
    record_id: record.record_id,
    task: record.task.id,
    emitted,
    executed: record.result.tool_calls,
    rejected: record.result.rejected_calls,
    contract,
    answered: record.result.outcome === 'final_answer',
    cap_hit: ['step_limit', 'tool_call_limit', 'wall_time_limit'].includes(record.result.outcome),
    completed: record.result.task_completed,
    wall_seconds: Math.round(seconds * 100) / 100,
    prompt: user.length > 60 ? `${user.slice(0, 59)}…` : user,
  };
}

export interface GateOptions {
  lane: Lane;
  policy: PreparedPolicy;
  /** How the policy is named in the verdict. */
  label: string;
  seeds?: SeedRange;
  /** Only the first N episodes: a fast loop. */
  turns?: number;
  onEpisode?: (episode: GateEpisode) => void;
}

export function gateBattery(lane: Lane, seeds: SeedRange = lane.seeds, turns?: number): EpisodeSpec[] {
  const plan = planEpisodes(lane, seeds);
  if (turns !== undefined && (!Number.isInteger(turns) || turns < 1)) throw new FactoryError('usage', `--turns ${turns} is not a positive whole number`, { fix: 'pass --turns 3 for a fast loop' });
  return turns === undefined ? plan : plan.slice(0, turns);
}

export async function runGate(options: GateOptions): Promise<GateResult> {
  const started = performance.now();
  const battery = gateBattery(options.lane, options.seeds, options.turns);
  const producedAt = resolveProducedAt(options.lane);
  const episodes: GateEpisode[] = [];
  for (const [index, base] of battery.entries()) {
    const spec: EpisodeSpec = options.policy.policy ? { ...base, policy: options.policy.policy } : base;
    const turnStarted = performance.now();
    let record: EpisodeRecord;
    try {
      record = await produceEpisode(spec, options.policy.factory, { producedAt });
    } catch (error) {
      if (!(error instanceof InfrastructureError)) throw error;
      throw new FactoryError('model_unavailable', `gate ${options.label}: episode ${index + 1} of ${battery.length} (${specRecordId(spec)}) was cut short by the model server: ${error.message}`, {
        fix: 'check the Ollama server (`ollama ps`, its log; raise --model-timeout if it is only slow) and run the gate again: a verdict needs every episode of the battery',
        cause: error,
      });
    }
    const episode = measureEpisode(record, index + 1, (performance.now() - turnStarted) / 1000);
    episodes.push(episode);
    options.onEpisode?.(episode);
  }
  const sum = (pick: (episode: GateEpisode) => number) => episodes.reduce((total, episode) => total + pick(episode), 0);
  const result = {
    policy: options.label,
    episodes,
    answered: episodes.filter((episode) => episode.answered).length,
    cap_hits: episodes.filter((episode) => episode.cap_hit).length,
    tool_turns: episodes.filter((episode) => episode.emitted > 0).length,
    calls_emitted: sum((episode) => episode.emitted),
    calls_executed: sum((episode) => episode.executed),
    contract_kept: sum((episode) => episode.contract),
    completion: wilsonInterval(episodes.filter((episode) => episode.completed).length, episodes.length),
    wall_seconds: Math.round(performance.now() - started) / 1000,
  };
  const missed: string[] = [];
  const n = episodes.length;
  if (result.answered < n) missed.push(`${n - result.answered} of ${n} episodes ended without an answer`);
  if (result.cap_hits > 0) missed.push(`${result.cap_hits} episode${result.cap_hits === 1 ? '' : 's'} hit a step, call or time cap`);
  if (result.tool_turns < GATE_CONDITIONS.tool_turn_share * n) missed.push(`tool_turns ${result.tool_turns}/${n} is below ${GATE_CONDITIONS.tool_turn_share * 100}%`);
  if (result.calls_emitted === 0 || result.contract_kept < GATE_CONDITIONS.contract_share * result.calls_emitted) {
    missed.push(`contract ${result.contract_kept}/${result.calls_emitted} is below ${GATE_CONDITIONS.contract_share * 100}%`);
  }
  return { ...result, pass: missed.length === 0, missed };
}

const percent = (part: number, whole: number) => (whole === 0 ? '-' : `${Math.round((part / whole) * 100)}%`);

export function formatGateEpisode(episode: GateEpisode): string {
  const number = String(episode.index).padStart(2, '0');
  return (
    `episode ${number} | emitted=${episode.emitted} executed=${episode.executed} rejected=${episode.rejected} ` +
    `cap=${episode.cap_hit ? 'yes' : 'no'} done=${episode.completed ? 'yes' : 'no'} | ${episode.wall_seconds.toFixed(2)}s | ${episode.prompt}`
  );
}

export function formatGateVerdict(result: GateResult): string {
  const { completion } = result;
  return (
    `gate: ${result.policy} ${result.pass ? 'PASS' : 'FAIL'} episodes=${result.episodes.length} answered=${result.answered} ` +
    `cap_hits=${result.cap_hits} tool_turns=${result.tool_turns} calls ${result.calls_executed}/${result.calls_emitted} executed ` +
    `(${percent(result.calls_executed, result.calls_emitted)}) contract ${result.contract_kept}/${result.calls_emitted} ` +
    `(${percent(result.contract_kept, result.calls_emitted)}) completed ${completion.successes}/${completion.n} ` +
    `[${completion.low.toFixed(2)}, ${completion.high.toFixed(2)}] (wall ${result.wall_seconds.toFixed(1)}s)`
  );
}

export interface Comparison {
  first: GateResult;
  second: GateResult;
  /** Completion of the second minus the first, over the same episodes. */
  difference: number;
  mcnemar: McNemar;
}

export function compareGates(first: GateResult, second: GateResult): Comparison {
  let firstOnly = 0;
  let secondOnly = 0;
  first.episodes.forEach((episode, index) => {
    const other = second.episodes[index]!;
    if (episode.completed && !other.completed) firstOnly++;
    if (!episode.completed && other.completed) secondOnly++;
  });
  const n = first.episodes.length;
  return { first, second, difference: n === 0 ? 0 : (secondOnly - firstOnly) / n, mcnemar: mcnemarExact(firstOnly, secondOnly) };
}

export function formatComparison(comparison: Comparison): string {
  const { first, second, mcnemar } = comparison;
  return (
    `compare: ${first.policy} completed ${first.completion.successes}/${first.completion.n}, ${second.policy} completed ` +
    `${second.completion.successes}/${second.completion.n}; paired difference ${comparison.difference >= 0 ? '+' : ''}${comparison.difference.toFixed(3)} ` +
    `(only ${first.policy}: ${mcnemar.first_only}, only ${second.policy}: ${mcnemar.second_only}), exact McNemar p=${mcnemar.p_value.toPrecision(3)}`
  );
}
