// Owns phrasing grammars: a task's user message written as a few rules of
// alternatives instead of one sentence, so episodes of one task ask in many
// ways. A rule is a list of alternatives; an alternative is text with
// `{{param}}` templates and references to other rules: `<rule>`, `<rule?>`
// (the rule or nothing), `<^rule>` (its first letter in upper case). A task
// starts at its rule `say`; a lane may share rules (greetings, closings) under
// its top-level `phrasing`, and a task's own rule of the same name wins.
//
// The grammar is finite and small by construction: every phrasing is
// enumerated (at most MAX_PHRASINGS), which is what lets `lanes check` prove
// each one states what the solution needs, and lets an episode draw one
// uniformly, so every phrasing is as likely as any other.

import { FactoryError } from '../core/errors.js';
import type { Random } from '../core/random.js';
import type { PhrasingRules, UserText } from './lane.js';

/** Where a task's message starts. */
export const START_RULE = 'say';
/** At most this many phrasings per task: enough for variety, few enough to check every one. */
export const MAX_PHRASINGS = 1000;

const RULE_NAME = /^[a-z][a-z0-9_]*$/;
/** Anything shaped like a reference, valid or not, so a mistyped one is reported instead of printed. */
const REFERENCE_LIKE = /<(\^?)([A-Za-z0-9_-]+)(\??)>/g;
/** A greeting without its trailing space: "Hi!Close". */
const RUN_TOGETHER = /[a-z0-9][.!?][A-Z]/;

export interface Phrasing {
  /** The message as a template: rules expanded and tidied, `{{param}}` templates left for the parameters. */
  template: string;
  /** The choices that made it, in expansion order (`say=1 greet=- ask=0`; `-` is an optional rule left out); absent for a plain sentence. */
  path?: string;
}

export interface GrammarProblem {
  /** JSON pointer tokens from the lane's root. */
  tokens: (string | number)[];
  reason: string;
}

type Piece = { text: string } | { rule: string; optional: boolean; capital: boolean };

interface Rule {
  name: string;
  alternatives: Piece[][];
  /** Pointer tokens of the rule in the lane. */
  tokens: (string | number)[];
  shared: boolean;
}

interface Expansion {
  text: string;
  choices: string[];
}

export interface GrammarLocation {
  /** Pointer tokens of the task's `user`. */
  task: (string | number)[];
  /** Pointer tokens of the lane's shared rules. */
  lane: (string | number)[];
}

const DEFAULT_LOCATION: GrammarLocation = { task: ['user'], lane: ['phrasing'] };

function alternativesOf(value: string | string[]): string[] {
  return typeof value === 'string' ? [value] : value;
}

function parseAlternative(text: string, tokens: (string | number)[], problems: GrammarProblem[]): Piece[] {
  const pieces: Piece[] = [];
  let from = 0;
  for (const match of text.matchAll(REFERENCE_LIKE)) {
    const [whole, caret, name, question] = match;
    if (!RULE_NAME.test(name!)) {
      problems.push({ tokens, reason: `"${whole}" is not a rule reference: rule names are lower-case letters, digits and _, starting with a letter` });
      continue;
    }
    if (match.index > from) pieces.push({ text: text.slice(from, match.index) });
    pieces.push({ rule: name!, optional: question === '?', capital: caret === '^' });
    from = match.index + whole.length;
  }
  if (from < text.length) pieces.push({ text: text.slice(from) });
  return pieces;
}

/** Spaces left by an empty optional part are dropped: no doubled space, none before punctuation, none at the ends. */
export function tidy(text: string): string {
  return text.replace(/ {2,}/g, ' ').replace(/ +([,.;:!?])/g, '$1').trim();
}

function capitalise(text: string): string {
  const at = text.search(/\S/);
  if (at < 0 || text.startsWith('{{', at)) return text;
  return text.slice(0, at) + text[at]!.toUpperCase() + text.slice(at + 1);
}

/** The path as recorded: each choice in expansion order. */
function formatPath(choices: readonly string[]): string {
  return choices.join(' ');
}

/**
 * A task's grammar, compiled: rules resolved, checked for cycles and size.
 * `problems` lists everything wrong, each at its place in the lane; the
 * phrasings are there only when there are none.
 */
export interface CompiledGrammar {
  problems: GrammarProblem[];
  phrasings: Phrasing[];
  /** Rules a phrasing of this task can reach, shared ones included. */
  reached: Set<string>;
  /** Every rule alternative the task can reach, with its pointer: for template checks. */
  alternatives: { text: string; tokens: (string | number)[]; shared: boolean }[];
}

