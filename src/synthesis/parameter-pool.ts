// Owns the parameters one candidate's calls share: the records its arguments
// are bound to (each a lane parameter drawn `from` a collection, so the task
// instantiates on every seed), and the fresh values it is given (each one of
// a fixed list, picked per seed), with the words that state them.

import type { JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import type { ParamSpec } from '../lanes/lane.js';
import { words, type Collection } from './state-survey.js';

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

  /** A value one of the records already has (a status, a 0 or 1 flag), picked per seed when the task runs: what a column constrained to a few values accepts. */
  existingValue(property: string, values: readonly JsonValue[]): string {
    const base = words(property).replace(/ /g, '_') || 'value';
    let name = base;
    for (let index = 2; this.params[name] !== undefined; index++) name = `${base}_${index}`;
    this.params[name] = { choice: [...values] };
    this.fresh.add(name);
    return `{{${name}}}`;
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
export const STRING_KINDS: readonly FreshKind[] = ['name', 'word', 'upper', 'tag', 'digits', 'text'];

export function freshOfKind(kind: FreshKind, random: Random): string {
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

function freshName(random: Random): string {
  return `${random.pick(ADJECTIVES)}-${random.pick(NOUNS)}`;
}

function freshText(random: Random): string {
  return `${random.pick(ADJECTIVES)} ${random.pick(NOUNS)}: ${random.pick(TEXTS)}`;
}
