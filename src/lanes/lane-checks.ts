// Owns the checks a lane must pass beyond its JSON Schema: names that must
// resolve (world, tools, variants), template references that must be defined
// before use, phrasing grammars whose every phrasing states what the solution
// needs, and predicates built of exactly one operator. Every problem is
// collected with the JSON pointer where it is, never just the first one.

import type { Problem } from '../core/errors.js';
import { formatPointer, parsePointer } from '../core/json-pointer.js';
import { patternProblem } from '../core/safe-pattern.js';
import { compileValidator } from '../core/schema-validator.js';
import { deepTemplateRoots, templateExpressions, templateRoots } from '../core/template.js';
import { SCRIPTED_VARIANTS } from '../solutions/solution-script.js';
import { isServerWorld } from '../world/server-world.js';
import { findWorld, worldNames } from '../world/world-registry.js';
import { LIST_FAULTS, type FaultPlan } from '../world/faults/fault-plan.js';
import type { LaneDocument, PhrasingRules, Predicate, SolutionStep, Task } from './lane.js';
import { compileGrammar, isGrammar, START_RULE, type Phrasing } from './phrasing-grammar.js';

export function checkLane(document: LaneDocument, file: string, expectedName: string | undefined): Problem[] {
  const problems: Problem[] = [];
  const at = (tokens: (string | number)[], reason: string) => problems.push({ where: `${file}: ${formatPointer(tokens)}`, reason });

  if (expectedName !== undefined && document.name !== expectedName) {
    at(['name'], `is "${document.name}" but the file is ${expectedName}.json; rename one so they match`);
  }

  const world = findWorld(document.world.name);
  if (!world) {
    at(['world', 'name'], `unknown world "${document.world.name}"; known worlds: ${worldNames().join(', ')}`);
  } else {
    for (const error of compileValidator(world.configSchema, { pointers: true })(document.world.config ?? {})) {
      at(['world', 'config', ...parsePointer(error.path)], error.reason);
    }
  }

  for (const variant of Object.keys(document.policy.variants ?? {})) {
    if (!(SCRIPTED_VARIANTS as readonly string[]).includes(variant)) {
      at(['policy', 'variants', variant], `unknown variant; scripted variants are: ${SCRIPTED_VARIANTS.join(', ')}`);
    }
  }
  if (document.policy.variants && Object.values(document.policy.variants).every((weight) => weight === 0)) {
    at(['policy', 'variants'], 'every weight is 0; give at least one variant a positive weight');
  }

  const [from, to] = document.seeds.split('..').map(Number);
  if (from! > to!) at(['seeds'], `"${document.seeds}" ends before it starts; write ${to}..${from}`);

  const toolNames = new Set(world?.tools.map((tool) => tool.name) ?? []);
  if (document.faults) checkFaultPlan(document.faults, ['faults'], world ? toolNames : undefined, at);
  const seen = new Set<string>();
  const reached = new Set<string>();
  document.tasks.forEach((task, index) => {
    if (seen.has(task.id)) at(['tasks', index, 'id'], `duplicate task id "${task.id}"`);
    seen.add(task.id);
    checkTask(task, ['tasks', index], world ? toolNames : undefined, at, { shared: document.phrasing, reached });
    const volatile = world && isServerWorld(world) ? (world.volatile ?? []) : [];
    if (volatile.length > 0) task.predicates.forEach((predicate, position) => checkVolatilePins(predicate, ['tasks', index, 'predicates', position], volatile, at));
  });
  for (const name of Object.keys(document.phrasing ?? {})) {
    if (name === START_RULE) at(['phrasing', name], `"${START_RULE}" is where each task's own grammar starts; a lane shares only the rules tasks refer to`);
    else if (!reached.has(name)) at(['phrasing', name], `is never used: no task's phrasing reaches it; use it as <${name}> in a task's "user" or remove it`);
  }
  return problems;
}

export type Report = (tokens: (string | number)[], reason: string) => void;

