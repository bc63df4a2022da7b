// Owns the dataset card's sections on how the data came to be and what it
// shows: generation (lanes, tasks, policies, worlds, verification),
// provenance and the commands that regenerate it, statistics, limitations and
// the license.

import { EPISODES_FILE } from './dataset-reader.js';
import { binLabel, callsPerTurnText, simulatedUserText } from './stats-text.js';
import type { DatasetStats } from './dataset-stats.js';
import type { Distribution } from './stats-distribution.js';
import { formatRate, type Rate } from '../statistics/wilson-interval.js';
import { REJECTED_FILE } from './dataset-inputs.js';
import type { DatasetCardInput } from './card-input.js';
import { code, list, markdownTable, plural, seedRanges } from './card-text.js';

function modelActed(stats: DatasetStats): boolean {
  return Object.keys(stats.counts.by_policy).some((key) => !key.startsWith('scripted:'));
}

export function generationSection(input: DatasetCardInput): string {
  const { stats } = input;
  const parts: string[] = ['## Generation\n'];
  parts.push(
    'For every (task, seed) of a lane the factory starts a fresh world as a real MCP server, injects the lane\'s faults at the ' +
      'protocol boundary (drawn from the seed), lets the policy drive the agent loop, replays the episode on a second fresh world, ' +
      'requires every tool result and the final state to match, and judges the final state with the hidden predicates.\n',
  );
  parts.push(
    '### Lanes\n\n' +
      markdownTable(
        ['lane', 'sha256', 'records', 'tasks', 'seeds'],
        input.lanes.map((lane) => [code(lane.name), code(lane.sha256), String(lane.records), String(lane.tasks.length), seedRanges(lane.seeds).join(', ')]),
      ),
  );
  parts.push(
    '### Tasks\n\n' +
      'Wording: distinct first user messages, distinct phrasings of the message (one for a task said in one sentence, more ' +
      'for a phrasing grammar) and distinct trajectories.\n\n' +
      markdownTable(
        ['task', 'title', 'tags', 'records', 'user messages', 'phrasings', 'trajectories', 'completion'],
        input.tasks.map((task) => {
          const rate = stats.completion.by_task[task.id];
          const wording = stats.wording.by_task[task.id];
          return [
            code(task.id),
            task.title,
            task.tags.join(', '),
            String(stats.counts.by_task[task.id] ?? 0),
            String(wording?.user_messages ?? 0),
            String(wording?.phrasings ?? 0),
            String(wording?.trajectories ?? 0),
            rate ? formatRate(rate) : '',
          ];
        }),
      ),
  );
  parts.push(
    '### Policies\n\n' +
      markdownTable(['policy actor', 'records'], Object.entries(stats.counts.by_policy).map(([policy, count]) => [code(policy), String(count)])) +
      '\n' +
      markdownTable(
        ['variant', 'records', 'completion'],
        Object.entries(stats.completion.by_variant).map(([variant, rate]) => [code(variant), String(rate.n), formatRate(rate)]),
      ),
  );
  parts.push(
    '### Worlds\n\n' +
      markdownTable(
        ['world', 'version', 'tools'],
        input.worlds.map((world) => [code(world.name), world.version, world.tools.map(code).join(', ')]),
      ),
  );
  const verified = Object.entries(input.verified_by).map(([method, count]) => `${count} by ${method}`);
  let rejected = '';
  if (input.rejected === 0) rejected = ` No episode was rejected (\`${REJECTED_FILE}\` is empty).`;
  else if (input.rejected && input.infra_errors) {
    const unverified = input.rejected - input.infra_errors;
    rejected =
      ` ${unverified > 0 ? `${plural(unverified, 'episode')} did not verify and ` : ''}${plural(input.infra_errors, 'episode')} ` +
      `${input.infra_errors === 1 ? 'was' : 'were'} cut short by the model server (stage \`infra\`: ${input.infra_errors === 1 ? 'it says' : 'they say'} nothing about the model); ` +
      `${input.rejected === 1 ? 'it is' : 'they are'} in \`${REJECTED_FILE}\`, not here.`;
  } else if (input.rejected) rejected = ` ${plural(input.rejected, 'episode')} did not verify; ${input.rejected === 1 ? 'it is' : 'they are'} in \`${REJECTED_FILE}\`, not here.`;
  parts.push(`### Verification\n\n${plural(stats.records, 'record')}: ${verified.length > 0 ? verified.join(', ') : 'none'}.${rejected}\n`);
  return parts.join('\n');
}

