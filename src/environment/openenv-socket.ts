// Owns OpenEnv's WebSocket, `/ws`: one socket is one session, each reset on
// it opens an episode on a fresh world (ending the one before), and frames
// are answered one at a time, in order, exactly one reply each (`close` has
// none). A refused frame is an error frame and the socket stays open; a
// socket that closes, for any reason, closes its episode. Protocol pings are
// answered by the WebSocket library, so a client waiting on a slow model
// keeps its connection.

import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { JsonLimitError, parseBoundedJson } from '../core/bounded-json.js';
import { errorMessage } from '../core/errors.js';
import { isJsonObject, type JsonObject } from '../core/json-value.js';
import type { EnvironmentEpisode } from './environment-episode.js';
import type { EnvironmentHost } from './environment-host.js';
import { EnvironmentError, rewardOf } from './environment-protocol.js';
import { answerJsonRpc } from './openenv-mcp.js';
import { callToolObserved, listToolsObserved, messageObserved, OpenEnvError, openEnvErrorOf, parseOpenEnvAction, parseOpenEnvReset, resetObserved, stateOf, validationError, type Observed } from './openenv-protocol.js';

export interface OpenEnvSocketOptions {
  /** The largest frame read, in bytes (a larger one closes the socket with 1009, as the protocol says). */
  maxFrameBytes: number;
  /** How deep a frame may nest. */
  maxDepth: number;
  /** Throws an EnvironmentError for a request the server refuses before reading it (a browser's Origin, a foreign Host). */
  refuse(request: IncomingMessage): void;
  onLog(message: string): void;
}

export interface OpenEnvSockets {
  /** Sockets open now. */
  count(): number;
  /** Closes every socket (1001, going away); their episodes are closed by the host's shutdown. */
  close(): void;
}

