// Owns the dataset directory `env serve --out DIR` adds records to, one
// verified record at a time, so that `replay DIR` and `audit DIR` accept it
// whenever they look: episodes.jsonl plus a manifest.json that lists it (with
// its sha256, size and rows) and the lanes its records come from. A record is
// appended and fsynced, then the manifest is replaced atomically; a kill
// between the two leaves a whole record the next start lists, and a kill in
// the middle of the append leaves a torn last line the next start cuts off
// (no client was ever told it was written). Earlier records are never
// rewritten. One server at a time: a lock file beside the data says whose it is.

import { createHash, type Hash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { errorMessage, FactoryError } from '../core/errors.js';
import { failpoint } from '../core/failpoint.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { decodeUtf8 } from '../core/utf8-text.js';
import type { Lane } from '../lanes/lane.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { MANIFEST_FILE, MANIFEST_FORMAT, type Manifest } from '../records/manifest.js';
import { validateAgainst } from '../records/schema-registry.js';
import { EPISODES_FILE } from '../generation/dataset-directory.js';
import { EnvironmentError } from './environment-protocol.js';

/** What the manifest's `operation` says of a dataset `env serve` writes; it only ever adds to one of these. */
export const ENV_OPERATION = 'env';
const EMPTY_SHA256 = createHash('sha256').digest('hex');
/** Hidden, so no dataset operation lists it as a file of the dataset. */
export const LOCK_FILE = '.env-serve.lock';

export class EnvironmentDataset {
  private readonly ids = new Set<string>();
  private readonly reserved = new Set<string>();
  private readonly lanes = new Map<string, string>();
  private completed = 0;
  private fd: number | undefined;

  private constructor(
    readonly dir: string,
    private readonly hash: Hash,
    private bytes: number,
    records: readonly EpisodeRecord[],
  ) {
    for (const record of records) this.count(record);
  }

  /** Takes DIR for this server: creates it, or picks up a dataset an earlier `env serve` left there (repairing a torn last line). */
  static open(dir: string, lane: Lane): EnvironmentDataset {
    if (existsSync(dir) && !statSync(dir).isDirectory()) throw new FactoryError('usage', `--out ${dir} is a file`, { fix: 'choose a directory path for --out' });
    mkdirSync(dir, { recursive: true });
    takeLock(dir);
    try {
      const dataset = EnvironmentDataset.load(dir, lane);
      dataset.lanes.set(lane.name, lane.sha256);
      dataset.writeManifest();
      return dataset;
    } catch (error) {
      releaseLock(dir);
      throw error;
    }
  }

  private static load(dir: string, lane: Lane): EnvironmentDataset {
    const entries = readdirSync(dir).filter((entry) => !entry.startsWith('.'));
    const strangers = entries.filter((entry) => entry !== MANIFEST_FILE && entry !== EPISODES_FILE);
    const notOurs = (why: string) =>
      new FactoryError('usage', `--out ${dir} ${why}; env serve only adds records to a dataset directory it started`, { fix: 'choose a new or empty directory for --out; nothing in it was changed' });
    if (strangers.length > 0) throw notOurs(`holds ${strangers.slice(0, 3).join(', ')}${strangers.length > 3 ? ', …' : ''}, which is not part of an env dataset`);
    const manifestPath = join(dir, MANIFEST_FILE);
    const episodesPath = join(dir, EPISODES_FILE);
    let listed: Manifest['files'][number] | undefined;
    if (existsSync(manifestPath)) {
      let manifest: Manifest;
      try {
        manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
      } catch (error) {
        throw notOurs(`has a ${MANIFEST_FILE} that is not JSON (${errorMessage(error)})`);
      }
      if (validateAgainst('manifest.v1', manifest).length > 0) throw notOurs(`has a ${MANIFEST_FILE} that is not one of ours`);
      if (manifest.operation !== ENV_OPERATION) throw notOurs(`holds a dataset written by ${manifest.operation}`);
      listed = manifest.files.find((file) => file.path === EPISODES_FILE);
      if (manifest.files.some((file) => file.path !== EPISODES_FILE)) throw notOurs(`has a ${MANIFEST_FILE} that lists files an env dataset does not hold`);
    } else if (existsSync(episodesPath) && statSync(episodesPath).size > 0) {
      throw notOurs(`has an ${EPISODES_FILE} but no ${MANIFEST_FILE}`);
    }
    const text = existsSync(episodesPath) ? readFileSync(episodesPath) : Buffer.alloc(0);
    // What the manifest vouches for must be there unchanged: past it, only what a kill can leave (one record appended before its manifest, a torn line).
    const vouched = listed?.bytes ?? 0;
    if (text.length < vouched || createHash('sha256').update(text.subarray(0, vouched)).digest('hex') !== (listed?.sha256 ?? EMPTY_SHA256)) {
      throw new FactoryError('dataset_tampered', `${episodesPath} does not match ${manifestPath}: it was edited after env serve wrote it; nothing was changed`, {
        fix: `run \`episode-factory audit ${dir}\` to see what differs, and choose a new directory for --out`,
      });
    }
    // A torn last line is a record no client was told was written: cut it off.
    const end = text.lastIndexOf(0x0a) + 1;
    const unlisted = text.subarray(vouched, Math.max(vouched, end)).reduce((count, byte) => count + (byte === 0x0a ? 1 : 0), 0);
    if (unlisted > 1) {
      throw new FactoryError('dataset_tampered', `${episodesPath} has ${unlisted} whole lines past what ${manifestPath} lists; a kill leaves at most one: lines were added by hand; nothing was changed`, {
        fix: `run \`episode-factory audit ${dir}\` to see what differs, and choose a new directory for --out`,
      });
    }
    const kept = text.subarray(0, Math.max(end, vouched));
    const records: EpisodeRecord[] = [];
    const ids = new Set<string>();
    let offset = 0;
    for (let index = 0; offset < kept.length; index++) {
      const newline = kept.indexOf(0x0a, offset);
      const bytes = kept.subarray(offset, newline);
      offset = newline + 1;
      const where = `${episodesPath}:${index + 1}`;
      const corrupt = (reason: string) =>
        new FactoryError('dataset_corrupt', `${where} is not a record (${reason})`, { fix: `run \`episode-factory audit ${dir}\` to see what is wrong, or choose another --out` });
      let record: EpisodeRecord;
      try {
        record = parseBoundedJson(decodeUtf8(bytes), { maxDepth: MAX_RECORD_DEPTH, where: 'the line' }) as EpisodeRecord;
      } catch (error) {
        throw corrupt(errorMessage(error));
      }
      const errors = validateAgainst('episode-record.v1', record);
      if (errors.length > 0) throw corrupt(`${errors[0]!.path || '/'}: ${errors[0]!.reason}`);
      if (ids.has(record.record_id)) throw corrupt(`record_id ${record.record_id} is on an earlier line too`);
      ids.add(record.record_id);
      records.push(record);
    }
    if (end < text.length && end >= vouched) {
      const fd = openSync(episodesPath, 'r+');
      try {
        ftruncateSync(fd, end);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    for (const record of records) {
      const lineage = record.provenance?.lineage;
      if (lineage?.lane === lane.name && lineage.lane_sha256 !== lane.sha256) {
        throw new FactoryError('usage', `--out ${dir} holds records of lane ${lane.name} as it was before it changed (lane sha256 ${lineage.lane_sha256.slice(0, 12)}…, now ${lane.sha256.slice(0, 12)}…)`, {
          fix: 'choose a new directory for --out: one dataset holds one version of a lane',
        });
      }
    }
    const hash = createHash('sha256').update(kept);
    if (!existsSync(episodesPath)) writeFileSync(episodesPath, '');
    return new EnvironmentDataset(dir, hash, kept.length, records);
  }

  private count(record: EpisodeRecord): void {
    this.ids.add(record.record_id);
    const lineage = record.provenance?.lineage;
    if (lineage) this.lanes.set(lineage.lane, lineage.lane_sha256);
    if (record.result?.task_completed) this.completed++;
  }

  get records(): number {
    return this.ids.size;
  }

  /** Holds an id while its record is verified, so a second record of the same (task, seed, agent) is refused at once; returns the release. */
  reserve(id: string): () => void {
    if (this.ids.has(id) || this.reserved.has(id)) {
      throw new EnvironmentError(409, 'duplicate_record', `${this.dir} already holds record ${id}${this.ids.has(id) ? '' : ' (it is being written now)'}: one record per (task, seed, agent, rollout)`, {
        fix: 'to keep several rollouts of one task and seed (a GRPO group), number them in /reset (rollout: 0, 1, ...); else run another seed or name the agent differently',
        extra: { existing_record_id: id },
      });
    }
    this.reserved.add(id);
    return () => this.reserved.delete(id);
  }

  /** Appends one record line, durably, then lists it in the manifest. Synchronous: two appends never interleave. */
  append(record: EpisodeRecord, line: string): void {
    if (this.ids.has(record.record_id)) throw new Error(`record ${record.record_id} is already in ${this.dir}`);
    const bytes = Buffer.from(line + '\n', 'utf8');
    this.fd ??= openSync(join(this.dir, EPISODES_FILE), 'a');
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
    fsyncSync(this.fd);
    failpoint('env-record-appended');
    this.hash.update(bytes);
    this.bytes += bytes.length;
    this.count(record);
    this.writeManifest();
  }

  private writeManifest(): void {
    const lanes = [...this.lanes].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)).map(([name, sha256]) => ({ name, sha256 }));
    const only = lanes.length === 1 ? { lane: lanes[0]!.name, lane_sha256: lanes[0]!.sha256 } : {};
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      operation: ENV_OPERATION,
      lanes,
      ...only,
      factory_version: FACTORY_VERSION,
      counts: { records: this.ids.size, completed: this.completed },
      files: [{ path: EPISODES_FILE, sha256: this.hash.copy().digest('hex'), bytes: this.bytes, rows: this.ids.size }],
    };
    writeFileAtomically(join(this.dir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    releaseLock(this.dir);
  }
}

function takeLock(dir: string): void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new FactoryError('usage', `--out ${dir} is in use by another env serve (process ${pid})`, { fix: 'stop that one, or choose another --out' });
      }
      // Left by a server that was killed: ours now.
      rmSync(path, { force: true });
    }
  }
  throw new FactoryError('usage', `--out ${dir}: cannot take ${LOCK_FILE}`, { fix: 'choose another --out' });
}

function releaseLock(dir: string): void {
  const path = join(dir, LOCK_FILE);
  try {
    if (Number(readFileSync(path, 'utf8').trim()) === process.pid) rmSync(path, { force: true });
  } catch {
    // Already gone.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
