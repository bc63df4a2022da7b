// Owns one episode of `env serve`: the very episode `generate` would run
// (produceEpisode: a fresh world from the seed, the task instantiated, the
// fault plan drawn, the limits, the trace, the user simulator), with a
// policy whose next() waits for the client's next /step. A step hands the
// client's action to the waiting runner, then waits until the runner asks
// for the following action (the tool results and any user reply are then
// committed) or the episode ends, when the record is judged exactly as
// generate judges it. Closing an episode (DELETE, idleness, shutdown) fails
// its waiting turn as an infrastructure error, so the runner stops without a
// record and the world is disposed on the way out.

import { randomUUID } from 'node:crypto';
import type { Message, ToolDescriptor, ToolResult } from '../core/conversation.js';
import { canonicalJson } from '../core/canonical-json.js';
import { errorMessage } from '../core/errors.js';
import type { JsonObject } from '../core/json-value.js';
import type { ChatMessage, ChatTool } from '../records/chat-format.js';
import type { Lane, Task } from '../lanes/lane.js';
import { TaskBindingError } from '../lanes/task-instance.js';
import { InfrastructureError, type Action, type Observation, type Policy } from '../policy/policy-contract.js';
import { fromRecordTool, type EpisodeRecord } from '../records/episode-record.js';
import type { Trace, TraceSink } from '../runner/trace.js';
import { produceEpisode } from '../verify/episode-production.js';
import { chatFromRecord, chatFromRuntime, chatTools, EnvironmentError, remoteActor, remoteSpec, remoteVariant, rewardOf, type RemoteAgent, type Reward } from './environment-protocol.js';

export type EpisodeState = 'starting' | 'awaiting_action' | 'running' | 'done' | 'failed' | 'closed';

export interface EpisodeOptions {
  lane: Lane;
  task: Task;
  seed: number;
  agent: RemoteAgent;
  /** One of a GRPO group's rollouts (ResetRequest.rollout). */
  rollout?: number;
  producedAt: string;
  /** The episode's trace file, when the server keeps traces; closed with the episode. */
  trace?: Trace;
  id?: string;
}

/** What /reset answers. */
export interface EpisodeStart {
  messages: ChatMessage[];
  tools: ChatTool[];
  done: boolean;
}

/** What /step answers. */
export interface StepAnswer {
  /** The runner's own copy of the assistant message it committed: its calls carry the runner's ids. */
  assistant: ChatMessage | null;
  /** What came after it: one tool message per call (in the order given), and/or the user's reply. */
  messages: ChatMessage[];
  done: boolean;
  /** False when the episode had already ended (it ran out of wall time waiting for this step): the action was not applied. */
  applied: boolean;
  /** The catalog, when it changed since the client last saw it (a tool renamed mid-episode). */
  tools?: ChatTool[];
  tool_call_ids?: Record<string, string>;
  reward?: Reward;
  /** What each tool message of `messages` reported (in their order): whether the call succeeded, and the kind of failure. Not sent by the native API. */
  tool_results: ToolResult[];
}

interface Waiting {
  observation: Observation;
  resolve(action: Action): void;
  reject(error: Error): void;
}

export class EnvironmentEpisode {
  readonly id: string;
  readonly lane: Lane;
  readonly task: Task;
  readonly seed: number;
  /** One of a GRPO group's rollouts, when the reset numbered it. */
  readonly rollout: number | undefined;
  readonly agent: RemoteAgent;
  readonly variant: string;
  /** When a request last touched it (performance.now()), for the idle timeout. */
  lastSeen = performance.now();
  /** Record id kept (replay-verified) from this episode, once it was. */
  writtenRecordId: string | undefined;
  /** Whether the kept record went into --out (there is none without it). */
  writtenToOut = false;
  /** A request (step, record) is being answered: the idle timeout leaves it alone. */
  busy = 0;

  private state: EpisodeState = 'starting';
  private waiting: Waiting | undefined;
  private stepInFlight = false;
  /** The client has been answered with done: a further step is a 409. */
  private toldDone = false;
  private closing: string | undefined;
  private traceClosed = false;
  private record_: EpisodeRecord | undefined;
  private failure_: Error | undefined;
  private lastToolsKey = '';
  private changed = deferred();
  private readonly settled: Promise<void>;

