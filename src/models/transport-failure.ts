// Owns how every chat-model provider says that the way to its server failed,
// rather than the server's answer: silence past the timeout (before the
// answer, or mid-answer), and a connection that failed or dropped. The line
// starts with the provider's endpoint (`ollama /api/chat`, `openai POST
// /chat/completions`), so the same failure reads the same whoever serves.

import { formatSeconds, SilenceTimeoutError } from '../core/timed-fetch.js';
import { InfrastructureError } from './chat-model.js';

interface ShapedError {
  message?: string;
  code?: string;
  cause?: { code?: string; message?: string };
}

/** The system's own word for what broke (ECONNREFUSED, UND_ERR_SOCKET…), when the error carries one. */
export function failureCause(error: unknown): string | undefined {
  const shaped = (error ?? {}) as ShapedError;
  return shaped.cause?.code ?? shaped.cause?.message ?? shaped.code;
}

/** Silence or a broken connection as one line after `prefix`; undefined for any other failure. `scrub` cleans what reaches the message. */
export function transportFailure(prefix: string, error: unknown, scrub: (text: string) => string = (text) => text): InfrastructureError | undefined {
  if (error instanceof SilenceTimeoutError) {
    return new InfrastructureError(
      error.started
        ? `${prefix}: the model server stopped sending mid-answer for ${formatSeconds(error.silenceMs)} (--model-timeout)`
        : `${prefix}: the model server did not answer within ${formatSeconds(error.silenceMs)} (--model-timeout)`,
      { cause: error },
    );
  }
  const message = (error as ShapedError | null)?.message;
  if (error instanceof TypeError && (message === 'fetch failed' || message === 'terminated')) {
    const cause = failureCause(error);
    const when = message === 'terminated' ? 'dropped mid-answer' : 'failed';
    return new InfrastructureError(scrub(`${prefix}: the connection to the model server ${when}${cause ? ` (${cause})` : ''}`), { cause: error });
  }
  return undefined;
}
