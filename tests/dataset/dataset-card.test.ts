// Tests the dataset card: front matter a Hugging Face loader can read (checked
// with a small YAML subset parser, no dependency), statistics and provenance
// taken from the data, split.json reflected in the configs, and the same bytes
// every time it is regenerated.

import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { type CardOptions, readCardFacts } from '../../src/dataset/card-facts.js';
import { datasetCardInput } from '../../src/dataset/card-input.js';
import { CardRecords } from '../../src/dataset/card-records.js';
import { seedRanges } from '../../src/dataset/card-text.js';
import { renderDatasetCard, writeDatasetCard } from '../../src/dataset/dataset-card.js';
import { readSplitLayout } from '../../src/dataset/split-layout.js';
import { laneCardReader } from '../../src/lanes/lane-cards.js';
import { readDataset } from '../../src/dataset/dataset-reader.js';
import { exportConfig } from '../../src/dataset/export-configs.js';
import { formatRate, wilsonInterval } from '../../src/statistics/wilson-interval.js';
import { conversationDataset, DIALOGUE_LANE, PARALLEL_LANE } from '../conversation-lanes.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

type Yaml = string | Yaml[] | { [key: string]: Yaml };

interface YamlLine {
  indent: number;
  text: string;
}

/** The block subset the card uses: maps, sequences of scalars or maps, plain or double-quoted scalars, comments. */
function parseYaml(source: string): Yaml {
  const lines: YamlLine[] = source
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
    .map((line) => ({ indent: line.length - line.trimStart().length, text: line.trim() }));
  const [value, next] = parseNode(lines, 0, lines[0]?.indent ?? 0);
  assert.equal(next, lines.length, `unparsed YAML from line ${next}: ${lines[next]?.text}`);
  return value;
}

function scalar(text: string): string {
  return text.startsWith('"') ? (JSON.parse(text) as string) : text;
}

function parseNode(lines: YamlLine[], index: number, indent: number): [Yaml, number] {
  return lines[index]!.text.startsWith('- ') ? parseSequence(lines, index, indent) : parseMap(lines, index, indent);
}

function parseSequence(lines: YamlLine[], index: number, indent: number): [Yaml[], number] {
  const items: Yaml[] = [];
  while (index < lines.length && lines[index]!.indent === indent && lines[index]!.text.startsWith('- ')) {
    const rest = lines[index]!.text.slice(2);
    if (/^[A-Za-z_][A-Za-z0-9_]*:( |$)/.test(rest)) {
      // "- key: value" opens a map whose keys sit two columns in.
      lines[index] = { indent: indent + 2, text: rest };
      const [map, next] = parseMap(lines, index, indent + 2);
      items.push(map);
      index = next;
    } else {
      items.push(scalar(rest));
      index++;
    }
  }
  return [items, index];
}

function parseMap(lines: YamlLine[], index: number, indent: number): [{ [key: string]: Yaml }, number] {
  const map: { [key: string]: Yaml } = {};
  while (index < lines.length && lines[index]!.indent === indent && !lines[index]!.text.startsWith('- ')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?$/.exec(lines[index]!.text);
    assert.ok(match, `not a YAML mapping line: ${lines[index]!.text}`);
    const [, key, value] = match;
    assert.ok(!(key! in map), `duplicate key ${key}`);
    if (value !== undefined && value !== '') {
      map[key!] = scalar(value);
      index++;
      continue;
    }
    const child = lines[index + 1];
    assert.ok(child && (child.indent > indent || (child.indent === indent && child.text.startsWith('- '))), `${key} has no value`);
    const [node, next] = parseNode(lines, index + 1, child.indent);
    map[key!] = node;
    index = next;
  }
  return [map, index];
}

function splitCard(card: string): { front: Record<string, Yaml>; body: string } {
  assert.ok(card.startsWith('---\n'), 'the card opens with front matter');
  const end = card.indexOf('\n---\n', 4);
  assert.ok(end > 0, 'the front matter is closed');
  return { front: parseYaml(card.slice(4, end)) as Record<string, Yaml>, body: card.slice(end + 5) };
}

