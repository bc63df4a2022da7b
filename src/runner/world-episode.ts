// Owns running one episode against a live world: start the world as a real MCP
// server (behind the fault layer when the lane has a fault plan), connect a
// client in-process (a kept one when the episode has no faults), read the
// catalog through tools/list, run the agent loop, and always end the
// connection. Reconnects rebuild the connection around the same world state
// and the same fault state.

import type { Message, ToolDescriptor } from '../core/conversation.js';
import { enterPhase, exitPhase } from '../core/phase-profile.js';
import type { Random } from '../core/random.js';
import type { Policy } from '../policy/policy-contract.js';
import type { UserSimulator } from '../policy/user-simulator.js';
import type { FaultPlan, FiredFault } from '../world/faults/fault-plan.js';
import { FaultState } from '../world/faults/fault-state.js';
import type { ConnectOptions, Connection } from '../world/in-process-connection.js';
import type { RecordedServerFault } from '../world/world-session-contract.js';
import { runAgentLoop, type AgentRun, type WallTimeHalt } from './agent-loop.js';
import type { Limits } from './limits.js';
import { McpToolSession } from './tool-session.js';
import { NULL_TRACE, type TraceSink } from './trace.js';

export interface WorldEpisodeOptions {
  /** Opens a connection to the episode's world, whatever its kind (a world session's connect, see world/world-session.ts); called again after a dropped connection. */
  connect: (options: ConnectOptions) => Promise<Connection>;
  policy: Policy;
  user?: UserSimulator;
  messages: readonly Message[];
  limits: Limits;
  trace?: TraceSink;
  /** A fault plan and the episode's `faults` substream. */
  faults?: { plan: FaultPlan; random: Random };
  /** Replay turns the wall clock off: time is not replayable, the recorded actions are. */
  enforceWallTime?: boolean;
  /** Replay of an episode that ran out of wall time stops where the original did. */
  halt?: WallTimeHalt;
}

/** A fired fault with the model turn it happened in (0: before the first turn). */
export type RecordedFault = FiredFault & { step: number };

export type { RecordedServerFault };

export interface WorldEpisode {
  /** The catalog as first listed. */
  catalog: ToolDescriptor[];
  run: AgentRun;
  faults: RecordedFault[];
  serverFaults: RecordedServerFault[];
}

export async function runWorldEpisode(options: WorldEpisodeOptions): Promise<WorldEpisode> {
  const trace = options.trace ?? NULL_TRACE;
  const faults: RecordedFault[] = [];
  let session: McpToolSession | undefined;
  const faultState =
    options.faults && options.faults.plan.faults.length > 0
      ? new FaultState(options.faults.plan, options.faults.random, (fault) => {
          const recorded = { ...fault, step: session?.step ?? 0 };
          faults.push(recorded);
          trace.emit('fault_fired', { ...recorded });
        })
      : undefined;
  if (faultState) trace.emit('faults_armed', { live: faultState.live.map((entry) => entry.id) });
  const serverFaults: RecordedServerFault[] = [];
  const connectOptions: ConnectOptions = {
    faults: faultState,
    onLayerError: (error) => trace.emit('fault_layer_error', { message: error.message }),
    onServerFault: (fault) => {
      const recorded = { ...fault, step: session?.step ?? 0 };
      serverFaults.push(recorded);
      trace.emit('server_fault', { ...recorded });
    },
  };
  const { connect } = options;
  enterPhase('connection');
  const opened = await McpToolSession.open(() => connect(connectOptions), trace).finally(() =>
    exitPhase('connection'),
  );
  session = opened;
  // Only an episode that returned normally may hand a kept connection back for the next one.
  let returned = false;
  try {
    const catalog = opened.catalog;
    const run = await runAgentLoop({
      policy: options.policy,
      ...(options.user ? { user: options.user } : {}),
      tools: opened,
      messages: options.messages,
      limits: options.limits,
      trace,
      ...(options.enforceWallTime === false ? { enforceWallTime: false } : {}),
      ...(options.halt ? { halt: options.halt } : {}),
    });
    returned = true;
    return { catalog, run, faults, serverFaults };
  } finally {
    enterPhase('connection');
    await opened.close({ clean: returned });
    exitPhase('connection');
  }
}
