// Owns the issues world's tool catalog: names, descriptions and the JSON
// Schemas (draft 2020-12) of inputs and outputs that clients see in tools/list.

import type { JsonObject } from '../../core/json-value.js';
import type { ToolSpec } from '../world-contract.js';
import { claimSubject } from '../claim-subject.js';
import { objectSchema } from '../tool-schema.js';
import { CLOSE_REASONS, LABELS, PRIORITIES } from './issues-vocabulary.js';

const CLAIM_SUBJECT = claimSubject();

const issueNumber: JsonObject = { type: 'integer', minimum: 1, description: 'The issue number, e.g. 4821.' };
const login: JsonObject = { type: 'string', pattern: '^[a-z][a-z0-9._-]{1,38}$', description: 'A user login, e.g. ines.okafor27.' };
const label: JsonObject = { type: 'string', enum: [...LABELS] };
const priority: JsonObject = { type: 'string', enum: [...PRIORITIES] };

const issueSummary: JsonObject = {
  type: 'object',
  required: ['number', 'title', 'state', 'labels', 'assignee', 'priority'],
  properties: {
    number: { type: 'integer' },
    title: { type: 'string' },
    state: { type: 'string', enum: ['open', 'closed'] },
    labels: { type: 'array', items: { type: 'string' } },
    assignee: { type: ['string', 'null'] },
    priority: priority,
  },
};

const comment: JsonObject = {
  type: 'object',
  required: ['id', 'author', 'body', 'created_at'],
  properties: {
    id: { type: 'string' },
    author: { type: 'string' },
    body: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    notified: { type: 'array', items: { type: 'string' } },
  },
};

const fullIssue: JsonObject = {
  type: 'object',
  required: ['number', 'title', 'body', 'state', 'labels', 'assignee', 'priority', 'author', 'created_at', 'updated_at', 'comments'],
  properties: {
    number: { type: 'integer' },
    title: { type: 'string' },
    body: { type: 'string' },
    state: { type: 'string', enum: ['open', 'closed'] },
    closed_reason: { type: ['string', 'null'] },
    duplicate_of: { type: ['integer', 'null'] },
    labels: { type: 'array', items: { type: 'string' } },
    assignee: { type: ['string', 'null'] },
    priority: priority,
    due_on: { type: ['string', 'null'] },
    author: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    comments: { type: 'array', items: comment },
  },
};

const issueResult = objectSchema({ issue: fullIssue }, ['issue']);

