// Owns filling one tool's input schema with arguments a task can state: a
// property that names a record (by its name, or by its description naming the
// record's field) is bound to a record drawn from a collection of the initial
// state through a lane parameter ({"from": …}), so the task instantiates on
// every seed; an enum takes one of its values; anything else gets a fresh
// value drawn per seed from a fixed list (parameter-pool.ts). A database
// tool's `table` is the collection's own name, and its column maps are a row
// by the table's identity (`conditions`) and values column by column (`data`).
// Every value is also a mention: the words the instruction uses to state it.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import { isJsonObject } from '../core/json-value.js';
import { substream, type Random } from '../core/random.js';
import { isTemplateField } from '../core/template.js';
import { freshOfKind, STRING_KINDS, type FreshKind, type Mention, type ParameterPool } from './parameter-pool.js';
import { singular, words, type Collection } from './state-survey.js';

export { ParameterPool, type Binding, type Mention } from './parameter-pool.js';

export interface FilledCall {
  call: string;
  arguments: JsonObject;
  mentions: Mention[];
}

/** The form a string schema asks for: by its format, or the first form whose every draw matches its pattern. */
function stringKind(name: string, schema: JsonObject, shape: (value: string) => string[] = (value) => [value]): FreshKind {
  if (schema.format === 'date-time') return 'date-time';
  if (schema.format === 'date') return 'date';
  if (schema.format === 'email') return 'email';
  const preferred: FreshKind = TEXT_LIKE.test(name) ? 'text' : TAG_LIKE.test(name) ? 'tag' : 'name';
  if (typeof schema.pattern !== 'string') return preferred;
  let pattern: RegExp;
  try {
    pattern = new RegExp(schema.pattern, 'u');
  } catch {
    throw new Unfillable(`property "${name}" has a pattern this engine cannot read`);
  }
  // Its own stream: trying forms must not move the candidate's draws.
  const probe = substream(schema.pattern, 'synthesis-pattern');
  for (const kind of [preferred, ...STRING_KINDS.filter((other) => other !== preferred)]) {
    if (Array.from({ length: 8 }, () => freshOfKind(kind, probe)).every((value) => shape(value).some((shaped) => pattern.test(shaped)))) return kind;
  }
  throw new Unfillable(`property "${name}" must match ${schema.pattern}, which no fresh value the sampler makes does`);
}

export interface FillContext {
  random: Random;
  pool: ParameterPool;
  collections: readonly Collection[];
  /** The collection the call is about, when it names a record. */
  target?: Collection;
  /** Where a server world shows its sandbox ("/repo"); path arguments are written under it. */
  shownRoot?: string;
  /** The tool makes records: the names it is given are new ones, not a record's. */
  creating?: boolean;
  /** The tool works on folders (list_directory, directory_tree): a path it takes is the folder a record is in. */
  folders?: boolean;
  /** The tool is told the vault by name: its paths are relative to the vault. */
  relative?: boolean;
  /** Filling a read's filter: it lists records of a kind. */
  filtering?: boolean;
}

/** Fill a tool's arguments, or say why it cannot be filled. */
export function fillArguments(tool: { name: string; inputSchema: JsonObject; annotations?: { readOnlyHint?: boolean } }, context: FillContext): FilledCall | { problem: string } {
  const mentions: Mention[] = [];
  try {
    // A read needs no option to do something; options would only be values the question must state.
    const creating = CREATING.test(tool.name);
    const folders = FOLDER_TOOL.test(tool.name);
    const value = fillObject(tool.inputSchema, { ...context, creating, folders }, mentions, tool.annotations?.readOnlyHint === true ? 'read' : 'top');
    return { call: tool.name, arguments: value, mentions };
  } catch (error) {
    if (error instanceof Unfillable) return { problem: error.message };
    throw error;
  }
}

class Unfillable extends Error {}

