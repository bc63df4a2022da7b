// Owns the record's columnar shape: one explicit Arrow schema for every
// episode record (the card's nested columns as structs and lists), and the
// mapping of a record onto it. Free-form JSON (schemas, tool-call arguments,
// extra actor details) is a JSON-encoded string, so the column types never
// depend on what a particular episode contained.

import { Bool, Field, Int32, Int64, List, Schema, Struct, Utf8, type DataType } from 'apache-arrow';
import type { EpisodeRecord, RecordMessage, RecordTool } from './episode-record.js';

const text = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
const integer = (name: string, nullable = false) => new Field(name, new Int32(), nullable);
const flag = (name: string) => new Field(name, new Bool(), false);
const listOf = (name: string, item: DataType, nullable = false) => new Field(name, new List(new Field('item', item, false)), nullable);
const struct = (name: string, fields: Field[], nullable = false) => new Field(name, new Struct(fields), nullable);

const TOOL = new Struct([text('name'), text('description'), text('input_schema'), text('output_schema', true), text('annotations', true)]);
const TOOL_CALL = new Struct([text('id'), text('name'), text('arguments')]);
const FIELD_ERROR = new Struct([text('path'), text('reason')]);
const TOOL_RESULT = [flag('ok'), text('error', true), text('kind', true), listOf('errors', FIELD_ERROR, true), integer('code', true)];
const MESSAGE = new Struct([
  text('role'),
  text('content'),
  listOf('tool_calls', TOOL_CALL, true),
  struct('malformed_tool_call', [text('reason')], true),
  text('tool_call_id', true),
  text('name', true),
  struct('tool_result', TOOL_RESULT, true),
]);
const CATALOG_UPDATE = new Struct([integer('before_message'), listOf('removed', new Utf8()), listOf('added', TOOL)]);
const FAULT = new Struct([text('kind'), text('fault'), integer('step'), text('tool', true), integer('call', true), text('detail')]);
/** A third-party server's child misbehaving; null for scripted worlds, which have no child. */
const SERVER_FAULT = new Struct([text('kind'), integer('step'), text('detail')]);
const PREDICATE = new Struct([text('id'), flag('passed'), text('detail', true)]);
const CLAIM = new Struct([text('tool'), text('sentence'), flag('supported')]);
/** Every actor has these four; anything else it says about itself is in `details`, JSON-encoded. */
const ACTOR = new Struct([text('role'), text('kind'), text('name'), text('version'), text('details')]);

export const RECORD_FIELDS: Field[] = [
  text('record_id'),
  text('family'),
  text('schema_version'),
  struct('world', [text('name'), text('version')]),
  struct('task', [text('id'), text('title'), listOf('tags', new Utf8())]),
  listOf('tools', TOOL),
  listOf('messages', MESSAGE),
  listOf('catalog_updates', CATALOG_UPDATE),
  struct('recovery', [integer('error_turns'), flag('recovered'), listOf('faults_fired', FAULT), listOf('server_faults', SERVER_FAULT, true)]),
  struct('result', [
    flag('task_completed'),
    text('verified_by'),
    text('outcome'),
    text('outcome_detail', true),
    listOf('predicates', PREDICATE),
    struct('evidence', [listOf('claims', CLAIM), integer('unsupported')]),
    integer('steps'),
    integer('tool_calls'),
    integer('rejected_calls'),
    text('initial_snapshot_sha256'),
    text('final_snapshot_sha256'),
  ]),
  struct('provenance', [
    text('produced_at'),
    listOf('actors', ACTOR),
    struct('lineage', [
      text('lane'),
      text('lane_sha256'),
      text('task'),
      text('variant'),
      new Field('seed', new Int64(), false),
      // A GRPO group's rollouts; null for a record that is its (task, seed, agent)'s only one.
      text('group_id', true),
      new Field('rollout', new Int64(), true),
      text('phrasing', true),
      text('operation'),
      text('source_record_id', true),
      text('generate_command'),
      text('replay_command'),
      text('factory_version'),
    ]),
  ]),
];

/**
 * The Hugging Face `datasets` feature of an Arrow type, as `datasets` itself
 * derives it (Features.from_arrow_schema): what the `huggingface` schema
 * metadata carries, so a loader and the Hub's viewer read the declared
 * features instead of inferring them file by file.
 */
