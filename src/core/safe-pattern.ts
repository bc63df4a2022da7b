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

import { MAX_PROGRAM, MAX_SOURCE, PatternError, type PatternFlags, type SafePattern } from './safe-pattern-contract.js';
import { Parser } from './pattern-syntax.js';
import { programSize } from './pattern-program.js';
import { Matcher } from './pattern-matcher.js';

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
  const states = programSize(root) + 1;
  if (states > MAX_PROGRAM) {
    throw new PatternError(
      'too_large',
      `the pattern expands to ${Number.isFinite(states) ? states : 'too many'} states once its counted repeats are written out, more than the ${MAX_PROGRAM} a linear-time match allows`,
      'use smaller counts, or + and * instead of large {n,m}',
    );
  }
  return new Matcher(source, flags, root);
}
