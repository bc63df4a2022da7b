import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JsonlAppender } from '../../src/records/jsonl.js';
import { readTrace, Trace, TRACE_SCHEMA } from '../../src/runner/trace.js';
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
});
