// Owns the `export` commands: SFT rows and DPO pairs in the conversational
// form the common trainers read.

import type { Command } from 'commander';
import type { Message, ToolDescriptor } from '../core/conversation.js';
import { FactoryError } from '../core/errors.js';
import { exportDpo } from '../dataset/export-dpo.js';
import { CODEC_NAMES, codecByName } from '../policy/codecs/codec-registry.js';
import { renderTranscript } from '../policy/codecs/model-codec.js';
import { exportSft } from '../dataset/export-sft.js';
import { type Streams, writeJson } from './output.js';

export function registerExport(program: Command, streams: Streams): void {
  const command = program
    .command('export')
    .summary('SFT rows or DPO pairs for training')
    .description('Writes training files from a dataset: `export sft` and `export dpo`. Both read <dir>/episodes.jsonl and refuse a dataset with unreadable lines.');

  command
    .command('sft')
    .description(
      'One JSONL row per verified, completed episode: {record_id, messages, tools}. `messages` is the conversation in ' +
        'OpenAI chat form (assistant tool_calls with JSON-string arguments, tool results as role "tool"); `tools` are the ' +
        'function schemas the model could call. --render adds `text`: the conversation in a family\'s chat template, ' +
        'for trainers that take raw text. Load with datasets.load_dataset("json", data_files=...).',
    )
    .argument('<dir>', 'a dataset directory')
    .requiredOption('--out <file>', 'the JSONL file to write')
    .option('--render <family>', `add a "text" column: the conversation in a model family's chat template (${CODEC_NAMES.join(', ')})`)
    .option('--json', 'print the summary as JSON')
    .action(async (dir: string, flags: { out: string; render?: string; json?: boolean }) => {
      let renderer;
      if (flags.render !== undefined) {
        const codec = codecByName(flags.render);
        if (!codec) throw new FactoryError('usage', `--render "${flags.render}" is not a model family`, { fix: `use one of ${CODEC_NAMES.join(', ')}` });
        renderer = { name: codec.name, render: (messages: Message[], tools: ToolDescriptor[]) => renderTranscript(codec, messages, tools) };
      }
      const summary = await exportSft(dir, flags.out, renderer);
      if (flags.json) return writeJson(streams, summary);
      const rendered = summary.rendered_with ? `, rendered with ${summary.rendered_with}` : '';
      streams.stdout.write(`export sft ${dir}: ${summary.exported} rows from ${summary.records} records (${summary.not_completed} not completed, left out)${rendered} -> ${summary.out}\n`);
    });

  command
    .command('dpo')
    .description(
      'Preference pairs from episodes of the same task, seed and fault draw (a lane with policy.draw "each" runs every ' +
        'variant on each): `chosen` is a verified completion (a recovery first), `rejected` a verified failure, both ' +
        'continuing a shared `prompt` up to the turn where they diverge. Rows: {prompt, chosen, rejected, tools, ' +
        'chosen_record_id, rejected_record_id, chosen_variant, rejected_variant, task, seed}.',
    )
    .argument('<dir>', 'a dataset directory')
    .requiredOption('--out <file>', 'the JSONL file to write')
    .option('--json', 'print the summary as JSON')
    .action(async (dir: string, flags: { out: string; json?: boolean }) => {
      const summary = await exportDpo(dir, flags.out);
      if (flags.json) return writeJson(streams, summary);
      const variants = Object.entries(summary.pairs_by_rejected_variant).map(([variant, count]) => `${variant} ${count}`).join(', ');
      streams.stdout.write(
        `export dpo ${dir}: ${summary.pairs} pairs from ${summary.groups} task/seed groups, ${summary.unpaired} records unpaired${variants ? ` (rejected: ${variants})` : ''} -> ${summary.out}\n`,
      );
      if (summary.pairs === 0) {
        streams.stderr.write('export dpo: no pairs: every task/seed group is all completions or all failures; generate a lane with policy.draw "each" (e.g. tool-world-dpo-v1)\n');
      }
    });
}
