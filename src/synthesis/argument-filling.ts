// Owns filling one tool's input schema with arguments a task can state: a
// property that names a record (by its name, or by its description naming the
// record's field) is bound to a record drawn from a collection of the initial
// state through a lane parameter ({"from": …}), so the task instantiates on
// every seed; an enum takes one of its values; anything else gets a fresh
// value drawn per seed from a fixed list. Every value is also a mention: the
// words the instruction uses to state it.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import { isJsonObject } from '../core/json-value.js';
import { substream, type Random } from '../core/random.js';
import type { ParamSpec } from '../lanes/lane.js';
import { singular, words, type Collection } from './state-survey.js';

/** What the instruction says for one argument: "name {{target.name}}". */
export interface Mention {
  property: string;
  /** A template or a literal, as the instruction states it. */
  text: string;
}

/** A parameter bound to a record: which collection and which field names it. */
export interface Binding {
  param: string;
  collection: Collection;
  field: string;
  /** Which independent part of the candidate drew it. */
  scope: number;
}

export interface FilledCall {
  call: string;
  arguments: JsonObject;
  mentions: Mention[];
}

/** The parameters a candidate's calls share: bindings to records and fresh values. */
export class ParameterPool {
  readonly params: Record<string, ParamSpec> = {};
  readonly bindings: Binding[] = [];
  readonly fresh = new Set<string>();
  private scope = 0;

  constructor(private readonly random: Random) {}

  /** A record of `collection` named by `field`: the first binding of a collection is reused, so "the entity" stays one entity. */
  bind(collection: Collection, field: string, distinct: boolean): Binding {
    const all = this.bindings.filter((binding) => binding.collection.pointer === collection.pointer);
    const mine = all.filter((binding) => binding.scope === this.scope);
    if (mine.length > 0 && !distinct) return { ...mine[0]!, field };
    const param = all.length === 0 ? 'target' + (this.bindings.length === 0 ? '' : this.bindings.length + 1) : `${all[0]!.param}_other${all.length}`;
    const identity = collection.naming[0]!;
    const where: Record<string, JsonValue | { not: JsonValue } | { in: JsonValue[] }> = {};
    // Another record than those already named: one `not`, or the records drawn so far left out through the kinds below.
    if (all.length > 0) where[identity] = { not: `{{${all[all.length - 1]!.param}.${identity}}}` };
    // Half the time the record is one of a kind (an open issue, a project): tools that need a state find it, and tasks differ by it.
    if (all.length === 0 && collection.kinds.length > 0 && this.random.chance(0.5)) {
      const kind = this.random.pick(collection.kinds);
      where[kind.field] = this.random.pick(kind.values);
    }
    this.params[param] = Object.keys(where).length === 0 ? { from: collection.pointer } : { from: collection.pointer, where };
    const binding = { param, collection, field, scope: this.scope };
    this.bindings.push({ ...binding, field: identity });
    return binding;
  }

  /** Calls drawn from here on act on records of their own (a second, independent change). */
  newScope(): void {
    this.scope++;
  }

  /** A fresh value, one of a fixed list drawn now, picked per seed when the task runs. */
  freshValue(property: string, kind: FreshKind, range: [number, number] = [11, 97], step = 1): string {
    const base = words(property).replace(/ /g, '_') || 'value';
    let name = base;
    for (let index = 2; this.params[name] !== undefined; index++) name = `${base}_${index}`;
    const choices: JsonValue[] = [];
    while (choices.length < FRESH_CHOICES) {
      if (kind === 'integer' && range[1] - range[0] + 1 < FRESH_CHOICES && choices.length > range[1] - range[0]) break;
      const value = kind === 'integer' ? this.random.int(Math.ceil(range[0] / step), Math.floor(range[1] / step)) * step : freshOfKind(kind, this.random);
      if (!choices.includes(value)) choices.push(value);
    }
    this.params[name] = { choice: choices };
    this.fresh.add(name);
    return `{{${name}}}`;
  }
}

const FRESH_CHOICES = 6;
const ADJECTIVES = ['amber', 'brisk', 'cobalt', 'dusky', 'ember', 'fallow', 'gilded', 'hollow', 'ivory', 'jade', 'lunar', 'misty', 'nimble', 'opal', 'russet', 'silver', 'tawny', 'umber', 'velvet', 'woven'];
const NOUNS = ['falcon', 'harbor', 'meadow', 'lantern', 'quarry', 'orchard', 'beacon', 'glacier', 'thicket', 'canyon', 'delta', 'spire', 'tundra', 'willow', 'basalt', 'cinder', 'fjord', 'heron', 'kestrel', 'marsh'];
const TEXTS = ['needs a review before Friday', 'waiting on the vendor', 'moved to the next sprint', 'owner is on leave', 'blocked by the audit', 'ready for sign-off', 'check the budget first', 'ask the design team'];

/** The forms a fresh value takes: a schema's format or pattern picks one (a date-time, an upper-case key, a bare word). */
export type FreshKind = 'text' | 'name' | 'tag' | 'integer' | 'date-time' | 'date' | 'email' | 'upper' | 'word' | 'digits';
const STRING_KINDS: readonly FreshKind[] = ['name', 'word', 'upper', 'tag', 'digits', 'text'];

function freshOfKind(kind: FreshKind, random: Random): string {
  switch (kind) {
    case 'name':
      return freshName(random);
    case 'tag':
      return freshName(random).replace('-', '/');
    case 'word':
      return random.pick(ADJECTIVES) + random.pick(NOUNS);
    case 'upper':
      return random.pick(NOUNS).toUpperCase();
    case 'digits':
      return String(random.int(1000, 9999));
    case 'email':
      return `${random.pick(ADJECTIVES)}.${random.pick(NOUNS)}@example.com`;
    case 'date':
      return `2027-0${random.int(1, 9)}-${String(random.int(10, 28))}`;
    case 'date-time':
      // On the hour in office hours, a working week in 2027: what calendar tools accept without a fuss.
      return `2027-0${random.int(1, 9)}-${String(random.int(10, 28))}T${String(random.int(9, 16)).padStart(2, '0')}:00:00Z`;
    default:
      return freshText(random);
  }
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

function freshName(random: Random): string {
  return `${random.pick(ADJECTIVES)}-${random.pick(NOUNS)}`;
}

function freshText(random: Random): string {
  return `${random.pick(ADJECTIVES)} ${random.pick(NOUNS)}: ${random.pick(TEXTS)}`;
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
const FOLDER_TOOL = /director|folder|[-_]tree$/i;
const PAGE_SIZE = /^(limit|per_page|page_size|max_results)$/i;
const FOLDER_ARGUMENT = /^(folder|dir|directory)$/i;
/** The field of a file record that names the folder it is in. */
const FOLDER_FIELD = 'dir';
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

function listField(name: string, collection: Collection): string | undefined {
  const wanted = normal(singular(name));
  const first = collection.items[0]!;
  return Object.keys(first).find((field) => Array.isArray(first[field]) && normal(singular(field)) === wanted && (first[field] as JsonValue[]).every((entry) => typeof entry === 'string'));
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