function huggingfaceFeature(type: DataType): unknown {
  if (type instanceof Utf8) return { dtype: 'string', _type: 'Value' };
  if (type instanceof Int32) return { dtype: 'int32', _type: 'Value' };
  if (type instanceof Int64) return { dtype: 'int64', _type: 'Value' };
  if (type instanceof Bool) return { dtype: 'bool', _type: 'Value' };
  if (type instanceof List) return { feature: huggingfaceFeature(type.children[0]!.type), _type: 'List' };
  if (type instanceof Struct) return Object.fromEntries(type.children.map((child) => [child.name, huggingfaceFeature(child.type)]));
  throw new Error(`no Hugging Face feature for the Arrow type ${String(type)}`);
}

/** The `huggingface` schema metadata: the features of every column, in the form `datasets` writes it. */
export const HUGGINGFACE_METADATA = JSON.stringify({ info: { features: Object.fromEntries(RECORD_FIELDS.map((field) => [field.name, huggingfaceFeature(field.type)])) } });

export const RECORD_ARROW_SCHEMA = new Schema(
  RECORD_FIELDS,
  new Map([
    ['episode-factory.record', 'episode-record.v1'],
    ['huggingface', HUGGINGFACE_METADATA],
  ]),
);
export const RECORD_STRUCT = new Struct(RECORD_FIELDS);

function toolRow(tool: RecordTool) {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: tool.input_schema,
    output_schema: tool.output_schema ?? null,
    annotations: tool.annotations ?? null,
  };
}

function messageRow(message: RecordMessage) {
  const row = {
    role: message.role,
    content: message.content,
    tool_calls: null as unknown,
    malformed_tool_call: null as unknown,
    tool_call_id: null as string | null,
    name: null as string | null,
    tool_result: null as unknown,
  };
  if (message.role === 'assistant') {
    row.tool_calls = message.tool_calls ?? null;
    row.malformed_tool_call = message.malformed_tool_call ?? null;
  } else if (message.role === 'tool') {
    row.tool_call_id = message.tool_call_id;
    row.name = message.name;
    const result = message.tool_result;
    row.tool_result = { ok: result.ok, error: result.error ?? null, kind: result.kind ?? null, errors: result.errors ?? null, code: result.code ?? null };
  }
  return row;
}

/** The record as one row of RECORD_ARROW_SCHEMA: every optional field present (null when absent), the seed as an Int64. */
export function recordToRow(record: EpisodeRecord) {
  return {
    record_id: record.record_id,
    family: record.family,
    schema_version: record.schema_version,
    world: record.world,
    task: record.task,
    tools: record.tools.map(toolRow),
    messages: record.messages.map(messageRow),
    catalog_updates: record.catalog_updates.map((update) => ({ ...update, added: update.added.map(toolRow) })),
    recovery: {
      error_turns: record.recovery.error_turns,
      recovered: record.recovery.recovered,
      faults_fired: record.recovery.faults_fired.map((fault) => ({ kind: fault.kind, fault: fault.fault, step: fault.step, tool: fault.tool, call: fault.call, detail: fault.detail })),
      server_faults: record.recovery.server_faults?.map((fault) => ({ kind: fault.kind, step: fault.step, detail: fault.detail })) ?? null,
    },
    result: {
      ...record.result,
      outcome_detail: record.result.outcome_detail ?? null,
      predicates: record.result.predicates.map((predicate) => ({ id: predicate.id, passed: predicate.passed, detail: predicate.detail ?? null })),
    },
    provenance: {
      produced_at: record.provenance.produced_at,
      actors: record.provenance.actors.map((actor) => {
        const { role, kind, name, version, ...details } = actor as Record<string, unknown>;
        return { role, kind, name, version, details: JSON.stringify(details) };
      }),
      lineage: {
        ...record.provenance.lineage,
        seed: BigInt(record.provenance.lineage.seed),
        group_id: record.provenance.lineage.group_id ?? null,
        rollout: record.provenance.lineage.rollout === undefined ? null : BigInt(record.provenance.lineage.rollout),
        phrasing: record.provenance.lineage.phrasing ?? null,
      },
    },
  };
}
