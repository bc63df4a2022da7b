// Owns the dataset card: the README.md of a dataset directory in the Hugging
// Face form (YAML front matter with configs and splits, then purpose, files,
// schema, generation, provenance, statistics, limitations). It is rendered
// from the records and the files beside them, never written by hand, so every
// number in it is one the data holds and regenerating it gives the same bytes.

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { FactoryError } from '../core/errors.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { type Dataset, EPISODES_FILE, readWholeDataset } from './dataset-reader.js';
import { binLabel, callsPerTurnText, compareKeys, computeStats, type DatasetStats, type Distribution, simulatedUserText } from './dataset-stats.js';
import { SPLIT_FILE, SPLIT_FORMAT } from './dataset-split.js';
import { type CardSplit, readSplitLayout, type SplitLayout } from './split-layout.js';
import { type ExportFacts, readExports } from './export-configs.js';
import { exportFeatures, featureLines } from './export-features.js';
import { formatRate, type Rate } from '../statistics/wilson-interval.js';

export { SPLIT_FILE, SPLIT_FORMAT, readSplitLayout, type CardSplit, type SplitLayout };
export const CARD_FILE = 'README.md';
/** Hugging Face's value for "a license not in the list"; the card tells the user to set a real one. */
const PLACEHOLDER_LICENSE = 'other';

const REJECTED_FILE = 'rejected.jsonl';
const MANIFEST_FILE = 'manifest.json';
const TRACES_DIR = 'traces';

/** What each file a dataset directory may hold is, in the card's words. */
const KNOWN_FILES: readonly (readonly [string, string])[] = [
  [EPISODES_FILE, 'every verified record, one JSON object per line'],
  ['episodes.parquet', 'the same records as Parquet'],
  ['episodes.arrow', 'the same records as Arrow IPC'],
  [REJECTED_FILE, 'episodes that did not verify, with the stage and the reason (not training data)'],
  [SPLIT_FILE, 'the split layout: which file holds which split, and its tasks'],
  ['dropped.jsonl', 'records dedup dropped, each with the reason and the record it duplicates (not training data)'],
  ['dedup.json', 'the dedup settings and counts'],
  ['report.html', 'the HTML report: overview, plots and an episode viewer (`episode-factory report`); open it in a browser'],
  ['sft/', 'SFT rows, one file per split (`episode-factory export sft`; the `sft` config when current, see Training exports)'],
  ['dpo/', 'DPO pairs, one file per split (`episode-factory export dpo`; the `dpo` config when current, see Training exports)'],
  [MANIFEST_FILE, 'every file with its sha256, size and row count'],
  [TRACES_DIR + '/', 'one trace archive per part of the run: generation, replay and verification events of each episode, with wall-clock timings; `index.jsonl` names the archive of every record id'],
];

const TAGS = ['tool-use', 'mcp', 'agents', 'synthetic', 'sft', 'dpo'];
const DEFAULT_TASK_CATEGORIES = ['text-generation'];

export interface CardLane {
  name: string;
  sha256: string;
  records: number;
  tasks: string[];
  seeds: number[];
}

export interface CardTask {
  id: string;
  title: string;
  tags: string[];
}

export interface CardWorld {
  name: string;
  version: string;
  tools: string[];
}

