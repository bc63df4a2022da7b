// Owns the behaviour of the issues world: an issue tracker whose tools search,
// read, create, update, close, label and comment. Arguments arrive already
// checked against the input schemas; this module enforces the rules a schema
// cannot say (an issue must exist, a closed issue cannot be closed again).

import { copyPlain } from '../../core/json-copy.js';
import type { JsonObject, JsonValue } from '../../core/json-value.js';
import type { World } from '../world-contract.js';
import { dispatchTo, fail, succeed, type ToolHandler } from '../tool-handlers.js';
import { generateIssuesState, timestamp, type CloseReason, type Issue, type IssuesConfig, type IssuesState, type Priority } from './issues-state.js';
import { ISSUES_TOOLS } from './issues-tools.js';
import { inclusiveRangeSchema } from '../config-schema.js';


function publicIssue(issue: Issue): JsonObject {
  const { topic: _hidden, ...visible } = issue;
  return visible as unknown as JsonObject;
}

function summary(issue: Issue): JsonObject {
  return {
    number: issue.number,
    title: issue.title,
    state: issue.state,
    labels: [...issue.labels],
    assignee: issue.assignee,
    priority: issue.priority,
  };
}

function findIssue(state: IssuesState, number: unknown): Issue | string {
  const issue = state.issues.get(number as number);
  return issue ?? `Issue #${number} not found in ${state.repository}.`;
}

function tick(state: IssuesState): string {
  state.clock += 1;
  return timestamp(state.clock);
}

function knownLogin(state: IssuesState, login: string): boolean {
  return state.users.some((user) => user.login === login);
}