function checkReferences(text: unknown, known: ReadonlySet<string>, tokens: (string | number)[], at: Report): void {
  let roots: string[];
  try {
    roots = typeof text === 'string' ? templateRoots(text) : deepTemplateRoots(text);
  } catch (error) {
    at(tokens, (error as Error).message);
    return;
  }
  for (const root of new Set(roots)) {
    if (!known.has(root)) {
      at(tokens, `template refers to "${root}", which is not defined here (defined: ${[...known].join(', ') || 'nothing'})`);
    }
  }
}

/** The lane's shared phrasing rules, and the ones some task's grammar reaches (collected). */
interface PhrasingContext {
  shared: PhrasingRules | undefined;
  reached: Set<string>;
}

/** A predicate may not pin a value the world marks volatile (a commit hash, a generated id): it differs between honest runs. A `{{param}}` segment may be any key. */
function checkVolatilePins(predicate: Predicate, base: (string | number)[], volatile: readonly string[], at: Report): void {
  if (predicate.path !== undefined && (predicate.equals !== undefined || predicate.contains !== undefined)) {
    const tokens = parsePointer(predicate.path.startsWith('/') ? predicate.path : `/${predicate.path}`);
    const pinned = volatile.find((pattern) => {
      const wanted = parsePointer(pattern);
      return wanted.length === tokens.length && wanted.every((segment, index) => segment === '*' || segment === tokens[index] || tokens[index]!.includes('{{'));
    });
    if (pinned) at([...base, 'path'], `pins the value at ${predicate.path}, which the world marks volatile (${pinned}): its value differs between honest runs; compare it through a param drawn from the snapshot, or judge another field`);
  }
  predicate.all?.forEach((inner, index) => checkVolatilePins(inner, [...base, 'all', index], volatile, at));
  predicate.any?.forEach((inner, index) => checkVolatilePins(inner, [...base, 'any', index], volatile, at));
  if (predicate.not) checkVolatilePins(predicate.not, [...base, 'not'], volatile, at);
}

function checkTask(task: Task, base: (string | number)[], toolNames: ReadonlySet<string> | undefined, at: Report, phrasing: PhrasingContext): void {
  const params = checkParams(task.params, new Set(), [...base, 'params'], at);
  const phrasings = checkUserText(task, params, base, at, phrasing);
  const factIds = checkFacts(task, params, base, at);
  checkSolution(task.solution, params, [...base, 'solution'], toolNames, at, factIds);
  if (task.guess) {
    checkSolution(task.guess, params, [...base, 'guess'], toolNames, at, factIds);
    if (!task.solution.some((step) => 'ask' in step)) at([...base, 'guess'], 'is played instead of the first question, but the solution asks nothing; add an {"ask": ...} step or drop "guess"');
  }

  // The policy may know only what the user said: a parameter value the
  // solution uses must appear, by the same expression, in the user message
  // (in every phrasing of it) or in the answer the user gives to a question
  // about a withheld fact.
  let answered: Set<string>;
  let statedBy: Set<string>[];
  try {
    answered = new Set((task.facts ?? []).filter((fact) => fact.withheld).flatMap((fact) => templateExpressions(fact.answer)));
    statedBy = phrasings.map((entry) => new Set(templateExpressions(entry.template)));
  } catch {
    answered = new Set();
    statedBy = [];
  }
  const unstated = new Map<string, { step: number; missing: Phrasing[] }>();
  task.solution.forEach((step, index) => {
    let used: string[];
    try {
      used = templateExpressions(step);
    } catch {
      return;
    }
    for (const expression of new Set(used)) {
      if (phrasings.length === 0 || !params.has(expression.split('.')[0]!) || answered.has(expression)) continue;
      const missing = phrasings.filter((_, position) => !statedBy[position]?.has(expression));
      if (missing.length === phrasings.length) {
        at([...base, 'solution', index], `uses {{${expression}}}, which the user message does not state: the policy may only know what the user said`);
      } else if (missing.length > 0 && !unstated.has(expression)) {
        unstated.set(expression, { step: index, missing });
      }
    }
  });
  for (const [expression, { step, missing }] of unstated) {
    const [first] = missing;
    const more = missing.length > 1 ? ` (and ${missing.length - 1} more of its ${phrasings.length} phrasings)` : '';
    at(
      [...base, 'user'],
      `phrasing "${first!.path}" (${JSON.stringify(first!.template)}) does not state {{${expression}}}, which ${formatPointer([...base, 'solution', step])} uses${more}: ` +
        'the policy may only know what the user said, whichever way it is said',
    );
  }

  const ids = new Set<string>();
  task.predicates.forEach((predicate, index) => {
    if (ids.has(predicate.id)) at([...base, 'predicates', index, 'id'], `duplicate predicate id "${predicate.id}"`);
    ids.add(predicate.id);
    checkPredicate(predicate, [...base, 'predicates', index], params, toolNames, at, factIds);
  });
  const wrongIds = new Set<string>();
  task.wrong?.forEach((wrong, index) => {
    const tokens = [...base, 'wrong', index];
    if (wrongIds.has(wrong.id)) at([...tokens, 'id'], `duplicate wrong trajectory id "${wrong.id}"`);
    wrongIds.add(wrong.id);
    for (const name of Object.keys(wrong.params ?? {})) {
      if (params.has(name)) at([...tokens, 'params', name], `"${name}" is already a parameter of the task; give it another name`);
    }
    const known = checkParams(wrong.params, params, [...tokens, 'params'], at);
    checkSolution(wrong.solution, known, [...tokens, 'solution'], toolNames, at, factIds);
  });
}

