import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { loadLane, listLaneFiles, parseLane, resolveLanePath } from '../../src/lanes/lane-loader.js';
import { worldNames } from '../../src/world/world-registry.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const shipped = () => JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));

function problemsOf(document: unknown, name = 'tool-world-v1'): string[] {
  try {
    parseLane(JSON.stringify(document), `/somewhere/lanes/${name}.json`);
  } catch (error) {
    assert.ok(error instanceof FactoryError);
    assert.equal(error.code, 'lane_invalid');
    assert.equal(error.exitStatus, 2);
    return error.problems.map((problem) => `${problem.where}: ${problem.reason}`);
  }
  assert.fail('the lane was accepted');
}

describe('lane loading', () => {
  it('finds the shipped lane by name and derives its limits, variants, seeds and hash', () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    assert.equal(lane.name, 'tool-world-v1');
    assert.deepEqual(lane.seeds, { from: 0, to: 7 });
    assert.deepEqual(lane.variants, { clean: 2, wrong_type_first: 1 });
    assert.equal(lane.limits.max_steps, 10);
    assert.match(lane.sha256, /^[0-9a-f]{64}$/);
    assert.ok(lane.document.tasks.length >= 4);
  });

  it('hashes content, not formatting', () => {
    const document = shipped();
    const compact = parseLane(JSON.stringify(document), '/x/tool-world-v1.json');
    const pretty = parseLane(JSON.stringify(document, null, 4), '/y/tool-world-v1.json');
    assert.equal(compact.sha256, pretty.sha256);
    document.tasks[0].title += '!';
    assert.notEqual(parseLane(JSON.stringify(document), '/x/tool-world-v1.json').sha256, compact.sha256);
  });

  it('leaves the dataset card out of the hash: a license edit changes no episode, so no record goes stale', () => {
    const document = shipped();
    const licensed = parseLane(JSON.stringify(document), '/x/tool-world-v1.json');
    assert.deepEqual(licensed.document.dataset_card, { license: 'mit', task_categories: ['text-generation'] });
    document.dataset_card = { license: 'cc-by-4.0' };
    assert.equal(parseLane(JSON.stringify(document), '/x/tool-world-v1.json').sha256, licensed.sha256);
    delete document.dataset_card;
    assert.equal(parseLane(JSON.stringify(document), '/x/tool-world-v1.json').sha256, licensed.sha256);
  });

  it('checks the dataset card: a license id, and a name for "other"', () => {
    const document = shipped();
    document.dataset_card = { license: 'Creative Commons' };
    assert.ok(problemsOf(document).some((problem) => problem.includes('/dataset_card/license')), 'not an id');
    document.dataset_card = { license: 'other' };
    assert.ok(problemsOf(document).some((problem) => problem.includes('license_name')), '"other" without a name');
    document.dataset_card = { task_categories: ['text-generation'] };
    assert.ok(problemsOf(document).some((problem) => problem.includes('license')), 'no license');
  });

  it('finds a lane by path, and names known lanes when a name is unknown', () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'copy.json');
    writeFileSync(path, JSON.stringify({ ...shipped(), name: 'copy' }));
    assert.equal(resolveLanePath(path), path);
    assert.equal(loadLane(path).name, 'copy');
    assert.throws(
      () => resolveLanePath('no-such-lane', REPO_ROOT),
      (error: unknown) => error instanceof FactoryError && error.code === 'lane_not_found' && /tool-world-v1/.test(error.fix ?? ''),
    );
    assert.ok(listLaneFiles(REPO_ROOT).some((file) => file.endsWith('tool-world-v1.json')));
  });

  it('finds a synthesised lane by name in lanes/synthesized/, after lanes/, and lists no recording or rewrites cache as a lane', () => {
    const directory = temporaryDirectory();
    mkdirSync(join(directory, 'lanes', 'synthesized'), { recursive: true });
    writeFileSync(join(directory, 'lanes', 'synthesized', 'made-v1.json'), JSON.stringify({ ...shipped(), name: 'made-v1' }));
    writeFileSync(join(directory, 'lanes', 'synthesized', 'made-v1.writer.json'), '{}');
    writeFileSync(join(directory, 'lanes', 'hand-v1.json'), JSON.stringify({ ...shipped(), name: 'hand-v1' }));
    writeFileSync(join(directory, 'lanes', 'hand-v1.rewrites.json'), '{}');
    assert.equal(resolveLanePath('made-v1', directory), join(directory, 'lanes', 'synthesized', 'made-v1.json'));
    assert.equal(loadLane('made-v1', directory).name, 'made-v1');
    const local = listLaneFiles(directory).filter((file) => file.startsWith(directory));
    assert.deepEqual(local, [join(directory, 'lanes', 'hand-v1.json'), join(directory, 'lanes', 'synthesized', 'made-v1.json')]);
  });

  it('rejects text that is not JSON, naming the file', () => {
    assert.throws(() => parseLane('{"name": ', '/x/bad.json'), (error: unknown) => error instanceof FactoryError && /not valid JSON/.test(error.problems[0]!.reason));
  });

  it('lists every schema problem with its JSON pointer, not just the first', () => {
    const document = shipped();
    delete document.system_prompt;
    document.seeds = 'zero to seven';
    document.tasks[0].id = 'Find Bugs';
    document.tasks[1].solution[0].colour = 'red';
    document.limits.max_steps = 0;
    const problems = problemsOf(document);
    for (const expected of [
      '/system_prompt: missing required field',
      '/seeds: must match the pattern',
      '/tasks/0/id: must match the pattern',
      '/tasks/1/solution/0/colour: unknown field',
      '/limits/max_steps: must be >= 1',
    ]) {
      assert.ok(problems.some((problem) => problem.includes(expected)), `expected a problem like "${expected}" in:\n${problems.join('\n')}`);
    }
  });

  it('lists every semantic problem: unknown world tool, undefined template names, bad predicates, name mismatch', () => {
    const document = shipped();
    document.tasks[1].solution[0].call = 'close_isue';
    document.tasks[0].user = 'Find bugs about {{subject}}.';
    document.tasks[2].predicates[0] = { id: 'bad', path: '/issues/1/state', equals: 'open', exists: true };
    document.tasks[2].predicates[1] = { id: 'bad-regex', answer: { matches: '([' } };
    document.tasks[3].solution.push({ call: 'get_issue', arguments: {} });
    document.tasks[4].id = document.tasks[3].id;
    document.policy.variants.always_perfect = 1;
    const problems = problemsOf(document, 'renamed');
    const expectations = [
      '/name: is "tool-world-v1" but the file is renamed.json',
      '/tasks/1/solution/0/call: unknown tool "close_isue"',
      '/tasks/0/user: template refers to "subject", which is not defined here (defined: topic)',
      '/tasks/2/predicates/0: a "path" predicate needs exactly one of equals, contains, exists',
      '/tasks/2/predicates/1/answer/matches: not a valid regular expression',
      '/tasks/3/solution/1: an answer must be the last step',
      '/tasks/3/solution: must end with an {"answer": ...} step',
      '/tasks/4/id: duplicate task id',
      '/policy/variants/always_perfect: unknown variant',
    ];
    for (const expected of expectations) {
      assert.ok(problems.some((problem) => problem.includes(expected)), `expected "${expected}" in:\n${problems.join('\n')}`);
    }
  });

  it('checks phrasing grammars: each rule at its pointer, and every phrasing states what the solution uses', () => {
    const document = shipped();
    document.phrasing = { ...document.phrasing, greet: ['Hi! ', 'Hello. '], sign_off: ' Thanks!', say: 'Hello.', whom: ' It is for {{owner}}.' };
    document.tasks[1].user = {
      say: ['<greet?><^ask>', '<^ask> <why><whom?>'],
      ask: ['close issue #{{target.number}} as completed.', 'please close #{{target.number}}, it is done.'],
      why: 'It was fixed in {{release}}.',
    };
    document.tasks[4].user = { say: ['<greet?>Who is assigned to issue #{{target.number}}?', 'Who is that issue assigned to? I need their email.'] };
    document.tasks[3].user = { say: '<greet><request>' };
    const problems = problemsOf(document);
    const expectations = [
      '/tasks/1/user/why: template refers to "release", which is not defined here (defined: target)',
      '/phrasing/whom: template refers to "owner", which is not defined here (defined: target), in task "close-named-issue"',
      '/tasks/4/user: phrasing "say=1" ("Who is that issue assigned to? I need their email.") does not state {{target.number}}, which /tasks/4/solution/0 uses: the policy may only know what the user said, whichever way it is said',
      '/tasks/3/user/say: refers to <request>, which is no rule of this task or lane (rules: greet, thanks, sign_off, whom)',
      '/phrasing/sign_off: is never used: no task\'s phrasing reaches it',
      '/phrasing/say: "say" is where each task\'s own grammar starts',
    ];
    for (const expected of expectations) {
      assert.ok(problems.some((problem) => problem.includes(expected)), `expected "${expected}" in:\n${problems.join('\n')}`);
    }
    assert.ok(!problems.some((problem) => problem.includes('/tasks/1/solution')), 'every phrasing of task 1 states the number');
    assert.ok(!problems.some((problem) => problem.includes('/phrasing/greet')), 'greet is used');

    // Fixed, the lane loads and a phrasing that states nothing the solution needs is reported at the solution step as before.
    delete document.phrasing.sign_off;
    delete document.phrasing.say;
    document.phrasing.whom = ' It is for {{target.assignee}}.';
    document.tasks[1].user.why = 'It was fixed in the last release.';
    document.tasks[3].user = { say: '<greet>Add a comment to issue #{{target.number}} saying "Reproduced on build {{build}}".' };
    document.tasks[4].user = { say: ['Who is assigned?', 'Who is it assigned to?'] };
    assert.deepEqual(problemsOf(document), [
      '/somewhere/lanes/tool-world-v1.json: /tasks/4/solution/0: uses {{target.number}}, which the user message does not state: the policy may only know what the user said',
      '/somewhere/lanes/tool-world-v1.json: /tasks/4/solution/2: uses {{target.number}}, which the user message does not state: the policy may only know what the user said',
    ]);
  });

  it('refuses a pattern the linear-time matcher cannot run, at the pointer, with what to write instead', () => {
    const document = shipped();
    document.tasks[2].predicates[1] = { id: 'repeats', answer: { matches: '(#\\d+) and \\1' } };
    document.tasks[3].predicates[0] = { id: 'behind', answer: { matches: '(?<!not )closed' } };
    document.tasks[4].predicates[0] = { id: 'huge', answer: { matches: '[a-z]{5000}' } };
    document.tasks[1].predicates.push({ id: 'hostile-but-regular', answer: { matches: '^(([a-zA-Z0-9 ,:]+)+)!$' } });
    const problems = problemsOf(document);
    const expectations = [
      '/tasks/2/predicates/1/answer/matches: backreferences (\\1) are not supported; patterns run on a linear-time engine (JavaScript syntax without backreferences or lookaround); match the repeated text itself',
      '/tasks/3/predicates/0/answer/matches: lookbehind "(?<!…)" is not supported; patterns run on a linear-time engine',
      '/tasks/4/predicates/0/answer/matches: the pattern expands to 5001 states',
    ];
    for (const expected of expectations) {
      assert.ok(problems.some((problem) => problem.includes(expected)), `expected "${expected}" in:\n${problems.join('\n')}`);
    }
    assert.ok(!problems.some((problem) => problem.includes('/tasks/1/predicates/')), 'a pattern that only backtracks in V8 is fine on a linear-time engine');
  });

  it('refuses a solution that uses a parameter value the user message does not state', () => {
    const document = shipped();
    document.tasks[1].solution[1].answer = 'Closed #{{closed.issue.number}}; it belonged to {{target.assignee}}.';
    const problems = problemsOf(document);
    assert.ok(
      problems.some((problem) => problem.includes('/tasks/1/solution/1: uses {{target.assignee}}, which the user message does not state')),
      problems.join('\n'),
    );
  });

  it('checks wrong trajectories like solutions: tools, templates, their own parameters, unique ids', () => {
    const document = shipped();
    const close = document.tasks[1];
    close.wrong = [
      { id: 'twin', description: 'calls a tool that does not exist', solution: [{ call: 'close_issues', arguments: { number: '{{target.number}}' } }, { answer: 'done' }] },
      { id: 'twin', description: 'same id again', solution: [{ answer: 'Closed {{nobody.number}}.' }] },
      { id: 'shadow', description: 'redraws the target', params: { target: { from: '/issues' } }, solution: [{ answer: 'done' }] },
      { id: 'no-answer', description: 'never answers', params: { other: { from: '/issues', where: { number: { not: '{{target.number}}' } } } }, solution: [{ call: 'close_issue', arguments: { number: '{{other.number}}', reason: 'completed' } }] },
    ];
    close.predicates.push({ id: 'names-it', answer: { matches: '#{{target.number}}\\b' } });
    const problems = problemsOf(document);
    assert.ok(!problems.some((problem) => problem.includes('names-it') || problem.includes('/predicates/4')), 'a template inside a regex is checked as plain text');
    const expectations = [
      '/tasks/1/wrong/0/solution/0/call: unknown tool "close_issues"',
      '/tasks/1/wrong/1/id: duplicate wrong trajectory id "twin"',
      '/tasks/1/wrong/1/solution/0/answer: template refers to "nobody"',
      '/tasks/1/wrong/2/params/target: "target" is already a parameter of the task',
      '/tasks/1/wrong/3/solution: must end with an {"answer": ...} step',
    ];
    for (const expected of expectations) {
      assert.ok(problems.some((problem) => problem.includes(expected)), `expected "${expected}" in:\n${problems.join('\n')}`);
    }
    // A wrong trajectory may use values the user never stated: that is how it picks the wrong record.
    assert.ok(!problems.some((problem) => problem.includes('/wrong/3') && problem.includes('does not state')), problems.join('\n'));
  });

  it('rejects an unknown world and a world config its schema refuses', () => {
    const unknownWorld = shipped();
    unknownWorld.world = { name: 'spreadsheets' };
    // Every registered world is named, server worlds included.
    assert.ok(problemsOf(unknownWorld).some((problem) => problem.includes(`/world/name: unknown world "spreadsheets"; known worlds: ${worldNames().join(', ')}`)));
    assert.ok(['calendar', 'files', 'filesystem-server', 'issues', 'memory-server', 'shop', 'sqlite-server', 'tasks'].every((name) => worldNames().includes(name)));
    const badConfig = shipped();
    badConfig.world.config = { issues_per_topic: [1, 9], colour: 'red' };
    const problems = problemsOf(badConfig);
    assert.ok(problems.some((problem) => problem.includes('/world/config/colour: unknown field')), problems.join('\n'));
    assert.ok(problems.some((problem) => problem.includes('/world/config/issues_per_topic/0: must be >= 2')), problems.join('\n'));
  });
});

