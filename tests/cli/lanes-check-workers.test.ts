// `lanes check --workers N` from the installed command: one task's proof per
// worker thread, the results back in lane order, so the verdicts, the bytes
// printed and the exit status are those of one thread; a lane outside lanes/
// on a world defined in the working directory's worlds/ is found by the
// threads too, and the server children they kept are gone when they end.

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLI, REPO_ROOT, runCli, runWithin, temporaryDirectory } from '../helpers.js';

/** A hang guard, not a timing: the whole file runs in well under a minute. */
const LIMIT_MS = 120_000;

/** The command in `cwd` with its own temporary directory, so what its worlds leave behind there can be counted. */
async function check(cwd: string, temporary: string, ...args: string[]) {
  const environment: NodeJS.ProcessEnv = { ...process.env, TMPDIR: temporary };
  delete environment.SOURCE_DATE_EPOCH;
  const result = await runWithin(LIMIT_MS, process.execPath, [CLI, 'lanes', 'check', ...args], { cwd, env: environment });
  assert.equal(result.timedOut, false, `lanes check ${args.join(' ')} did not end`);
  return result;
}

const lane = (name: string) => JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', `${name}.json`), 'utf8'));

describe('lanes check --workers', () => {
  const workdir = temporaryDirectory('ef-check-workers-');

  it('prints the same bytes and exits the same on one thread and on two (JSON and the table)', async () => {
    for (const format of [['--json'], []]) {
      const one = await check(workdir, temporaryDirectory(), 'tasks-v1', '--seeds', '0..1', '--workers', '1', ...format);
      const two = await check(workdir, temporaryDirectory(), 'tasks-v1', '--seeds', '0..1', '--workers', '2', ...format);
      assert.equal(one.status, 0, one.stderr);
      assert.equal(two.status, 0, two.stderr);
      assert.equal(two.stdout, one.stdout);
    }
    const report = JSON.parse((await check(workdir, temporaryDirectory(), 'tasks-v1', '--seeds', '0..1', '--workers', '3', '--json')).stdout);
    assert.deepEqual(report.results.map((entry: any) => entry.task), lane('tasks-v1').tasks.map((task: any) => task.id), 'lane order');
    assert.equal(report.tasks, 10);
  });

  it('reports an unsound task the same way on both, with the lane given by a path outside lanes/', async () => {
    const document = lane('tasks-v1');
    document.name = 'tasks-broken';
    const task = document.tasks.find((entry: any) => entry.id === 'count-open-tasks');
    // Only "changes nothing" is left: answering at once passes it.
    task.predicates = task.predicates.filter((predicate: any) => predicate.id === 'changes-nothing');
    mkdirSync(join(workdir, 'elsewhere'), { recursive: true });
    writeFileSync(join(workdir, 'elsewhere', 'tasks-broken.json'), JSON.stringify(document));
    for (const format of [['--json'], []]) {
      const one = await check(workdir, temporaryDirectory(), 'elsewhere/tasks-broken.json', '--seeds', '0..1', '--workers', '1', ...format);
      const two = await check(workdir, temporaryDirectory(), 'elsewhere/tasks-broken.json', '--seeds', '0..1', '--workers', '2', ...format);
      assert.equal(one.status, 1, one.stderr);
      assert.equal(two.status, 1, two.stderr);
      assert.equal(two.stdout, one.stdout);
      if (format.length === 0) {
        assert.match(two.stdout, /\ntasks-broken\s+count-open-tasks\s+.*UNSOUND \(do-nothing, /);
        assert.ok(two.stdout.includes('\n  seed 0: do-nothing passes every predicate: the hidden checks do not see this mistake\n'), two.stdout);
        assert.match(two.stdout, /lanes check: 1 lane, 10 tasks, seeds 0\.\.1: 1 unsound\n$/);
      } else {
        assert.equal(JSON.parse(two.stdout).unsound, 1);
      }
    }
  });

  it('finds a world defined in the working directory\'s worlds/ on every thread, and ends the server children the threads kept', async () => {
    const project = temporaryDirectory('ef-check-defined-');
    mkdirSync(join(project, 'worlds'));
    mkdirSync(join(project, 'elsewhere'));
    const world = JSON.parse(readFileSync(join(REPO_ROOT, 'worlds', 'obsidian-vault.json'), 'utf8'));
    delete world.$schema;
    world.name = 'team-notes';
    world.catalog = 'team-notes.catalog.json';
    writeFileSync(join(project, 'worlds', 'team-notes.json'), JSON.stringify(world));
    copyFileSync(join(REPO_ROOT, 'worlds', 'obsidian-vault.catalog.json'), join(project, 'worlds', 'team-notes.catalog.json'));
    const document = lane('obsidian-vault-v1');
    delete document.$schema;
    document.name = 'team-notes-v1';
    document.world.name = 'team-notes';
    writeFileSync(join(project, 'elsewhere', 'team-notes-v1.json'), JSON.stringify(document));

    const outputs: string[] = [];
    for (const workers of ['1', '2']) {
      const temporary = temporaryDirectory('ef-check-tmp-');
      const result = await check(project, temporary, 'elsewhere/team-notes-v1.json', '--seeds', '0..0', '--workers', workers, '--json');
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout);
      assert.equal(report.ok, true);
      assert.ok(report.results.every((entry: any) => entry.lane === 'team-notes-v1'));
      // Each thread's kept server child has its own pool directory under TMPDIR: closing the thread removes it.
      assert.deepEqual(readdirSync(temporary).filter((name) => name.startsWith('episode-factory-')), [], `--workers ${workers}`);
      outputs.push(result.stdout);
    }
    assert.equal(outputs[1], outputs[0]);
  });

  it('refuses --workers 0, a fraction or a word, naming the flag', () => {
    for (const value of ['0', '1.5', 'many', '-2']) {
      const result = runCli(workdir, 'lanes', 'check', 'tasks-v1', `--workers=${value}`);
      assert.equal(result.status, 2, `--workers ${value}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`--workers "${value.replace('.', '\\.')}" is not a positive whole number — fix: pass --workers 1 or more`));
      assert.equal(result.stdout, '');
    }
  });
});
