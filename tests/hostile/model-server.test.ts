// A model server that misbehaves, against the real CLI in a child process.
// Ollama here is the fake that speaks its wire protocol (or a bare TCP host
// that accepts connections and never answers), and every child runs under a
// hard kill timer: a regression that hangs fails its test instead of hanging
// the suite. What must hold: every request has a timeout, the process exits
// when its work is done, and a server's failure (HTTP error, dropped
// connection, silence, an answer that is not its protocol) is never passed
// off as the model's behaviour: such episodes are kept out of episodes.jsonl,
// counted, and fail the run past --max-infra-errors. A model that answers
// well-formed HTTP with unusable text is behaviour, and stays a record.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { validateAgainst } from '../../src/records/schema-registry.js';
import { NOT_OLLAMA_PAGE, startFakeOllama, startSilentHost, type FakeFailure, type FakeOllama } from '../fixtures/fake-ollama.js';
import { CLI, REPO_ROOT, runWithin, temporaryDirectory } from '../helpers.js';

const MODEL = 'fake-qwen:1b';

interface BoundedRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** True when the hard timer had to kill the child: it did not exit by itself. */
  killed: boolean;
  seconds: number;
}

/** Runs the CLI in `cwd` and kills it (SIGKILL) if it is still running after `limitMs`. */
async function runBounded(cwd: string, limitMs: number, args: string[]): Promise<BoundedRun> {
  const environment = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  delete environment.OLLAMA_HOST;
  const { timedOut, ...run } = await runWithin(limitMs, process.execPath, [CLI, ...args], { cwd, env: environment });
  return { ...run, killed: timedOut };
}

function assertExited(run: BoundedRun, within: number): void {
  assert.equal(run.killed, false, `still running after ${run.seconds.toFixed(1)}s, killed; stdout: ${run.stdout}\nstderr: ${run.stderr}`);
  assert.ok(run.seconds < within, `took ${run.seconds.toFixed(1)}s, expected under ${within}s; stderr: ${run.stderr}`);
}

/** generate with the model on two episodes of one task, JSONL only. */
function generateArgs(host: string, out: string, ...extra: string[]): string[] {
  return ['generate', 'tool-world-v1', '--policy', `ollama:${MODEL}`, '--ollama-host', host, '--task', 'find-open-bugs', '--seeds', '0..1', '--format', 'jsonl', '--out', out, '--quiet', ...extra];
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

async function withFake<T>(work: (fake: FakeOllama) => Promise<T>): Promise<T> {
  const fake = await startFakeOllama();
  try {
    return await work(fake);
  } finally {
    await fake.close();
  }
}

describe('a host that accepts connections and never answers', () => {
  it('generate: exits 2 within the start-up timeout (10 s) with one line and the fix, and writes nothing', { timeout: 60_000 }, async () => {
    const silent = await startSilentHost();
    try {
      const workdir = temporaryDirectory();
      const run = await runBounded(workdir, 40_000, generateArgs(silent.url, 'never'));
      assertExited(run, 30);
      assert.equal(run.status, 2, run.stderr);
      assert.ok(run.seconds >= 9, `gave up after ${run.seconds.toFixed(1)}s, before the 10 s start-up timeout`);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /^episode-factory: Ollama at http:\/\/127\.0\.0\.1:\d+ did not answer \/api\/version within 10 s — fix: point --ollama-host \(or OLLAMA_HOST\) at a running Ollama/);
      assert.ok(silent.connections() >= 1, 'the host was asked');
      assert.equal(existsSync(join(workdir, 'never')), false);
    } finally {
      await silent.close();
    }
  });

  it('gate: exits 2 within --model-timeout when it is shorter than the start-up timeout', { timeout: 30_000 }, async () => {
    const silent = await startSilentHost();
    try {
      const run = await runBounded(temporaryDirectory(), 20_000, ['gate', 'tool-world-v1', '--policy', `ollama:${MODEL}`, '--ollama-host', silent.url, '--turns', '1', '--model-timeout', '1']);
      assertExited(run, 10);
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, /did not answer \/api\/version within 1 s — fix: /);
    } finally {
      await silent.close();
    }
  });

  it('generate: a start-up check whose /api/show never answers is reported the same way', { timeout: 30_000 }, async () => {
    await withFake(async (fake) => {
      fake.fail('show', { kind: 'hang' });
      const run = await runBounded(temporaryDirectory(), 20_000, generateArgs(fake.url, 'never', '--model-timeout', '1'));
      assertExited(run, 10);
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, /did not answer \/api\/show within 1 s — fix: /);
    });
  });

  it('dedup --embed: exits 2 within the start-up timeout (10 s), naming the host', { timeout: 60_000 }, async () => {
    const silent = await startSilentHost();
    try {
      const workdir = temporaryDirectory();
      const run = await runBounded(workdir, 40_000, ['dedup', join(REPO_ROOT, 'datasets', 'tool-world-v1'), '--out', join(workdir, 'dedup'), '--embed', `ollama:${MODEL}`, '--ollama-host', silent.url, '--quiet']);
      assertExited(run, 30);
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, /Ollama at http:\/\/127\.0\.0\.1:\d+ did not answer \/api\/tags within 10 s — fix: /);
    } finally {
      await silent.close();
    }
  });
});