describe('fault plans in lanes', () => {
  const faultsLane = () => JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-faults-v1.json'), 'utf8'));

  it('loads the shipped faults lane with its plan', () => {
    const lane = loadLane('tool-world-faults-v1', REPO_ROOT);
    assert.equal(lane.faults.select, 'one');
    assert.ok(lane.faults.faults.length >= 12);
    assert.deepEqual(loadLane('tool-world-v1', REPO_ROOT).faults, { faults: [] });
  });

  it('checks each fault entry: kind, parameters, selectors and tool names', () => {
    const document = faultsLane();
    document.faults.faults = [
      { id: 'a', kind: 'meteor_strike' },
      { id: 'b', kind: 'latency', params: { ms: -5 } },
      { id: 'c', kind: 'tool_error', lists: [1] },
      { id: 'd', kind: 'empty_first_page', tools: ['get_issue'] },
      { id: 'e', kind: 'timeout', tools: ['get_isue'] },
      { id: 'e', kind: 'stale_read' },
      { id: 'f', kind: 'transient', params: { failures: 2, colour: 'red' } },
    ];
    const problems = problemsOf(document, 'tool-world-faults-v1');
    for (const expected of [
      '/faults/faults/0/kind: must be one of: empty_first_page',
      '/faults/faults/1/params/ms: must be >= 0',
      '/faults/faults/6/params/colour: unknown field',
    ]) {
      assert.ok(problems.some((problem) => problem.includes(expected)), `expected "${expected}" in:\n${problems.join('\n')}`);
    }
    document.faults.faults = document.faults.faults.slice(2, 6);
    const semantic = problemsOf(document, 'tool-world-faults-v1');
    for (const expected of [
      '/faults/faults/0/lists: tool_error acts on tool calls',
      '/faults/faults/1: empty_first_page acts on catalog listings',
      '/faults/faults/2/tools/0: unknown tool "get_isue"',
      '/faults/faults/3/id: duplicate fault id "e"',
    ]) {
      assert.ok(semantic.some((problem) => problem.includes(expected)), `expected "${expected}" in:\n${semantic.join('\n')}`);
    }
  });

  it('checks the reads a variant makes before and after a write', () => {
    const document = faultsLane();
    document.tasks[1].solution[0].before.call = 'peek_issue';
    document.tasks[1].solution[0].after.expect = { path: '/issue/state', equals: 'closed', contains: 'x' };
    document.tasks[3].solution[0].after.arguments.number = '{{nobody.number}}';
    const problems = problemsOf(document, 'tool-world-faults-v1');
    for (const expected of [
      '/tasks/1/solution/0/before/call: unknown tool "peek_issue"',
      '/tasks/1/solution/0/after/expect: use one of equals or contains, not both',
      '/tasks/3/solution/0/after/arguments: template refers to "nobody"',
    ]) {
      assert.ok(problems.some((problem) => problem.includes(expected)), `expected "${expected}" in:\n${problems.join('\n')}`);
    }
  });
});

