// SFT rows and DPO pairs, from a dataset where every variant played the same
// task, seed and fault draw (tool-world-dpo-v1).

import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { chatArguments, toChatMessages } from '../../src/records/chat-format.js';
import { beginDatasetUpdate } from '../../src/dataset/dataset-inputs.js';
import { exportConfig } from '../../src/dataset/export-configs.js';
import { splitDataset } from '../../src/dataset/dataset-split.js';
import { exportDpo, sharedPrompt, type DpoRow } from '../../src/dataset/export-dpo.js';
import { exportSft, type SftRow, type SftSummary } from '../../src/dataset/export-sft.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const dir = temporaryDirectory();
const read = <T>(path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as T);
let records: EpisodeRecord[];

before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  await generateDataset({ lane: loadLane('tool-world-dpo-v1', REPO_ROOT), outDir: dir, seeds: { from: 0, to: 0 }, formats: ['jsonl'] });
  records = read<EpisodeRecord>(join(dir, 'episodes.jsonl'));
});

describe('export sft', () => {
  it('writes one row per completed episode, in chat form with the tools it could call', async () => {
    const out = join(temporaryDirectory(), 'sft.jsonl');
    const summary = await exportSft(dir, out);
    const completed = records.filter((record) => record.result.task_completed);
    assert.deepEqual([summary.exported, summary.not_completed], [completed.length, records.length - completed.length]);
    const rows = read<SftRow>(out);
    assert.deepEqual(rows.map((row) => row.record_id), completed.map((record) => record.record_id));
    for (const [index, row] of rows.entries()) {
      const record = completed[index]!;
      assert.equal(row.messages.length, record.messages.length);
      for (const message of row.messages) {
        const keys = Object.keys(message).sort();
        const expected = message.role === 'tool' ? ['content', 'name', 'role', 'tool_call_id'] : message.tool_calls ? ['content', 'role', 'tool_calls'] : ['content', 'role'];
        assert.deepEqual(keys, expected, `a ${message.role} message carries only the keys that apply to it (no nulls a template would test for)`);
      }
      const calls = row.messages.flatMap((message) => message.tool_calls ?? []);
      const recorded = record.messages.flatMap((message) => (message.role === 'assistant' ? message.tool_calls ?? [] : []));
      assert.deepEqual(calls.map((call) => [call.id, call.function.name, call.function.arguments]), recorded.map((call) => [call.id, call.name, call.arguments]));
      for (const message of row.messages.filter((candidate) => candidate.role === 'tool')) {
        assert.ok(calls.some((call) => call.id === message.tool_call_id), 'each tool result answers a call');
      }
      assert.ok(row.tools.length >= 9 && row.tools.every((tool) => tool.type === 'function' && typeof tool.function.parameters === 'object'));
    }
  });
});

describe('export dpo', () => {
  it('pairs a completion with each failure of the same task and seed, sharing the prompt up to where they diverge', async () => {
    const out = join(temporaryDirectory(), 'dpo.jsonl');
    const summary = await exportDpo(dir, out);
    const rows = read<DpoRow>(out);
    assert.equal(rows.length, summary.pairs);
    assert.ok(summary.pairs > 0);
    const byId = new Map(records.map((record) => [record.record_id, record]));
    for (const row of rows) {
      const chosen = byId.get(row.chosen_record_id)!;
      const rejected = byId.get(row.rejected_record_id)!;
      assert.equal(chosen.result.task_completed, true);
      assert.equal(rejected.result.task_completed, false);
      assert.equal(chosen.provenance.lineage.task, rejected.provenance.lineage.task);
      assert.equal(chosen.provenance.lineage.seed, rejected.provenance.lineage.seed);
      assert.equal(canonicalJson([...row.prompt, ...row.chosen]), canonicalJson(toChatMessages(chosen.messages)), 'prompt + chosen is the whole chosen episode');
      assert.equal(canonicalJson([...row.prompt, ...row.rejected]), canonicalJson(toChatMessages(rejected.messages)), 'prompt + rejected is the whole rejected episode');
      assert.ok(row.prompt.length >= 2, 'the prompt holds at least the system and user messages');
      assert.equal(row.chosen[0]!.role, 'assistant');
      assert.equal(row.rejected[0]!.role, 'assistant');
      assert.notEqual(canonicalJson(row.chosen[0]), canonicalJson(row.rejected[0]), 'they diverge at the first completion turn');
    }
    const failed = records.filter((record) => !record.result.task_completed);
    const pairedGroups = new Set(rows.map((row) => `${row.task}/${row.seed}`));
    const pairable = failed.filter((record) => pairedGroups.has(`${record.provenance.lineage.task}/${record.provenance.lineage.seed}`));
    assert.equal(rows.length, pairable.length, 'every failure in a group that has a completion is paired once');
    assert.equal(summary.unpaired + rows.length + pairedGroups.size, records.length, 'each record is paired, the chosen one, or unpaired');
  });

  it('shares the longest prefix that still ends before both sides make a move', () => {
    const message = (role: 'user' | 'assistant' | 'tool', content: string) => ({ role, content });
    const base = [message('user', 'hi'), message('assistant', 'call'), message('tool', 'result')];
    assert.equal(sharedPrompt([...base, message('assistant', 'A')], [...base, message('assistant', 'B')]), 3);
    assert.equal(sharedPrompt([...base, message('assistant', 'A')], [message('user', 'hi'), message('assistant', 'call'), message('tool', 'other')]), 1);
  });

  it('reports when a dataset has nothing to pair', async () => {
    const summary = await exportDpo(join(REPO_ROOT, 'datasets', 'tool-world-v1'), join(temporaryDirectory(), 'none.jsonl'));
    assert.equal(summary.pairs, 0);
    assert.equal(summary.unpaired, 40);
  });
});

