import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../src/core/conversation.js';
import { checkClaims, sentences } from '../../src/verify/claims.js';
import { ISSUES_TOOLS } from '../../src/world/issues/issues-tools.js';

const call = (name: string, ok: boolean): Message[] => [
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name, arguments: {} }] },
  { role: 'tool', tool_call_id: 'call_1', name, content: ok ? '{}' : 'failed', tool_result: ok ? { ok: true } : { ok: false, kind: 'tool_error', error: 'failed' } },
];

describe('claims in a final answer', () => {
  it('splits an answer into sentences', () => {
    assert.deepEqual(sentences('Closed #12. It was assigned to ana.\nDone!'), ['Closed #12.', 'It was assigned to ana.', 'Done!']);
  });

  it('flags a claimed action with no successful call behind it', () => {
    const evidence = checkClaims('I closed issue #4821 as completed.', ISSUES_TOOLS, []);
    assert.deepEqual(evidence, { claims: [{ tool: 'close_issue', sentence: 'I closed issue #4821 as completed.', supported: false }], unsupported: 1 });
    assert.equal(checkClaims('I closed issue #4821 as completed.', ISSUES_TOOLS, call('close_issue', false)).unsupported, 1, 'a failed call backs nothing');
  });

  it('accepts a claim backed by a successful call, including through a renamed tool', () => {
    assert.equal(checkClaims('Closed #4821 as completed. It was assigned to ana.', ISSUES_TOOLS, call('close_issue', true)).unsupported, 0);
    assert.equal(checkClaims('Posted comment c-1 on #4.', ISSUES_TOOLS, call('add_comment', true)).claims[0]!.supported, true);
    const renamed = checkClaims("I've posted the comment.", ISSUES_TOOLS, call('add_comment_v2', true), new Map([['add_comment_v2', 'add_comment']]));
    assert.equal(renamed.unsupported, 0);
  });

  it('does not read descriptions, refusals or other people\'s actions as claims', () => {
    for (const answer of [
      'Issue #4821 is already closed.',
      'I could not close the issue: close_issue failed (rate limited).',
      'I have not closed it yet.',
      'Sorry, I have to stop here: add_comment failed (upstream service unavailable).',
      'Open bugs about login: 4821, 5120.',
      '#4821 "Login: loop" is now labelled enhancement.',
    ]) {
      assert.deepEqual(checkClaims(answer, ISSUES_TOOLS, []).claims, [], answer);
    }
  });

  it('finds several claims in one answer and checks each', () => {
    const evidence = checkClaims('I removed the bug label. I added the enhancement label. I left a comment too.', ISSUES_TOOLS, [
      ...call('remove_label', true),
      ...call('add_label', true),
    ]);
    assert.deepEqual(evidence.claims.map((claim) => [claim.tool, claim.supported]), [
      ['remove_label', true],
      ['add_label', true],
      ['add_comment', false],
    ]);
    assert.equal(evidence.unsupported, 1);
  });

  it('has nothing to check without an answer', () => {
    assert.deepEqual(checkClaims(null, ISSUES_TOOLS, []), { claims: [], unsupported: 0 });
  });
});

describe('claims after a lost answer', () => {
  it('accept a call that reached the tool but whose answer was lost; a definite failure backs nothing', () => {
    const lost = (kind: 'timeout' | 'transport_error' | 'tool_error' | 'invalid_arguments'): Message[] => [
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'close_issue', arguments: {} }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'close_issue', content: 'x', tool_result: { ok: false, kind, error: 'x' } },
    ];
    assert.equal(checkClaims('Closed #1.', ISSUES_TOOLS, lost('timeout')).unsupported, 0);
    assert.equal(checkClaims('Closed #1.', ISSUES_TOOLS, lost('transport_error')).unsupported, 0);
    assert.equal(checkClaims('Closed #1.', ISSUES_TOOLS, lost('tool_error')).unsupported, 1);
    assert.equal(checkClaims('Closed #1.', ISSUES_TOOLS, lost('invalid_arguments')).unsupported, 1);
  });
});

describe('claims about reads', () => {
  it('checks "I searched" and "I replaced the label" like any other claim', () => {
    const searched = checkClaims('I searched the tracker: there are no open bugs about sync.', ISSUES_TOOLS, []);
    assert.deepEqual(searched.claims.map((claim) => claim.tool), ['search_issues']);
    assert.equal(searched.unsupported, 1);
    const replaced = checkClaims('I replaced the bug label on issue #6080 with enhancement.', ISSUES_TOOLS, call('remove_label', true));
    assert.deepEqual(replaced.claims.map((claim) => [claim.tool, claim.supported]), [
      ['add_label', false],
      ['remove_label', true],
    ]);
  });
});
