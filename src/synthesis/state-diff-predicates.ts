// Owns turning what golden actions did to a world into hidden predicates.
// Per seed, the initial and final snapshots are compared record by record
// (records found by the state survey, matched by their naming field), and
// each change is written through the task's parameters: "the entity named
// {{target.name}} now has observation {{contents}}" as a count with a where
// clause, never as a raw index, hash or time. A change is kept only if every
// checked seed wrote the same predicate (so values that vary by seed, like
// times and ids, drop out), and everything else is guarded by `unchanged`
// (the union over seeds of what moved, so the golden actions always pass).

import { canonicalEquals, canonicalJson } from '../core/canonical-json.js';
import { formatPointer, parsePointer, resolvePointer } from '../core/json-pointer.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';
import { isTemplateField } from '../core/template.js';
import type { Predicate, Where } from '../lanes/lane.js';
import { asCollection, slug, type Collection } from './state-survey.js';

/** Fields a world derives from others or from the clock: a predicate on them pins bytes, not intent. */
export const DERIVED_FIELD = /^(sha256|hash|short|bytes|size|lines|modified_at|updated_at|created_at|mtime|ctime|revision|sequence|dimension|next_rowid|row_count|etag|version)$/i;

export interface SeedState {
  initial: JsonValue;
  final: JsonValue;
  params: Record<string, JsonValue>;
}

export interface DerivedPredicates {
  /** What must have changed, as every seed agrees. */
  changes: (Predicate & { id: string })[];
  /** What must not have changed. */
  guards: (Predicate & { id: string })[];
  /** Why nothing could be derived (a change no parameter names), when that is so. */
  problem?: string;
}

interface Guard {
  except: Set<string>;
  ids: Map<string, { field: string; templates: Set<string> }>;
  allowAdded: boolean;
}

export function derivePredicates(seeds: readonly SeedState[], collections: readonly Collection[], volatile: readonly string[] = []): DerivedPredicates {
  const byPointer = new Map(collections.map((collection) => [collection.pointer, collection]));
  let agreed: Map<string, Predicate> | undefined;
  const guards = new Map<string, Guard>();
  const free = new Set<string>();
  for (const seed of seeds) {
    const found = new Map<string, Predicate>();
    const problem = diffSeed(seed, byPointer, volatile, found, guards, free);
    if (problem) return { changes: [], guards: [], problem };
    agreed = agreed ? new Map([...agreed].filter(([key]) => found.has(key))) : found;
  }
  freeDataMaps(guards, seeds);
  const changes = withoutWeaker([...(agreed ?? new Map()).values()]);
  if (guards.size === 0) return { changes: [], guards: [{ id: 'changes-nothing', unchanged: '' }] };
  if (changes.length === 0) return { changes: [], guards: [], problem: 'its change differs from seed to seed in every detail, so no predicate holds on all of them' };
  return { changes: named(changes, changeName), guards: named([...guards].map(([pointer, guard]) => guardPredicate(pointer, guard)), guardName) };
}

function diffSeed(seed: SeedState, collections: Map<string, Collection>, volatile: readonly string[], found: Map<string, Predicate>, guards: Map<string, Guard>, free: Set<string>): string | undefined {
  const templates = templater(seed.params);
  const collateral: string[] = [];
  const guardAt = (pointer: string): Guard => {
    let guard = guards.get(pointer);
    if (!guard) guards.set(pointer, (guard = { except: new Set(), ids: new Map(), allowAdded: false }));
    return guard;
  };
  const markAncestors = (pointer: string) => {
    const tokens = parsePointer(pointer);
    for (let depth = 0; depth < tokens.length; depth++) guardAt(formatPointer(tokens.slice(0, depth))).except.add(tokens[depth]!);
  };
  const walk = (pointer: string, before: JsonValue | undefined, after: JsonValue | undefined) => {
    if (canonicalEquals(before ?? null, after ?? null) && (before === undefined) === (after === undefined)) return;
    // A map that held no records, or one, when the state was surveyed may be a collection now that records came.
    const collection = collections.get(pointer) ?? (isJsonObject(after) && isJsonObject(before) ? asCollection(after, parsePointer(pointer)) : undefined);
    if (collection && (isJsonObject(before) || Array.isArray(before)) && (isJsonObject(after) || Array.isArray(after))) {
      markAncestors(pointer);
      const guard = guardAt(pointer);
      const problem = diffCollection(collection, before, after, templates, found, guard);
      // A record no parameter names changed too (a view that lists relations to a deleted entity): the
      // collection is left free, and what the parameters do name is still checked here and elsewhere.
      if (problem) {
        collateral.push(problem);
        guards.delete(pointer);
        free.add(pointer);
      }
      return;
    }
    if (isJsonObject(before) && isJsonObject(after)) {
      for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) walk(`${pointer}/${escape(key)}`, before[key], after[key]);
      return;
    }
    // A value outside any record (a clock, a counter): it may move, and nothing is claimed of it.
    markAncestors(pointer);
    if (!volatile.includes(pointer) && after !== undefined && !DERIVED_FIELD.test(lastToken(pointer))) {
      const value = templates.value(after);
      if (value !== undefined) found.set(canonicalJson({ path: pointer, equals: value }), { path: pointer, equals: value });
      // A list of names outside any record (a tree's folders): the whole list may sort a new name to another place on
      // each seed, so what was added and taken out is said entry by entry too.
      if (Array.isArray(before) && Array.isArray(after)) {
        for (const predicate of listEntryChanges(pointer, before, after, templates)) found.set(canonicalJson(predicate as unknown as JsonValue), predicate);
      }
    }
  };
  walk('', seed.initial, seed.final);
  for (const pointer of free) guards.delete(pointer);
  // Only collateral changes, nothing the task names: its effect cannot be written through its parameters.
  const named = [...found.keys()].some((key) => key.includes('{{'));
  return named ? undefined : collateral[0];
}