/** Serves `/ws` on the HTTP server's upgrades; any other upgrade is refused with a JSON 404. */
export function attachOpenEnvSockets(server: HttpServer, host: EnvironmentHost, options: OpenEnvSocketOptions): OpenEnvSockets {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      options.refuse(request);
      const path = (request.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
      if (path !== '/ws') throw new EnvironmentError(404, 'not_found', `no WebSocket at ${path || '/'}`, { fix: "OpenEnv's socket is /ws" });
    } catch (error) {
      const refused = error instanceof EnvironmentError ? error : new EnvironmentError(500, 'internal', errorMessage(error));
      const body = JSON.stringify(refused.body());
      socket.end(`HTTP/1.1 ${refused.status} ${refused.status === 404 ? 'Not Found' : refused.status === 403 ? 'Forbidden' : 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => new OpenEnvSession(ws, host, options).start());
  });
  return {
    count: () => sockets.clients.size,
    close() {
      for (const ws of sockets.clients) ws.close(1001, 'the server is shutting down');
      sockets.close();
    },
  };
}

class OpenEnvSession {
  private episode: EnvironmentEpisode | undefined;
  /** Steps applied in the current episode: OpenEnv's step_count. */
  private steps = 0;
  private queue: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly host: EnvironmentHost,
    private readonly options: OpenEnvSocketOptions,
  ) {}

  start(): void {
    const { ws, host } = this;
    // OpenEnv says a full server in the first frame and closes: a client learns it before it sends anything.
    if (host.stopping || host.liveCount() >= host.maxEpisodes) {
      const reason = host.stopping ? 'the server is shutting down' : `Server at capacity: ${host.liveCount()}/${host.maxEpisodes} episodes running (--max-episodes). Cannot accept new connections.`;
      this.send(new OpenEnvError('CAPACITY_REACHED', reason, { active_sessions: host.liveCount(), max_sessions: host.maxEpisodes }).frame());
      ws.close(1000);
      this.ended = true;
      return;
    }
    ws.on('message', (data: RawData, isBinary: boolean) => {
      this.queue = this.queue.then(() => this.answer(data, isBinary));
    });
    ws.on('close', () => void this.end('its socket closed'));
    ws.on('error', (error) => this.options.onLog(`a /ws socket failed: ${errorMessage(error)}`));
  }

  private send(frame: JsonObject): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  private async answer(data: RawData, isBinary: boolean): Promise<void> {
    if (this.ended) return;
    try {
      const reply = await this.reply(data, isBinary);
      if (reply) this.send(reply);
    } catch (error) {
      this.send(this.refusal(error).frame());
    }
  }

  private refusal(error: unknown): OpenEnvError {
    if (error instanceof OpenEnvError) return error;
    if (error instanceof EnvironmentError) return openEnvErrorOf(error, this.host.maxEpisodes, this.host.liveCount());
    this.options.onLog(`a /ws frame failed: ${errorMessage(error)}`);
    return new OpenEnvError('EXECUTION_ERROR', `internal error: ${errorMessage(error)}`, { fix: 'this is a bug; the socket stays open. Report it with the frame that caused it' });
  }

  private async reply(data: RawData, isBinary: boolean): Promise<JsonObject | undefined> {
    if (isBinary) throw new OpenEnvError('INVALID_JSON', 'Invalid JSON: a frame is JSON text, and this one was binary');
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
    let frame: unknown;
    try {
      frame = parseBoundedJson(text, { maxDepth: this.options.maxDepth, where: 'the frame' });
    } catch (error) {
      if (error instanceof JsonLimitError) throw validationError('data', error.message);
      throw new OpenEnvError('INVALID_JSON', `Invalid JSON: ${errorMessage(error)}`);
    }
    if (!isJsonObject(frame)) throw validationError('type', 'a frame is an object {"type": ..., "data": ...}');
    const type = frame.type;
    const only = (...keys: string[]) => {
      const extra = Object.keys(frame as JsonObject).filter((key) => key !== 'type' && !keys.includes(key));
      if (extra.length > 0) throw validationError(extra[0]!, `is not a field of a ${String(type)} frame (extra fields are forbidden)`);
    };
    switch (type) {
      case 'reset':
        only('data');
        return { type: 'observation', data: { ...(await this.reset(frame.data)) } };
      case 'step':
        only('data');
        if (frame.data === undefined) throw validationError('data', 'is required: the action');
        return { type: 'observation', data: { ...(await this.step(frame.data)) } };
      case 'state':
        only();
        return { type: 'state', data: stateOf(this.episode, this.steps) };
      case 'close':
        only();
        // This runs in the queue, so it closes the episode itself rather than wait for the queue as end() does.
        this.ended = true;
        await this.closeEpisode('its client sent close');
        this.ws.close(1000);
        return undefined;
      case 'mcp':
        only('data');
        if (frame.data === undefined) throw validationError('data', 'is required: a JSON-RPC request');
        return { type: 'mcp', data: await answerJsonRpc(frame.data, { host: this.host, socket: { episode: () => this.episode } }) };
      default:
        throw new OpenEnvError('UNKNOWN_TYPE', `Unknown message type: ${typeof type === 'string' ? type : JSON.stringify(type) ?? 'none'}`, {
          fix: 'the types are reset, step, state, close and mcp',
        });
    }
  }

  private async reset(data: unknown): Promise<Observed> {
    const request = parseOpenEnvReset(data, this.host.lane);
    await this.closeEpisode('a new reset on its socket');
    const { episode, start } = await this.host.open(request);
    this.episode = episode;
    this.steps = 0;
    return resetObserved(episode, start, start.done ? rewardOf(episode.record!) : undefined);
  }

  private async step(data: unknown): Promise<Observed> {
    const action = parseOpenEnvAction(data);
    const episode = this.episode;
    if (!episode) throw new OpenEnvError('EXECUTION_ERROR', 'no episode on this socket yet', { fix: 'send {"type": "reset", "data": {"seed": 0}} first' });
    if (action.type === 'list_tools') return listToolsObserved(episode.tools(), episode.phase === 'done');
    const answer = await this.host.step(episode.id, action.action, action.type === 'message' ? action.clientIds : []);
    if (answer.applied) this.steps++;
    return action.type === 'call_tool' ? callToolObserved(action.toolName, answer) : messageObserved(answer);
  }

  private async closeEpisode(reason: string): Promise<void> {
    const episode = this.episode;
    this.episode = undefined;
    if (!episode) return;
    // Already closed (idle, or deleted through the native API): nothing to do.
    await this.host.close(episode.id, reason).catch(() => undefined);
  }

  private async end(reason: string): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.queue.catch(() => undefined);
    await this.closeEpisode(reason);
  }
}
