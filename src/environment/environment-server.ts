// Owns `env serve`: a lane's tasks as an environment over HTTP (JSON bodies,
// loopback by default) for online training. /reset opens an episode on a
// fresh world of its own and answers with the opening messages and the tool
// catalog; /step takes one assistant message and answers with what the world
// and the user said back, and, when the episode ends, with the reward the
// hidden predicates give. A finished episode can be kept as a record,
// replay-verified on another fresh world before it is accepted and appended
// to the dataset directory of --out. Episodes are independent: each has its
// own world, a crash in one is answered to its client and closes it alone,
// an idle one is closed after a timeout, and on shutdown every world is
// disposed before the process ends. A body is bounded in size and depth
// before anything reads it; a step that fails in a way the server did not
// foresee closes its episode at once rather than leave it half-stepped.

import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { JsonLimitError, MAX_JSON_DEPTH, MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { errorMessage } from '../core/errors.js';
import type { JsonObject } from '../core/json-value.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { recordId } from '../lanes/episode-plan.js';
import type { Lane } from '../lanes/lane.js';
import { formatSeedRange } from '../lanes/seed-range.js';
import { JsonlAppender } from '../records/jsonl.js';
import { validateAgainst } from '../records/schema-registry.js';
import { Trace } from '../runner/trace.js';
import { replayRecord } from '../verify/replay.js';
import { EPISODES_FILE } from '../generation/dataset-directory.js';
import { EnvironmentDataset } from './environment-dataset.js';
import { EnvironmentEpisode } from './environment-episode.js';
import { EnvironmentError, parseEpisodeId, parseResetRequest, parseStepRequest, remoteVariant, rewardOf } from './environment-protocol.js';
import { resolveProducedAt } from '../generation/produced-at.js';

export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * How deep a request body may nest. A tool call's arguments sit five levels
 * down in a /step body and are held to MAX_JSON_DEPTH on their own (so the
 * error names them); like a record line, the body has room to spare past that.
 */
export const MAX_BODY_DEPTH = MAX_RECORD_DEPTH;
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_EPISODES = 64;
/** How many closed episodes are remembered, so a late request hears why its episode is gone. */
const REMEMBERED_CLOSURES = 10_000;

export interface EnvironmentServerOptions {
  lane: Lane;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  idleTimeoutMs?: number;
  maxEpisodes?: number;
  /** A dataset directory finished episodes' records are appended to. */
  outDir?: string;
  /** A directory for one trace file per episode. */
  traceDir?: string;
  /** Lines worth telling the operator (an episode crashed, one closed for idleness). */
  onLog?: (message: string) => void;
}

export interface EnvironmentServer {
  url: string;
  host: string;
  port: number;
  /** Episodes open (live or finished and not yet closed). */
  episodes(): number;
  /** Stops accepting, closes every episode (disposing its world), finishes record writes in flight, and releases --out. */
  close(): Promise<void>;
}

const ROUTES = ['GET /', 'GET /tasks', 'POST /reset', 'POST /step', 'GET /episodes', 'GET /episodes/{id}', 'DELETE /episodes/{id}', 'POST /episodes/{id}/record'];
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export async function startEnvironmentServer(options: EnvironmentServerOptions): Promise<EnvironmentServer> {
  const { lane } = options;
  const host = options.host ?? '127.0.0.1';
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxEpisodes = options.maxEpisodes ?? DEFAULT_MAX_EPISODES;
  const producedAt = resolveProducedAt(lane);
  const log = options.onLog ?? (() => {});
  const dataset = options.outDir !== undefined ? EnvironmentDataset.open(options.outDir, lane) : undefined;
  if (options.traceDir !== undefined) mkdirSync(options.traceDir, { recursive: true });

  const episodes = new Map<string, EnvironmentEpisode>();
  const closed = new Map<string, string>();
  const closing = new Set<Promise<void>>();
  const recording = new Set<Promise<unknown>>();
  let shuttingDown = false;

  const retire = (episode: EnvironmentEpisode, reason: string): Promise<void> => {
    if (episodes.get(episode.id) === episode) episodes.delete(episode.id);
    closed.set(episode.id, reason);
    if (closed.size > REMEMBERED_CLOSURES) closed.delete(closed.keys().next().value!);
    const done = episode.close(reason).catch((error: unknown) => log(`episode ${episode.id}: closing failed: ${errorMessage(error)}`));
    closing.add(done);
    void done.finally(() => closing.delete(done));
    return done;
  };

  const find = (id: string): EnvironmentEpisode => {
    const episode = episodes.get(id);
    if (episode) return episode;
    const reason = closed.get(id);
    if (reason !== undefined) throw new EnvironmentError(404, 'episode_closed', `episode ${id} was closed: ${reason}`, { fix: 'start a new episode with /reset' });
    throw new EnvironmentError(404, 'unknown_episode', `no episode ${id} here`, { fix: 'pass the episode_id /reset answered with (episodes do not survive a restart of the server)' });
  };

  /** Marks the episode in use for the length of a request, so the idle timeout leaves it alone. */
  const using = async <T>(episode: EnvironmentEpisode, work: () => Promise<T>): Promise<T> => {
    episode.busy++;
    episode.lastSeen = performance.now();
    try {
      return await work();
    } finally {
      episode.busy--;
      episode.lastSeen = performance.now();
    }
  };

  // Idleness is housekeeping, never part of a record: the wall clock is fine here.
  const sweeper = setInterval(
    () => {
      const now = performance.now();
      for (const episode of episodes.values()) {
        if (episode.busy === 0 && now - episode.lastSeen >= idleMs) {
          const reason = `closed after ${idleMs / 1000} s without a request (--idle-timeout)`;
          log(`episode ${episode.id} ${reason}`);
          void retire(episode, reason);
        }
      }
    },
    Math.max(10, Math.min(5_000, Math.floor(idleMs / 4))),
  );
  sweeper.unref();

  const info = (): JsonObject => ({
    lane: lane.name,
    lane_sha256: lane.sha256,
    description: lane.document.description,
    world: lane.document.world.name,
    tasks: lane.document.tasks.map((task) => ({ id: task.id, title: task.title })),
    seeds: formatSeedRange(lane.seeds),
    seed_range: { from: lane.seeds.from, to: lane.seeds.to },
    limits: { ...lane.limits },
    produced_at: producedAt,
    factory_version: FACTORY_VERSION,
    records: dataset ? { out: dataset.dir, written: dataset.records } : null,
    episodes: { open: episodes.size, live: liveCount(), max: maxEpisodes },
    idle_timeout_seconds: idleMs / 1000,
    routes: ROUTES,
  });

  const liveCount = () => [...episodes.values()].filter((episode) => episode.live).length;

  const reset = async (body: unknown): Promise<JsonObject> => {
    if (shuttingDown) throw new EnvironmentError(503, 'shutting_down', 'the server is shutting down');
    const request = parseResetRequest(body, lane);
    if (liveCount() >= maxEpisodes) {
      throw new EnvironmentError(503, 'too_many_episodes', `${maxEpisodes} episodes are running, the most this server runs at once (--max-episodes)`, {
        fix: 'finish or DELETE /episodes/{id} some of them (an idle one closes by itself after --idle-timeout), or restart with a larger --max-episodes',
      });
    }
    const id = randomUUID();
    // A trace file is named after the record the episode would make and the episode itself: many episodes may share a (task, seed).
    const traceName = `${recordId(lane.name, request.task.id, request.seed, remoteVariant(request.agent))}.${id}.jsonl`;
    const episode = new EnvironmentEpisode({
      id,
      lane,
      task: request.task,
      seed: request.seed,
      agent: request.agent,
      producedAt,
      ...(options.traceDir !== undefined ? { trace: new Trace(id, new JsonlAppender(join(options.traceDir, traceName), 'truncate')) } : {}),
    });
    episodes.set(episode.id, episode);
    try {
      const start = await using(episode, () => episode.start());
      return {
        episode_id: episode.id,
        task: { id: request.task.id, title: request.task.title },
        seed: request.seed,
        agent: { ...request.agent },
        messages: start.messages as unknown as JsonObject[],
        tools: start.tools as unknown as JsonObject[],
        done: start.done,
        ...(start.done ? { reward: rewardOf(episode.record!) as unknown as JsonObject } : {}),
      };
    } catch (error) {
      void retire(episode, `it failed to start: ${errorMessage(error)}`);
      throw error;
    }
  };

  /**
   * A failure no answer was planned for, met while serving a request on an
   * episode: the runner may already hold the step's action, so the episode
   * cannot go on. It is closed at once (its world disposed, its
   * --max-episodes slot freed, later requests told why), and its client hears
   * a 500 that says so. Records already kept are not touched.
   */
  const unforeseen = (episode: EnvironmentEpisode, what: string, error: unknown): EnvironmentError => {
    const message = errorMessage(error);
    log(`episode ${episode.id}: ${what} failed: ${message}`);
    void retire(episode, `its ${what} failed: ${message}`);
    return new EnvironmentError(500, `${what}_failed`, `episode ${episode.id} was closed: its ${what} failed (${message})`, {
      fix: 'start a new episode with /reset; other episodes are not affected. This is a bug: report it with the request that caused it',
    });
  };

  const step = async (body: unknown): Promise<JsonObject> => {
    const request = parseStepRequest(body);
    const episode = find(request.episodeId);
    try {
      const answer = await using(episode, () => episode.step(request.action, request.clientIds));
      return {
        episode_id: episode.id,
        ...(answer as unknown as JsonObject),
        ...(answer.reward ? { outcome: answer.reward.outcome } : {}),
      };
    } catch (error) {
      if (!(error instanceof EnvironmentError)) throw unforeseen(episode, 'step', error);
      if (error.status === 500) {
        log(`episode ${episode.id} crashed: ${error.message}`);
        void retire(episode, `it crashed: ${errorMessage(episode.failure)}`);
      }
      throw error;
    }
  };

  const status = (id: string): JsonObject => {
    const episode = find(id);
    try {
      return episode.status();
    } catch (error) {
      throw unforeseen(episode, 'status', error);
    }
  };

  const keep = async (id: string): Promise<JsonObject> => {
    const episode = find(id);
    return using(episode, async () => {
      const record = episode.record;
      if (!record) {
        throw new EnvironmentError(409, 'not_done', `episode ${id} is not done (${episode.phase}); only a finished episode becomes a record`, { fix: 'step it until the answer says done: true' });
      }
      const answer = (written: boolean): JsonObject => ({
        record_id: record.record_id,
        verified: true,
        written,
        ...(dataset ? { out: dataset.dir, file: join(dataset.dir, EPISODES_FILE), records: dataset.records } : {}),
        reward: rewardOf(record) as unknown as JsonObject,
        record: record as unknown as JsonObject,
        // The record's exact bytes: a line of episodes.jsonl must be exactly what its replay writes.
        line: JSON.stringify(record),
      });
      if (episode.writtenRecordId !== undefined) return answer(dataset !== undefined);
      const release = dataset?.reserve(record.record_id);
      const work = (async () => {
        const line = JSON.stringify(record);
        const schemaErrors = validateAgainst('episode-record.v1', record);
        if (schemaErrors.length > 0) {
          throw new EnvironmentError(500, 'record_invalid', `the record of episode ${id} does not fit the record schema`, { problems: schemaErrors.map((error) => `${error.path || '/'}: ${error.reason}`) });
        }
        // Replay what will be stored, on a fresh world: a record is accepted only when it comes back byte for byte.
        const trace = episode.tracePhase('replay');
        const verdict = await replayRecord(JSON.parse(line), lane, { text: line, schemaChecked: true, ...(trace ? { trace } : {}) });
        if (!verdict.ok) {
          throw new EnvironmentError(422, 'replay_failed', `the record of episode ${id} did not replay on a fresh world, so it was not kept`, {
            problems: verdict.problems,
            fix: 'the world or its server is not deterministic; see `episode-factory lanes check` and the problems listed',
          });
        }
        if (dataset) {
          if (shuttingDown) throw new EnvironmentError(503, 'shutting_down', 'the server is shutting down; the record was not written');
          dataset.append(record, line);
        }
        episode.writtenRecordId = record.record_id;
        episode.writtenToOut = dataset !== undefined;
      })();
      recording.add(work);
      try {
        await work;
      } finally {
        recording.delete(work);
        release?.();
      }
      return answer(dataset !== undefined);
    });
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (request.headers.origin !== undefined) {
      throw new EnvironmentError(403, 'forbidden_origin', `requests from web pages (Origin ${String(request.headers.origin)}) are refused`, {
        fix: 'call the environment from a program (Python, curl), not from a browser page',
      });
    }
    if (LOOPBACK_NAMES.has(host) && !LOOPBACK_NAMES.has(hostName(request.headers.host))) {
      throw new EnvironmentError(403, 'forbidden_host', `the Host header ${JSON.stringify(request.headers.host ?? '')} is not this loopback server`, { fix: `use ${url}` });
    }
    const path = (request.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const method = request.method ?? 'GET';
    const route = routeOf(path);
    if (!route) throw new EnvironmentError(404, 'not_found', `no route ${path}`, { fix: `the routes are: ${ROUTES.join(', ')}` });
    if (!route.methods.includes(method)) {
      response.setHeader('Allow', route.methods.join(', '));
      throw new EnvironmentError(405, 'method_not_allowed', `${method} ${path} is not served; ${path} takes ${route.methods.join(', ')}`, { fix: `the routes are: ${ROUTES.join(', ')}` });
    }
    const body = method === 'POST' ? await readJson(request, `the body of POST ${path}`) : undefined;
    switch (route.name) {
      case 'info':
        return send(response, 200, info());
      case 'reset':
        return send(response, 200, await reset(body));
      case 'step':
        return send(response, 200, await step(body));
      case 'episodes':
        return send(response, 200, { episodes: [...episodes.values()].map((episode) => episode.status(false)) });
      case 'episode': {
        const id = parseEpisodeId(decodedSegment(route.id!), 'path');
        if (method === 'GET') return send(response, 200, status(id));
        const episode = find(id);
        await retire(episode, 'deleted by the client');
        return send(response, 200, { episode_id: id, closed: true, state: episode.phase });
      }
      case 'record':
        return send(response, 200, await keep(parseEpisodeId(decodedSegment(route.id!), 'path')));
    }
  };

  /** A path segment as sent; a malformed %-escape is the client's mistake, not the server's. */
  const decodedSegment = (segment: string): string => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new EnvironmentError(400, 'invalid_request', `path: "${segment.slice(0, 80)}" is not a well-formed percent-encoded episode id`, { field: 'path', fix: 'use the episode_id /reset answered' });
    }
  };

  const server: HttpServer = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const refused =
        error instanceof EnvironmentError
          ? error
          : new EnvironmentError(500, 'internal', `internal error: ${errorMessage(error)}`, { fix: 'this is a bug; the server goes on. Report it with the request that caused it' });
      if (!(error instanceof EnvironmentError)) log(`request ${request.method} ${request.url} failed: ${errorMessage(error)}`);
      if (response.headersSent) return void response.end();
      send(response, refused.status, refused.body());
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    clearInterval(sweeper);
    dataset?.close();
    throw error;
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closedDown: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    episodes: () => episodes.size,
    close() {
      closedDown ??= (async () => {
        shuttingDown = true;
        clearInterval(sweeper);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Record writes in flight finish first: a record is written whole or not at all.
        await Promise.allSettled([...recording]);
        await Promise.all([...episodes.values()].map((episode) => retire(episode, 'the server is shutting down')));
        await Promise.all([...closing]);
        // Answers to requests in flight have been sent by now; nothing else is waited for.
        setTimeout(() => server.closeAllConnections(), 200).unref();
        await stopped;
        dataset?.close();
      })();
      return closedDown;
    },
  };
}

