// Owns reading a `text/event-stream` body (Server-Sent Events, as OpenAI-
// compatible servers stream chat completions) into its JSON data payloads.
// It follows the SSE line rules (LF, CRLF or CR line endings; `data:` with or
// without its one space; several `data:` lines of one event joined by LF;
// comment lines and `event:`, `id:`, `retry:` ignored; a blank line ends an
// event) and the OpenAI convention that `data: [DONE]` ends the stream. It
// judges nothing about the chunks themselves: whether a stream that ended
// without `[DONE]` was cut off is for the caller, which reads `sawDone`.

import { InfrastructureError } from '../chat-model.js';
import { textPreview } from '../../core/clipped-text.js';

/** The longest one event may grow: a chunk is a token or a tool-call fragment, far below this. */
export const MAX_EVENT_CHARS = 1 << 20;

/** The body is not an event stream of JSON payloads. */
export class SseProtocolError extends InfrastructureError {}

export interface SseReadOptions {
  /** Default MAX_EVENT_CHARS. */
  maxEventChars?: number;
}

/**
 * The JSON payloads of an event stream, in order, as an async iterable that
 * can be read once. Errors of the body (a silence limit, a dropped
 * connection) come out of the iteration as they are; a payload that is not
 * JSON, or an event past the size cap, is an SseProtocolError.
 */
export class SseReader implements AsyncIterable<unknown> {
  /** Whether `data: [DONE]` arrived; reading stops there. */
  sawDone = false;
  /** JSON payloads handed out so far. */
  events = 0;
  /** Lines read so far (for messages). */
  lines = 0;
  /** The first non-blank line that is not an SSE field or comment: a body that is something else (an HTML page) shows itself here. */
  strayLine: string | null = null;
  /** The data of an event the stream ended in the middle of (no blank line after it), when it was not whole JSON. */
  cutOffTail: string | null = null;

  readonly #body: ReadableStream<Uint8Array>;
  readonly #maxEventChars: number;
  #used = false;

  constructor(body: ReadableStream<Uint8Array>, options: SseReadOptions = {}) {
    this.#body = body;
    this.#maxEventChars = options.maxEventChars ?? MAX_EVENT_CHARS;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<unknown, void, undefined> {
    if (this.#used) throw new Error('an SseReader can be read only once');
    this.#used = true;
    const reader = this.#body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    /** Data lines of the event being read. */
    let data: string[] | null = null;
    let dataChars = 0;
    let eventLine = 0;

    const payloadOf = (text: string, line: number): { done: true } | { value: unknown } | undefined => {
      // A keep-alive with an empty payload carries nothing to parse.
      if (text.trim() === '') return undefined;
      if (text.trim() === '[DONE]') return { done: true };
      try {
        return { value: JSON.parse(text) };
      } catch {
        throw new SseProtocolError(`the event stream's data at line ${line} is not JSON (${textPreview(text)})`);
      }
    };

    /** Reads one line; returns a payload when the line ends an event. */
    const takeLine = (line: string): { done: true } | { value: unknown } | undefined => {
      this.lines += 1;
      if (line === '') {
        if (data === null) return undefined;
        const text = data.join('\n');
        data = null;
        dataChars = 0;
        return payloadOf(text, eventLine);
      }
      if (line.startsWith(':')) return undefined;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        if (data === null) {
          data = [];
          eventLine = this.lines;
        }
        dataChars += value.length + 1;
        if (dataChars > this.#maxEventChars) throw new SseProtocolError(`an event of the stream (from line ${eventLine}) runs past ${this.#maxEventChars} characters`);
        data.push(value);
      } else if (field !== 'event' && field !== 'id' && field !== 'retry' && this.strayLine === null && line.trim() !== '') {
        this.strayLine = line;
      }
      return undefined;
    };

    try {
      for (;;) {
        const { done, value } = await reader.read();
        buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
        let start = 0;
        for (let at = 0; at < buffer.length; at++) {
          const char = buffer[at];
          if (char !== '\n' && char !== '\r') continue;
          // A CR at the very end may be the first half of a CRLF split across chunks: wait for the next one.
          if (char === '\r' && at === buffer.length - 1 && !done) break;
          const line = buffer.slice(start, at);
          if (char === '\r' && buffer[at + 1] === '\n') at++;
          start = at + 1;
          const taken = takeLine(line);
          if (!taken) continue;
          if ('done' in taken) {
            this.sawDone = true;
            return;
          }
          this.events += 1;
          yield taken.value;
        }
        buffer = buffer.slice(start);
        if (buffer.length + dataChars > this.#maxEventChars) throw new SseProtocolError(`an event of the stream (from line ${this.lines + 1}) runs past ${this.#maxEventChars} characters`);
        if (!done) continue;
        // The end. A last line without its line ending still counts; an event without its blank line is whole only if its data is.
        if (buffer !== '') {
          const taken = takeLine(buffer);
          buffer = '';
          if (taken && 'value' in taken) {
            this.events += 1;
            yield taken.value;
          }
        }
        // Set by takeLine, which the compiler cannot see into.
        const pending = data as string[] | null;
        if (pending !== null) {
          const text = pending.join('\n');
          data = null;
          if (text.trim() === '[DONE]') {
            this.sawDone = true;
            return;
          }
          let value: unknown;
          try {
            value = text.trim() === '' ? undefined : JSON.parse(text);
          } catch {
            this.cutOffTail = text;
            return;
          }
          if (value !== undefined) {
            this.events += 1;
            yield value;
          }
        }
        return;
      }
    } finally {
      // Stopped early (`[DONE]`, an error, a caller that broke off): the rest of the body is not wanted.
      await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
  }
}

export function readServerSentEvents(body: ReadableStream<Uint8Array>, options?: SseReadOptions): SseReader {
  return new SseReader(body, options);
}
