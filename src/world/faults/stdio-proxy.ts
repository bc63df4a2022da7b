// Owns the standalone fault proxy: it starts any MCP server as a stdio
// subprocess and serves it on its own stdin/stdout with a fault plan applied,
// so any MCP client can be chaos-tested against any server, in an environment
// the caller stripped of secrets (core/child-environment). Every fired fault is
// handed to the log as it happens. Nothing but protocol messages ever goes to
// stdout; diagnostics go to stderr. What the client sends is read behind the
// wire limits (bounded-stdio-transport): a message too large, too deep, not
// JSON or not JSON-RPC is answered with a JSON-RPC error by the proxy itself,
// never reaches the server or the fault layer, and the session goes on.

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Readable, Writable } from 'node:stream';
import type { ChildEnvironment } from '../../core/child-environment.js';
import { substream } from '../../core/random.js';
import { BoundedStdioServerTransport } from '../bounded-stdio-transport.js';
import { describeRefusal } from '../incoming-message.js';
import type { FaultPlan } from './fault-plan.js';
import { FaultLayer, type CloseReason } from './fault-layer.js';
import { FaultState } from './fault-state.js';

export const PROXY_LOG_SCHEMA = 'episode-factory.proxy-fault.v1';

export interface ProxyOptions {
  plan: FaultPlan;
  seed: number;
  command: string;
  args: string[];
  /** The server's whole environment, from `childEnvironment` (the SDK adds only HOME, LOGNAME, PATH, SHELL, TERM and USER when they are missing). */
  env: ChildEnvironment;
  /** Receives each fired fault as a log entry, the moment it fires. */
  log: (entry: Record<string, unknown>) => void;
  input: Readable;
  output: Writable;
  diagnostics: { write(text: string): unknown };
}

export interface ProxyResult {
  /** Why the session ended. */
  ended: 'client_closed' | 'server_exited' | 'disconnect_fault';
  faults: number;
  /** Whether the server ever answered initialize: a server that exits before it never worked. */
  handshake: boolean;
}

/** The server could not be started at all (no such command, not executable, ...). */
export class ProxyStartError extends Error {}

export async function runProxy(options: ProxyOptions): Promise<ProxyResult> {
  const started = performance.now();
  let seq = 0;
  const state = new FaultState(options.plan, substream(options.seed, 'faults:proxy'), (fault) => {
    options.log({ schema: PROXY_LOG_SCHEMA, seq: ++seq, t_ms: Math.round(performance.now() - started), seed: options.seed, ...fault });
    options.diagnostics.write(`episode-factory proxy: fault ${fault.kind} (${fault.fault})${fault.tool ? ` on ${fault.tool}` : ''}: ${fault.detail}\n`);
  });
  const upstream = new StdioClientTransport({ command: options.command, args: options.args, env: options.env, stderr: 'inherit' });
  const downstream = new BoundedStdioServerTransport(options.input, options.output, {
    onRefused: (refusal) => options.diagnostics.write(`episode-factory proxy: ${describeRefusal(refusal)}\n`),
  });
  let resolveClosed!: (reason: CloseReason) => void;
  const closed = new Promise<CloseReason>((resolve) => (resolveClosed = resolve));
  const layer = new FaultLayer(state, downstream, upstream, {
    onClosed: (reason) => resolveClosed(reason),
    onError: (error) => options.diagnostics.write(`episode-factory proxy: ${error.message}\n`),
  });
  // The downstream transport closes when the client closes its end of stdin, and only then.
  try {
    await layer.start();
  } catch (error) {
    throw new ProxyStartError((error as Error).message);
  }
  const reason = await closed;
  return { ended: ENDED[reason], faults: state.fired.length, handshake: layer.handshakeCompleted };
}

const ENDED: Record<CloseReason, ProxyResult['ended']> = {
  client: 'client_closed',
  owner: 'client_closed',
  server: 'server_exited',
  fault: 'disconnect_fault',
};