describe('tool-call arguments as objects', () => {
  it('writes the parsed object for every call, equal to the emitted JSON, in SFT rows and DPO pairs', async () => {
    const out = join(temporaryDirectory(), 'sft.jsonl');
    const summary = await exportSft(dir, out, { arguments: 'object' });
    assert.equal(summary.arguments, 'object');
    assert.equal(summary.arguments_kept_as_text, 0);
    const rows = read<SftRow>(out);
    const byId = new Map(records.map((record) => [record.record_id, record]));
    let calls = 0;
    for (const row of rows) {
      const recorded = byId.get(row.record_id)!.messages.flatMap((message) => (message.role === 'assistant' ? message.tool_calls ?? [] : []));
      const written = row.messages.flatMap((message) => message.tool_calls ?? []);
      assert.deepEqual(written.map((call) => call.function.arguments), recorded.map((call) => JSON.parse(call.arguments)));
      for (const call of written) assert.equal(typeof call.function.arguments, 'object');
      calls += written.length;
    }
    assert.ok(calls > rows.length, 'the rows hold calls');
    const pairs = join(temporaryDirectory(), 'dpo.jsonl');
    await exportDpo(dir, pairs, { arguments: 'object' });
    for (const row of read<DpoRow>(pairs)) {
      for (const message of [...row.prompt, ...row.chosen, ...row.rejected]) for (const call of message.tool_calls ?? []) assert.equal(typeof call.function.arguments, 'object');
    }
  });

  it('keeps text that is not a JSON object as the policy emitted it, and the string form unchanged', () => {
    assert.deepEqual(chatArguments('{"limit": "5"}', 'object'), { limit: '5' }, 'a wrongly typed value stays wrongly typed');
    for (const text of ['{"query": "sync"', '[1, 2]', '"sync"', '5', 'null', '']) assert.equal(chatArguments(text, 'object'), text, text);
    assert.equal(chatArguments('{"a":1}', 'string'), '{"a":1}');
  });
});

describe('exports into the dataset directory', () => {
  it('writes one file per split of the records, lists them in the manifest, and removes files of a split that is gone', async () => {
    const copy = join(temporaryDirectory(), 'copy');
    await generateDataset({ lane: loadLane('tool-world-dpo-v1', REPO_ROOT), outDir: copy, seeds: { from: 0, to: 1 }, formats: ['jsonl'] });
    const whole = await exportConfig(copy, 'sft', { arguments: 'object' });
    assert.deepEqual(whole.splits.map((split) => [split.split, split.path, split.source]), [['train', 'sft/train.jsonl', 'episodes.jsonl']]);
    await splitDataset(copy, 0.2);
    const split = await exportConfig(copy, 'sft', { arguments: 'object' });
    assert.deepEqual(split.splits.map((entry) => [entry.split, entry.path, entry.source]), [
      ['train', 'sft/train.jsonl', 'train.jsonl'],
      ['test', 'sft/test.jsonl', 'test.jsonl'],
    ]);
    const exported = (entry: (typeof split.splits)[number]) => (entry as SftSummary).exported;
    assert.equal(exported(split.splits[0]!) + exported(split.splits[1]!), exported(whole.splits[0]!), 'the splits partition the rows');
    const testIds = new Set(read<EpisodeRecord>(join(copy, 'test.jsonl')).map((record) => record.record_id));
    assert.ok(read<SftRow>(join(copy, 'sft', 'test.jsonl')).every((row) => testIds.has(row.record_id)));
    // What `split` and `export sft` list in the manifest when run as commands.
    await (await beginDatasetUpdate(copy, 'export sft', { inputs: ['episodes.jsonl'], outputs: ['split.json', 'train.jsonl', 'test.jsonl', 'sft/'] })).commit();
    rmSync(join(copy, 'split.json'));
    writeFileSync(join(copy, 'sft', 'notes.jsonl'), '{"mine": true}\n');
    const again = await exportConfig(copy, 'sft', {});
    assert.deepEqual(again.removed, ['sft/test.jsonl'], "the gone split's file, which the manifest lists");
    assert.ok(existsSync(join(copy, 'sft', 'notes.jsonl')), 'a file the manifest does not list is not ours to remove');
  });

  it('leaves the previous export whole when the records are unreadable', async () => {
    const copy = join(temporaryDirectory(), 'torn');
    await generateDataset({ lane: loadLane('tool-world-v1', REPO_ROOT), outDir: copy, seeds: { from: 0, to: 0 }, formats: ['jsonl'] });
    await exportConfig(copy, 'sft', {});
    const before = readFileSync(join(copy, 'sft', 'train.jsonl'));
    appendFileSync(join(copy, 'episodes.jsonl'), '{"torn');
    await assert.rejects(exportConfig(copy, 'sft', { arguments: 'object' }), /unreadable line/);
    assert.ok(readFileSync(join(copy, 'sft', 'train.jsonl')).equals(before));
    assert.deepEqual(readdirSync(join(copy, 'sft')), ['train.jsonl'], 'no temporary file left behind');
  });
});