export function provenanceSection(input: DatasetCardInput): string {
  const lines = ['## Provenance', ''];
  lines.push(`- **Produced at**: ${input.produced_at.map(code).join(', ') || 'no records'} (the lane's pinned date or \`SOURCE_DATE_EPOCH\`, not the wall clock).`);
  lines.push(`- **Factory version**: ${input.factory_versions.map(code).join(', ') || 'no records'}.`);
  const users = Object.keys(input.stats.turns.by_user_simulator);
  lines.push(
    `- **Actors**: policies ${Object.keys(input.stats.counts.by_policy).map(code).join(', ')}; ` +
      (users.length > 0 ? `user simulators ${users.map(code).join(', ')}; ` : '') +
      `worlds ${Object.keys(input.stats.counts.by_world).map(code).join(', ')}.`,
  );
  lines.push(`- **Lanes**: ${input.lanes.map((lane) => `${code(lane.name)} sha256 ${code(lane.sha256)}`).join('; ')}.`);
  lines.push(`- **Operations**: ${Object.entries(input.operations).map(([operation, count]) => `${count} ${code(operation)}`).join(', ')}.`);
  lines.push('');
  lines.push('Every record carries the commands that regenerate and replay it (`provenance.lineage`). Replay needs the lane file with the same sha256:');
  lines.push('');
  lines.push('```sh');
  if (input.example) {
    lines.push(`# one record: ${input.example.record_id}`, input.example.generate_command, input.example.replay_command);
  }
  lines.push('# the whole dataset');
  for (const lane of input.lanes) {
    for (const range of seedRanges(lane.seeds)) {
      lines.push(`episode-factory generate ${lane.name} --task ${lane.tasks.join(' ')} --seeds ${range.includes('..') ? range : `${range}..${range}`}`);
    }
  }
  lines.push(`episode-factory replay path/to/${input.name}`);
  lines.push('```');
  return lines.join('\n') + '\n';
}

function distributionRow(label: string, distribution: Distribution): string[] {
  const value = (number: number | null, digits = 0): string => (number === null ? '' : number.toFixed(digits));
  return [label, value(distribution.min), value(distribution.p50), value(distribution.p90), value(distribution.max), value(distribution.mean, 2)];
}

export function statisticsSection(input: DatasetCardInput): string {
  const { stats } = input;
  const rateCell = (rate: Rate): string => formatRate(rate);
  const parts: string[] = ['## Statistics\n'];
  parts.push('Rates are `rate [low, high] n=N` with a 95% Wilson interval; computed by `episode-factory stats` from the records.\n');
  parts.push(
    markdownTable(
      ['measure', 'value'],
      [
        ['records', String(stats.records)],
        ['corrupt or invalid lines', String(stats.problems.length)],
        ['task completion', rateCell(stats.completion.overall)],
        ['recovery (completed, among episodes with an error turn or a fired fault)', rateCell(stats.recovery)],
        ['faults fired', `${stats.faults.fired} in ${stats.faults.episodes_with_fault} episodes`],
        ['duplicate trajectories', `${stats.duplicates.duplicates} duplicates, ${stats.duplicates.distinct_trajectories} distinct`],
        ['tool calls per assistant turn', callsPerTurnText(stats.turns)],
        ['simulated user turns', simulatedUserText(stats.turns)],
      ],
    ),
  );
  parts.push(
    '### Outcomes\n\n' + markdownTable(['outcome', 'records'], Object.entries(stats.counts.by_outcome).map(([outcome, count]) => [code(outcome), String(count)])),
  );
  const kinds = Object.entries(stats.faults.by_kind);
  if (kinds.length > 0) {
    parts.push(
      '### Faults\n\n' +
        markdownTable(
          ['kind', 'fired', 'episodes', 'still completed'],
          kinds.map(([kind, fault]) => [code(kind), String(fault.fired), String(fault.episodes), rateCell(fault.completed)]),
        ),
    );
  }
  parts.push(
    '### Episode length\n\n' +
      markdownTable(
        ['per episode', 'min', 'p50', 'p90', 'max', 'mean'],
        [distributionRow('messages', stats.lengths.messages), distributionRow('tool calls', stats.lengths.tool_calls)],
      ) +
      '\n' +
      markdownTable(['messages', 'episodes'], stats.lengths.messages.histogram.map((bin) => [binLabel(bin), String(bin.count)])) +
      '\n' +
      markdownTable(['tool calls', 'episodes'], stats.lengths.tool_calls.histogram.map((bin) => [binLabel(bin), String(bin.count)])),
  );
  return parts.join('\n');
}

