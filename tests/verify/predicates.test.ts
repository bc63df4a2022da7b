import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../src/core/conversation.js';
import type { JsonValue } from '../../src/core/json-value.js';
import type { Predicate } from '../../src/lanes/lane.js';
import { answerMentions, evaluatePredicate, evaluatePredicates, type PredicateContext } from '../../src/verify/predicates.js';

const initial: JsonValue = {
  users: [
    { login: 'ines.okafor27', email: 'ines.okafor@northwind.example.com' },
    { login: 'kenji.sato41', email: 'kenji.sato@northwind.example.com' },
  ],
  issues: {
    '1423': { number: 1423, state: 'open', labels: ['bug'], topic: 'login', assignee: 'ines.okafor27', comments: [] },
    '2077': { number: 2077, state: 'closed', labels: ['bug'], topic: 'login', assignee: null, comments: [] },
    '3310': { number: 3310, state: 'open', labels: ['enhancement'], topic: 'login', assignee: 'kenji.sato41', comments: [] },
    '4821': { number: 4821, state: 'open', labels: ['bug', 'security'], topic: 'export', assignee: null, comments: [] },
  },
};

function withChange(mutate: (copy: any) => void): JsonValue {
  const copy = structuredClone(initial) as any;
  mutate(copy);
  return copy;
}

const closeMessages: Message[] = [
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'close_issue', arguments: { number: 1423 } }] },
  { role: 'tool', tool_call_id: 'call_1', name: 'close_issue', content: '{}', tool_result: { ok: true } },
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_2', name: 'close_issue', arguments: { number: 1423 } }] },
  { role: 'tool', tool_call_id: 'call_2', name: 'close_issue', content: 'already closed', tool_result: { ok: false, kind: 'tool_error', error: 'already closed' } },
];

const context = (overrides: Partial<PredicateContext> = {}): PredicateContext => ({
  initial,
  final: initial,
  answer: 'Open login bugs: 1423.',
  messages: [],
  params: { topic: 'login', target: { number: 1423, assignee: 'ines.okafor27' } },
  ...overrides,
});

const passes = (predicate: Predicate, ctx = context()) => evaluatePredicate(predicate, ctx).passed;

