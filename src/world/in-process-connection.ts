// Owns connecting an MCP client to a server inside this process over the SDK's
// InMemoryTransport. The client reuses the factory's compiled validators for
// output schemas instead of compiling them again for every episode.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { jsonSchemaValidator, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { compileValidator, formatFieldErrors } from '../core/schema-validator.js';
import { FaultLayer } from './faults/fault-layer.js';
import type { FaultState } from './faults/fault-state.js';

export const CLIENT_INFO = { name: 'episode-factory', version: '1' } as const;

const cachedValidators: jsonSchemaValidator = {
  getValidator<T>(schema: object): JsonSchemaValidator<T> {
    const validate = compileValidator(schema);
    return (input: unknown) => {
      const errors = validate(input);
      return errors.length === 0
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: formatFieldErrors(errors) };
    };
  },
};

export interface Connection {
  client: Client;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Put a fault layer between the client and the server, with this episode's fault state. */
  faults?: FaultState;
  onLayerError?: (error: Error) => void;
}

export function createClient(): Client {
  return new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: cachedValidators });
}

export async function connectInProcess(server: Server, options: ConnectOptions = {}): Promise<Connection> {
  const client = createClient();
  if (!options.faults) {
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await client.connect(clientTransport);
    return {
      client,
      async close() {
        await client.close();
        await server.close();
      },
    };
  }
  const [clientTransport, layerDown] = InMemoryTransport.createLinkedPair();
  const [layerUp, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const layer = new FaultLayer(options.faults, layerDown, layerUp, { onError: options.onLayerError });
  await layer.start();
  await client.connect(clientTransport);
  return {
    client,
    async close() {
      await client.close();
      await layer.close();
      await server.close();
    },
  };
}