const handlers: Record<string, ToolHandler<IssuesState>> = {
  search_issues(state, args) {
    const words = String(args.query).toLowerCase().split(/\s+/).filter(Boolean);
    const wanted = (args.state as string | undefined) ?? 'open';
    const matches = [...state.issues.values()]
      .filter((issue) => wanted === 'all' || issue.state === wanted)
      .filter((issue) => args.label === undefined || issue.labels.includes(args.label as string))
      .filter((issue) => args.assignee === undefined || issue.assignee === args.assignee)
      .filter((issue) => {
        const haystack = `${issue.title}\n${issue.body}`.toLowerCase();
        return words.every((word) => haystack.includes(word));
      })
      .sort((left, right) => left.number - right.number);
    return succeed({ total: matches.length, issues: matches.slice(0, args.limit as number).map(summary) });
  },

  get_issue(state, args) {
    const issue = findIssue(state, args.number);
    return typeof issue === 'string' ? fail(issue) : succeed({ issue: publicIssue(issue) });
  },

  get_user(state, args) {
    const user = state.users.find((candidate) => candidate.login === args.login);
    return user ? succeed({ user: { ...user } }) : fail(`No user with login "${args.login}".`);
  },

  create_issue(state, args) {
    if (args.assignee !== undefined && !knownLogin(state, args.assignee as string)) {
      return fail(`Cannot assign to "${args.assignee}": no such user.`);
    }
    const number = Math.max(...state.issues.keys()) + 1;
    const now = tick(state);
    const issue: Issue = {
      number,
      title: args.title as string,
      body: (args.body as string | undefined) ?? '',
      state: 'open',
      closed_reason: null,
      duplicate_of: null,
      labels: [...((args.labels as string[] | undefined) ?? [])],
      assignee: (args.assignee as string | undefined) ?? null,
      priority: (args.priority as Priority | undefined) ?? 'p2',
      due_on: null,
      author: state.viewer,
      created_at: now,
      updated_at: now,
      comments: [],
      topic: null,
    };
    state.issues.set(number, issue);
    return succeed({ issue: publicIssue(issue) });
  },

  update_issue(state, args) {
    const issue = findIssue(state, args.number);
    if (typeof issue === 'string') return fail(issue);
    const fields = args.fields as JsonObject;
    if (typeof fields.assignee === 'string' && !knownLogin(state, fields.assignee)) {
      return fail(`Cannot assign to "${fields.assignee}": no such user.`);
    }
    if (fields.title !== undefined) issue.title = fields.title as string;
    if (fields.body !== undefined) issue.body = fields.body as string;
    if (fields.assignee !== undefined) issue.assignee = fields.assignee as string | null;
    if (fields.priority !== undefined) issue.priority = fields.priority as Priority;
    if (fields.due_on !== undefined) issue.due_on = fields.due_on as string;
    issue.updated_at = tick(state);
    return succeed({ issue: publicIssue(issue) });
  },

  close_issue(state, args) {
    const issue = findIssue(state, args.number);
    if (typeof issue === 'string') return fail(issue);
    if (issue.state === 'closed') return fail(`Issue #${issue.number} is already closed (reason: ${issue.closed_reason}).`);
    const reason = args.reason as CloseReason;
    if (reason === 'duplicate') {
      if (args.duplicate_of === undefined) return fail('duplicate_of is required when reason is "duplicate".');
      if (args.duplicate_of === issue.number) return fail(`Issue #${issue.number} cannot duplicate itself.`);
      if (!state.issues.has(args.duplicate_of as number)) return fail(`duplicate_of: issue #${args.duplicate_of} not found.`);
    } else if (args.duplicate_of !== undefined) {
      return fail('duplicate_of is only allowed when reason is "duplicate".');
    }
    issue.state = 'closed';
    issue.closed_reason = reason;
    issue.duplicate_of = reason === 'duplicate' ? (args.duplicate_of as number) : null;
    issue.updated_at = tick(state);
    return succeed({ issue: publicIssue(issue) });
  },

  add_label(state, args) {
    const issue = findIssue(state, args.number);
    if (typeof issue === 'string') return fail(issue);
    if (!issue.labels.includes(args.label as string)) {
      issue.labels.push(args.label as string);
      issue.updated_at = tick(state);
    }
    return succeed({ issue: publicIssue(issue) });
  },

  remove_label(state, args) {
    const issue = findIssue(state, args.number);
    if (typeof issue === 'string') return fail(issue);
    const index = issue.labels.indexOf(args.label as string);
    if (index < 0) return fail(`Issue #${issue.number} does not have the label "${args.label}".`);
    issue.labels.splice(index, 1);
    issue.updated_at = tick(state);
    return succeed({ issue: publicIssue(issue) });
  },

  add_comment(state, args) {
    const issue = findIssue(state, args.number);
    if (typeof issue === 'string') return fail(issue);
    const now = tick(state);
    const comment = {
      id: `c-${state.next_comment++}`,
      author: state.viewer,
      body: args.body as string,
      created_at: now,
      notified: [...((args.notify as string[] | undefined) ?? [])],
    };
    issue.comments.push(comment);
    issue.updated_at = now;
    return succeed({ comment: { ...comment }, comment_count: issue.comments.length });
  },
};

export const issuesWorld: World<IssuesState> = {
  name: 'issues',
  version: '1.0.0',
  description: 'An issue tracker: search, read, create, update, close, label and comment on a seeded repository.',
  tools: ISSUES_TOOLS,
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      issues_per_topic: inclusiveRangeSchema(2, 4, 'Inclusive range of issues generated per topic (at most 4, one per title).'),
    },
  },
  init(random, config) {
    return generateIssuesState(random, config as IssuesConfig);
  },
  call: dispatchTo('issues', handlers),
  snapshot(state): JsonValue {
    // A deep copy: an initial snapshot must not change when the live state does.
    const issues: Record<string, JsonValue> = {};
    for (const number of [...state.issues.keys()].sort((left, right) => left - right)) {
      issues[String(number)] = state.issues.get(number) as unknown as JsonValue;
    }
    return copyPlain({
      repository: state.repository,
      viewer: state.viewer,
      labels: [...state.labels],
      users: state.users as unknown as JsonValue,
      topics: [...state.topics],
      issues,
      clock: state.clock,
      next_comment: state.next_comment,
    });
  },
};
