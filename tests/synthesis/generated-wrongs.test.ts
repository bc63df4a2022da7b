// A synthesised task's wrong trajectories: a fresh value "a little off" must
// fail the predicate that checks it. A value checked whole gets a suffix; a
// value checked only as contained in a text (a line edited into a file) is
// cut short instead, since a suffix would still contain it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Predicate, SolutionStep } from '../../src/lanes/lane.js';
import { generateWrongs } from '../../src/synthesis/generated-wrongs.js';
import { matchesWhere } from '../../src/core/where-clause.js';

const solution: SolutionStep[] = [{ call: 'edit_file', arguments: { path: '/sandbox/a.md', edits: [{ oldText: '# A', newText: '{{new_text}}' }] }, as: 'r1' }, { answer: 'Done.' }];
const choice = ['amber delta: owner is on leave', 'opal-fjord'];

function offValues(predicates: Predicate[]): string[] {
  const wrongs = generateWrongs({ solution, params: { new_text: { choice } }, bindings: [], fresh: new Set(['new_text']), predicates, writes: [0], initials: [{}] });
  const wrong = wrongs.find((entry) => entry.id === 'writes-another-new-text');
  assert.ok(wrong, JSON.stringify(wrongs));
  assert.equal(JSON.stringify(wrong.solution).includes('{{new_text_wrong}}'), true);
  return (wrong.params!.new_text_wrong as { choice: string[] }).choice;
}

describe('a value a little off', () => {
  it('is cut short where the predicate only asks that the text contain it, so the check fails', () => {
    const off = offValues([{ id: 'sets-text', count: { path: '/files', where: { text: { contains: '{{new_text}}' } } }, equals: 1 }]);
    assert.deepEqual(off, ['amber delta: owner is on', 'opal-fjor']);
    off.forEach((value, index) => {
      const edited = `${value}\nrest of the file\n`;
      assert.equal(matchesWhere({ text: edited }, { text: { contains: choice[index]! } }), false, `"${value}" does not contain "${choice[index]}"`);
    });
  });

  it('keeps its suffix where the whole value is checked', () => {
    assert.deepEqual(offValues([{ id: 'sets-text', count: { path: '/files', where: { text: '{{new_text}}' } }, equals: 1 }]), choice.map((value) => `${value} (old)`));
  });
});
