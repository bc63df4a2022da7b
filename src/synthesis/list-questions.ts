// Owns questions about many records at once: "which issues are open?". A
// read whose arguments name no record but filter by a kind (a state, a
// status) lists records; when what it lists is, on every golden seed, exactly
// the records of that kind in the state, the task asks for them, and its
// hidden checks are that the answer names every record of the kind and none
// of the others. The wrong answer it is proven against lists another kind.

import { canonicalEquals } from '../core/canonical-json.js';
import type { JsonObject, JsonValue } from '../core/json-value.js';
import { isJsonObject } from '../core/json-value.js';
import { isTemplateField } from '../core/template.js';
import { collectionAt } from '../core/where-clause.js';
import type { PhrasingRules, Predicate, SolutionStep, WrongTrajectory } from '../lanes/lane.js';
import type { Candidate } from './candidate-sampler.js';
import type { SeedState } from './state-diff-predicates.js';
import { singular, slug, words, type Collection } from './state-survey.js';

export interface ListQuestion {
  collection: Collection;
  /** The kind asked about: the field and the value the call filtered by. */
  field: string;
  value: string | number;
  /** The field each listed record is named by. */
  naming: string;
  /** Where the answer reads the names, e.g. r1.issues.*.number. */
  reference: string;
  predicates: (Predicate & { id: string })[];
  user: PhrasingRules;
  answer: SolutionStep;
  wrong: WrongTrajectory[];
}

/** A list question the candidate's one read answers, or why it does not. */
export function listQuestion(
  candidate: Candidate,
  tools: readonly { name: string; inputSchema: JsonObject }[],
  collections: readonly Collection[],
  states: readonly SeedState[],
  results: readonly JsonValue[][],
): ListQuestion | { problem: string } {
  if (candidate.calls.length !== 1 || candidate.pool.bindings.length > 0) return { problem: 'a read that names no record: there is no fact to ask about' };
  const call = candidate.calls[0]!;
  const schema = tools.find((tool) => tool.name === call.call)?.inputSchema ?? {};
  for (const leaf of enumLeaves(call.arguments, schema, [])) {
    const argument = leaf.path[leaf.path.length - 1]!;
    for (const collection of collections) {
      const kind = collection.kinds.find((entry) => sameWord(argument, entry.field) && entry.values.includes(leaf.value));
      if (!kind) continue;
      for (const naming of collection.naming) {
        const reference = listedAt(results, states, collection, kind.field, leaf.value, naming);
        if (!reference) continue;
        const others = leaf.choices.filter((other): other is string | number => other !== leaf.value && kind.values.includes(other as string | number));
        const wrongArguments = others.slice(0, 1).map((other) => replaced(call.arguments, leaf.path, leaf.listed ? [other] : other));
        return build(call.call, wrongArguments, collection, kind.field, leaf.value, naming, reference, others);
      }
    }
  }
  return { problem: 'a read that names no record and lists no kind of record: there is no fact to ask about' };
}

interface EnumLeaf {
  path: string[];
  value: string | number;
  choices: JsonValue[];
  /** The value is the one entry of a list (`status: ["todo"]`). */
  listed: boolean;
}

/** Every argument the call gave from an enum, at any depth: a filter's `priority`, a status list of one. */
function enumLeaves(value: JsonValue, schema: JsonObject, path: string[]): EnumLeaf[] {
  if (isJsonObject(value)) {
    const properties = isJsonObject(schema.properties) ? schema.properties : {};
    return Object.entries(value).flatMap(([key, child]) => (isJsonObject(properties[key]) ? enumLeaves(child, properties[key] as JsonObject, [...path, key]) : []));
  }
  if (Array.isArray(value) && value.length === 1 && isJsonObject(schema.items) && Array.isArray(schema.items.enum) && (typeof value[0] === 'string' || typeof value[0] === 'number')) {
    return [{ path, value: value[0], choices: schema.items.enum as JsonValue[], listed: true }];
  }
  if (Array.isArray(schema.enum) && (typeof value === 'string' || typeof value === 'number')) return [{ path, value, choices: schema.enum as JsonValue[], listed: false }];
  return [];
}

