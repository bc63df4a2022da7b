// Every fault kind in a whole episode: it fires, it is recorded in
// recovery.faults_fired, the harness or a scripted variant recovers from it (or
// give_up_on_fault deliberately does not), and the record replays identically.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { ToolMessage } from '../../src/core/conversation.js';
import { policyFactoryFor } from '../../src/selection/scripted-policy-factory.js';
import { planEpisodes } from '../../src/lanes/episode-plan.js';
import { parseLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { validateAgainst } from '../../src/records/schema-registry.js';
import { Trace, type TraceEvent } from '../../src/runner/trace.js';
import type { FaultEntry } from '../../src/world/faults/fault-plan.js';
import { produceEpisode } from '../../src/verify/episode-production.js';
import { replayRecord } from '../../src/verify/replay.js';
import { REPO_ROOT } from '../helpers.js';

const base = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-faults-v1.json'), 'utf8'));

async function episode(entry: FaultEntry | null, task: string, variant: string, seed = 0): Promise<{ record: EpisodeRecord; events: TraceEvent[] }> {
  const document = structuredClone(base);
  document.faults = { faults: entry ? [entry] : [] };
  document.policy.variants = { [variant]: 1 };
  const lane = parseLane(JSON.stringify(document), '/virtual/lanes/tool-world-faults-v1.json');
  const spec = planEpisodes(lane, { from: seed, to: seed }, [task])[0]!;
  const trace = new Trace('run-test', undefined, undefined, { keepInMemory: true });
  const produced = await produceEpisode(spec, policyFactoryFor(lane), { producedAt: '2026-12-01T00:00:00Z', trace: trace.phase('generate') });
  const record = JSON.parse(JSON.stringify(produced)) as EpisodeRecord;
  assert.deepEqual(validateAgainst('episode-record.v1', record), []);
  const verdict = await replayRecord(record, lane);
  assert.deepEqual(verdict.problems, [], 'the record replays identically');
  return { record, events: trace.events! };
}

function assertFired(record: EpisodeRecord, kind: string): void {
  const kinds = record.recovery.faults_fired.map((fault) => fault.kind);
  assert.ok(kinds.includes(kind), `${kind} fired (fired: ${kinds.join(', ') || 'nothing'})`);
}

function assertRecovered(record: EpisodeRecord): void {
  assert.equal(record.result.task_completed, true, JSON.stringify(record.result.predicates));
  assert.equal(record.recovery.recovered, true);
}

function assertFailed(record: EpisodeRecord): void {
  assert.equal(record.result.task_completed, false);
  assert.equal(record.recovery.recovered, false);
}

const harness = (events: TraceEvent[], action: string) => events.filter((event) => event.event_type === 'harness_recovery' && event.data.action === action);

describe('fault recovery, kind by kind', () => {
  it('empty_first_page: the harness follows the cursor; even the clean policy never notices', async () => {
    const { record, events } = await episode({ id: 'e', kind: 'empty_first_page', lists: [1] }, 'find-open-bugs', 'clean');
    assertFired(record, 'empty_first_page');
    assert.equal(record.recovery.faults_fired[0]!.step, 0);
    assert.equal(record.tools.length, 9);
    assert.equal(record.recovery.error_turns, 0);
    assertRecovered(record);
    assert.equal(harness(events, 'followed_cursor').length, 1);
  });

  it('paginate_tools: the harness reads every page', async () => {
    const { record } = await episode({ id: 'p', kind: 'paginate_tools', params: { page_size: 4 } }, 'assignee-email', 'clean');
    assertFired(record, 'paginate_tools');
    assert.equal(record.tools.length, 9);
    assertRecovered(record);
  });

  it('jsonrpc_error: retry_on_transient retries and completes; give_up_on_fault stops and fails', async () => {
    const entry: FaultEntry = { id: 'j', kind: 'jsonrpc_error', params: { codes: [-32603] } };
    const retried = await episode(entry, 'close-named-issue', 'retry_on_transient');
    assertFired(retried.record, 'jsonrpc_error');
    assertRecovered(retried.record);
    assert.equal(retried.record.recovery.error_turns, 1);
    const gaveUp = await episode(entry, 'close-named-issue', 'give_up_on_fault');
    assertFired(gaveUp.record, 'jsonrpc_error');
    assertFailed(gaveUp.record);
    assert.match(gaveUp.record.messages.at(-1)!.content, /^Sorry, I have to stop here: close_issue failed/);
  });

  it('jsonrpc_error with -32000 or -32001 is a server error, not a dropped connection or a client timeout', async () => {
    for (const code of [-32000, -32001]) {
      const { record, events } = await episode({ id: 'j', kind: 'jsonrpc_error', params: { codes: [code] } }, 'assignee-email', 'retry_on_transient');
      const failed = record.messages.find((message) => message.role === 'tool' && !message.tool_result.ok) as ToolMessage;
      assert.equal(failed.tool_result.kind, 'jsonrpc_error');
      assert.equal(failed.tool_result.code, code);
      assert.equal(harness(events, 'reconnected').length, 0);
      assert.equal(harness(events, 'cancelled_after_timeout').length, 0);
      assertRecovered(record);
    }
  });

  it('tool_error: retried with a recorded backoff', async () => {
    const { record, events } = await episode({ id: 't', kind: 'tool_error', params: { messages: ['rate limited, retry after 2s'] } }, 'comment-on-issue', 'retry_on_transient');
    assertFired(record, 'tool_error');
    assertRecovered(record);
    const retry = record.messages.find((message) => message.role === 'assistant' && message.content.includes('retrying in 10 ms'));
    assert.ok(retry, 'the retry explains itself');
    assert.deepEqual(events.filter((event) => event.event_type === 'backoff').map((event) => event.data.requested_ms), [10]);
  });

  it('transient: fails twice, then succeeds on the third attempt; clean gives up at the first', async () => {
    const entry: FaultEntry = { id: 'tr', kind: 'transient', params: { failures: 2 } };
    const retried = await episode(entry, 'relabel-issue', 'retry_on_transient');
    assert.equal(retried.record.recovery.faults_fired.filter((fault) => fault.kind === 'transient').length, 2);
    assert.equal(retried.record.recovery.error_turns, 2);
    assertRecovered(retried.record);
    assertFailed((await episode(entry, 'relabel-issue', 'clean')).record);
  });

  it('timeout: the harness cancels the call; retry_on_transient tries again', async () => {
    const { record, events } = await episode({ id: 'to', kind: 'timeout' }, 'assignee-email', 'retry_on_transient');
    assertFired(record, 'timeout');
    const timedOut = record.messages.find((message) => message.role === 'tool' && message.tool_result.kind === 'timeout');
    assert.ok(timedOut);
    assert.equal(harness(events, 'cancelled_after_timeout').length, 1);
    assertRecovered(record);
  });

  it('timeout after the write ran: verify_after_write checks before writing again; a blind retry fails', async () => {
    const entry: FaultEntry = { id: 'lost', kind: 'timeout', tools: ['close_issue'], params: { reaches_server: true } };
    const verified = await episode(entry, 'close-named-issue', 'verify_after_write');
    assertFired(verified.record, 'timeout');
    assertRecovered(verified.record);
    const calls = verified.record.messages.flatMap((message) => (message.role === 'assistant' ? message.tool_calls ?? [] : []));
    assert.equal(calls.filter((call) => call.name === 'close_issue').length, 1, 'closed once, never twice');
    const blind = await episode(entry, 'close-named-issue', 'retry_on_transient');
    assertFailed(blind.record);
    assert.ok(blind.record.messages.some((message) => message.role === 'tool' && /already closed/.test(message.content)));
  });

  it('latency: answered late, nothing to recover from', async () => {
    const { record } = await episode({ id: 'l', kind: 'latency', params: { ms: 15 } }, 'find-open-bugs', 'clean');
    assertFired(record, 'latency');
    assertRecovered(record);
  });

  it('wrong_result_schema: the client rejects the result as invalid; a retry gets a good one', async () => {
    const { record } = await episode({ id: 'w', kind: 'wrong_result_schema' }, 'assignee-email', 'retry_on_transient');
    assertFired(record, 'wrong_result_schema');
    assert.ok(record.messages.some((message) => message.role === 'tool' && message.tool_result.kind === 'invalid_result'));
    assertRecovered(record);
  });

  it('truncated_result: a cut-short result is unreadable and is fetched again; an oversized one hits the result limit', async () => {
    const cut = await episode({ id: 'c', kind: 'truncated_result', params: { mode: 'cut' } }, 'find-open-bugs', 'retry_on_transient');
    assertFired(cut.record, 'truncated_result');
    assert.ok(cut.record.messages.some((message) => message.role === 'assistant' && /looks cut short/.test(message.content)));
    assertRecovered(cut.record);
    const big = await episode({ id: 'o', kind: 'truncated_result', params: { mode: 'oversize', oversize_bytes: 65536 } }, 'find-open-bugs', 'retry_on_transient');
    assert.ok(big.record.messages.some((message) => message.role === 'tool' && message.tool_result.kind === 'result_too_large'));
    assertRecovered(big.record);
  });

  it('tool_renamed: the harness refreshes the catalog and the policy finds the renamed tool; clean cannot', async () => {
    const entry: FaultEntry = { id: 'r', kind: 'tool_renamed', tools: ['add_comment'] };
    const { record, events } = await episode(entry, 'comment-on-issue', 'precondition_first');
    assertFired(record, 'tool_renamed');
    assert.equal(record.catalog_updates.length, 1);
    assert.deepEqual(record.catalog_updates[0]!.removed, ['add_comment']);
    assert.deepEqual(record.catalog_updates[0]!.added.map((tool) => tool.name), ['add_comment_v2']);
    assert.equal(harness(events, 'catalog_refreshed').length, 1);
    assert.ok(record.messages.some((message) => message.role === 'assistant' && message.tool_calls?.[0]?.name === 'add_comment_v2'));
    assertRecovered(record);
    assertFailed((await episode(entry, 'comment-on-issue', 'clean')).record);
  });

  it('disconnect: the harness reconnects to the same world and the retried call goes through', async () => {
    const { record, events } = await episode({ id: 'd', kind: 'disconnect' }, 'relabel-issue', 'retry_on_transient');
    assertFired(record, 'disconnect');
    assert.ok(record.messages.some((message) => message.role === 'tool' && message.tool_result.kind === 'transport_error'));
    assert.equal(harness(events, 'reconnected').length, 1);
    assertRecovered(record);
  });

  it('stale_read: verify_after_write sees the old state, reads again, and confirms', async () => {
    const { record } = await episode({ id: 's', kind: 'stale_read' }, 'close-named-issue', 'verify_after_write');
    assertFired(record, 'stale_read');
    assert.ok(record.messages.some((message) => message.role === 'assistant' && message.content === 'The change does not show yet; reading it again.'));
    assertRecovered(record);
  });
});

describe('scripted variants without faults', () => {
  it('repair_arguments gets two fields wrong and fixes exactly the fields the error names', async () => {
    const { record } = await episode(null, 'find-open-bugs', 'repair_arguments', 1);
    const [rejected] = record.messages.filter((message): message is ToolMessage => message.role === 'tool' && !message.tool_result.ok);
    assert.equal(rejected!.tool_result.errors!.length, 2);
    const repair = record.messages.find((message) => message.role === 'assistant' && message.content.startsWith('Fixing '));
    assert.ok(repair);
    assertRecovered(record);
    assert.deepEqual(record.recovery.faults_fired, []);
  });

  it('precondition_first reads the issue before it changes it', async () => {
    const { record } = await episode(null, 'close-named-issue', 'precondition_first');
    const calls = record.messages.flatMap((message) => (message.role === 'assistant' ? message.tool_calls ?? [] : [])).map((call) => call.name);
    assert.deepEqual(calls, ['get_issue', 'close_issue']);
    assert.equal(record.result.task_completed, true);
    assert.equal(record.recovery.recovered, false, 'nothing went wrong, so nothing was recovered');
  });
});
