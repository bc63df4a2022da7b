import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JsonlAppender } from '../../src/records/jsonl.js';
import { FactoryError } from '../../src/core/errors.js';
import { readTrace, Trace, TRACE_SCHEMA } from '../../src/runner/trace.js';
import { readEpisodeTrace, TRACE_INDEX_FILE, traceArchivePath, traceIndexLine } from '../../src/runner/trace-archive.js';
import { temporaryDirectory } from '../helpers.js';

describe('trace', () => {
  it('writes schema, run id, monotonic seq and phase on every line, flushed as it goes', () => {
    const path = join(temporaryDirectory(), 'trace.jsonl');
    const trace = new Trace('run-1', new JsonlAppender(path));
    trace.phase('generate').emit('a', { x: 1 });
    assert.equal(readFileSync(path, 'utf8').split('\n').length, 2, 'the first event is on disk before the trace is closed');
    trace.phase('replay').emit('b', {});
    trace.phase('generate').emit('c', {});
    trace.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines.map((line) => [line.schema, line.run_id, line.seq, line.phase, line.event_type]), [
      [TRACE_SCHEMA, 'run-1', 1, 'generate', 'a'],
      [TRACE_SCHEMA, 'run-1', 2, 'replay', 'b'],
      [TRACE_SCHEMA, 'run-1', 3, 'generate', 'c'],
    ]);
    assert.ok(lines.every((line) => typeof line.t_ms === 'number'));
  });

  it('reads back a trace whose last line was torn, reporting it instead of failing', async () => {
    const path = join(temporaryDirectory(), 'trace.jsonl');
    const trace = new Trace('run-2', new JsonlAppender(path));
    trace.phase('generate').emit('first', {});
    trace.phase('generate').emit('second', {});
    trace.close();
    appendFileSync(path, '{"schema":"episode-factory.trace.v1","run_id":"run-2","seq":3,"t_m');
    const { events, problems } = await readTrace(path);
    assert.deepEqual(events.map((event) => event.event_type), ['first', 'second']);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.line, 3);
    assert.match(problems[0]!.reason, /torn/);
  });

  it('flags events out of sequence or from another format', async () => {
    const path = join(temporaryDirectory(), 'trace.jsonl');
    appendFileSync(path, JSON.stringify({ schema: TRACE_SCHEMA, run_id: 'r', seq: 2, t_ms: 0, phase: 'g', event_type: 'x', data: {} }) + '\n');
    appendFileSync(path, JSON.stringify({ schema: TRACE_SCHEMA, run_id: 'r', seq: 1, t_ms: 0, phase: 'g', event_type: 'y', data: {} }) + '\n');
    appendFileSync(path, JSON.stringify({ something: 'else' }) + '\n');
    const { problems } = await readTrace(path);
    assert.deepEqual(problems.map((problem) => problem.line), [2, 3]);
  });

  it('reads a part archive whose episodes interleave, checking each episode\'s seq on its own', async () => {
    const { dataset, archive } = interleavedArchive();
    const { events, problems } = await readTrace(join(dataset, archive));
    assert.deepEqual(problems, []);
    assert.deepEqual(events.map((event) => [event.record_id, event.seq]), [['a', 1], ['b', 1], ['a', 2], ['b', 2], ['a', 3]]);
  });

  it('finds one episode through the index and reads only its events, in seq order', async () => {
    const { dataset } = interleavedArchive();
    const a = await readEpisodeTrace(dataset, 'a');
    assert.deepEqual(a.problems, []);
    assert.deepEqual(a.events.map((event) => [event.seq, event.phase, event.event_type]), [[1, 'generate', 'started'], [2, 'replay', 'replayed'], [3, 'verify', 'record_written']]);
    const b = await readEpisodeTrace(dataset, 'b');
    assert.deepEqual(b.events.map((event) => event.event_type), ['started', 'record_rejected']);
    await assert.rejects(readEpisodeTrace(dataset, 'c'), (error: unknown) => error instanceof FactoryError && /c is not in .*index\.jsonl/.test(error.message));
    await assert.rejects(readEpisodeTrace(temporaryDirectory(), 'a'), (error: unknown) => error instanceof FactoryError && /holds no trace index/.test(error.message));
  });

  it('reports a torn archive tail as a problem of the episode read, not a throw', async () => {
    const { dataset, archive } = interleavedArchive();
    appendFileSync(join(dataset, archive), '{"schema":"episode-factory.trace.v1","run_id":"run-3","record_id":"b","seq":3,"t_m');
    for (const id of ['a', 'b']) {
      const { events, problems } = await readEpisodeTrace(dataset, id);
      assert.equal(events.length, id === 'a' ? 3 : 2, 'the events before the tear are kept');
      assert.equal(problems.length, 1);
      assert.equal(problems[0]!.line, 6);
      assert.match(problems[0]!.reason, /torn/);
    }
  });
});

/** A dataset with one part archive holding two episodes whose events interleave (as a model run with --concurrency 2 writes them), and its index. */
function interleavedArchive(): { dataset: string; archive: string } {
  const dataset = temporaryDirectory();
  const archive = traceArchivePath('000000000-000000002');
  mkdirSync(join(dataset, 'traces'), { recursive: true });
  const shared = new JsonlAppender(join(dataset, archive));
  // Each episode closes its own trace; the archive stays open for the other.
  const output = { append: (event: unknown) => shared.append(event), close() {} };
  const a = new Trace('run-3', output, undefined, { recordId: 'a' });
  const b = new Trace('run-3', output, undefined, { recordId: 'b' });
  a.phase('generate').emit('started', {});
  b.phase('generate').emit('started', {});
  a.phase('replay').emit('replayed', {});
  b.phase('verify').emit('record_rejected', { stage: 'replay' });
  a.phase('verify').emit('record_written', {});
  a.close();
  b.close();
  shared.close();
  writeFileSync(join(dataset, TRACE_INDEX_FILE), ['a', 'b'].map((id) => traceIndexLine({ record_id: id, trace: archive }) + '\n').join(''));
  return { dataset, archive };
}
