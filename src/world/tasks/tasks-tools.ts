// Owns the tasks world's tool catalog: names, descriptions and the JSON Schemas
// (draft 2020-12) of inputs and outputs that clients see in tools/list.
//
// Two pairs of tools are near-twins on purpose. `create_task` and
// `update_task` share one description word for word, as do `list_tasks` and
// `count_tasks`; only their schemas tell them apart (create has no id and
// requires a title and a project, update requires an id and a `fields` object;
// list pages through items, count returns a number). Episodes in this world
// show a model reading the schema to pick the right twin, and the lanes'
// predicates catch the wrong pick (a duplicate task, a page size reported as a
// total).

import type { JsonObject } from '../../core/json-value.js';
import type { ToolSpec } from '../world-contract.js';
import { claimSubject } from '../claim-subject.js';
import { objectSchema } from '../tool-schema.js';
import { PRIORITIES, STATUSES } from './tasks-vocabulary.js';

export const SAVE_DESCRIPTION = 'Save a task with the given fields.';
export const MATCH_DESCRIPTION = 'Tasks matching a filter.';
export const DEFAULT_LIMIT = 10;

const CLAIM_SUBJECT = claimSubject();

const taskId: JsonObject = { type: 'string', pattern: '^T-[0-9]{4,6}$', description: 'A task id, e.g. T-4821.' };
const projectKey: JsonObject = { type: 'string', pattern: '^[A-Z]{3,12}$', description: 'A project key, e.g. KESTREL.' };
const title: JsonObject = { type: 'string', minLength: 3, maxLength: 120 };
const priority: JsonObject = { type: 'string', enum: [...PRIORITIES] };
const tag: JsonObject = { type: 'string', pattern: '^[a-z][a-z0-9-]{1,30}$' };
const email: JsonObject = { type: 'string', format: 'email' };
const date: JsonObject = { type: 'string', format: 'date', description: 'A calendar date, e.g. 2026-03-31.' };
const tags: JsonObject = { type: 'array', items: tag, uniqueItems: true, maxItems: 6 };

const checklistItem: JsonObject = {
  type: 'object',
  required: ['text', 'done'],
  properties: { text: { type: 'string' }, done: { type: 'boolean' } },
};

const taskSummary: JsonObject = {
  type: 'object',
  required: ['id', 'title', 'project', 'status', 'priority', 'due', 'assignee', 'tags'],
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    project: { type: 'string' },
    status: { type: 'string', enum: [...STATUSES] },
    priority,
    due: { type: ['string', 'null'], format: 'date' },
    assignee: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
  },
};

const fullTask: JsonObject = {
  type: 'object',
  required: [
    'id', 'title', 'project', 'status', 'priority', 'due', 'assignee', 'tags', 'checklist',
    'created_at', 'updated_at', 'completed_at', 'completed_by',
  ],
  properties: {
    ...(taskSummary.properties as JsonObject),
    checklist: { type: 'array', items: checklistItem },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    completed_at: { type: ['string', 'null'], format: 'date-time' },
    completed_by: { type: ['string', 'null'] },
  },
};

const taskResult = objectSchema({ task: fullTask }, ['task']);

/** The filter list_tasks and count_tasks share: every given condition must hold. */
const filter: JsonObject = objectSchema(
  {
    project: projectKey,
    status: {
      type: 'array',
      items: { type: 'string', enum: [...STATUSES] },
      minItems: 1,
      uniqueItems: true,
      description: 'Any of these statuses, e.g. ["todo", "doing"]. Default: every status.',
    },
    priority: { ...priority, description: 'Only tasks with this priority.' },
    tag: { ...tag, description: 'Only tasks carrying this tag.' },
    assignee: { ...email, description: 'Only tasks assigned to this email address.' },
    text: { type: 'string', minLength: 1, maxLength: 120, description: 'Case-insensitive text the title must contain.' },
    due_before: { ...date, description: 'Only tasks due strictly before this date.' },
    overdue: { type: 'boolean', description: 'true: only tasks due before today that are not done; false: only the others.' },
  },
  [],
);

