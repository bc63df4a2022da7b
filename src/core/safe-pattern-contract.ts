// Owns what a safe pattern is to the code that uses one: its limits (text,
// program, steps, source), its flags, its errors, the SafePattern interface and
// the step budget that bounds a match deterministically. The engine behind it
// is safe-pattern.ts.

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
