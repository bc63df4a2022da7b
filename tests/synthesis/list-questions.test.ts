// A read filtered by a kind becomes a question about every record of that
// kind when what it lists is exactly those records on every seed; a list that
// is a page short, or every record, is no question.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { substream } from '../../src/core/random.js';
import { ParameterPool } from '../../src/synthesis/argument-filling.js';
import { listQuestion } from '../../src/synthesis/list-questions.js';
import { surveyState } from '../../src/synthesis/state-survey.js';

const issues = [
  { number: 1, state: 'open', title: 'a' },
  { number: 2, state: 'closed', title: 'b' },
  { number: 3, state: 'open', title: 'c' },
];
const initial = { issues };
const collections = surveyState(initial);
const tools = [{ name: 'list_issues', inputSchema: { type: 'object', properties: { state: { type: 'string', enum: ['open', 'closed'] } } } }];
const candidate = { calls: [{ call: 'list_issues', arguments: { state: 'open' }, mentions: [{ property: 'state', text: 'open' }] }], pool: new ParameterPool(substream(0, 'list-test')) };
const states = [{ initial, final: initial, params: {} }];

describe('list questions', () => {
  it('asks for every record of the kind the read filtered by, checks none other, and is proven against another kind', () => {
    const question = listQuestion(candidate, tools, collections, states, [[{ items: [issues[0]!, issues[2]!] }]]);
    assert.ok(!('problem' in question), JSON.stringify(question));
    assert.equal(question.reference, 'r1.items.*.number');
    assert.deepEqual(question.predicates.map((predicate) => predicate.answer ?? predicate.unchanged), [
      { contains_all: { path: '/issues', where: { state: 'open' }, field: 'number' } },
      { contains_none: { path: '/issues', where: { state: { not: 'open' } }, field: 'number' } },
      '',
    ]);
    assert.deepEqual(question.wrong[0]!.solution[0], { call: 'list_issues', arguments: { state: 'closed' }, as: 'r1' });
  });

  it('is no question when the list is a page short of the kind', () => {
    const question = listQuestion(candidate, tools, collections, states, [[{ items: [issues[0]!] }]]);
    assert.ok('problem' in question);
  });
});