interface RawRecord {
  task: { id: string };
  world: { name: string };
  messages: { role: string; content: string; tool_calls?: unknown[] }[];
  recovery: { faults_fired: { kind: string }[] };
  result: { task_completed: boolean };
  provenance: { produced_at: string; actors: { role: string; kind: string; name: string }[]; lineage: { lane: string; lane_sha256: string; seed: number; variant: string; phrasing?: string } };
}

/** The card as the command writes it: each lane looked up by name in the repository's lanes/. */
function writeCard(dir: string, options: CardOptions = {}) {
  return writeDatasetCard(dir, { laneCards: laneCardReader({ cwd: REPO_ROOT }), ...options });
}

const SAMPLE_FAULTS = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1');
const SAMPLE_CLEAN = join(REPO_ROOT, 'datasets', 'tool-world-v1');

function rawLines(dir: string): string[] {
  return readFileSync(join(dir, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
}

/** A copy of a sample's deterministic files in a fresh directory named `name`. */
function copySample(sample: string, name: string): string {
  const dir = join(temporaryDirectory(), name);
  mkdirSync(dir);
  for (const file of ['episodes.jsonl', 'rejected.jsonl']) copyFileSync(join(sample, file), join(dir, file));
  return dir;
}

describe('dataset card of the faults sample', () => {
  const dir = copySample(SAMPLE_FAULTS, 'tool-world-faults-v1');
  const raw = rawLines(SAMPLE_FAULTS).map((line) => JSON.parse(line) as RawRecord);

  it('writes README.md with Hugging Face front matter', async () => {
    const { path } = await writeCard(dir);
    assert.equal(path, join(dir, 'README.md'));
    const { front } = splitCard(readFileSync(path, 'utf8'));
    assert.equal(front.license, 'mit', "the lane's dataset_card.license");
    assert.equal(front.license_name, undefined);
    assert.equal(front.pretty_name, 'episode-factory: tool-world-faults-v1');
    assert.deepEqual(front.language, ['en']);
    for (const tag of ['tool-use', 'mcp', 'agents', 'synthetic', 'sft', 'dpo']) assert.ok((front.tags as string[]).includes(tag), tag);
    assert.deepEqual(front.task_categories, ['text-generation']);
    assert.deepEqual(front.size_categories, [raw.length < 1000 ? 'n<1K' : raw.length < 10000 ? '1K<n<10K' : 'larger']);
    assert.deepEqual(front.configs, [{ config_name: 'default', data_files: [{ split: 'train', path: 'episodes.jsonl' }] }]);
  });

  it('carries the statistics computed from the records', async () => {
    const { path } = await writeCard(dir);
    const { body } = splitCard(readFileSync(path, 'utf8'));
    const completed = raw.filter((record) => record.result.task_completed).length;
    assert.ok(body.includes(`| task completion | ${formatRate(wilsonInterval(completed, raw.length))} |`));
    assert.ok(body.includes(`| records | ${raw.length} |`));
    const kinds = [...new Set(raw.flatMap((record) => record.recovery.faults_fired.map((fault) => fault.kind)))].sort();
    assert.ok(kinds.length > 0);
    for (const kind of kinds) {
      const episodes = raw.filter((record) => record.recovery.faults_fired.some((fault) => fault.kind === kind));
      const fired = raw.reduce((sum, record) => sum + record.recovery.faults_fired.filter((fault) => fault.kind === kind).length, 0);
      const still = formatRate(wilsonInterval(episodes.filter((record) => record.result.task_completed).length, episodes.length));
      assert.ok(body.includes(`| \`${kind}\` | ${fired} | ${episodes.length} | ${still} |`), kind);
    }
    for (const task of new Set(raw.map((record) => record.task.id))) {
      const members = raw.filter((record) => record.task.id === task);
      const rate = formatRate(wilsonInterval(members.filter((record) => record.result.task_completed).length, members.length));
      const messages = new Set(members.map((record) => record.messages.find((message) => message.role === 'user')!.content)).size;
      const phrasings = new Set(members.map((record) => record.provenance.lineage.phrasing)).size;
      // Records, then wording (user messages, phrasings, trajectories: each record of the sample is its own episode), then completion.
      const cells = `${members.length} \\| ${messages} \\| ${phrasings} \\| ${members.length} \\| ${rate.replace(/[.[\]]/g, '\\$&')}`;
      assert.match(body, new RegExp(`\\| \`${task}\` \\|[^\\n]*\\| ${cells} \\|`), task);
    }
    for (const variant of new Set(raw.map((record) => record.provenance.lineage.variant))) assert.ok(body.includes(`\`${variant}\``), variant);
  });

  it('states provenance from the records: lane hash, seeds, produced_at, commands', async () => {
    const { path } = await writeCard(dir);
    const { body } = splitCard(readFileSync(path, 'utf8'));
    const lane = raw[0]!.provenance.lineage;
    assert.ok(body.includes(lane.lane_sha256));
    assert.ok(body.includes(raw[0]!.provenance.produced_at));
    const seeds = raw.map((record) => record.provenance.lineage.seed);
    assert.ok(body.includes(`--seeds ${Math.min(...seeds)}..${Math.max(...seeds)}`));
    assert.match(body, /^episode-factory replay /m);
    assert.match(body, /json\.loads\(call\["arguments"\]\)/);
    assert.match(body, /json\.loads\(tool\["input_schema"\]\)/);
  });

  it('derives its limitations from the data', async () => {
    const { path } = await writeCard(dir);
    const { body } = splitCard(readFileSync(path, 'utf8'));
    const limitations = body.slice(body.indexOf('## Limitations'));
    assert.ok(raw.every((record) => record.provenance.actors.filter((actor) => actor.role === 'policy').every((actor) => actor.kind === 'scripted')));
    assert.match(limitations, /No model acted/);
    const failed = raw.filter((record) => !record.result.task_completed).length;
    assert.ok(limitations.includes(`${failed} records did not complete their task`));
    assert.doesNotMatch(limitations, /No faults were injected/);
  });

  it('is byte-identical when regenerated, here or in another directory of the same name', async () => {
    const first = readFileSync((await writeCard(dir)).path);
    const second = readFileSync((await writeCard(dir)).path);
    assert.ok(first.equals(second));
    const elsewhere = copySample(SAMPLE_FAULTS, 'tool-world-faults-v1');
    assert.ok(readFileSync((await writeCard(elsewhere)).path).equals(first));
    const records = CardRecords.of(await readDataset(dir));
    const rendered = renderDatasetCard(datasetCardInput(dir, records, await readCardFacts(dir, records, { laneCards: laneCardReader({ cwd: REPO_ROOT }) })));
    assert.equal(rendered, first.toString('utf8'));
  });

  it('puts a chosen license in the front matter and refuses one that is not an id', async () => {
    const licensed = copySample(SAMPLE_FAULTS, 'licensed');
    const { front, body } = splitCard(readFileSync((await writeCard(licensed, { license: 'cc-by-4.0' })).path, 'utf8'));
    assert.equal(front.license, 'cc-by-4.0');
    assert.equal(front.license_name, undefined);
    assert.doesNotMatch(body, /placeholder/);
    await assert.rejects(writeCard(licensed, { license: 'Not A License' }), (error: unknown) => error instanceof FactoryError && error.code === 'usage');
  });
});

describe('dataset card of the clean sample', () => {
  const dir = copySample(SAMPLE_CLEAN, 'tool-world-v1');

  it('says no faults fired and every task was completed, and has no fault table', async () => {
    const { body } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    const raw = rawLines(SAMPLE_CLEAN).map((line) => JSON.parse(line) as RawRecord);
    assert.ok(raw.every((record) => record.recovery.faults_fired.length === 0 && record.result.task_completed));
    assert.match(body, /No faults were injected/);
    assert.match(body, /Every task was completed/);
    assert.doesNotMatch(body, /### Faults/);
  });

  it('does not claim that no model acted when a policy actor is a model', async () => {
    const modelDir = join(temporaryDirectory(), 'model-played');
    mkdirSync(modelDir);
    const lines = rawLines(SAMPLE_CLEAN).map((line) => {
      const record = JSON.parse(line) as RawRecord;
      for (const actor of record.provenance.actors) if (actor.role === 'policy') Object.assign(actor, { kind: 'model', name: 'qwen3' });
      return JSON.stringify(record);
    });
    writeFileSync(join(modelDir, 'episodes.jsonl'), lines.join('\n') + '\n');
    const { body } = splitCard(readFileSync((await writeCard(modelDir)).path, 'utf8'));
    assert.doesNotMatch(body, /No model acted/);
    assert.match(body, /model:qwen3@/);
  });

  it('lists only the files that are there', async () => {
    const { body: before } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    assert.doesNotMatch(before, /episodes\.parquet/);
    writeFileSync(join(dir, 'episodes.parquet'), '');
    const { body: after } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    assert.match(after, /\| `episodes\.parquet` \|/);
    assert.doesNotMatch(after, /README\.md/);
  });
});

describe('dataset card with split.json', () => {
  const dir = copySample(SAMPLE_CLEAN, 'tool-world-v1');
  const lines = rawLines(SAMPLE_CLEAN);
  const tasks = [...new Set(lines.map((line) => (JSON.parse(line) as RawRecord).task.id))].sort();
  const testTasks = tasks.slice(-1);
  const train = lines.filter((line) => !testTasks.includes((JSON.parse(line) as RawRecord).task.id));
  const test = lines.filter((line) => testTasks.includes((JSON.parse(line) as RawRecord).task.id));

  it('points the configs at the split files and describes them', async () => {
    writeFileSync(join(dir, 'train.jsonl'), train.join('\n') + '\n');
    writeFileSync(join(dir, 'test.jsonl'), test.join('\n') + '\n');
    // Test before train on purpose: the card orders them train first.
    const layout = {
      format: 'episode-factory.split.v1',
      test_fraction: 0.2,
      splits: {
        test: { path: 'test.jsonl', rows: test.length, tasks: testTasks },
        train: { path: 'train.jsonl', rows: train.length, tasks: tasks.filter((task) => !testTasks.includes(task)) },
      },
    };
    writeFileSync(join(dir, 'split.json'), JSON.stringify(layout, null, 2) + '\n');
    const { front, body } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    assert.deepEqual(front.configs, [
      {
        config_name: 'default',
        data_files: [
          { split: 'train', path: 'train.jsonl' },
          { split: 'test', path: 'test.jsonl' },
        ],
      },
    ]);
    assert.ok(body.includes(`| \`train.jsonl\` | ${train.length} |`));
    assert.ok(body.includes(`| \`test.jsonl\` | ${test.length} | the test split: tasks ${testTasks.join(', ')} |`));
    assert.match(body, /test fraction 0\.2/);
    assert.match(body, /data_files=\{"train": "train\.jsonl", "test": "test\.jsonl"\}/);
  });

  it('refuses a split.json that names a missing file or has the wrong format', () => {
    const broken = join(temporaryDirectory(), 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'split.json'), JSON.stringify({ format: 'episode-factory.split.v1', splits: { train: { path: 'train.jsonl', rows: 1 } } }));
    assert.throws(() => readSplitLayout(broken), (error: unknown) => error instanceof FactoryError && error.code === 'dataset_not_found' && /not there/.test(error.message));
    writeFileSync(join(broken, 'split.json'), JSON.stringify({ format: 'something-else', splits: {} }));
    assert.throws(() => readSplitLayout(broken), /format/);
    writeFileSync(join(broken, 'split.json'), '{');
    assert.throws(() => readSplitLayout(broken), /not valid JSON/);
  });

  it('reads no layout when there is no split.json', () => {
    assert.equal(readSplitLayout(temporaryDirectory()), null);
  });
});

describe('seedRanges', () => {
  it('compacts seeds into the ranges generate takes', () => {
    assert.deepEqual(seedRanges([3, 1, 2, 0, 7, 9, 10, 10]), ['0..3', '7', '9..10']);
    assert.deepEqual(seedRanges([]), []);
  });
});

describe('dataset card of an empty dataset', () => {
  it('says there are no records instead of describing what is not there', async () => {
    const dir = join(temporaryDirectory(), 'empty');
    mkdirSync(dir);
    writeFileSync(join(dir, 'episodes.jsonl'), '');
    await assert.rejects(writeCard(dir), /no lane sets the license/, 'no record names a lane, so nothing sets a license');
    const { front, body } = splitCard(readFileSync((await writeCard(dir, { license: 'cc0-1.0' })).path, 'utf8'));
    assert.deepEqual(front.size_categories, ['n<1K']);
    assert.match(body, /No records: `episodes\.jsonl` holds no readable record/);
    assert.doesNotMatch(body, /No model acted|Every task was completed/);
    assert.match(body, /\| task completion \| - \[0\.000, 1\.000\] n=0 \|/);
  });
});

describe('dataset card with episodes the model server cut short', () => {
  it('tells them apart from episodes that did not verify', async () => {
    const dir = copySample(SAMPLE_CLEAN, 'with-infra');
    const row = (id: string, stage: string) => JSON.stringify({ record_id: id, lane: 'tool-world-v1', task: 'find-open-bugs', seed: 0, stage, reason: 'x', record: null });
    writeFileSync(join(dir, 'rejected.jsonl'), [row('a', 'infra'), row('b', 'infra'), row('c', 'replay')].join('\n') + '\n');
    const { body } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    assert.match(body, /1 episode did not verify and 2 episodes were cut short by the model server \(stage `infra`: they say nothing about the model\); they are in `rejected\.jsonl`, not here\./);
    writeFileSync(join(dir, 'rejected.jsonl'), row('a', 'infra') + '\n');
    const { body: only } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    assert.match(only, / 1 episode was cut short by the model server \(stage `infra`: it says nothing about the model\); it is in `rejected\.jsonl`, not here\./);
  });
});

describe('a card fit to publish', () => {
  const noCard = (names: readonly string[]) => new Map(names.map((name) => [name, { card: undefined }]));

  it('is not written without a license, and says so; --draft writes the placeholder', async () => {
    const dir = copySample(SAMPLE_FAULTS, 'unlicensed');
    await assert.rejects(
      writeCard(dir, { laneCards: noCard }),
      (error: unknown) =>
        error instanceof FactoryError && error.code === 'card_not_publishable' && error.exitStatus === 1 && /lane tool-world-faults-v1 sets no dataset_card\.license/.test(error.message) && /--license/.test(error.fix ?? ''),
    );
    assert.ok(!existsSync(join(dir, 'README.md')), 'nothing written');
    const { path, draft } = await writeCard(dir, { laneCards: noCard, draft: true });
    assert.equal(draft.length, 1);
    const { front, body } = splitCard(readFileSync(path, 'utf8'));
    assert.equal(front.license, 'other');
    assert.equal(front.license_name, 'set-before-publishing');
    assert.match(body, /this card is a draft/);
  });

  it('refuses lanes that disagree on the license unless --license settles it', async () => {
    const dir = join(temporaryDirectory(), 'merged');
    mkdirSync(dir);
    writeFileSync(join(dir, 'episodes.jsonl'), [...rawLines(SAMPLE_CLEAN), ...rawLines(SAMPLE_FAULTS)].join('\n') + '\n');
    const licenses: Record<string, string> = { 'tool-world-v1': 'mit', 'tool-world-faults-v1': 'cc-by-4.0' };
    const disagreeing = (names: readonly string[]) => new Map(names.map((name) => [name, { card: { license: licenses[name]!, task_categories: ['text-generation', name === 'tool-world-v1' ? 'question-answering' : 'text-generation'] } }]));
    await assert.rejects(writeCard(dir, { laneCards: disagreeing }), /lanes disagree on the license \(tool-world-faults-v1: cc-by-4\.0, tool-world-v1: mit\)/);
    const { front, body } = splitCard(readFileSync((await writeCard(dir, { laneCards: disagreeing, license: 'cc-by-4.0' })).path, 'utf8'));
    assert.equal(front.license, 'cc-by-4.0');
    assert.deepEqual(front.task_categories, ['text-generation', 'question-answering'], "the lanes' categories, each once");
    assert.match(body, /`cc-by-4\.0`, as --license sets it\./);
  });

  it('names a lane it cannot read', async () => {
    const dir = copySample(SAMPLE_FAULTS, 'moved');
    const missing = (names: readonly string[]) => new Map(names.map((name) => [name, { error: `no lane named "${name}"` }]));
    await assert.rejects(writeCard(dir, { laneCards: missing }), /cannot read lane tool-world-faults-v1 \(no lane named "tool-world-faults-v1"\)/);
  });
});

describe('dataset card with training exports', () => {
  it('lists each current export as a config with features that keep JSON intact', async () => {
    const dir = copySample(SAMPLE_FAULTS, 'exported');
    const sft = await exportConfig(dir, 'sft', { arguments: 'object' });
    const { front, body } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    const configs = front.configs as { config_name: string; data_files: unknown }[];
    assert.deepEqual(configs[1], { config_name: 'sft', data_files: [{ split: 'train', path: 'sft/train.jsonl' }] });
    assert.equal(configs.length, 2, 'the DPO export was not made, so it is no config');
    const info = front.dataset_info as { config_name: string; features: unknown }[];
    assert.deepEqual(info, [
      {
        config_name: 'default',
        features: [
          { name: 'record_id', dtype: 'string' },
          { name: 'family', dtype: 'string' },
          { name: 'schema_version', dtype: 'string' },
          { name: 'world', dtype: 'json' },
          { name: 'task', dtype: 'json' },
          { name: 'tools', list: 'json' },
          { name: 'messages', list: 'json' },
          { name: 'catalog_updates', list: 'json' },
          { name: 'recovery', dtype: 'json' },
          { name: 'result', dtype: 'json' },
          { name: 'provenance', dtype: 'json' },
        ],
      },
      {
        config_name: 'sft',
        features: [
          { name: 'record_id', dtype: 'string' },
          { name: 'messages', list: 'json' },
          { name: 'tools', list: 'json' },
        ],
      },
    ], 'each message and each tool is a JSON value: loaded exactly as written');
    assert.ok(body.includes(`| \`sft\` | train | \`sft/train.jsonl\` | ${sft.splits[0]!.exported} | JSON objects |`));
    assert.match(body, /load_dataset\("path\/to\/exported", "sft"\)/);

    await exportConfig(dir, 'sft', { arguments: 'string' });
    const { body: again } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    assert.ok(again.includes(`| \`sft\` | train | \`sft/train.jsonl\` | ${sft.splits[0]!.exported} | JSON-encoded strings |`));
  });

  it('refuses an export that no longer matches the records, and leaves it out of a draft', async () => {
    const dir = copySample(SAMPLE_FAULTS, 'stale');
    await exportConfig(dir, 'sft', {});
    const lines = rawLines(dir);
    const completed = lines.findIndex((line) => (JSON.parse(line) as RawRecord).result.task_completed);
    writeFileSync(join(dir, 'episodes.jsonl'), lines.filter((_, index) => index !== completed).join('\n') + '\n');
    await assert.rejects(writeCard(dir), (error: unknown) => error instanceof FactoryError && /does not match the records: sft\/train\.jsonl:\d+ names record/.test(error.message) && /export sft/.test(error.fix ?? ''));
    const { path, draft } = await writeCard(dir, { draft: true });
    assert.equal(draft.length, 1);
    const { front } = splitCard(readFileSync(path, 'utf8'));
    assert.equal((front.configs as unknown[]).length, 1);
    assert.deepEqual((front.dataset_info as { config_name: string }[]).map((info) => info.config_name), ['default'], 'the stale export declares no features either');
  });

  it('refuses an SFT export that lacks a completed record, naming it', async () => {
    const dir = copySample(SAMPLE_FAULTS, 'lacking');
    await exportConfig(dir, 'sft', {});
    const rows = readFileSync(join(dir, 'sft', 'train.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
    const dropped = (JSON.parse(rows[1]!) as { record_id: string }).record_id;
    writeFileSync(join(dir, 'sft', 'train.jsonl'), rows.filter((_, index) => index !== 1).join('\n') + '\n');
    await assert.rejects(writeCard(dir), (error: unknown) => error instanceof FactoryError && error.message.includes(`sft/train.jsonl lacks 1 completed record of episodes.jsonl (e.g. ${dropped})`));
  });
});

describe('dataset card of conversations with several calls a turn and a user simulator', () => {
  it('says how several calls and simulated user turns are laid out, and that a trainer masks the simulated ones', async () => {
    const dialogue = copySample(await conversationDataset(DIALOGUE_LANE), 'dialogue');
    await exportConfig(dialogue, 'sft', {});
    await exportConfig(dialogue, 'dpo', {});
    const { body } = splitCard(readFileSync((await writeCard(dialogue)).path, 'utf8'));
    const records = rawLines(dialogue).map((line) => JSON.parse(line) as RawRecord);
    const simulated = records.reduce((sum, record) => sum + record.messages.filter((message) => message.role === 'user').length - 1, 0);
    assert.ok(simulated > 0);
    assert.ok(body.includes(`${simulated} user messages after the opening request (in ${records.length} episodes) are the user simulator's replies, not the model's`), 'the exports say which turns to mask');
    assert.match(body, /train on the assistant turns only \(TRL: `assistant_only_loss=True`\)/);
    assert.match(body, /`chosen` and `rejected` end before the simulator's next turn/);
    assert.ok(body.includes(`| simulated user turns | ${simulated} replies in ${records.length} episodes (user messages after the first), from scripted:scripted-user@1 |`));
    assert.match(body, /user simulators `scripted:scripted-user@1`/);
    assert.match(body, /\*\*Simulated users\*\*: \d+ user turns after the opening request come from `scripted:scripted-user@1`, not from people/);
    assert.match(body, /a later one is the \*\*user simulator's\*\* reply to the agent/, 'the schema says it for every dataset');

    const parallel = copySample(await conversationDataset(PARALLEL_LANE), 'parallel');
    await exportConfig(parallel, 'sft', { arguments: 'object' });
    const { body: calls } = splitCard(readFileSync((await writeCard(parallel)).path, 'utf8'));
    const turns = rawLines(parallel)
      .map((line) => JSON.parse(line) as RawRecord)
      .flatMap((record) => record.messages.filter((message) => (message.tool_calls?.length ?? 0) > 1));
    assert.ok(calls.includes(`${turns.length} assistant turns make several tool calls at once: they are one \`tool_calls\` list, followed by one \`tool\` message per call, matched by \`tool_call_id\``));
    assert.doesNotMatch(calls, /user simulator's replies|Simulated users/, 'nothing about a simulator the records do not have');
    assert.match(calls, /every call of the turn, \*\*possibly several\*\*/);
  });

  it('says nothing of either where the records have neither', async () => {
    const dir = copySample(SAMPLE_FAULTS, 'plain');
    await exportConfig(dir, 'sft', {});
    const { body } = splitCard(readFileSync((await writeCard(dir)).path, 'utf8'));
    assert.doesNotMatch(body, /make several tool calls at once|user simulator's replies|Simulated users/);
    assert.match(body, /\| tool calls per assistant turn \| 1\.00 mean over \d+ turns with calls; none with several \|/);
    assert.match(body, /\| simulated user turns \| none \(no user simulator\) \|/);
  });
});
