// Owns the episodes of one `env serve`, whatever protocol a client speaks
// (the native HTTP API, OpenEnv's WebSocket and JSON-RPC): opening one on a
// fresh world within --max-episodes, stepping it, keeping its record
// (replay-verified on another fresh world before it is accepted and appended
// to --out), closing it (by request, for idleness, after a failure nobody
// planned for) and closing them all on shutdown. A failure in one episode is
// answered to its client and closes that episode alone.

import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { JsonObject } from '../core/json-value.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { specRecordId } from '../lanes/episode-plan.js';
import type { Lane } from '../lanes/lane.js';
import { formatSeedRange } from '../lanes/seed-range.js';
import type { Action } from '../policy/policy-contract.js';
import { JsonlAppender } from '../records/jsonl.js';
import { validateAgainst } from '../records/schema-registry.js';
import { Trace } from '../runner/trace.js';
import { replayRecord } from '../verify/replay.js';
import { EPISODES_FILE } from '../generation/dataset-directory.js';
import { resolveProducedAt } from '../generation/produced-at.js';
import { EnvironmentDataset } from './environment-dataset.js';
import { EnvironmentEpisode, type EpisodeStart, type StepAnswer } from './environment-episode.js';
import { EnvironmentError, remoteSpec, rewardOf, type ResetRequest } from './environment-protocol.js';

export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_EPISODES = 64;
/** How many closed episodes are remembered, so a late request hears why its episode is gone. */
const REMEMBERED_CLOSURES = 10_000;

export interface EnvironmentHostOptions {
  lane: Lane;
  idleTimeoutMs?: number;
  maxEpisodes?: number;
  /** A dataset directory finished episodes' records are appended to. */
  outDir?: string;
  /** A directory for one trace file per episode. */
  traceDir?: string;
  /** Lines worth telling the operator (an episode crashed, one closed for idleness). */
  onLog?: (message: string) => void;
}

export class EnvironmentHost {
  readonly lane: Lane;
  readonly maxEpisodes: number;
  readonly idleMs: number;
  readonly producedAt: string;
  private readonly log: (message: string) => void;
  private readonly dataset: EnvironmentDataset | undefined;
  private readonly episodes = new Map<string, EnvironmentEpisode>();
  private readonly closed = new Map<string, string>();
  private readonly closing = new Set<Promise<void>>();
  private readonly recording = new Set<Promise<unknown>>();
  private readonly sweeper: NodeJS.Timeout;
  private shuttingDown = false;
  private shutDown: Promise<void> | undefined;

