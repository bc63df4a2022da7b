// Owns reading a writer model's answer as a candidate task: the JSON it
// returns ({"instruction", "actions": [{"tool", "arguments"}]}, and for a
// question the "answer" the user is told) checked for
// shape and known tools, then parameterised so the one task instantiates on
// every seed. An argument equal to a naming field of a record in a surveyed
// collection becomes a lane parameter bound to a record of that collection,
// and the same value in the instruction becomes the same placeholder; any
// other value stays literal, as the writer wrote it.

import { parseBoundedJson } from '../core/bounded-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import type { PhrasingRules } from '../lanes/lane.js';
import { ParameterPool, propertyScore, type FilledCall, type Mention } from './argument-filling.js';
import type { Candidate, SamplerTool } from './candidate-sampler.js';
import { words, type Collection } from './state-survey.js';

export interface WriterAction {
  tool: string;
  arguments: JsonObject;
}

export interface WriterAnswer {
  instruction: string;
  actions: WriterAction[];
  /** For a question: the value the user is told, as the state the writer was shown has it. */
  answer?: string | number;
}

/** More calls than this is not one task a user would ask for. */
export const MOST_ACTIONS = 4;
const LARGEST_ANSWER_BYTES = 64 * 1024;
const QUOTED = 80;

/** The answer's JSON, or what is wrong with it, in words the report shows. */
export function readWriterAnswer(text: string, tools: readonly SamplerTool[]): WriterAnswer | { problem: string } {
  // Models wrap JSON in a fence or a sentence; the object is what lies between the first { and the last }.
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start === -1 || end < start) return { problem: `the writer's answer is not JSON: ${quote(text)}` };
  let value: unknown;
  try {
    value = parseBoundedJson(text.slice(start, end + 1), { maxBytes: LARGEST_ANSWER_BYTES, maxDepth: 32 });
  } catch {
    return { problem: `the writer's answer is not JSON: ${quote(text)}` };
  }
  if (!isJsonObject(value as JsonValue)) return { problem: `the writer's answer is not a JSON object: ${quote(text)}` };
  const answer = value as JsonObject;
  if (typeof answer.instruction !== 'string' || answer.instruction.trim() === '') return { problem: `the writer's answer has no "instruction" (a non-empty string): ${quote(text)}` };
  const actions = answer.actions;
  if (!Array.isArray(actions) || actions.length === 0 || actions.length > MOST_ACTIONS) return { problem: `the writer's answer has no "actions" (a list of 1 to ${MOST_ACTIONS} tool calls): ${quote(text)}` };
  const read: WriterAction[] = [];
  for (const action of actions) {
    if (!isJsonObject(action) || typeof action.tool !== 'string') return { problem: `the writer's answer has an action without a "tool" name: ${quote(JSON.stringify(action))}` };
    if (!tools.some((tool) => tool.name === action.tool)) return { problem: `the writer's answer calls a tool the world does not have: ${quote(action.tool)}` };
    const given = action.arguments ?? {};
    if (!isJsonObject(given)) return { problem: `the writer's answer gives ${action.tool} arguments that are not an object: ${quote(JSON.stringify(given))}` };
    read.push({ tool: action.tool, arguments: given });
  }
  const told = answer.answer;
  if (told !== undefined && told !== null && typeof told !== 'string' && typeof told !== 'number') return { problem: `the writer's answer has an "answer" that is not a string or a number: ${quote(JSON.stringify(told))}` };
  return { instruction: answer.instruction.trim(), actions: read, ...(typeof told === 'string' || typeof told === 'number' ? { answer: told } : {}) };
}

interface Found {
  collection: Collection;
  field: string;
  index: number;
  /** What precedes the record's value in the argument (a server world's shown root). */
  prefix: string;
}

/**
 * The writer's calls with record values replaced by parameters, and its instruction with the same placeholders,
 * as a grammar that greets and thanks like every task of the lane (instruction-grammar.ts's SHARED_PHRASING).
 */
