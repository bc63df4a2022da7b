// Owns reading a world's initial snapshot as a synthesiser sees it: the
// collections of records it holds (a list or map of objects at a pointer that
// is the same on every seed), and the fields that name one record uniquely.
// Task synthesis picks its targets from these and expresses every change it
// finds through them, so a task instantiates on any seed.

import { formatPointer } from '../core/json-pointer.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';

export interface Collection {
  /** JSON pointer to the list or map; its segments are field names, never a record's key. */
  pointer: string;
  kind: 'list' | 'map';
  /** The last segment, for wording ("entities", "files"). */
  noun: string;
  items: JsonObject[];
  /** Scalar fields present in every item with a value no two items share, best first. */
  identities: string[];
  /** Scalar fields present in every item (identities included). */
  fields: string[];
  /** Identities an argument may name a record by (a name, a number, a path; not a title or a time). */
  naming: string[];
  /** Fields with a few distinct values (a state, a type): a parameter may pick a record by one of them. */
  kinds: { field: string; values: (string | number)[] }[];
}

/** Collections deeper than this are left alone: tasks address records, not their insides. */
const MAX_DEPTH = 4;
/** Field names that usually name a record, in the order they are preferred. */
const NAMING = ['id', 'key', 'number', 'name', 'path', 'login', 'email', 'code', 'sku', 'title'];

export function surveyState(snapshot: JsonValue): Collection[] {
  const found: Collection[] = [];
  walk(snapshot, [], found);
  return found;
}

function walk(value: JsonValue, path: string[], found: Collection[]): void {
  if (path.length > MAX_DEPTH) return;
  const collection = asCollection(value, path);
  if (collection) {
    found.push(collection);
    // A record's insides are not collections of the world: their pointers would name the record.
    return;
  }
  if (isJsonObject(value)) for (const [key, child] of Object.entries(value)) walk(child, [...path, key], found);
}

/**
 * The collection at a pointer, if the value is one: a list of objects, or a
 * map of objects (two or more, or one whose key is a field of it, like a file
 * tree keyed by path). Task synthesis also asks this of a map that was empty
 * in the survey and gained records.
 */
export function asCollection(value: JsonValue, path: readonly string[]): Collection | undefined {
  if (path.length === 0) return undefined;
  let items: JsonObject[];
  let kind: Collection['kind'];
  if (Array.isArray(value)) {
    if (value.length < 2 || !value.every(isJsonObject)) return undefined;
    items = value as JsonObject[];
    kind = 'list';
  } else if (isJsonObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0 || !entries.every(([, item]) => isJsonObject(item))) return undefined;
    const keyed = entries.every(([key, item]) => Object.values(item as JsonObject).includes(key));
    if (entries.length < 2 && !keyed) return undefined;
    items = entries.map(([, item]) => item as JsonObject);
    kind = 'map';
  } else {
    return undefined;
  }
  const fields = Object.keys(items[0]!).filter((field) => items.every((item) => isScalar(item[field])));
  const identities = fields
    .filter((field) => new Set(items.map((item) => JSON.stringify(item[field]))).size === items.length)
    .sort((left, right) => rank(left) - rank(right) || left.localeCompare(right));
  if (identities.length === 0) return undefined;
  const named = identities.filter((field) => rank(field) < NAMING.indexOf('title'));
  const kinds = fields
    .filter((field) => !identities.includes(field) && typeof items[0]![field] === 'string')
    .map((field) => ({ field, values: [...new Set(items.map((item) => item[field] as string))].sort() }))
    .filter((entry) => entry.values.length >= 2 && entry.values.length <= 5 && entry.values.length < items.length);
  return { pointer: formatPointer(path), kind, noun: path[path.length - 1]!, items, identities, fields, naming: named.length > 0 ? named : [identities[0]!], kinds };
}

function rank(field: string): number {
  const index = NAMING.indexOf(field.toLowerCase());
  return index === -1 ? NAMING.length : index;
}

function isScalar(value: JsonValue | undefined): value is string | number {
  return (typeof value === 'string' && value.length > 0) || (typeof value === 'number' && Number.isFinite(value));
}

/** A name as an id part: "entityType" → "entity-type", "Due on!" → "due-on"; `fallback` when nothing is left. */
export function slug(text: string, fallback = 'record'): string {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase() || fallback;
}

/** A field name in words, for wording: "entityType" → "entity type", "due_on" → "due on". */
export function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-./]+/g, ' ')
    .trim()
    .toLowerCase();
}

/** "entities" → "entity", "issues" → "issue", "files" → "file": for "the entity Granite". */
export function singular(noun: string): string {
  const plain = words(noun);
  if (plain === 'people') return 'person';
  if (/ies$/.test(plain)) return plain.replace(/ies$/, 'y');
  if (/(ss|sh|ch|x)es$/.test(plain)) return plain.replace(/es$/, '');
  if (/s$/.test(plain) && !/ss$/.test(plain)) return plain.replace(/s$/, '');
  return plain;
}
