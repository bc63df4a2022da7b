// Owns turning a task template into one concrete episode task: parameters drawn
// from the initial world snapshot with the task's seeded substream, the user
// message rendered (its phrasing drawn from the text substream when the task
// has a grammar), and the solution script rendered up to the references to
// results that only the episode itself can fill in.

import { canonicalJson } from '../core/canonical-json.js';
import type { JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { renderDeep, renderString } from '../core/template.js';
import type { UserFact } from '../core/user-facts.js';
import type { ScriptStep } from '../solutions/solution-script.js';
import type { PhrasingRules, SolutionStep, Task, TaskFact, Where } from './lane.js';
import { drawPhrasing, isGrammar } from './phrasing-grammar.js';
import { collectionAt, matchesWhere } from '../core/where-clause.js';

export interface TaskInstance {
  task: Task;
  params: Record<string, JsonValue>;
  userMessage: string;
  /** The grammar's choice path of the message; absent when the task's message is one sentence. */
  phrasing?: string;
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

/** What a task's phrasing is drawn from: the episode's text substream and the lane's shared rules. */
export interface TextDraw {
  random: Random;
  rules?: PhrasingRules;
}

export function instantiateTask(task: Task, snapshot: JsonValue, random: Random, text?: TextDraw): TaskInstance {
  const params = bindParams(task, snapshot, random);
  const facts = (task.facts ?? []).map((fact) => renderFact(fact, params));
  if (isGrammar(task.user) && !text) throw new TypeError(`task ${task.id} has a phrasing grammar: instantiateTask needs the episode's text substream`);
  const phrasing = text ? drawPhrasing(task.user, text.rules, text.random) : { template: task.user as string };
  return {
    task,
    params,
    userMessage: renderString(phrasing.template, params),
    ...(phrasing.path === undefined ? {} : { phrasing: phrasing.path }),
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
