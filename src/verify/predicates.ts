// Owns evaluating hidden predicates: declarative checks over the initial and
// final world snapshots, the call history and the final answer. Predicates are
// judged after the episode, never shown to the policy, and every verdict that
// fails says why.

import { canonicalEquals, canonicalJson } from '../core/canonical-json.js';
import type { Message } from '../core/conversation.js';
import { isJsonObject, type JsonValue } from '../core/json-value.js';
import { resolvePointer } from '../core/json-pointer.js';
import { compilePattern } from '../core/safe-pattern.js';
import { MAX_TEXT, PatternError } from '../core/safe-pattern-contract.js';
import { evaluateExpression, renderDeep, renderText } from '../core/template.js';
import { asksFor, isQuestion, tellsFact, type UserFact } from '../core/user-facts.js';
import type { Predicate, Query, Where } from '../lanes/lane.js';
import { collectionAt, fieldValue, matchesWhere } from '../core/where-clause.js';

export interface PredicateContext {
  initial: JsonValue;
  final: JsonValue;
  /** The final answer; null when the episode ended without one. */
  answer: string | null;
  messages: readonly Message[];
  params: Readonly<Record<string, JsonValue>>;
  /** Names a tool was renamed to mid-episode → its original name, so call counts follow the tool. */
  aliases?: ReadonlyMap<string, string>;
  /** What the user means (rendered), for the informed and questions predicates. */
  facts?: readonly UserFact[];
}

export interface Verdict {
  passed: boolean;
  detail: string;
  /** The check could not be judged (a pattern over its limits): it fails, and so does its negation. */
  unjudged?: true;
}

export interface PredicateVerdict {
  id: string;
  passed: boolean;
  /** Why it failed; absent when it passed. */
  detail?: string;
}

export function evaluatePredicates(predicates: readonly (Predicate & { id: string })[], context: PredicateContext): PredicateVerdict[] {
  return predicates.map((predicate) => {
    const verdict = evaluatePredicate(predicate, context);
    return verdict.passed ? { id: predicate.id, passed: true } : { id: predicate.id, passed: false, detail: verdict.detail };
  });
}

export function evaluatePredicate(predicate: Predicate, context: PredicateContext): Verdict {
  if (predicate.all) {
    const failed = predicate.all.map((child) => evaluatePredicate(child, context)).find((verdict) => !verdict.passed);
    return failed ?? { passed: true, detail: 'all passed' };
  }
  if (predicate.any) {
    const verdicts = predicate.any.map((child) => evaluatePredicate(child, context));
    if (verdicts.some((verdict) => verdict.passed)) return { passed: true, detail: 'one passed' };
    const detail = `none passed: ${verdicts.map((verdict) => verdict.detail).join(' | ')}`;
    return verdicts.some((verdict) => verdict.unjudged) ? { passed: false, unjudged: true, detail } : { passed: false, detail };
  }
  if (predicate.not) {
    const inner = evaluatePredicate(predicate.not, context);
    if (inner.unjudged) return inner;
    return { passed: !inner.passed, detail: inner.passed ? `should not hold: ${inner.detail}` : `holds: ${inner.detail}` };
  }
  const { all: _all, any: _any, not: _not, ...leaf } = predicate;
  const rendered = renderDeep(leaf, context.params) as Predicate;
  if (leaf.answer?.matches !== undefined) rendered.answer!.matches = renderPattern(leaf.answer.matches, context.params);
  if (rendered.path !== undefined) return evaluatePath(rendered, context);
  if (rendered.unchanged !== undefined) {
    if (rendered.except_where) return evaluateUnchangedWhere(rendered.unchanged, rendered.except_where, rendered.except ?? [], rendered.allow_added === true, context);
    return evaluateUnchanged(rendered.unchanged, rendered.except ?? [], rendered.allow_added === true, context);
  }
  if (rendered.count) {
    const snapshot = rendered.count.snapshot === 'initial' ? context.initial : context.final;
    const items = collectionAt(snapshot, rendered.count.path);
    if (!items) return { passed: false, detail: `${rendered.count.path} is not a list or map` };
    const count = items.filter((item) => matchesWhere(item, rendered.count!.where)).length;
    return bounded(`count of ${rendered.count.path}${rendered.count.where ? ' where ' + canonicalJson(rendered.count.where) : ''}`, count, rendered);
  }
  if (rendered.calls) {
    const { tool, ok } = rendered.calls;
    const original = (name: string | null) => (name === null ? null : context.aliases?.get(name) ?? name);
    const count = context.messages.filter(
      (message) => message.role === 'tool' && original(message.name) === tool && (ok === undefined || message.tool_result.ok === ok),
    ).length;
    return bounded(`${ok === undefined ? '' : ok ? 'successful ' : 'failed '}calls of ${tool}`, count, rendered);
  }
  if (rendered.answer) return evaluateAnswer(rendered.answer, context);
  if (rendered.informed) return evaluateInformed(rendered.informed.fact, rendered.informed.before, context);
  if (rendered.questions) {
    const fact = rendered.questions.fact === undefined ? undefined : context.facts?.find((candidate) => candidate.id === rendered.questions!.fact);
    if (rendered.questions.fact !== undefined && !fact) return { passed: false, detail: `the task has no fact "${rendered.questions.fact}"` };
    const count = context.messages.filter(
      (message) => message.role === 'assistant' && !message.tool_calls?.length && !message.malformed_tool_call && isQuestion(message.content) && (!fact || asksFor(message.content, fact)),
    ).length;
    return bounded(fact ? `questions asking for ${fact.id}` : 'questions to the user', count, rendered);
  }
  return { passed: false, detail: 'predicate has no operator' };
}