export function compileGrammar(user: PhrasingRules, shared: PhrasingRules | undefined, location: GrammarLocation = DEFAULT_LOCATION): CompiledGrammar {
  const problems: GrammarProblem[] = [];
  const rules = new Map<string, Rule>();
  const add = (source: PhrasingRules, base: (string | number)[], isShared: boolean) => {
    for (const [name, value] of Object.entries(source)) {
      const tokens = [...base, name];
      if (!RULE_NAME.test(name)) {
        problems.push({ tokens, reason: 'is not a rule name: lower-case letters, digits and _, starting with a letter' });
        continue;
      }
      const alternatives = alternativesOf(value).map((text, index) => parseAlternative(text, typeof value === 'string' ? tokens : [...tokens, index], problems));
      rules.set(name, { name, alternatives, tokens, shared: isShared });
    }
  };
  add(shared ?? {}, location.lane, true);
  add(user, location.task, false);
  const start = rules.get(START_RULE);
  if (!start || start.shared) {
    problems.push({ tokens: location.task, reason: `a phrasing grammar starts at its rule "${START_RULE}"; add "${START_RULE}": ["..."]` });
    return { problems, phrasings: [], reached: new Set(), alternatives: [] };
  }

  // Walk from the start: unknown references, cycles, and what is reached.
  const reached = new Set<string>();
  const alternatives: CompiledGrammar['alternatives'] = [];
  const state = new Map<string, 'open' | 'done'>();
  let cyclic = false;
  const visit = (rule: Rule, trail: string[]) => {
    state.set(rule.name, 'open');
    reached.add(rule.name);
    const source = rule.shared ? shared! : user;
    const value = source[rule.name]!;
    rule.alternatives.forEach((pieces, index) => {
      const tokens = typeof value === 'string' ? rule.tokens : [...rule.tokens, index];
      alternatives.push({ text: alternativesOf(value)[index]!, tokens, shared: rule.shared });
      for (const piece of pieces) {
        if (!('rule' in piece)) continue;
        const target = rules.get(piece.rule);
        if (!target) {
          const known = [...rules.keys()].filter((name) => name !== START_RULE);
          problems.push({ tokens, reason: `refers to <${piece.rule}>, which is no rule of this task or lane (rules: ${known.join(', ') || 'none'})` });
          continue;
        }
        if (state.get(target.name) === 'open') {
          cyclic = true;
          problems.push({ tokens, reason: `rule "${target.name}" refers back to itself (${[...trail, rule.name, target.name].join(' -> ')}); a grammar must end` });
          continue;
        }
        if (state.get(target.name) !== 'done') visit(target, [...trail, rule.name]);
      }
    });
    state.set(rule.name, 'done');
  };
  visit(start, []);
  for (const rule of rules.values()) {
    if (!rule.shared && !reached.has(rule.name)) problems.push({ tokens: rule.tokens, reason: `is never used: no phrasing starting at "${START_RULE}" reaches it; use it as <${rule.name}> or remove it` });
  }
  if (problems.length > 0 || cyclic) return { problems, phrasings: [], reached, alternatives };

  // Count before expanding, so a grammar too large is named instead of built.
  const counts = new Map<string, number>();
  const count = (name: string): number => {
    const known = counts.get(name);
    if (known !== undefined) return known;
    let total = 0;
    for (const pieces of rules.get(name)!.alternatives) {
      let product = 1;
      for (const piece of pieces) if ('rule' in piece) product *= count(piece.rule) + (piece.optional ? 1 : 0);
      total += product;
    }
    counts.set(name, total);
    return total;
  };
  if (count(START_RULE) > MAX_PHRASINGS) {
    // Name the deepest rule that is too large on its own, or the start rule and what multiplies in it.
    const culprit = [...counts.entries()].find(([name, value]) => value > MAX_PHRASINGS && name !== START_RULE)?.[0] ?? START_RULE;
    const rule = rules.get(culprit)!;
    const parts = [...new Set(rule.alternatives.flat().flatMap((piece) => ('rule' in piece ? [piece.rule] : [])))].map((name) => `<${name}> ${counts.get(name)}`);
    problems.push({
      tokens: rule.tokens,
      reason:
        `rule "${culprit}" has ${counts.get(culprit)} phrasings, more than the ${MAX_PHRASINGS} a task may have` +
        (parts.length ? ` (it multiplies ${parts.join(', ')})` : '') +
        '; drop alternatives or split the task',
    });
    return { problems, phrasings: [], reached, alternatives };
  }

  const memo = new Map<string, Expansion[]>();
  const expand = (name: string): Expansion[] => {
    const known = memo.get(name);
    if (known) return known;
    const out: Expansion[] = [];
    rules.get(name)!.alternatives.forEach((pieces, index) => {
      let partial: Expansion[] = [{ text: '', choices: [`${name}=${index}`] }];
      for (const piece of pieces) {
        if (!('rule' in piece)) {
          partial = partial.map((entry) => ({ text: entry.text + piece.text, choices: entry.choices }));
          continue;
        }
        const options: Expansion[] = [
          ...(piece.optional ? [{ text: '', choices: [`${piece.rule}=-`] }] : []),
          ...expand(piece.rule).map((entry) => (piece.capital ? { text: capitalise(entry.text), choices: entry.choices } : entry)),
        ];
        partial = partial.flatMap((entry) => options.map((option) => ({ text: entry.text + option.text, choices: [...entry.choices, ...option.choices] })));
      }
      out.push(...partial);
    });
    memo.set(name, out);
    return out;
  };
  const phrasings = expand(START_RULE).map((entry) => ({ template: tidy(entry.text), path: formatPath(entry.choices) }));

  // Each kind of flaw is reported once, by its first phrasing and how many share it, not once per phrasing.
  const flaws = new Map<string, { reason: string; count: number }>();
  const flaw = (kind: string, reason: () => string) => {
    const known = flaws.get(kind);
    if (known) known.count++;
    else flaws.set(kind, { reason: reason(), count: 1 });
  };
  // Two paths to the same words would make one phrasing twice as likely and count it twice.
  const firstPath = new Map<string, string>();
  for (const phrasing of phrasings) {
    if (phrasing.template === '') flaw('empty', () => `phrasing "${phrasing.path}" is empty: the user would say nothing`);
    const runTogether = RUN_TOGETHER.exec(phrasing.template.replace(/\{\{[^{}]*\}\}/g, ' '));
    if (runTogether) {
      flaw('run-together', () => `phrasing "${phrasing.path}" runs two sentences together ("${runTogether[0].slice(1)}" in ${JSON.stringify(phrasing.template)}); end the first part with a space`);
    }
    const earlier = firstPath.get(phrasing.template);
    if (earlier === undefined) firstPath.set(phrasing.template, phrasing.path!);
    else {
      flaw('same', () => `phrasings "${earlier}" and "${phrasing.path}" are the same words (${JSON.stringify(phrasing.template)}); drop an alternative or an optional part so each phrasing is said one way`);
    }
  }
  for (const { reason, count } of flaws.values()) problems.push({ tokens: location.task, reason: count > 1 ? `${reason} (and ${count - 1} more like it)` : reason });
  if (problems.length > 0) return { problems, phrasings: [], reached, alternatives };
  return { problems, phrasings, reached, alternatives };
}

