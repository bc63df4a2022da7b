// `env serve` speaking OpenEnv's protocol beside its own API, driven the way
// OpenEnv's users drive it: a Python client on the real `websockets` library
// (tests/python/openenv_socket_session.py, written from OpenEnv's client) plays
// every task's solution by seed alone and gets reward 1 and the judgement
// generate gives, hits every error code with the socket staying open, meets a
// full server and keeps its connection through a slow turn; POST /mcp answers
// JSON-RPC with sessions that are episodes; and the six checks of `openenv
// validate --url` (clients/python/openenv_validate.py) pass, and fail against
// a server that is not an OpenEnv one.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { parseOpenEnvAction, parseOpenEnvReset, OpenEnvError } from '../../src/environment/openenv-protocol.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { assistantTurns, environmentServers, generatedRecord, get, post, request } from '../environment-client.js';
import { pythonEnvironment, REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

withoutVariable('SOURCE_DATE_EPOCH');

const serve = environmentServers();

const toolWorld = loadLane('tool-world-v1', REPO_ROOT);

function python(script: string, ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(pythonEnvironment(), [join(REPO_ROOT, script), ...args], { timeout: 180_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

interface SessionReport {
  replies: any[];
  http: { status: number; body: any }[];
  closed: { code: number | null; reason: string | null } | null;
  sessions: SessionReport[];
}

/** Runs a script of operations on /ws through the Python client and returns its report. */
async function socketSession(url: string, script: object): Promise<SessionReport> {
  const file = join(temporaryDirectory(), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const run = await python('tests/python/openenv_socket_session.py', url, file);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as SessionReport;
}

/** A solution's turns as OpenEnv actions: a turn of one call is a call_tool action, anything else a message action. */
function openEnvActions(turns: ReturnType<typeof assistantTurns>): object[] {
  return turns.map((turn) =>
    turn.tool_calls?.length === 1 && !turn.content
      ? { type: 'call_tool', tool_name: turn.tool_calls[0]!.function.name, arguments: JSON.parse(turn.tool_calls[0]!.function.arguments), metadata: {} }
      : { type: 'message', message: turn },
  );
}

describe('OpenEnv: reset data and actions', () => {
  it('derives task and seed from a bare seed so that counting seeds reaches every task, and reads task and seed when given', () => {
    const tasks = toolWorld.document.tasks;
    const n = tasks.length;
    assert.ok(n > 1);
    const firstRound = Array.from({ length: n }, (_, seed) => parseOpenEnvReset({ seed }, toolWorld));
    assert.deepEqual(firstRound.map((reset) => reset.task.id), tasks.map((task) => task.id));
    assert.deepEqual(new Set(firstRound.map((reset) => reset.seed)), new Set([0]));
    assert.deepEqual([parseOpenEnvReset({ seed: 3 * n + 2 }, toolWorld).task.id, parseOpenEnvReset({ seed: 3 * n + 2 }, toolWorld).seed], [tasks[2]!.id, 3]);
    assert.deepEqual([parseOpenEnvReset(undefined, toolWorld).task.id, parseOpenEnvReset({}, toolWorld).seed], [tasks[0]!.id, 0]);
    const named = parseOpenEnvReset({ task: tasks[1]!.id, seed: 7, agent: 'grpo', episode_id: 'theirs', row_column: 'ignored' }, toolWorld);
    assert.deepEqual([named.task.id, named.seed, named.agent.name, named.derived, named.rollout], [tasks[1]!.id, 7, 'grpo', false, undefined]);
    assert.equal(parseOpenEnvReset({ seed: 2, rollout: 3 }, toolWorld).rollout, 3, 'a GRPO group\'s rollout is read as on the native /reset');
    for (const [data, field] of [[{ seed: -1 }, 'seed'], [{ seed: 1.5 }, 'seed'], [{ task: 'nope' }, 'task'], [{ agent: 'bad name!' }, 'agent'], [{ rollout: 10_000 }, 'rollout'], [[1], 'data']] as const) {
      assert.throws(
        () => parseOpenEnvReset(data, toolWorld),
        (error: unknown) => error instanceof OpenEnvError && error.code === 'VALIDATION_ERROR' && (error.extra.errors as any)[0].loc[0] === field,
        JSON.stringify(data),
      );
    }
  });

  it('reads list_tools, call_tool (with OpenEnv\'s metadata) and message actions, and refuses anything else naming the field', () => {
    assert.deepEqual(parseOpenEnvAction({ type: 'list_tools', metadata: {} }), { type: 'list_tools' });
    assert.deepEqual(parseOpenEnvAction({ type: 'call_tool', tool_name: 'get_issue', arguments: { number: 3 }, metadata: {} }), {
      type: 'call_tool',
      toolName: 'get_issue',
      action: { kind: 'tool_call', name: 'get_issue', arguments: { number: 3 } },
    });
    assert.deepEqual(parseOpenEnvAction({ tool_name: 'get_issue' }).type, 'call_tool', 'a client that leaves out the type is read by its fields');
    const message = parseOpenEnvAction({ type: 'message', message: { role: 'assistant', content: 'It is 3.' } });
    assert.deepEqual(message, { type: 'message', action: { kind: 'final_text', text: 'It is 3.' }, clientIds: [] });
    for (const [data, field] of [
      [{ type: 'call_tool' }, 'tool_name'],
      [{ type: 'call_tool', tool_name: 'x', extra: 1 }, 'extra'],
      [{ type: 'list_tools', tool_name: 'x' }, 'tool_name'],
      [{ type: 'message', message: { role: 'user', content: 'hi' } }, 'message'],
      [{ type: 'jump' }, 'type'],
      [{}, 'type'],
      ['list_tools', 'data'],
    ] as const) {
      assert.throws(
        () => parseOpenEnvAction(data),
        (error: unknown) => error instanceof OpenEnvError && error.code === 'VALIDATION_ERROR' && (error.extra.errors as any)[0].loc[0] === field,
        JSON.stringify(data),
      );
    }
  });
});

describe('OpenEnv: the /ws socket, with a Python client on the real websockets library', () => {
  it('plays every task\'s solution by seed alone on one socket (a reset per task): reward 1, generate\'s judgement, and the kept records replay and audit', async () => {
    const out = join(temporaryDirectory(), 'openenv');
    const server = await serve(toolWorld, { outDir: out });
    const tasks = toolWorld.document.tasks;
    const seed = 4;
    const ops: object[] = [];
    const expected = [];
    for (const [index, task] of tasks.entries()) {
      const generated = await generatedRecord(toolWorld, task.id, seed);
      const actions = openEnvActions(assistantTurns(generated));
      expected.push({ task: task.id, generated, actions });
      ops.push({ send: { type: 'reset', data: { seed: seed * tasks.length + index, agent: 'openenv-solver' } } });
      for (const action of actions) ops.push({ send: { type: 'step', data: action } });
      ops.push({ send: { type: 'state' } });
      ops.push({ http: ['POST', '/episodes/{episode_id}/record', null] });
    }
    ops.push({ send: { type: 'close' }, reply: false });
    const report = await socketSession(server.url, { ops, await_close: true });
    assert.deepEqual(report.closed, { code: 1000, reason: '' }, 'close ends the socket normally, with no reply');
    let at = 0;
    for (const [index, { task, generated, actions }] of expected.entries()) {
      const reset = report.replies[at++];
      assert.equal(reset.type, 'observation');
      assert.deepEqual([reset.data.observation.task.id, reset.data.observation.seed, reset.data.reward, reset.data.done], [task, seed, null, false]);
      assert.deepEqual(
        reset.data.observation.tools.map((tool: any) => tool.function.name),
        generated.tools.map((tool) => tool.name),
      );
      const steps = report.replies.slice(at, at + actions.length);
      at += actions.length;
      // The solution's own calls, wrong ones included (a lane variant sends a wrongly typed first call and repairs it).
      const results = generated.messages.flatMap((message) => (message.role === 'tool' ? [message.tool_result] : []));
      let call = 0;
      for (const [turn, step] of steps.slice(0, -1).entries()) {
        assert.deepEqual([step.type, step.data.done, step.data.reward], ['observation', false, null]);
        if ((actions[turn] as { type: string }).type === 'message') {
          call += (actions[turn] as { message: { tool_calls?: unknown[] } }).message.tool_calls?.length ?? 0;
          continue;
        }
        const expectedResult = results[call++]!;
        const { observation } = step.data;
        assert.equal(observation.result.is_error, !expectedResult.ok);
        assert.deepEqual(observation.error, expectedResult.ok ? null : { error_type: 'invalid_args', message: expectedResult.error });
        assert.equal(observation.result.content[0].type, 'text');
        assert.deepEqual(observation.result.data, JSON.parse(observation.result.content[0].text));
      }
      const last = steps.at(-1);
      assert.deepEqual([last.data.done, last.data.reward], [true, 1], `${task}: ${JSON.stringify(last.data).slice(0, 400)}`);
      assert.equal(last.data.observation.outcome, 'final_answer');
      assert.deepEqual(last.data.observation.predicates, generated.result.predicates);
      const state = report.replies[at++];
      assert.deepEqual([state.type, state.data.step_count, state.data.task, state.data.done], ['state', actions.length, task, true]);
      const kept = report.http[index]!;
      assert.equal(kept.status, 200, JSON.stringify(kept.body).slice(0, 300));
      assert.equal(kept.body.record_id, `tool-world-v1.${task}.s${seed}.remote-openenv-solver`);
    }
    assert.equal(at, report.replies.length, 'one reply per frame, none for close');
    const replayed = await replayDataset(out);
    assert.deepEqual([replayed.records, replayed.verified, replayed.failed], [tasks.length, tasks.length, 0], JSON.stringify(replayed.failures));
    assert.deepEqual((await auditDataset(out, { full: true })).findings, []);
    assert.equal((await get(server.url, '/episodes')).body.episodes.length, 0, 'the socket\'s close closed its episodes');
  });

  it('answers every refused frame with OpenEnv\'s error code and keeps the socket open; a second reset ends the first episode', async () => {
    const server = await serve(toolWorld);
    const report = await socketSession(server.url, {
      ops: [
        { send: { type: 'step', data: { type: 'list_tools' } } },
        { send_text: '{"type": "reset"' },
        { send_binary: '{"type": "state"}' },
        { send: { type: 'ping' } },
        { send: { type: 'step' } },
        { send: { type: 'state', data: {} } },
        { send: { type: 'reset', data: { seed: -1 } } },
        { send: { type: 'reset', data: { task: 'close-named-issue', seed: 2 } } },
        { send: { type: 'step', data: { type: 'call_tool' } } },
        { send: { type: 'step', data: { type: 'list_tools' } } },
        { send: { type: 'step', data: { type: 'call_tool', tool_name: 'no_such_tool', arguments: {} } } },
        { send: { type: 'step', data: { type: 'call_tool', tool_name: 'get_issue', arguments: { number: 'twelve' } } } },
        { send: { type: 'mcp', data: { jsonrpc: '2.0', id: 7, method: 'tools/list' } } },
        { send: { type: 'mcp', data: { jsonrpc: '2.0', id: 8, method: 'openenv/session/create' } } },
        { send: { type: 'step', data: { type: 'message', message: { role: 'assistant', content: 'Done, I think.' } } } },
        { send: { type: 'step', data: { type: 'message', message: { role: 'assistant', content: 'Again.' } } } },
        { http: ['GET', '/episodes/{episode_id}', null] },
        { send: { type: 'reset', data: { seed: 0 } } },
        { http: ['GET', '/episodes/{previous_episode_id}', null] },
        { send: { type: 'state' } },
      ],
    });
    const codes = report.replies.map((reply) => (reply.type === 'error' ? reply.data.code : reply.type));
    assert.deepEqual(codes, [
      'EXECUTION_ERROR', // a step before any reset
      'INVALID_JSON',
      'INVALID_JSON', // a binary frame
      'UNKNOWN_TYPE',
      'VALIDATION_ERROR', // a step without data
      'VALIDATION_ERROR', // state takes no data
      'VALIDATION_ERROR', // a negative seed
      'observation',
      'VALIDATION_ERROR', // call_tool without tool_name
      'observation', // list_tools
      'observation', // an unknown tool: the agent's behaviour, recorded, not a refused frame
      'observation', // arguments of the wrong type: the same
      'mcp',
      'mcp',
      'observation', // the final answer
      'EXECUTION_ERROR', // a step after done
      'observation', // the second reset
      'state',
    ]);
    const [beforeReset, , , unknownType, noData, , negativeSeed, reset, noToolName, listed, unknownTool, wrongArguments, mcpList, mcpSession, answered, afterDone, , state] = report.replies;
    assert.match(beforeReset.data.message, /no episode on this socket/);
    assert.match(beforeReset.data.fix, /reset/);
    assert.equal(unknownType.data.message, 'Unknown message type: ping');
    assert.deepEqual(noData.data.errors[0].loc, ['data']);
    assert.deepEqual(negativeSeed.data.errors[0].loc, ['seed']);
    assert.deepEqual(noToolName.data.errors[0].loc, ['tool_name']);
    assert.deepEqual(
      listed.data.observation.tools.map((tool: any) => tool.name),
      reset.data.observation.tools.map((tool: any) => tool.function.name),
    );
    assert.ok(listed.data.observation.tools[0].input_schema.type, 'tools listed with OpenEnv\'s snake_case input_schema');
    assert.deepEqual([unknownTool.data.observation.error.error_type, unknownTool.data.observation.result.is_error], ['tool_not_found', true]);
    assert.equal(wrongArguments.data.observation.error.error_type, 'invalid_args');
    assert.match(wrongArguments.data.observation.error.message, /number/);
    assert.deepEqual(
      mcpList.data.result.tools.map((tool: any) => Object.keys(tool).sort()),
      mcpList.data.result.tools.map(() => ['description', 'inputSchema', 'name']),
    );
    assert.equal(mcpList.data.id, 7);
    assert.equal(mcpSession.data.result.session_id, reset.data.observation.episode_id, 'a socket\'s session is its episode');
    assert.deepEqual([answered.data.done, answered.data.reward, answered.data.observation.outcome], [true, 0, 'final_answer']);
    assert.ok(answered.data.observation.predicates.some((predicate: any) => !predicate.passed));
    assert.equal(afterDone.data.reason, 'episode_done');
    assert.equal(report.http[0]!.status, 200);
    assert.deepEqual([report.http[1]!.status, report.http[1]!.body.error.code], [404, 'episode_closed'], 'a second reset closed the first episode');
    assert.match(report.http[1]!.body.error.message, /a new reset on its socket/);
    assert.deepEqual([state.data.step_count, state.data.task, state.data.seed], [0, toolWorld.document.tasks[0]!.id, 0]);
  });

  it('tells a socket the server is full (CAPACITY_REACHED, then closes it), and keeps a socket open through a turn longer than its ping timeout', async () => {
    const server = await serve(toolWorld, { maxEpisodes: 1 });
    const report = await socketSession(server.url, {
      ping_interval: 0.2,
      ping_timeout: 0.5,
      ops: [
        { send: { type: 'reset', data: { seed: 1 } } },
        { session: { ops: [{ recv: true }], await_close: true } },
        // A slow model's turn: pings go out every 0.2 s and must be answered within 0.5 s.
        { sleep: 2 },
        { send: { type: 'state' } },
      ],
    });
    const [full] = report.sessions;
    assert.equal(full!.replies[0].data.code, 'CAPACITY_REACHED');
    assert.deepEqual([full!.replies[0].data.active_sessions, full!.replies[0].data.max_sessions], [1, 1]);
    assert.equal(full!.closed?.code, 1000);
    assert.equal(report.closed, null, 'the first socket is still open after the wait');
    assert.deepEqual([report.replies[1].type, report.replies[1].data.phase], ['state', 'awaiting_action']);
  });

  it('refuses an upgrade anywhere but /ws (404) and from a browser page (403), as JSON', async () => {
    const server = await serve(toolWorld);
    const { WebSocket } = await import('ws');
    const refusal = (path: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(`${server.url.replace('http', 'ws')}${path}`, { headers });
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.on('open', () => resolve(101));
        socket.on('error', () => undefined);
      });
    assert.equal(await refusal('/elsewhere'), 404);
    assert.equal(await refusal('/ws', { Origin: 'http://evil.example' }), 403);
    assert.equal(await refusal('/ws'), 101);
  });
});

describe('OpenEnv: POST /mcp, and what openenv validate checks', () => {
  it('answers JSON-RPC with HTTP 200 always; sessions are episodes the native API sees; a call without a session runs on an episode of its own', async () => {
    const server = await serve(toolWorld);
    const rpc = (body: unknown, raw?: string) => request(server.url, 'POST', '/mcp', body, raw);
    const listed = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(listed.status, 200);
    assert.ok(listed.body.result.tools.some((tool: any) => tool.name === 'get_issue' && tool.inputSchema.type === 'object'));
    assert.equal((await get(server.url, '/episodes')).body.episodes.length, 0, 'the episode opened for a request without a session is closed after it');
    const created = await rpc({ jsonrpc: '2.0', id: 2, method: 'openenv/session/create', params: { task: 'close-named-issue', seed: 3 } });
    const session = created.body.result.session_id as string;
    const status = await get(server.url, `/episodes/${session}`);
    assert.deepEqual([status.status, status.body.task, status.body.seed], [200, 'close-named-issue', 3]);
    const called = await rpc({ jsonrpc: '2.0', id: 'three', method: 'tools/call', params: { name: 'search_issues', arguments: { query: 'sync', limit: 2 }, session_id: session } });
    assert.equal(called.body.id, 'three');
    assert.equal(called.body.result.is_error, false);
    assert.ok(Array.isArray(called.body.result.structured_content.issues));
    const conversation = (await get(server.url, `/episodes/${session}`)).body.messages;
    assert.equal(conversation.at(-1).role, 'tool', 'the call went into that episode');
    // The native API finishes what JSON-RPC started: a session id is an episode id.
    const finished = await post(server.url, '/step', { episode_id: session, message: { role: 'assistant', content: 'Closed.' } });
    assert.equal(finished.body.done, true);
    assert.deepEqual((await rpc({ jsonrpc: '2.0', id: 4, method: 'openenv/session/close', params: { session_id: session } })).body.result, { session_id: session, closed: true });
    const errors = [
      await rpc({ jsonrpc: '2.0', id: 5, method: 'openenv/session/close', params: { session_id: session } }),
      await rpc({ jsonrpc: '2.0', id: 6, method: 'openenv/session/close' }),
      await rpc({ jsonrpc: '2.0', id: 7, method: 'initialize' }),
      await rpc({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: {} }),
      await rpc({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { session_id: 'gone' } }),
      await rpc({}),
      await rpc(undefined, '{"jsonrpc": '),
      await rpc([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]),
    ];
    assert.deepEqual(
      errors.map((answer) => [answer.status, answer.body.jsonrpc, answer.body.error.code]),
      [
        [200, '2.0', -32602],
        [200, '2.0', -32602],
        [200, '2.0', -32601],
        [200, '2.0', -32602],
        [200, '2.0', -32602],
        [200, '2.0', -32600],
        [200, '2.0', -32700],
        [200, '2.0', -32700],
      ],
    );
    assert.equal(errors[0]!.body.error.message, `Unknown session_id: ${session}`);
    assert.equal(errors[2]!.body.error.message, 'Method not found: initialize');
    assert.equal(errors[5]!.body.id, null);
  });

  it('passes the six checks of openenv validate --url (clients/python/openenv_validate.py), which fail against a server that is not OpenEnv\'s', async () => {
    const server = await serve(toolWorld);
    const health = await get(server.url, '/health');
    assert.deepEqual(health.body, { status: 'healthy' });
    const metadata = (await get(server.url, '/metadata')).body;
    assert.deepEqual(Object.keys(metadata).sort(), ['author', 'description', 'documentation_url', 'name', 'readme_content', 'version']);
    assert.equal(metadata.name, 'tool-world-v1');
    const schema = (await get(server.url, '/schema')).body;
    assert.deepEqual(Object.keys(schema).sort(), ['action', 'observation', 'state']);
    assert.deepEqual((await get(server.url, '/state')).body, { episode_id: null, step_count: 0 });

    const validated = await python('clients/python/openenv_validate.py', server.url);
    assert.equal(validated.status, 0, validated.stdout + validated.stderr);
    const report = JSON.parse(validated.stdout);
    assert.equal(report.passed, true);
    assert.deepEqual(
      report.criteria.map((criterion: any) => [criterion.id, criterion.passed]),
      [
        ['openapi_version_available', true],
        ['health_endpoint', true],
        ['metadata_endpoint', true],
        ['schema_endpoint', true],
        ['mcp_endpoint', true],
        ['mode_endpoint_consistency', true],
      ],
    );
    assert.deepEqual([report.mode, report.standard_profile], ['simulation', 'openenv-http/1.x']);

    // A server of another kind: every route 404s.
    const other = createServer((_request, response) => response.writeHead(404).end('{"detail": "Not Found"}'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const refused = await python('clients/python/openenv_validate.py', `http://127.0.0.1:${(other.address() as AddressInfo).port}`);
      assert.equal(refused.status, 1);
      assert.deepEqual(JSON.parse(refused.stdout).summary.passed_count, 0);
    } finally {
      other.close();
    }
  });
});