export interface DatasetCardInput {
  stats: DatasetStats;
  /** The dataset directory's name. */
  name: string;
  lanes: CardLane[];
  tasks: CardTask[];
  worlds: CardWorld[];
  /** From split.json; absent when the directory has none, and then episodes.jsonl is the train split. */
  splits?: CardSplit[];
  test_fraction?: number | null;
  /** Files present in the directory, as named in KNOWN_FILES (a directory ends with "/"). */
  files: string[];
  /** Rows of rejected.jsonl, when the file is present. */
  rejected?: number | null;
  /** Of those, the episodes the model server cut short (stage infra). */
  infra_errors?: number;
  /** lineage.factory_version of the records. */
  factory_versions: string[];
  produced_at: string[];
  /** Records by lineage.operation (generate, dedup, merge, ...). */
  operations: Record<string, number>;
  /** Records by result.verified_by. */
  verified_by: Record<string, number>;
  /** Commands from the first record's lineage, to show how one record is regenerated and replayed. */
  example: { record_id: string; generate_command: string; replay_command: string } | null;
  /** A license id to put in the front matter instead of the placeholder (only a draft has none). */
  license?: string;
  /** With license "other": its short id and where its text is. */
  license_name?: string;
  license_link?: string;
  /** Where the license came from, for the card's License section: "lane <name>" or "--license". */
  license_source?: string;
  /** From the lanes' dataset_card; default text-generation. */
  task_categories?: string[];
  /** The exports present and current (export sft/dpo into the directory): each is a config. */
  exports?: ExportFacts[];
}

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareKeys);
}

function tally(values: Iterable<string>): Record<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  const out: Record<string, number> = {};
  for (const key of [...counts.keys()].sort(compareKeys)) out[key] = counts.get(key)!;
  return out;
}

/** Lanes, tasks, worlds and provenance facts the card needs beyond the statistics, from the records. */
function describeRecords(records: readonly EpisodeRecord[]): Pick<
  DatasetCardInput,
  'lanes' | 'tasks' | 'worlds' | 'factory_versions' | 'produced_at' | 'operations' | 'verified_by' | 'example'
> {
  const lanes = new Map<string, CardLane>();
  const tasks = new Map<string, CardTask>();
  const worlds = new Map<string, { name: string; version: string; tools: Set<string> }>();
  for (const record of records) {
    const lineage = record.provenance.lineage;
    // A lane edited between runs has a new hash: each (name, hash) is its own row.
    const laneKey = `${lineage.lane}\u0000${lineage.lane_sha256}`;
    const lane = lanes.get(laneKey) ?? { name: lineage.lane, sha256: lineage.lane_sha256, records: 0, tasks: [], seeds: [] };
    lane.records++;
    lane.tasks.push(lineage.task);
    lane.seeds.push(lineage.seed);
    lanes.set(laneKey, lane);
    if (!tasks.has(record.task.id)) tasks.set(record.task.id, { id: record.task.id, title: record.task.title, tags: [...record.task.tags] });
    const worldKey = `${record.world.name}@${record.world.version}`;
    const world = worlds.get(worldKey) ?? { name: record.world.name, version: record.world.version, tools: new Set<string>() };
    for (const tool of record.tools) world.tools.add(tool.name);
    worlds.set(worldKey, world);
  }
  const first = records[0];
  return {
    lanes: [...lanes.keys()].sort(compareKeys).map((key) => {
      const lane = lanes.get(key)!;
      return { ...lane, tasks: sortedUnique(lane.tasks), seeds: [...new Set(lane.seeds)].sort((left, right) => left - right) };
    }),
    tasks: [...tasks.keys()].sort(compareKeys).map((key) => tasks.get(key)!),
    worlds: [...worlds.keys()].sort(compareKeys).map((key) => {
      const world = worlds.get(key)!;
      return { name: world.name, version: world.version, tools: sortedUnique(world.tools) };
    }),
    factory_versions: sortedUnique(records.map((record) => record.provenance.lineage.factory_version)),
    produced_at: sortedUnique(records.map((record) => record.provenance.produced_at)),
    operations: tally(records.map((record) => record.provenance.lineage.operation)),
    verified_by: tally(records.map((record) => record.result.verified_by)),
    example: first
      ? {
          record_id: first.record_id,
          generate_command: first.provenance.lineage.generate_command,
          replay_command: first.provenance.lineage.replay_command,
        }
      : null,
  };
}

