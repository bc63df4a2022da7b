// Owns the seeded procedural sampler: one candidate task's golden actions,
// drawn from the world's tool schemas and its initial state. It picks a tool,
// a collection of records whose naming field one of the tool's arguments
// takes (when any does), fills the arguments (argument-filling.ts), and
// sometimes a second call on the same record. The same draw index gives the
// same candidate, whatever else the run does.

import type { JsonObject } from '../core/json-value.js';
import { isJsonObject } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { fillArguments, ParameterPool, PATH_LIKE, propertyScore, TABLE_LIKE, type FilledCall } from './argument-filling.js';
import type { Collection } from './state-survey.js';

export interface SamplerTool {
  name: string;
  inputSchema: JsonObject;
  annotations?: { readOnlyHint?: boolean };
}

export interface Candidate {
  calls: FilledCall[];
  pool: ParameterPool;
  /** The collection its record is drawn from, when a call names one. */
  target?: Collection;
}

export interface SamplerContext {
  tools: readonly SamplerTool[];
  collections: readonly Collection[];
  shownRoot?: string;
}

/** How often a candidate gets a second call on the same record (a read then a write, two writes). */
const SECOND_CALL = 0.3;
const CREATE = 0.2;
const COMPOSE = 0.35;

export function drawCandidate(context: SamplerContext, random: Random): Candidate | { problem: string } {
  const tool = random.pick(context.tools);
  const matching = recordsOf(tool, context.collections);
  // A tool that takes a record's name may create one as well as change one: a fifth of the draws try it with a fresh name.
  const target = matching.length > 0 && !random.chance(CREATE) ? random.pick(matching) : undefined;
  const pool = new ParameterPool(random);
  const fill = { random, pool, collections: context.collections, ...(target ? { target } : {}), ...(context.shownRoot ? { shownRoot: context.shownRoot } : {}) };
  const first = fillArguments(tool, fill);
  if ('problem' in first) return { problem: `${tool.name}: ${first.problem}` };
  const calls = [first];
  if (target && random.chance(SECOND_CALL)) {
    const others = context.tools.filter((other) => other.name !== tool.name && recordsOf(other, context.collections).includes(target));
    if (others.length > 0) {
      // Reading the record first is the common pattern; a second write is the other.
      const reads = others.filter((other) => other.annotations?.readOnlyHint === true);
      const next = reads.length > 0 && random.chance(0.5) ? random.pick(reads) : random.pick(others);
      const second = fillArguments(next, fill);
      if (!('problem' in second)) {
        if (next.annotations?.readOnlyHint === true) calls.unshift(second);
        else calls.push(second);
      }
    }
  }
  // Some tasks are two independent changes in one request: another tool on records of its own.
  if (random.chance(COMPOSE)) {
    const other = random.pick(context.tools.filter((candidate) => candidate.annotations?.readOnlyHint !== true));
    const matches = recordsOf(other, context.collections);
    const otherTarget = matches.length > 0 ? random.pick(matches) : undefined;
    pool.newScope();
    const more = fillArguments(other, { ...fill, ...(otherTarget ? { target: otherTarget } : {}) });
    if (!('problem' in more)) calls.push(more);
  }
  return { calls, pool, ...(target ? { target } : {}) };
}

/** The collections whose records a tool's arguments name; for a tool that names a table, the collections that are tables. */
function recordsOf(tool: SamplerTool, collections: readonly Collection[]): Collection[] {
  const matching = collections.filter((collection) => namesRecordOf(tool.inputSchema, collection));
  return takesTable(tool.inputSchema) ? tablesAmong(matching) : matching;
}

function takesTable(schema: JsonObject): boolean {
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  return Object.entries(properties).some(([name, property]) => TABLE_LIKE.test(name) && isJsonObject(property) && property.type === 'string');
}

/**
 * The collections that are a database's tables: those side by side under one parent (a state that keeps each
 * table's rows under `/rows/<table>`), when there are such; the lists beside them (the schema, derived views)
 * are not tables the database knows. A state with no such parent leaves every collection a candidate.
 */
export function tablesAmong(collections: readonly Collection[]): Collection[] {
  const byParent = new Map<string, Collection[]>();
  for (const collection of collections) {
    const parent = collection.pointer.slice(0, collection.pointer.lastIndexOf('/'));
    if (parent !== '') byParent.set(parent, [...(byParent.get(parent) ?? []), collection]);
  }
  const siblings = [...byParent.values()].filter((group) => group.length >= 2).flat();
  return siblings.length > 0 ? collections.filter((collection) => siblings.includes(collection)) : [...collections];
}

/** Does some argument of the schema (at any depth, list items included) name a record of this collection? */
export function namesRecordOf(schema: JsonObject, collection: Collection): boolean {
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  for (const [name, property] of Object.entries(properties)) {
    if (!isJsonObject(property)) continue;
    // A database tool names a table, and its rows through column maps: every collection is a table it may take.
    if (TABLE_LIKE.test(name) && property.type === 'string') return true;
    const items = isJsonObject(property.items) ? property.items : undefined;
    const descriptions = [property.description, items?.description].map((text) => (typeof text === 'string' ? text : ''));
    if (descriptions.some((description) => collection.naming.some((field) => propertyScore(name, description, collection, field) > 0))) return true;
    // A bare `source` or `file` argument takes a path: it names a record of a collection named by paths.
    if (PATH_LIKE.test(name) && collection.naming.includes('path') && (property.type === 'string' || items?.type === 'string')) return true;
    if (items && namesRecordOf(items, collection)) return true;
    if (isJsonObject(property.properties) && namesRecordOf(property, collection)) return true;
  }
  return false;
}
