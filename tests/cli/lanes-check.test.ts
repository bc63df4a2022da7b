// `lanes check` and `worlds` from the installed command: every shipped lane's
// hidden checks are proven sound here, and a broken lane is named and fails.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

const shippedLanes = () =>
  JSON.parse(runCli(REPO_ROOT, 'lanes', 'list', '--json').stdout).filter((row: any) => row.path.startsWith(join(REPO_ROOT, 'lanes')));
/** Lanes `lanes synthesize` wrote (hundreds of tasks each): proven whole at synthesis and in the bench, by sample here. */
const SYNTHESIZED = join(REPO_ROOT, 'lanes', 'synthesized');
const handWritten = () => shippedLanes().filter((row: any) => !row.path.startsWith(SYNTHESIZED));
const synthesized = () => shippedLanes().filter((row: any) => row.path.startsWith(SYNTHESIZED));
/** Tasks proven of each synthesised lane, spread evenly through it. */
const SAMPLE = 4;

describe('lanes check', () => {
  const workdir = temporaryDirectory('ef-check-');

  it('proves every hand-written lane sound: solution passes, do-nothing and every wrong trajectory fail, on each lane\'s first seeds', () => {
    const lanes = handWritten();
    const result = runCli(workdir, 'lanes', 'check', ...lanes.map((row: any) => row.path), '--json');
    const report = JSON.parse(result.stdout);
    const unsound = report.results.filter((entry: any) => !entry.sound);
    assert.deepEqual(unsound.map((entry: any) => `${entry.lane}/${entry.task}: ${entry.problems.join('; ')}`), []);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(report.lanes, lanes.length);
    assert.equal(report.tasks, lanes.reduce((sum: number, row: any) => sum + row.tasks, 0));
    for (const entry of report.results) {
      assert.equal(entry.seeds.length, 3, `${entry.lane}/${entry.task}`);
      const kinds = new Set(entry.runs.map((run: any) => run.kind));
      assert.deepEqual([...kinds].sort(), ['do-nothing', 'solution', 'wrong'], `${entry.lane}/${entry.task}`);
    }
  });

  it(`proves ${SAMPLE} tasks of each synthesised lane sound (--sample), each made by lanes synthesize`, () => {
    const lanes = synthesized();
    assert.ok(lanes.length >= 3, `${lanes.length} synthesised lanes under lanes/synthesized/`);
    const result = runCli(workdir, 'lanes', 'check', ...lanes.map((row: any) => row.path), '--sample', String(SAMPLE), '--json');
    const report = JSON.parse(result.stdout);
    assert.deepEqual(report.results.filter((entry: any) => !entry.sound).map((entry: any) => `${entry.lane}/${entry.task}: ${entry.problems.join('; ')}`), []);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(report.tasks, lanes.length * SAMPLE);
    for (const row of lanes) {
      const lane = JSON.parse(readFileSync(row.path, 'utf8'));
      assert.ok(lane.tasks.every((task: any) => task.synthesized && task.synthesized.draw >= 0), `${row.name}: every task says how it was made`);
      // Evenly spaced: the first task and tasks from the middle and the end.
      const checked = report.results.filter((entry: any) => entry.lane === row.name).map((entry: any) => entry.task);
      assert.equal(checked[0], lane.tasks[0].id);
      assert.equal(checked[SAMPLE - 1], lane.tasks[Math.floor(((SAMPLE - 1) * lane.tasks.length) / SAMPLE)].id);
    }
  });

  it('prints a row per task and a summary line', () => {
    const result = runCli(workdir, 'lanes', 'check', 'issues-v1', '--seeds', '0..1');
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^LANE\s+TASK\s+KIND\s+SOLUTION\s+DO-NOTHING\s+WRONG\s+PHRASINGS\s+VERDICT\n/);
    assert.match(result.stdout, /\nissues-v1\s+close-as-duplicate\s+write,single-call\s+2\/2 pass\s+2\/2 fail\s+4\/4 fail\s+[0-9]+ ok\s+sound\n/);
    assert.match(result.stdout, /\nlanes check: 1 lane, 10 tasks, seeds 0\.\.1: all sound\n$/);
  });

  it('exits 1 naming the unsound task, the trajectory and the seed', () => {
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'issues-v1.json'), 'utf8'));
    document.name = 'issues-broken';
    const task = document.tasks.find((entry: any) => entry.id === 'set-due-date');
    task.predicates = task.predicates.filter((predicate: any) => predicate.id !== 'priority-kept');
    mkdirSync(join(workdir, 'lanes'), { recursive: true });
    writeFileSync(join(workdir, 'lanes', 'issues-broken.json'), JSON.stringify(document));
    const result = runCli(workdir, 'lanes', 'check', 'issues-broken', '--task', 'file-a-bug', 'set-due-date');
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /\nissues-broken\s+set-due-date\s+write,single-call\s+3\/3 pass\s+3\/3 fail\s+3\/6 fail\s+[0-9]+ ok\s+UNSOUND \(wrong trajectory "raises-the-priority-too"\)\n/);
    assert.match(result.stdout, /\nissues-broken\s+file-a-bug\s+.*\s+sound\n/);
    assert.ok(result.stdout.includes('\nUNSOUND issues-broken set-due-date\n  seed 0: wrong trajectory "raises-the-priority-too" passes every predicate: the hidden checks do not see this mistake\n'), result.stdout);
    assert.match(result.stdout, /lanes check: 1 lane, 2 tasks, seeds 0\.\.2: 1 unsound\n$/);
    const json = JSON.parse(runCli(workdir, 'lanes', 'check', 'issues-broken', '--task', 'set-due-date', '--json').stdout);
    assert.equal(json.ok, false);
    assert.equal(json.unsound, 1);
  });

  it('exits 2 with the fix when there is nothing to check or the lane is unknown', () => {
    const none = runCli(workdir, 'lanes', 'check');
    assert.equal(none.status, 2);
    assert.match(none.stderr, /no lane to check — fix: name a lane \(see `lanes list`\) or pass --all/);
    const unknown = runCli(workdir, 'lanes', 'check', 'no-such-lane');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no-such-lane/);
    const both = runCli(workdir, 'lanes', 'check', 'issues-v1', '--all');
    assert.equal(both.status, 2);
  });
});