/** The known files present, in KNOWN_FILES order, plus split files, so the card never describes what is not there. */
function presentFiles(dir: string, splits: readonly CardSplit[] = []): string[] {
  const entries = new Set(readdirSync(dir));
  const files: string[] = [];
  for (const [name] of KNOWN_FILES) {
    const bare = name.endsWith('/') ? name.slice(0, -1) : name;
    if (!entries.has(bare)) continue;
    if (name.endsWith('/') !== statSync(join(dir, bare)).isDirectory()) continue;
    files.push(name);
  }
  for (const split of splits) if (!files.includes(split.path)) files.push(split.path);
  return files;
}

/** The stage of every row of rejected.jsonl (null for a line that is not a row). */
function rejectedRows(path: string): (string | null)[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        const row: unknown = JSON.parse(line);
        const stage = typeof row === 'object' && row !== null ? (row as { stage?: unknown }).stage : undefined;
        return typeof stage === 'string' ? stage : null;
      } catch {
        return null;
      }
    });
}

/** Plain YAML scalars where they are unambiguous; double-quoted (JSON is valid YAML) otherwise. */
function yamlScalar(value: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9_.\-/<>]*$/.test(value) && !/^(true|false|null|yes|no|on|off|~)$/i.test(value) && !/^[0-9.eE+-]+$/.test(value)
    ? value
    : JSON.stringify(value);
}

function markdownCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(markdownCell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n') + '\n';
}