export function limitationsSection(input: DatasetCardInput): string {
  const { stats } = input;
  if (stats.records === 0) return `## Limitations\n\n- **No records**: there is nothing here to train on or to measure.\n`;
  const items: string[] = [];
  const policies = Object.keys(stats.counts.by_policy).map(code).join(', ');
  if (!modelActed(stats)) {
    items.push(
      `**No model acted.** Every episode was played by a scripted policy (${policies}): assistant turns are templated text, so ` +
        'their wording varies little; the signal is the structure of calls, errors, repairs and answers.',
    );
  } else {
    items.push(`**Policies**: ${policies}. Scripted and model-played episodes differ in style; filter on \`provenance.actors\` if that matters.`);
  }
  const size = `${plural(stats.records, 'record')}, ${plural(input.tasks.length, 'task')}, ${plural(input.worlds.length, 'world')}`;
  items.push(
    stats.records < 1000
      ? `**Small**: ${size}; the intervals above are wide (task completion ${formatRate(stats.completion.overall)}).`
      : `**Narrow**: ${size}; tasks repeat across seeds with different world contents.`,
  );
  const simulators = Object.keys(stats.turns.by_user_simulator);
  if (stats.turns.simulated_user > 0) {
    items.push(
      `**Simulated users**: ${plural(stats.turns.simulated_user, 'user turn')} after the opening request come from ${list(simulators.map(code))}, not from people` +
        (simulators.some((simulator) => simulator.startsWith('scripted:'))
          ? '; a scripted simulator answers from the task\'s facts in fixed sentences, so its replies vary little.'
          : '.'),
    );
  }
  items.push(
    `**Synthetic worlds**: ${list(input.worlds.map((world) => `${code(world.name)} ${world.version}`))} ${input.worlds.length === 1 ? 'is a seeded simulation' : 'are seeded simulations'} ` +
      `served over MCP, not ${input.worlds.length === 1 ? 'a real service; its' : 'real services; their'} contents (names, numbers, text) are generated from the seed.`,
  );
  items.push('**English only**: system prompts, user messages, tool descriptions and answers come from English templates.');
  items.push(
    `**Few tasks**: ${plural(input.tasks.length, 'task')}, repeated over seeds with different world contents; a model can learn these tasks rather than the skill. ` +
      (input.splits && input.splits.length > 0 ? 'Use the splits above, which are by task, to measure generalisation.' : 'Split by task to measure generalisation.'),
  );
  const failed = stats.records - stats.completion.overall.successes;
  if (failed > 0) items.push(`**${failed} records did not complete their task** (\`result.task_completed: false\`): keep them out of SFT.`);
  else if (stats.records > 0) items.push('**Every task was completed**: there are no failed episodes to learn from or to pair for DPO.');
  if (stats.faults.fired === 0) {
    items.push('**No faults were injected**: no episode shows recovery from protocol faults (timeouts, dropped connections, renamed tools).');
  } else {
    items.push(
      `**Faults follow a plan**: ${plural(stats.faults.fired, 'fault')} of ${plural(kinds(stats), 'kind')} fired in ${stats.faults.episodes_with_fault} episodes, ` +
        'injected at the MCP boundary from a fixed plan; real servers fail in other ways too.',
    );
  }
  const outcomes = Object.keys(stats.counts.by_outcome);
  if (outcomes.length === 1 && outcomes[0] === 'final_answer') {
    items.push('**Every episode ended with a final answer**: none hit a step, tool-call or time limit, and no policy failed.');
  }
  if (stats.duplicates.duplicates > 0) {
    items.push(`**${stats.duplicates.duplicates} records repeat an earlier trajectory**: deduplicate before training.`);
  }
  if (stats.problems.length > 0) {
    items.push(`**${plural(stats.problems.length, 'line')} of \`${EPISODES_FILE}\` could not be read** (torn, corrupt or invalid) and are not counted here.`);
  }
  return '## Limitations\n\n' + items.map((item) => `- ${item}`).join('\n') + '\n';
}

function kinds(stats: DatasetStats): number {
  return Object.keys(stats.faults.by_kind).length;
}

export function licenseSection(input: DatasetCardInput): string {
  if (input.license === undefined) {
    return '## License\n\nNot set: this card is a draft and the front matter says `license: other` as a placeholder. Set `"dataset_card": {"license": "<id>"}` in the lane (or pass `--license <id>`) and regenerate with `episode-factory card DIR` before publishing.\n';
  }
  const name = input.license_name !== undefined ? ` (${code(input.license_name)}${input.license_link !== undefined ? `, ${input.license_link}` : ''})` : '';
  return `## License\n\n${code(input.license)}${name}${input.license_source ? `, as ${input.license_source} sets it` : ''}.\n`;
}
