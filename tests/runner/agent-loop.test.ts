import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Message, ToolMessage } from '../../src/core/conversation.js';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { substream } from '../../src/core/random.js';
import type { Action, Policy } from '../../src/policy/policy-contract.js';
import type { UserReply, UserSimulator } from '../../src/policy/user-simulator.js';
import { runAgentLoop } from '../../src/runner/agent-loop.js';
import { DEFAULT_LIMITS, type Limits } from '../../src/runner/limits.js';
import { McpToolSession } from '../../src/runner/tool-session.js';
import { Trace } from '../../src/runner/trace.js';
import { runWorldEpisode } from '../../src/runner/world-episode.js';
import { connectScriptedWorld } from '../../src/world/kept-connections.js';
import { ReplayPolicy } from '../../src/verify/replay-policy.js';
import { issuesWorld } from '../../src/world/issues/issues-world.js';
import { connectInProcess } from '../../src/world/in-process-connection.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';

const actor = { role: 'policy', kind: 'test', name: 'listed-actions', version: '1' };
const opening: Message[] = [
  { role: 'system', content: 'You manage issues.' },
  { role: 'user', content: 'Do the thing.' },
];

async function run(actions: Action[], limits: Partial<Limits> = {}, seed = 11, user?: UserSimulator) {
  const state = issuesWorld.init(substream(seed, 'world'), {});
  const initial = canonicalJson(issuesWorld.snapshot(state));
  const trace = new Trace('run-test', undefined, undefined, { keepInMemory: true });
  const { run: result, catalog } = await runWorldEpisode({
    connect: (options) => connectScriptedWorld({ world: issuesWorld, state }, options),
    policy: new ReplayPolicy(actions, actor),
    ...(user ? { user } : {}),
    messages: opening,
    limits: { ...DEFAULT_LIMITS, ...limits },
    trace: trace.phase('test'),
  });
  const events = trace.events!;
  return { state, initial, result, catalog, events, types: events.map((event) => event.event_type) };
}

const openIssue = (seed = 11) => [...issuesWorld.init(substream(seed, 'world'), {}).issues.values()].find((issue) => issue.state === 'open')!;
const toolMessages = (messages: Message[]) => messages.filter((message): message is ToolMessage => message.role === 'tool');

/** A user who answers from a list, then is done; it remembers what it was shown. */
function listedUser(replies: UserReply[]): UserSimulator & { seen: Message[][] } {
  const seen: Message[][] = [];
  let index = 0;
  return {
    actor: { role: 'user', kind: 'test', name: 'listed-replies', version: '1' },
    seen,
    async respond(observation) {
      seen.push([...observation.messages]);
      return replies[index++] ?? { kind: 'done' };
    },
  };
}