  constructor(private readonly options: EnvironmentHostOptions) {
    this.lane = options.lane;
    this.idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.maxEpisodes = options.maxEpisodes ?? DEFAULT_MAX_EPISODES;
    this.producedAt = resolveProducedAt(this.lane);
    this.log = options.onLog ?? (() => {});
    this.dataset = options.outDir !== undefined ? EnvironmentDataset.open(options.outDir, this.lane) : undefined;
    if (options.traceDir !== undefined) mkdirSync(options.traceDir, { recursive: true });
    // Idleness is housekeeping, never part of a record: the wall clock is fine here.
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(5_000, Math.floor(this.idleMs / 4))));
    this.sweeper.unref();
  }

  /** Episodes open (live, or finished and not yet closed). */
  get size(): number {
    return this.episodes.size;
  }

  /** Episodes holding a world: what --max-episodes bounds. */
  liveCount(): number {
    let live = 0;
    for (const episode of this.episodes.values()) if (episode.live) live++;
    return live;
  }

  get stopping(): boolean {
    return this.shuttingDown;
  }

  /** The lane and the server's state, as `GET /` answers (the caller adds its routes). */
  info(): JsonObject {
    const { lane } = this;
    return {
      lane: lane.name,
      lane_sha256: lane.sha256,
      description: lane.document.description,
      world: lane.document.world.name,
      tasks: lane.document.tasks.map((task) => ({ id: task.id, title: task.title })),
      seeds: formatSeedRange(lane.seeds),
      seed_range: { from: lane.seeds.from, to: lane.seeds.to },
      limits: { ...lane.limits },
      produced_at: this.producedAt,
      factory_version: FACTORY_VERSION,
      records: this.dataset ? { out: this.dataset.dir, written: this.dataset.records } : null,
      episodes: { open: this.episodes.size, live: this.liveCount(), max: this.maxEpisodes },
      idle_timeout_seconds: this.idleMs / 1000,
    };
  }

  /** Refuses a new episode when the server is stopping or full, before any world is made. */
  checkCapacity(): void {
    if (this.shuttingDown) throw new EnvironmentError(503, 'shutting_down', 'the server is shutting down');
    if (this.liveCount() >= this.maxEpisodes) {
      throw new EnvironmentError(503, 'too_many_episodes', `${this.maxEpisodes} episodes are running, the most this server runs at once (--max-episodes)`, {
        fix: 'finish or close some of them (an idle one closes by itself after --idle-timeout), or restart with a larger --max-episodes',
      });
    }
  }

  /** Opens an episode on a fresh world and waits for its first turn. */
  async open(request: ResetRequest): Promise<{ episode: EnvironmentEpisode; start: EpisodeStart }> {
    this.checkCapacity();
    const id = randomUUID();
    const { lane } = this;
    // A trace file is named after the record the episode would make and the episode itself: many episodes may share a (task, seed).
    const traceName = `${specRecordId(remoteSpec(lane, request))}.${id}.jsonl`;
    const episode = new EnvironmentEpisode({
      id,
      lane,
      task: request.task,
      seed: request.seed,
      agent: request.agent,
      ...(request.rollout === undefined ? {} : { rollout: request.rollout }),
      producedAt: this.producedAt,
      ...(this.options.traceDir !== undefined ? { trace: new Trace(id, new JsonlAppender(join(this.options.traceDir, traceName), 'truncate')) } : {}),
    });
    this.episodes.set(episode.id, episode);
    try {
      return { episode, start: await this.using(episode, () => episode.start()) };
    } catch (error) {
      void this.retire(episode, `it failed to start: ${errorMessage(error)}`);
      throw error;
    }
  }

  /** The open episode `id`; a closed or unknown one is a 404 that says which. */
  find(id: string): EnvironmentEpisode {
    const episode = this.episodes.get(id);
    if (episode) return episode;
    const reason = this.closed.get(id);
    if (reason !== undefined) throw new EnvironmentError(404, 'episode_closed', `episode ${id} was closed: ${reason}`, { fix: 'start a new episode with /reset' });
    throw new EnvironmentError(404, 'unknown_episode', `no episode ${id} here`, { fix: 'pass the episode_id /reset answered with (episodes do not survive a restart of the server)' });
  }

  list(): JsonObject[] {
    return [...this.episodes.values()].map((episode) => episode.status(false));
  }

  async step(id: string, action: Action, clientIds: readonly (string | undefined)[]): Promise<StepAnswer> {
    const episode = this.find(id);
    try {
      return await this.using(episode, () => episode.step(action, clientIds));
    } catch (error) {
      if (!(error instanceof EnvironmentError)) throw this.unforeseen(episode, 'step', error);
      if (error.status === 500) {
        this.log(`episode ${episode.id} crashed: ${error.message}`);
        void this.retire(episode, `it crashed: ${errorMessage(episode.failure)}`);
      }
      throw error;
    }
  }

  status(id: string): JsonObject {
    const episode = this.find(id);
    try {
      return episode.status();
    } catch (error) {
      throw this.unforeseen(episode, 'status', error);
    }
  }

  /** Closes episode `id` (its world disposed); answers once it is. */
  async close(id: string, reason: string): Promise<EnvironmentEpisode> {
    const episode = this.find(id);
    await this.retire(episode, reason);
    return episode;
  }

  /**
   * Keeps a finished episode as a record: replayed on another fresh world and
   * accepted only when it comes back byte for byte, then appended to --out.
   * Keeping the same episode again answers the same.
   */
  async keep(id: string): Promise<JsonObject> {
    const episode = this.find(id);
    const { dataset } = this;
    return this.using(episode, async () => {
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
        const verdict = await replayRecord(JSON.parse(line), this.lane, { text: line, schemaChecked: true, ...(trace ? { trace } : {}) });
        if (!verdict.ok) {
          throw new EnvironmentError(422, 'replay_failed', `the record of episode ${id} did not replay on a fresh world, so it was not kept`, {
            problems: verdict.problems,
            fix: 'the world or its server is not deterministic; see `episode-factory lanes check` and the problems listed',
          });
        }
        if (dataset) {
          if (this.shuttingDown) throw new EnvironmentError(503, 'shutting_down', 'the server is shutting down; the record was not written');
          dataset.append(record, line);
        }
        episode.writtenRecordId = record.record_id;
        episode.writtenToOut = dataset !== undefined;
      })();
      this.recording.add(work);
      try {
        await work;
      } finally {
        this.recording.delete(work);
        release?.();
      }
      return answer(dataset !== undefined);
    });
  }

  /** Stops taking episodes, lets record writes in flight finish, closes every episode (disposing its world) and releases --out. */
  shutdown(): Promise<void> {
    this.shutDown ??= (async () => {
      this.shuttingDown = true;
      clearInterval(this.sweeper);
      // Record writes in flight finish first: a record is written whole or not at all.
      await Promise.allSettled([...this.recording]);
      await Promise.all([...this.episodes.values()].map((episode) => this.retire(episode, 'the server is shutting down')));
      await Promise.all([...this.closing]);
      this.dataset?.close();
    })();
    return this.shutDown;
  }

  /** Releases --out when the server never started listening. */
  abandon(): void {
    clearInterval(this.sweeper);
    this.dataset?.close();
  }

  private sweep(): void {
    const now = performance.now();
    for (const episode of this.episodes.values()) {
      if (episode.busy === 0 && now - episode.lastSeen >= this.idleMs) {
        const reason = `closed after ${this.idleMs / 1000} s without a request (--idle-timeout)`;
        this.log(`episode ${episode.id} ${reason}`);
        void this.retire(episode, reason);
      }
    }
  }

  private retire(episode: EnvironmentEpisode, reason: string): Promise<void> {
    if (this.episodes.get(episode.id) === episode) this.episodes.delete(episode.id);
    this.closed.set(episode.id, reason);
    if (this.closed.size > REMEMBERED_CLOSURES) this.closed.delete(this.closed.keys().next().value!);
    const done = episode.close(reason).catch((error: unknown) => this.log(`episode ${episode.id}: closing failed: ${errorMessage(error)}`));
    this.closing.add(done);
    void done.finally(() => this.closing.delete(done));
    return done;
  }

  /** Marks the episode in use for the length of a request, so the idle timeout leaves it alone. */
  private async using<T>(episode: EnvironmentEpisode, work: () => Promise<T>): Promise<T> {
    episode.busy++;
    episode.lastSeen = performance.now();
    try {
      return await work();
    } finally {
      episode.busy--;
      episode.lastSeen = performance.now();
    }
  }

  /**
   * A failure no answer was planned for, met while serving a request on an
   * episode: the runner may already hold the step's action, so the episode
   * cannot go on. It is closed at once (its world disposed, its
   * --max-episodes slot freed, later requests told why), and its client hears
   * a 500 that says so. Records already kept are not touched.
   */
  private unforeseen(episode: EnvironmentEpisode, what: string, error: unknown): EnvironmentError {
    const message = errorMessage(error);
    this.log(`episode ${episode.id}: ${what} failed: ${message}`);
    void this.retire(episode, `its ${what} failed: ${message}`);
    return new EnvironmentError(500, `${what}_failed`, `episode ${episode.id} was closed: its ${what} failed (${message})`, {
      fix: 'start a new episode with /reset; other episodes are not affected. This is a bug: report it with the request that caused it',
    });
  }
}