describe('hidden predicates over snapshots', () => {
  it('checks a value at a templated JSON pointer', () => {
    const closed = withChange((copy) => (copy.issues['1423'].state = 'closed'));
    const predicate: Predicate = { path: '/issues/{{target.number}}/state', equals: 'closed' };
    assert.equal(passes(predicate), false);
    assert.equal(passes(predicate, context({ final: closed })), true);
    assert.equal(evaluatePredicate(predicate, context()).detail, '/issues/1423/state is "open", expected "closed"');
    assert.equal(passes({ path: '/issues/9999/state', equals: 'closed' }), false);
  });

  it('checks list membership, substring and existence', () => {
    assert.equal(passes({ path: '/issues/4821/labels', contains: 'security' }), true);
    assert.equal(passes({ path: '/issues/1423/labels', contains: 'security' }), false);
    assert.equal(passes({ path: '/users/0/email', contains: '@northwind' }), true);
    assert.equal(passes({ path: '/issues/1423/assignee', exists: true }), true);
    assert.equal(passes({ path: '/issues/2077/assignee', exists: false }), true);
    assert.equal(passes({ path: '/issues/5555', exists: false }), true);
  });

  it('counts items matching a where clause, in either snapshot', () => {
    const predicate: Predicate = { count: { path: '/issues', where: { topic: '{{topic}}', state: 'open' } }, equals: 2 };
    assert.equal(passes(predicate), true);
    assert.equal(passes({ ...predicate, equals: 3 }), false);
    assert.equal(passes({ count: { path: '/issues', where: { labels: { includes: 'bug' } } }, min: 3, max: 3 }), true);
    const fewer = withChange((copy) => delete copy.issues['4821']);
    assert.equal(passes({ count: { path: '/issues', snapshot: 'initial' }, equals: 4 }, context({ final: fewer })), true);
    assert.equal(passes({ count: { path: '/issues' }, equals: 4 }, context({ final: fewer })), false);
  });

  it('requires a subtree to be unchanged, apart from listed keys', () => {
    const touchedTarget = withChange((copy) => (copy.issues['1423'].state = 'closed'));
    const touchedOther = withChange((copy) => (copy.issues['2077'].labels.push('docs')));
    const predicate: Predicate = { unchanged: '/issues', except: ['{{target.number}}'] };
    assert.equal(passes(predicate, context({ final: touchedTarget })), true);
    assert.equal(passes(predicate, context({ final: touchedOther })), false);
    assert.equal(evaluatePredicate(predicate, context({ final: touchedOther })).detail, '/issues changed at 2077');
    assert.equal(passes({ unchanged: '' }, context({ final: touchedTarget })), false);
    assert.equal(passes({ unchanged: '' }), true);
  });

  it('lets records created in the episode appear under allow_added, and nothing else change', () => {
    const filed = withChange((copy) => (copy.issues['5000'] = { number: 5000, state: 'open', labels: ['bug'], topic: null, assignee: null, comments: [] }));
    const filedAndTouched = withChange((copy) => {
      copy.issues['5000'] = { number: 5000, state: 'open', labels: [], topic: null, assignee: null, comments: [] };
      copy.issues['4821'].state = 'closed';
    });
    const removed = withChange((copy) => delete copy.issues['2077']);
    const predicate: Predicate = { unchanged: '/issues', allow_added: true };
    assert.equal(passes(predicate, context({ final: filed })), true);
    assert.equal(passes({ unchanged: '/issues' }, context({ final: filed })), false, 'without allow_added a new record is a change');
    assert.equal(evaluatePredicate(predicate, context({ final: filedAndTouched })).detail, '/issues changed at 4821');
    assert.equal(passes(predicate, context({ final: removed })), false, 'a deleted record is not an addition');
  });

  it('sets apart the items a where clause picks, in a map and in a list, and nothing else', () => {
    const predicate: Predicate = { unchanged: '/issues', except_where: { number: '{{target.number}}' } };
    const touchedTarget = withChange((copy) => (copy.issues['1423'].state = 'closed'));
    const touchedOther = withChange((copy) => (copy.issues['2077'].state = 'open'));
    const removedTarget = withChange((copy) => delete copy.issues['1423']);
    assert.equal(passes(predicate, context({ final: touchedTarget })), true);
    assert.equal(passes(predicate, context({ final: removedTarget })), true);
    assert.equal(evaluatePredicate(predicate, context({ final: touchedOther })).detail, '/issues changed at 2077');
    const users: Predicate = { unchanged: '/users', except_where: { login: 'kenji.sato41' } };
    const renamedKenji = withChange((copy) => (copy.users[1].email = 'k@example.com'));
    const renamedInes = withChange((copy) => (copy.users[0].email = 'i@example.com'));
    const added = withChange((copy) => copy.users.push({ login: 'new.person1', email: 'n@example.com' }));
    const reordered = withChange((copy) => copy.users.reverse());
    assert.equal(passes(users, context({ final: renamedKenji })), true);
    assert.equal(passes(users, context({ final: renamedInes })), false, 'another item of the list changed');
    assert.equal(passes(users, context({ final: added })), false, 'an added item is a change without allow_added');
    assert.equal(passes({ ...users, allow_added: true }, context({ final: added })), true);
    assert.equal(passes({ ...users, allow_added: true }, context({ final: renamedInes })), false, 'allow_added does not excuse an altered item');
    assert.equal(passes({ unchanged: '/users', except_where: { login: 'ines.okafor27' } }, context({ final: reordered })), true, 'one item left: order cannot differ');
    assert.equal(passes({ unchanged: '/users', except_where: { login: 'nobody' } }, context({ final: reordered })), false, 'a list keeps its order');
  });

  it('fills parameters into an answer regex as literal text', () => {
    const ctx = (answer: string) => context({ answer, params: { price: '$124.99', stock: 97 } });
    const predicate: Predicate = { answer: { matches: '{{price}}, (?:with )?{{stock}} in stock' } };
    assert.equal(passes(predicate, ctx('It costs $124.99, with 97 in stock.')), true);
    assert.equal(passes(predicate, ctx('It costs $124x99, with 97 in stock.')), false, 'the dot is not a wildcard');
    assert.equal(passes(predicate, ctx('It costs $124.99, with 970 in stock.')), false, '970 is not 97');
    assert.equal(passes(predicate, ctx('It costs $124.99, 9 in stock.')), false);
  });

  it('counts calls in the history, by outcome', () => {
    const ctx = context({ messages: closeMessages });
    assert.equal(passes({ calls: { tool: 'close_issue' }, equals: 2 }, ctx), true);
    assert.equal(passes({ calls: { tool: 'close_issue', ok: true }, equals: 1 }, ctx), true);
    assert.equal(passes({ calls: { tool: 'close_issue', ok: false }, max: 0 }, ctx), false);
    assert.equal(passes({ calls: { tool: 'delete_issue' }, equals: 0 }, ctx), true);
    const renamed = closeMessages.map((message) => (message.role === 'tool' && message.tool_call_id === 'call_2' ? { ...message, name: 'close_issue_v2' } : message));
    const aliased = context({ messages: renamed, aliases: new Map([['close_issue_v2', 'close_issue']]) });
    assert.equal(passes({ calls: { tool: 'close_issue' }, equals: 2 }, aliased), true, 'calls through a renamed tool still count');
  });

  it('combines with all, any and not', () => {
    const open: Predicate = { path: '/issues/1423/state', equals: 'open' };
    const closed: Predicate = { path: '/issues/1423/state', equals: 'closed' };
    assert.equal(passes({ all: [open, { not: closed }] }), true);
    assert.equal(passes({ all: [open, closed] }), false);
    assert.equal(passes({ any: [closed, open] }), true);
    assert.equal(passes({ any: [closed, { not: open }] }), false);
  });
});

