// Owns regular expressions that come from data (a lane's `answer.matches`, a
// model's grep pattern or file-name glob): JavaScript syntax and meaning, but
// matched by a Thompson NFA (a Pike VM without captures) in time linear in the
// text, never by V8's backtracking engine, so no pattern can stall the process.
// What needs backtracking (backreferences, lookahead, lookbehind) is refused
// when the pattern is compiled, and so is a program of more than MAX_PROGRAM
// states. A match must lie within the first MAX_TEXT code units of the text.
//
// Each single-character atom (a literal, `.`, `\d`, a class `[...]`, `\p{L}`)
// is matched by V8 itself, as a sticky RegExp of that one atom at one position:
// constant time, and exactly JavaScript's meaning for every flag, case folding
// included. Only the structure around the atoms (sequence, alternation,
// repetition) is ours.

/** Text beyond this many UTF-16 code units is not searched: a match must end within it. */
export const MAX_TEXT = 65_536;

/** The most NFA states a pattern may compile to, counted repeats written out (`a{3}` is 3). */
export const MAX_PROGRAM = 2_000;

/** The default step budget of one match (see stepBudget). */
export const MAX_STEPS = 16_000_000;

/** The longest pattern source, in UTF-16 code units. */
export const MAX_SOURCE = 1_000;

export type PatternFlags = '' | 'i' | 'u' | 'iu';

export type PatternErrorKind = 'invalid' | 'unsupported' | 'too_large' | 'too_costly';

/** A pattern that cannot be compiled: not JavaScript (`invalid`), or not linear-time (`unsupported`, `too_large`); or a match over its step budget (`too_costly`). */
export class PatternError extends Error {
  readonly kind: PatternErrorKind;
  /** What to write instead, as an imperative clause. */
  readonly fix: string;

  constructor(kind: PatternErrorKind, message: string, fix: string) {
    super(message);
    this.name = 'PatternError';
    this.kind = kind;
    this.fix = fix;
  }
}

export interface SafePattern {
  readonly source: string;
  readonly flags: PatternFlags;
  /**
   * Whether a match lies within the first MAX_TEXT code units of `text`; `^`,
   * `$` and `\b` see the whole text. Each position read costs the budget the
   * states alive there; running out throws PatternError `too_costly`.
   */
  test(text: string, budget?: StepBudget): boolean;
}

/** What matching may still cost, in NFA states visited: counted, never timed, so the outcome is deterministic. */
export interface StepBudget {
  readonly steps: number;
  remaining: number;
}

/**
 * The default allows any pattern over any text up to MAX_TEXT as long as about
 * 250 states are alive at a time, and caps the worst (MAX_PROGRAM states alive
 * at every position) at a fraction of a second. Share one budget across calls
 * (grep's lines) to bound them together.
 */
export function stepBudget(steps = MAX_STEPS): StepBudget {
  return { steps, remaining: steps };
}

function tooCostly(budget: StepBudget): PatternError {
  return new PatternError(
    'too_costly',
    `matching needs more than ${budget.steps} steps (the states the pattern keeps alive times the characters searched)`,
    'simplify the pattern or search less text',
  );
}

const LINEAR = 'patterns run on a linear-time engine (JavaScript syntax without backreferences or lookaround)';

function unsupported(feature: string, fix: string, linear = true): PatternError {
  return new PatternError('unsupported', `${feature} not supported${linear ? `; ${LINEAR}` : ''}`, fix);
}

const cache = new Map<string, SafePattern>();

/** Compiles once per source and flags (the cache is cleared when full). Throws PatternError. */
export function compilePattern(source: string, flags: PatternFlags = ''): SafePattern {
  const key = `${flags}/${source}`;
  let pattern = cache.get(key);
  if (!pattern) {
    pattern = compile(source, flags);
    if (cache.size >= 1024) cache.clear();
    cache.set(key, pattern);
  }
  return pattern;
}

/** The PatternError compiling would throw, or undefined when the pattern is usable. */
export function patternProblem(source: string, flags: PatternFlags = ''): PatternError | undefined {
  try {
    compilePattern(source, flags);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error;
    throw error;
  }
}

// ---------------------------------------------------------------- syntax tree

type Assertion = 'begin' | 'end' | 'word' | 'not_word';

type Node =
  | { type: 'char'; atom: string }
  | { type: 'assert'; kind: Assertion }
  | { type: 'seq'; items: Node[] }
  | { type: 'alt'; options: Node[] }
  | { type: 'repeat'; node: Node; min: number; max: number };

