// `lanes synthesize` as a user runs it: on a scripted world and on a server
// world written as a definition file (memory-server, the real npm server),
// the lane it writes loads, `lanes check` proves every task sound on the
// lane's seeds, and `generate`, `replay` and `audit` pass on it. A second run
// writes the same bytes. The report names what was kept (by kind and tool)
// and why each rejected candidate failed; bad flags are exit 2.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCliAsync, temporaryDirectory } from '../helpers.js';

const project = temporaryDirectory('ef-synthesize-');
mkdirSync(join(project, 'lanes'), { recursive: true });

describe('lanes synthesize', () => {
  it('writes a lane of sound tasks for a scripted world, the same bytes twice (on one thread and on three), with a report of what it kept and rejected', async () => {
    const first = await runCliAsync(project, 'lanes', 'synthesize', 'issues', '--count', '6', '--seeds', '0..4', '--out', 'lanes/issues-synth-v1.json', '--workers', '1', '--json');
    assert.equal(first.status, 0, first.stdout + first.stderr);
    const report = JSON.parse(first.stdout);
    assert.equal(report.kept, 6);
    assert.equal(report.out, 'lanes/issues-synth-v1.json');
    assert.ok(report.candidates > report.kept, 'some candidates were rejected');
    const rejected = report.events.filter((event: { kept: boolean }) => !event.kept);
    assert.ok(rejected.every((event: { reason?: string; detail?: string }) => event.reason && event.detail), 'every rejection says why');
    assert.equal(Object.values(report.rejected as Record<string, number>).reduce((sum, count) => sum + count, 0), rejected.length);
    assert.equal(report.kept_by_kind_and_tool.reduce((sum: number, row: { tasks: number }) => sum + row.tasks, 0), 6);

    const lane = JSON.parse(readFileSync(join(project, 'lanes', 'issues-synth-v1.json'), 'utf8'));
    assert.equal(lane.name, 'issues-synth-v1');
    assert.equal(lane.tasks.length, 6);
    for (const task of lane.tasks) {
      assert.equal(task.synthesized.by, 'sampler');
      assert.equal(task.synthesized.sampler, 'episode-factory.sampler.v1');
      assert.ok(Number.isInteger(task.synthesized.draw));
      assert.ok(task.wrong.length >= 1, `${task.id} has generated wrong trajectories`);
      assert.ok(task.predicates.every((predicate: object) => !/sha256|updated_at|created_at/.test(JSON.stringify(predicate))), `${task.id} pins no volatile value`);
    }

    const bytes = readFileSync(join(project, 'lanes', 'issues-synth-v1.json'));
    const again = await runCliAsync(project, 'lanes', 'synthesize', 'issues', '--count', '6', '--seeds', '0..4', '--out', 'lanes/issues-synth-v1.json', '--force', '--workers', '3');
    assert.equal(again.status, 0, again.stdout + again.stderr);
    assert.deepEqual(readFileSync(join(project, 'lanes', 'issues-synth-v1.json')), bytes, 'same world, seeds and count: the same lane, whatever the threads');
    assert.ok(again.stdout.startsWith(`6 of ${report.candidates} candidates kept as sound`), again.stdout);
    assert.match(again.stdout, /kept tasks by kind and tool/);
    assert.match(again.stdout, /rejected candidates by reason \(one example each\)/);

    const shown = await runCliAsync(project, 'lanes', 'show', 'lanes/issues-synth-v1.json');
    assert.match(shown.stdout, /made by {5}lanes synthesize: sampler \(episode-factory\.sampler\.v1\), draw \d+, a (write|read) task/, 'a reviewer tells synthesised tasks from hand-written ones');
    const check = await runCliAsync(project, 'lanes', 'check', 'lanes/issues-synth-v1.json', '--seeds', '0..4', '--workers', '1');
    assert.equal(check.status, 0, check.stdout);
    assert.match(check.stdout, /6 tasks, seeds 0\.\.4: all sound/);
  });

  it('on a server world defined by a file, the lane is proven, generated, replayed and audited', async () => {
    const made = await runCliAsync(project, 'lanes', 'synthesize', 'memory-server', '--count', '4', '--seeds', '0..2', '--out', 'lanes/memory-synth-v1.json');
    assert.equal(made.status, 0, made.stdout + made.stderr);
    const check = await runCliAsync(project, 'lanes', 'check', 'lanes/memory-synth-v1.json', '--workers', '1');
    assert.equal(check.status, 0, check.stdout);
    const generated = await runCliAsync(project, 'generate', 'lanes/memory-synth-v1.json', '--out', 'datasets/memory-synth');
    assert.equal(generated.status, 0, generated.stdout + generated.stderr);
    assert.match(generated.stdout, /12 records written, 0 rejected, tasks completed 12\/12/);
    const replay = await runCliAsync(project, 'replay', 'datasets/memory-synth');
    assert.equal(replay.status, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /12 records, 12 verified, 0 failed/);
    const audit = await runCliAsync(project, 'audit', 'datasets/memory-synth');
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
  });

  it('says when it kept fewer than asked (exit 1, the lane still written) and refuses bad flags (exit 2)', async () => {
    const short = await runCliAsync(project, 'lanes', 'synthesize', 'tasks', '--count', '50', '--max-candidates', '12', '--seeds', '0..2', '--out', 'lanes/tasks-short-v1.json');
    assert.equal(short.status, 1, short.stdout + short.stderr);
    assert.match(short.stdout, /kept \d+ of the 50 asked for after 12 candidates; raise --max-candidates/);

    const exists = await runCliAsync(project, 'lanes', 'synthesize', 'issues', '--out', 'lanes/issues-synth-v1.json');
    assert.equal(exists.status, 2);
    assert.match(exists.stderr, /lanes\/issues-synth-v1\.json already exists — fix: pass --force/);
    const count = await runCliAsync(project, 'lanes', 'synthesize', 'issues', '--count', 'many', '--out', 'lanes/x-v1.json');
    assert.equal(count.status, 2);
    assert.match(count.stderr, /--count "many" is not a positive whole number — fix: pass --count 1 or more/);
    const name = await runCliAsync(project, 'lanes', 'synthesize', 'issues', '--out', 'lanes/Bad Name.json');
    assert.equal(name.status, 2);
    assert.match(name.stderr, /a lane file is named <lane-name>\.json/);
    const world = await runCliAsync(project, 'lanes', 'synthesize', 'no-such-world', '--out', 'lanes/y-v1.json');
    assert.equal(world.status, 2);
    assert.match(world.stderr, /no-such-world/);
    assert.ok(!existsSync(join(project, 'lanes', 'x-v1.json')) && !existsSync(join(project, 'lanes', 'y-v1.json')), 'nothing written on a usage error');
  });

  it('rejects as overfit a task that is sound only on the seeds its predicates were written from', async () => {
    // Predicates written from two seeds of the files world: without the held-out proof, most kept tasks fail on the next ones.
    const loose = await runCliAsync(project, 'lanes', 'synthesize', 'files', '--count', '12', '--seeds', '0..1', '--holdout-seeds', '0', '--out', 'lanes/files-loose-v1.json', '--json');
    assert.equal(loose.status, 0, loose.stdout + loose.stderr);
    assert.equal(JSON.parse(loose.stdout).rejected.overfit, undefined, 'nothing is held out with --holdout-seeds 0');
    const exposed = await runCliAsync(project, 'lanes', 'check', 'lanes/files-loose-v1.json', '--seeds', '2..17', '--workers', '1');
    assert.equal(exposed.status, 1, exposed.stdout);
    assert.match(exposed.stdout, /seeds 2\.\.17: \d+ unsound/);

    const held = await runCliAsync(project, 'lanes', 'synthesize', 'files', '--count', '6', '--max-candidates', '240', '--seeds', '0..1', '--out', 'lanes/files-held-v1.json', '--json');
    assert.equal(held.status, 0, held.stdout + held.stderr);
    const report = JSON.parse(held.stdout);
    assert.ok(report.rejected.overfit > 0, 'some candidates sound on seeds 0..1 failed on the held-out seeds');
    const overfit = report.events.find((event: { reason?: string }) => event.reason === 'overfit');
    assert.match(overfit.detail, /^sound on seeds 0\.\.1 but not on a held-out one: seed (\d+): /);
    const lane = JSON.parse(readFileSync(join(project, 'lanes', 'files-held-v1.json'), 'utf8'));
    assert.match(lane.description, /on the held-out seeds 2\.\.17\.$/);
    const proven = await runCliAsync(project, 'lanes', 'check', 'lanes/files-held-v1.json', '--seeds', '2..17', '--workers', '2');
    assert.equal(proven.status, 0, proven.stdout);
    assert.match(proven.stdout, /6 tasks, seeds 2\.\.17: all sound/);

    const bad = await runCliAsync(project, 'lanes', 'synthesize', 'files', '--holdout-seeds', '-1', '--out', 'lanes/z-v1.json');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--holdout-seeds "-1" is not a positive whole number/);
  });

  it('a lane whose synthesised task is edited into an unsound one is caught by lanes check', async () => {
    const path = join(project, 'lanes', 'issues-synth-v1.json');
    const lane = JSON.parse(readFileSync(path, 'utf8'));
    const task = lane.tasks.find((candidate: { synthesized: { kind: string } }) => candidate.synthesized.kind === 'write');
    assert.ok(task, 'the lane has a write task');
    // Keep only the guards: doing nothing now passes.
    task.predicates = task.predicates.filter((predicate: { unchanged?: string }) => predicate.unchanged !== undefined);
    lane.name = 'issues-edited-v1';
    writeFileSync(join(project, 'lanes', 'issues-edited-v1.json'), JSON.stringify(lane));
    const check = await runCliAsync(project, 'lanes', 'check', 'lanes/issues-edited-v1.json', '--workers', '1', '--task', task.id);
    assert.equal(check.status, 1, check.stdout);
    assert.match(check.stdout, /do-nothing passes every predicate/);
  });
});