describe('agent loop: several calls in one turn', () => {
  it('validates each call on its own, executes the good ones in order and answers every call by its id', async () => {
    const [first, second] = [...issuesWorld.init(substream(11, 'world'), {}).issues.values()].filter((issue) => issue.state === 'open');
    const { result, state, events } = await run([
      {
        kind: 'tool_calls',
        text: 'Commenting on both and reading one.',
        calls: [
          { name: 'add_comment', arguments: { number: first!.number, body: 'one' } },
          { name: 'close_issue', arguments: { number: String(second!.number), reason: 'done' } },
          { name: 'no_such_tool', arguments: {} },
          { name: 'get_issue', arguments: { number: second!.number } },
        ],
      },
      { kind: 'final_text', text: 'Done.' },
    ]);
    const assistant = result.messages[2] as any;
    assert.equal(assistant.content, 'Commenting on both and reading one.');
    assert.deepEqual(assistant.tool_calls.map((call: any) => [call.id, call.name]), [['call_1', 'add_comment'], ['call_2', 'close_issue'], ['call_3', 'no_such_tool'], ['call_4', 'get_issue']]);
    const answers = toolMessages(result.messages);
    assert.deepEqual(answers.map((message) => [message.tool_call_id, message.name, message.tool_result.ok, message.tool_result.kind ?? null]), [
      ['call_1', 'add_comment', true, null],
      ['call_2', 'close_issue', false, 'invalid_arguments'],
      ['call_3', 'no_such_tool', false, 'unknown_tool'],
      ['call_4', 'get_issue', true, null],
    ]);
    // Every field error of the bad call, none of the good ones'.
    assert.deepEqual(answers[1]!.tool_result.errors!.map((error) => error.path), ['number', 'reason']);
    assert.equal(state.issues.get(first!.number)!.comments.at(-1)!.body, 'one');
    assert.equal(state.issues.get(second!.number)!.state, 'open');
    // The read ran after the write before it: the order given is the order executed.
    const started = events.filter((event) => event.event_type === 'tool_execution_started').map((event) => event.data.call_id);
    assert.deepEqual(started, ['call_1', 'call_4']);
    assert.deepEqual(result.stats, { steps: 2, tool_calls: 2, rejected_calls: 2, error_turns: 2, user_turns: 0 });
    assert.deepEqual(result.messages.map((message) => message.role), ['system', 'user', 'assistant', 'tool', 'tool', 'tool', 'tool', 'assistant']);
  });

  it('counts every call against max_tool_calls and refuses the rest of the turn, each with its own message', async () => {
    const issue = openIssue();
    const comment = (body: string) => ({ name: 'add_comment', arguments: { number: issue.number, body } });
    const { result, state } = await run([{ kind: 'tool_calls', calls: [comment('one'), comment('two'), comment('three'), comment('four')] }, { kind: 'final_text', text: 'x' }], {
      max_tool_calls: 2,
    });
    assert.deepEqual(result.outcome, { kind: 'tool_call_limit', detail: 'reached max_tool_calls (2)' });
    assert.deepEqual(toolMessages(result.messages).map((message) => message.tool_result.kind ?? 'ok'), ['ok', 'ok', 'tool_call_limit', 'tool_call_limit']);
    assert.deepEqual(state.issues.get(issue.number)!.comments.slice(-2).map((c) => c.body), ['one', 'two']);
    assert.equal(result.stats.steps, 1);
  });

  it('treats a turn whose call has no name as malformed', async () => {
    const { result } = await run([{ kind: 'tool_calls', calls: [{ name: 'get_issue', arguments: { number: 1 } }, { name: '', arguments: {} }] } as Action, { kind: 'final_text', text: 'x' }]);
    assert.equal(toolMessages(result.messages)[0]!.tool_result.kind, 'malformed_tool_call');
    assert.equal(result.stats.tool_calls, 0);
  });
});