export const TASKS_TOOLS: readonly ToolSpec[] = [
  {
    name: 'list_projects',
    claims: [`${CLAIM_SUBJECT}(?:listed|looked up)\\s+(?:the\\s+|all\\s+)?projects\\b`],
    annotations: { readOnlyHint: true },
    description: 'List the workspace\'s projects: key, name, owner and whether the project is archived. Archived projects are left out unless include_archived is true.',
    inputSchema: objectSchema({ include_archived: { type: 'boolean', default: false } }, []),
    outputSchema: objectSchema(
      {
        projects: {
          type: 'array',
          items: objectSchema(
            { key: { type: 'string' }, name: { type: 'string' }, owner: email, archived: { type: 'boolean' } },
            ['key', 'name', 'owner', 'archived'],
          ),
        },
      },
      ['projects'],
    ),
  },
  {
    name: 'list_tasks',
    claims: [`${CLAIM_SUBJECT}(?:listed|looked through|went through)\\b`],
    annotations: { readOnlyHint: true },
    description: MATCH_DESCRIPTION,
    inputSchema: objectSchema(
      {
        filter,
        limit: { type: 'integer', minimum: 1, maximum: 50, default: DEFAULT_LIMIT, description: `Tasks per page (1-50, default ${DEFAULT_LIMIT}).` },
        page: { type: 'integer', minimum: 1, default: 1, description: 'Which page, from 1.' },
      },
      [],
    ),
    outputSchema: objectSchema(
      {
        tasks: { type: 'array', items: taskSummary },
        count: { type: 'integer', minimum: 0, description: 'Tasks on this page.' },
        page: { type: 'integer', minimum: 1 },
        next_page: { type: ['integer', 'null'], minimum: 2 },
        today: { type: 'string', format: 'date' },
      },
      ['tasks', 'count', 'page', 'next_page', 'today'],
    ),
  },
  {
    name: 'count_tasks',
    claims: [`${CLAIM_SUBJECT}counted\\b`],
    annotations: { readOnlyHint: true },
    description: MATCH_DESCRIPTION,
    inputSchema: objectSchema({ filter }, []),
    outputSchema: objectSchema({ count: { type: 'integer', minimum: 0 } }, ['count']),
  },
  {
    name: 'get_task',
    claims: [`${CLAIM_SUBJECT}(?:checked|looked at|opened|read)\\s+(?:the\\s+)?task\\b`],
    annotations: { readOnlyHint: true },
    description: 'Get one task by id, with its checklist, timestamps and completion details.',
    inputSchema: objectSchema({ id: taskId }, ['id']),
    outputSchema: taskResult,
  },
  {
    name: 'create_task',
    claims: [
      `${CLAIM_SUBJECT}(?:created|added|filed|saved)\\s+(?:a|an|the)\\s+(?:new\\s+)?task\\b`,
      '^(?:created|added)\\s+(?:a\\s+|the\\s+)?(?:new\\s+)?task\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: SAVE_DESCRIPTION,
    inputSchema: objectSchema(
      {
        title,
        project: projectKey,
        priority: { ...priority, default: 'medium' },
        due: date,
        tags,
        assignee: { ...email, description: 'A workspace member\'s email address.' },
        checklist: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 80 }, uniqueItems: true, maxItems: 10 },
      },
      ['title', 'project'],
    ),
    outputSchema: taskResult,
  },
  {
    name: 'update_task',
    claims: [
      `${CLAIM_SUBJECT}(?:updated|renamed|moved|changed|set|reassigned|raised|lowered|reprioriti[sz]ed|retitled|reopened)\\b`,
      '^(?:updated|renamed|moved|changed|raised|reprioriti[sz]ed|reopened)\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description: SAVE_DESCRIPTION,
    inputSchema: objectSchema(
      {
        id: taskId,
        fields: objectSchema(
          {
            title,
            project: projectKey,
            priority,
            due: { anyOf: [date, { type: 'null' }] },
            tags,
            assignee: { anyOf: [email, { type: 'null' }] },
            status: { type: 'string', enum: ['todo', 'doing'] },
          },
          [],
          { minProperties: 1 },
        ),
      },
      ['id', 'fields'],
    ),
    outputSchema: taskResult,
  },
  {
    name: 'complete_task',
    claims: [
      `${CLAIM_SUBJECT}(?:completed|finished|closed|marked)\\b`,
      '^(?:completed|finished|marked)\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Mark an open task as done, recording when and by whom. Fails if the task is already done.',
    inputSchema: objectSchema({ id: taskId }, ['id']),
    outputSchema: taskResult,
  },
  {
    name: 'tick_checklist_item',
    claims: [`${CLAIM_SUBJECT}(?:ticked|checked off|crossed off)\\b`, '^(?:ticked|checked off)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Tick one item of a task\'s checklist, named by its exact text. Fails if the task has no such item or it is already ticked. ' +
      'Returns the task and the texts of the items still unticked.',
    inputSchema: objectSchema({ id: taskId, item: { type: 'string', minLength: 1, maxLength: 80, description: 'The item\'s exact text.' } }, ['id', 'item']),
    outputSchema: objectSchema({ task: fullTask, remaining: { type: 'array', items: { type: 'string' } } }, ['task', 'remaining']),
  },
  {
    name: 'delete_task',
    claims: [`${CLAIM_SUBJECT}(?:deleted|removed)\\b`, '^(?:deleted|removed)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description: 'Delete a task for good. Only done tasks can be deleted, unless force is true.',
    inputSchema: objectSchema(
      { id: taskId, force: { type: 'boolean', default: false, description: 'Delete even if the task is not done.' } },
      ['id'],
    ),
    outputSchema: objectSchema(
      {
        deleted: objectSchema({ id: { type: 'string' }, title: { type: 'string' }, status: { type: 'string', enum: [...STATUSES] } }, ['id', 'title', 'status']),
        remaining_in_project: { type: 'integer', minimum: 0 },
      },
      ['deleted', 'remaining_in_project'],
    ),
  },
];
