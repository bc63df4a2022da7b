import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePattern, patternProblem } from '../../src/core/safe-pattern.js';
import { MAX_PROGRAM, MAX_STEPS, MAX_TEXT, PatternError, stepBudget, type PatternFlags } from '../../src/core/safe-pattern-contract.js';

const FLAGS: readonly PatternFlags[] = ['', 'i', 'u', 'iu'];

/** A small deterministic generator (xorshift32): the same cases on every run. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}

describe('safe patterns', () => {
  it('answers like a JavaScript RegExp on random patterns and texts, for every flag', { timeout: 120_000 }, () => {
    const { next, pick } = generator(20_261_201);
    // Atoms where JavaScript has corners: case folding (ſ, K, É), astral characters and lone surrogates, "{" and "]" as literals outside u mode.
    const atoms = ['a', 'b', 'A', 'é', 'É', 'ſ', 'K', 's', '.', '\\d', '\\w', '\\s', '\\W', '[ab]', '[^a]', '[a-cé]', '\\u212a', '😀', '\\x20', ' ', '-', '\\.', '[\\s\\d]', '[^]', '[]', '}', ']', '{', '{,2}'];
    const quantifiers = ['*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?', '{2,}?'];
    const pattern = (depth: number): string => {
      const roll = next();
      if (depth > 2 || roll < 0.35) return pick(atoms) + (next() < 0.4 ? pick(quantifiers) : '');
      if (roll < 0.45) return pick(['^', '$', '\\b', '\\B']);
      if (roll < 0.7) return Array.from({ length: 1 + Math.floor(next() * 4) }, () => pattern(depth + 1)).join('');
      if (roll < 0.85) return `(${pick(['', '?:', '?<g>'])}${pattern(depth + 1)}|${pattern(depth + 1)})${next() < 0.5 ? pick(quantifiers) : ''}`;
      return `(?:${pattern(depth + 1)})${pick(quantifiers)}`;
    };
    const characters = ['a', 'b', 'A', 'é', 'É', 'ſ', 'S', 's', 'k', 'K', '\u212a', ' ', '\n', '1', '_', '-', '.', '😀', '\ud83d', '\ude00', ']', '}', '{'];
    let compared = 0;
    for (let count = 0; count < 3000; count++) {
      const source = pattern(0);
      const flags = pick(FLAGS);
      let reference: RegExp;
      try {
        reference = new RegExp(source, flags);
      } catch {
        assert.equal(patternProblem(source, flags)?.kind, 'invalid', `${source} /${flags} is not JavaScript`);
        continue;
      }
      const safe = compilePattern(source, flags);
      for (let text = 0; text < 20; text++) {
        // Short texts keep V8's own backtracking, the reference, quick.
        const input = Array.from({ length: Math.floor(next() * 7) }, () => pick(characters)).join('');
        assert.equal(safe.test(input), reference.test(input), `/${source}/${flags} on ${JSON.stringify(input)}`);
        compared++;
      }
    }
    assert.ok(compared > 40_000, `${compared} comparisons`);
  });

  it('follows V8 where it reports an empty match inside a surrogate pair', () => {
    for (const [source, text] of [['\\B', 'K😀_'], ['$|\\B', 'a😀b'], ['\\B', '😀'], ['x*\\B', 'a😀']]) {
      assert.equal(compilePattern(source!, 'u').test(text!), new RegExp(source!, 'u').test(text!), `${source} on ${text}`);
    }
  });

  it('refuses what needs backtracking, at compile time, saying what and what to write instead', () => {
    const cases: [string, RegExp][] = [
      ['(a)\\1', /^backreferences \(\\1\) are not supported; patterns run on a linear-time engine \(JavaScript syntax without backreferences or lookaround\)$/],
      ['(?<n>a)\\k<n>', /^named backreferences/],
      ['a(?=b)', /^lookahead "\(\?=…\)" is not supported/],
      ['a(?!b)', /^lookahead "\(\?!…\)" is not supported/],
      ['(?<=a)b', /^lookbehind "\(\?<=…\)" is not supported/],
      ['(?<!a)b', /^lookbehind "\(\?<!…\)" is not supported/],
    ];
    for (const [source, message] of cases) {
      for (const flags of ['', 'u'] as const) {
        const problem = patternProblem(source, flags);
        assert.ok(problem instanceof PatternError, source);
        assert.equal(problem.kind, 'unsupported');
        assert.match(problem.message, message);
        assert.ok(problem.fix.length > 0);
        assert.throws(() => compilePattern(source, flags), PatternError);
      }
    }
    assert.match(patternProblem('\\012')!.message, /^octal escapes \(\\01…\) are not supported$/);
  });

  it("passes V8's own message on for a pattern that is not JavaScript", () => {
    const problem = patternProblem('([', 'u')!;
    assert.equal(problem.kind, 'invalid');
    assert.equal(problem.message, (() => { try { new RegExp('([', 'u'); } catch (error) { return (error as Error).message; } return ''; })());
  });

  it('refuses a pattern whose counted repeats expand past the program limit, or a huge source', () => {
    assert.equal(patternProblem(`a{${MAX_PROGRAM - 1}}`), undefined);
    assert.equal(patternProblem(`a{${MAX_PROGRAM}}`)?.kind, 'too_large');
    assert.match(patternProblem('(?:a{50}){50}')!.message, /expands to 2501 states/);
    assert.equal(patternProblem('(?:){99999999999}')?.kind, 'too_large', 'an empty repeat is no free loop');
    assert.equal(patternProblem(`a{${'9'.repeat(400)}}`)?.kind, 'too_large');
    assert.equal(patternProblem('x'.repeat(1001))?.kind, 'too_large');
  });

  it('searches only the first MAX_TEXT code units, while ^, $ and \\b see the whole text', () => {
    const long = 'a'.repeat(MAX_TEXT);
    assert.equal(compilePattern('b').test(`${long}b`), false, 'a match past the bound is not seen');
    assert.equal(compilePattern('b').test(`${long.slice(1)}b`), true, 'a match that ends at the bound is');
    assert.equal(compilePattern('a$').test(`${long}a`), false, '$ is the end of the text, not of what is searched');
    assert.equal(compilePattern('a\\b').test(`${long}a`), false);
    assert.equal(compilePattern('^a+$').test(long), true);
    // In u mode a pair cut by the bound is not read half.
    assert.equal(compilePattern('😀', 'u').test(`${'a'.repeat(MAX_TEXT - 1)}😀`), false);
  });

  it('bounds the work of one match, and of many sharing a budget, by counting steps', () => {
    const costly = compilePattern(`[a-z]{${MAX_PROGRAM - 2}}!`);
    const text = 'a'.repeat(MAX_TEXT);
    const started = performance.now();
    assert.throws(() => costly.test(text), (error: unknown) => error instanceof PatternError && error.kind === 'too_costly' && new RegExp(`more than ${MAX_STEPS} steps`).test(error.message));
    assert.ok(performance.now() - started < 5_000);
    // Steps are counted, not timed: the same text and pattern stop at the same point on any machine.
    const stops = [stepBudget(), stepBudget()].map((budget) => {
      assert.throws(() => costly.test(text, budget), PatternError);
      return budget.remaining;
    });
    assert.equal(stops[0], stops[1]);
    assert.equal(costly.test('a'.repeat(100)), false, 'a short text is well within the budget');
    const shared = stepBudget(10_000);
    const cheap = compilePattern('ab');
    assert.throws(() => {
      for (let line = 0; line < 10_000; line++) cheap.test('aaaaaaaaaa', shared);
    }, /more than 10000 steps/);
  });

  it('matches the reported pattern on a long hostile text in milliseconds, not hours', () => {
    const pattern = compilePattern('^(([a-zA-Z0-9 ,:]+)+)!$', 'u');
    for (const length of [30, 1_000, MAX_TEXT, 1 << 20]) {
      const started = performance.now();
      assert.equal(pattern.test(`${'a'.repeat(length)}?`), false);
      assert.equal(pattern.test(`${'a'.repeat(Math.min(length, MAX_TEXT - 1))}!`), true);
      assert.ok(performance.now() - started < 2_000, `${length} characters`);
    }
  });
});
