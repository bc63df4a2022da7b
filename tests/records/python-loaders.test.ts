// The files a generate run writes load, unchanged, in Hugging Face datasets,
// pyarrow, pandas and DuckDB. The Python side is built by
// scripts/python-loaders.sh (which .ci/run calls); this test builds it too if
// it is missing, so it never silently skips.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { exportDpo } from '../../src/dataset/export-dpo.js';
import { exportSft } from '../../src/dataset/export-sft.js';
import { generateDataset } from '../../src/factory/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { pythonEnvironment, REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

describe('datasets load in the tools training teams use', () => {
  it('Hugging Face datasets (json, parquet, arrow), pyarrow, pandas and DuckDB read every row, in order', async () => {
    const out = temporaryDirectory();
    await generateDataset({ lane: loadLane('tool-world-faults-v1', REPO_ROOT), outDir: out, seeds: { from: 0, to: 3 } });
    const records = readFileSync(join(out, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as EpisodeRecord);
    const report = JSON.parse(
      execFileSync(pythonEnvironment(), [join(REPO_ROOT, 'tests', 'fixtures', 'load_dataset.py'), out], {
        encoding: 'utf8',
        env: { ...process.env, HF_HOME: join(out, '.hf-home') },
        maxBuffer: 64 << 20,
      }),
    );
    const ids = records.map((record) => record.record_id);
    assert.equal(ids.length, 20);
    for (const [loader, seen] of Object.entries(report.seen)) assert.deepEqual(seen, ids, `${loader} read every record, in order`);
    const expectedArguments = records.flatMap((record) =>
      record.messages.flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => JSON.parse(call.arguments)) : [])),
    );
    assert.deepEqual(report.arguments, expectedArguments, 'json.loads gives back the arguments exactly, wrongly typed ones included');
    assert.deepEqual(report.messages, records.map((record) => record.messages.length));
    assert.equal(report.completed, records.filter((record) => record.result.task_completed).length);
  });

  it('load the SFT and DPO exports as conversational datasets', async () => {
    const out = temporaryDirectory();
    await generateDataset({ lane: loadLane('tool-world-dpo-v1', REPO_ROOT), outDir: out, seeds: { from: 0, to: 0 } });
    const sft = await exportSft(out, join(out, 'sft.jsonl'));
    const dpo = await exportDpo(out, join(out, 'dpo.jsonl'));
    assert.ok(sft.exported > 0 && dpo.pairs > 0);
    const report = JSON.parse(
      execFileSync(pythonEnvironment(), [join(REPO_ROOT, 'tests', 'fixtures', 'load_dataset.py'), out, join(out, 'sft.jsonl'), join(out, 'dpo.jsonl')], {
        encoding: 'utf8',
        env: { ...process.env, HF_HOME: join(out, '.hf-home') },
        maxBuffer: 64 << 20,
      }),
    );
    const rows = readFileSync(join(out, 'sft.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(report.sft.rows, sft.exported);
    assert.equal(report.sft.pyarrow_rows, sft.exported);
    assert.deepEqual(report.sft.record_ids, rows.map((row) => row.record_id));
    assert.deepEqual(report.sft.first_roles, rows[0].messages.map((message: { role: string }) => message.role));
    assert.deepEqual(report.sft.tool_names, rows[0].tools.map((tool: { function: { name: string } }) => tool.function.name).sort());
    assert.equal(report.dpo.rows, dpo.pairs);
    assert.equal(report.dpo.pyarrow_rows, dpo.pairs);
    assert.ok(['chosen', 'prompt', 'rejected', 'tools'].every((column) => report.dpo.columns.includes(column)));
    assert.equal(report.dpo.first_chosen_role, 'assistant');
  });

  it('load the exports as the named configs the card declares, every row exactly as written', async () => {
    const out = join(temporaryDirectory(), 'configs');
    const cli = (...args: string[]) => {
      const result = runCli(REPO_ROOT, ...args);
      assert.equal(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
    };
    cli('generate', 'tool-world-dpo-v1', '--seeds', '0..1', '--out', out, '--quiet');
    cli('split', out, '--test', '0.2');
    cli('export', 'sft', out, '--arguments', 'object');
    cli('export', 'dpo', out, '--arguments', 'object');
    cli('card', out);
    cli('audit', out);
    const load = (dir: string) =>
      JSON.parse(
        execFileSync(pythonEnvironment(), [join(REPO_ROOT, 'tests', 'fixtures', 'load_dataset.py'), '--configs', dir], {
          encoding: 'utf8',
          env: { ...process.env, HF_HOME: join(out, '.hf-home'), HF_DATASETS_OFFLINE: '1' },
          maxBuffer: 64 << 20,
        }),
      ) as { configs: Record<string, Record<string, { rows: number; expected_rows: number; mismatches: number; first_mismatch: unknown } & { small_batches_mismatches?: number; small_batches_error?: string }>>; first_arguments_types: string[]; first_parameters_types: string[]; first_message_keys: string[][] };
    const report = load(out);
    assert.deepEqual(Object.keys(report.configs), ['default', 'sft', 'dpo']);
    for (const config of ['sft', 'dpo']) {
      const { small_batches_mismatches: small, small_batches_error: error, arrow_inferred: _arrow, ...splits } = report.configs[config]! as Record<string, unknown>;
      // A split with no rows is no split to a loader: the test task may make no DPO pair.
      if (config === 'sft') assert.deepEqual(Object.keys(splits), ['train', 'test'], 'sft: one split per records split');
      else assert.ok(Object.keys(splits).includes('train'), 'dpo: the train split');
      for (const [split, seen] of Object.entries(splits as Record<string, { rows: number; expected_rows: number; mismatches: number; first_mismatch: unknown }>)) {
        assert.ok(seen.rows > 0, `${config}/${split} has rows`);
        assert.equal(seen.rows, seen.expected_rows);
        assert.equal(seen.mismatches, 0, `${config}/${split}: every row loads exactly as written: ${JSON.stringify(seen.first_mismatch)?.slice(0, 400)}`);
      }
      assert.equal(error, undefined);
      assert.equal(small, 0, `${config}: exact even when the loader infers types one small batch at a time`);
    }
    assert.deepEqual(report.first_arguments_types, ['dict'], 'arguments reach a chat template as objects');
    assert.deepEqual(report.first_parameters_types, ['dict']);
    assert.deepEqual(report.first_message_keys[0], ['content', 'role'], 'a system turn comes back without tool_calls, tool_call_id or name');
    assert.ok(report.first_message_keys.some((keys) => keys.includes('tool_calls')) && report.first_message_keys.some((keys) => keys.includes('tool_call_id')));

    // The contrast: Arrow's own inference, one struct per column, pads every message and tool to the union of their keys.
    // Here it fails outright: a wrongly typed argument makes one column both a number and a string.
    const inferred = report.configs.sft!.arrow_inferred as unknown as string;
    assert.ok(/^error: /.test(inferred) || !/^0 rows/.test(inferred), `Arrow's inference does not keep the rows: ${inferred}`);
  });
});