export const ISSUES_TOOLS: readonly ToolSpec[] = [
  {
    name: 'search_issues',
    claims: [`${CLAIM_SUBJECT}(?:searched|looked through|went through)\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Search issues in the repository. Every word of the query must appear in the title or body (case-insensitive). ' +
      'Returns matching issues in ascending number order, at most `limit` of them, and the total number of matches.',
    inputSchema: objectSchema(
      {
        query: { type: 'string', minLength: 1, maxLength: 200, description: 'Words to look for, e.g. "login".' },
        limit: { type: 'integer', minimum: 1, maximum: 50, description: 'Maximum number of issues to return (1-50).' },
        state: { type: 'string', enum: ['open', 'closed', 'all'], default: 'open', description: 'Which issues to search; default open.' },
        label: { ...label, description: 'Only issues carrying this label.' },
        assignee: { ...login, description: 'Only issues assigned to this login.' },
      },
      ['query', 'limit'],
    ),
    outputSchema: objectSchema({ total: { type: 'integer', minimum: 0 }, issues: { type: 'array', items: issueSummary } }, [
      'total',
      'issues',
    ]),
  },
  {
    name: 'get_issue',
    claims: [`${CLAIM_SUBJECT}(?:checked|looked at|read|opened)\\s+(?:the\\s+)?issue\\b`],
    annotations: { readOnlyHint: true },
    description: 'Get one issue by number, with its body, labels, assignee, priority and comments.',
    inputSchema: objectSchema({ number: issueNumber }, ['number']),
    outputSchema: issueResult,
  },
  {
    name: 'get_user',
    claims: [`${CLAIM_SUBJECT}looked up\\b`],
    annotations: { readOnlyHint: true },
    description: 'Get a user by login: their display name and email address.',
    inputSchema: objectSchema({ login }, ['login']),
    outputSchema: objectSchema(
      {
        user: objectSchema(
          { login: { type: 'string' }, name: { type: 'string' }, email: { type: 'string', format: 'email' } },
          ['login', 'name', 'email'],
        ),
      },
      ['user'],
    ),
  },
  {
    name: 'create_issue',
    claims: [`${CLAIM_SUBJECT}(?:created|opened|filed)\\s+(?:a|an|the)\\s+(?:new\\s+)?issue`, '^(?:created|opened|filed)\\s+(?:a\\s+|an\\s+)?(?:new\\s+)?issue'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Create a new issue. Labels must be existing labels; the assignee must be an existing login.',
    inputSchema: objectSchema(
      {
        title: { type: 'string', minLength: 3, maxLength: 120 },
        body: { type: 'string', maxLength: 4000 },
        labels: { type: 'array', items: label, uniqueItems: true, maxItems: 5 },
        assignee: login,
        priority,
      },
      ['title'],
    ),
    outputSchema: issueResult,
  },
  {
    name: 'update_issue',
    claims: [`${CLAIM_SUBJECT}(?:updated|reassigned|assigned|changed|set)\\b`],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description: 'Change fields of an existing issue: title, body, assignee (null to unassign), priority or due date.',
    inputSchema: objectSchema(
      {
        number: issueNumber,
        fields: objectSchema(
          {
            title: { type: 'string', minLength: 3, maxLength: 120 },
            body: { type: 'string', maxLength: 4000 },
            assignee: { anyOf: [login, { type: 'null' }] },
            priority,
            due_on: { type: 'string', format: 'date', description: 'A calendar date, e.g. 2026-03-31.' },
          },
          [],
          { minProperties: 1 },
        ),
      },
      ['number', 'fields'],
    ),
    outputSchema: issueResult,
  },
  {
    name: 'close_issue',
    claims: [`${CLAIM_SUBJECT}closed\\b`, '^closed\\b'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Close an open issue with a reason. A duplicate must name the issue it duplicates in `duplicate_of`.',
    inputSchema: objectSchema(
      {
        number: issueNumber,
        reason: { type: 'string', enum: [...CLOSE_REASONS] },
        duplicate_of: { ...issueNumber, description: 'Required when reason is "duplicate".' },
      },
      ['number', 'reason'],
    ),
    outputSchema: issueResult,
  },
  {
    name: 'add_label',
    claims: [`${CLAIM_SUBJECT}(?:replaced|swapped)\\s+(?:the\\s+)?\\S+\\s+label\\b`, `${CLAIM_SUBJECT}(?:added|applied)\\s+(?:the\\s+)?(?:label\\b|\\S+\\s+label\\b)`, `${CLAIM_SUBJECT}(?:re)?labell?ed\\b`],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    description: 'Add a label to an issue. Adding a label the issue already has changes nothing.',
    inputSchema: objectSchema({ number: issueNumber, label }, ['number', 'label']),
    outputSchema: issueResult,
  },
  {
    name: 'remove_label',
    claims: [`${CLAIM_SUBJECT}(?:replaced|swapped)\\s+(?:the\\s+)?\\S+\\s+label\\b`, `${CLAIM_SUBJECT}removed\\s+(?:the\\s+)?(?:label\\b|\\S+\\s+label\\b)`, '^removed\\s+(?:the\\s+)?(?:label\\b|\\S+\\s+label\\b)'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description: 'Remove a label from an issue. Fails if the issue does not carry that label.',
    inputSchema: objectSchema({ number: issueNumber, label }, ['number', 'label']),
    outputSchema: issueResult,
  },
  {
    name: 'add_comment',
    claims: [`${CLAIM_SUBJECT}(?:posted|added|left)\\s+(?:a\\s+|the\\s+|your\\s+)?comment`, `${CLAIM_SUBJECT}commented\\b`, '^(?:posted|added|left)\\s+(?:a\\s+|the\\s+)?comment'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Add a comment to an issue, optionally notifying people by email. Returns the new comment and the comment count.',
    inputSchema: objectSchema(
      {
        number: issueNumber,
        body: { type: 'string', minLength: 1, maxLength: 2000 },
        notify: { type: 'array', items: { type: 'string', format: 'email' }, uniqueItems: true, maxItems: 5 },
      },
      ['number', 'body'],
    ),
    outputSchema: objectSchema({ comment, comment_count: { type: 'integer', minimum: 1 } }, ['comment', 'comment_count']),
  },
];