/** Every call of `tool` must come after a user message that gave the fact: acting on a guess fails. */
function evaluateInformed(factId: string, tool: string, context: PredicateContext): Verdict {
  const fact = context.facts?.find((candidate) => candidate.id === factId);
  if (!fact) return { passed: false, detail: `the task has no fact "${factId}"` };
  const original = (name: string) => context.aliases?.get(name) ?? name;
  let told = false;
  for (const [index, message] of context.messages.entries()) {
    if (message.role === 'user' && tellsFact(message.content, fact)) told = true;
    if (!told && message.role === 'assistant' && message.tool_calls?.some((call) => original(call.name) === tool)) {
      return { passed: false, detail: `${tool} was called at message ${index} before the user gave ${fact.id} (${JSON.stringify(fact.value)})` };
    }
  }
  return { passed: true, detail: `every call of ${tool} came after the user gave ${fact.id}` };
}

function evaluatePath(predicate: Predicate, context: PredicateContext): Verdict {
  const path = predicate.path!;
  const { found, value } = resolvePointer(context.final, path);
  if (predicate.exists !== undefined) {
    const exists = found && value !== null;
    return { passed: exists === predicate.exists, detail: `${path} ${exists ? 'exists' : 'does not exist'}` };
  }
  if (!found) return { passed: false, detail: `${path} does not exist` };
  if (predicate.equals !== undefined) {
    return {
      passed: canonicalEquals(value, predicate.equals),
      detail: `${path} is ${canonicalJson(value)}, expected ${canonicalJson(predicate.equals)}`,
    };
  }
  const needle = predicate.contains;
  if (Array.isArray(value)) {
    return {
      passed: value.some((entry) => canonicalEquals(entry, needle)),
      detail: `${path} is ${canonicalJson(value)}, expected it to include ${canonicalJson(needle)}`,
    };
  }
  if (typeof value === 'string') {
    return { passed: value.includes(renderText(needle)), detail: `${path} is ${JSON.stringify(value)}, expected it to contain ${JSON.stringify(renderText(needle))}` };
  }
  return { passed: false, detail: `${path} is ${canonicalJson(value)}, which is neither a list nor a string` };
}

