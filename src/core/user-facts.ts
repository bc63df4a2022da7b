// Owns what a task's user knows and how a conversation shows it: the facts a
// user means (some told in the first message, some withheld until asked), and
// the plain-text tests shared by the scripted user simulator and the hidden
// predicates, so the simulator answers exactly the questions a predicate
// counts as asking for a fact.

/** One fact of a task, rendered for an episode (no templates left). */
export interface UserFact {
  id: string;
  /** The text that gives the fact away: any message containing it has told it. */
  value: string;
  /** Kept out of the first message; the user gives it only when asked. */
  withheld: boolean;
  /** Words any one of which, in a question, asks for this fact (case-insensitive). */
  asked_by: string[];
  /** What the scripted user says when asked for it; contains `value`. */
  answer: string;
  /** How a scripted agent asks for it. */
  question: string;
}

/** Does this assistant text ask the user something? A question mark anywhere does. */
export function isQuestion(text: string): boolean {
  return text.includes('?');
}

/** Does this question ask for the fact: one of its `asked_by` words, as a whole word or phrase? */
export function asksFor(text: string, fact: UserFact): boolean {
  const lower = text.toLowerCase();
  return fact.asked_by.some((words) => {
    const needle = words.toLowerCase();
    let from = 0;
    for (;;) {
      const at = lower.indexOf(needle, from);
      if (at < 0) return false;
      const before = at === 0 ? '' : lower[at - 1]!;
      const after = lower[at + needle.length] ?? '';
      if (!/[a-z0-9]/.test(before) && !/[a-z0-9]/.test(after)) return true;
      from = at + 1;
    }
  });
}

/** Does this text give the fact away? */
export function tellsFact(text: string, fact: UserFact): boolean {
  return fact.value.length > 0 && text.includes(fact.value);
}
