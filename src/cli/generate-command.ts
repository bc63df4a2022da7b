// Owns the `generate` command: arguments to options, a progress line, the
// one-line summary (or JSON), and the exit status (1 if any record was rejected).

import type { Command } from 'commander';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { generateDataset, OUTPUT_FORMATS, type OutputFormat } from '../factory/generate-dataset.js';
import { parsePolicySpec, preparePolicy } from '../factory/policy-selection.js';
import { loadLane } from '../lanes/lane-loader.js';
import { parseSeedRange } from '../lanes/seed-range.js';
import { percent, ProgressLine, type Streams, writeJson } from './output.js';

interface GenerateFlags {
  policy: string;
  ollamaHost?: string;
  mode?: string;
  codec?: string;
  concurrency: string;
  seeds?: string;
  format?: string;
  task?: string[];
  variant?: string[];
  out?: string;
  json?: boolean;
  quiet?: boolean;
}

function parseFormats(list: string): OutputFormat[] {
  const formats = list.split(',').map((format) => format.trim()).filter(Boolean);
  const unknown = formats.filter((format) => !(OUTPUT_FORMATS as readonly string[]).includes(format));
  if (unknown.length > 0) {
    throw new FactoryError('usage', `--format: unknown format ${unknown.map((format) => `"${format}"`).join(', ')}`, { fix: `use a comma-separated list of ${OUTPUT_FORMATS.join(', ')}` });
  }
  if (!formats.includes('jsonl')) {
    throw new FactoryError('usage', '--format must include jsonl', { fix: 'add jsonl, e.g. --format jsonl,parquet: replay, audit and every dataset operation read episodes.jsonl' });
  }
  return formats as OutputFormat[];
}

export function registerGenerate(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('generate')
    .summary('run a lane: produce, replay-verify and write episode records')
    .description(
      'Runs every (task, seed) episode of a lane against a fresh MCP world, replays each one on a second fresh world, ' +
        'judges it with the hidden predicates, and writes verified records to <out>/episodes.jsonl, with the same rows ' +
        'in episodes.arrow (Arrow IPC stream) and episodes.parquet. Episodes that do not ' +
        'verify go to <out>/rejected.jsonl with the reason. Also writes traces/<record_id>.jsonl and manifest.json. ' +
        'Same lane and seeds give byte-identical episodes.jsonl. Exit 0 when every episode verified, 1 if any was ' +
        'rejected, 2 for a usage problem (bad lane, bad seeds).',
    )
    .argument('<lane>', 'a lane name (lanes/<name>.json) or a path to a lane file')
    .option('--seeds <A..B>', "seed range, both ends inclusive (default: the lane's seeds)")
    .option('--task <id...>', 'only these task ids (default: every task)')
    .option('--variant <name...>', 'only these policy variants (lanes whose policy.draw is "each")')
    .option('--out <dir>', 'output directory (default: datasets/<lane>)')
    .option('--policy <policy>', 'who plays: scripted (the lane\'s solutions), or ollama:<model> for a local model', 'scripted')
    .option('--ollama-host <url>', 'where Ollama listens (default: OLLAMA_HOST, else http://127.0.0.1:11434)')
    .option('--mode <mode>', 'with a model: native (/api/chat with tools) or raw (/api/generate with the codec\'s prompt); default: the lane\'s, else native')
    .option('--codec <name>', 'with a model: hermes, llama3 or mistral; default: from the model\'s family')
    .option('--concurrency <n>', 'episodes in flight at once (keep it small against one Ollama server)', '1')
    .option('--format <list>', 'comma-separated output formats: jsonl (always), arrow (IPC stream), parquet', 'jsonl,arrow,parquet')
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--quiet', 'no progress line')
    .addHelpText('after', '\nExamples:\n  episode-factory generate tool-world-v1\n  episode-factory generate tool-world-v1 --seeds 0..99 --out /tmp/big --json\n  episode-factory generate lanes/my-lane.json --task close-named-issue --seeds 3..3')
    .action(async (laneReference: string, flags: GenerateFlags) => {
      const lane = loadLane(laneReference);
      const seeds = flags.seeds === undefined ? lane.seeds : parseSeedRange(flags.seeds);
      const outDir = flags.out ?? join('datasets', lane.name);
      const formats = parseFormats(flags.format ?? 'jsonl,arrow,parquet');
      const concurrency = Number(flags.concurrency);
      // A model is checked now: if Ollama or the model is missing, nothing is written.
      const policy = await preparePolicy(lane, parsePolicySpec(flags.policy), { host: flags.ollamaHost, mode: flags.mode, codec: flags.codec });
      if (policy.model && !flags.json) {
        const { info, settings } = policy.model;
        streams.stderr.write(
          `generate: ${info.model} (${info.digest.replace(/^sha256:/, '').slice(0, 12)}, ${info.family ?? 'unknown family'}) at ${info.host}, Ollama ${info.ollama_version}, ${settings.mode} mode, ${settings.codec.name} codec\n`,
        );
      }
      const progress = new ProgressLine(streams.stderr, !flags.json && !flags.quiet);
      let rejectedSoFar = 0;
      const summary = await generateDataset({
        lane,
        outDir,
        seeds,
        tasks: flags.task,
        variants: flags.variant,
        formats,
        policy,
        concurrency,
        onEpisode: (episode) => {
          if (episode.status === 'rejected') rejectedSoFar++;
          progress.update(`generate ${lane.name}: ${episode.done}/${episode.total} episodes, ${rejectedSoFar} rejected — ${episode.record_id}`);
        },
      });
      progress.clear();
      if (flags.json) {
        writeJson(streams, summary);
      } else {
        for (const rejection of summary.rejections) {
          streams.stderr.write(`REJECTED ${rejection.record_id} (${rejection.stage}): ${rejection.reason}\n`);
        }
        const kinds = Object.keys(summary.faults_fired);
        const faults = kinds.length
          ? `faults fired ${Object.values(summary.faults_fired).reduce((sum, count) => sum + count, 0)} (${kinds.length} kinds), `
          : '';
        streams.stdout.write(
          `generate ${summary.lane}: ${summary.episodes} episodes, ${summary.written} records written, ${summary.rejected} rejected, ` +
            `tasks completed ${summary.completed}/${summary.written} (${percent(summary.completion_rate)}), ${faults}` +
            `wall ${summary.wall_seconds.toFixed(2)}s -> ${summary.out_dir}\n`,
        );
      }
      setExit(summary.rejected > 0 ? 1 : 0);
    });
}