/**
 * The task's message: a sentence whose templates are defined, or a grammar
 * that compiles (rules resolve, no cycle, not too many phrasings, no two the
 * same) with defined templates. Returns its phrasings; none when it is broken.
 */
function checkUserText(task: Task, params: ReadonlySet<string>, base: (string | number)[], at: Report, phrasing: PhrasingContext): Phrasing[] {
  if (!isGrammar(task.user)) {
    checkReferences(task.user, params, [...base, 'user'], at);
    return [{ template: task.user }];
  }
  const grammar = compileGrammar(task.user, phrasing.shared, { task: [...base, 'user'], lane: ['phrasing'] });
  for (const problem of grammar.problems) at(problem.tokens, problem.reason);
  for (const name of grammar.reached) if (!Object.prototype.hasOwnProperty.call(task.user, name)) phrasing.reached.add(name);
  for (const alternative of grammar.alternatives) {
    // A shared rule is checked with each task that uses it, so say which task lacks the name.
    checkReferences(alternative.text, params, alternative.tokens, (tokens, reason) => at(tokens, alternative.shared ? `${reason}, in task "${task.id}"` : reason));
  }
  return grammar.problems.length > 0 ? [] : grammar.phrasings;
}

/** Facts: unique ids, defined templates, and answers that give the fact away. Returns the fact ids. */
function checkFacts(task: Task, params: ReadonlySet<string>, base: (string | number)[], at: Report): Set<string> {
  const ids = new Set<string>();
  task.facts?.forEach((fact, index) => {
    const tokens = [...base, 'facts', index];
    if (ids.has(fact.id)) at([...tokens, 'id'], `duplicate fact id "${fact.id}"`);
    ids.add(fact.id);
    for (const key of ['value', 'answer', 'question'] as const) checkReferences(fact[key], params, [...tokens, key], at);
    if (!fact.answer.includes(fact.value)) at([...tokens, 'answer'], `does not contain the fact's value "${fact.value}": a user who answers must give the fact`);
    if (fact.asked_by.length === 0) at([...tokens, 'asked_by'], 'needs at least one word that asks for the fact');
  });
  if (task.goal !== undefined) checkReferences(task.goal, params, [...base, 'goal'], at);
  return ids;
}

