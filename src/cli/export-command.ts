// Owns the `export` commands: SFT rows and DPO pairs in the conversational
// form the common trainers read, into the dataset directory as named configs
// (D/sft/, D/dpo/) or into one file with --out.

import { type Command, Option } from 'commander';
import { join } from 'node:path';
import type { Message, ToolDescriptor } from '../core/conversation.js';
import { FactoryError } from '../core/errors.js';
import { ARGUMENT_FORMS, type ArgumentsForm } from '../records/chat-format.js';
import { exportConfig } from '../dataset/export-configs.js';
import { exportDpo } from '../dataset/export-dpo.js';
import { exportSft, type TranscriptRenderer } from '../dataset/export-sft.js';
import { CODEC_NAMES, codecByName } from '../models/codecs/codec-registry.js';
import { renderTranscript } from '../models/codecs/model-codec.js';
import { beginDatasetUpdate, checkInputs, recordInputs } from '../dataset/dataset-inputs.js';
import { EPISODES_FILE } from '../dataset/dataset-reader.js';
import { PassProgress, type Streams, writeJson } from './output.js';

interface ExportFlags {
  out?: string;
  arguments: ArgumentsForm;
  render?: string;
  json?: boolean;
}

const ARGUMENTS_HELP = 'how tool-call arguments are written: string (JSON-encoded, the OpenAI shape) or object (parsed, for chat templates that apply tojson)';

const ARGUMENTS_NOTE =
  '\n--arguments string is the OpenAI wire shape: OpenAI-format trainers, and templates that print the arguments verbatim ' +
  '(DeepSeek-V3). --arguments object suits templates that apply `tojson` to them (Qwen2.5, Llama 3.1, gpt-oss), which ' +
  'would otherwise encode them twice; a call whose arguments are not a JSON object keeps the text the policy emitted.\n' +
  '\nWithout --out the rows go into the dataset directory, one file per split of the records (split.json\'s, or episodes.jsonl ' +
  'as train), and the files are added to manifest.json; `episode-factory card <dir>` then lists the export as a config, with ' +
  'features that keep tool schemas and object arguments intact, so `datasets.load_dataset(<dir>, "sft")` works. Rerun the ' +
  'export after generate, dedup, merge or split: the card refuses an export that no longer matches the records.';

function argumentsOption(): Option {
  return new Option('--arguments <form>', ARGUMENTS_HELP).choices([...ARGUMENT_FORMS]).default('string');
}

function rendererFor(family: string | undefined): TranscriptRenderer | undefined {
  if (family === undefined) return undefined;
  const codec = codecByName(family);
  if (!codec) throw new FactoryError('usage', `--render "${family}" is not a model family`, { fix: `use one of ${CODEC_NAMES.join(', ')}` });
  return { name: codec.name, render: (messages: Message[], tools: ToolDescriptor[]) => renderTranscript(codec, messages, tools) };
}

function argumentsNote(form: ArgumentsForm, keptAsText: number): string {
  if (form === 'string') return '';
  return `, arguments as objects${keptAsText > 0 ? ` (${keptAsText} not a JSON object, kept as emitted text)` : ''}`;
}

/** The files written, each with its row count when there is more than one. */
function files<Split extends { path: string }>(dir: string, splits: readonly Split[], count: (split: Split) => number): string {
  return splits.map((split) => `${join(dir, split.path)}${splits.length > 1 ? ` (${count(split)})` : ''}`).join(', ');
}

function rejectedNote(byVariant: Record<string, number>): string {
  const variants = Object.entries(byVariant)
    .sort(([left], [right]) => (left < right ? -1 : 1))
    .map(([variant, count]) => `${variant} ${count}`)
    .join(', ');
  return variants ? ` (rejected: ${variants})` : '';
}

function sameMovesNote(count: number): string {
  return count === 0 ? '' : `, ${count} left out (the agent's moves were the same until the user simulator spoke)`;
}

/** With --out, the records are read from episodes.jsonl, which must match the manifest (a directory with none gets a warning). */
async function checkedSource(dir: string, streams: Streams): Promise<void> {
  const { warning } = await checkInputs(dir, 'export', [EPISODES_FILE]);
  if (warning) streams.stderr.write(`export: warning: ${warning}\n`);
}

