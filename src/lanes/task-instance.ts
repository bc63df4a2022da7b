// Owns turning a task template into one concrete episode task: parameters drawn
// from the initial world snapshot with the task's seeded substream, the user
// message rendered, and the solution script rendered up to the references to
// results that only the episode itself can fill in.

import { canonicalJson } from '../core/canonical-json.js';
import type { JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { renderDeep, renderString } from '../core/template.js';
import type { SolutionStep, Task, Where } from './lane.js';
import { collectionAt, matchesWhere } from './where-clause.js';

export interface TaskInstance {
  task: Task;
  params: Record<string, JsonValue>;
  userMessage: string;
  script: SolutionStep[];
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
  return {
    task,
    params,
    userMessage: renderString(task.user, params),
    script: task.solution.map((step) =>
      'answer' in step
        ? { answer: String(renderDeep(step.answer, params, { partial: true })) }
        : (renderDeep(step, params, { partial: true }) as SolutionStep),
    ),
  };
}
