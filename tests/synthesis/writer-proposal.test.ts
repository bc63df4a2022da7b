// `lanes synthesize --writer`: a writer model proposes each candidate as JSON.
// The model is the project's fake OpenAI-compatible server (a local HTTP
// server speaking the chat-completions wire protocol, no weights), playing a
// writer scripted per draw: two good tasks, a read presented as a change, a
// call that fails, an answer that is not JSON and one that calls an unknown
// tool, a question whose answer other records share, and a good question. Only the good ones are kept, each rejection has its reason, the lane
// is proven sound, and a rerun reads the recorded answers alone (the server
// stopped) and writes the same bytes.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { substream } from '../../src/core/random.js';
import { getWorld } from '../../src/world/world-registry.js';
import { drawInitialSnapshot } from '../../src/world/world-session.js';
import { surveyState } from '../../src/synthesis/state-survey.js';
import { parameteriseAnswer, readWriterAnswer } from '../../src/synthesis/writer-answer.js';
import type { FakeConversation, FakeDecision } from '../fixtures/fake-agents.js';
import { FAKE_MODELS } from '../fixtures/fake-agents.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fixtures/fake-openai.js';
import { runCliAsync } from '../helpers.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;

/** The first issue the writer is shown, read from its request as a model would. */
function shownIssue(request: string): { number: number; title: string; state: string } {
  const lines = request.split('\n');
  const heading = lines.findIndex((line) => line.startsWith('- issues at /issues'));
  return JSON.parse(lines[heading + 1]!.trim());
}

/** A writer scripted by the draw its request names. */
function writer(conversation: FakeConversation): FakeDecision {
  const request = conversation.turns.find((turn) => turn.role === 'user')?.text ?? '';
  const draw = Number(/^Proposal (\d+):/m.exec(request)?.[1]);
  const { number, title, state } = shownIssue(request);
  const answers: Record<number, unknown> = {
    0: 'Sure! Here is a task for you: close an issue.',
    1: { instruction: `Delete the repository.`, actions: [{ tool: 'delete_repository', arguments: {} }] },
    2: { instruction: `Please close issue #${number} as completed.`, actions: [{ tool: 'close_issue', arguments: { number, reason: 'completed' } }] },
    3: { instruction: `Close issue #${number} as completed.`, actions: [{ tool: 'get_issue', arguments: { number } }] },
    4: { instruction: 'Close issue #99999 as completed.', actions: [{ tool: 'close_issue', arguments: { number: 99999, reason: 'completed' } }] },
    5: { instruction: `Rename issue ${number} to "Export fails for large CSV files".`, actions: [{ tool: 'update_issue', arguments: { number, fields: { title: 'Export fails for large CSV files' } } }] },
    // A question: its answer must be a field of the issue it reads that no other issue has (every issue has a state).
    6: { instruction: `Is issue #${number} open or closed?`, actions: [{ tool: 'get_issue', arguments: { number } }], answer: state },
    7: { instruction: `What is the title of issue #${number}?`, actions: [{ tool: 'get_issue', arguments: { number } }], answer: title },
  };
  const answer = answers[draw] ?? 'no more ideas';
  return { kind: 'text', text: typeof answer === 'string' ? answer : '```json\n' + JSON.stringify(answer, null, 2) + '\n```' };
}

let fake: FakeOpenAI;
let cwd: string;
let first: { status: number | null; stdout: string; stderr: string };
const writerFlags = (baseUrl: string) => ['--writer', 'openai:fake-writer:1b', '--base-url', baseUrl, '--model-digest', DIGEST];
const synthesize = (out: string, baseUrl: string, ...more: string[]) =>
  runCliAsync(cwd, 'lanes', 'synthesize', 'issues', '--count', '3', '--seeds', '0..1', '--check-seeds', '2', '--golden-seeds', '2', '--out', out, ...writerFlags(baseUrl), ...more);