describe('lane checks for dialogue and parallel steps', () => {
  const dialogue = () => JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'issues-dialogue-v1.json'), 'utf8'));
  const parallel = () => JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'issues-parallel-v1.json'), 'utf8'));

  it('names an ask for an unknown fact, an answer that does not give its fact, and a predicate about an unknown fact', () => {
    const document = dialogue();
    const task = document.tasks[0];
    task.solution[0] = { ask: 'ticket' };
    task.facts[0].answer = 'You know the one.';
    task.predicates.push({ id: 'asked-the-ticket', informed: { fact: 'ticket', before: 'reopen_issue' } });
    const problems = problemsOf(document, 'issues-dialogue-v1');
    const where = '/somewhere/lanes/issues-dialogue-v1.json: /tasks/0';
    assert.ok(problems.includes(`${where}/solution/0/ask: asks for "ticket", which is not one of the task's facts (issue, reason)`), problems.join('\n'));
    assert.ok(problems.includes(`${where}/facts/0/answer: does not contain the fact's value "#{{target.number}}": a user who answers must give the fact`), problems.join('\n'));
    assert.ok(problems.includes(`${where}/predicates/5/informed/fact: "ticket" is not one of the task's facts (issue, reason)`), problems.join('\n'));
    assert.ok(problems.includes(`${where}/predicates/5/informed/before: unknown tool "reopen_issue"`), problems.join('\n'));
  });

  it('counts only a withheld fact\'s answer as said by the user: a told fact must be in the first message', () => {
    const document = dialogue();
    delete document.tasks[0].facts[0].withheld;
    const problems = problemsOf(document, 'issues-dialogue-v1');
    assert.ok(
      problems.includes('/somewhere/lanes/issues-dialogue-v1.json: /tasks/0/solution/1: uses {{target.number}}, which the user message does not state: the policy may only know what the user said'),
      problems.join('\n'),
    );
  });

  it('needs a question before a guess, at least two calls in a parallel group, and no result used inside its own group', () => {
    const document = parallel();
    const task = document.tasks[1];
    task.solution[1].parallel[1].arguments = { login: '{{ua.user.login}}' };
    document.tasks[2].guess = [{ answer: 'Guessing.' }];
    const problems = problemsOf(document, 'issues-parallel-v1');
    const where = '/somewhere/lanes/issues-parallel-v1.json: /tasks';
    assert.ok(problems.some((problem) => problem.startsWith(`${where}/1/solution/1/parallel/1/arguments: template refers to "ua"`)), problems.join('\n'));
    const lonely = parallel();
    lonely.tasks[0].solution[0].parallel.pop();
    assert.deepEqual(problemsOf(lonely, 'issues-parallel-v1'), [`${where}/0/solution/0/parallel: must have at least 2 items`]);
    assert.ok(problems.includes(`${where}/2/guess: is played instead of the first question, but the solution asks nothing; add an {"ask": ...} step or drop "guess"`), problems.join('\n'));
  });
});
