// Owns a lane's rewrites cache: new phrasings of its tasks' requests that a
// local model wrote ahead of a run (`lanes rewrite`), kept in a file next to
// the lane with the writer model's identity. A lane that names the file draws
// each task's message from its own phrasings and the cached ones alike; the
// cache is part of the lane's hash, and what a rewritten task's records were
// drawn from is pinned by the writer actor. No run ever asks the model.

import { templateExpressions } from '../core/template.js';
import type { LaneDocument, PhrasingRules, RewritesCache, UserText } from './lane.js';
import { START_RULE, isGrammar, phrasingsOf } from './phrasing-grammar.js';

/** The cache file a lane names, next to the lane file. */
export function rewritesFileName(laneName: string): string {
  return `${laneName}.rewrites.json`;
}

/** A task's message with the cached phrasings added as more alternatives of its start rule. */
export function withRewrites(user: UserText, rewrites: readonly string[] | undefined): UserText {
  if (!rewrites || rewrites.length === 0) return user;
  if (!isGrammar(user)) return { [START_RULE]: [user, ...rewrites] };
  const start = user[START_RULE];
  return { ...user, [START_RULE]: [...(Array.isArray(start) ? start : start === undefined ? [] : [start]), ...rewrites] };
}

/** The document as episodes see it: each rewritten task's message extended by its cached phrasings. */
export function applyRewrites(document: LaneDocument, cache: RewritesCache): LaneDocument {
  return { ...document, tasks: document.tasks.map((task) => (cache.tasks[task.id] ? { ...task, user: withRewrites(task.user, cache.tasks[task.id]) } : task)) };
}

/**
 * Why a phrasing the writer returned cannot be kept, or undefined when it can:
 * it must keep exactly the request's placeholders (so it states the same
 * facts and no invented one) and must not read as a grammar rule reference.
 */
export function rewriteProblem(candidate: string, user: UserText, shared: PhrasingRules | undefined): string | undefined {
  if (/[<>]/.test(candidate)) return 'uses < or >, which a phrasing grammar reads as a rule reference';
  if (candidate.length > 2000) return 'is longer than 2,000 characters';
  let found: string[];
  try {
    found = templateExpressions(candidate);
  } catch (error) {
    return `has a broken placeholder: ${(error as Error).message}`;
  }
  const expected = new Set(templateExpressions(phrasingsOf(user, shared)[0]!.template));
  const got = new Set(found);
  const missing = [...expected].filter((expression) => !got.has(expression));
  const extra = [...got].filter((expression) => !expected.has(expression));
  if (missing.length) return `drops ${missing.map((expression) => `{{${expression}}}`).join(', ')}`;
  if (extra.length) return `adds ${extra.map((expression) => `{{${expression}}}`).join(', ')}, which the request does not have`;
  if (phrasingsOf(user, shared).some((phrasing) => phrasing.template === candidate)) return 'is one of the phrasings the task already has';
  return undefined;
}
