// Owns drawing a task's record among those its change would still change. The
// golden seeds picked records the task's goal did not yet hold for; on another
// seed the same `from` may pick an issue already closed, a task already done,
// where doing nothing passes and the task teaches nothing. So the record's
// parameter is narrowed by the negation of one change the predicates ask for:
// `state: "closed"` adds `state: {not: "closed"}`, `labels: {includes: "bug"}`
// adds `labels: {excludes: "bug"}`. The proof that follows decides whether a
// record so narrowed still exists on every checked seed.

import type { JsonValue } from '../core/json-value.js';
import { isMatcher, type Matcher, type Where } from '../core/where-clause.js';
import type { ParamSpec, Predicate } from '../lanes/lane.js';

const TEMPLATE = /^\{\{([A-Za-z_][A-Za-z0-9_]*)\.[^{}]+\}\}$/;

/** The parameters with each record's `where` narrowed to records whose goal is unmet; the input is not changed. */
export function narrowToUnmetGoal(params: Record<string, ParamSpec>, changes: readonly Predicate[]): Record<string, ParamSpec> {
  const narrowed: Record<string, ParamSpec> = { ...params };
  const done = new Set<string>();
  for (const predicate of changes) {
    const where = predicate.count?.where;
    if (!where || predicate.equals !== 1) continue;
    const param = recordParam(where, narrowed);
    if (!param || done.has(param)) continue;
    const spec = narrowed[param] as { from: string; where?: Where };
    for (const [field, condition] of Object.entries(where)) {
      if (spec.where && field in spec.where) continue;
      const negated = negation(condition);
      if (!negated) continue;
      narrowed[param] = { ...spec, where: { ...spec.where, [field]: negated } };
      done.add(param);
      break;
    }
  }
  return narrowed;
}

/** The parameter drawn `from` a collection whose field the where's identity names, e.g. {{target.number}}. */
function recordParam(where: Where, params: Record<string, ParamSpec>): string | undefined {
  for (const value of Object.values(where)) {
    if (typeof value !== 'string') continue;
    const name = TEMPLATE.exec(value)?.[1];
    const spec = name === undefined ? undefined : params[name];
    if (spec && 'from' in spec) return name;
  }
  return undefined;
}

function negation(condition: JsonValue | Matcher): Matcher | undefined {
  if (isMatcher(condition)) {
    if ('includes' in condition && literal(condition.includes)) return { excludes: condition.includes };
    if ('excludes' in condition && literal(condition.excludes)) return { includes: condition.excludes };
    return undefined;
  }
  return literal(condition as JsonValue) ? { not: condition as JsonValue } : undefined;
}

/** A value the record's own draw can compare: no template (a template names another parameter or a fresh value). */
function literal(value: JsonValue): boolean {
  if (typeof value === 'string') return !value.includes('{{');
  return value === null || typeof value === 'number' || typeof value === 'boolean';
}
