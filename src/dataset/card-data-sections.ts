// Owns the dataset card's sections about the data itself: the introduction,
// its purpose, the files, the training exports and the record schema, each
// with the code that loads it.

import { EPISODES_FILE } from './dataset-reader.js';
import { DATA_DIRECTORY } from '../records/record-files.js';
import type { DatasetStats } from './dataset-stats.js';
import { SPLIT_FILE } from './dataset-split.js';
import { KNOWN_FILES } from './card-files.js';
import { REJECTED_FILE } from './dataset-inputs.js';
import { configSplits, type DatasetCardInput } from './card-input.js';
import { code, list, markdownTable, plural } from './card-text.js';

export function introduction(input: DatasetCardInput): string {
  const { stats } = input;
  const faults = stats.faults.fired > 0 ? `, ${plural(stats.faults.fired, 'injected fault')} of ${plural(Object.keys(stats.faults.by_kind).length, 'kind')}` : '';
  const replayed = input.verified_by.replay ?? 0;
  if (stats.records === 0) return `# episode-factory: ${input.name}\n\nNo records: \`${input.records_path}\` holds no readable record.\n`;
  return (
    `# episode-factory: ${input.name}\n\n` +
    `${plural(stats.records, 'multi-turn MCP tool-use episode')} made by episode-factory from ` +
    `${list(input.lanes.map((lane) => code(lane.name)))}: ${plural(input.tasks.length, 'task')} in ` +
    `${list(input.worlds.map((world) => code(world.name)))}, ${plural(Object.keys(stats.counts.by_variant).length, 'policy variant')}${faults}. ` +
    `${replayed} of ${stats.records} records were verified by replay on a fresh world and judged by hidden predicates before they were written; ` +
    `${stats.completion.overall.successes} of ${stats.records} completed their task.\n`
  );
}

export function purpose(input: DatasetCardInput): string {
  const { stats } = input;
  const failed = stats.records - stats.completion.overall.successes;
  const lines = [
    '## Purpose',
    '',
    'Training and evaluation data for language models that call tools over the Model Context Protocol: whole conversations ' +
      'with the tool catalog the policy saw, every call with its arguments exactly as emitted, every tool result (including ' +
      'errors), and a verdict on whether the task was done, from predicates the policy never saw.',
    '',
    `- **SFT**: the ${stats.completion.overall.successes} records with \`result.task_completed: true\`.`,
  ];
  if (failed > 0) {
    lines.push(`- **DPO**: the ${failed} records with \`task_completed: false\` are rejected halves; pair each with a completed record of the same task.`);
  } else if (stats.records > 0) {
    lines.push('- **DPO**: every record here completed its task, so this dataset has no rejected halves of its own.');
  }
  if (stats.faults.fired > 0 || stats.recovery.n > 0) {
    lines.push(
      `- **Recovery**: ${stats.recovery.n} episodes met an error turn or a fault; \`recovery\` says which faults fired and whether the task was still completed.`,
    );
  }
  return lines.join('\n') + '\n';
}

export function filesSection(input: DatasetCardInput): string {
  const descriptions = new Map(KNOWN_FILES);
  const rowsOf = (file: string): string => {
    if (file === EPISODES_FILE || file === `${DATA_DIRECTORY}/`) return String(input.stats.records);
    if (file === REJECTED_FILE) return input.rejected === null || input.rejected === undefined ? '' : String(input.rejected);
    const split = input.splits?.find((candidate) => candidate.path === file);
    return split ? String(split.rows) : '';
  };
  const describe = (file: string): string => {
    const split = input.splits?.find((candidate) => candidate.path === file);
    if (split) return `the ${split.name} split${split.tasks ? `: tasks ${split.tasks.join(', ')}` : ''}`;
    return descriptions.get(file) ?? '';
  };
  let text = '## Files\n\n' + markdownTable(['file', 'rows', 'what'], input.files.map((file) => [code(file), rowsOf(file), describe(file)]));
  const splits = configSplits(input);
  text += '\n';
  if (input.splits && input.splits.length > 0) {
    const fraction = input.test_fraction === null || input.test_fraction === undefined ? '' : ` (test fraction ${input.test_fraction})`;
    text +=
      `Splits, from \`${SPLIT_FILE}\`${fraction}: ` +
      splits.map((split) => `${split.name} ${code(split.path)} (${plural(split.rows, 'row')})`).join(', ') +
      '. The `configs` above point loaders at them.\n';
  } else {
    text += `There is no \`${SPLIT_FILE}\`, so \`${input.records_path}\` is the train split. Tasks repeat across seeds: split by task to measure generalisation.\n`;
  }
  return text;
}

