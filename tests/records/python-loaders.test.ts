// The files a generate run writes load, unchanged, in Hugging Face datasets,
// pyarrow, pandas and DuckDB. The Python side is built by
// scripts/python-loaders.sh (which .ci/run calls); this test builds it too if
// it is missing, so it never silently skips.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { exportDpo } from '../../src/dataset/export-dpo.js';
import { exportSft } from '../../src/dataset/export-sft.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { recordFiles } from '../../src/records/record-files.js';
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

  it('a dataset written as data/ files loads by the card\'s default config and in DuckDB by glob, each copy declaring its features', async () => {
    const out = join(temporaryDirectory(), 'data-files');
    const cli = (...args: string[]) => {
      const result = runCli(REPO_ROOT, ...args);
      assert.equal(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
    };
    cli('generate', 'tool-world-v1', '--seeds', '0..5', '--out', out, '--max-file-size', '150KB', '--quiet');
    cli('card', out, '--license', 'mit');
    const files = recordFiles(out);
    assert.ok(files.jsonl.length >= 3, `${files.jsonl.length} files`);
    const ids = files.jsonl.flatMap((file) => readFileSync(join(out, file), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as EpisodeRecord).record_id));
    const load = () =>
      JSON.parse(
        execFileSync(pythonEnvironment(), [join(REPO_ROOT, 'tests', 'fixtures', 'load_dataset.py'), '--data-files', out], {
          encoding: 'utf8',
          env: { ...process.env, HF_HOME: join(out, '.hf-home'), HF_DATASETS_OFFLINE: '1' },
          maxBuffer: 64 << 20,
        }),
      ) as { default_data_files: unknown; card_ids: Record<string, string[]>; duckdb_parquet_ids: string[]; duckdb_json_ids: string[]; files: Record<string, { huggingface: boolean; declared_equals_inferred: boolean; largest_row_group_bytes: number | null }> };
    const report = load();
    assert.deepEqual(report.default_data_files, [{ split: 'train', path: 'data/train-*.jsonl' }]);
    assert.deepEqual(report.card_ids, { train: ids }, 'load_dataset(DIR) reads every file, in order');
    assert.deepEqual(report.duckdb_parquet_ids, [...ids].sort());
    assert.deepEqual(report.duckdb_json_ids, [...ids].sort());
    assert.equal(Object.keys(report.files).length, files.jsonl.length * 2);
    for (const [file, seen] of Object.entries(report.files)) {
      assert.ok(seen.huggingface && seen.declared_equals_inferred, `${file} carries the huggingface features, the ones datasets reads from its columns`);
      if (seen.largest_row_group_bytes !== null) assert.ok(seen.largest_row_group_bytes < 100 << 20, `${file}: row groups the viewer can page (${seen.largest_row_group_bytes} bytes)`);
    }

    // Split past the bound too: the card's default config names each side's files by glob.
    cli('split', out, '--test', '0.2', '--max-file-size', '60KB');
    cli('card', out, '--license', 'mit');
    const layout = JSON.parse(readFileSync(join(out, 'split.json'), 'utf8')) as { splits: Record<string, { path: string }> };
    const sideIds = (side: string) => {
      const split = layout.splits[side]!;
      const files = split.path.includes('*') ? readdirSync(join(out, 'splits')).filter((name) => name.startsWith(`${side}-`)).sort().map((name) => join(out, 'splits', name)) : [join(out, split.path)];
      return files.flatMap((path) => readFileSync(path, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as EpisodeRecord).record_id));
    };
    const afterSplit = load();
    assert.deepEqual(afterSplit.default_data_files, [{ split: 'train', path: layout.splits.train!.path }, { split: 'test', path: layout.splits.test!.path }]);
    assert.equal(layout.splits.train!.path, 'splits/train-*.jsonl');
    assert.deepEqual(afterSplit.card_ids, { train: sideIds('train'), test: sideIds('test') });
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
      const { small_batches_mismatches: small, small_batches_error: error, arrow_inferred: _arrow, turns: _turns, ...splits } = report.configs[config]! as Record<string, unknown>;
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
    for (const [split, seen] of Object.entries(report.configs.default!)) {
      assert.ok(seen.rows > 0 && seen.rows === seen.expected_rows, `default/${split}: every record`);
      assert.equal(seen.mismatches, 0, `default/${split}: every record loads exactly as written (declared as Json, not padded): ${JSON.stringify(seen.first_mismatch)?.slice(0, 400)}`);
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

  it('load the exports of conversations with several calls a turn and with a user simulator, exactly as written', { timeout: 300_000 }, () => {
    for (const lane of ['issues-parallel-v1', 'issues-dialogue-v1']) {
      const out = join(temporaryDirectory(), lane);
      const cli = (...args: string[]) => {
        const result = runCli(REPO_ROOT, ...args);
        assert.equal(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
      };
      cli('generate', lane, '--seeds', '0..3', '--out', out, '--quiet');
      cli('export', 'sft', out, '--arguments', 'object');
      cli('export', 'dpo', out, '--arguments', 'object');
      cli('card', out);
      const report = JSON.parse(
        execFileSync(pythonEnvironment(), [join(REPO_ROOT, 'tests', 'fixtures', 'load_dataset.py'), '--configs', out], {
          encoding: 'utf8',
          env: { ...process.env, HF_HOME: join(out, '.hf-home'), HF_DATASETS_OFFLINE: '1' },
          maxBuffer: 64 << 20,
        }),
      ) as { configs: Record<string, Record<string, unknown> & { turns: Turns; train: { rows: number; expected_rows: number; mismatches: number; first_mismatch: unknown } }> };
      assert.deepEqual(Object.keys(report.configs), ['default', 'sft', 'dpo'], lane);
      for (const config of ['sft', 'dpo'] as const) {
        const loaded = report.configs[config]!;
        const rows = readFileSync(join(out, config, 'train.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, ChatRow[]>);
        assert.ok(loaded.train.rows > 0 && loaded.train.rows === loaded.train.expected_rows, `${lane} ${config}: every row`);
        assert.equal(loaded.train.mismatches, 0, `${lane} ${config}: every row exactly as written: ${JSON.stringify(loaded.train.first_mismatch)?.slice(0, 400)}`);
        assert.equal(loaded.small_batches_mismatches, 0, `${lane} ${config}: exact in small batches too`);
        assert.deepEqual(loaded.turns, turnsOf(rows), `${lane} ${config}: the loaded conversations have the files' shape`);
      }
      const { sft, dpo } = { sft: report.configs.sft!.turns, dpo: report.configs.dpo!.turns };
      if (lane === 'issues-parallel-v1') {
        assert.ok(sft.most_calls_in_a_turn > 1 && dpo.most_calls_in_a_turn > 1, 'several calls in one turn reach the trainer as one tool_calls list');
      } else {
        assert.ok(sft.user_messages > report.configs.sft!.train.rows, 'SFT rows keep the simulated user turns');
        assert.equal(dpo.user_messages, countUsers(readFileSync(join(out, 'dpo', 'train.jsonl'), 'utf8'), 'prompt'), 'a DPO pair has user turns in its prompt only');
      }
    }
  });
});

interface ChatRow {
  role: string;
  tool_calls?: unknown[];
}

interface Turns {
  most_calls_in_a_turn: number;
  tool_messages: number;
  user_messages: number;
}

function turnsOf(rows: Record<string, ChatRow[]>[]): Turns {
  const messages = rows.flatMap((row) => ['messages', 'prompt', 'chosen', 'rejected'].flatMap((column) => row[column] ?? []));
  return {
    most_calls_in_a_turn: Math.max(0, ...messages.map((message) => message.tool_calls?.length ?? 0)),
    tool_messages: messages.filter((message) => message.role === 'tool').length,
    user_messages: messages.filter((message) => message.role === 'user').length,
  };
}

function countUsers(text: string, column: string): number {
  return text.trim().split('\n').reduce((sum, line) => sum + (JSON.parse(line) as Record<string, ChatRow[]>)[column]!.filter((message) => message.role === 'user').length, 0);
}