describe('hidden predicates over the final answer', () => {
  it('matches whole tokens, case-insensitively: 1423 is not inside 14230', () => {
    assert.ok(answerMentions('Found #1423.', '1423'));
    assert.ok(answerMentions('owner INES.OKAFOR27 here', 'ines.okafor27'));
    assert.ok(!answerMentions('Found 14230', '1423'));
    assert.ok(!answerMentions('Found 21423', '1423'));
    assert.ok(answerMentions('(a+b) [x]', '(a+b)'));
  });

  it('requires literal values, and every value a query finds, or none of them', () => {
    assert.equal(passes({ answer: { contains: '{{target.assignee}}' } }, context({ answer: 'assigned to ines.okafor27' })), true);
    assert.equal(passes({ answer: { contains: ['1423', 'ines.okafor27'] } }, context({ answer: 'closed 1423' })), false);
    const everyOpenBug: Predicate = { answer: { contains_all: { path: '/issues', where: { topic: '{{topic}}', state: 'open', labels: { includes: 'bug' } }, field: 'number' } } };
    assert.equal(passes(everyOpenBug), true);
    assert.equal(passes(everyOpenBug, context({ answer: 'Nothing found.' })), false);
    const noClosed: Predicate = { answer: { contains_none: { path: '/issues', where: { topic: '{{topic}}', state: 'closed' }, field: 'number' } } };
    assert.equal(passes(noClosed), true);
    assert.equal(passes(noClosed, context({ answer: 'Login bugs: 1423, 2077' })), false);
    assert.equal(evaluatePredicate(noClosed, context({ answer: 'Login bugs: 1423, 2077' })).detail, 'answer mentions 2077');
    const email: Predicate = { answer: { contains_all: { path: '/users', where: { login: '{{target.assignee}}' }, field: 'email' } } };
    assert.equal(passes(email, context({ answer: 'Write to ines.okafor@northwind.example.com.' })), true);
    const nobody: Predicate = { answer: { contains_all: { path: '/users', where: { login: 'nobody.here00' }, field: 'email' } } };
    assert.deepEqual(evaluatePredicate(nobody, context({ answer: 'Anything at all.' })), {
      passed: false,
      detail: 'nothing in /users matches the query, so there is nothing the answer could name',
    });
    const noneOfNothing: Predicate = { answer: { contains_none: { path: '/users', where: { login: 'nobody.here00' }, field: 'email' } } };
    assert.equal(passes(noneOfNothing, context({ answer: 'Anything at all.' })), true, 'naming none of nothing is still true');
  });

  it('matches a regular expression, and fails every answer check when there is no answer', () => {
    assert.equal(passes({ answer: { matches: '^Open .* 1423\\.$' } }), true);
    assert.equal(passes({ answer: { contains: 'x' } }, context({ answer: null })), false);
    assert.equal(evaluatePredicate({ answer: { contains: 'x' } }, context({ answer: null })).detail, 'the episode ended without a final answer');
  });

  it('matches in linear time, on at most the first 64 KiB of the answer, and fails a pattern it cannot run whichever way it is wrapped', () => {
    const hostile: Predicate = { answer: { matches: '^(([a-zA-Z0-9 ,:]+)+)!$' } };
    const started = performance.now();
    assert.equal(passes(hostile, context({ answer: `${'a'.repeat(5_000)}?` })), false);
    assert.equal(passes(hostile, context({ answer: `${'a'.repeat(5_000)}!` })), true);
    assert.ok(performance.now() - started < 2_000);
    const long = `${'x'.repeat(70_000)} done`;
    assert.deepEqual(evaluatePredicate({ answer: { matches: 'done' } }, context({ answer: long })), {
      passed: false,
      detail: 'answer does not match /done/ in its first 65536 characters',
    });
    // Steps are counted: a pattern that keeps 1500 states alive over 64 KiB runs out of its budget, and that is no verdict either way.
    const costly: Predicate = { answer: { matches: '[a-z]{1500}!' } };
    const answer = 'a'.repeat(65_536);
    for (const predicate of [costly, { not: costly }, { any: [costly] }, { not: { any: [costly] } }, { not: { all: [costly] } }] as Predicate[]) {
      const verdict = evaluatePredicate(predicate, context({ answer }));
      assert.equal(verdict.passed, false, JSON.stringify(predicate).slice(0, 40));
      assert.match(verdict.detail, /answer cannot be matched against \/\[a-z\]\{1500\}!\/: matching needs more than 16000000 steps/);
    }
  });

  it('reports a verdict per top-level predicate, with a reason only for failures', () => {
    const verdicts = evaluatePredicates(
      [
        { id: 'open', path: '/issues/1423/state', equals: 'open' },
        { id: 'names-owner', answer: { contains: 'kenji.sato41' } },
      ],
      context(),
    );
    assert.deepEqual(verdicts, [
      { id: 'open', passed: true },
      { id: 'names-owner', passed: false, detail: 'answer does not mention kenji.sato41' },
    ]);
  });
});

