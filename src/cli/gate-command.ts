// Owns the `gate` command: a policy's tool calling, judged on a fixed battery,
// one line per episode and one verdict line; or two policies compared on the
// same episodes.

import type { Command } from 'commander';
import { FactoryError } from '../core/errors.js';
import { parsePolicySpec, preparePolicy } from '../selection/policy-selection.js';
import { compareGates, formatComparison, formatGateEpisode, formatGateVerdict, GATE_CONDITIONS, runGate } from '../gate/tool-calling-gate.js';
import { loadLane } from '../lanes/lane-loader.js';
import { parseSeedRange } from '../lanes/seed-range.js';
import { addModelServerFlags, modelServerOptions, type ModelServerFlags } from './model-server-flags.js';
import { type Streams, writeJson } from './output.js';

interface GateFlags extends ModelServerFlags {
  policy: string;
  compare?: string[];
  turns?: string;
  seeds?: string;
  mode?: string;
  codec?: string;
  json?: boolean;
}

export function registerGate(program: Command, streams: Streams, setExit: (status: number) => void): void {
  addModelServerFlags(
    program
      .command('gate')
    .summary("judge a policy's tool calling on a fixed battery of a lane's episodes")
    .description(
      "Plays the lane's episodes (its default seeds, or --seeds) with the policy and prints one line per episode (tool " +
        'calls emitted and executed, rejected calls, whether a cap was hit, whether the task was done, wall seconds, the ' +
        'start of the task) and a verdict line. PASS needs: every episode answered, no cap hit (steps, tool calls, wall ' +
        `time), at least ${GATE_CONDITIONS.tool_turn_share * 100}% of episodes using tools, and at least ` +
        `${GATE_CONDITIONS.contract_share * 100}% of emitted calls keeping the contract (well-formed, to a real tool, about ` +
        'an entity that exists). Completion carries a Wilson 95% interval. --compare A B plays two policies on the same ' +
        'episodes and reports the paired difference with an exact McNemar p-value. Exit 0 pass, 1 fail (naming each ' +
        'missed condition), 2 for a precondition (the model server down, the model not served, or a model server that fails or goes ' +
        'silent past --model-timeout during an episode: that episode says nothing about the model, so the gate stops).',
    )
    .argument('<lane>', 'a lane name or path')
    .option('--policy <policy>', 'scripted, ollama:<model>, or openai:<model> (with --base-url)', 'scripted')
    .option('--compare <policies...>', 'two policies to compare on the same episodes, e.g. --compare scripted ollama:qwen2.5:1.5b')
    .option('--turns <n>', 'only the first N episodes: a fast loop')
    .option('--seeds <A..B>', "seed range (default: the lane's)")
    .option('--mode <mode>', 'native or raw (with ollama:<model>)')
    .option('--codec <name>', 'hermes, llama3 or mistral (with a model)'),
  )
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExamples:\n  episode-factory gate tool-world-v1 --policy ollama:qwen2.5:1.5b\n  episode-factory gate tool-world-v1 --policy ollama:qwen2.5:1.5b --turns 3\n  episode-factory gate tool-world-v1 --compare ollama:qwen2.5:1.5b ollama:llama3.2:3b')
    .action(async (laneReference: string, flags: GateFlags) => {
      const lane = loadLane(laneReference);
      const seeds = flags.seeds === undefined ? lane.seeds : parseSeedRange(flags.seeds);
      const turns = flags.turns === undefined ? undefined : Number(flags.turns);
      const labels = flags.compare ?? [flags.policy];
      if (flags.compare && flags.compare.length !== 2) {
        throw new FactoryError('usage', `--compare takes two policies, got ${flags.compare.length}`, { fix: 'write --compare <a> <b>, e.g. --compare scripted ollama:qwen2.5:1.5b' });
      }
      const specs = labels.map((label) => parsePolicySpec(label));
      const modelOptions = { ...modelServerOptions(flags, specs.map((spec) => (spec.kind === 'model' ? spec.model : undefined))), mode: flags.mode, codec: flags.codec, flag: flags.compare ? '--compare' : '--policy' };
      // Every model is checked before any episode runs.
      const prepared = [];
      for (const spec of specs) prepared.push(await preparePolicy(lane, spec, modelOptions));
      const results = [];
      for (const [index, policy] of prepared.entries()) {
        const label = labels[index]!;
        if (!flags.json && prepared.length > 1) streams.stdout.write(`${label}\n`);
        results.push(
          await runGate({ lane, policy, label, seeds, turns, onEpisode: (episode) => !flags.json && streams.stdout.write(formatGateEpisode(episode) + '\n') }),
        );
        if (!flags.json) streams.stdout.write(formatGateVerdict(results[index]!) + '\n');
      }
      if (results.length === 2) {
        const comparison = compareGates(results[0]!, results[1]!);
        if (flags.json) writeJson(streams, comparison);
        else streams.stdout.write(formatComparison(comparison) + '\n');
        setExit(0);
        return;
      }
      const result = results[0]!;
      if (flags.json) writeJson(streams, result);
      else for (const miss of result.missed) streams.stdout.write(`MISS ${miss}\n`);
      setExit(result.pass ? 0 : 1);
    });
}