const SYNTAX = '^$\\.*+?()[]{}|/';
const QUANTIFIER_BRACES = /\{([0-9]+)(?:(,)([0-9]*))?\}/y;
const HEX = /^[0-9A-Fa-f]$/;

function isHex(text: string, from: number, count: number): boolean {
  for (let index = from; index < from + count; index++) if (!HEX.test(text[index] ?? '')) return false;
  return true;
}

function isLead(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isTrail(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Reads a pattern V8 has already accepted, so only the shapes JavaScript allows
 * are handled; anything unexpected is an error, never a guess.
 */
class Parser {
  private at = 0;

  constructor(
    private readonly source: string,
    private readonly unicode: boolean,
  ) {}

  parse(): Node {
    const node = this.disjunction();
    if (this.at !== this.source.length) throw this.unexpected();
    return node;
  }

  private unexpected(): PatternError {
    return new PatternError('invalid', `Invalid regular expression: /${this.source}/: unexpected "${this.source[this.at]}" at ${this.at}`, 'escape special characters');
  }

  private disjunction(): Node {
    const options = [this.alternative()];
    while (this.source[this.at] === '|') {
      this.at++;
      options.push(this.alternative());
    }
    return options.length === 1 ? options[0]! : { type: 'alt', options };
  }

  private alternative(): Node {
    const items: Node[] = [];
    while (this.at < this.source.length && this.source[this.at] !== '|' && this.source[this.at] !== ')') items.push(this.term());
    return { type: 'seq', items };
  }

  private term(): Node {
    const { source } = this;
    const char = source[this.at]!;
    if (char === '^' || char === '$') {
      this.at++;
      return { type: 'assert', kind: char === '^' ? 'begin' : 'end' };
    }
    if (char === '\\' && (source[this.at + 1] === 'b' || source[this.at + 1] === 'B')) {
      this.at += 2;
      return { type: 'assert', kind: source[this.at - 1] === 'b' ? 'word' : 'not_word' };
    }
    return this.quantified(this.atom());
  }

  private atom(): Node {
    const { source } = this;
    const start = this.at;
    const char = source[start]!;
    if (char === '(') return this.group();
    if (char === '.') {
      this.at++;
      return { type: 'char', atom: '.' };
    }
    if (char === '[') {
      let index = start + 1;
      if (source[index] === '^') index++;
      while (index < source.length && source[index] !== ']') index += source[index] === '\\' ? 2 : 1;
      if (index >= source.length) throw this.unexpected();
      this.at = index + 1;
      return { type: 'char', atom: source.slice(start, this.at) };
    }
    if (char === '\\') return { type: 'char', atom: this.escape() };
    if ('*+?)|'.includes(char)) throw this.unexpected();
    if (char === '{') {
      QUANTIFIER_BRACES.lastIndex = start;
      // "{2}" with nothing before it is a SyntaxError in JavaScript; outside u mode a "{" that starts no count is itself.
      if (this.unicode || QUANTIFIER_BRACES.test(source)) throw this.unexpected();
    }
    if (this.unicode && isLead(source.charCodeAt(start)) && isTrail(source.charCodeAt(start + 1))) {
      this.at += 2;
      return { type: 'char', atom: source.slice(start, start + 2) };
    }
    this.at++;
    return { type: 'char', atom: SYNTAX.includes(char) ? `\\${char}` : char };
  }

  private group(): Node {
    const { source } = this;
    if (source.startsWith('(?=', this.at) || source.startsWith('(?!', this.at)) {
      throw unsupported(`lookahead "${source.slice(this.at, this.at + 3)}…)" is`, 'match the text itself, or write what must be absent as its own check');
    }
    if (source.startsWith('(?<=', this.at) || source.startsWith('(?<!', this.at)) {
      throw unsupported(`lookbehind "${source.slice(this.at, this.at + 4)}…)" is`, 'match the text before it as part of the pattern, e.g. "(?:^|[^0-9])42" instead of "(?<![0-9])42"');
    }
    if (source.startsWith('(?:', this.at)) {
      this.at += 3;
    } else if (source.startsWith('(?<', this.at)) {
      const close = source.indexOf('>', this.at);
      if (close === -1) throw this.unexpected();
      this.at = close + 1;
    } else if (source.startsWith('(?', this.at)) {
      throw unsupported(`the group syntax "${source.slice(this.at, this.at + 3)}" is`, 'use a plain group (...) or (?:...)');
    } else {
      this.at += 1;
    }
    const inner = this.disjunction();
    if (source[this.at] !== ')') throw this.unexpected();
    this.at++;
    return inner;
  }

  /** The source of one escaped atom outside a class, with `this.at` moved past it. */
  private escape(): string {
    const { source, unicode } = this;
    const start = this.at;
    const next = source[start + 1];
    let end = start + 2;
    if (next === undefined) throw this.unexpected();
    if (next >= '1' && next <= '9') {
      throw unsupported(`backreferences (\\${next}) are`, 'match the repeated text itself');
    } else if (next === 'k') {
      throw unsupported('named backreferences (\\k<…>) are', 'match the repeated text itself (for the letter k, write k)');
    } else if (next === '0' && /[0-9]/.test(source[start + 2] ?? '')) {
      throw unsupported(`octal escapes (${source.slice(start, start + 3)}…) are`, 'write the character as \\xHH', false);
    } else if (next === 'c') {
      if (!/[A-Za-z]/.test(source[start + 2] ?? '')) throw unsupported('"\\c" without a control letter is', 'write \\\\c for a backslash and a c', false);
      end = start + 3;
    } else if ((next === 'p' || next === 'P') && unicode) {
      end = source.indexOf('}', start) + 1;
      if (end === 0) throw this.unexpected();
    } else if (next === 'x' && isHex(source, start + 2, 2)) {
      end = start + 4;
    } else if (next === 'u' && unicode && source[start + 2] === '{') {
      end = source.indexOf('}', start) + 1;
      if (end === 0) throw this.unexpected();
    } else if (next === 'u' && isHex(source, start + 2, 4)) {
      end = start + 6;
      // In u mode an escaped surrogate pair is one character.
      const code = Number.parseInt(source.slice(start + 2, start + 6), 16);
      if (unicode && isLead(code) && source.startsWith('\\u', end) && isHex(source, end + 2, 4) && isTrail(Number.parseInt(source.slice(end + 2, end + 6), 16))) {
        end += 6;
      }
    }
    this.at = end;
    return source.slice(start, end);
  }

  private quantified(node: Node): Node {
    const { source } = this;
    const char = source[this.at];
    let min: number;
    let max: number;
    if (char === '*' || char === '+' || char === '?') {
      this.at++;
      [min, max] = char === '*' ? [0, Infinity] : char === '+' ? [1, Infinity] : [0, 1];
    } else if (char === '{') {
      QUANTIFIER_BRACES.lastIndex = this.at;
      const match = QUANTIFIER_BRACES.exec(source);
      if (!match) return node; // outside u mode, a literal "{" that the next term reads
      this.at = QUANTIFIER_BRACES.lastIndex;
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
    } else {
      return node;
    }
    if (source[this.at] === '?') this.at++; // lazy or greedy: the same answer to "is there a match"
    return { type: 'repeat', node, min, max };
  }
}

// ---------------------------------------------------------------- program

const CHAR = 0;
const SPLIT = 1;
const JUMP = 2;
const ASSERT = 3;
const MATCH = 4;

const ASSERTIONS: readonly Assertion[] = ['begin', 'end', 'word', 'not_word'];

/** States a node compiles to; Infinity stands for "too many to count". */
function size(node: Node): number {
  switch (node.type) {
    case 'char':
    case 'assert':
      return 1;
    case 'seq':
      return node.items.reduce((total, item) => total + size(item), 0);
    case 'alt':
      return node.options.reduce((total, option) => total + size(option) + 2, 0);
    case 'repeat': {
      // Every repetition counts at least once, so that "(?:){99999}" is not a free loop.
      const inner = Math.max(size(node.node), 1);
      const optional = node.max === Infinity ? inner + 2 : (node.max - node.min) * (inner + 1);
      const total = node.min * inner + optional;
      return Number.isFinite(total) ? total : Infinity;
    }
  }
}

interface Program {
  op: Uint8Array;
  /** CHAR: the atom's index; SPLIT, JUMP: the first target; ASSERT: the assertion's index. */
  x: Int32Array;
  /** SPLIT: the second target. */
  y: Int32Array;
  atoms: string[];
}

function emitProgram(root: Node): Program {
  const op: number[] = [];
  const x: number[] = [];
  const y: number[] = [];
  const atoms: string[] = [];
  const atomIndex = new Map<string, number>();
  const push = (code: number, first = 0, second = 0) => {
    op.push(code);
    x.push(first);
    y.push(second);
    return op.length - 1;
  };
  const emit = (node: Node): void => {
    switch (node.type) {
      case 'char': {
        let index = atomIndex.get(node.atom);
        if (index === undefined) {
          index = atoms.push(node.atom) - 1;
          atomIndex.set(node.atom, index);
        }
        push(CHAR, index);
        return;
      }
      case 'assert':
        push(ASSERT, ASSERTIONS.indexOf(node.kind));
        return;
      case 'seq':
        node.items.forEach(emit);
        return;
      case 'alt': {
        const jumps: number[] = [];
        node.options.forEach((option, position) => {
          if (position === node.options.length - 1) {
            emit(option);
            return;
          }
          const split = push(SPLIT, op.length + 1);
          emit(option);
          jumps.push(push(JUMP));
          y[split] = op.length;
        });
        for (const jump of jumps) x[jump] = op.length;
        return;
      }
      case 'repeat': {
        for (let count = 0; count < node.min; count++) emit(node.node);
        if (node.max === Infinity) {
          const split = push(SPLIT, op.length + 1);
          emit(node.node);
          push(JUMP, split);
          y[split] = op.length;
        } else {
          const splits: number[] = [];
          for (let count = node.min; count < node.max; count++) {
            splits.push(push(SPLIT, op.length + 1));
            emit(node.node);
          }
          for (const split of splits) y[split] = op.length;
        }
        return;
      }
    }
  };
  emit(root);
  push(MATCH);
  return { op: Uint8Array.from(op), x: Int32Array.from(x), y: Int32Array.from(y), atoms };
}

function startsWithBegin(node: Node): boolean {
  if (node.type === 'assert') return node.kind === 'begin';
  if (node.type === 'seq') return node.items.length > 0 && startsWithBegin(node.items[0]!);
  if (node.type === 'alt') return node.options.every(startsWithBegin);
  return false;
}

// ---------------------------------------------------------------- matching

const ASCII_WORD = /^[A-Za-z0-9_]$/;

class Matcher implements SafePattern {
  private readonly op: Uint8Array;
  private readonly x: Int32Array;
  private readonly y: Int32Array;
  /** One sticky RegExp per atom: V8 decides whether the atom matches the character at one position. */
  private readonly atoms: RegExp[];
  /** Per atom and ASCII code: 0 not yet known, 1 matches, 2 does not. */
  private readonly ascii: Uint8Array;
  /** The position each atom was last tried at past ASCII, and the answer, since many states share an atom. */
  private readonly triedAt: Int32Array;
  private readonly triedResult: Uint8Array;
  private readonly anchored: boolean;
  private readonly boundary: RegExp;
  private readonly unicode: boolean;
  private current: StateList;
  private next: StateList;
  private readonly stack: Int32Array;

  constructor(
    readonly source: string,
    readonly flags: PatternFlags,
    root: Node,
  ) {
    const program = emitProgram(root);
    this.op = program.op;
    this.x = program.x;
    this.y = program.y;
    this.atoms = program.atoms.map((atom) => new RegExp(atom, `${flags}y`));
    this.ascii = new Uint8Array(128 * this.atoms.length);
    this.triedAt = new Int32Array(this.atoms.length);
    this.triedResult = new Uint8Array(this.atoms.length);
    this.anchored = startsWithBegin(root);
    this.boundary = new RegExp('\\b', `${flags}y`);
    this.unicode = flags.includes('u');
    const states = this.op.length;
    this.current = new StateList(states);
    this.next = new StateList(states);
    this.stack = new Int32Array(2 * states + 2);
  }

  test(text: string, budget: StepBudget = stepBudget()): boolean {
    const limit = Math.min(text.length, MAX_TEXT);
    const { x } = this;
    this.triedAt.fill(-1);
    this.current.clear();
    let at = 0;
    for (;;) {
      if ((at === 0 || !this.anchored) && this.follow(this.current, 0, text, at)) return true;
      const { current, next } = this;
      if (current.chars === 0 && this.anchored) return false;
      if (at >= limit) return false;
      budget.remaining -= current.size;
      if (budget.remaining < 0) throw tooCostly(budget);
      const code = text.charCodeAt(at);
      const width = this.unicode && isLead(code) && isTrail(text.charCodeAt(at + 1)) ? 2 : 1;
      if (at + width > limit) return false;
      next.clear();
      // V8 also reports an empty match inside a surrogate pair in u mode (/\B/u finds "😀" at 1); so do we.
      if (width === 2 && !this.anchored) {
        if (this.follow(next, 0, text, at + 1)) return true;
        next.clear();
      }
      for (let index = 0; index < current.chars; index++) {
        const state = current.charStates[index]!;
        if (this.atomMatches(x[state]!, text, at, code) && this.follow(next, state + 1, text, at + width)) return true;
      }
      this.current = next;
      this.next = current;
      at += width;
    }
  }

  private atomMatches(atom: number, text: string, at: number, code: number): boolean {
    if (code < 128) {
      const slot = atom * 128 + code;
      let known = this.ascii[slot]!;
      if (known === 0) {
        const regex = this.atoms[atom]!;
        regex.lastIndex = 0;
        known = this.ascii[slot] = regex.test(String.fromCharCode(code)) ? 1 : 2;
      }
      return known === 1;
    }
    if (this.triedAt[atom] !== at) {
      const regex = this.atoms[atom]!;
      regex.lastIndex = at;
      this.triedAt[atom] = at;
      this.triedResult[atom] = regex.test(text) ? 1 : 0;
    }
    return this.triedResult[atom] === 1;
  }

  /** Adds `start` and every state reachable from it without reading a character; true when that reaches MATCH. */
  private follow(list: StateList, start: number, text: string, at: number): boolean {
    const { op, x, y, stack } = this;
    let top = 0;
    stack[top++] = start;
    while (top > 0) {
      const state = stack[--top]!;
      if (list.has(state)) continue;
      list.add(state);
      switch (op[state]) {
        case CHAR:
          list.charStates[list.chars++] = state;
          break;
        case MATCH:
          return true;
        case JUMP:
          stack[top++] = x[state]!;
          break;
        case SPLIT:
          stack[top++] = y[state]!;
          stack[top++] = x[state]!;
          break;
        case ASSERT:
          if (this.holds(ASSERTIONS[x[state]!]!, text, at)) stack[top++] = state + 1;
          break;
      }
    }
    return false;
  }

  private holds(assertion: Assertion, text: string, at: number): boolean {
    if (assertion === 'begin') return at === 0;
    if (assertion === 'end') return at === text.length;
    const before = at > 0 ? text.charCodeAt(at - 1) : 0;
    const after = at < text.length ? text.charCodeAt(at) : 0;
    let boundary: boolean;
    if (this.unicode && isLead(before) && isTrail(after)) {
      boundary = false; // inside a pair, where a sticky \b would step back to the pair's start
    } else if (before < 128 && after < 128) {
      boundary = (at > 0 && ASCII_WORD.test(text[at - 1]!)) !== (at < text.length && ASCII_WORD.test(text[at]!));
    } else {
      this.boundary.lastIndex = at;
      boundary = this.boundary.test(text);
    }
    return assertion === 'word' ? boundary : !boundary;
  }
}

/** The states at one position, with O(1) add, membership and clear (Briggs and Torczon's sparse set); the character-reading ones also in a list of their own. */
class StateList {
  readonly dense: Int32Array;
  private readonly sparse: Int32Array;
  size = 0;
  readonly charStates: Int32Array;
  chars = 0;

  constructor(capacity: number) {
    this.dense = new Int32Array(capacity);
    this.sparse = new Int32Array(capacity);
    this.charStates = new Int32Array(capacity);
  }

  has(state: number): boolean {
    const index = this.sparse[state]!;
    return index < this.size && this.dense[index] === state;
  }

  add(state: number): void {
    this.sparse[state] = this.size;
    this.dense[this.size++] = state;
  }

  clear(): void {
    this.size = 0;
    this.chars = 0;
  }
}

function compile(source: string, flags: PatternFlags): SafePattern {
  if (!['', 'i', 'u', 'iu'].includes(flags)) throw new PatternError('invalid', `unsupported flags "${flags}"`, 'use "", "i", "u" or "iu"');
  if (source.length > MAX_SOURCE) {
    throw new PatternError('too_large', `the pattern is ${source.length} characters long, more than the ${MAX_SOURCE} allowed`, 'match a shorter pattern');
  }
  try {
    // V8 parses (it does not run) the pattern: its syntax errors are the ones a user knows.
    new RegExp(source, flags);
  } catch (error) {
    throw new PatternError('invalid', (error as Error).message, 'escape special characters');
  }
  const root = new Parser(source, flags.includes('u')).parse();
  const states = size(root) + 1;
  if (states > MAX_PROGRAM) {
    throw new PatternError(
      'too_large',
      `the pattern expands to ${Number.isFinite(states) ? states : 'too many'} states once its counted repeats are written out, more than the ${MAX_PROGRAM} a linear-time match allows`,
      'use smaller counts, or + and * instead of large {n,m}',
    );
  }
  return new Matcher(source, flags, root);
}