export function exportsSection(input: DatasetCardInput): string {
  const exports = input.exports ?? [];
  if (exports.length === 0) {
    return '## Training exports\n\nNone yet: `episode-factory export sft DIR` and `episode-factory export dpo DIR` write SFT rows and DPO pairs into this directory, and regenerating this card lists them as the configs `sft` and `dpo`.\n';
  }
  const rows = exports.flatMap((facts) =>
    facts.splits.map((split) => [code(facts.config), split.name, code(split.path), String(split.rows), facts.arguments === 'object' ? 'JSON objects' : 'JSON-encoded strings']),
  );
  const forms = new Set(exports.map((facts) => facts.arguments));
  const python = ['```python', 'from datasets import load_dataset  # datasets >= 4.7, for the Json feature', ''];
  for (const facts of exports) python.push(`${facts.config} = load_dataset("path/to/${input.name}", ${JSON.stringify(facts.config)})  # this directory, or its Hub id`);
  python.push('```');
  const argumentsText = [...forms]
    .map((form) =>
      form === 'object'
        ? 'as JSON objects, for chat templates that apply `tojson` to them (Qwen2.5, Llama 3.1, gpt-oss: a string there is encoded twice)'
        : 'as JSON-encoded strings, the OpenAI wire shape, for OpenAI-format trainers and templates that print them verbatim (DeepSeek-V3)',
    )
    .join('; elsewhere ');
  return (
    '## Training exports\n\n' +
    markdownTable(['config', 'split', 'file', 'rows', 'tool-call arguments'], rows) +
    '\n' +
    'Rows are in the conversational form TRL\'s `SFTTrainer` and `DPOTrainer` read: `messages` (SFT) or `prompt`, `chosen` and ' +
    '`rejected` (DPO), each message `{role, content, tool_calls, tool_call_id, name}`, plus `tools`, the function schemas the ' +
    `model could call. Tool-call arguments are written ${argumentsText}. ` +
    'A message carries only the keys that apply to it. Each message and each tool is declared with the `Json` feature in ' +
    '`dataset_info` above, so it loads exactly as written, instead of being merged with the others into one struct whose ' +
    'missing keys come back as `null` (which chat templates would render, or mistake for a tool call).' +
    conversationShapes(input.stats) +
    '\n\n' +
    python.join('\n') +
    '\n'
  );
}

/** What a trainer must know about turns with several calls and simulated user turns, said only when the records have them. */
function conversationShapes(stats: DatasetStats): string {
  const parts: string[] = [];
  if (stats.turns.with_several_calls > 0) {
    parts.push(
      ` ${plural(stats.turns.with_several_calls, 'assistant turn')} make several tool calls at once: they are one \`tool_calls\` list, followed by one ` +
        '`tool` message per call, matched by `tool_call_id` and in the order of the calls.',
    );
  }
  if (stats.turns.simulated_user > 0) {
    parts.push(
      ` ${plural(stats.turns.simulated_user, 'user message')} after the opening request (in ${plural(stats.turns.episodes_with_simulated_user, 'episode')}) ` +
        'are the user simulator\'s replies, not the model\'s: SFT rows keep them in `messages`, so train on the assistant turns only ' +
        '(TRL: `assistant_only_loss=True`), which masks them along with the request and the tool results. In DPO pairs they stay in ' +
        '`prompt`: `chosen` and `rejected` end before the simulator\'s next turn, because a DPO trainer scores every token of a ' +
        'continuation and has no per-message mask; each pair holds the step where the agent acted differently and what it did ' +
        'until the user spoke again.',
    );
  }
  return parts.join('');
}

