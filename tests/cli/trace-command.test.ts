// `episode-factory trace <dir> <record_id>`: one episode's events out of the
// run's per-part trace archives, found through traces/index.jsonl.

import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

describe('trace', () => {
  const out = temporaryDirectory();
  let ids: string[] = [];
  before(() => {
    const generated = runCli(REPO_ROOT, 'generate', 'tool-world-faults-v1', '--seeds', '0..3', '--format', 'jsonl', '--out', out, '--quiet');
    assert.equal(generated.status, 0, generated.stderr);
    ids = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { record_id: string }).record_id);
  });

  it("prints an episode's events in order: generate, then replay, then verify", () => {
    const id = ids[ids.length - 1]!;
    const result = runCli(REPO_ROOT, 'trace', out, id);
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    const seqs = lines.map((line) => Number(line.trim().split(/\s+/)[0]));
    assert.deepEqual(seqs, seqs.map((_, index) => index + 1), 'seq 1..n, one line per event');
    const phases = lines.map((line) => line.trim().split(/\s+/)[3]);
    assert.equal(phases[0], 'generate');
    assert.equal(phases[phases.length - 1], 'verify');
    assert.ok(phases.indexOf('replay') > phases.lastIndexOf('generate'), 'replay after generation');
    assert.match(result.stdout, /episode_started/);
    assert.match(result.stdout, /record_written/);
  });

  it('filters one pass with --phase and gives the events as JSON with --json', () => {
    const id = ids[0]!;
    const result = runCli(REPO_ROOT, 'trace', out, id, '--phase', 'replay', '--json');
    assert.equal(result.status, 0, result.stderr);
    const parsed = JSON.parse(result.stdout) as { record_id: string; events: { phase: string; record_id: string; event_type: string }[]; problems: unknown[] };
    assert.equal(parsed.record_id, id);
    assert.ok(parsed.events.length > 3);
    assert.ok(parsed.events.every((event) => event.phase === 'replay' && event.record_id === id));
    assert.deepEqual(parsed.problems, []);
  });

  it('exits 2 naming the fix for a record id the index does not know, and for a directory without traces', () => {
    const unknown = runCli(REPO_ROOT, 'trace', out, 'no-such-record');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no-such-record is not in .*index\.jsonl.*fix: pass a record_id/);
    const empty = runCli(REPO_ROOT, 'trace', temporaryDirectory(), ids[0]!);
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /holds no trace index/);
  });

  it('reports a torn archive line on stderr and exits 1, still printing the events it could read', () => {
    const id = ids[0]!;
    const index = readFileSync(join(out, 'traces', 'index.jsonl'), 'utf8');
    const archive = (JSON.parse(index.split('\n').find((line) => line.includes(JSON.stringify(id)))!) as { trace: string }).trace;
    appendFileSync(join(out, archive), `{"schema":"episode-factory.trace.v1","record_id":${JSON.stringify(id)},"seq":`);
    const result = runCli(REPO_ROOT, 'trace', out, id);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /torn last line/);
    assert.match(result.stdout, /episode_started/);
  });
});
