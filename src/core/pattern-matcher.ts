// Owns running a safe pattern's NFA program over a text: a Pike VM without
// captures, in time linear in the text, each atom tested by V8 as a sticky
// RegExp at one position, every state visited counted against the step
// budget.

import { MAX_TEXT, PatternError, type PatternFlags, type SafePattern, type StepBudget, stepBudget } from './safe-pattern-contract.js';
import { type Assertion, isLead, isTrail, type Node } from './pattern-syntax.js';
import { ASSERT, ASSERTIONS, CHAR, emitProgram, JUMP, MATCH, SPLIT, startsWithBegin } from './pattern-program.js';

function tooCostly(budget: StepBudget): PatternError {
  return new PatternError(
    'too_costly',
    `matching needs more than ${budget.steps} steps (the states the pattern keeps alive times the characters searched)`,
    'simplify the pattern or search less text',
  );
}

const ASCII_WORD = /^[A-Za-z0-9_]$/;

export class Matcher implements SafePattern {
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