export function parameteriseAnswer(answer: WriterAnswer, context: { tools: readonly SamplerTool[]; collections: readonly Collection[]; shownRoot?: string }, random: Random): Candidate & { instruction: PhrasingRules; answer?: { value: string | number; field?: string } } {
  const pool = new ParameterPool(random);
  /** The parameter each record the writer named is bound to, by collection pointer and item index. */
  const bound = new Map<string, string>();
  /** The record, as the writer was shown it, that each parameter stands for. */
  const named = new Map<string, JsonObject>();
  const replacements = new Map<string, string>();
  const paramOf = (found: Found): string => {
    const key = `${found.collection.pointer}#${found.index}`;
    const known = bound.get(key);
    if (known) return known;
    const distinct = pool.bindings.some((binding) => binding.collection.pointer === found.collection.pointer);
    const param = pool.bind(found.collection, found.field, distinct).param;
    bound.set(key, param);
    named.set(param, found.collection.items[found.index]!);
    // The instruction may name the record by another of its unique fields ("Hana Rahman" for hana.rahman89): that is the record too.
    const record = found.collection.items[found.index]!;
    for (const field of found.collection.identities) {
      const text = String(record[field]);
      if (text.length >= 3 && !replacements.has(text)) replacements.set(text, `{{${param}.${field}}}`);
    }
    return param;
  };
  const parameterise = (property: string, schema: JsonObject | undefined, value: JsonValue): JsonValue => {
    if (Array.isArray(value)) {
      const items = schema && isJsonObject(schema.items) ? schema.items : undefined;
      return value.map((item) => parameterise(property, items, item));
    }
    if (isJsonObject(value)) {
      const properties = schema && isJsonObject(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, parameterise(key, isJsonObject(properties[key]) ? properties[key] : undefined, item)]));
    }
    if (typeof value !== 'string' && typeof value !== 'number') return value;
    const found = findRecord(property, schema, value, context, bound);
    if (!found) return value;
    const placeholder = `{{${paramOf(found)}.${found.field}}}`;
    replacements.set(String(value), `${found.prefix}${placeholder}`);
    if (found.prefix) replacements.set(String(value).slice(found.prefix.length), placeholder);
    return `${found.prefix}${placeholder}`;
  };
  const filled = answer.actions.map((action) => {
    const tool = context.tools.find((entry) => entry.name === action.tool)!;
    return { call: action.tool, arguments: parameterise('', tool.inputSchema, action.arguments) as JsonObject };
  });
  // A writer's record stands for any record of its collection: a state the calls need is found by the precondition search, not drawn at random.
  for (const binding of pool.bindings) {
    const spec = pool.params[binding.param];
    if (!spec || !('from' in spec) || !spec.where) continue;
    for (const [field, condition] of Object.entries(spec.where)) if (!isJsonObject(condition as JsonValue)) delete spec.where[field];
    if (Object.keys(spec.where).length === 0) delete spec.where;
  }
  const instruction = replaceValues(answer.instruction, replacements);
  const calls: FilledCall[] = filled.map((call) => ({ ...call, mentions: mentionsOf(call.arguments, instruction) }));
  const target = pool.bindings[0]?.collection;
  return { calls, pool, instruction: { say: [`<greet?>${instruction}<thanks?>`] }, ...(target ? { target } : {}), ...(answer.answer !== undefined ? { answer: { value: answer.answer, ...answeredField(answer.answer, target ? named.get(pool.bindings[0]!.param) : undefined) } } : {}) };
}

/** The field of the record the writer named first whose value, in the state it was shown, is the answer it gave. */
function answeredField(value: string | number, record: JsonObject | undefined): { field?: string } {
  const field = record ? Object.keys(record).find((name) => (typeof record[name] === 'string' || typeof record[name] === 'number') && String(record[name]) === String(value)) : undefined;
  return field === undefined ? {} : { field };
}

/** The record whose naming field the value is, when the argument plausibly names one. */
function findRecord(property: string, schema: JsonObject | undefined, value: string | number, context: { collections: readonly Collection[]; shownRoot?: string }, bound: ReadonlyMap<string, string>): Found | undefined {
  const description = schema && typeof schema.description === 'string' ? schema.description : '';
  const text = String(value);
  const prefix = context.shownRoot && text.startsWith(`${context.shownRoot}/`) ? `${context.shownRoot}/` : '';
  let best: (Found & { score: number }) | undefined;
  for (const collection of context.collections) {
    for (const field of collection.naming) {
      const index = collection.items.findIndex((item) => item[field] !== undefined && String(item[field]) === text.slice(prefix.length));
      if (index === -1) continue;
      const score = propertyScore(property, description, collection, field);
      // A short value (a limit of 5, a page 2) names a record only where the argument is about one, or the record is already named.
      if (score === 0 && text.length - prefix.length < 3 && !bound.has(`${collection.pointer}#${index}`)) continue;
      if (!best || score > best.score) best = { collection, field, index, prefix, score };
    }
  }
  if (!best) return undefined;
  const { score: _score, ...found } = best;
  return found;
}

/** Every value replaced at once, the longest first, so a placeholder is never rewritten and "12" never matches inside "1250". */
function replaceValues(text: string, replacements: ReadonlyMap<string, string>): string {
  const values = [...replacements.keys()].filter((value) => value.length > 0).sort((left, right) => right.length - left.length);
  if (values.length === 0) return text;
  const pattern = new RegExp(`(?<![A-Za-z0-9])(?:${values.map(escape).join('|')})(?![A-Za-z0-9])`, 'g');
  return text.replace(pattern, (match) => replacements.get(match) ?? match);
}

/** What the instruction states of a call's arguments: each value, placeholder or literal, that its words contain. */
function mentionsOf(value: JsonValue, instruction: string, property = ''): Mention[] {
  if (Array.isArray(value)) return value.flatMap((item) => mentionsOf(item, instruction, property));
  if (isJsonObject(value)) return Object.entries(value).flatMap(([key, item]) => mentionsOf(item, instruction, key));
  if (value === null) return [];
  const text = String(value);
  return instruction.includes(text) ? [{ property: words(property), text }] : [];
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function quote(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(line.length > QUOTED ? `${line.slice(0, QUOTED - 3)}...` : line);
}
