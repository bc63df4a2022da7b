// The report's episode view in headless Chromium for conversations that are
// not one call a turn and one user message: every call of a turn is shown with
// its id, each tool result names the call it answers and carries the fault
// that hit that call, and the user simulator's turns are marked as its own,
// with its actor, apart from the task's opening request. Record text, a
// simulated user's included, reaches the page only as text.

import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { EpisodeRecord, RecordAssistantMessage } from '../../src/records/episode-record.js';
import { conversationDataset, DIALOGUE_LANE, mostCallsInATurn, PARALLEL_LANE, readRecords, simulatedUserTurns } from '../conversation-lanes.js';
import { launchChromium } from '../headless-chromium.js';
import { REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';
import { rewriteManifest } from '../fixtures/sealed-dataset.js';

const HOSTILE = '</script><script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">';
const REFUSED = new Set(['invalid_arguments', 'unknown_tool', 'tool_call_limit', 'malformed_tool_call']);

interface Opened {
  page: Page;
  problems: string[];
}

async function openEpisode(browser: Browser, report: string, id: string): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const problems: string[] = [];
  await context.route(/^(?!file:)/, async (route) => {
    problems.push(`request ${route.request().url()}`);
    await route.abort();
  });
  const page = await context.newPage();
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('dialog', async (dialog) => {
    problems.push(`dialog ${dialog.message()}`);
    await dialog.dismiss();
  });
  await page.goto(`${pathToFileURL(report).href}#episode=${encodeURIComponent(id)}`);
  await page.waitForSelector(`#episode-detail[data-record-id="${id}"]`);
  return { page, problems };
}

/** The tool message each fault hit, found the obvious way: the n-th call that reached the server, in the fault's turn. */
function expectedFaultedCalls(record: EpisodeRecord): string[] {
  const reached: string[] = [];
  for (const message of record.messages) {
    if (message.role === 'tool' && message.tool_call_id !== null && !REFUSED.has(message.tool_result.kind ?? '')) reached.push(message.tool_call_id);
  }
  return [...new Set(record.recovery.faults_fired.filter((fault) => fault.step > 0 && fault.call !== null).map((fault) => reached[fault.call! - 1]!))];
}

describe('the report shows several calls a turn and the user simulator', () => {
  const work = temporaryDirectory('ef-report-conversations-');
  let browser: Browser;
  let parallel: string;
  let dialogue: string;
  let hostileId: string;

  before(async () => {
    parallel = join(work, 'parallel');
    dialogue = join(work, 'dialogue');
    cpSync(await conversationDataset(PARALLEL_LANE), parallel, { recursive: true });
    cpSync(await conversationDataset(DIALOGUE_LANE), dialogue, { recursive: true });
    // A model-backed simulator could write anything: a reply that tries to close the data block must stay text.
    const records = readRecords(dialogue);
    const hostile = records.find((record) => simulatedUserTurns(record) > 1)!;
    hostile.messages[hostile.messages.findLastIndex((message) => message.role === 'user')]!.content = HOSTILE;
    hostileId = hostile.record_id;
    writeFileSync(join(dialogue, 'episodes.jsonl'), records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    // The report checks the records against the manifest: made to agree, as the simulator would have written the reply.
    rewriteManifest(dialogue, 'episodes.jsonl');
    for (const dir of [parallel, dialogue]) assert.equal(runCli(REPO_ROOT, 'report', dir).status, 0);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
  });

  it('shows every call of a turn with its id, each result under the id it answers, and faults on the call they hit', async () => {
    const records = readRecords(parallel);
    // A fault on a call that is not the first of its turn: the step alone would put it on the wrong result.
    const laterInTurn = (candidate: EpisodeRecord) =>
      candidate.messages.some((message) => message.role === 'assistant' && (message.tool_calls ?? []).slice(1).some((call) => expectedFaultedCalls(candidate).includes(call.id)));
    const record = records.find((candidate) => mostCallsInATurn(candidate) > 1 && laterInTurn(candidate))!;
    assert.ok(record, 'a record with a fault on the second call of a turn');
    const { page, problems } = await openEpisode(browser, join(parallel, 'report.html'), record.record_id);
    const assistants = record.messages.filter((message): message is RecordAssistantMessage => message.role === 'assistant');
    const shownTurns = await page.locator('#episode-detail .message.assistant').evaluateAll((nodes) =>
      nodes.map((node) => [...node.querySelectorAll('.tool-call')].map((call) => [call.getAttribute('data-call-id'), call.getAttribute('data-tool'), call.querySelector('code')!.textContent])),
    );
    assert.deepEqual(shownTurns, assistants.map((message) => (message.tool_calls ?? []).map((call) => [call.id, call.name, call.id])));
    const busiest = assistants.find((message) => (message.tool_calls?.length ?? 0) > 1)!;
    assert.match((await page.locator(`#episode-detail .message.assistant[data-calls="${busiest.tool_calls!.length}"] .role`).first().textContent())!, new RegExp(`${busiest.tool_calls!.length} tool calls`));

    const results = await page.locator('#episode-detail .message.tool').evaluateAll((nodes) =>
      nodes.map((node) => [node.getAttribute('data-call-id'), node.getAttribute('data-tool'), node.querySelector('.role .answers')!.textContent, node.classList.contains('faulted')]),
    );
    const faulted = new Set(expectedFaultedCalls(record));
    assert.deepEqual(
      results,
      record.messages.flatMap((message) => (message.role === 'tool' ? [[message.tool_call_id, message.name, message.tool_call_id, faulted.has(message.tool_call_id!)]] : [])),
      'each result names the call it answers, and only the results hit by a fault are marked',
    );
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('marks the user simulator turns as its own, with its actor, apart from the opening request, and lists them', async () => {
    const records = readRecords(dialogue);
    const record = records.find((candidate) => simulatedUserTurns(candidate) > 1 && candidate.record_id !== hostileId)!;
    const { page, problems } = await openEpisode(browser, join(dialogue, 'report.html'), record.record_id);
    const users = record.messages.filter((message) => message.role === 'user').map((message) => message.content);
    assert.deepEqual(await page.locator('#episode-detail .message.user[data-user="opening"] .text').allTextContents(), users.slice(0, 1));
    assert.deepEqual(await page.locator('#episode-detail .message.user.simulated .text').allTextContents(), users.slice(1));
    const actors = await page.locator('#episode-detail .message.user.simulated').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-actor')));
    assert.deepEqual(actors, users.slice(1).map(() => 'scripted-user 1 (scripted)'));
    assert.match((await page.locator('#episode-detail .message.user.simulated .role').first().textContent())!, /^user simulatorscripted-user 1 \(scripted\)$/);
    assert.equal(await page.textContent(`#episode-list li[data-record-id="${record.record_id}"] .badge.simulated`), `${users.length - 1} simulated user turns`);
    assert.deepEqual(await page.locator('table.user-simulators td code').first().textContent(), 'scripted:scripted-user@1');
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('shows a hostile simulated reply as text, running nothing', async () => {
    const { page, problems } = await openEpisode(browser, join(dialogue, 'report.html'), hostileId);
    assert.equal(await page.locator('#episode-detail .message.user.simulated .text').last().textContent(), HOSTILE);
    assert.equal(await page.title(), 'episode-factory report: dialogue');
    assert.equal(await page.locator('#episode-detail img, #episode-detail script').count(), 0);
    assert.deepEqual(problems, []);
    await page.context().close();
  });
});
