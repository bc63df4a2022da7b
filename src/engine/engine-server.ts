// Owns the engine's HTTP server: a GGUF model served on loopback behind
// Ollama's REST API and the OpenAI-compatible /v1 routes, so the factory's
// `ollama:` and `openai:` policies (and any other client of either API) drive
// a real llama.cpp model without Ollama installed. Routes, the status of each
// failure, and a clean close that stops any generation still running.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stat } from 'node:fs/promises';
import { FactoryError } from '../core/errors.js';
import { BadRequest } from './chat-translation.js';
import { GgufModel, type LoadOptions } from './gguf-model.js';
import { Exchange } from './http-exchange.js';
import { OllamaApi } from './ollama-api.js';
import { openAIError, OpenAIApi } from './openai-api.js';
import { ServedModel } from './served-model.js';

export interface EngineOptions extends LoadOptions {
  /** The path of the GGUF file. */
  modelPath: string;
  /** The served name (`name:tag`); default: the file's name without .gguf, tagged latest. */
  name?: string;
  /** Loopback by default: the engine has no authentication. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The engine's version string, answered at /api/version. */
  version: string;
}

export interface EngineServer {
  /** `http://host:port`: the Ollama host; the OpenAI base URL is this plus /v1. */
  url: string;
  served: ServedModel;
  close(): Promise<void>;
}

type Route = (exchange: Exchange) => Promise<void> | void;

export async function startEngine(options: EngineOptions): Promise<EngineServer> {
  const file = await stat(options.modelPath).catch(() => undefined);
  const model = await GgufModel.load(options.modelPath, options);
  let served: ServedModel;
  try {
    served = new ServedModel(model, options.name ?? GgufModel.defaultName(options.modelPath), options.version, (file?.mtime ?? new Date(0)).toISOString());
  } catch (error) {
    await model.dispose();
    throw error;
  }
  const ollama = new OllamaApi(served);
  const openai = new OpenAIApi(served);
  const withBody = (handler: (exchange: Exchange, body: Record<string, unknown>) => Promise<void> | void): Route => async (exchange) => handler(exchange, await exchange.body());
  const routes: Record<string, Route> = {
    'GET /': (exchange) => exchange.text(200, 'Ollama is running'),
    'HEAD /': (exchange) => exchange.text(200, ''),
    'GET /api/version': (exchange) => ollama.version(exchange),
    'GET /api/tags': (exchange) => ollama.tags(exchange),
    'GET /api/ps': (exchange) => ollama.ps(exchange),
    'POST /api/show': withBody((exchange, body) => ollama.show(exchange, body)),
    'POST /api/chat': withBody((exchange, body) => ollama.chat(exchange, body)),
    'POST /api/generate': withBody((exchange, body) => ollama.generate(exchange, body)),
    'GET /v1/models': (exchange) => openai.models(exchange),
    'POST /v1/chat/completions': withBody((exchange, body) => openai.chatCompletions(exchange, body)),
  };

  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((request, response) => {
    const exchange = new Exchange(request, response);
    const path = (request.url ?? '/').split('?')[0]!;
    const route = routes[`${request.method} ${path}`];
    const isOpenAI = path.startsWith('/v1/');
    if (!route) {
      const known = Object.keys(routes).some((key) => key.endsWith(` ${path}`));
      if (isOpenAI) return openAIError(exchange, known ? 405 : 404, known ? `${request.method} is not allowed on ${path}` : `no route ${path}`);
      return exchange.text(known ? 405 : 404, known ? '405 method not allowed' : '404 page not found');
    }
    Promise.resolve()
      .then(() => route(exchange))
      .catch((error: unknown) => {
        if (exchange.signal.aborted) return exchange.end();
        const status = error instanceof BadRequest || (error instanceof FactoryError && error.code === 'usage') ? 400 : 500;
        const message = error instanceof FactoryError && error.fix ? `${error.message} (${error.fix})` : error instanceof Error ? error.message : String(error);
        if (exchange.started) {
          // A stream already under way ends with the error as its last line, as Ollama ends one.
          if (isOpenAI) exchange.event(JSON.stringify({ error: { message, type: 'server_error' } }));
          else exchange.frame({ error: message });
          return exchange.end();
        }
        if (isOpenAI) return openAIError(exchange, status, message, status === 400 ? 'invalid_request_error' : 'server_error');
        exchange.json(status, { error: message });
      });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await model.dispose();
    const code = (error as NodeJS.ErrnoException).code;
    throw new FactoryError('usage', `cannot listen on ${host}:${options.port ?? 0}: ${code ?? (error as Error).message}`, { fix: code === 'EADDRINUSE' ? 'pick another --port, or --port 0 for a free one' : 'pick a port between 1024 and 65535' });
  }
  const address = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    served,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await closed;
        await model.dispose();
      })()),
  };
}