  constructor(private readonly options: EpisodeOptions) {
    this.id = options.id ?? randomUUID();
    this.lane = options.lane;
    this.task = options.task;
    this.seed = options.seed;
    this.rollout = options.rollout;
    this.agent = options.agent;
    this.variant = remoteVariant(options.agent);
    const policy: Policy = { actor: remoteActor(options.agent), next: (observation, signal) => this.awaitAction(observation, signal) };
    options.trace?.phase('env').emit('env_episode_opened', { episode_id: this.id, task: this.task.id, seed: this.seed, agent: { ...options.agent }, ...(options.rollout === undefined ? {} : { rollout: options.rollout }) });
    this.settled = produceEpisode(remoteSpec(options.lane, options), () => policy, {
      producedAt: options.producedAt,
      ...(options.trace ? { trace: options.trace.phase('generate') } : {}),
    }).then(
      (record) => {
        this.record_ = record;
        this.state = 'done';
      },
      (error: unknown) => {
        if (this.closing !== undefined) {
          this.state = 'closed';
        } else {
          this.failure_ = error instanceof Error ? error : new Error(String(error));
          this.state = 'failed';
        }
      },
    );
    void this.settled.finally(() => {
      this.waiting = undefined;
      this.notify();
    });
  }

  get phase(): EpisodeState {
    return this.state;
  }

  get record(): EpisodeRecord | undefined {
    return this.record_;
  }

  get failure(): Error | undefined {
    return this.failure_;
  }

  /** Neither finished nor failed: it holds a world. */
  get live(): boolean {
    return this.state === 'starting' || this.state === 'awaiting_action' || this.state === 'running';
  }