describe('the catalog of worlds', () => {
  it('lists at least five worlds and forty distinct tasks, in lanes and in worlds', () => {
    const rows = JSON.parse(runCli(REPO_ROOT, 'worlds', 'list', '--json').stdout);
    const scripted = rows.filter((row: any) => row.kind === 'scripted');
    assert.deepEqual(scripted.map((row: any) => row.name), ['calendar', 'files', 'issues', 'shop', 'tasks']);
    for (const row of scripted) assert.ok(row.tools.length >= 5 && row.tools.length <= 12, `${row.name}: ${row.tools.length} tools`);
    // Server worlds list the real package's catalog, whatever its size, and name the package.
    const servers = rows.filter((row: any) => row.kind === 'server');
    assert.ok(servers.some((row: any) => row.name === 'filesystem-server' && row.package === '@modelcontextprotocol/server-filesystem@2026.8.31' && row.tools.length === 14));
    for (const row of rows) assert.ok(row.lanes.length >= 1, `${row.name} has a lane`);
    const tasks = rows.reduce((sum: number, row: any) => sum + row.tasks, 0);
    assert.ok(tasks >= 40, `${tasks} tasks`);
    const list = runCli(REPO_ROOT, 'lanes', 'list');
    assert.match(list.stdout, new RegExp(`\\n[0-9]+ lanes on ${rows.length} worlds, ${tasks} distinct tasks\\n$`));
    const text = runCli(REPO_ROOT, 'worlds', 'list').stdout;
    assert.match(text, /server: @modelcontextprotocol\/server-filesystem@2026\.8\.31 over stdio/);
    assert.match(text, new RegExp(`${rows.length} worlds \\(5 scripted, ${servers.length} real servers\\)`));
  });

  it('covers every kind of task in every world: single-call, multi-step, read-only, write, policy', () => {
    const lanes = shippedLanes();
    for (const world of ['calendar', 'files', 'issues', 'shop', 'tasks']) {
      const tags = new Set(
        lanes.filter((row: any) => row.world === world).flatMap((row: any) => JSON.parse(runCli(REPO_ROOT, 'lanes', 'show', row.name, '--json').stdout).tasks.flatMap((task: any) => task.tags)),
      );
      for (const kind of ['single-call', 'multi-step', 'read-only', 'write', 'policy']) assert.ok(tags.has(kind), `${world} has no ${kind} task`);
    }
  });

  it('shows one world with its tools exactly as tools/list gives them', () => {
    const shown = JSON.parse(runCli(REPO_ROOT, 'worlds', 'show', 'issues', '--json').stdout);
    assert.equal(shown.tools.length, 9);
    assert.equal(shown.tools[0].name, 'search_issues');
    assert.equal(shown.tools[0].inputSchema.type, 'object');
    assert.ok(shown.tools[0].annotations.readOnlyHint);
    const text = runCli(REPO_ROOT, 'worlds', 'show', 'issues');
    assert.match(text.stdout, /\n {2}close_issue\n {4}Close an open issue/);
    assert.equal(runCli(REPO_ROOT, 'worlds', 'show', 'spreadsheets').status, 2);
  });
});