/**
 * A guard may set apart a key that names data (a relation's key, a file's
 * path) only through a parameter: a raw key would hold on the checked seeds
 * and fail on the next. Where the keys of a map differ from seed to seed, a
 * raw key of it frees the whole map instead (its parent sets it apart), from
 * the deepest map up.
 */
function freeDataMaps(guards: Map<string, Guard>, seeds: readonly SeedState[]): void {
  const pointers = [...guards.keys()].sort((left, right) => parsePointer(right).length - parsePointer(left).length);
  for (const pointer of pointers) {
    const guard = guards.get(pointer);
    if (!guard || pointer === '') continue;
    const raw = [...guard.except].filter((key) => !key.includes('{{'));
    if (raw.length === 0) continue;
    const keySets = seeds.map((seed) => {
      const value = resolvePointer(seed.initial, pointer).value;
      return isJsonObject(value) ? Object.keys(value).sort().join('\u0000') : Array.isArray(value) ? `list:${value.length}` : '';
    });
    if (keySets.every((keys) => keys === keySets[0]) && !keySets[0]!.startsWith('list:')) continue;
    guards.delete(pointer);
  }
}

function diffCollection(collection: Collection, before: JsonValue, after: JsonValue, templates: Templater, found: Map<string, Predicate>, guard: Guard): string | undefined {
  const identity = collection.identities[0]!;
  const keyed = (value: JsonValue) => {
    const items = new Map<string, JsonObject>();
    const entries = Array.isArray(value) ? value.map((item) => [undefined, item] as const) : Object.entries(value as JsonObject);
    for (const [key, item] of entries) {
      if (!isJsonObject(item)) continue;
      items.set(key ?? canonicalJson(item[identity] ?? null), item);
    }
    return items;
  };
  const old = keyed(before);
  const now = keyed(after);
  const path = collection.pointer;
  const addId = (field: string, template: string) => {
    const entry = guard.ids.get(field) ?? { field, templates: new Set<string>() };
    entry.templates.add(template);
    guard.ids.set(field, entry);
  };
  for (const [key, item] of old) {
    const next = now.get(key);
    if (next && canonicalEquals(item, next)) continue;
    const id = templates.whole(item[identity] ?? null);
    if (id === undefined) return `it changed the ${collection.noun} record ${canonicalJson(item[identity] ?? null)}, which no parameter of the task names`;
    addId(identity, id);
    if (!next) {
      found.set(canonicalJson({ count: { path, where: { [identity]: id } }, equals: 0 }), { count: { path, where: { [identity]: id } }, equals: 0 });
      continue;
    }
    for (const condition of fieldChanges(item, next, templates, identity)) {
      const where: Where = { [identity]: id, ...condition };
      found.set(canonicalJson({ count: { path, where }, equals: 1 }), { count: { path, where }, equals: 1 });
    }
  }
  const added = [...now].filter(([key]) => !old.has(key)).map(([, item]) => item);
  for (const item of added) {
    guard.allowAdded = true;
    const anchors = Object.keys(item).filter((field) => !DERIVED_FIELD.test(field) && typeof templates.whole(item[field]!) === 'string');
    if (anchors.length === 0) return `it added a ${collection.noun} record that no parameter of the task names`;
    const anchor = anchors.includes(identity) ? identity : anchors[0]!;
    const where: Where = { [anchor]: templates.whole(item[anchor]!)! };
    // Set apart by what names it, so a list (which `except` cannot key) still guards the records that were there.
    addId(anchor, templates.whole(item[anchor]!)!);
    found.set(canonicalJson({ count: { path, where }, equals: 1 }), { count: { path, where }, equals: 1 });
    for (const condition of fieldChanges({}, item, templates, anchor)) {
      const more: Where = { ...where, ...condition };
      found.set(canonicalJson({ count: { path, where: more }, equals: 1 }), { count: { path, where: more }, equals: 1 });
    }
  }
  return undefined;
}

