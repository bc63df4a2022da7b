// Hostile regular expressions (issue 18, item 1): a lane's `answer.matches`
// of ^(([a-zA-Z0-9 ,:]+)+)!$ once ran 448 s under a 90 s limit, and a model's
// grep pattern or file-name glob could do the same to the files world. Every
// child process here has a hard limit and is killed past it, so a regression
// fails the test instead of hanging the suite.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { compilePattern } from '../../src/core/safe-pattern.js';
import type { PatternFlags } from '../../src/core/safe-pattern-contract.js';
import { substream } from '../../src/core/random.js';
import { splitLines } from '../../src/world/files/files-state.js';
import { filesWorld } from '../../src/world/files/files-world.js';
import { getWorld, worldNames } from '../../src/world/world-registry.js';
import { CLI, REPO_ROOT, runCliWithin, temporaryDirectory } from '../helpers.js';

const HOSTILE = '^(([a-zA-Z0-9 ,:]+)+)!$';
/** Well above what the CLI needs on a loaded two-core machine, far below what V8 needs to backtrack through the hostile cases. */
const CHILD_LIMIT_MS = 90_000;

/** tool-world-v1's find-open-bugs, answering with a long sentence that only V8's backtracking finds hard, and a hidden check that it does not shout. */
function hostileLane(name: string, predicate: unknown): unknown {
  const lane = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));
  lane.name = name;
  const task = lane.tasks.find((entry: { id: string }) => entry.id === 'find-open-bugs');
  // 60+ characters of the class before the first one outside it: V8 tries every way to split them, 2^60 and more.
  const prefix = 'Here is the full status report for the whole team with all the details you asked for: ';
  task.solution.at(-1).answer = `${prefix}open bugs about {{topic}} are {{found.issues.*.number}}.`;
  for (const wrong of task.wrong) wrong.solution.at(-1).answer = `${prefix}bugs about {{topic}} are {{found.issues.*.number}}.`;
  task.predicates.push(predicate);
  lane.tasks = [task];
  return lane;
}