describe('answerMentions fast path', () => {
  // The definition, as it was before the ASCII fast path: the fast path must agree with it everywhere.
  const reference = (answer: string, value: string): boolean => {
    const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu').test(answer);
  };

  it('agrees with the regular expression on every short text over a tricky alphabet', () => {
    // ASCII letters of both cases, digits, punctuation the escaping touches, and
    // non-ASCII letters /iu folds onto ASCII ones (U+017F ſ → s, U+212A K → k) or not at all (é, ß, an astral letter, a combining mark).
    const alphabet = ['s', 'S', 'k', 'K', '1', ' ', '.', '_', '(', '\u017f', '\u212a', 'é', 'ß', '\ud835\udc00', '\u0301'];
    const texts = [''];
    for (const a of alphabet) {
      texts.push(a);
      for (const b of alphabet) {
        texts.push(a + b);
        for (const c of ['s', 'K', '1', ' ', '\u017f']) texts.push(a + b + c);
      }
    }
    const values = ['', 's', 'S', 'k', 'sk', 'Ks', '1', 's1', '.', '(s', 's s', '\u017f', '\u212a', 'é', 'ss', 'ß'];
    let hits = 0;
    let asciiHits = 0;
    for (const value of values) {
      for (const answer of texts) {
        const expected = reference(answer, value);
        assert.equal(answerMentions(answer, value), expected, `${JSON.stringify(value)} in ${JSON.stringify(answer)}`);
        if (expected) {
          hits++;
          if (/^[\x00-\x7f]*$/.test(answer + value)) asciiHits++;
        }
      }
    }
    assert.ok(hits > 500 && asciiHits > 100, `${hits} hits, ${asciiHits} on ASCII`);
  });

  it('agrees on realistic answers, repeated values and repeated answers', () => {
    const answers = [
      'Closed #1423 (duplicate of #2077). Assigned to INES.OKAFOR27; email ines.okafor@northwind.example.com.',
      'Issues 1423, 14230 and 21423 — all open. Kelvin: 5\u212a; straße; ſtate',
      'The total is $124.99 (not $124.990), see a+b [x] {y} |z| ^w^ back\\slash',
      'ab ab ab abab',
      '11 1 1 and xsx s',
      '',
    ];
    const values = ['1423', '2077', 'ines.okafor27', 'ines.okafor@northwind.example.com', '$124.99', '124.99', 'a+b', '[x]', '{y}', '|z|', '^w^', 'back\\slash',
      'k', 'K', '5k', 'strasse', 'state', 'STATE', 'ab', 'abab', 'bab', '', ' ', 'all open', '1 1', 's'];
    for (let round = 0; round < 2; round++) {
      for (const answer of answers) {
        for (const value of values) assert.equal(answerMentions(answer, value), reference(answer, value), `${JSON.stringify(value)} in ${JSON.stringify(answer)}`);
      }
    }
  });
});

