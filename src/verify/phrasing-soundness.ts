// Owns proving that every way a task's user message can be said keeps what
// its checks need, on the seeds a lane check plays: each phrasing, rendered
// with the parameters that seed draws, must state every told fact and every
// parameter value the solution uses (the policy may only know what the user
// said), and must not give away a withheld fact, which the user is to give only
// when asked. Static checks see templates; this sees the rendered words, so a
// value that only some seeds' parameters would leave out is caught too.

import { errorMessage } from '../core/errors.js';
import { formatPointer } from '../core/json-pointer.js';
import type { JsonValue } from '../core/json-value.js';
import { substream } from '../core/random.js';
import { evaluateExpression, renderString, renderText, templateExpressions } from '../core/template.js';
import { tellsFact, type UserFact } from '../core/user-facts.js';
import type { Lane, Task } from '../lanes/lane.js';
import { phrasingsOf, type Phrasing } from '../lanes/phrasing-grammar.js';
import { bindParams, renderFact } from '../lanes/task-instance.js';
import { getWorld } from '../world/world-registry.js';
import { drawInitialSnapshot } from '../world/world-session.js';

export interface PhrasingSoundness {
  /** How many ways the message is said: 1 for a sentence. */
  phrasings: number;
  /** Phrasings rendered and checked: every phrasing on every seed whose parameters could be drawn. */
  rendered: number;
  /** Of those, the ones that left out or gave away something. */
  failed: number;
  /** One sentence per kind of fault, with the task's pointer, the first phrasing and seed it happened on, and how often. */
  problems: string[];
}

/** The parameter values the solution needs from the user's first message (not from a withheld fact's answer). */
function neededExpressions(task: Task, params: Record<string, JsonValue>): string[] {
  const answered = new Set((task.facts ?? []).filter((fact) => fact.withheld).flatMap((fact) => templateExpressions(fact.answer)));
  const used = new Set(task.solution.flatMap((step) => templateExpressions(step)));
  return [...used].filter((expression) => Object.prototype.hasOwnProperty.call(params, expression.split('.')[0]!) && !answered.has(expression));
}

function describe(phrasing: Phrasing): string {
  return phrasing.path === undefined ? 'the message' : `phrasing "${phrasing.path}"`;
}

export async function checkPhrasings(lane: Lane, task: Task, seeds: readonly number[]): Promise<PhrasingSoundness> {
  const phrasings = phrasingsOf(task.user, lane.document.phrasing);
  const pointer = formatPointer(['tasks', lane.document.tasks.indexOf(task), 'user']);
  const world = getWorld(lane.document.world.name);
  const faults = new Map<string, { first: string; count: number }>();
  const fault = (key: string, sentence: () => string) => {
    const known = faults.get(key);
    if (known) known.count++;
    else faults.set(key, { first: sentence(), count: 1 });
  };
  let rendered = 0;
  let failed = 0;
  for (const seed of seeds) {
    let params: Record<string, JsonValue>;
    try {
      const snapshot = await drawInitialSnapshot(world, substream(seed, 'world'), lane.document.world.config ?? {}, lane.document.produced_at);
      params = bindParams(task, snapshot, substream(seed, `task:${task.id}`));
    } catch {
      continue; // The solution's own run reports parameters that cannot be drawn.
    }
    const facts: UserFact[] = (task.facts ?? []).map((fact) => renderFact(fact, params));
    const needed = neededExpressions(task, params).map((expression) => ({ expression, text: renderText(evaluateExpression(expression, params)) }));
    for (const phrasing of phrasings) {
      rendered++;
      let message: string;
      try {
        message = renderString(phrasing.template, params);
      } catch (error) {
        failed++;
        fault(`render:${phrasing.path}`, () => `${pointer}: ${describe(phrasing)} cannot be said on seed ${seed}: ${errorMessage(error)}`);
        continue;
      }
      let bad = false;
      const flag = (key: string, sentence: () => string) => {
        bad = true;
        fault(key, sentence);
      };
      const quoted = JSON.stringify(message);
      for (const fact of facts) {
        if (!fact.withheld && !tellsFact(message, fact)) {
          flag(`told:${fact.id}`, () => `${pointer}: ${describe(phrasing)} does not tell fact "${fact.id}" (${JSON.stringify(fact.value)}) on seed ${seed}: ${quoted}; a told fact is in every first message`);
        }
        if (fact.withheld && tellsFact(message, fact)) {
          flag(`withheld:${fact.id}`, () => `${pointer}: ${describe(phrasing)} gives away withheld fact "${fact.id}" (${JSON.stringify(fact.value)}) on seed ${seed}: ${quoted}; the user gives it only when asked`);
        }
      }
      for (const { expression, text } of needed) {
        if (!message.includes(text)) {
          flag(`needed:${expression}`, () => `${pointer}: ${describe(phrasing)} does not state {{${expression}}} (${JSON.stringify(text)}) on seed ${seed}: ${quoted}; the solution uses it and the policy may only know what the user said`);
        }
      }
      if (bad) failed++;
    }
  }
  const problems = [...faults.values()].map(({ first, count }) => (count > 1 ? `${first} (${count} times in all)` : first));
  return { phrasings: phrasings.length, rendered, failed, problems };
}