/** How well a property names a collection's field: 0 (not at all) to 3 (by its very name). */
export function propertyScore(property: string, description: string, collection: Collection, field: string): number {
  const plain = normal(property);
  const one = normal(singular(property));
  const name = normal(field);
  if (plain === name || one === name) return 3;
  const noun = normal(singular(collection.noun));
  // An argument called after the record itself ("table", "project") takes the record's name.
  if ((plain === noun || one === noun) && field === collection.naming[0]) return 3;
  // "event_id" names an event by its id.
  if (plain === noun + name) return 3;
  if (name.length >= 3 && (plain.endsWith(name) || one.endsWith(name)) && (plain.startsWith(noun) || plain.length - name.length <= 6)) return 2;
  const text = description.toLowerCase();
  if (text.includes(`${words(field)} of the ${singular(collection.noun)}`) || text.includes(`${singular(collection.noun)} ${words(field)}`)) return 2;
  if (words(field) === 'name' && /\bnames? of (the |an? )?(entit|node|item|record)/.test(text)) return 1;
  return 0;
}

function singularName(name: string): string {
  return /ies$/.test(name) ? name.replace(/ies$/, 'y') : /[^s]s$/.test(name) ? name.slice(0, -1) : name;
}

function normal(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Tool names that make records ("create_entities", "new-note", "insert_row"): their names are fresh, not a record's. */
const CREATING = /^(create|new|insert|make)[-_]|[-_](create|new|insert)$/i;
/** Tools that work on folders (list_directory, directory_tree, search_files): the path they take is a folder. */
const FOLDER_TOOL = /director|folder|[-_]tree$|^search[-_]files$/i;
const PAGE_SIZE = /^(limit|per_page|page_size|max_results)$/i;
const FOLDER_ARGUMENT = /^(folder|dir|directory)$/i;
/** The field of a file record that names the folder it is in. */
const FOLDER_FIELD = 'dir';
/** An argument that names a database table: its value is the collection's own name, not one of its records. */
export const TABLE_LIKE = /^(table|table_?name)$/i;
/** A column map that picks rows (`conditions`, `where`); any other column map (`data`) holds the values to write. */
const CONDITION_LIKE = /^(conditions?|where|filters?|criteria)$/i;
/** Text a tool looks for and replaces, which must be in the record as it is. */
const MATCHED_TEXT = /^(old_?(text|string|str|content)|search_?text|find_?text)$/i;
const SEARCH_LIKE = /^(query|search|pattern|term|keyword|keywords|search_term)$/i;
export const PATH_LIKE = /^(path|paths|file|files|filename|filepath|file_path|source|src|note|notepath)$/i;
/** Tags take letters and slashes only ("project/docs"), in the servers measured. */
const TAG_LIKE = /^(old|new)?tags?$/i;
const TEXT_LIKE = /(content|contents|text|body|description|observation|comment|message|note)s?$/i;

function fillObject(schema: JsonObject, context: FillContext, mentions: Mention[], level: 'top' | 'read' | 'inner'): JsonObject {
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const out: JsonObject = {};
  const names = Object.keys(properties).filter((name) => required.includes(name));
  // An argument that says where the repository or vault is (git's optional `path`, obsidian's `vault`) is always given: the server has no other way to know.
  const rooted = Object.keys(properties).filter((name) => context.shownRoot !== undefined && isRootArgument(name, properties[name]));
  names.push(...rooted.filter((name) => !names.includes(name)));
  if (rooted.some((name) => namesTheRoot(properties[name] as JsonObject))) context = { ...context, relative: true };
  // The folder a note is in, when the record has one (read-note's optional `folder`): without it the server looks at the top.
  const folder = Object.keys(properties).filter((name) => !required.includes(name) && !rooted.includes(name) && FOLDER_ARGUMENT.test(name) && context.target?.fields.includes(FOLDER_FIELD) === true && !context.creating);
  names.push(...folder);
  const optional = Object.keys(properties).filter((name) => !required.includes(name) && !rooted.includes(name) && !folder.includes(name) && isJsonObject(properties[name]));
  // A tool whose only required argument names the record (update_issue) does nothing without one of its options.
  const needsMore = level === 'read' ? false : level === 'top' ? names.filter((name) => !rooted.includes(name)).every((name) => bindingFor(name, properties[name] as JsonObject, context) !== undefined) : names.length === 0;
  // Inside a read's filter, the kind to list by (a status, a priority), not a record (which makes it a question about that record).
  const kinds = context.filtering ? optional.filter((name) => hasEnum(properties[name] as JsonObject)) : [];
  if (needsMore && optional.length > 0) names.push(context.random.pick(kinds.length > 0 ? kinds : optional));
  // A read that lists records may filter them by a kind (list_issues' state): half the time it does, for a question about that kind.
  const filters = level === 'read' && !context.target ? optional.filter((name) => hasEnum(properties[name] as JsonObject)) : [];
  let pageSize: [string, number] | undefined;
  if (filters.length > 0 && context.random.chance(0.5)) {
    names.push(context.random.pick(filters));
    context = { ...context, filtering: true };
    // As many on one page as the tool allows: a list question needs every record of the kind in one answer.
    const limit = optional.find((name) => PAGE_SIZE.test(name) && typeof (properties[name] as JsonObject).maximum === 'number');
    if (limit) pageSize = [limit, (properties[limit] as JsonObject).maximum as number];
  }
  if (pageSize) out[pageSize[0]] = pageSize[1];
  // A table and its column maps (a database's insert, update, delete, read): rows of the target table, named by its identity.
  // A collection whose records are tables themselves (`/tables`, each with its name) is named by a record, as any other.
  const table = level !== 'inner' && context.target && normal(singular(context.target.noun)) !== 'table' ? Object.keys(properties).find((name) => TABLE_LIKE.test(name) && isJsonObject(properties[name]) && typeOf(properties[name] as JsonObject) === 'string') : undefined;
  // A database tool with no table to act on can only fail ("no such table", an empty column list).
  if (!table && level !== 'inner' && !context.target && Object.keys(properties).some((name) => TABLE_LIKE.test(name) && required.includes(name))) throw new Unfillable('it names a table, and no collection of the state is one');
  if (table) {
    out[table] = context.target!.noun;
    mentions.push({ property: words(table), text: context.target!.noun });
    for (const name of Object.keys(properties).filter((key) => isColumnMap(properties[key]))) {
      if (CONDITION_LIKE.test(name)) out[name] = rowOf(context, mentions);
      else if (required.includes(name)) out[name] = columnValues(context, mentions);
    }
    for (const name of names.filter((key) => !(key in out))) {
      const property = properties[name];
      if (!isJsonObject(property)) throw new Unfillable(`property "${name}" has no schema`);
      out[name] = fillValue(name, property, context, mentions);
    }
    return out;
  }
  for (const name of names) {
    const property = properties[name];
    if (!isJsonObject(property)) throw new Unfillable(`property "${name}" has no schema`);
    if (rooted.includes(name)) {
      // "Name of the vault" is the sandbox's own name; a path to the repository is where it is shown.
      out[name] = namesTheRoot(properties[name] as JsonObject) ? context.shownRoot!.split('/').pop()! : context.shownRoot!;
      continue;
    }
    if (folder.includes(name)) {
      const binding = context.pool.bind(context.target!, FOLDER_FIELD, false);
      out[name] = `{{${binding.param}.${FOLDER_FIELD}}}`;
      mentions.push({ property: words(name), text: out[name] as string });
      continue;
    }
    out[name] = fillValue(name, property, context, mentions);
  }
  return out;
}

/** An enum, a list of one, or an object (a `filter`) holding one. */
function hasEnum(schema: JsonObject): boolean {
  if (Array.isArray(schema.enum)) return true;
  if (isJsonObject(schema.items) && Array.isArray(schema.items.enum)) return true;
  return isJsonObject(schema.properties) && Object.values(schema.properties).some((property) => isJsonObject(property) && (Array.isArray(property.enum) || (isJsonObject(property.items) && Array.isArray(property.items.enum))));
}

/** An object of column to value: no properties of its own, any column allowed. */
export function isColumnMap(schema: JsonValue | undefined): boolean {
  if (!isJsonObject(schema) || typeOf(schema) !== 'object') return false;
  const fixed = isJsonObject(schema.properties) ? Object.keys(schema.properties).length : 0;
  return fixed === 0 && (schema.additionalProperties === undefined || schema.additionalProperties === true || isJsonObject(schema.additionalProperties));
}

/** The row a call acts on, by the table's first identity: {"id": "{{target.id}}"}. */
function rowOf(context: FillContext, mentions: Mention[]): JsonObject {
  const table = context.target!;
  const identity = table.naming[0]!;
  const binding = context.pool.bind(table, identity, false);
  const expression = `{{${binding.param}.${identity}}}`;
  mentions.push({ property: `${singular(table.noun)} ${words(identity)}`, text: expression });
  return { [identity]: expression };
}

/** A column whose values are a handful (a status, a 0 or 1 flag) takes one of them; more than this is free text or numbers. */
const FEW_VALUES = 4;

/**
 * The values a row is written with: every column (but the identity the table assigns) for a new row, one column
 * for a change. A column that names another table's row (`customer_id`) takes a record of it; one with a handful of
 * values takes one of them; the rest fresh values of the column's type.
 */
function columnValues(context: FillContext, mentions: Mention[]): JsonObject {
  const table = context.target!;
  const assigned = table.naming[0]!;
  const columns = table.fields.filter((field) => field !== assigned && table.items.every((item) => item[field] !== null));
  if (columns.length === 0) throw new Unfillable(`the ${table.noun} table has no column to write`);
  const chosen = context.creating ? columns : [context.random.pick(columns)];
  const out: JsonObject = {};
  for (const column of chosen) {
    const values = [...new Set(table.items.map((item) => item[column]))].sort((left, right) => String(left).localeCompare(String(right)));
    const sample = values[0];
    const other = foreignTable(column, context.collections);
    let value: JsonValue;
    if (other) {
      const binding = context.pool.bind(other, other.naming[0]!, false);
      value = `{{${binding.param}.${other.naming[0]!}}}`;
    } else if (values.length <= FEW_VALUES && values.length < table.items.length) {
      value = context.pool.existingValue(column, values as JsonValue[]);
    } else if (typeof sample === 'number') {
      value = context.pool.freshValue(column, 'integer');
    } else {
      const kind: FreshKind = /email/i.test(column) ? 'email' : typeof sample === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(sample) ? 'date' : TEXT_LIKE.test(column) ? 'text' : 'name';
      value = context.pool.freshValue(column, kind);
    }
    out[column] = value;
    mentions.push({ property: words(column), text: value as string });
  }
  return out;
}

/** The table a column like `customer_id` points at: the collection named after it, by its identity. */
function foreignTable(column: string, collections: readonly Collection[]): Collection | undefined {
  const match = /^(.+)_id$/i.exec(column);
  if (!match) return undefined;
  const wanted = normal(match[1]!);
  return collections.find((collection) => normal(singular(collection.noun)) === wanted && collection.naming[0] === 'id');
}

function namesTheRoot(schema: JsonObject): boolean {
  return /\bname of\b/i.test(String(schema.description ?? ''));
}

function isRootArgument(name: string, schema: JsonValue | undefined): boolean {
  if (!isJsonObject(schema) || typeOf(schema) !== 'string') return false;
  const description = typeof schema.description === 'string' ? schema.description : '';
  return /^(path|repo|repository|root|cwd|directory|dir|vault)$/i.test(name) && /\b(repository|working dir|vault|root)\b/i.test(description) && !/\b(relative to|within|inside|in) (the )?(vault|repository)\b|\bsubfolder\b/i.test(description);
}

function bindingFor(name: string, schema: JsonObject, context: FillContext): { collection: Collection; field: string } | undefined {
  // A search term finds a record by its name: a fresh word would find nothing, and nothing found is no fact to ask about.
  if (SEARCH_LIKE.test(name) && !context.creating) {
    const collection = context.target ?? context.collections.find((candidate) => candidate.naming.includes('name'));
    if (collection?.naming.includes('name') && collection.items.every((item) => typeof item.name === 'string')) return { collection, field: 'name' };
  }
  if (context.target && !context.creating) {
    if (context.folders && PATH_LIKE.test(name) && context.target.fields.includes(FOLDER_FIELD)) return { collection: context.target, field: FOLDER_FIELD };
    const found = bestField(name, schema, context.target, 1);
    if (found) return { collection: context.target, field: found };
    if (PATH_LIKE.test(name) && context.target.naming.includes('path')) return { collection: context.target, field: 'path' };
    // Text an edit must find exactly (edit_file's `oldText`): the record's first line, which every seed's file has.
    if (MATCHED_TEXT.test(name) || /\bmust match exactly\b/i.test(String(schema.description ?? ''))) {
      const line = firstLineField(context.target);
      if (line) return { collection: context.target, field: line };
    }
    // A value to take out of one of the record's lists (an observation to delete): its first entry.
    const list = listField(name, context.target);
    if (list) return { collection: context.target, field: `${list}.0` };
  }
  // A tool that makes a record names it afresh; its other arguments may still name records it refers to.
  if (context.creating && /^(name|names|path|key|id|title|filename)$/i.test(name)) return undefined;
  // An argument that names a record of another collection by its very name (a project key, a customer id, an email to notify).
  for (const collection of context.collections) {
    // A tool that makes a record may still name one of the same collection (create_task's project is a project's key).
    if (collection === context.target && !context.creating) continue;
    if (context.folders && PATH_LIKE.test(name) && collection.fields.includes(FOLDER_FIELD) && collection.naming.includes('path')) return { collection, field: FOLDER_FIELD };
    const found = bestField(name, schema, collection, 3) ?? (schema.format === 'email' && collection.naming.includes('email') ? 'email' : undefined);
    if (found) return { collection, field: found };
  }
  return undefined;
}

/** The field that holds a probed file's first line (`lines.0.text`), when every record has one that is not empty. */
function firstLineField(collection: Collection): string | undefined {
  const hasOne = (item: JsonObject) => {
    const line = Array.isArray(item.lines) ? item.lines[0] : undefined;
    return isJsonObject(line) && typeof line.text === 'string' && line.text.trim() !== '';
  };
  return collection.items.every(hasOne) ? 'lines.0.text' : undefined;
}

/** The record's list of strings an argument takes an entry of, at its top level or one object down (a note's `front_matter.tags`). */
function listField(name: string, collection: Collection): string | undefined {
  const wanted = normal(singular(name));
  const first = collection.items[0]!;
  const top = Object.keys(first).find((field) => Array.isArray(first[field]) && normal(singular(field)) === wanted && (first[field] as JsonValue[]).every((entry) => typeof entry === 'string'));
  if (top) return top;
  // One object down, only where every record has a first entry: a record without one gives its seed no value to name.
  for (const field of Object.keys(first).filter((key) => isJsonObject(first[key]))) {
    const key = Object.keys(first[field] as JsonObject).find((inner) => normal(singular(inner)) === wanted);
    if (key === undefined || !isTemplateField(field) || !isTemplateField(key)) continue;
    const everyHasOne = collection.items.every((item) => {
      const inner = isJsonObject(item[field]) ? (item[field] as JsonObject)[key] : undefined;
      return Array.isArray(inner) && typeof inner[0] === 'string' && inner.every((entry) => typeof entry === 'string');
    });
    if (everyHasOne) return `${field}.${key}`;
  }
  return undefined;
}

function bestField(name: string, schema: JsonObject, collection: Collection, least: number): string | undefined {
  const description = typeof schema.description === 'string' ? schema.description : '';
  let best: { field: string; score: number } | undefined;
  for (const field of collection.naming) {
    const score = propertyScore(name, description, collection, field);
    if (score >= least && (!best || score > best.score)) best = { field, score };
  }
  return best?.field;
}

function fillValue(name: string, given: JsonObject, context: FillContext, mentions: Mention[]): JsonValue {
  const schema = chosenOption(given);
  const type = typeOf(schema);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const value = context.random.pick(schema.enum as JsonValue[]);
    mentions.push({ property: words(name), text: String(value) });
    return value;
  }
  if (type === 'object') return fillObject(schema, context, mentions, 'inner');
  if (type === 'array') {
    const items = isJsonObject(schema.items) ? schema.items : { type: 'string' };
    // One item of a list argument is stated as one thing: "name X", not "names X".
    return [fillValue(singularName(name), items, context, mentions)];
  }
  if (type === 'boolean') {
    const value = context.random.chance(0.5);
    mentions.push({ property: words(name), text: String(value) });
    return value;
  }
  if (type !== 'string' && type !== 'integer' && type !== 'number') throw new Unfillable(`property "${name}" is of a type the sampler does not fill (${type ?? 'none'})`);
  const bound = bindingFor(name, schema, context);
  if (bound && (type === 'string' || typeof bound.collection.items[0]![bound.field] === 'number')) {
    const first = context.pool.bindings.find((binding) => binding.collection.pointer === bound.collection.pointer);
    // Within one call a second argument naming a record by the same field (a relation's from and to) names
    // another one; by another field (an entity's name and one of its observations) it is the same record.
    const distinct = first !== undefined && mentions.some((mention) => mention.text.includes(`{{${first.param}.${bound.field}}}`));
    const binding = context.pool.bind(bound.collection, bound.field, distinct);
    const expression = `{{${binding.param}.${bound.field}}}`;
    const relative = context.relative === true || /\brelative\b/i.test(typeof schema.description === 'string' ? schema.description : '');
    const shown = type === 'string' && (bound.field === 'path' || bound.field === FOLDER_FIELD) && context.shownRoot && !relative ? `${context.shownRoot}/${expression}` : expression;
    mentions.push({ property: words(name), text: shown });
    return shown;
  }
  if (type === 'integer' || type === 'number') {
    const step = typeof schema.multipleOf === 'number' && Number.isInteger(schema.multipleOf) && schema.multipleOf > 0 ? schema.multipleOf : 1;
    const expression = context.pool.freshValue(name, 'integer', bounds(schema), step);
    mentions.push({ property: words(name), text: expression });
    return expression;
  }
  const relative = context.relative === true || /\brelative\b/i.test(typeof schema.description === 'string' ? schema.description : '');
  const suffix = context.folders ? '' : '.md';
  const pathLike = PATH_LIKE.test(name) || /path|filename|destination|target/i.test(name);
  // A new path is a file at the top of the sandbox; a pattern that wants paths absolute gets the leading slash.
  const prefixes = context.shownRoot && !relative ? [`${context.shownRoot}/`] : ['', '/'];
  const kind = stringKind(name, schema, pathLike ? (value) => prefixes.map((prefix) => `${prefix}${value}${suffix}`) : undefined);
  const expression = context.pool.freshValue(name, kind);
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const prefix = prefixes.find((candidate) => !pattern || pattern.test(`${candidate}amber-falcon${suffix}`)) ?? prefixes[0]!;
  const value = pathLike && kind === 'name' ? `${prefix}${expression}${suffix}` : expression;
  mentions.push({ property: words(name), text: value });
  return value;
}

