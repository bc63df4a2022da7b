import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { substream } from '../../src/core/random.js';
import type { IssuesState } from '../../src/world/issues/issues-state.js';
import { SYMPTOMS, TOPICS } from '../../src/world/issues/issues-vocabulary.js';
import { issuesWorld } from '../../src/world/issues/issues-world.js';

const fresh = (seed = 1): IssuesState => issuesWorld.init(substream(seed, 'world'), {});
const ok = (outcome: ReturnType<typeof issuesWorld.call>) => {
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.message);
  return outcome.value as any;
};

describe('issues world state', () => {
  it('is the same for the same seed and different for another', () => {
    assert.equal(canonicalJson(issuesWorld.snapshot(fresh(5))), canonicalJson(issuesWorld.snapshot(fresh(5))));
    assert.notEqual(canonicalJson(issuesWorld.snapshot(fresh(5))), canonicalJson(issuesWorld.snapshot(fresh(6))));
  });

  it('holds a few dozen issues with unguessable numbers, logins and tokens', () => {
    const state = fresh(3);
    assert.ok(state.issues.size >= 30 && state.issues.size <= 40, `${state.issues.size} issues`);
    for (const issue of state.issues.values()) {
      assert.ok(issue.number >= 1000 && issue.number <= 9999);
      assert.match(issue.body, /Build [0-9a-f]{7}, trace [0-9a-f]{4}-[0-9a-f]{4}\./);
    }
    assert.equal(state.users.length, 8);
    for (const user of state.users) assert.match(user.login, /^[a-z]+\.[a-z]+[0-9]{2}$/);
  });

  it('gives every topic an open bug and a distractor, so a topic search has right and wrong answers', () => {
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const state = fresh(seed);
      for (const topic of TOPICS) {
        const issues = [...state.issues.values()].filter((issue) => issue.topic === topic);
        assert.ok(issues.some((issue) => issue.state === 'open' && issue.labels.includes('bug')), `seed ${seed} ${topic}: no open bug`);
        assert.ok(issues.some((issue) => issue.state === 'closed' || !issue.labels.includes('bug')), `seed ${seed} ${topic}: no distractor`);
      }
    }
  });

  it('uses each topic word only in its own issues', () => {
    for (const topic of TOPICS) {
      for (const other of TOPICS) {
        for (const symptom of SYMPTOMS[other]) {
          if (other !== topic) assert.ok(!`${other} ${symptom}`.toLowerCase().includes(topic), `"${topic}" appears in a ${other} title: ${symptom}`);
        }
      }
    }
    const state = fresh(9);
    for (const issue of state.issues.values()) {
      for (const topic of TOPICS) {
        if (topic !== issue.topic) assert.ok(!`${issue.title} ${issue.body}`.toLowerCase().includes(topic));
      }
    }
  });

  it('takes snapshots that do not change when the state does', () => {
    const state = fresh(2);
    const before = issuesWorld.snapshot(state);
    const text = canonicalJson(before);
    const number = [...state.issues.keys()][0]!;
    ok(issuesWorld.call(state, 'add_comment', { number, body: 'hello' }));
    assert.equal(canonicalJson(before), text);
    assert.notEqual(canonicalJson(issuesWorld.snapshot(state)), text);
  });
});