describe('hostile regular expressions', () => {
  const workdir = temporaryDirectory('ef-hostile-');
  mkdirSync(join(workdir, 'lanes'), { recursive: true });

  it('evaluates the reported lane pattern against a long answer in bounded time, through lanes check and generate', { timeout: 3 * CHILD_LIMIT_MS }, async () => {
    const lane = hostileLane('hostile-answer', { id: 'never-shouts', description: 'The answer is no exclamation.', not: { answer: { matches: HOSTILE } } });
    writeFileSync(join(workdir, 'lanes', 'hostile-answer.json'), JSON.stringify(lane, null, 2));

    const check = await runCliWithin(CHILD_LIMIT_MS, workdir, 'lanes', 'check', 'hostile-answer', '--seeds', '0..1');
    assert.equal(check.timedOut, false, `lanes check was killed after ${check.seconds.toFixed(0)} s: the pattern stalled the process`);
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /hostile-answer\s+find-open-bugs\s+.*\s+sound\n/);

    const out = join(workdir, 'out');
    const generate = await runCliWithin(CHILD_LIMIT_MS, workdir, 'generate', 'hostile-answer', '--seeds', '0..0', '--out', out, '--format', 'jsonl', '--json');
    assert.equal(generate.timedOut, false, `generate was killed after ${generate.seconds.toFixed(0)} s: the pattern stalled the process`);
    assert.equal(generate.status, 0, generate.stderr);
    const [record] = readFileSync(join(out, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const answer: string = record.messages.at(-1).content;
    assert.ok(answer.length > 100 && /^[a-zA-Z0-9 ,:]{60,}/.test(answer), answer);
    assert.deepEqual(record.result.predicates.find((verdict: { id: string }) => verdict.id === 'never-shouts'), { id: 'never-shouts', passed: true });
    assert.equal(record.result.task_completed, true);
  });

  it('refuses at load, with the pointer and the fix, a lane pattern only a backtracking engine can run', { timeout: 2 * CHILD_LIMIT_MS }, async () => {
    const lane = hostileLane('hostile-backreference', { id: 'repeats-a-word', answer: { matches: '\\b(\\w+) \\1\\b' } });
    writeFileSync(join(workdir, 'lanes', 'hostile-backreference.json'), JSON.stringify(lane, null, 2));
    const check = await runCliWithin(CHILD_LIMIT_MS, workdir, 'lanes', 'check', 'hostile-backreference');
    assert.equal(check.timedOut, false);
    assert.equal(check.status, 2, check.stdout + check.stderr);
    assert.match(
      check.stderr,
      /hostile-backreference\.json: \/tasks\/0\/predicates\/4\/answer\/matches: backreferences \(\\1\) are not supported; patterns run on a linear-time engine \(JavaScript syntax without backreferences or lookaround\); match the repeated text itself\n/,
    );
    assert.match(check.stderr, /is not a valid lane \(1 problem\) — fix: /);
  });

  it('answers a catastrophic grep pattern or file-name glob from a tool call in bounded time', { timeout: 2 * CHILD_LIMIT_MS }, async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', 'files', '--seed', '3'], stderr: 'pipe' });
    const client = new Client({ name: 'hostile-test', version: '1' });
    await client.connect(transport);
    // The client's own limit on each call: a server stuck in a regex fails the call, and is killed below.
    const within = { timeout: 30_000 };
    try {
      const file = `/workspace/${'a'.repeat(64)}`;
      const write = await client.callTool({ name: 'write', arguments: { path: file, content: `${'a'.repeat(60)}!\n${'ab'.repeat(30)}\n` } }, undefined, within);
      assert.equal(write.isError, undefined, JSON.stringify(write.content));
      const cases: [string, Record<string, unknown>, number][] = [
        // Exponential for V8 without a nested quantifier: two ways to read every "a" of 60.
        ['grep', { pattern: '^(a|a)*$', path: file }, 0],
        // A glob of many stars is a polynomial of high degree for V8 on a 64-character name.
        ['find', { path: '/workspace', name_glob: '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b' }, 0],
        ['grep', { pattern: 'a', path: '/workspace', glob: '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b' }, 0],
        // The reported pattern's shape: 2^60 ways to split the run of a's.
        ['grep', { pattern: HOSTILE, path: file }, 1],
        ['grep', { pattern: '^(?:a|ab|b)*$', path: file, ignore_case: true }, 1],
      ];
      for (const [name, args, expected] of cases) {
        const started = performance.now();
        const result = await client.callTool({ name, arguments: args }, undefined, within);
        const seconds = (performance.now() - started) / 1000;
        assert.equal(result.isError, undefined, `${name} ${JSON.stringify(args)}: ${JSON.stringify(result.content)}`);
        const value = result.structuredContent as { total: number };
        assert.equal(value.total, expected, `${name} ${JSON.stringify(args)}`);
        assert.ok(seconds < 10, `${name} ${JSON.stringify(args)} took ${seconds.toFixed(1)} s`);
      }
      // What the linear-time engine cannot run is a tool error, in the shape of an invalid pattern's.
      const refused = await client.callTool({ name: 'grep', arguments: { pattern: '(a+)\\1!' } }, undefined, within);
      assert.equal(refused.isError, true);
      assert.match(JSON.stringify(refused.content), /pattern cannot be used: backreferences \(\\\\1\) are not supported; .*or pass literal: true\./);
    } finally {
      const pid = transport.pid;
      await client.close().catch(() => undefined);
      if (pid !== null) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });

  it("matches like a JavaScript RegExp on the lanes' own patterns and ordinary text", { timeout: 60_000 }, () => {
    // Every answer.matches in the shipped lanes, found wherever it is nested.
    const answerPatterns: string[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (value && typeof value === 'object') {
        for (const [key, child] of Object.entries(value)) {
          if (key === 'answer' && child && typeof child === 'object' && typeof (child as { matches?: unknown }).matches === 'string') answerPatterns.push((child as { matches: string }).matches);
          collect(child);
        }
      }
    };
    for (const file of readdirSync(join(REPO_ROOT, 'lanes')).filter((name) => name.endsWith('.json'))) collect(JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', file), 'utf8')));
    assert.ok(answerPatterns.length >= 6, answerPatterns.join(' '));
    const sentences = [
      '', 'Done.', 'The task is still To do.', 'It is todo', 'Not yet started, sorry.', 'not started', 'It is in progress and underway.', 'In-Progress',
      'Doing it now', 'The issue was already closed.', 'Already been closed as completed.', 'Closed as not planned: won\'t fix.', 'Wont do', 'A duplicate of #12.',
      'Fixed and resolved.', 'Completely done', 'to dos', 'Übersicht: not yet started!', 'ſtarted', 'I closed issue #4821.', 'Ticked 😀 it.', 'line one\nnot started\nline three',
    ];
    const agree = (source: string, flags: PatternFlags, texts: readonly string[]) => {
      const reference = new RegExp(source, flags);
      const safe = compilePattern(source, flags);
      for (const text of texts) assert.equal(safe.test(text), reference.test(text), `/${source}/${flags} on ${JSON.stringify(text)}`);
    };
    for (const source of answerPatterns) agree(source, 'u', sentences);
    // The files lane's grep patterns, filled in with each planted setting, over every line of the world they search.
    for (const seed of [0, 1, 2, 3]) {
      const state = filesWorld.init(substream(seed, 'world'), {});
      const lines = [...state.nodes.values()].filter((node) => node.type === 'file').flatMap((node) => splitLines(node.content));
      for (const setting of state.planted.settings) {
        for (const source of [`^${setting.name}=`, `^${setting.name} = `, setting.name]) {
          agree(source, '', lines);
          agree(source, 'i', lines);
        }
      }
      for (const source of ['TODO', '^#', '\\d{4}-\\d{2}-\\d{2}', 'key-[0-9a-f]{16}', '[A-Z]+_API_KEY\\s*=', 'error|warn']) agree(source, 'i', lines);
    }
    // The worlds' claim patterns, as another set of realistic ones over the same sentences.
    for (const name of worldNames()) for (const tool of getWorld(name).tools) for (const source of tool.claims ?? []) agree(source, 'i', sentences);
  });
});