/** One where condition per field that moved, through the parameters where it can be. */
function fieldChanges(before: JsonObject, after: JsonObject, templates: Templater, skip: string): Where[] {
  const out: Where[] = [];
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (field === skip || DERIVED_FIELD.test(field)) continue;
    const old = before[field];
    const now = after[field];
    if (canonicalEquals(old ?? null, now ?? null) && (old === undefined) === (now === undefined)) continue;
    if (now === undefined) {
      out.push({ [field]: { exists: false } });
    } else if (Array.isArray(now)) {
      const was = Array.isArray(old) ? old : [];
      for (const entry of now) if (isScalar(entry) && !was.some((item) => canonicalEquals(item, entry))) out.push({ [field]: { includes: templates.value(entry)! } });
      for (const entry of was) if (isScalar(entry) && !now.some((item) => canonicalEquals(item, entry))) out.push({ [field]: { excludes: templates.value(entry)! } });
    } else if (isJsonObject(now)) {
      const inner = fieldChanges(isJsonObject(old) ? old : {}, now, templates, '');
      for (const condition of inner) for (const [key, value] of Object.entries(condition)) out.push({ [`${field}.${key}`]: value });
    } else if (typeof now === 'string' && typeof old === 'string') {
      // Text edited around a parameter (a line of a file replaced): the whole text differs by seed, so only that
      // what was asked for is in it may hold on every seed. Where the whole text agrees too, it alone is kept.
      const whole = templates.whole(now);
      const part = templates.contained(now, old);
      out.push({ [field]: whole ?? now });
      if (part !== undefined && part !== whole) out.push({ [field]: { contains: part } });
    } else {
      out.push({ [field]: templates.value(now)! });
    }
  }
  return out;
}

/** The entries a list of scalars gained (`contains`) and lost (`not contains`), each named through a parameter. */
function listEntryChanges(pointer: string, before: JsonValue[], after: JsonValue[], templates: Templater): Predicate[] {
  const out: Predicate[] = [];
  const gained = after.filter((entry) => !before.some((item) => canonicalEquals(item, entry)));
  const lost = before.filter((entry) => !after.some((item) => canonicalEquals(item, entry)));
  for (const entry of gained) {
    const template = templates.whole(entry);
    if (template !== undefined) out.push({ path: pointer, contains: template });
  }
  for (const entry of lost) {
    const template = templates.whole(entry);
    if (template !== undefined) out.push({ not: { path: pointer, contains: template } });
  }
  return out;
}

/** A text or list that must contain a value, where every seed also agreed on the whole of it: the whole says more. */
function withoutWeaker(changes: Predicate[]): Predicate[] {
  // The same record's field, whatever is said of it: the where clause without that field.
  const place = (predicate: Predicate, field: string) => canonicalJson({ path: predicate.count!.path, field, where: Object.fromEntries(Object.entries(predicate.count!.where!).filter(([key]) => key !== field)) } as unknown as JsonValue);
  const exact = new Set<string>();
  for (const predicate of changes) {
    for (const [field, value] of Object.entries(predicate.count?.where ?? {})) if (typeof value === 'string') exact.add(place(predicate, field));
  }
  const whole = new Set(changes.filter((predicate) => predicate.path !== undefined && predicate.equals !== undefined).map((predicate) => predicate.path!));
  return changes.filter((predicate) => {
    const list = predicate.contains !== undefined ? predicate.path : predicate.not?.contains !== undefined ? predicate.not.path : undefined;
    if (list !== undefined) return !whole.has(list);
    const contained = Object.entries(predicate.count?.where ?? {}).find(([, value]) => isJsonObject(value) && 'contains' in value);
    return contained === undefined || !exact.has(place(predicate, contained[0]));
  });
}

