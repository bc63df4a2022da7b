// End-to-end test of the HTML report in a real browser: Debian's Chromium
// driven by playwright-core (installed by .ci/run; no browser is downloaded).
// It writes the report with the CLI, opens it from file:// with every network
// request refused and recorded, checks each plot drew the counts the records
// hold, filters the episode list, opens episodes and finds their tool calls,
// faults and verdicts, and saves screenshots under the test's temp dir (and
// under $REPORT_SCREENSHOT_DIR when set: that is how the pictures in docs/report.md are made).

import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { launchChromium } from '../headless-chromium.js';
import { copySample, REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

const HOSTILE = '</script><script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">';

/** A drawn SVG or HTML element, as far as these checks look at it (the project compiles without the DOM's types). */
interface Drawn {
  getBoundingClientRect(): { width: number; height: number };
}

function readRecords(path: string): EpisodeRecord[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as EpisodeRecord);
}

function writeRecords(path: string, records: readonly EpisodeRecord[]): void {
  writeFileSync(path, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
}

interface OpenedPage {
  page: Page;
  requests: string[];
  refused: string[];
  errors: string[];
  dialogs: string[];
}

async function openReport(browser: Browser, path: string): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const opened: Omit<OpenedPage, 'page'> = { requests: [], refused: [], errors: [], dialogs: [] };
  context.on('request', (request) => opened.requests.push(request.url()));
  await context.route(/^(?!file:)/, async (route) => {
    opened.refused.push(route.request().url());
    await route.abort();
  });
  const page = await context.newPage();
  page.on('pageerror', (error) => opened.errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') opened.errors.push(message.text());
  });
  page.on('dialog', async (dialog) => {
    opened.dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  await page.goto(pathToFileURL(path).href);
  await page.waitForSelector('html[data-viewer="ready"]');
  return { page, ...opened };
}

function screenshotCopy(path: string, name: string): void {
  const target = process.env.REPORT_SCREENSHOT_DIR;
  if (!target) return;
  mkdirSync(target, { recursive: true });
  copyFileSync(path, join(target, name));
}

function assertPng(path: string): void {
  const bytes = readFileSync(path);
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${path} is a PNG`);
  assert.ok(bytes.length > 20_000, `${path} has content (${bytes.length} bytes)`);
}

async function matchCount(page: Page): Promise<number> {
  return Number(await page.getAttribute('#match-count', 'data-matches'));
}

async function listedIds(page: Page): Promise<string[]> {
  return page.locator('#episode-list li[data-record-id]').evaluateAll((items) => items.map((item) => item.getAttribute('data-record-id')!));
}

describe('the HTML report in headless Chromium', () => {
  let browser: Browser;
  // Made here, not in before(): a directory made in a hook is removed when the hook's scope ends.
  const work = temporaryDirectory('ef-report-browser-');
  let dataset: string;
  let records: EpisodeRecord[];
  let hostileId: string;

  before(async () => {
    dataset = join(work, 'tool-world-faults-v1');
    copySample('tool-world-faults-v1', dataset);
    records = readRecords(join(dataset, 'episodes.jsonl'));
    // A model can write anything; a final answer that tries to close the data block must stay text.
    const hostile = records.find((record) => record.result.outcome === 'final_answer' && record.task.id === 'comment-on-issue')!;
    hostile.messages[hostile.messages.length - 1]!.content = HOSTILE;
    hostileId = hostile.record_id;
    writeRecords(join(dataset, 'episodes.jsonl'), records);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
  });

  it('opens from file:// without a single network request, and every plot drew the records’ counts', async () => {
    const written = runCli(REPO_ROOT, 'report', dataset, '--json');
    assert.equal(written.status, 0, written.stderr);
    const summary = JSON.parse(written.stdout) as { path: string; records: number; embedded: number; sampled: boolean };
    assert.equal(summary.path, join(dataset, 'report.html'));
    assert.deepEqual([summary.records, summary.embedded, summary.sampled], [records.length, records.length, false]);

    const { page, requests, refused, errors, dialogs } = await openReport(browser, summary.path);
    assert.deepEqual(requests, [pathToFileURL(summary.path).href], 'the report is the only thing loaded');
    assert.deepEqual(refused, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(dialogs, []);
    assert.equal(await page.title(), 'episode-factory report: tool-world-faults-v1');
    assert.equal(await page.textContent('[data-tile="records"] .tile-value'), String(records.length));

    // Task completion: one row per task, with the counts and a bar as long as the rate.
    const byTask = new Map<string, { n: number; completed: number }>();
    for (const record of records) {
      const tally = byTask.get(record.task.id) ?? { n: 0, completed: 0 };
      tally.n++;
      if (record.result.task_completed) tally.completed++;
      byTask.set(record.task.id, tally);
    }
    const taskRows = await page.locator('[data-chart="task-completion"] g.row').evaluateAll((rows) =>
      rows.map((row) => ({ key: row.getAttribute('data-key')!, n: Number(row.getAttribute('data-n')), completed: Number(row.getAttribute('data-successes')), width: (row.querySelector('rect.bar') as unknown as Drawn).getBoundingClientRect().width })),
    );
    assert.deepEqual(
      taskRows.map((row) => [row.key, row.n, row.completed]),
      [...byTask].sort(([left], [right]) => (left < right ? -1 : 1)).map(([task, tally]) => [task, tally.n, tally.completed]),
    );
    const [first, second] = taskRows;
    assert.ok(first!.width > 0 && second!.width > 0, 'the bars were drawn');
    const drawnRatio = first!.width / second!.width;
    const countedRatio = first!.completed / first!.n / (second!.completed / second!.n);
    assert.ok(Math.abs(drawnRatio - countedRatio) < 0.02, `bar lengths ${drawnRatio} follow the rates ${countedRatio}`);

    // Faults: episodes each kind fired in, and how many of them still completed.
    const byKind = new Map<string, { episodes: number; recovered: number; fired: number }>();
    for (const record of records) {
      for (const fault of record.recovery.faults_fired) {
        const tally = byKind.get(fault.kind) ?? { episodes: 0, recovered: 0, fired: 0 };
        tally.fired++;
        byKind.set(fault.kind, tally);
      }
      for (const kind of new Set(record.recovery.faults_fired.map((fault) => fault.kind))) {
        byKind.get(kind)!.episodes++;
        if (record.result.task_completed) byKind.get(kind)!.recovered++;
      }
    }
    const faultRows = await page.locator('[data-chart="faults"] g.row').evaluateAll((rows) =>
      rows.map((row) => [row.getAttribute('data-key')!, Number(row.getAttribute('data-episodes')), Number(row.getAttribute('data-recovered')), Number(row.getAttribute('data-fired'))]),
    );
    assert.ok(byKind.size >= 5, 'the faults lane fires several kinds');
    assert.deepEqual(faultRows, [...byKind].sort(([left], [right]) => (left < right ? -1 : 1)).map(([kind, tally]) => [kind, tally.episodes, tally.recovered, tally.fired]));

    // Histograms: every episode in exactly one bin, in the bin its count falls in.
    const histogram = async (chart: string) =>
      page.locator(`[data-chart="${chart}"] g.bin`).evaluateAll((bins) =>
        bins.map((bin) => ({ from: Number(bin.getAttribute('data-from')), to: Number(bin.getAttribute('data-to')), count: Number(bin.getAttribute('data-count')), height: (bin.querySelector('rect') as unknown as Drawn).getBoundingClientRect().height })),
      );
    const checkHistogram = (bins: { from: number; to: number; count: number; height: number }[], valueOf: (record: EpisodeRecord) => number) => {
      assert.equal(bins.reduce((sum, bin) => sum + bin.count, 0), records.length);
      for (const bin of bins) {
        assert.equal(bin.count, records.filter((record) => valueOf(record) >= bin.from && valueOf(record) <= bin.to).length, `bin ${bin.from}-${bin.to}`);
        assert.equal(bin.height > 0, bin.count > 0, `bin ${bin.from}-${bin.to} is drawn when it counts episodes`);
      }
    };
    checkHistogram(await histogram('error-turns'), (record) => record.recovery.error_turns);
    checkHistogram(await histogram('episode-length'), (record) => record.messages.length);
    const policyTotal = await page.locator('[data-chart="policy-completion"] g.row').evaluateAll((rows) => rows.reduce((sum, row) => sum + Number(row.getAttribute('data-n')), 0));
    assert.equal(policyTotal, records.length);
    for (const chart of ['task-completion', 'faults', 'error-turns', 'episode-length', 'tool-calls', 'policy-completion']) {
      const axisTitles = await page.locator(`[data-chart="${chart}"] text.axis-title`).allTextContents();
      assert.ok(axisTitles.length >= 1 && axisTitles.every((title) => title.trim() !== ''), `${chart} has titled axes`);
    }

    const screenshot = join(work, 'report-full.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    assertPng(screenshot);
    const plots = join(work, 'report-plots.png');
    await page.locator('#plots').screenshot({ path: plots });
    assertPng(plots);
    screenshotCopy(plots, 'report-plots.png');
    await page.context().close();
  });

  it('filters the episode list, follows a chart bar, and opens an episode with its calls, faults, verdicts and lineage', async () => {
    const path = join(dataset, 'report.html');
    if (!existsSync(path)) assert.equal(runCli(REPO_ROOT, 'report', dataset).status, 0);
    const { page, errors, dialogs, refused } = await openReport(browser, path);
    assert.equal(await matchCount(page), records.length);
    assert.equal(await page.getAttribute('html', 'data-parsed-blocks'), '0', 'no episode is parsed until one is opened');

    // Fault kind and result together.
    await page.selectOption('#filter-fault', 'timeout');
    await page.selectOption('#filter-completed', 'no');
    const timedOut = records.filter((record) => !record.result.task_completed && record.recovery.faults_fired.some((fault) => fault.kind === 'timeout'));
    assert.ok(timedOut.length > 0);
    assert.equal(await matchCount(page), timedOut.length);
    assert.deepEqual(await listedIds(page), timedOut.map((record) => record.record_id));

    // Free text over id, task and request.
    await page.click('#filter-clear');
    await page.fill('#filter-text', 'assignee-email s1');
    const searched = records.filter((record) => record.task.id === 'assignee-email' && record.record_id.includes('s1'));
    assert.deepEqual(await listedIds(page), searched.map((record) => record.record_id));

    // A bar of the task chart lists that task's episodes.
    await page.click('#filter-clear');
    await page.click('[data-chart="task-completion"] g.row[data-key="relabel-issue"] rect.bar');
    assert.equal(await page.inputValue('#filter-task'), 'relabel-issue');
    assert.equal(await matchCount(page), records.filter((record) => record.task.id === 'relabel-issue').length);

    // Open an episode with a rejected call, an injected fault and a failed predicate.
    const chosen = records.find(
      (record) => record.result.rejected_calls > 0 && record.recovery.faults_fired.some((fault) => fault.step > 0) && record.result.predicates.some((predicate) => !predicate.passed),
    )!;
    assert.ok(chosen, 'the sample has an episode with a rejected call, a fault and a failed predicate');
    await page.click('#filter-clear');
    await page.fill('#filter-text', chosen.record_id);
    await page.click(`#episode-list button[data-record-id="${chosen.record_id}"]`);
    await page.waitForSelector(`#episode-detail[data-record-id="${chosen.record_id}"]`);
    assert.equal(await page.getAttribute('html', 'data-parsed-blocks'), '1', 'opening one episode parsed one block');
    assert.ok(page.url().endsWith(`#episode=${encodeURIComponent(chosen.record_id)}`), 'the episode has a link of its own');

    const calls = chosen.messages.flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []) : []));
    const shownCalls = await page.locator('#episode-detail .tool-call').evaluateAll((nodes) =>
      nodes.map((node) => ({ tool: node.getAttribute('data-tool')!, arguments: node.querySelector('.arguments')!.textContent! })),
    );
    assert.deepEqual(shownCalls.map((call) => call.tool), calls.map((call) => call.name));
    assert.deepEqual(shownCalls.map((call) => JSON.parse(call.arguments) as unknown), calls.map((call) => JSON.parse(call.arguments) as unknown));
    assert.equal(await page.locator('#episode-detail .message.tool.not-ok').count(), chosen.recovery.error_turns, 'every ok:false result is marked');
    const faultedSteps = new Set(chosen.recovery.faults_fired.filter((fault) => fault.step > 0).map((fault) => fault.step));
    assert.equal(await page.locator('#episode-detail .message.tool.faulted').count(), faultedSteps.size, 'every result hit by an injected fault is marked');
    const faultNotes = await page.locator('#episode-detail .message.tool.faulted .fault-note').allTextContents();
    for (const fault of chosen.recovery.faults_fired.filter((entry) => entry.step > 0)) {
      assert.ok(faultNotes.some((note) => note.includes(fault.kind) && note.includes(fault.detail)), `${fault.kind} is named where it fired`);
    }
    const verdicts = await page.locator('#episode-detail table.verdicts tr[data-predicate]').evaluateAll((rows) =>
      rows.map((row) => [row.getAttribute('data-predicate'), row.getAttribute('data-passed'), row.querySelector('td:nth-child(2)')!.textContent]),
    );
    assert.deepEqual(verdicts, chosen.result.predicates.map((predicate) => [predicate.id, String(predicate.passed), predicate.passed ? 'pass' : 'fail']));
    assert.equal(await page.textContent('#episode-detail .generate-command'), chosen.provenance.lineage.generate_command);
    assert.equal(await page.textContent('#episode-detail .replay-command'), chosen.provenance.lineage.replay_command);
    // The sample's lane words its tasks with a phrasing grammar: the lineage says which phrasing this one drew.
    const lineageRows = await page.locator('#episode-detail .lineage tr').evaluateAll((rows) => rows.map((row) => [row.querySelector('th')!.textContent, row.querySelector('td')!.textContent]));
    assert.ok(chosen.provenance.lineage.phrasing, 'the sample records its phrasing');
    assert.deepEqual(lineageRows.find(([name]) => name === 'phrasing'), ['phrasing', chosen.provenance.lineage.phrasing]);

    // The picture: the whole list with this episode selected, its faulted result in view.
    await page.click('#filter-clear');
    assert.equal(await page.locator('#episode-list li.selected').getAttribute('data-record-id'), chosen.record_id);
    // Run in the page, as text: this project compiles without the DOM's types.
    await page.evaluate(`document.getElementById('episodes').scrollIntoView();
      const detail = document.getElementById('episode-detail');
      detail.scrollTop = detail.querySelector('.message.tool.faulted').offsetTop - detail.offsetTop - 380;`);
    const screenshot = join(work, 'report-episode.png');
    await page.screenshot({ path: screenshot });
    assertPng(screenshot);
    screenshotCopy(screenshot, 'report-episode.png');

    // The hostile answer is shown as text; nothing it holds ran.
    await page.click('#filter-clear');
    await page.fill('#filter-text', hostileId);
    await page.click(`#episode-list button[data-record-id="${hostileId}"]`);
    await page.waitForSelector(`#episode-detail[data-record-id="${hostileId}"]`);
    assert.equal(await page.locator('#episode-detail .message.assistant .text').last().textContent(), HOSTILE);
    assert.equal(await page.title(), 'episode-factory report: tool-world-faults-v1');
    assert.deepEqual([errors, dialogs, refused], [[], [], []]);
    await page.context().close();
  });

  it('samples a dataset of thousands of records, says so, and still opens one block at a time', async () => {
    const big = join(work, 'big');
    mkdirSync(big);
    const copies = 40;
    const many: EpisodeRecord[] = [];
    for (let copy = 0; copy < copies; copy++) {
      for (const record of records) many.push({ ...record, record_id: `${record.record_id}.copy${copy}` });
    }
    writeRecords(join(big, 'episodes.jsonl'), many);
    const written = runCli(REPO_ROOT, 'report', big, '--json', '--max-episodes', '1000');
    assert.equal(written.status, 0, written.stderr);
    const summary = JSON.parse(written.stdout) as { path: string; bytes: number; records: number; embedded: number; sampled: boolean; in_manifest: boolean };
    assert.deepEqual([summary.records, summary.embedded, summary.sampled, summary.in_manifest], [many.length, 1000, true, false]);
    const jsonlBytes = statSync(join(big, 'episodes.jsonl')).size;
    assert.ok(summary.bytes < (jsonlBytes * 1000) / many.length / 2, `${summary.bytes} bytes of report for 1000 of ${jsonlBytes} bytes / ${many.length} records: catalogs are shared`);

    const { page, errors, refused } = await openReport(browser, summary.path);
    const note = await page.locator('#sample-note');
    assert.equal(await note.getAttribute('data-sampled'), 'true');
    assert.match((await note.textContent())!, /holds 1,000 episodes of 3,200 records/);
    assert.equal(await matchCount(page), 1000);
    assert.equal(await page.locator('#episode-list li[data-record-id]').count(), 500, 'the list shows 500 at a time');
    assert.match((await page.textContent('#episode-list li.more'))!, /and 500 more/);
    const errorTurnTotal = await page.locator('[data-chart="error-turns"] g.bin').evaluateAll((bins) => bins.reduce((sum, bin) => sum + Number(bin.getAttribute('data-count')), 0));
    assert.equal(errorTurnTotal, many.length, 'the plots count every record, not the sample');
    // Every task is in the sample.
    const tasks = new Set(records.map((record) => record.task.id));
    for (const task of tasks) {
      await page.selectOption('#filter-task', task);
      assert.ok((await matchCount(page)) > 0, `${task} is in the sample`);
    }
    await page.click('#filter-clear');
    const last = (await listedIds(page)).at(-1)!;
    await page.click(`#episode-list button[data-record-id="${last}"]`);
    await page.waitForSelector(`#episode-detail[data-record-id="${last}"]`);
    assert.equal(await page.getAttribute('html', 'data-parsed-blocks'), '1');
    assert.deepEqual([errors, refused], [[], []]);
    await page.context().close();
  });
});
