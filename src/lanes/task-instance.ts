// Owns turning a task template into one concrete episode task: parameters drawn
// from the initial world snapshot with the task's seeded substream, the user
// message rendered, and the solution script rendered up to the references to
// results that only the episode itself can fill in.

import { canonicalJson } from '../core/canonical-json.js';
import type { JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { renderDeep, renderString } from '../core/template.js';
import type { UserFact } from '../core/user-facts.js';
import type { ScriptStep } from '../policy/scripted-policy.js';
import type { SolutionStep, Task, TaskFact, Where } from './lane.js';
import { collectionAt, matchesWhere } from './where-clause.js';

export interface TaskInstance {
  task: Task;
  params: Record<string, JsonValue>;
  userMessage: string;
  script: ScriptStep[];
  /** What the user means, rendered; empty when the task declares no facts (then no user simulator runs). */
  facts: UserFact[];
  /** The task's guess script, rendered as far as the parameters go. */
  guess?: ScriptStep[];
}

export class TaskBindingError extends Error {
  constructor(readonly taskId: string, readonly param: string, reason: string) {
    super(`task ${taskId}: parameter "${param}": ${reason}`);
    this.name = 'TaskBindingError';
  }
}

export function bindParams(task: Task, snapshot: JsonValue, random: Random): Record<string, JsonValue> {
  const params: Record<string, JsonValue> = {};
  for (const [name, spec] of Object.entries(task.params ?? {})) {
    if ('choice' in spec) {
      params[name] = random.pick(spec.choice);
    } else if ('token' in spec) {
      params[name] = (spec.token.prefix ?? '') + random.hex(spec.token.length);
    } else {
      const items = collectionAt(snapshot, renderString(spec.from, params));
      if (!items) throw new TaskBindingError(task.id, name, `${spec.from} is not a list or map in the initial snapshot`);
      const where = spec.where ? (renderDeep(spec.where, params) as Where) : undefined;
      const candidates = items.filter((item) => matchesWhere(item, where));
      if (candidates.length === 0) {
        throw new TaskBindingError(task.id, name, `no item of ${spec.from} matches ${canonicalJson(where ?? {})}`);
      }
      params[name] = random.pick(candidates) as JsonValue;
    }
  }
  return params;
}

export function instantiateTask(task: Task, snapshot: JsonValue, random: Random): TaskInstance {
  const params = bindParams(task, snapshot, random);
  const facts = (task.facts ?? []).map((fact) => renderFact(fact, params));
  return {
    task,
    params,
    userMessage: renderString(task.user, params),
    script: renderScript(task.solution, params, facts),
    facts,
    ...(task.guess ? { guess: renderScript(task.guess, params, facts) } : {}),
  };
}

export function renderFact(fact: TaskFact, params: Record<string, JsonValue>): UserFact {
  return {
    id: fact.id,
    value: renderString(fact.value, params),
    withheld: fact.withheld === true,
    asked_by: fact.asked_by,
    answer: renderString(fact.answer, params),
    question: renderString(fact.question, params),
  };
}

/** Parameters filled in; references to results the episode has not produced yet are left for the policy. */
function renderScript(steps: readonly SolutionStep[], params: Record<string, JsonValue>, facts: readonly UserFact[]): ScriptStep[] {
  return steps.map((step): ScriptStep => {
    if ('answer' in step) return { answer: String(renderDeep(step.answer, params, { partial: true })) };
    if ('ask' in step) return { ask: step.ask, question: facts.find((fact) => fact.id === step.ask)?.question ?? `What is the ${step.ask}?` };
    return renderDeep(step, params, { partial: true }) as ScriptStep;
  });
}