interface Templater {
  /** The value written through a parameter when one gives it exactly, else the value itself. */
  value(value: JsonValue): JsonValue | undefined;
  /** A template that gives exactly this value, or undefined. */
  whole(value: JsonValue): string | undefined;
  /** A parameter's template whose value appears in `text` but not in `was`. */
  contained(text: string, was: string): string | undefined;
}

function templater(params: Record<string, JsonValue>): Templater {
  // Parameter values, longest first, so "amber-falcon.md" is read as {{name}}.md and not as a shorter value inside it.
  const known: { template: string; value: string | number }[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (isScalar(value)) known.push({ template: `{{${name}}}`, value });
    else if (isJsonObject(value)) {
      for (const [field, inner] of Object.entries(value)) {
        if (!isTemplateField(field)) continue;
        if (isScalar(inner)) known.push({ template: `{{${name}.${field}}}`, value: inner });
        // A list's first entry can be named too (the observation a task deletes), one object down as well (a note's first tag).
        else if (Array.isArray(inner) && isScalar(inner[0])) known.push({ template: `{{${name}.${field}.0}}`, value: inner[0] });
        else if (isJsonObject(inner)) {
          for (const [key, list] of Object.entries(inner)) {
            if (isTemplateField(key) && Array.isArray(list) && isScalar(list[0])) known.push({ template: `{{${name}.${field}.${key}.0}}`, value: list[0] });
          }
        }
      }
    }
  }
  const textual = known.filter((entry) => String(entry.value).length >= 4).sort((left, right) => String(right.value).length - String(left.value).length);
  const whole = (value: JsonValue): string | undefined => {
    if (!isScalar(value)) return undefined;
    const exact = known.find((entry) => entry.value === value);
    if (exact) return exact.template;
    if (typeof value !== 'string') return undefined;
    let text = value;
    let replaced = false;
    for (const entry of textual) {
      if (typeof entry.value !== 'string' || !text.includes(entry.value)) continue;
      text = text.split(entry.value).join(entry.template);
      replaced = true;
    }
    return replaced ? text : undefined;
  };
  return {
    whole,
    value: (value) => whole(value) ?? value,
    contained: (text, was) => textual.find((entry) => typeof entry.value === 'string' && text.includes(entry.value) && !was.includes(entry.value))?.template,
  };
}

function guardPredicate(pointer: string, guard: Guard): Predicate {
  const predicate: Predicate = { unchanged: pointer };
  if (guard.except.size > 0) predicate.except = [...guard.except].sort();
  const ids = [...guard.ids.values()];
  if (ids.length > 0) {
    const where: Where = {};
    for (const { field, templates } of ids) {
      const list = [...templates].sort();
      where[field] = list.length === 1 ? list[0]! : { in: list };
    }
    predicate.except_where = where;
  }
  if (guard.allowAdded) predicate.allow_added = true;
  return predicate;
}

function changeName(predicate: Predicate): string {
  const count = predicate.count;
  if (predicate.path !== undefined && predicate.contains !== undefined) return `adds-to-${slug(lastToken(predicate.path), 'value')}`;
  if (predicate.not?.path !== undefined) return `takes-from-${slug(lastToken(predicate.not.path), 'value')}`;
  if (predicate.path !== undefined) return `sets-${slug(lastToken(predicate.path), 'value')}`;
  if (!count) return 'changes';
  const fields = Object.keys(count.where ?? {});
  const noun = slug(lastToken(count.path), 'value');
  if (predicate.equals === 0) return `removes-the-${noun}-record`;
  if (fields.length <= 1) return `has-the-${noun}-record`;
  return `sets-${slug(fields[fields.length - 1]!, 'value')}`;
}

function guardName(predicate: Predicate): string {
  if (predicate.unchanged === '') return predicate.except ? 'touches-nothing-else' : 'changes-nothing';
  return `keeps-other-${slug(lastToken(predicate.unchanged!), 'value')}`;
}

function named(predicates: Predicate[], name: (predicate: Predicate) => string): (Predicate & { id: string })[] {
  const used = new Map<string, number>();
  return predicates.map((predicate) => {
    const base = name(predicate);
    const seen = (used.get(base) ?? 0) + 1;
    used.set(base, seen);
    return { id: seen === 1 ? base : `${base}-${seen}`, ...predicate };
  });
}


function lastToken(pointer: string): string {
  const tokens = parsePointer(pointer);
  return tokens[tokens.length - 1] ?? '';
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isScalar(value: JsonValue | undefined): value is string | number {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}