describe('issues world tools', () => {
  it('searches by every query word, state and label, in number order, up to the limit', () => {
    const state = fresh(4);
    const all = ok(issuesWorld.call(state, 'search_issues', { query: 'login', limit: 50, state: 'all' }));
    const expected = [...state.issues.values()].filter((issue) => issue.topic === 'login').map((issue) => issue.number).sort((a, b) => a - b);
    assert.deepEqual(all.issues.map((issue: any) => issue.number), expected);
    assert.equal(all.total, expected.length);
    const openBugs = ok(issuesWorld.call(state, 'search_issues', { query: 'LOGIN', limit: 50, label: 'bug' }));
    assert.ok(openBugs.issues.every((issue: any) => issue.state === 'open' && issue.labels.includes('bug')));
    const limited = ok(issuesWorld.call(state, 'search_issues', { query: 'login', limit: 1, state: 'all' }));
    assert.equal(limited.issues.length, 1);
    assert.equal(limited.total, expected.length);
    assert.equal(ok(issuesWorld.call(state, 'search_issues', { query: 'login zebra', limit: 5 })).total, 0);
  });

  it('never shows the hidden topic field through a tool', () => {
    const state = fresh(4);
    const number = [...state.issues.keys()][0]!;
    assert.ok(!('topic' in ok(issuesWorld.call(state, 'get_issue', { number })).issue));
  });

  it('closes an open issue once, and refuses a second close or a missing issue', () => {
    const state = fresh(5);
    const open = [...state.issues.values()].find((issue) => issue.state === 'open')!;
    const closed = ok(issuesWorld.call(state, 'close_issue', { number: open.number, reason: 'completed' }));
    assert.equal(closed.issue.state, 'closed');
    assert.equal(closed.issue.closed_reason, 'completed');
    const again = issuesWorld.call(state, 'close_issue', { number: open.number, reason: 'completed' });
    assert.deepEqual(again, { ok: false, message: `Issue #${open.number} is already closed (reason: completed).` });
    assert.equal(issuesWorld.call(state, 'get_issue', { number: 10 }).ok, false);
  });

  it('enforces the duplicate rule a schema cannot express', () => {
    const state = fresh(5);
    const [first, second] = [...state.issues.values()].filter((issue) => issue.state === 'open');
    assert.match((issuesWorld.call(state, 'close_issue', { number: first!.number, reason: 'duplicate' }) as any).message, /duplicate_of is required/);
    assert.match((issuesWorld.call(state, 'close_issue', { number: first!.number, reason: 'completed', duplicate_of: second!.number }) as any).message, /only allowed/);
    assert.equal(ok(issuesWorld.call(state, 'close_issue', { number: first!.number, reason: 'duplicate', duplicate_of: second!.number })).issue.duplicate_of, second!.number);
  });

  it('adds labels idempotently and refuses to remove one that is absent', () => {
    const state = fresh(6);
    const issue = [...state.issues.values()][0]!;
    const labels = ok(issuesWorld.call(state, 'add_label', { number: issue.number, label: 'docs' })).issue.labels;
    assert.deepEqual(ok(issuesWorld.call(state, 'add_label', { number: issue.number, label: 'docs' })).issue.labels, labels);
    ok(issuesWorld.call(state, 'remove_label', { number: issue.number, label: 'docs' }));
    assert.match((issuesWorld.call(state, 'remove_label', { number: issue.number, label: 'docs' }) as any).message, /does not have the label "docs"/);
  });

  it('numbers new comments and issues deterministically from the state, with the world clock', () => {
    const a = fresh(7);
    const b = fresh(7);
    const number = [...a.issues.keys()][2]!;
    const first = ok(issuesWorld.call(a, 'add_comment', { number, body: 'x' }));
    assert.deepEqual(ok(issuesWorld.call(b, 'add_comment', { number, body: 'x' })), first);
    assert.match(first.comment.id, /^c-\d+$/);
    const created = ok(issuesWorld.call(a, 'create_issue', { title: 'New thing', labels: ['docs'] }));
    assert.equal(created.issue.number, Math.max(...[...b.issues.keys()]) + 1);
    assert.ok(created.issue.created_at > first.comment.created_at);
  });

  it('refuses assignees and users that do not exist', () => {
    const state = fresh(8);
    const number = [...state.issues.keys()][0]!;
    assert.match((issuesWorld.call(state, 'update_issue', { number, fields: { assignee: 'nobody.here' } }) as any).message, /no such user/);
    assert.match((issuesWorld.call(state, 'get_user', { login: 'nobody.here' }) as any).message, /No user/);
    const user = state.users[0]!;
    assert.equal(ok(issuesWorld.call(state, 'update_issue', { number, fields: { assignee: user.login, due_on: '2026-03-31' } })).issue.assignee, user.login);
    assert.deepEqual(ok(issuesWorld.call(state, 'get_user', { login: user.login })).user, user);
  });
});