describe('hidden predicates over the dialogue', () => {
  const facts = [
    { id: 'issue', value: '#1423', withheld: true, asked_by: ['which issue'], answer: "It's #1423.", question: 'Which issue?' },
    { id: 'reason', value: 'as completed', withheld: false, asked_by: ['reason'], answer: 'As completed.', question: 'Which reason?' },
  ];
  const opening: Message = { role: 'user', content: 'Close the fixed one as completed.' };
  const close: Message = { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'close_issue', arguments: { number: 1423 } }] };
  const ask = (text: string): Message => ({ role: 'assistant', content: text });
  const reply = (text: string): Message => ({ role: 'user', content: text });

  it('informed: every call of the tool must come after a user turn that gave the fact', () => {
    const informed: Predicate = { informed: { fact: 'issue', before: 'close_issue' } };
    assert.equal(passes(informed, context({ facts, messages: [opening, ask('Which issue?'), reply("It's #1423."), close] })), true);
    const guessed = evaluatePredicate(informed, context({ facts, messages: [opening, close, ask('Done.'), reply("No. It's #1423."), close] }));
    assert.equal(guessed.passed, false);
    assert.equal(guessed.detail, 'close_issue was called at message 1 before the user gave issue ("#1423")');
    // A renamed tool is still the same tool.
    const renamed: Message = { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'close_issue_v2', arguments: {} }] };
    assert.equal(passes(informed, context({ facts, messages: [opening, renamed], aliases: new Map([['close_issue_v2', 'close_issue']]) })), false);
    assert.equal(passes(informed, context({ facts, messages: [opening] })), true, 'never calling the tool is for other predicates to judge');
    assert.equal(evaluatePredicate({ informed: { fact: 'nope', before: 'close_issue' } }, context({ facts })).detail, 'the task has no fact "nope"');
  });

  it('questions: counts the agent text turns that ask, for one fact or any', () => {
    const messages = [opening, ask('What reason should I give?'), reply('As completed.'), ask('Which issue?'), reply("It's #1423."), close, ask('Closed #1423. Anything else?')];
    assert.equal(passes({ questions: { fact: 'reason' }, max: 0 }, context({ facts, messages })), false);
    assert.equal(evaluatePredicate({ questions: { fact: 'reason' }, max: 0 }, context({ facts, messages })).detail, 'questions asking for reason is 1, expected at most 0');
    assert.equal(passes({ questions: { fact: 'issue' }, equals: 1 }, context({ facts, messages })), true);
    assert.equal(passes({ questions: {}, equals: 3 }, context({ facts, messages })), true);
    // A turn that calls a tool is not a question, whatever its text says.
    const withCall: Message = { role: 'assistant', content: 'Which issue? I will read them all.', tool_calls: [{ id: 'call_9', name: 'search_issues', arguments: {} }] };
    assert.equal(passes({ questions: { fact: 'issue' }, equals: 0 }, context({ facts, messages: [opening, withCall] })), true);
  });
});
