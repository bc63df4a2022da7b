// Owns one HTTP request and its answer as the engine's APIs write them: a JSON
// body, or a stream of NDJSON lines (Ollama) or server-sent events (OpenAI),
// the request's body read as JSON with a size limit, and an abort signal that
// fires when the client goes away, so generation stops instead of running on
// for nobody. Timestamps are the server's own: they are never part of a record.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequest } from './chat-translation.js';

/** A chat request with a long tool catalog is tens of kilobytes; this is far above any. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export class Exchange {
  private readonly controller = new AbortController();

  constructor(
    readonly request: IncomingMessage,
    private readonly response: ServerResponse,
  ) {
    // The response closing before it finished means the client left.
    response.once('close', () => {
      if (!response.writableFinished) this.controller.abort(new Error('the client closed the connection'));
    });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get started(): boolean {
    return this.response.headersSent;
  }

  now(): string {
    return new Date().toISOString();
  }

  async body(): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.request) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) throw new BadRequest(`the request body is over ${MAX_BODY_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new BadRequest(`the request body is not JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new BadRequest('the request body must be a JSON object');
    return parsed as Record<string, unknown>;
  }

  json(status: number, body: unknown): void {
    this.response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
    this.response.end(JSON.stringify(body));
  }

  text(status: number, body: string): void {
    this.response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
    this.response.end(body);
  }

  openStream(contentType: 'application/x-ndjson' | 'text/event-stream'): void {
    this.response.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache' });
    this.response.flushHeaders();
  }

  /** One NDJSON line. */
  frame(body: unknown): void {
    if (!this.response.destroyed) this.response.write(`${JSON.stringify(body)}\n`);
  }

  /** One server-sent event's data. */
  event(data: string): void {
    if (!this.response.destroyed) this.response.write(`data: ${data}\n\n`);
  }

  end(): void {
    if (!this.response.destroyed) this.response.end();
  }
}