/** Checks parameter templates in order; returns every name defined after them. */
function checkParams(specs: Task['params'], defined: ReadonlySet<string>, base: (string | number)[], at: Report): Set<string> {
  const known = new Set(defined);
  for (const [name, spec] of Object.entries(specs ?? {})) {
    if ('from' in spec) {
      checkReferences(spec.from, known, [...base, name, 'from'], at);
      if (spec.where) checkReferences(spec.where, known, [...base, name, 'where'], at);
    }
    known.add(name);
  }
  return known;
}

function checkSolution(
  solution: readonly SolutionStep[],
  params: ReadonlySet<string>,
  base: (string | number)[],
  toolNames: ReadonlySet<string> | undefined,
  at: Report,
  factIds: ReadonlySet<string> = new Set(),
): void {
  const known = new Set(params);
  const checkTool = (name: string, where: (string | number)[]) => {
    if (toolNames && !toolNames.has(name)) at(where, `unknown tool "${name}"; this world has: ${[...toolNames].join(', ')}`);
  };
  const define = (name: string | undefined, where: (string | number)[]) => {
    if (name === undefined) return;
    if (known.has(name)) at(where, `"${name}" is already defined`);
    known.add(name);
  };
  solution.forEach((step, index) => {
    const tokens = [...base, index];
    if ('answer' in step) {
      if (index !== solution.length - 1) at(tokens, 'an answer must be the last step of a solution');
      checkReferences(step.answer, known, [...tokens, 'answer'], at);
      return;
    }
    if ('ask' in step) {
      if (!factIds.has(step.ask)) at([...tokens, 'ask'], `asks for "${step.ask}", which is not one of the task's facts (${[...factIds].join(', ') || 'it has none'})`);
      return;
    }
    if ('parallel' in step) {
      // Calls of one turn cannot use each other's results: only what was known before the group.
      const before = new Set(known);
      step.parallel.forEach((call, position) => {
        checkTool(call.call, [...tokens, 'parallel', position, 'call']);
        checkReferences(call.arguments, before, [...tokens, 'parallel', position, 'arguments'], at);
        define(call.as, [...tokens, 'parallel', position, 'as']);
      });
      return;
    }
    checkTool(step.call, [...tokens, 'call']);
    checkReferences(step.arguments, known, [...tokens, 'arguments'], at);
    if (step.before) {
      checkTool(step.before.call, [...tokens, 'before', 'call']);
      checkReferences(step.before.arguments, known, [...tokens, 'before', 'arguments'], at);
    }
    define(step.as, [...tokens, 'as']);
    if (step.after) {
      checkTool(step.after.call, [...tokens, 'after', 'call']);
      checkReferences(step.after.arguments, known, [...tokens, 'after', 'arguments'], at);
      checkReferences(step.after.expect, known, [...tokens, 'after', 'expect'], at);
      if (step.after.expect.equals !== undefined && step.after.expect.contains !== undefined) {
        at([...tokens, 'after', 'expect'], 'use one of equals or contains, not both');
      }
    }
  });
  const last = solution[solution.length - 1];
  if (last && !('answer' in last)) at(base, 'must end with an {"answer": ...} step');
}

export function checkFaultPlan(plan: FaultPlan, base: (string | number)[], toolNames: ReadonlySet<string> | undefined, at: Report): void {
  const ids = new Set<string>();
  if (plan.select === 'one' && plan.faults.length === 0) at([...base, 'select'], '"one" needs at least one fault to draw from');
  plan.faults.forEach((entry, index) => {
    const tokens = [...base, 'faults', index];
    if (ids.has(entry.id)) at([...tokens, 'id'], `duplicate fault id "${entry.id}"`);
    ids.add(entry.id);
    const listFault = LIST_FAULTS.has(entry.kind);
    if (listFault && (entry.tools || entry.calls)) at(tokens, `${entry.kind} acts on catalog listings: use "lists", not "tools" or "calls"`);
    if (!listFault && entry.lists) at([...tokens, 'lists'], `${entry.kind} acts on tool calls: use "tools" or "calls", not "lists"`);
    entry.tools?.forEach((tool, position) => {
      if (toolNames && !toolNames.has(tool)) at([...tokens, 'tools', position], `unknown tool "${tool}"; this world has: ${[...toolNames].join(', ')}`);
    });
  });
}