/** The fresh integers a schema allows: within its bounds, away from 0 and 1 (which match too much by chance). */
function bounds(schema: JsonObject): [number, number] {
  const low = typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : typeof schema.exclusiveMinimum === 'number' ? Math.floor(schema.exclusiveMinimum) + 1 : 11;
  const high = typeof schema.maximum === 'number' ? Math.floor(schema.maximum) : typeof schema.exclusiveMaximum === 'number' ? Math.ceil(schema.exclusiveMaximum) - 1 : 97;
  const from = Math.max(low, Math.min(11, high));
  const to = Math.max(from, Math.min(high, from + 86));
  return [from, to];
}

/** A schema of options (a pattern or null) is filled as its first option that is not null, with the outer description. */
function chosenOption(schema: JsonObject): JsonObject {
  for (const key of ['anyOf', 'oneOf']) {
    const options = schema[key];
    if (!Array.isArray(options) || schema.type !== undefined) continue;
    const option = options.find((entry) => isJsonObject(entry) && entry.type !== 'null');
    if (isJsonObject(option)) return { ...option, ...(schema.description !== undefined ? { description: schema.description } : {}) };
  }
  return schema;
}

function typeOf(schema: JsonObject): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return (schema.type as string[]).find((type) => type !== 'null');
  for (const key of ['anyOf', 'oneOf']) {
    const options = schema[key];
    if (Array.isArray(options)) {
      for (const option of options) if (isJsonObject(option) && typeof option.type === 'string' && option.type !== 'null') return option.type;
    }
  }
  if (schema.enum) return 'string';
  if (isJsonObject(schema.properties)) return 'object';
  return undefined;
}
