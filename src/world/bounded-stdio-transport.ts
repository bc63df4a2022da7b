// Owns the server side of MCP over stdio for the commands that face an outside
// client (`serve`, `proxy`): newline-delimited JSON-RPC in, as the SDK's
// StdioServerTransport reads it, but with every message read behind the limits
// of incoming-message. The SDK's transport ends the session when its buffer
// passes 10 MiB, which looked to the client like the server hanging up and to
// the command like the client leaving; it drops unparseable lines with no
// answer. Here a line past the limit is read past (never held: only its size
// and its id are kept), a bad line is answered with a JSON-RPC error, and the
// session goes on. It ends when the client closes its end, and only then.

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import { JsonRpcIdScanner } from '../core/json-rpc-id-scanner.js';
import { oversizedRefusal, readIncomingMessage, refusalAnswer, type Refusal } from './incoming-message.js';

/**
 * The longest line (one message, without its newline) a client may send over
 * stdio: the SDK's own stdio bound, so what passed before still passes.
 */
export const MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface BoundedStdioOptions {
  /** Default MAX_STDIO_MESSAGE_BYTES. */
  maxMessageBytes?: number;
  /** Told of each refused message after its answer is written (for the operator's stderr). */
  onRefused?: (refusal: Refusal) => void;
}

export class BoundedStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly maxBytes: number;
  /** The current line's pieces while it is within the limit. */
  private pieces: Buffer[] = [];
  private lineBytes = 0;
  /** Set while a line past the limit is being read past. */
  private oversized: JsonRpcIdScanner | undefined;
  private started = false;
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: BoundedStdioOptions = {},
  ) {
    this.maxBytes = options.maxMessageBytes ?? MAX_STDIO_MESSAGE_BYTES;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('BoundedStdioServerTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
    this.input.once('end', this.onEnd);
    this.input.once('close', this.onEnd);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Async, so a message JSON.stringify cannot write is a rejection, not a throw.
    return this.write(JSON.stringify(message) + '\n');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    // Pause only if nobody else reads it, as the SDK's transport does.
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.pieces = [];
    this.oversized = undefined;
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start < bytes.length && !this.closed) {
      const newline = bytes.indexOf(NEWLINE, start);
      this.take(bytes.subarray(start, newline === -1 ? bytes.length : newline));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  };

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  // The client closed its end: the session is over.
  private readonly onEnd = (): void => void this.close();

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.lineBytes += piece.length;
    if (this.oversized) return this.oversized.feed(piece);
    if (this.lineBytes <= this.maxBytes) {
      this.pieces.push(piece);
      return;
    }
    // Past the limit: keep reading for the id and the newline, holding nothing.
    this.oversized = new JsonRpcIdScanner();
    for (const held of this.pieces) this.oversized.feed(held);
    this.oversized.feed(piece);
    this.pieces = [];
  }

  private endLine(): void {
    const oversized = this.oversized;
    const size = this.lineBytes;
    const pieces = this.pieces;
    this.oversized = undefined;
    this.pieces = [];
    this.lineBytes = 0;
    if (oversized) return this.refuse(oversizedRefusal('the message', this.maxBytes, size, oversized.id));
    let line = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
    if (line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN) line = line.subarray(0, line.length - 1);
    // A blank line between messages says nothing; it is not an error.
    if (isBlank(line)) return;
    const incoming = readIncomingMessage(line, 'the message');
    if ('refusal' in incoming) return this.refuse(incoming.refusal);
    this.onmessage?.(incoming.message);
  }

  private refuse(refusal: Refusal): void {
    if (refusal.answer) this.write(JSON.stringify(refusalAnswer(refusal)) + '\n').catch((error: Error) => this.onerror?.(error));
    this.options.onRefused?.(refusal);
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed || this.output.destroyed) return reject(new Error('Not connected'));
      if (this.output.write(text)) resolve();
      else this.output.once('drain', resolve);
    });
  }
}

function isBlank(line: Buffer): boolean {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== CARRIAGE_RETURN) return false;
  return true;
}