function code(text: string): string {
  return '`' + text.replace(/`/g, "'") + '`';
}

/** Hugging Face size_categories buckets by number of rows. */
function sizeCategory(rows: number): string {
  const buckets: [number, string][] = [
    [1e3, 'n<1K'],
    [1e4, '1K<n<10K'],
    [1e5, '10K<n<100K'],
    [1e6, '100K<n<1M'],
    [1e7, '1M<n<10M'],
    [1e8, '10M<n<100M'],
    [1e9, '100M<n<1B'],
  ];
  for (const [limit, label] of buckets) if (rows < limit) return label;
  return 'n>1B';
}

/** `0..7` or `0..3, 8, 10..12`: a lane's seeds as the ranges generate takes. */
export function seedRanges(seeds: readonly number[]): string[] {
  const sorted = [...new Set(seeds)].sort((left, right) => left - right);
  const ranges: string[] = [];
  let start: number | undefined;
  let previous: number | undefined;
  const close = (): void => {
    if (start === undefined || previous === undefined) return;
    ranges.push(start === previous ? String(start) : `${start}..${previous}`);
  };
  for (const seed of sorted) {
    if (previous !== undefined && seed === previous + 1) {
      previous = seed;
      continue;
    }
    close();
    start = seed;
    previous = seed;
  }
  close();
  return ranges;
}

function plural(count: number, one: string, many = one + 's'): string {
  return `${count} ${count === 1 ? one : many}`;
}

function list(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function configSplits(input: DatasetCardInput): CardSplit[] {
  return input.splits && input.splits.length > 0 ? input.splits : [{ name: 'train', path: EPISODES_FILE, rows: input.stats.records }];
}

function frontMatter(input: DatasetCardInput): string {
  const license = input.license ?? PLACEHOLDER_LICENSE;
  const lines = [
    '---',
    '# Generated by `episode-factory card` from the records in this directory: regenerate it, do not edit it.',
  ];
  if (input.license === undefined) {
    lines.push('# A DRAFT: license "other" is a placeholder. Set the real one in the lane ("dataset_card": {"license": "<id>"}) or with --license <id>, then regenerate.');
  }
  lines.push(`license: ${yamlScalar(license)}`);
  if (input.license === undefined) lines.push('license_name: set-before-publishing');
  if (input.license !== undefined && input.license_name !== undefined) lines.push(`license_name: ${yamlScalar(input.license_name)}`);
  if (input.license !== undefined && input.license_link !== undefined) lines.push(`license_link: ${yamlScalar(input.license_link)}`);
  lines.push(`pretty_name: ${yamlScalar(`episode-factory: ${input.name}`)}`);
  lines.push('language:', '- en');
  lines.push('tags:', ...TAGS.map((tag) => `- ${yamlScalar(tag)}`));
  lines.push('task_categories:', ...(input.task_categories ?? DEFAULT_TASK_CATEGORIES).map((category) => `- ${yamlScalar(category)}`));
  lines.push('size_categories:', `- ${yamlScalar(sizeCategory(input.stats.records))}`);
  lines.push('configs:', '- config_name: default', '  data_files:');
  for (const split of configSplits(input)) lines.push(`  - split: ${yamlScalar(split.name)}`, `    path: ${yamlScalar(split.path)}`);
  for (const facts of input.exports ?? []) {
    lines.push(`- config_name: ${facts.config}`, '  data_files:');
    for (const split of facts.splits) lines.push(`  - split: ${yamlScalar(split.name)}`, `    path: ${yamlScalar(split.path)}`);
  }
  if ((input.exports ?? []).length > 0) {
    lines.push('dataset_info:');
    for (const facts of input.exports ?? []) lines.push(`- config_name: ${facts.config}`, '  features:', ...featureLines(exportFeatures(facts), '  '));
  }
  lines.push('---');
  return lines.join('\n') + '\n';
}

function modelActed(stats: DatasetStats): boolean {
  return Object.keys(stats.counts.by_policy).some((key) => !key.startsWith('scripted:'));
}

function introduction(input: DatasetCardInput): string {
  const { stats } = input;
  const faults = stats.faults.fired > 0 ? `, ${plural(stats.faults.fired, 'injected fault')} of ${plural(Object.keys(stats.faults.by_kind).length, 'kind')}` : '';
  const replayed = input.verified_by.replay ?? 0;
  if (stats.records === 0) return `# episode-factory: ${input.name}\n\nNo records: \`${EPISODES_FILE}\` holds no readable record.\n`;
  return (
    `# episode-factory: ${input.name}\n\n` +
    `${plural(stats.records, 'multi-turn MCP tool-use episode')} made by episode-factory from ` +
    `${list(input.lanes.map((lane) => code(lane.name)))}: ${plural(input.tasks.length, 'task')} in ` +
    `${list(input.worlds.map((world) => code(world.name)))}, ${plural(Object.keys(stats.counts.by_variant).length, 'policy variant')}${faults}. ` +
    `${replayed} of ${stats.records} records were verified by replay on a fresh world and judged by hidden predicates before they were written; ` +
    `${stats.completion.overall.successes} of ${stats.records} completed their task.\n`
  );
}

function purpose(input: DatasetCardInput): string {
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

function filesSection(input: DatasetCardInput): string {
  const descriptions = new Map(KNOWN_FILES);
  const rowsOf = (file: string): string => {
    if (file === EPISODES_FILE) return String(input.stats.records);
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
    text += `There is no \`${SPLIT_FILE}\`, so \`${EPISODES_FILE}\` is the train split. Tasks repeat across seeds: split by task to measure generalisation.\n`;
  }
  return text;
}

function exportsSection(input: DatasetCardInput): string {
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

function schemaSection(input: DatasetCardInput): string {
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
    ['provenance', '`{produced_at, actors, lineage}`: who acted (policy, user simulator when the task has one, world, factory), and the lane, its sha256, task, variant, seed, phrasing (which phrasing of a grammar the user message is, when the task has one), operation and the commands that regenerate and replay the record'],
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

function generationSection(input: DatasetCardInput): string {
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

function provenanceSection(input: DatasetCardInput): string {
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

function statisticsSection(input: DatasetCardInput): string {
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

function limitationsSection(input: DatasetCardInput): string {
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

function licenseSection(input: DatasetCardInput): string {
  if (input.license === undefined) {
    return '## License\n\nNot set: this card is a draft and the front matter says `license: other` as a placeholder. Set `"dataset_card": {"license": "<id>"}` in the lane (or pass `--license <id>`) and regenerate with `episode-factory card DIR` before publishing.\n';
  }
  const name = input.license_name !== undefined ? ` (${code(input.license_name)}${input.license_link !== undefined ? `, ${input.license_link}` : ''})` : '';
  return `## License\n\n${code(input.license)}${name}${input.license_source ? `, as ${input.license_source} sets it` : ''}.\n`;
}

/** The whole README.md; a pure function of its input. */
export function renderDatasetCard(input: DatasetCardInput): string {
  return [
    frontMatter(input),
    introduction(input),
    purpose(input),
    filesSection(input),
    exportsSection(input),
    schemaSection(input),
    generationSection(input),
    provenanceSection(input),
    statisticsSection(input),
    limitationsSection(input),
    licenseSection(input),
  ].join('\n');
}

const LICENSE_ID = /^[a-z0-9][a-z0-9.+-]*$/;

export interface CardOptions {
  /** A Hugging Face license id (mit, apache-2.0, cc-by-4.0, ...); overrides the lanes' dataset_card.license. */
  license?: string;
  /** Write the card even when it is not fit to publish (no license, a stale export), with placeholders and warnings. */
  draft?: boolean;
  /**
   * Each lane's dataset_card (license, task categories), looked up by name;
   * given by the caller, since finding lanes is not the dataset layer's job.
   * Without it no lane is read, and only --license sets the license.
   */
  laneCards?: (names: readonly string[]) => Map<string, LaneCardLookup>;
}

/** What a lane says for the card: the fields it sets (none when it has no dataset_card), or why it could not be read. */
export type LaneCardLookup = { card: LaneCardFields | undefined } | { error: string };

/** A lane's dataset_card, as schemas/lane.v1.schema.json has it. */
export interface LaneCardFields {
  license: string;
  license_name?: string;
  license_link?: string;
  task_categories?: string[];
}

/** What the lanes and exports add to the card, and what keeps it from being published. */
export interface CardFacts {
  license?: string;
  license_name?: string;
  license_link?: string;
  license_source?: string;
  task_categories?: string[];
  exports: ExportFacts[];
  /** Reasons the card is only a draft, each with its fix. */
  problems: { reason: string; fix: string }[];
}

/** Reads each lane's dataset_card (by name, as replay finds lanes) and the exports beside the records. */
export async function readCardFacts(dir: string, dataset: Dataset, options: CardOptions = {}): Promise<CardFacts> {
  const facts: CardFacts = { exports: [], problems: [] };
  const names = [...new Set(dataset.rows.map((row) => row.record.provenance.lineage.lane))].sort(compareKeys);
  const cards = new Map<string, LaneCardFields | undefined>();
  const unreadable: string[] = [];
  const looked = options.laneCards?.(names) ?? new Map<string, LaneCardLookup>(names.map((name) => [name, { error: 'no lane lookup was given' }]));
  for (const name of names) {
    const lookup = looked.get(name) ?? { error: 'not looked up' };
    if ('error' in lookup) unreadable.push(`${name} (${lookup.error})`);
    else cards.set(name, lookup.card);
  }
  const categories = [...cards.values()].flatMap((card) => card?.task_categories ?? []);
  if (categories.length > 0) facts.task_categories = [...new Set(categories)];
  if (options.license !== undefined) {
    facts.license = options.license;
    facts.license_source = '--license';
  } else {
    const licensed = [...cards.entries()].filter((entry): entry is [string, LaneCardFields] => entry[1] !== undefined);
    const distinct = new Map(licensed.map(([name, card]) => [canonicalLicense(card), { name, card }]));
    const fix = 'set "dataset_card": {"license": "<id>"} in the lane (e.g. mit, apache-2.0, cc-by-4.0), or pass --license <id>; --draft writes a card that is not for publishing';
    if (unreadable.length > 0) facts.problems.push({ reason: `cannot read lane ${unreadable.join(', ')} for its dataset_card.license`, fix: `pass --lane <file>, ${fix}` });
    const unset = names.filter((name) => cards.has(name) && cards.get(name) === undefined);
    if (unset.length > 0) facts.problems.push({ reason: `lane ${unset.join(', ')} sets no dataset_card.license`, fix });
    if (distinct.size > 1) {
      facts.problems.push({
        reason: `the lanes disagree on the license (${licensed.map(([name, card]) => `${name}: ${card.license}`).join(', ')})`,
        fix: 'pass --license <id> with the license of the combined dataset',
      });
    } else if (distinct.size === 1 && facts.problems.length === 0) {
      const { name, card } = [...distinct.values()][0]!;
      facts.license = card.license;
      if (card.license_name !== undefined) facts.license_name = card.license_name;
      if (card.license_link !== undefined) facts.license_link = card.license_link;
      facts.license_source = licensed.length === 1 ? `lane ${code(name)}` : `its lanes`;
    }
    if (facts.license === undefined && facts.problems.length === 0) facts.problems.push({ reason: 'the records name no lane, so no lane sets the license', fix });
  }
  const { exports, problems } = await readExports(dir, dataset);
  facts.exports = exports;
  for (const problem of problems) facts.problems.push({ reason: problem.reason, fix: problem.fix });
  return facts;
}

function canonicalLicense(card: LaneCardFields): string {
  return JSON.stringify([card.license, card.license_name ?? null, card.license_link ?? null]);
}

/** Everything the card says about a dataset directory, read from it (with what readCardFacts found). */
export function datasetCardInput(dir: string, dataset: Dataset, facts: Partial<CardFacts> = {}): DatasetCardInput {
  const layout = readSplitLayout(dir);
  const input: DatasetCardInput = {
    stats: computeStats(dataset),
    name: basename(resolve(dir)),
    ...describeRecords(dataset.rows.map((row) => row.record)),
    files: presentFiles(dir, layout?.splits),
    rejected: null,
  };
  if (existsSync(join(dir, REJECTED_FILE))) {
    const rows = rejectedRows(join(dir, REJECTED_FILE));
    input.rejected = rows.length;
    const infra = rows.filter((row) => row === 'infra').length;
    if (infra > 0) input.infra_errors = infra;
  }
  if (layout) {
    input.splits = layout.splits;
    input.test_fraction = layout.test_fraction;
  }
  for (const key of ['license', 'license_name', 'license_link', 'license_source', 'task_categories', 'exports'] as const) {
    if (facts[key] !== undefined) (input as unknown as Record<string, unknown>)[key] = facts[key];
  }
  return input;
}

export interface CardResult {
  path: string;
  /** Why the card written with --draft is not fit to publish; empty otherwise. */
  draft: { reason: string; fix: string }[];
}

/**
 * Reads the dataset, renders its card and writes dir/README.md. A card that
 * is not fit to publish (no license, lanes that disagree on it, an export
 * that no longer matches the records) is not written, unless asked for as a
 * draft: the placeholder must never reach a published card unnoticed.
 */
export async function writeDatasetCard(dir: string, options: CardOptions = {}): Promise<CardResult> {
  if (options.license !== undefined && !LICENSE_ID.test(options.license)) {
    throw new FactoryError('usage', `--license ${JSON.stringify(options.license)} is not a license id`, {
      fix: 'pass a lowercase Hugging Face license id such as mit, apache-2.0 or cc-by-4.0',
    });
  }
  // A card says how many records were verified: it is never written over lines that could not be read or an id with two contents.
  const dataset = await readWholeDataset(dir, 'described (no card was written)');
  const facts = await readCardFacts(dir, dataset, options);
  if (facts.problems.length > 0 && !options.draft) {
    const [first] = facts.problems;
    throw new FactoryError('card_not_publishable', `card ${dir}: not written: ${first!.reason}${facts.problems.length > 1 ? ` (and ${facts.problems.length - 1} more, listed above)` : ''}`, {
      fix: first!.fix,
      problems: facts.problems.length > 1 ? facts.problems.map((problem) => ({ where: dir, reason: `${problem.reason} — fix: ${problem.fix}` })) : [],
    });
  }
  const path = join(dir, CARD_FILE);
  writeFileSync(path, renderDatasetCard(datasetCardInput(dir, dataset, facts)));
  return { path, draft: facts.problems };
}