describe('dedup --embed against a server whose /api/embed hangs', () => {
  it('exits 2 within --model-timeout instead of waiting forever', { timeout: 30_000 }, async () => {
    await withFake(async (fake) => {
      fake.fail('embed', { kind: 'hang' });
      const workdir = temporaryDirectory();
      const run = await runBounded(workdir, 20_000, [
        'dedup', join(REPO_ROOT, 'datasets', 'tool-world-v1'), '--out', join(workdir, 'dedup'), '--embed', `ollama:${MODEL}`, '--ollama-host', fake.url, '--model-timeout', '1', '--quiet',
      ]);
      assertExited(run, 12);
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, /did not answer \/api\/embed for "fake-qwen:1b" within 1 s — fix: check the server/);
      assert.equal(fake.requestsTo('/api/embed').length, 1);
    });
  });
});

describe('a chat call that hangs mid-run', () => {
  it('past --model-timeout: the episode is an infra error, the summary says so, and the process exits by itself', { timeout: 60_000 }, async () => {
    await withFake(async (fake) => {
      // The first episode's second turn (its answer, after one tool call) never gets a byte back.
      fake.fail('chat', { kind: 'hang' }, { after: 1, times: 1 });
      const workdir = temporaryDirectory();
      const run = await runBounded(workdir, 30_000, generateArgs(fake.url, 'out', '--model-timeout', '2'));
      assertExited(run, 20);
      assert.equal(run.status, 1, run.stderr);
      assert.match(run.stdout, /2 episodes, 1 records written, 0 rejected, 1 infra error \(model server\), tasks completed 1\/1/);
      assert.match(run.stderr, /^INFRA tool-world-v1\.find-open-bugs\.s0\.ollama-fake-qwen-1b: ollama \/api\/chat: the model server did not answer within 2 s \(--model-timeout\)$/m);
      const records = lines(join(workdir, 'out', 'episodes.jsonl')).map((line) => JSON.parse(line));
      assert.deepEqual(records.map((record) => record.provenance.lineage.seed), [1]);
      const [row] = lines(join(workdir, 'out', 'rejected.jsonl')).map((line) => JSON.parse(line));
      assert.equal(row.stage, 'infra');
      assert.equal(row.record, null);
    });
  });

  it("past the lane's wall time first: recorded as the model running out of time, and the process still exits after the summary", { timeout: 60_000 }, async () => {
    await withFake(async (fake) => {
      const workdir = temporaryDirectory();
      const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));
      document.name = 'short-wall';
      document.limits.wall_time_ms = 1500;
      writeFileSync(join(workdir, 'short-wall.json'), JSON.stringify(document));
      // Not even a status line: the request is still waiting for headers when the wall time runs out.
      fake.fail('chat', { kind: 'hang' });
      const run = await runBounded(workdir, 30_000, [
        'generate', 'short-wall.json', '--policy', `ollama:${MODEL}`, '--ollama-host', fake.url, '--task', 'find-open-bugs', '--seeds', '0..0', '--format', 'jsonl', '--out', 'out', '--quiet',
      ]);
      assertExited(run, 20);
      assert.match(run.stdout, /1 episodes, 1 records written, 0 rejected/);
      assert.equal(run.status, 0, run.stderr);
      const [record] = lines(join(workdir, 'out', 'episodes.jsonl')).map((line) => JSON.parse(line));
      assert.equal(record.result.outcome, 'wall_time_limit');
    });
  });
});