export function registerExport(program: Command, streams: Streams): void {
  const command = program
    .command('export')
    .summary('SFT rows or DPO pairs for training')
    .description(
      'Writes training files from a dataset: `export sft` and `export dpo`, into the dataset directory as the configs ' +
        '"sft" and "dpo" (or into one file with --out). Both check the record files against manifest.json first and refuse ' +
        'a dataset edited after its run wrote it (exit 1, each difference named; into the directory, one with no manifest ' +
        'too), a record_id that holds two contents (exit 1) and unreadable or non-UTF-8 lines (exit 2).',
    );

  command
    .command('sft')
    .description(
      'One JSONL row per verified, completed episode: {record_id, messages, tools}. `messages` is the conversation in ' +
        'OpenAI chat form (assistant tool_calls, tool results as role "tool"); `tools` are the function schemas the model ' +
        'could call (objects). --render adds `text`: the conversation in a family\'s chat template, for trainers that take raw text.',
    )
    .argument('<dir>', 'a dataset directory')
    .option('--out <file>', 'write one JSONL file from episodes.jsonl instead of <dir>/sft/<split>.jsonl')
    .addOption(argumentsOption())
    .option('--render <family>', `add a "text" column: the conversation in a model family's chat template (${CODEC_NAMES.join(', ')})`)
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', `${ARGUMENTS_NOTE}\n\nExamples:\n  episode-factory export sft datasets/tool-world-dpo-v1 --arguments object\n  episode-factory export sft datasets/tool-world-v1 --out /tmp/sft.jsonl`)
    .action(async (dir: string, flags: ExportFlags) => {
      const renderer = rendererFor(flags.render);
      const progress = new PassProgress(streams, 'export sft', !flags.json);
      const options = { arguments: flags.arguments, ...(renderer ? { renderer } : {}), onProgress: progress.update, onStage: (stage: string) => progress.begin(stage) };
      if (flags.out === undefined) {
        const update = await beginDatasetUpdate(dir, 'export sft', { inputs: recordInputs(dir), outputs: ['sft/'] });
        const summary = await exportConfig(dir, 'sft', options).finally(() => progress.clear());
        await update.commit();
        if (flags.json) return writeJson(streams, summary);
        const total = (key: 'exported' | 'records' | 'not_completed' | 'arguments_kept_as_text') => summary.splits.reduce((sum, split) => sum + split[key], 0);
        const rendered = renderer ? `, rendered with ${renderer.name}` : '';
        streams.stdout.write(
          `export sft ${dir}: ${total('exported')} rows from ${total('records')} records (${total('not_completed')} not completed, left out)${argumentsNote(flags.arguments, total('arguments_kept_as_text'))}${rendered} -> ${files(dir, summary.splits, (split) => split.exported)}\n`,
        );
        return;
      }
      await checkedSource(dir, streams);
      const summary = await exportSft(dir, flags.out, options).finally(() => progress.clear());
      if (flags.json) return writeJson(streams, summary);
      const rendered = summary.rendered_with ? `, rendered with ${summary.rendered_with}` : '';
      streams.stdout.write(
        `export sft ${dir}: ${summary.exported} rows from ${summary.records} records (${summary.not_completed} not completed, left out)${argumentsNote(summary.arguments, summary.arguments_kept_as_text)}${rendered} -> ${summary.out}\n`,
      );
    });

  command
    .command('dpo')
    .description(
      'Preference pairs from episodes of the same task, seed and fault draw (a lane with policy.draw "each" runs every ' +
        'variant on each): `chosen` is a verified completion (a recovery first), `rejected` a verified failure, both ' +
        'continuing a shared `prompt` up to the turn where they diverge and ending before the user simulator\'s next ' +
        'turn, if any (a DPO trainer scores every token of a continuation). Rows: {prompt, chosen, rejected, tools, ' +
        'chosen_record_id, rejected_record_id, chosen_variant, rejected_variant, task, seed}.',
    )
    .argument('<dir>', 'a dataset directory')
    .option('--out <file>', 'write one JSONL file from episodes.jsonl instead of <dir>/dpo/<split>.jsonl')
    .addOption(argumentsOption())
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', `${ARGUMENTS_NOTE}\n\nExamples:\n  episode-factory export dpo datasets/tool-world-dpo-v1 --arguments object\n  episode-factory export dpo datasets/tool-world-dpo-v1 --out /tmp/dpo.jsonl`)
    .action(async (dir: string, flags: ExportFlags) => {
      let pairs: number;
      const progress = new PassProgress(streams, 'export dpo', !flags.json);
      const shown = { onProgress: progress.update, onStage: (stage: string) => progress.begin(stage) };
      if (flags.out === undefined) {
        const update = await beginDatasetUpdate(dir, 'export dpo', { inputs: recordInputs(dir), outputs: ['dpo/'] });
        const summary = await exportConfig(dir, 'dpo', { arguments: flags.arguments, ...shown }).finally(() => progress.clear());
        await update.commit();
        if (flags.json) return writeJson(streams, summary);
        const total = (key: 'pairs' | 'groups' | 'unpaired' | 'same_agent_moves' | 'arguments_kept_as_text') => summary.splits.reduce((sum, split) => sum + split[key], 0);
        const byVariant: Record<string, number> = {};
        for (const split of summary.splits) for (const [variant, count] of Object.entries(split.pairs_by_rejected_variant)) byVariant[variant] = (byVariant[variant] ?? 0) + count;
        pairs = total('pairs');
        streams.stdout.write(
          `export dpo ${dir}: ${pairs} pairs from ${total('groups')} task/seed groups, ${total('unpaired')} records unpaired${rejectedNote(byVariant)}${sameMovesNote(total('same_agent_moves'))}${argumentsNote(flags.arguments, total('arguments_kept_as_text'))} -> ${files(dir, summary.splits, (split) => split.pairs)}\n`,
        );
      } else {
        await checkedSource(dir, streams);
        const summary = await exportDpo(dir, flags.out, { arguments: flags.arguments, ...shown }).finally(() => progress.clear());
        if (flags.json) return writeJson(streams, summary);
        pairs = summary.pairs;
        streams.stdout.write(
          `export dpo ${dir}: ${summary.pairs} pairs from ${summary.groups} task/seed groups, ${summary.unpaired} records unpaired${rejectedNote(summary.pairs_by_rejected_variant)}${sameMovesNote(summary.same_agent_moves)}${argumentsNote(summary.arguments, summary.arguments_kept_as_text)} -> ${summary.out}\n`,
        );
      }
      if (pairs === 0) {
        streams.stderr.write('export dpo: no pairs: every task/seed group is all completions or all failures; generate a lane with policy.draw "each" (e.g. tool-world-dpo-v1)\n');
      }
    });
}
