// Owns what counts as the model server failing, as opposed to the model
// behaving badly. Every request of a model turn goes through a fetch with a
// silence limit, cancelled with the turn; a streamed answer must be Ollama's
// NDJSON (one JSON object a line, ending with a `done` frame) or the turn
// fails. Every failure of the server (an HTTP error status, a dropped
// connection, a silence past the timeout, a body that is not the protocol, an
// `{"error"}` frame) becomes one InfrastructureError with a one-line reason.
// Text the model wrote is never judged here: an unusable tool call inside a
// well-formed answer is the agent's behaviour, parsed by the codec.

import { errorMessage } from '../../core/errors.js';
import { fetchWithSilenceLimit } from '../../core/timed-fetch.js';
import { InfrastructureError } from '../chat-model.js';
import { failureCause, transportFailure } from '../transport-failure.js';
import { textPreview } from '../../core/clipped-text.js';

/** The longest a streamed line may grow: Ollama's frames are a token or a tool call each, far below this. */
const MAX_LINE_CHARS = 1 << 20;

/** The answer is not Ollama's protocol: a body that is not NDJSON, or a stream cut short. */
class ProtocolError extends InfrastructureError {}


/** Passes whole, valid NDJSON lines on; fails the stream at the first line that is not a JSON object, an error frame, or an end before the `done` frame. */
function guardNdjson(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  let lines = 0;
  let finished = false;
  const check = (text: string, stream: TransformStreamDefaultController<Uint8Array>) => {
    if (text.trim() === '') return;
    lines++;
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      throw new ProtocolError(`the answer is not Ollama's NDJSON stream: line ${lines} is not JSON (${textPreview(text)})`);
    }
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) throw new ProtocolError(`the answer is not Ollama's NDJSON stream: line ${lines} is not a JSON object (${textPreview(text)})`);
    const { error, done } = frame as { error?: unknown; done?: unknown };
    if (error !== undefined) throw new InfrastructureError(`the server reported an error mid-answer: ${typeof error === 'string' ? error : JSON.stringify(error)}`);
    if (finished) return;
    if (done === true) finished = true;
    stream.enqueue(encoder.encode(text + '\n'));
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, stream) {
        buffer += decoder.decode(chunk, { stream: true });
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        for (const part of parts) check(part, stream);
        if (buffer.length > MAX_LINE_CHARS) throw new ProtocolError(`the answer is not Ollama's NDJSON stream: a line runs past ${MAX_LINE_CHARS} characters (${textPreview(buffer)})`);
      },
      flush(stream) {
        buffer += decoder.decode();
        if (buffer.trim() !== '') {
          let whole = true;
          try {
            JSON.parse(buffer);
          } catch {
            whole = false;
          }
          if (!whole && lines > 0) throw new ProtocolError(`the stream was cut off in the middle of line ${lines + 1} (${textPreview(buffer)}), before its final frame`);
          check(buffer, stream);
        }
        if (!finished) throw new ProtocolError(lines === 0 ? 'the answer was empty: no frame at all' : `the stream ended after ${lines} frame${lines === 1 ? '' : 's'} without its final (done) frame`);
      },
    }),
  );
}

/**
 * The fetch for one model turn: silent for at most `silenceMs`, cancelled by
 * `signal`, and a successful answer checked as NDJSON on the way through.
 */
export function modelServerFetch(options: { silenceMs: number; signal: AbortSignal }): typeof fetch {
  const timed = fetchWithSilenceLimit({ silenceMs: options.silenceMs, signal: options.signal });
  return async (input, init) => {
    const response = await timed(input, init);
    if (!response.ok || !response.body) return response;
    return new Response(guardNdjson(response.body), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

interface ShapedError {
  name?: string;
  status_code?: number;
  message?: string;
}

/** One line saying how a request to the model server failed, with the endpoint and, for a timeout, the flag that sets it. */
export function infrastructureFailure(endpoint: string, error: unknown): InfrastructureError {
  const prefix = `ollama ${endpoint}`;
  const transport = transportFailure(prefix, error);
  if (transport) return transport;
  if (error instanceof InfrastructureError) return new InfrastructureError(`${prefix}: ${error.message}`, { cause: error });
  const shaped = (error ?? {}) as ShapedError;
  if (shaped.name === 'ResponseError' && typeof shaped.status_code === 'number') {
    return new InfrastructureError(`${prefix} failed: HTTP ${shaped.status_code}: ${shaped.message ?? ''}`, { cause: error });
  }
  const cause = failureCause(error);
  if (error instanceof SyntaxError) return new InfrastructureError(`${prefix}: the answer is not JSON (${error.message})`, { cause: error });
  return new InfrastructureError(`${prefix} failed: ${errorMessage(error)}${cause && !errorMessage(error).includes(cause) ? ` (${cause})` : ''}`, { cause: error });
}