function replaced(args: JsonObject, path: readonly string[], value: JsonValue): JsonObject {
  const copy = JSON.parse(JSON.stringify(args)) as JsonObject;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as JsonObject;
  node[path[path.length - 1]!] = value;
  return copy;
}

function build(
  tool: string,
  wrongArguments: JsonObject[],
  collection: Collection,
  field: string,
  value: string | number,
  naming: string,
  reference: string,
  others: (string | number)[],
): ListQuestion {
  const nouns = words(collection.noun);
  const kind = `${words(field)} ${value}`;
  const answer: SolutionStep = { answer: `The ${nouns} with ${kind}: {{${reference}}}.` };
  const wrong: WrongTrajectory[] = wrongArguments.map((args, index) => ({
    id: `lists-the-${slug(String(others[index]))}-${slug(singular(collection.noun))}s`,
    description: `Lists the ${nouns} with ${words(field)} ${others[index]} instead.`,
    solution: [{ call: tool, arguments: args, as: 'r1' }, answer],
  }));
  return {
    collection,
    field,
    value,
    naming,
    reference,
    predicates: [
      { id: `names-every-${slug(String(value))}-${slug(singular(collection.noun))}`, answer: { contains_all: { path: collection.pointer, where: { [field]: value }, field: naming } } },
      { id: `names-no-other-${slug(singular(collection.noun))}`, answer: { contains_none: { path: collection.pointer, where: { [field]: { not: value } }, field: naming } } },
      { id: 'changes-nothing', unchanged: '' },
    ],
    user: {
      say: [
        `<greet?>Which ${nouns} have ${kind}? Give me their ${words(naming)}s.<thanks?>`,
        `<greet?>List the ${words(naming)}s of the ${nouns} with ${kind}.<thanks?>`,
        `<greet?>I need the ${words(naming)} of every ${singular(nouns)} with ${kind}, and only those.<thanks?>`,
      ],
    },
    answer,
    wrong,
  };
}

/** "response_status" and "response", "status" and "status": the argument filters by the field. */
function sameWord(argument: string, field: string): boolean {
  const plain = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');
  return plain(argument) === plain(field) || plain(argument).startsWith(plain(field)) || plain(argument).endsWith(plain(field));
}

/**
 * The template path (r1.issues.*.number) of a list in the first result whose records' `naming` values are,
 * on every seed, exactly those of the state's records of the kind: never empty, and not every record.
 */
function listedAt(results: readonly JsonValue[][], states: readonly SeedState[], collection: Collection, field: string, value: string | number, naming: string): string | undefined {
  let found: string | undefined;
  let narrower = false;
  for (const [seed, state] of states.entries()) {
    const items = (collectionAt(state.initial, collection.pointer) ?? []).filter(isJsonObject);
    const wanted = items.filter((item) => canonicalEquals(item[field] ?? null, value)).map((item) => item[naming] ?? null);
    if (wanted.length === 0) return undefined;
    if (wanted.length < items.length) narrower = true;
    const path = listPath(results[seed]?.[0] ?? null, naming, wanted);
    if (path === undefined || (found !== undefined && path !== found)) return undefined;
    found = path;
  }
  return narrower && found !== undefined ? `r1${found ? `.${found}` : ''}.*.${naming}` : undefined;
}

/** The path (dot-separated, '' for the root) of the first list of records whose `naming` values are `wanted`, in any order. */
function listPath(node: JsonValue, naming: string, wanted: readonly JsonValue[]): string | undefined {
  const queue: { node: JsonValue; path: string[] }[] = [{ node, path: [] }];
  while (queue.length > 0) {
    const { node: current, path } = queue.shift()!;
    if (Array.isArray(current) && current.length > 0 && current.every(isJsonObject)) {
      const names = current.map((item) => (item as JsonObject)[naming] ?? null);
      if (names.length === wanted.length && wanted.every((name) => names.some((listed) => canonicalEquals(listed, name)))) return path.join('.');
    }
    if (isJsonObject(current)) for (const [key, child] of Object.entries(current)) if (isTemplateField(key)) queue.push({ node: child, path: [...path, key] });
  }
  return undefined;
}