before(async () => {
  fake = await startFakeOpenAI({ flavour: 'vllm', models: [...FAKE_MODELS, { name: 'fake-writer:1b', family: 'qwen2', behaviour: writer }] });
  cwd = mkdtempSync(join(tmpdir(), 'ef-writer-'));
  mkdirSync(join(cwd, 'lanes'));
  first = await synthesize('lanes/issues-writer-v1.json', fake.baseUrl, '--json');
});
after(async () => {
  await fake.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('lanes synthesize --writer', () => {
  it('keeps the good proposals, parameterised, named by the writer, and lanes check proves them sound', async () => {
    assert.equal(first.status, 0, first.stdout + first.stderr);
    const report = JSON.parse(first.stdout);
    assert.equal(report.kept, 3);
    assert.deepEqual(
      report.events.map((event: { draw: number; kept: boolean; reason?: string }) => [event.draw, event.kept ? 'kept' : event.reason]),
      [[0, 'writer-garbage'], [1, 'writer-garbage'], [2, 'kept'], [3, 'no-effect'], [4, 'call-failed'], [5, 'kept'], [6, 'no-fact'], [7, 'kept']],
    );
    const lane = JSON.parse(readFileSync(join(cwd, 'lanes', 'issues-writer-v1.json'), 'utf8'));
    assert.match(lane.description, /by the writer model openai:fake-writer:1b/);
    const [close, rename, question] = lane.tasks;
    assert.deepEqual(question.user, { say: ['<greet?>What is the title of issue #{{target.number}}?<thanks?>'] });
    assert.deepEqual(question.solution, [{ call: 'get_issue', arguments: { number: '{{target.number}}' }, as: 'r1' }, { answer: 'The title is {{r1.issue.title}}.' }]);
    assert.deepEqual(question.predicates, [{ id: 'names-the-title', answer: { contains: '{{target.title}}' } }, { id: 'changes-nothing', unchanged: '' }], 'the answer is the title of the issue drawn on each seed');
    assert.equal(question.synthesized.kind, 'read');
    for (const task of [close, rename]) {
      assert.deepEqual([task.synthesized.by, task.synthesized.writer_digest, task.synthesized.kind], ['openai:fake-writer:1b', DIGEST, 'write']);
      assert.equal(task.params.target.from, '/issues', 'the issue the writer named is an issue drawn on each seed');
      assert.match(JSON.stringify(task.user), /\{\{target\.number\}\}/, 'the instruction names it by the same placeholder');
      assert.ok(task.wrong.length >= 1);
    }
    assert.deepEqual(lane.tasks[0].user, { say: ['<greet?>Please close issue #{{target.number}} as completed.<thanks?>'] }, 'greeted and thanked like the lane\'s other tasks');
    assert.equal(lane.tasks[0].params.target.where.state, 'open', 'closing needs an open issue: the precondition search found it');
    assert.deepEqual(lane.tasks[1].params.target.where, { title: { not: 'Export fails for large CSV files' } }, 'renaming takes any issue not already so named');
    assert.deepEqual(lane.tasks[0].solution[0], { call: 'close_issue', arguments: { number: '{{target.number}}', reason: 'completed' }, as: 'r1' });

    const bodies = fake.chatBodies().filter((body) => body.model === 'fake-writer:1b') as { temperature?: number; seed?: number }[];
    assert.equal(bodies.length, 8, 'one request per draw');
    assert.ok(bodies.every((body) => body.temperature === 0 && Number.isInteger(body.seed)), 'asked at temperature 0 with a seed');
    assert.equal(new Set(bodies.map((body) => body.seed)).size, 8, 'a seed per draw');

    const check = await runCliAsync(cwd, 'lanes', 'check', 'lanes/issues-writer-v1.json', '--workers', '1');
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /3 tasks, seeds 0\.\.1: all sound/);
  });

  it('says why each rejected proposal was rejected, and goes on to the next draw', () => {
    const report = JSON.parse(first.stdout);
    const detail = (draw: number) => report.events.find((event: { draw: number }) => event.draw === draw).detail as string;
    assert.match(detail(0), /^the writer's answer is not JSON: "Sure! Here is a task/);
    assert.match(detail(1), /^the writer's answer calls a tool the world does not have: "delete_repository"/);
    assert.match(detail(3), /changed nothing on any seed, though the instruction asks for a change \(a question says its "answer"\)/);
    assert.match(detail(4), /close_issue failed/);
    assert.match(detail(6), /^the writer's answer "(open|closed)" is no field of the issue it named that the results show and no other issue has/);
    assert.deepEqual(report.rejected, { 'writer-garbage': 2, 'call-failed': 1, 'no-effect': 1, 'no-fact': 1 });
  });

  it('records every answer, and a rerun with the model server gone writes the same lane from the recording alone', async () => {
    const recording = JSON.parse(readFileSync(join(cwd, 'lanes', 'issues-writer-v1.writer.json'), 'utf8'));
    assert.equal(recording.format, 'episode-factory.writer-answers.v1');
    assert.deepEqual([recording.writer, recording.by, recording.writer_digest], ['openai:fake-writer:1b', 'openai:fake-writer:1b', DIGEST]);
    assert.deepEqual(recording.answers.map((answer: { draw: number }) => answer.draw), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(recording.answers[0].text, 'Sure! Here is a task for you: close an issue.');

    const bytes = readFileSync(join(cwd, 'lanes', 'issues-writer-v1.json'));
    const stopped = await startFakeOpenAI({ flavour: 'vllm' });
    const gone = stopped.baseUrl;
    await stopped.close();
    const asked = fake.chatBodies().length;
    const again = await synthesize('lanes/issues-writer-v1.json', gone, '--force');
    assert.equal(again.status, 0, again.stdout + again.stderr);
    assert.deepEqual(readFileSync(join(cwd, 'lanes', 'issues-writer-v1.json')), bytes, 'the same lane, byte for byte');
    assert.equal(fake.chatBodies().length, asked, 'nothing asked of a model');
  });

  it('a writer whose server does not answer at start is exit 2, with nothing written', async () => {
    const stopped = await startFakeOpenAI({ flavour: 'vllm' });
    const gone = stopped.baseUrl;
    await stopped.close();
    const run = await synthesize('lanes/issues-nowhere-v1.json', gone);
    assert.equal(run.status, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /127\.0\.0\.1/);
    assert.ok(!existsSync(join(cwd, 'lanes', 'issues-nowhere-v1.json')) && !existsSync(join(cwd, 'lanes', 'issues-nowhere-v1.writer.json')));
    const bad = await runCliAsync(cwd, 'lanes', 'synthesize', 'issues', '--writer', 'gpt', '--out', 'lanes/issues-bad-v1.json');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--writer "gpt" is not a model/);
  });
});

describe('a writer answer, parameterised', () => {
  it('binds values found in the state to parameters, in the calls and the instruction alike, and leaves the rest literal', async () => {
    const world = getWorld('issues');
    const initial = await drawInitialSnapshot(world, substream(0, 'world'), {}, '2026-12-01T00:00:00Z');
    const collections = surveyState(initial);
    const issues = collections.find((collection) => collection.pointer === '/issues')!;
    const users = collections.find((collection) => collection.pointer === '/users')!;
    const [issue, other] = [issues.items[0]!, issues.items[1]!];
    const user = users.items[0]!;
    const tools = world.tools.map((tool) => ({ name: tool.name, inputSchema: tool.inputSchema, ...(tool.annotations ? { annotations: tool.annotations } : {}) }));
    const text = JSON.stringify({
      instruction: `Assign issue ${issue.number} to ${user.name} (${user.login}), due 2026-07-01, then close issue ${other.number} as a duplicate of ${issue.number}.`,
      actions: [
        { tool: 'update_issue', arguments: { number: issue.number, fields: { assignee: user.login, due_on: '2026-07-01' } } },
        { tool: 'close_issue', arguments: { number: other.number, reason: 'duplicate', duplicate_of: issue.number } },
      ],
    });
    const answer = readWriterAnswer(text, tools);
    assert.ok(!('problem' in answer), JSON.stringify(answer));
    const candidate = parameteriseAnswer(answer, { tools, collections }, substream(0, 'test'));
    assert.equal(candidate.instruction.say![0], '<greet?>Assign issue {{target.number}} to {{target2.name}} ({{target2.login}}), due 2026-07-01, then close issue {{target_other1.number}} as a duplicate of {{target.number}}.<thanks?>');
    assert.deepEqual(candidate.calls.map((call) => call.arguments), [
      { number: '{{target.number}}', fields: { assignee: '{{target2.login}}', due_on: '2026-07-01' } },
      { number: '{{target_other1.number}}', reason: 'duplicate', duplicate_of: '{{target.number}}' },
    ]);
    assert.deepEqual(candidate.pool.params.target, { from: '/issues' });
    assert.deepEqual(candidate.pool.params.target_other1, { from: '/issues', where: { number: { not: '{{target.number}}' } } });
    assert.deepEqual(candidate.pool.params.target2, { from: '/users' });
    assert.deepEqual(candidate.calls[0]!.mentions.map((mention) => mention.text), ['{{target.number}}', '{{target2.login}}', '2026-07-01']);
    assert.equal(candidate.target?.pointer, '/issues');

    // A small number is a count, not an issue, unless the argument is about an issue.
    const search = readWriterAnswer(JSON.stringify({ instruction: 'Find 5 open issues about login.', actions: [{ tool: 'search_issues', arguments: { query: 'login', limit: 5 } }] }), tools);
    assert.ok(!('problem' in search));
    assert.deepEqual(parameteriseAnswer(search, { tools, collections }, substream(0, 'test')).calls[0]!.arguments, { query: 'login', limit: 5 });
  });

  it('refuses answers of the wrong shape, quoting what was wrong', () => {
    const tools = getWorld('issues').tools.map((tool) => ({ name: tool.name, inputSchema: tool.inputSchema }));
    const problem = (text: string) => {
      const read = readWriterAnswer(text, tools);
      return 'problem' in read ? read.problem : 'accepted';
    };
    assert.match(problem('{"instruction": "Close it"'), /^the writer's answer is not JSON: /);
    assert.match(problem('{"actions": []}'), /has no "instruction"/);
    assert.match(problem('{"instruction": "Close it", "actions": []}'), /has no "actions" \(a list of 1 to 4 tool calls\)/);
    assert.match(problem('{"instruction": "Close it", "actions": [{"tool": "close_issue", "arguments": [1]}]}'), /arguments that are not an object/);
    assert.match(problem('{"instruction": "Who?", "actions": [{"tool": "get_issue", "arguments": {"number": 4}}], "answer": {"login": "ana"}}'), /has an "answer" that is not a string or a number/);
    assert.equal(problem('Here: {"instruction": "Close issue 4", "actions": [{"tool": "close_issue", "arguments": {"number": 4, "reason": "completed"}}]}'), 'accepted');
  });
});
