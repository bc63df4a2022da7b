// Owns a part's trace archive while the part runs: every episode of the part
// writes its events into this one file (each line carries its record_id), and
// the part seals it beside its records. Scripted episodes keep their events in
// memory until the part is sealed: --resume reruns an unsealed part anyway,
// so a crash loses nothing worth keeping. A model's episodes append line by
// line, interleaved as they happen, so a long run can be watched in
// parts/<start>-<end>.trace.jsonl. When the run is complete, the sealed
// archives are laid out as the dataset's traces/, one file per part, with the
// index that finds an episode's archive by its record id.

import { createHash, type Hash } from 'node:crypto';
import { closeSync, copyFileSync, fsyncSync, linkSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { moveIntoPlace, writeFileAtomically } from '../records/atomic-file.js';
import type { TraceEvent, TraceOutput } from '../runner/trace.js';
import { TRACE_INDEX_FILE, traceArchivePath, traceIndexLine, TRACES_DIR } from '../runner/trace-archive.js';
import { partName, partTraceFile, type PartSummary } from './run-parts.js';

export class PartTraceArchive {
  private readonly hash: Hash = createHash('sha256');
  private readonly pending: string[] | undefined;
  private fd: number | undefined;
  private sealed = false;
  private readonly openPath: string;

  /** `live`: lines go to the file as they are written; otherwise all at once when the part is sealed. */
  constructor(
    private readonly staging: string,
    private readonly start: number,
    end: number,
    live: boolean,
  ) {
    this.openPath = partTraceFile(staging, { start, end });
    if (live) {
      mkdirSync(dirname(this.openPath), { recursive: true });
      this.fd = openSync(this.openPath, 'w');
    } else {
      this.pending = [];
    }
  }

  /** One episode's view: its trace closes, the archive stays open for the others. */
  output(): TraceOutput {
    return { append: (event) => this.append(event), close() {} };
  }

  private append(event: TraceEvent): void {
    // Only an abandoned part (one that failed) has episodes still running after it: their events go nowhere.
    if (this.sealed) return;
    const line = JSON.stringify(event) + '\n';
    this.hash.update(line);
    if (this.pending) this.pending.push(line);
    else if (this.fd !== undefined) writeSync(this.fd, line);
  }

  /** Finishes the archive under the name of the part as sealed, [start, end); returns its sha256 for the part's marker. */
  seal(end: number): string {
    this.sealed = true;
    const path = partTraceFile(this.staging, { start: this.start, end });
    if (this.pending) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileAtomically(path, this.pending);
      this.pending.length = 0;
    } else if (this.fd !== undefined) {
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = undefined;
      moveIntoPlace(this.openPath, path);
    }
    return this.hash.digest('hex');
  }

  /** Drops an archive the part will not seal (it finished no episode, or failed). */
  abandon(): void {
    this.sealed = true;
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.openPath, { force: true });
  }
}

/**
 * Puts the sealed parts' archives in staging's traces/ as <part name>.jsonl,
 * with traces/index.jsonl naming each planned episode's archive in plan order
 * (every episode of a part is in its archive, written or rejected). The
 * archives are hard links, so the sealed parts stay whole until the dataset is
 * published. Returns the files, relative to staging, for the publish plan.
 */
export function stageTraceArchives(staging: string, parts: readonly PartSummary[], recordId: (planIndex: number) => string): string[] {
  const directory = join(staging, TRACES_DIR);
  // Whatever an earlier attempt left here is ours and is laid out again.
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const files: string[] = [];
  // Written a part at a time: the index of a run of millions of episodes is never held whole.
  function* indexChunks(): Generator<string> {
    for (const part of parts) {
      const archive = traceArchivePath(partName(part.start, part.end));
      linkOrCopy(partTraceFile(staging, part), join(staging, archive));
      files.push(archive);
      const lines: string[] = [];
      for (let planIndex = part.start; planIndex < part.end; planIndex++) lines.push(traceIndexLine({ record_id: recordId(planIndex), trace: archive }) + '\n');
      yield lines.join('');
    }
  }
  writeFileAtomically(join(staging, TRACE_INDEX_FILE), indexChunks());
  return [...files, TRACE_INDEX_FILE];
}

function linkOrCopy(source: string, target: string): void {
  try {
    linkSync(source, target);
  } catch {
    // A file system without hard links: the archive is copied.
    copyFileSync(source, target);
  }
}