  /** The policy's next(): hand the observation to the server and wait for the client's action. */
  private awaitAction(observation: Observation, signal: AbortSignal): Promise<Action> {
    if (this.closing !== undefined) return Promise.reject(new InfrastructureError(`the episode was closed: ${this.closing}`));
    return new Promise<Action>((resolve, reject) => {
      const onAbort = () => {
        if (this.waiting?.resolve === settle) this.waiting = undefined;
        reject(new Error('the turn was abandoned'));
      };
      const settle = (action: Action) => {
        signal.removeEventListener('abort', onAbort);
        resolve(action);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting = {
        observation,
        resolve: settle,
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      this.state = 'awaiting_action';
      this.notify();
    });
  }

  private notify(): void {
    const previous = this.changed;
    this.changed = deferred();
    previous.resolve();
  }

  /** Until the runner waits for an action or the episode has settled. */
  private async untilTurnOrEnd(): Promise<void> {
    while (!this.waiting && this.live) await this.changed.promise;
  }

  /** Waits for the first turn: the opening messages and the catalog as the runner listed them. */
  async start(): Promise<EpisodeStart> {
    await this.untilTurnOrEnd();
    if (this.waiting) {
      const { observation } = this.waiting;
      return { messages: chatFromRuntime(observation.messages), tools: this.toolsSeen(observation.tools), done: false };
    }
    if (this.state === 'done') {
      this.toldDone = true;
      return { messages: chatFromRecord(this.record_!.messages), tools: [], done: true };
    }
    throw this.failedError();
  }

  async step(action: Action, clientIds: readonly (string | undefined)[]): Promise<StepAnswer> {
    if (this.stepInFlight) throw new EnvironmentError(409, 'step_in_flight', `episode ${this.id} is still answering the previous step`, { fix: 'wait for the previous /step to answer before sending the next' });
    if (this.state === 'done') {
      if (this.toldDone) {
        throw new EnvironmentError(409, 'episode_done', `episode ${this.id} is done (${this.record_!.result.outcome}); it takes no more steps`, {
          fix: 'start a new episode with /reset; POST /episodes/{id}/record keeps this one',
        });
      }
      // It ended while waiting for this step (out of wall time): say so once, with the reward.
      this.toldDone = true;
      return { assistant: null, messages: [], done: true, applied: false, reward: rewardOf(this.record_!), tool_results: [] };
    }
    if (this.state === 'failed') throw this.failedError();
    if (this.state === 'closed') throw new EnvironmentError(404, 'episode_closed', `episode ${this.id} was closed: ${this.closing}`);
    if (!this.waiting && this.live) {
      // The runner gave up the turn (out of wall time) and is still ending the episode: answer once it has ended.
      this.stepInFlight = true;
      try {
        await this.untilTurnOrEnd();
      } finally {
        this.stepInFlight = false;
      }
      if (!this.waiting) return this.step(action, clientIds);
    }
    const waiting = this.waiting;
    if (!waiting) throw new EnvironmentError(409, 'not_ready', `episode ${this.id} is not waiting for an action (it is ${this.state})`, { fix: 'wait for /reset to answer' });
    const base = waiting.observation.messages.length;
    this.stepInFlight = true;
    this.waiting = undefined;
    this.state = 'running';
    try {
      waiting.resolve(action);
      await this.untilTurnOrEnd();
    } finally {
      this.stepInFlight = false;
    }
    let committed: ChatMessage[];
    let results: ToolResult[];
    let tools: ChatTool[] | undefined;
    const nextTurn = this.pendingTurn();
    const ended = this.phase === 'done';
    if (nextTurn) {
      const next: Observation = nextTurn.observation;
      const added = next.messages.slice(base) as Message[];
      committed = chatFromRuntime(added);
      results = added.flatMap((message) => (message.role === 'tool' ? [message.tool_result] : []));
      const listed = next.tools;
      if (canonicalJson(listed.map((tool) => tool.name)) !== this.lastToolsKey) tools = this.toolsSeen(listed);
    } else if (ended) {
      const added = this.record_!.messages.slice(base);
      committed = chatFromRecord(added);
      results = added.flatMap((message) => (message.role === 'tool' ? [message.tool_result] : []));
      this.toldDone = true;
    } else {
      throw this.failedError();
    }
    const [assistant, ...after] = committed;
    const ids = assistant?.tool_calls?.map((call) => call.id) ?? [];
    const mapping: Record<string, string> = {};
    clientIds.forEach((clientId, index) => {
      if (clientId !== undefined && ids[index] !== undefined) mapping[clientId] = ids[index]!;
    });
    return {
      assistant: assistant ?? null,
      messages: after,
      done: ended,
      // The runner may have ended the episode (out of wall time) as this action arrived: then nothing was committed.
      applied: assistant !== undefined,
      ...(tools ? { tools } : {}),
      ...(Object.keys(mapping).length > 0 ? { tool_call_ids: mapping } : {}),
      ...(ended ? { reward: rewardOf(this.record_!) } : {}),
      tool_results: results,
    };
  }

  /** The catalog the agent sees now: the one of the turn it is asked for, or the record's once the episode is done. */
  tools(): readonly ToolDescriptor[] {
    const waiting = this.waiting;
    if (waiting) return waiting.observation.tools;
    return this.record_?.tools.map(fromRecordTool) ?? [];
  }

  /** The turn the runner waits on, read afresh (not narrowed across an await). */
  private pendingTurn(): Waiting | undefined {
    return this.waiting;
  }

  private toolsSeen(tools: readonly ToolDescriptor[]): ChatTool[] {
    this.lastToolsKey = canonicalJson(tools.map((tool) => tool.name));
    return chatTools(tools);
  }

  private failedError(): EnvironmentError {
    if (this.state === 'closed') return new EnvironmentError(404, 'episode_closed', `episode ${this.id} was closed: ${this.closing}`);
    const failure = this.failure_;
    if (failure instanceof TaskBindingError) {
      return new EnvironmentError(400, 'task_binding', `task ${this.task.id} cannot be set up on seed ${this.seed}: ${failure.message}`, { field: 'seed', fix: 'try another seed' });
    }
    return new EnvironmentError(500, 'episode_failed', `episode ${this.id} failed: ${errorMessage(failure)}`, {
      fix: 'this episode is closed; other episodes are not affected. Start a new one with /reset',
    });
  }

  /** What GET /episodes/{id} answers; without the conversation for the list of GET /episodes. */
  status(withMessages = true): JsonObject {
    const waiting = this.waiting;
    return {
      episode_id: this.id,
      task: this.task.id,
      seed: this.seed,
      agent: { ...this.agent },
      ...(this.rollout === undefined ? {} : { rollout: this.rollout }),
      state: this.state,
      done: this.state === 'done',
      idle_seconds: Math.round((performance.now() - this.lastSeen) / 100) / 10,
      // The conversation so far, as the runner committed it: a client that lost an answer can pick up from here.
      ...(waiting && withMessages ? { messages: chatFromRuntime(waiting.observation.messages) as unknown as JsonObject[] } : {}),
      ...(this.record_
        ? { ...(withMessages ? { messages: chatFromRecord(this.record_.messages) as unknown as JsonObject[] } : {}), record_id: this.record_.record_id, reward: rewardOf(this.record_) as unknown as JsonObject }
        : {}),
      ...(this.writtenRecordId ? { verified: true, written: this.writtenToOut } : {}),
      ...(this.failure_ ? { error: errorMessage(this.failure_) } : {}),
    };
  }

  /**
   * Ends the episode: a waiting turn fails as an infrastructure error, so the
   * runner stops, no record is made and the world is disposed; resolves when
   * it is. A finished episode only closes its trace.
   */
  async close(reason: string): Promise<void> {
    if (this.closing === undefined) {
      this.closing = reason;
      this.waiting?.reject(new InfrastructureError(`the episode was closed: ${reason}`));
      this.waiting = undefined;
    }
    await this.settled;
    if (this.state !== 'done' && this.state !== 'failed') this.state = 'closed';
    if (this.options.trace && !this.traceClosed) {
      this.traceClosed = true;
      this.options.trace.phase('env').emit('env_episode_closed', { episode_id: this.id, reason });
      this.options.trace.close();
    }
  }

  /** A phase of the episode's trace (the replay that verifies its record); silent once the episode is closed. */
  tracePhase(phase: string): TraceSink | undefined {
    const trace = this.options.trace;
    if (!trace) return undefined;
    const sink = trace.phase(phase);
    return { emit: (eventType, data) => (this.traceClosed ? undefined : sink.emit(eventType, data)) };
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}
