// Owns reading a safe pattern's source into a syntax tree (characters,
// assertions, sequences, alternations, repeats), refusing what a linear-time
// engine cannot match: backreferences, lookaround and the like.

import { PatternError } from './safe-pattern-contract.js';

const LINEAR = 'patterns run on a linear-time engine (JavaScript syntax without backreferences or lookaround)';

function unsupported(feature: string, fix: string, linear = true): PatternError {
  return new PatternError('unsupported', `${feature} not supported${linear ? `; ${LINEAR}` : ''}`, fix);
}

export type Assertion = 'begin' | 'end' | 'word' | 'not_word';

export type Node =
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

export function isLead(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function isTrail(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Reads a pattern V8 has already accepted, so only the shapes JavaScript allows
 * are handled; anything unexpected is an error, never a guess.
 */
export class Parser {
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
