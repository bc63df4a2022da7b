import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { substream } from '../../src/core/random.js';
import type { PhrasingRules, Task } from '../../src/lanes/lane.js';
import { compileGrammar, drawPhrasing, MAX_PHRASINGS, phrasingsOf, tidy } from '../../src/lanes/phrasing-grammar.js';
import { instantiateTask } from '../../src/lanes/task-instance.js';

const GREETINGS: PhrasingRules = { greet: ['Hi! ', 'Hello. '] };
const CLOSE: PhrasingRules = {
  say: ['<greet?><^ask> <when?>', '<^when>, <ask>'],
  ask: ['close issue #{{n}}', 'please shut #{{n}}'],
  when: ['today', 'by {{due}}'],
};

const templates = (rules: PhrasingRules, shared?: PhrasingRules) => phrasingsOf(rules, shared).map((phrasing) => phrasing.template);
const problems = (rules: PhrasingRules, shared?: PhrasingRules) => compileGrammar(rules, shared).problems.map((problem) => `${problem.tokens.join('/')}: ${problem.reason}`);

describe('phrasing grammars', () => {
  it('leave a plain sentence exactly as written, spaces and all, and draw nothing for it', () => {
    assert.deepEqual(phrasingsOf('Close  #{{n}} .'), [{ template: 'Close  #{{n}} .' }]);
    const random = substream(1, 'text:close');
    assert.deepEqual(drawPhrasing('Close  #{{n}} .', undefined, random), { template: 'Close  #{{n}} .' });
  });

  it('enumerate every phrasing in a fixed order: alternatives, optional parts, capitals, orders, shared rules', () => {
    const phrasings = phrasingsOf(CLOSE, GREETINGS);
    // say 0: (greet: none or 2) x ask 2 x (when: none or 2) = 18; say 1: when 2 x ask 2 = 4.
    assert.equal(phrasings.length, 22);
    assert.deepEqual(phrasings.slice(0, 3), [
      { template: 'Close issue #{{n}}', path: 'say=0 greet=- ask=0 when=-' },
      { template: 'Close issue #{{n}} today', path: 'say=0 greet=- ask=0 when=0' },
      { template: 'Close issue #{{n}} by {{due}}', path: 'say=0 greet=- ask=0 when=1' },
    ]);
    const all = phrasings.map((phrasing) => phrasing.template);
    assert.ok(all.includes('Hello. Please shut #{{n}} by {{due}}'));
    assert.ok(all.includes('By {{due}}, please shut #{{n}}'), 'the same facts in another order, capitalised where the sentence starts');
    assert.equal(new Set(all).size, all.length, 'no two phrasings are the same words');
  });

  it('let a task\'s own rule win over the lane\'s rule of the same name', () => {
    const own = { ...CLOSE, greet: 'Good morning. ' };
    assert.ok(templates(own, GREETINGS).includes('Good morning. Close issue #{{n}}'));
    assert.ok(!templates(own, GREETINGS).some((template) => template.startsWith('Hi!')));
  });

  it('tidy the spaces an omitted part leaves, and only those of the grammar\'s own text', () => {
    assert.equal(tidy('  Close it  , please .  '), 'Close it, please.');
    assert.deepEqual(templates({ say: 'Close <what?> ({{note}}) <when?>.', what: 'it', when: 'now' }), [
      'Close ({{note}}).',
      'Close ({{note}}) now.',
      'Close it ({{note}}).',
      'Close it ({{note}}) now.',
    ]);
  });

  it('draw the same phrasing for the same seed, and every phrasing for enough seeds (uniformly, not per choice)', () => {
    const draw = (seed: number) => drawPhrasing(CLOSE, GREETINGS, substream(seed, 'text:close')).path;
    assert.equal(draw(7), draw(7));
    const counts = new Map<string, number>();
    for (let seed = 0; seed < 2200; seed++) counts.set(draw(seed)!, (counts.get(draw(seed)!) ?? 0) + 1);
    assert.equal(counts.size, 22);
    // Uniform over 22 phrasings: about 100 each. A per-choice draw would give say=1's four phrasings 275 each.
    for (const [path, count] of counts) assert.ok(count > 60 && count < 140, `${path} drawn ${count} times of 2200`);
  });

  it('report every problem at its rule: unknown and mistyped references, cycles, unused rules, a missing start', () => {
    assert.deepEqual(problems({ say: '<greet> <Ask>', loop: '<loop>' }), [
      'user/say: "<Ask>" is not a rule reference: rule names are lower-case letters, digits and _, starting with a letter',
      'user/say: refers to <greet>, which is no rule of this task or lane (rules: loop)',
      'user/loop: is never used: no phrasing starting at "say" reaches it; use it as <loop> or remove it',
    ]);
    assert.deepEqual(problems({ say: ['<a>'], a: ['x <b>'], b: ['<a>', 'y'] }), ['user/b/0: rule "a" refers back to itself (say -> a -> b -> a); a grammar must end']);
    assert.deepEqual(problems({ ask: 'x' }, { say: 'y' }), ['user: a phrasing grammar starts at its rule "say"; add "say": ["..."]']);
  });

  it('name the rule that makes a grammar too large, and what multiplies in it', () => {
    const letters = 'abcdefghijk'.split('');
    assert.deepEqual(problems({ say: ['<word><word><word>'], word: letters }), [
      `user/say: rule "say" has 1331 phrasings, more than the ${MAX_PHRASINGS} a task may have (it multiplies <word> 11); drop alternatives or split the task`,
    ]);
    assert.match(problems({ say: ['<three> or <three?>'], three: ['<word><word><word>'], word: letters }).join('\n'), /^user\/three: rule "three" has 1331 phrasings/);
  });

  it('refuse phrasings that say the same words twice, say nothing, or run two sentences together', () => {
    assert.deepEqual(problems({ say: ['<a?><b?>'], a: 'x', b: ['', 'y'] }), [
      'user: phrasing "say=0 a=- b=-" is empty: the user would say nothing (and 1 more like it)',
      'user: phrasings "say=0 a=- b=-" and "say=0 a=- b=0" are the same words (""); drop an alternative or an optional part so each phrasing is said one way (and 1 more like it)',
    ]);
    assert.deepEqual(problems({ say: ['<greet><^ask>'], greet: ['Hi!', 'Hello, '], ask: 'close #{{n}}.' }), [
      'user: phrasing "say=0 greet=0 ask=0" runs two sentences together ("!C" in "Hi!Close #{{n}}."); end the first part with a space',
    ]);
  });

  it('give an episode its drawn message and the choices that made it; a plain sentence records none', () => {
    const snapshot = { issues: [{ number: 1423, state: 'open' }] };
    const task: Task = {
      id: 'close',
      title: 'close one',
      params: { target: { from: '/issues' }, due: { choice: ['Friday', 'Monday'] } },
      user: { say: ['<greet?><^ask> <when?>', '<^when>, <ask>'], ask: ['close issue #{{target.number}}', 'please shut #{{target.number}}'], when: ['today', 'by {{due}}'] },
      solution: [{ call: 'close_issue', arguments: { number: '{{target.number}}' } }, { answer: 'Done.' }],
      predicates: [{ id: 'closed', path: '/issues/0/state', equals: 'closed' }],
    };
    const instance = (seed: number) => instantiateTask(task, snapshot, substream(seed, 'task:close'), { random: substream(seed, 'text:close'), rules: GREETINGS });
    const one = instance(3);
    assert.deepEqual(one, instance(3));
    const drawn = phrasingsOf(task.user, GREETINGS).find((phrasing) => phrasing.path === one.phrasing);
    assert.ok(drawn, `a path of the grammar: ${one.phrasing}`);
    assert.equal(one.userMessage, drawn.template.replace('{{target.number}}', '1423').replace('{{due}}', String(one.params.due)));
    assert.ok(new Set([0, 1, 2, 3, 4, 5, 6, 7].map((seed) => instance(seed).userMessage)).size > 4, 'seeds word it differently');
    assert.throws(() => instantiateTask(task, snapshot, substream(3, 'task:close')), /needs the episode's text substream/);

    const plain = instantiateTask({ ...task, user: 'Close #{{target.number}}.' }, snapshot, substream(3, 'task:close'), { random: substream(3, 'text:close') });
    assert.equal(plain.userMessage, 'Close #1423.');
    assert.equal('phrasing' in plain, false);
    assert.deepEqual(plain.params, one.params, 'the phrasing draws from its own substream: the parameters do not move');
  });
});