interface Route {
  name: 'info' | 'reset' | 'step' | 'episodes' | 'episode' | 'record';
  methods: string[];
  id?: string;
}

function routeOf(path: string): Route | undefined {
  if (path === '/' || path === '/tasks') return { name: 'info', methods: ['GET'] };
  if (path === '/reset') return { name: 'reset', methods: ['POST'] };
  if (path === '/step') return { name: 'step', methods: ['POST'] };
  if (path === '/episodes') return { name: 'episodes', methods: ['GET'] };
  const record = /^\/episodes\/([^/]+)\/record$/.exec(path);
  if (record) return { name: 'record', methods: ['POST'], id: record[1]! };
  const episode = /^\/episodes\/([^/]+)$/.exec(path);
  if (episode) return { name: 'episode', methods: ['GET', 'DELETE'], id: episode[1]! };
  return undefined;
}

function hostName(header: string | undefined): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

/** The body as JSON, within MAX_BODY_DEPTH; past MAX_BODY_BYTES the rest is read and dropped, so the client hears the 413. */
async function readJson(request: IncomingMessage, where: string): Promise<unknown> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) throw tooLarge();
  const text = await new Promise<string | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.once('error', reject);
    request.once('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
  });
  if (text === undefined) throw tooLarge();
  if (text.trim() === '') return undefined;
  try {
    return parseBoundedJson(text, { maxDepth: MAX_BODY_DEPTH, maxBytes: MAX_BODY_BYTES, where });
  } catch (error) {
    if (error instanceof JsonLimitError) {
      if (error.limit === 'size') throw tooLarge();
      throw new EnvironmentError(400, 'body_too_deep', error.message, {
        fix: `a request is a few levels deep, and a tool call's arguments may nest at most ${MAX_JSON_DEPTH} levels: send flatter JSON`,
      });
    }
    throw new EnvironmentError(400, 'invalid_json', `the body is not JSON: ${errorMessage(error)}`, { fix: 'send a JSON object with Content-Type: application/json' });
  }
}

function tooLarge(): EnvironmentError {
  return new EnvironmentError(413, 'body_too_large', `the body is larger than ${MAX_BODY_BYTES} bytes`, { fix: 'send one assistant message per /step' });
}

function send(response: ServerResponse, status: number, body: JsonObject): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}