export function schemaSection(input: DatasetCardInput): string {
  const example = input.example ? ` (e.g. ${code(input.example.record_id)})` : '';
  const rows: [string, string][] = [
    ['record_id', `unique id: lane, task and seed${example}`],
    ['family, schema_version', '`mcp-tool-use-episode`, `episode-record.v1` (schemas/episode-record.v1.schema.json)'],
    ['world', '`{name, version}` of the MCP server the episode ran against'],
    ['task', '`{id, title, tags}`'],
    ['tools', 'the catalog the policy saw from `tools/list`: `{name, description, input_schema, output_schema?, annotations?}`; the schemas and annotations are **JSON-encoded strings**'],
    [
      'messages',
      'the conversation: `system`, `user`, `assistant` (`content`, `tool_calls?`, `malformed_tool_call?`) and `tool` (`tool_call_id`, `name`, `content`, `tool_result`). ' +
        'The first `user` message is the task\'s request; a later one is the **user simulator\'s** reply to the agent (its actor is the `provenance.actors` entry with role `user`), not the task\'s user and not the model',
    ],
    [
      'messages[].tool_calls',
      '`[{id, name, arguments}]`: every call of the turn, **possibly several**, each answered by one `tool` message with its `tool_call_id`, in the order of the list; ' +
        '`arguments` is a **JSON-encoded string**, exactly as emitted (some are wrongly typed on purpose)',
    ],
    ['messages[].tool_result', '`{ok, error?, kind?, errors?, code?}`: `kind` names the failure (`invalid_arguments`, `tool_error`, `timeout`, ...), `errors` every field error'],
    ['catalog_updates', 'catalog refreshes during the episode (after `notifications/tools/list_changed`): `{before_message, removed, added}`'],
    ['recovery', '`{error_turns, recovered, faults_fired}`: tool messages with `ok: false`; whether the task was completed despite them; every fault that fired (`{kind, fault, step, tool, call, detail}`)'],
    ['result', '`{task_completed, verified_by, outcome, outcome_detail?, predicates, steps, tool_calls, rejected_calls, initial_snapshot_sha256, final_snapshot_sha256}`; `predicates` are the hidden checks, each `{id, passed, detail?}`'],
    ['provenance', '`{produced_at, actors, lineage}`: who acted (policy, user simulator when the task has one, world, factory), and the lane, its sha256, task, variant, seed, group_id and rollout (for a rollout of a GRPO group), phrasing (which phrasing of a grammar the user message is, when the task has one), operation and the commands that regenerate and replay the record'],
  ];
  const splits = configSplits(input);
  const dataFiles = `{${splits.map((split) => `${JSON.stringify(split.name)}: ${JSON.stringify(split.path)}`).join(', ')}}`;
  const first = splits[0]!.name;
  const python = [
    '```python',
    'import json',
    'from datasets import load_dataset',
    '',
    `episodes = load_dataset("json", data_files=${dataFiles})[${JSON.stringify(first)}]`,
    'record = episodes[0]',
    'tools = [dict(tool, input_schema=json.loads(tool["input_schema"])) for tool in record["tools"]]',
    'for message in record["messages"]:',
    '    for call in message.get("tool_calls") or []:',
    '        arguments = json.loads(call["arguments"])  # as emitted, possibly wrongly typed',
    '        print(call["name"], arguments)',
    '```',
  ];
  return (
    '## Record schema\n\n' +
    'One JSON object per line. Fields whose shape differs from tool to tool are stored as JSON strings so that every loader ' +
    '(pyarrow, Hugging Face datasets, DuckDB) sees one stable column type; `json.loads` them back.\n\n' +
    markdownTable(['field', 'what'], rows.map(([field, what]) => [code(field), what])) +
    '\n' +
    python.join('\n') +
    '\n'
  );
}