describe('a chat endpoint that fails as a server, on every call', () => {
  const failures: [string, FakeFailure, RegExp][] = [
    ['HTTP 500', { kind: 'http', status: 500, error: 'llama runner process has terminated: exit status 2' }, /ollama \/api\/chat failed: HTTP 500: llama runner process has terminated: exit status 2/],
    ['truncated NDJSON', { kind: 'truncated', afterFrames: 1 }, /ollama \/api\/chat: the stream was cut off in the middle of line 2/],
    ['a garbage (non-JSON) body', { kind: 'garbage' }, /ollama \/api\/chat: the answer is not Ollama's NDJSON stream: line 1 is not JSON \("<!DOCTYPE html>"\)/],
    ['a connection reset mid-stream', { kind: 'disconnect', afterFrames: 1 }, /ollama \/api\/chat: the connection to the model server dropped mid-answer/],
    ['an error frame mid-stream', { kind: 'mid-stream', afterFrames: 1, error: 'CUDA error: out of memory' }, /ollama \/api\/chat: the server reported an error mid-answer: CUDA error: out of memory/],
  ];
  for (const [name, failure, reason] of failures) {
    it(`${name}: exit 1, every episode counted as an infra error, none in episodes.jsonl`, { timeout: 60_000 }, async () => {
      await withFake(async (fake) => {
        fake.fail('chat', failure);
        const workdir = temporaryDirectory();
        const run = await runBounded(workdir, 40_000, generateArgs(fake.url, 'out'));
        assertExited(run, 30);
        assert.equal(run.status, 1, run.stderr);
        assert.match(run.stdout, /2 episodes, 0 records written, 0 rejected, 2 infra errors \(model server\), tasks completed 0\/0/);
        assert.match(
          run.stderr,
          /^generate: 2 of 2 episodes failed because the model server failed, more than --max-infra-errors 0 allows; they are in out\/rejected\.jsonl \(stage infra\), not in episodes\.jsonl — fix: check the Ollama server at http:\/\/127\.0\.0\.1:\d+ .*or pass --max-infra-errors 2 to accept them$/m,
        );
        assert.doesNotMatch(run.stderr, /invalid json|Welcome to nginx/i, 'the server\'s garbage is not echoed');
        assert.equal(readFileSync(join(workdir, 'out', 'episodes.jsonl'), 'utf8'), '', 'no training record from a failed server');
        const rows = lines(join(workdir, 'out', 'rejected.jsonl')).map((line) => JSON.parse(line));
        assert.equal(rows.length, 2);
        for (const row of rows) {
          assert.deepEqual(validateAgainst('rejected-row.v1', row), []);
          assert.equal(row.stage, 'infra');
          assert.equal(row.record, null);
          assert.match(row.reason, reason);
        }
        const manifest = JSON.parse(readFileSync(join(workdir, 'out', 'manifest.json'), 'utf8'));
        assert.deepEqual(manifest.counts, { episodes: 2, records: 0, rejected: 0, completed: 0, infra_errors: 2 });
      });
    });
  }

  it('--max-infra-errors raises the threshold, and --json counts them', { timeout: 60_000 }, async () => {
    await withFake(async (fake) => {
      fake.fail('chat', { kind: 'http', status: 500 });
      const workdir = temporaryDirectory();
      const accepted = await runBounded(workdir, 40_000, generateArgs(fake.url, 'accepted', '--max-infra-errors', '2', '--json'));
      assertExited(accepted, 30);
      assert.equal(accepted.status, 0, accepted.stderr);
      const summary = JSON.parse(accepted.stdout);
      assert.equal(summary.infra_errors, 2);
      assert.equal(summary.max_infra_errors, 2);
      assert.equal(summary.rejected, 0);
      assert.equal(summary.written, 0);
      assert.equal(summary.infra_failures.length, 2);
      assert.equal(summary.infra_failures[0].stage, 'infra');
      const over = await runBounded(workdir, 40_000, generateArgs(fake.url, 'over', '--max-infra-errors', '1'));
      assertExited(over, 30);
      assert.equal(over.status, 1, over.stderr);
      assert.match(over.stderr, /more than --max-infra-errors 1 allows/);
    });
  });
});

describe('a model that answers well-formed HTTP with garbage text', () => {
  it('is agent behaviour: the episode is a record with its malformed calls, not an infra error', { timeout: 60_000 }, async () => {
    await withFake(async (fake) => {
      fake.addModel({ name: 'fake-garbage:1b', family: 'qwen2', behaviour: () => ({ kind: 'malformed', text: '<tool_call>\n{"name": "search_issues", "arguments": {"query": \u0000\u00ff}}}\n</tool_call>' }) });
      const workdir = temporaryDirectory();
      const run = await runBounded(workdir, 40_000, [
        'generate', 'tool-world-v1', '--policy', 'ollama:fake-garbage:1b', '--ollama-host', fake.url, '--task', 'find-open-bugs', '--seeds', '0..0', '--format', 'jsonl', '--out', 'out', '--quiet',
      ]);
      assertExited(run, 30);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /1 episodes, 1 records written, 0 rejected, 0 infra errors \(model server\), tasks completed 0\/1/);
      const [record] = lines(join(workdir, 'out', 'episodes.jsonl')).map((line) => JSON.parse(line));
      assert.equal(record.result.outcome, 'step_limit');
      assert.ok(record.messages.some((message: { malformed_tool_call?: unknown }) => message.malformed_tool_call), 'the malformed calls are in the record');
      assert.equal(readFileSync(join(workdir, 'out', 'rejected.jsonl'), 'utf8'), '');
    });
  });
});

// The fixture's own page, so a change to it cannot make the garbage test pass vacuously.
assert.match(NOT_OLLAMA_PAGE, /^<!DOCTYPE html>/);
