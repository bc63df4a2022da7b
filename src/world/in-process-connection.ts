// Owns connecting an MCP client to a server inside this process over the SDK's
// InMemoryTransport, with the fault layer between them when the episode has
// faults, and closing whatever was opened if the connection fails half-way.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { jsonSchemaValidator, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { ToolDescriptor } from '../core/conversation.js';
import { FaultLayer } from './faults/fault-layer.js';
import type { FaultState } from './faults/fault-state.js';
import type { ServerFault } from './server-fault.js';

export const CLIENT_INFO = { name: 'episode-factory', version: '1' } as const;

/**
 * The SDK client checks structuredContent against output schemas itself, but
 * only for the tools of the last tools/list page it read: a paginated catalog
 * switches it off for the others. The harness checks every result against the
 * catalog it listed (all pages) instead, so the client's own check accepts all.
 */
const harnessChecksOutput: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

export interface Connection {
  client: Client;
  /**
   * Ends this use of the connection. `clean` says the episode using it ended
   * without an error, a timeout, a cancelled call or a dropped transport: a
   * kept connection (kept-connections.ts) then goes back to its pool. Without
   * it, and for every other connection, everything is closed.
   */
  close(ending?: { clean: boolean }): Promise<void>;
  /**
   * A kept connection's catalog as an earlier session on it listed it, when
   * a listing now is sure to answer the same (see kept-connections.ts);
   * `remember` takes the first listing. Absent: list it.
   */
  listed?: { catalog: readonly ToolDescriptor[] | undefined; remember(catalog: readonly ToolDescriptor[]): void };
  /**
   * After a call timed out: whether the server itself stopped answering (a
   * hung child), so the session must restart it. Absent for in-process
   * worlds, which cannot hang on their own.
   */
  unresponsive?(): Promise<boolean>;
}

export interface ConnectOptions {
  /** Put a fault layer between the client and the server, with this episode's fault state. */
  faults?: FaultState;
  onLayerError?: (error: Error) => void;
  /** A server world's child crashed, hung, wrote garbage or left processes behind. */
  onServerFault?: (fault: ServerFault) => void;
}

export function createClient(): Client {
  return new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: harnessChecksOutput });
}

export async function connectInProcess(server: Server, options: ConnectOptions = {}): Promise<Connection> {
  const client = createClient();
  let layer: FaultLayer | undefined;
  const close = async () => {
    await client.close().catch(() => undefined);
    await layer?.close().catch(() => undefined);
    await server.close().catch(() => undefined);
  };
  try {
    if (!options.faults) {
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await server.connect(serverTransport);
      await client.connect(clientTransport);
    } else {
      const [clientTransport, layerDown] = InMemoryTransport.createLinkedPair();
      const [layerUp, serverTransport] = InMemoryTransport.createLinkedPair();
      await server.connect(serverTransport);
      layer = new FaultLayer(options.faults, layerDown, layerUp, { onError: options.onLayerError });
      await layer.start();
      await client.connect(clientTransport);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { client, close };
}