describe('agent loop: a user who talks back', () => {
  it('gives a text turn to the user simulator, adds its reply as a user message, and ends when the user is done', async () => {
    const user = listedUser([{ kind: 'reply', text: 'Issue #4, please.' }]);
    const { result, types } = await run([{ kind: 'final_text', text: 'Which issue do you mean?' }, { kind: 'final_text', text: 'Done with #4.' }], {}, 11, user);
    assert.deepEqual(result.messages.slice(2), [
      { role: 'assistant', content: 'Which issue do you mean?' },
      { role: 'user', content: 'Issue #4, please.' },
      { role: 'assistant', content: 'Done with #4.' },
    ]);
    assert.equal(result.final_text, 'Done with #4.');
    assert.equal(result.outcome.kind, 'final_answer');
    assert.equal(result.stats.user_turns, 1);
    assert.equal(result.stats.steps, 2);
    assert.equal(user.seen.length, 2);
    assert.equal(user.seen[0]!.at(-1)!.content, 'Which issue do you mean?');
    assert.deepEqual(types.filter((type) => type === 'user_turn' || type === 'user_done'), ['user_turn', 'user_done']);
  });

  it('stops asking the user after max_user_turns: the next text is the final answer', async () => {
    const user = listedUser([{ kind: 'reply', text: 'a' }, { kind: 'reply', text: 'b' }, { kind: 'reply', text: 'c' }]);
    const { result } = await run(
      [{ kind: 'final_text', text: '1?' }, { kind: 'final_text', text: '2?' }, { kind: 'final_text', text: '3?' }],
      { max_user_turns: 2 },
      11,
      user,
    );
    assert.deepEqual(result.messages.slice(2).map((message) => `${message.role}:${message.content}`), ['assistant:1?', 'user:a', 'assistant:2?', 'user:b', 'assistant:3?']);
    assert.equal(result.final_text, '3?');
    assert.equal(user.seen.length, 2);
  });

  it('ends the episode when the user simulator fails, as infrastructure, not as the agent behaving', async () => {
    const user: UserSimulator = {
      actor: { role: 'user', kind: 'test', name: 'broken', version: '1' },
      async respond() {
        throw new Error('model server went away');
      },
    };
    await assert.rejects(run([{ kind: 'final_text', text: 'Which one?' }], {}, 11, user), { name: 'InfrastructureError', message: /user simulator failed: model server went away/ });
  });

  it('stops a user who does not answer within the wall time, and a replay halted there stops at the same turn', async () => {
    const silent: UserSimulator = {
      actor: { role: 'user', kind: 'test', name: 'silent', version: '1' },
      respond: (_observation, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    };
    const { result } = await run([{ kind: 'final_text', text: 'Which one?' }], { wall_time_ms: 50 }, 11, silent);
    assert.deepEqual(result.outcome, { kind: 'wall_time_limit', detail: 'user turn ran past wall_time_ms (50)' });
    const state = issuesWorld.init(substream(11, 'world'), {});
    const replayed = await runWorldEpisode({
      connect: (options) => connectScriptedWorld({ world: issuesWorld, state }, options),
      policy: new ReplayPolicy([{ kind: 'final_text', text: 'Which one?' }], actor),
      user: listedUser([{ kind: 'reply', text: 'never given' }]),
      messages: opening,
      limits: { ...DEFAULT_LIMITS, wall_time_ms: 50 },
      enforceWallTime: false,
      halt: { during_user_turn: 1 },
    });
    assert.deepEqual(replayed.run.outcome, result.outcome);
    assert.deepEqual(replayed.run.messages, result.messages);
  });

  it('never asks a user when there is none: the first text is the final answer', async () => {
    const { result } = await run([{ kind: 'final_text', text: 'Which one?' }, { kind: 'final_text', text: 'never' }]);
    assert.equal(result.final_text, 'Which one?');
    assert.equal(result.messages.length, 3);
  });
});

describe('agent loop state machine', () => {
  it('stops on a final answer after one model turn', async () => {
    const { result, types } = await run([{ kind: 'final_text', text: 'Nothing to do.' }]);
    assert.equal(result.outcome.kind, 'final_answer');
    assert.equal(result.final_text, 'Nothing to do.');
    assert.deepEqual(result.stats, { steps: 1, tool_calls: 0, rejected_calls: 0, error_turns: 0, user_turns: 0 });
    assert.deepEqual(result.messages.slice(2), [{ role: 'assistant', content: 'Nothing to do.' }]);
    assert.deepEqual(types, ['catalog_listed', 'loop_started', 'model_turn', 'action_parsed', 'loop_finished']);
  });

  it('reinjects a malformed call as ok:false and lets the policy repair it', async () => {
    const issue = openIssue();
    const { result, types } = await run([
      { kind: 'malformed_tool_call', raw: '<tool_call>{"name": "get_issue", "arguments": {"number": </tool_call>', reason: 'unterminated JSON in <tool_call>' },
      { kind: 'tool_call', name: 'get_issue', arguments: { number: issue.number } },
      { kind: 'final_text', text: `Read #${issue.number}.` },
    ]);
    const [malformed, , assistantCall, repaired] = result.messages.slice(2);
    assert.deepEqual(malformed, {
      role: 'assistant',
      content: '<tool_call>{"name": "get_issue", "arguments": {"number": </tool_call>',
      malformed_tool_call: { reason: 'unterminated JSON in <tool_call>' },
    });
    const [rejection, answer] = toolMessages(result.messages);
    assert.equal(rejection!.tool_call_id, null);
    assert.deepEqual(rejection!.tool_result, { ok: false, kind: 'malformed_tool_call', error: 'malformed tool call: unterminated JSON in <tool_call>' });
    assert.deepEqual(JSON.parse(rejection!.content), { ok: false, kind: 'malformed_tool_call', error: 'malformed tool call: unterminated JSON in <tool_call>' });
    assert.equal((assistantCall as any).tool_calls[0].id, 'call_1');
    assert.equal(repaired!.role, 'tool');
    assert.equal(answer!.tool_result.ok, true);
    assert.equal(JSON.parse(answer!.content).issue.number, issue.number);
    assert.deepEqual(result.stats, { steps: 3, tool_calls: 1, rejected_calls: 1, error_turns: 1, user_turns: 0 });
    assert.equal(types.filter((type) => type === 'tool_execution_started').length, 1);
  });

  it('rejects invalid arguments with every field error, never reaching the tool, then executes the repaired call', async () => {
    const issue = openIssue();
    const { result, state, events } = await run([
      { kind: 'tool_call', name: 'close_issue', arguments: { number: String(issue.number), reason: 'done', force: true } },
      { kind: 'tool_call', name: 'close_issue', arguments: { number: issue.number, reason: 'completed' } },
      { kind: 'final_text', text: 'Closed.' },
    ]);
    const [rejected, executed] = toolMessages(result.messages);
    assert.equal(rejected!.tool_result.kind, 'invalid_arguments');
    assert.deepEqual(rejected!.tool_result.errors, [
      { path: 'force', reason: 'unknown field' },
      { path: 'number', reason: 'expected integer, got string' },
      { path: 'reason', reason: 'must be one of: completed, not_planned, duplicate' },
    ]);
    assert.equal(rejected!.tool_result.error, 'force: unknown field; number: expected integer, got string; reason: must be one of: completed, not_planned, duplicate');
    const started = events.filter((event) => event.event_type === 'tool_execution_started');
    assert.deepEqual(started.map((event) => event.data.call_id), ['call_2']);
    assert.equal(executed!.tool_result.ok, true);
    assert.equal(state.issues.get(issue.number)!.state, 'closed');
    assert.equal(result.stats.error_turns, 1);
  });

  it('does not execute a call whose arguments are rejected, so the world is untouched', async () => {
    const issue = openIssue();
    const { state, initial } = await run([
      { kind: 'tool_call', name: 'close_issue', arguments: { number: issue.number } },
      { kind: 'final_text', text: 'Gave up.' },
    ]);
    assert.equal(canonicalJson(issuesWorld.snapshot(state)), initial);
  });

  it('rejects an unknown tool and names the tools that exist', async () => {
    const { result } = await run([{ kind: 'tool_call', name: 'delete_repo', arguments: {} }, { kind: 'final_text', text: 'ok' }]);
    const [rejection] = toolMessages(result.messages);
    assert.equal(rejection!.tool_result.kind, 'unknown_tool');
    assert.match(rejection!.tool_result.error!, /unknown tool "delete_repo"; available tools: search_issues, get_issue/);
  });

  it('records a tool failure as data: an isError result is an error turn, not a rejection', async () => {
    const { result } = await run([{ kind: 'tool_call', name: 'get_issue', arguments: { number: 1 } }, { kind: 'final_text', text: 'ok' }]);
    const [failure] = toolMessages(result.messages);
    assert.deepEqual(failure!.tool_result, { ok: false, kind: 'tool_error', error: failure!.content });
    assert.match(failure!.content, /Issue #1 not found/);
    assert.deepEqual(result.stats, { steps: 2, tool_calls: 1, rejected_calls: 0, error_turns: 1, user_turns: 0 });
  });

  it('stops at max_steps', async () => {
    const issue = openIssue();
    const call: Action = { kind: 'tool_call', name: 'get_issue', arguments: { number: issue.number } };
    const { result, types } = await run([call, call, call, call, call], { max_steps: 3 });
    assert.deepEqual(result.outcome, { kind: 'step_limit', detail: 'reached max_steps (3)' });
    assert.equal(result.stats.steps, 3);
    assert.equal(result.final_text, null);
    assert.ok(types.includes('limit_or_stop'));
  });

  it('stops at max_tool_calls without executing the call over the limit', async () => {
    const issue = openIssue();
    const comment = (body: string): Action => ({ kind: 'tool_call', name: 'add_comment', arguments: { number: issue.number, body } });
    const { result, state } = await run([comment('one'), comment('two'), comment('three'), { kind: 'final_text', text: 'x' }], { max_tool_calls: 2 });
    assert.equal(result.outcome.kind, 'tool_call_limit');
    const last = toolMessages(result.messages).at(-1)!;
    assert.equal(last.tool_result.kind, 'tool_call_limit');
    assert.deepEqual(state.issues.get(issue.number)!.comments.slice(-2).map((c) => c.body), ['one', 'two']);
    assert.equal(result.stats.tool_calls, 2);
  });

  it('withholds a result larger than max_result_bytes, while the effect of the call stands', async () => {
    const issue = openIssue();
    const { result, state } = await run(
      [{ kind: 'tool_call', name: 'add_comment', arguments: { number: issue.number, body: 'x'.repeat(300) } }, { kind: 'final_text', text: 'done' }],
      { max_result_bytes: 200 },
    );
    const [message] = toolMessages(result.messages);
    assert.equal(message!.tool_result.kind, 'result_too_large');
    assert.match(message!.tool_result.error!, /result too large: \d+ bytes exceeds max_result_bytes \(200\)/);
    assert.equal(state.issues.get(issue.number)!.comments.at(-1)!.body, 'x'.repeat(300));
  });

  it('turns a policy that throws into a policy_error outcome', async () => {
    const { result } = await run([]);
    assert.deepEqual(result.outcome, { kind: 'policy_error', detail: 'replay ran out of recorded actions' });
  });

  it('stops at the wall-time limit, checked at turn boundaries', async () => {
    const state = issuesWorld.init(substream(1, 'world'), {});
    const session = await McpToolSession.open(() => connectInProcess(createWorldServer({ world: issuesWorld, state })));
    let now = 0;
    const issue = [...state.issues.keys()][0]!;
    try {
      const call: Action = { kind: 'tool_call', name: 'get_issue', arguments: { number: issue } };
      const result = await runAgentLoop({
        policy: new ReplayPolicy([call, call, call, call], actor),
        tools: session,
        messages: opening,
        limits: { ...DEFAULT_LIMITS, wall_time_ms: 2500 },
        clock: () => (now += 400),
      });
      assert.equal(result.outcome.kind, 'wall_time_limit');
      assert.ok(result.stats.tool_calls >= 1 && result.stats.tool_calls < 4);
    } finally {
      await session.close();
    }
  });

  it('can stop where an original ran out of time, before executing a given call, whatever the clock says', async () => {
    const state = issuesWorld.init(substream(1, 'world'), {});
    const session = await McpToolSession.open(() => connectInProcess(createWorldServer({ world: issuesWorld, state })));
    const issue = [...state.issues.keys()][0]!;
    let now = 0;
    try {
      const call: Action = { kind: 'tool_call', name: 'get_issue', arguments: { number: issue } };
      const result = await runAgentLoop({
        policy: new ReplayPolicy([call, call, call], actor),
        tools: session,
        messages: opening,
        limits: { ...DEFAULT_LIMITS, wall_time_ms: 1 },
        enforceWallTime: false,
        halt: { before_executing: 'call_2' },
        // Time races on; with the wall-time limit off it decides nothing.
        clock: () => (now += 1e9),
      });
      assert.deepEqual(result.outcome, { kind: 'wall_time_limit', detail: 'exceeded wall_time_ms (1) before executing call_2' });
      assert.equal(result.stats.tool_calls, 1);
      assert.equal(result.messages.at(-1)!.role, 'assistant');
    } finally {
      await session.close();
    }
  });

  it('keeps trace seq monotonic and in state-machine order', async () => {
    const issue = openIssue();
    const { events } = await run([{ kind: 'tool_call', name: 'get_issue', arguments: { number: issue.number } }, { kind: 'final_text', text: 'ok' }]);
    assert.deepEqual(events.map((event) => event.seq), events.map((_, index) => index + 1));
    assert.deepEqual(events.map((event) => event.event_type), [
      'catalog_listed', 'loop_started',
      'model_turn', 'action_parsed', 'arguments_validated', 'tool_execution_started', 'tool_execution_finished', 'result_committed',
      'model_turn', 'action_parsed', 'loop_finished',
    ]);
    for (const event of events) assert.equal(event.run_id, 'run-test');
  });
});

describe('per-call timeout over a real MCP server', () => {
  it('cancels a call that does not answer in time, sends notifications/cancelled, and records a timeout', async () => {
    const server = new Server({ name: 'slow', version: '1' }, { capabilities: { tools: {} } });
    let cancelled = false;
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'slow_tool', description: 'never answers in time', inputSchema: { type: 'object', properties: {} } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        extra.signal.addEventListener('abort', () => {
          cancelled = true;
          clearTimeout(timer);
          resolve();
        });
      });
      return { content: [{ type: 'text', text: 'too late' }] };
    });
    const session = await McpToolSession.open(() => connectInProcess(server));
    try {
      const policy: Policy = new ReplayPolicy([{ kind: 'tool_call', name: 'slow_tool', arguments: {} }, { kind: 'final_text', text: 'it timed out' }], actor);
      const result = await runAgentLoop({
        policy,
        tools: session,
        messages: opening,
        limits: { ...DEFAULT_LIMITS, tool_timeout_ms: 50 },
      });
      const [message] = toolMessages(result.messages);
      assert.equal(message!.tool_result.kind, 'timeout');
      assert.equal(message!.tool_result.ok, false);
      assert.equal(result.outcome.kind, 'final_answer');
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(cancelled, 'the server saw the cancellation');
    } finally {
      await session.close();
    }
  });
});