function evaluateUnchanged(pointer: string, except: readonly string[], allowAdded: boolean, context: PredicateContext): Verdict {
  const before = resolvePointer(context.initial, pointer);
  const after = resolvePointer(context.final, pointer);
  const where = pointer || 'the world';
  if ((except.length === 0 && !allowAdded) || !isJsonObject(before.value) || !isJsonObject(after.value)) {
    const same = before.found === after.found && canonicalEquals(before.value ?? null, after.value ?? null);
    return { passed: same, detail: same ? `${where} unchanged` : `${where} changed` };
  }
  const allowed = new Set(except.map(String));
  const initial = before.value;
  const final = after.value;
  const keys = new Set([...Object.keys(initial), ...Object.keys(final)]);
  // A record created during the episode is not a change to an existing one.
  const added = (key: string) => allowAdded && !Object.prototype.hasOwnProperty.call(initial, key);
  const changed = [...keys].filter((key) => !allowed.has(key) && !added(key) && !canonicalEquals(initial[key] ?? null, final[key] ?? null)).sort();
  const apart = [...allowed, ...(allowAdded ? ['new keys'] : [])].join(', ');
  return changed.length === 0
    ? { passed: true, detail: `${where} unchanged apart from ${apart}` }
    : { passed: false, detail: `${where} changed at ${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ` and ${changed.length - 5} more` : ''}` };
}

/**
 * `unchanged` over a list or map apart from the items a where clause picks (in
 * either snapshot): "this entity may change, no other may". A list keeps its
 * order; with allow_added, items that were not there before may appear among
 * the rest, which must all still be there, in order.
 */
function evaluateUnchangedWhere(pointer: string, where: Where, except: readonly string[], allowAdded: boolean, context: PredicateContext): Verdict {
  const before = resolvePointer(context.initial, pointer).value;
  const after = resolvePointer(context.final, pointer).value;
  const at = pointer || 'the world';
  const apart = `apart from items where ${canonicalJson(where)}`;
  if (Array.isArray(before) && Array.isArray(after)) {
    const initial = before.filter((item) => !matchesWhere(item, where));
    const final = after.filter((item) => !matchesWhere(item, where));
    let next = 0;
    let extra = 0;
    for (const item of final) {
      if (next < initial.length && canonicalEquals(item, initial[next]!)) next++;
      else extra++;
    }
    if (next < initial.length) return { passed: false, detail: `${at} changed ${apart}: ${canonicalJson(initial[next]!).slice(0, 120)} is gone or altered` };
    if (extra > 0 && !allowAdded) return { passed: false, detail: `${at} changed ${apart}: ${extra} item(s) added or altered` };
    return { passed: true, detail: `${at} unchanged ${apart}` };
  }
  if (isJsonObject(before) && isJsonObject(after)) {
    const skipped = new Set(except.map(String));
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    const changed = [...keys].filter((key) => {
      if (skipped.has(key)) return false;
      const had = Object.prototype.hasOwnProperty.call(before, key);
      if ((had && matchesWhere(before[key], where)) || (Object.prototype.hasOwnProperty.call(after, key) && matchesWhere(after[key], where))) return false;
      if (!had && allowAdded) return false;
      return !canonicalEquals(before[key] ?? null, after[key] ?? null);
    }).sort();
    return changed.length === 0
      ? { passed: true, detail: `${at} unchanged ${apart}` }
      : { passed: false, detail: `${at} changed at ${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ` and ${changed.length - 5} more` : ''}` };
  }
  const same = canonicalEquals(before ?? null, after ?? null);
  return { passed: same, detail: same ? `${at} unchanged` : `${at} changed (not a list or map, so no item could be set apart)` };
}

function bounded(what: string, actual: number, predicate: Predicate): Verdict {
  const failures: string[] = [];
  if (predicate.equals !== undefined && actual !== predicate.equals) failures.push(`expected ${canonicalJson(predicate.equals)}`);
  if (predicate.min !== undefined && actual < predicate.min) failures.push(`expected at least ${predicate.min}`);
  if (predicate.max !== undefined && actual > predicate.max) failures.push(`expected at most ${predicate.max}`);
  return { passed: failures.length === 0, detail: `${what} is ${actual}${failures.length ? ', ' + failures.join(', ') : ''}` };
}

function queryValues(query: Query, context: PredicateContext): string[] | undefined {
  const snapshot = query.snapshot === 'final' ? context.final : context.initial;
  const items = collectionAt(snapshot, query.path);
  if (!items) return undefined;
  return items
    .filter((item) => matchesWhere(item, query.where as Where | undefined))
    .map((item) => fieldValue(item, query.field))
    .filter((field) => field.found && field.value !== null)
    .map((field) => renderText(field.value));
}

