// Owns bounding every HTTP request the factory makes to a model server: a
// `fetch` that gives up when the server stays silent too long (before the
// response starts, or between two chunks of its body), and that can be
// cancelled from outside. Whatever ends a request (done, failed, timed out,
// aborted) aborts its connection and clears its timer, so nothing it started
// keeps the process alive afterwards.

/** The server sent nothing for `silenceMs`: the request was aborted. */
export class SilenceTimeoutError extends Error {
  override readonly name = 'SilenceTimeoutError';
  constructor(
    readonly url: string,
    readonly silenceMs: number,
    /** Whether the response had started (status and headers received) before the silence. */
    readonly started: boolean,
  ) {
    super(`${url} ${started ? 'stopped sending' : 'did not answer'} for ${formatSeconds(silenceMs)}`);
  }
}

/** `20 s`, `1.5 s`: how a timeout is named in messages and help. */
export function formatSeconds(milliseconds: number): string {
  return `${Number((milliseconds / 1000).toFixed(3))} s`;
}

export interface SilenceLimitOptions {
  /** The longest the server may stay silent, in milliseconds. */
  silenceMs: number;
  /** Cancels every request made through this fetch (e.g. the end of a model turn). */
  signal?: AbortSignal;
  /** The fetch underneath; the global one by default. */
  fetch?: typeof fetch;
}

/** AbortSignal.any, which Node has from 20.3; linked by hand before that. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  const linked = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      linked.abort(signal.reason);
      break;
    }
    signal.addEventListener('abort', () => linked.abort(signal.reason), { once: true, signal: linked.signal });
  }
  return linked.signal;
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/**
 * A `fetch` whose every request fails with SilenceTimeoutError when the server
 * sends nothing for `silenceMs`: no status line in time, or no next chunk of
 * the body in time. The body is handed on chunk by chunk as it arrives, so a
 * stream stays a stream.
 */
export function fetchWithSilenceLimit(options: SilenceLimitOptions): typeof fetch {
  const base = options.fetch ?? fetch;
  if (!(options.silenceMs > 0) || !Number.isFinite(options.silenceMs)) throw new RangeError(`silence limit must be a positive number of milliseconds, got ${options.silenceMs}`);
  return async (input, init = {}) => {
    const url = urlOf(input);
    const controller = new AbortController();
    const signals = [controller.signal, ...(init.signal ? [init.signal] : []), ...(options.signal ? [options.signal] : [])];
    const signal = signals.length === 1 ? controller.signal : anySignal(signals);
    let timer: NodeJS.Timeout | undefined;
    let timedOut: SilenceTimeoutError | undefined;
    let started = false;
    const disarm = () => {
      clearTimeout(timer);
      timer = undefined;
    };
    const arm = () => {
      disarm();
      timer = setTimeout(() => {
        timedOut = new SilenceTimeoutError(url, options.silenceMs, started);
        controller.abort(timedOut);
      }, options.silenceMs);
    };
    // Aborted from outside, or by the timer: no timer may outlive the request.
    signal.addEventListener('abort', disarm, { once: true });
    if (signal.aborted) throw signal.reason;
    arm();
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (error) {
      disarm();
      throw timedOut ?? error;
    }
    started = true;
    if (!response.body) {
      disarm();
      return response;
    }
    arm();
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(stream) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            disarm();
            stream.close();
            return;
          }
          arm();
          stream.enqueue(value);
        } catch (error) {
          disarm();
          stream.error(timedOut ?? error);
        }
      },
      async cancel(reason) {
        disarm();
        controller.abort(reason);
        await reader.cancel(reason).catch(() => undefined);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