const PATH_OPERATORS = ['equals', 'contains', 'exists'] as const;
const BOUNDS = ['equals', 'min', 'max'] as const;

function checkPredicate(
  predicate: Predicate,
  tokens: (string | number)[],
  params: ReadonlySet<string>,
  toolNames: ReadonlySet<string> | undefined,
  at: Report,
  factIds: ReadonlySet<string>,
): void {
  const groups = (['all', 'any', 'not', 'path', 'unchanged', 'count', 'calls', 'answer', 'informed', 'questions'] as const).filter((key) => predicate[key] !== undefined);
  if (groups.length !== 1) {
    at(tokens, `needs exactly one of all, any, not, path, unchanged, count, calls, answer, informed, questions (found: ${groups.join(', ') || 'none'})`);
    return;
  }
  const [group] = groups;
  const present = (keys: readonly string[]) => keys.filter((key) => (predicate as Record<string, unknown>)[key] !== undefined);
  const allowed: Record<string, readonly string[]> = {
    all: [], any: [], not: [], answer: [], informed: [],
    path: PATH_OPERATORS, unchanged: ['except', 'allow_added', 'except_where'], count: BOUNDS, calls: BOUNDS, questions: BOUNDS,
  };
  for (const key of ['equals', 'contains', 'exists', 'except', 'allow_added', 'except_where', 'min', 'max']) {
    if ((predicate as Record<string, unknown>)[key] !== undefined && !allowed[group!]!.includes(key)) {
      at([...tokens, key], `is not used with "${group}"`);
    }
  }
  if (group === 'path' && present(PATH_OPERATORS).length !== 1) {
    at(tokens, 'a "path" predicate needs exactly one of equals, contains, exists');
  }
  const fact = group === 'informed' ? predicate.informed!.fact : group === 'questions' ? predicate.questions!.fact : undefined;
  if (fact !== undefined && !factIds.has(fact)) at([...tokens, group!, 'fact'], `"${fact}" is not one of the task's facts (${[...factIds].join(', ') || 'it has none'})`);
  if (group === 'informed' && toolNames && !toolNames.has(predicate.informed!.before)) {
    at([...tokens, 'informed', 'before'], `unknown tool "${predicate.informed!.before}"`);
  }
  if ((group === 'count' || group === 'calls' || group === 'questions') && present(BOUNDS).length === 0) {
    at(tokens, `a "${group}" predicate needs equals, min or max`);
  }
  if (group === 'calls' && toolNames && !toolNames.has(predicate.calls!.tool)) {
    at([...tokens, 'calls', 'tool'], `unknown tool "${predicate.calls!.tool}"`);
  }
  if (group === 'answer' && predicate.answer!.matches !== undefined) {
    // Templates are filled in before the pattern is built; a parameter stands in as plain text here.
    const problem = patternProblem(predicate.answer!.matches.replace(/\{\{[^{}]*\}\}/g, 'x'), 'u');
    if (problem) {
      at([...tokens, 'answer', 'matches'], problem.kind === 'invalid' ? `not a valid regular expression: ${problem.message}` : `${problem.message}; ${problem.fix}`);
    }
  }
  for (const pointerKey of ['path', 'unchanged'] as const) {
    const pointer = predicate[pointerKey];
    if (pointer !== undefined && pointer !== '' && !pointer.startsWith('/')) {
      at([...tokens, pointerKey], `"${pointer}" is not a JSON pointer; start it with "/"`);
    }
  }
  const { all, any, not, ...leaf } = predicate;
  checkReferences(leaf, params, tokens, at);
  for (const [key, children] of [['all', all], ['any', any]] as const) {
    children?.forEach((child, index) => checkPredicate(child, [...tokens, key, index], params, toolNames, at, factIds));
  }
  if (not) checkPredicate(not, [...tokens, 'not'], params, toolNames, at, factIds);
}