/** A parameter inside a regular expression stands for its value as literal text ("$124.99" matches only itself). */
function renderPattern(pattern: string, params: Readonly<Record<string, JsonValue>>): string {
  return pattern.replace(/\{\{\s*([^{}]+?)\s*\}\}/g, (_, expression: string) =>
    renderText(evaluateExpression(expression, params)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  );
}

/**
 * Case-insensitive, and only as a whole token: "42" is not found inside "1423".
 * The definition is the regular expression in mentionPattern. When both texts
 * are ASCII the same answer comes without it: /iu folds non-ASCII letters onto
 * ASCII ones (U+017F onto s, U+212A onto k), so only ASCII on both sides makes
 * the match a plain ASCII-lowercase search, and only then are the letters and
 * digits around it exactly [A-Za-z0-9].
 */
export function answerMentions(answer: string, value: string): boolean {
  if (!isAscii(value)) return mentionPattern(value).test(answer);
  const lower = asciiLowerCase(answer);
  if (lower === undefined) return mentionPattern(value).test(answer);
  const needle = value.toLowerCase();
  for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, at + 1)) {
    if (!isAsciiAlphanumeric(lower.charCodeAt(at - 1)) && !isAsciiAlphanumeric(lower.charCodeAt(at + needle.length))) return true;
    if (at >= lower.length) break;
  }
  return false;
}

const patterns = new Map<string, RegExp>();

/** The definition of a mention; compiled once per value (no g flag, so reuse keeps no state). */
function mentionPattern(value: string): RegExp {
  let pattern = patterns.get(value);
  if (!pattern) {
    const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu');
    if (patterns.size >= 4096) patterns.clear();
    patterns.set(value, pattern);
  }
  return pattern;
}

const ASCII = /^[\x00-\x7f]*$/;

function isAscii(text: string): boolean {
  return ASCII.test(text);
}

/** One answer is checked against many values in a row: keep its lowercase form. */
let lastAnswer: string | undefined;
let lastLower: string | undefined;

function asciiLowerCase(answer: string): string | undefined {
  if (answer !== lastAnswer) {
    lastAnswer = answer;
    lastLower = isAscii(answer) ? answer.toLowerCase() : undefined;
  }
  return lastLower;
}

/** Of lowercased text, so no capitals; NaN (outside the text) is no letter or digit. */
function isAsciiAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 122);
}

function evaluateAnswer(answer: NonNullable<Predicate['answer']>, context: PredicateContext): Verdict {
  const text = context.answer;
  if (text === null) return { passed: false, detail: 'the episode ended without a final answer' };
  if (answer.matches !== undefined) {
    // A linear-time matcher: a lane's pattern cannot stall the process, whatever the answer (see core/safe-pattern).
    let matched: boolean;
    try {
      matched = compilePattern(answer.matches, 'u').test(text);
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      return { passed: false, unjudged: true, detail: `answer cannot be matched against /${answer.matches}/: ${error.message}` };
    }
    const within = text.length > MAX_TEXT ? ` in its first ${MAX_TEXT} characters` : '';
    return { passed: matched, detail: `answer ${matched ? 'matches' : 'does not match'} /${answer.matches}/${within}` };
  }
  let values: string[] | undefined;
  let wantPresent: boolean;
  if (answer.contains !== undefined) {
    values = (Array.isArray(answer.contains) ? answer.contains : [answer.contains]).map(renderText);
    wantPresent = true;
  } else {
    const query = (answer.contains_all ?? answer.contains_none)!;
    values = queryValues(query, context);
    if (!values) return { passed: false, detail: `${query.path} is not a list or map` };
    wantPresent = answer.contains_all !== undefined;
    // "Names every one of nothing" would pass any answer: a query that finds nothing is a failed check, not a vacuous pass.
    if (wantPresent && values.length === 0) return { passed: false, detail: `nothing in ${query.path} matches the query, so there is nothing the answer could name` };
  }
  const wrong = values.filter((value) => answerMentions(text, value) !== wantPresent);
  if (wrong.length === 0) return { passed: true, detail: `answer ${wantPresent ? 'mentions' : 'avoids'} all of ${values.length}` };
  return { passed: false, detail: `answer ${wantPresent ? 'does not mention' : 'mentions'} ${wrong.slice(0, 5).join(', ')}${wrong.length > 5 ? ` and ${wrong.length - 5} more` : ''}` };
}
