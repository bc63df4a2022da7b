// lanes check's soundness proof: every verdict it can reach, on lanes built to
// be sound and on lanes broken in each way it must catch.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseLane } from '../../src/lanes/lane-loader.js';
import { checkLaneSoundness, defaultCheckSeeds } from '../../src/verify/lane-soundness.js';
import { REPO_ROOT } from '../helpers.js';

const shipped = () => JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'issues-v1.json'), 'utf8'));
const laneOf = (document: unknown) => parseLane(JSON.stringify(document), '/somewhere/lanes/issues-v1.json');
const only = async (document: any, task: string, seeds = { from: 0, to: 2 }) => {
  const [result] = await checkLaneSoundness(laneOf(document), { seeds, taskIds: [task] });
  return result!;
};

describe('lane soundness', () => {
  it('passes a sound task: the solution passes on every seed, do-nothing and every wrong trajectory fail a predicate', async () => {
    const result = await only(shipped(), 'close-as-duplicate', { from: 0, to: 3 });
    assert.equal(result.sound, true, result.problems.join('\n'));
    assert.deepEqual(result.seeds, [0, 1, 2, 3]);
    assert.equal(result.runs.length, 4 * 4);
    const wrong = result.runs.filter((run) => run.kind === 'wrong' && run.id === 'closes-the-original');
    assert.equal(wrong.length, 4);
    // Closing the original instead leaves the target open, whatever became of the original.
    for (const run of wrong) assert.ok(run.failed.includes('is-closed-as-duplicate') && run.failed.includes('points-at-the-original'), run.failed.join());
    for (const run of result.runs.filter((entry) => entry.kind === 'do-nothing')) assert.ok(run.failed.length > 0 && run.expected === 'fail');
  });

  it('catches a wrong trajectory the predicates do not see, naming it and the seed', async () => {
    const document = shipped();
    const task = document.tasks.find((entry: any) => entry.id === 'close-as-duplicate');
    task.predicates = task.predicates.filter((predicate: any) => predicate.id !== 'touches-only-the-target' && predicate.id !== 'is-closed-as-duplicate' && predicate.id !== 'points-at-the-original');
    const result = await only(document, 'close-as-duplicate');
    assert.equal(result.sound, false);
    assert.ok(result.problems.includes('seed 0: wrong trajectory "closes-the-original" passes every predicate: the hidden checks do not see this mistake'), result.problems.join('\n'));
    assert.ok(result.problems.some((problem) => problem.startsWith('seed 1: wrong trajectory "closes-as-completed" passes every predicate')), result.problems.join('\n'));
    assert.ok(result.runs.filter((run) => run.kind === 'solution').every((run) => run.sound), 'the solution still passes what is left');
  });

  it('catches predicates that pass an agent who did nothing', async () => {
    const document = shipped();
    const task = document.tasks.find((entry: any) => entry.id === 'set-due-date');
    task.predicates = [{ id: 'priority-kept', path: '/issues/{{target.number}}/priority', equals: '{{target.priority}}' }];
    const result = await only(document, 'set-due-date');
    assert.equal(result.sound, false);
    assert.ok(result.problems.some((problem) => problem.startsWith('seed 0: do-nothing passes every predicate')), result.problems.join('\n'));
  });

  it('catches a predicate the scripted solution cannot pass, with the reason', async () => {
    const document = shipped();
    const task = document.tasks.find((entry: any) => entry.id === 'set-due-date');
    task.predicates[0].equals = '2030-01-01';
    const result = await only(document, 'set-due-date');
    assert.equal(result.sound, false);
    assert.ok(result.problems.some((problem) => /^seed 0: solution fails due-date-set \(\/issues\/[0-9]+\/due_on is "2027-[0-9-]+", expected "2030-01-01"\)/.test(problem)), result.problems.join('\n'));
  });

  it('does not count a mistake that only the claims check catches', async () => {
    const document = shipped();
    const task = document.tasks.find((entry: any) => entry.id === 'already-closed');
    task.predicates = task.predicates.filter((predicate: any) => predicate.id === 'changes-nothing');
    task.wrong = [{ id: 'claims-to-close', description: 'claims a close it never made', solution: [{ answer: 'Closed #{{target.number}} as completed.' }] }];
    const result = await only(document, 'already-closed');
    assert.ok(result.problems.includes('seed 0: wrong trajectory "claims-to-close" passes every predicate (only the claims check caught it): the hidden checks do not see this mistake'), result.problems.join('\n'));
    const run = result.runs.find((entry) => entry.kind === 'wrong')!;
    assert.equal(run.unsupported_claims, 1);
  });

  it('fails a solution whose answer makes a claim no call backs, even when every predicate passes', async () => {
    const document = shipped();
    const task = document.tasks.find((entry: any) => entry.id === 'assignee-email');
    task.solution[2].answer += ' I closed the issue as well.';
    const result = await only(document, 'assignee-email');
    assert.ok(result.problems.some((problem) => problem.startsWith('seed 0: solution answers with a claim no call backs: "I closed the issue as well." (close_issue)')), result.problems.join('\n'));
  });

  it('calls a task without wrong trajectories unsound, and plays with no faults whatever the lane says', async () => {
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-faults-v1.json'), 'utf8'));
    delete document.tasks[0].wrong;
    const lane = parseLane(JSON.stringify(document), '/somewhere/lanes/tool-world-faults-v1.json');
    assert.ok(lane.faults.faults.length > 0);
    const results = await checkLaneSoundness(lane, { seeds: { from: 0, to: 1 } });
    assert.equal(results[0]!.sound, false);
    assert.match(results[0]!.problems[0]!, /^declares no wrong trajectory/);
    for (const result of results.slice(1)) assert.equal(result.sound, true, result.problems.join('\n'));
    assert.ok(results.flatMap((result) => result.runs).every((run) => run.outcome !== 'error'));
  });

  it('renders every phrasing on every seed and passes a grammar that keeps what the checks need', async () => {
    const document = shipped();
    document.phrasing = { ...document.phrasing, greet: ['Hi! ', 'Hello. '] };
    const task = document.tasks.find((entry: any) => entry.id === 'assignee-email');
    task.user = {
      say: ['<greet?><^who> <need?>', '<greet?><^need>: <who>'],
      who: ['who is assigned to issue #{{target.number}}?', 'who has #{{target.number}}?'],
      need: ['I need their email address', 'I want to write to them'],
    };
    const result = await only(document, 'assignee-email');
    assert.equal(result.sound, true, result.problems.join('\n'));
    // say 0: 3 greetings x 2 x 3 = 18; say 1: 3 x 2 x 2 = 12.
    assert.deepEqual(result.phrasing, { phrasings: 30, rendered: 90, failed: 0 });
  });

  it('names the task, the phrasing and the seed when a phrasing leaves out a told fact, gives away a withheld one, or cannot be said', async () => {
    const document = shipped();
    const index = document.tasks.findIndex((entry: any) => entry.id === 'assignee-email');
    const task = document.tasks[index];
    task.facts = [
      { id: 'title', value: '{{target.title}}', asked_by: ['title'], answer: 'It is "{{target.title}}".', question: 'What is its title?' },
      { id: 'issue', value: '#{{target.number}}', withheld: true, asked_by: ['issue', 'which'], answer: 'Issue #{{target.number}}.', question: 'Which issue?' },
    ];
    task.user = {
      say: ['Who is assigned to the issue "{{target.title}}"?', 'Who is assigned to #{{target.number}} ("{{target.title}}")?', 'Who is assigned to the {{target.milestone}} issue?', 'Who is assigned to that issue?'],
    };
    const result = await only(document, 'assignee-email', { from: 0, to: 1 });
    assert.equal(result.sound, false);
    assert.deepEqual(result.phrasing, { phrasings: 4, rendered: 8, failed: 6 });
    const problems = result.problems.filter((problem) => problem.startsWith(`/tasks/${index}/user: `));
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems[0]!, /^\/tasks\/\d+\/user: phrasing "say=1" gives away withheld fact "issue" \("#\d+"\) on seed 0: "Who is assigned to #\d+ \(.*\)\?"; the user gives it only when asked \(2 times in all\)$/);
    assert.match(problems[1]!, /^\/tasks\/\d+\/user: phrasing "say=2" cannot be said on seed 0: \{\{target\.milestone\}\}: no field "milestone" \(2 times in all\)$/);
    assert.match(problems[2]!, /^\/tasks\/\d+\/user: phrasing "say=3" does not tell fact "title" \(".*"\) on seed 0: "Who is assigned to that issue\?"; a told fact is in every first message \(2 times in all\)$/);
  });

  it("plays a lane's first three seeds unless told otherwise", () => {
    const lane = laneOf(shipped());
    assert.deepEqual(defaultCheckSeeds(lane), { from: 0, to: 2 });
    assert.deepEqual(defaultCheckSeeds({ ...lane, seeds: { from: 5, to: 5 } }), { from: 5, to: 5 });
  });
});
