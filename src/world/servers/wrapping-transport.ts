// Owns a transport that wraps another, towards a server world's child: it
// starts the inner one with its callbacks passed up, and sends and closes
// through it. The layers between the fault layer and the child (argument
// guards, normalisation) each change only the messages they care about.

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export abstract class WrappingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(protected readonly inner: Transport) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message) => this.receive(message);
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
  }

  /** A message from the inner transport on its way up: passed on as it is, unless a layer rewrites it. */
  protected receive(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
