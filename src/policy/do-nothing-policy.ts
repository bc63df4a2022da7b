// Owns the do-nothing policy: it answers at once without touching a tool. A
// task whose hidden predicates pass this policy checks nothing, which is what
// `lanes check` uses it to catch.

import type { Action, Policy } from './policy-contract.js';

export const DO_NOTHING_ANSWER = 'Sure, that is taken care of.';

export class DoNothingPolicy implements Policy {
  readonly actor = { role: 'policy', kind: 'scripted', name: 'do-nothing', version: '1' };

  async next(): Promise<Action> {
    return { kind: 'final_text', text: DO_NOTHING_ANSWER };
  }
}