export function isGrammar(user: UserText): user is PhrasingRules {
  return typeof user !== 'string';
}

const compiled = new WeakMap<PhrasingRules, Map<PhrasingRules | undefined, Phrasing[]>>();

/**
 * Every phrasing of a task's message, in a fixed order; a plain sentence is
 * its one phrasing, untouched. Compiled once per grammar object. A grammar
 * with problems is a programming error here: lanes are checked when loaded.
 */
export function phrasingsOf(user: UserText, shared?: PhrasingRules): Phrasing[] {
  if (!isGrammar(user)) return [{ template: user }];
  let byShared = compiled.get(user);
  if (!byShared) compiled.set(user, (byShared = new Map()));
  let phrasings = byShared.get(shared);
  if (!phrasings) {
    const result = compileGrammar(user, shared);
    if (result.problems.length > 0) {
      throw new FactoryError('lane_invalid', `a phrasing grammar has ${result.problems.length} problem(s): ${result.problems[0]!.reason}`, {
        fix: 'run `episode-factory lanes show <lane>` to list them',
      });
    }
    phrasings = result.phrasings;
    byShared.set(shared, phrasings);
  }
  return phrasings;
}

/** The episode's phrasing, drawn uniformly from the text substream; a plain sentence draws nothing. */
export function drawPhrasing(user: UserText, shared: PhrasingRules | undefined, random: Random): Phrasing {
  const phrasings = phrasingsOf(user, shared);
  return phrasings.length === 1 && !isGrammar(user) ? phrasings[0]! : random.pick(phrasings);
}
