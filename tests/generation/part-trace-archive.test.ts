// A part's trace archive: a model run's events are on disk as they happen,
// interleaved across episodes, a scripted part's only when it is sealed, and
// the archive is sealed under the range the part actually finished.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PartTraceArchive } from '../../src/generation/part-trace-archive.js';
import { partName, PARTS_DIR, partTraceFile } from '../../src/generation/run-parts.js';
import { readTrace, Trace } from '../../src/runner/trace.js';
import { temporaryDirectory } from '../helpers.js';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('part trace archive', () => {
  it('writes a model run\'s events as they happen, interleaved, and seals them under the range the part finished', async () => {
    const staging = temporaryDirectory();
    const archive = new PartTraceArchive(staging, 10, 20, true);
    const a = new Trace('run-1', archive.output(), undefined, { recordId: 'a' });
    const b = new Trace('run-1', archive.output(), undefined, { recordId: 'b' });
    a.phase('generate').emit('started', {});
    b.phase('generate').emit('started', {});
    const live = partTraceFile(staging, { start: 10, end: 20 });
    assert.equal(readFileSync(live, 'utf8').split('\n').length, 3, 'both events are on disk before either episode ends');
    a.phase('verify').emit('record_written', {});
    a.close();
    b.phase('verify').emit('record_rejected', {});
    b.close();
    // Stopped after two episodes: the part is sealed as [10, 12).
    const hash = archive.seal(12);
    const sealed = partTraceFile(staging, { start: 10, end: 12 });
    assert.equal(existsSync(live), false);
    assert.equal(hash, sha256(sealed));
    const { events, problems } = await readTrace(sealed);
    assert.deepEqual(problems, []);
    assert.deepEqual(events.map((event) => [event.record_id, event.seq, event.event_type]), [
      ['a', 1, 'started'],
      ['b', 1, 'started'],
      ['a', 2, 'record_written'],
      ['b', 2, 'record_rejected'],
    ]);
  });

  it('keeps a scripted part\'s events until it is sealed, and leaves nothing of a part that finished no episode', () => {
    const staging = temporaryDirectory();
    const archive = new PartTraceArchive(staging, 0, 5, false);
    new Trace('run-2', archive.output(), undefined, { recordId: 'a' }).phase('generate').emit('started', {});
    assert.equal(existsSync(join(staging, PARTS_DIR)) && readdirSync(join(staging, PARTS_DIR)).length > 0, false, 'nothing is written before the seal');
    const hash = archive.seal(5);
    assert.equal(hash, sha256(partTraceFile(staging, { start: 0, end: 5 })));

    const abandoned = new PartTraceArchive(staging, 5, 9, true);
    abandoned.abandon();
    assert.deepEqual(readdirSync(join(staging, PARTS_DIR)), [`${partName(0, 5)}.trace.jsonl`]);
  });
});
