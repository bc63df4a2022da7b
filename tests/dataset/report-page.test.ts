// Tests the report page as text: one file with nothing to fetch (a
// Content-Security-Policy that forbids requests, no external address), record
// text that cannot break out of its JSON block, episodes split into blocks
// the viewer parses one at a time, and the same bytes for the same dataset.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gatherReportData } from '../../src/dataset/report-data.js';
import { EPISODES_PER_BLOCK, embeddedJson, grouped, renderReport } from '../../src/dataset/report-page.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { copySample, REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1');
const HOSTILE = '</script><script>document.title="pwned"</script><!-- <img src=x onerror=alert(1)>';

function datasetWithHostileAnswer(): { dir: string; id: string } {
  const dir = join(temporaryDirectory('ef-report-page-'), 'dataset');
  copySample('tool-world-faults-v1', dir);
  const lines = readFileSync(join(dir, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
  const record = JSON.parse(lines[0]!) as EpisodeRecord;
  record.messages[record.messages.length - 1]!.content = HOSTILE;
  lines[0] = JSON.stringify(record);
  writeFileSync(join(dir, 'episodes.jsonl'), lines.join('\n') + '\n');
  return { dir, id: record.record_id };
}

describe('renderReport', () => {
  it('is one file that can fetch nothing', async () => {
    const page = renderReport(await gatherReportData(SAMPLE));
    assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:/);
    assert.doesNotMatch(page, /<(script|img|link|iframe)[^>]*\ssrc=/i, 'no element loads anything');
    assert.doesNotMatch(page, /<link\b/i);
    const addresses = [...page.matchAll(/https?:\/\/[^\s"'<)]+/g)].map((match) => match[0]);
    assert.deepEqual([...new Set(addresses)], ['http://www.w3.org/2000/svg'], 'the only address is the SVG namespace, which is never fetched');
    assert.ok(page.startsWith('<!doctype html>'));
    assert.ok(page.includes('<style>') && page.includes('data-chart="task-completion"'));
  });

  it('keeps record text inside its JSON block', async () => {
    const { dir, id } = datasetWithHostileAnswer();
    const data = await gatherReportData(dir);
    const page = renderReport(data);
    assert.ok(!page.includes(HOSTILE));
    const blocks = Math.ceil(data.viewer.episodes.length / EPISODES_PER_BLOCK);
    // The index, the catalogs, each episode block, and the viewer: nothing else opens a script.
    assert.equal((page.match(/<script\b/g) ?? []).length, 2 + blocks + 1);
    const block = /<script type="application\/json" id="episodes-0">(.*?)<\/script>/s.exec(page)![1]!;
    const episodes = JSON.parse(block) as EpisodeRecord[];
    const hostile = episodes.find((episode) => episode.record_id === id)!;
    assert.equal(hostile.messages[hostile.messages.length - 1]!.content, HOSTILE, 'the text survives, escaped');
    assert.equal(embeddedJson('</script>'), '"\\u003c/script>"');
  });

  it('splits the episodes into blocks and gives the same bytes twice', async () => {
    const data = await gatherReportData(SAMPLE);
    const page = renderReport(data);
    assert.equal(renderReport(await gatherReportData(SAMPLE)), page);
    const index = JSON.parse(/<script type="application\/json" id="report-index">(.*?)<\/script>/s.exec(page)![1]!) as { entries: unknown[][]; per_block: number; total: number };
    assert.equal(index.entries.length, data.viewer.entries.length);
    assert.equal(index.per_block, EPISODES_PER_BLOCK);
    assert.equal(index.total, data.overview.records);
    assert.equal(index.entries[0]![0], data.viewer.entries[0]!.id);
  });

  it('shows each task\'s wording diversity beside its records: user messages, phrasings, trajectories', async () => {
    const data = await gatherReportData(SAMPLE);
    const page = renderReport(data);
    const tasks = /<table class="tasks"><thead>(.*?)<\/thead><tbody>\n(.*?)\n<\/tbody>/s.exec(page)!;
    assert.equal(tasks[1], '<tr><th scope="col">task</th><th scope="col">title</th><th scope="col">world</th><th scope="col">records</th><th scope="col">user messages</th><th scope="col">phrasings</th><th scope="col">trajectories</th><th scope="col">completed</th></tr>');
    const rows = tasks[2]!.split('\n');
    assert.equal(rows.length, data.overview.tasks.length);
    data.overview.tasks.forEach((task, index) => {
      const wording = data.stats.wording.by_task[task.id]!;
      const cells = [...rows[index]!.matchAll(/<td>(.*?)<\/td>/g)].map((match) => match[1]);
      assert.deepEqual(cells.slice(3, 7), [String(task.records), String(wording.user_messages), String(wording.phrasings), String(wording.trajectories)], task.id);
    });
  });

  it('groups thousands the same way everywhere', () => {
    assert.equal(grouped(0), '0');
    assert.equal(grouped(999), '999');
    assert.equal(grouped(1000), '1,000');
    assert.equal(grouped(1234567), '1,234,567');
  });
});
