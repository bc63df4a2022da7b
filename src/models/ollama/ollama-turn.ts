// Owns the lifetime of one model turn's requests, for every actor a model
// plays (the policy, the user, the writer): a client whose every request has a silence
// limit and ends with the turn (answered, failed, or cut off by the episode's
// wall time), so a request the turn no longer waits for keeps no connection,
// and no process, alive. A failure of the server rather than of the model
// leaves here as one InfrastructureError naming the endpoint.

import { Ollama } from 'ollama';
import { infrastructureFailure, modelServerFetch } from './ollama-fetch.js';

interface ModelTurn {
  host: string;
  /** The endpoint the turn asks, for the failure's reason (`/api/chat`). */
  endpoint: string;
  /** How long the server may stay silent on one request, in milliseconds. */
  timeoutMs: number;
  /** The episode's signal: aborted when its wall time runs out. */
  signal: AbortSignal;
}

export async function runModelTurn<T>(turn: ModelTurn, ask: (client: Ollama) => Promise<T>): Promise<T> {
  const { signal } = turn;
  const own = new AbortController();
  const stop = () => own.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  const client = new Ollama({ host: turn.host, fetch: modelServerFetch({ silenceMs: turn.timeoutMs, signal: own.signal }) });
  try {
    return await ask(client);
  } catch (error) {
    // Cut off by the episode's wall time: the runner already knows, and says so in the record.
    if (signal.aborted) throw error;
    throw infrastructureFailure(turn.endpoint, error);
  } finally {
    signal.removeEventListener('abort', stop);
    own.abort();
  }
}
