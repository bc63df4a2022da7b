// Owns the behaviour of the tasks world: a to-do service whose tools list and
// count tasks, read one, create, update, complete and delete them, and tick
// checklist items. Arguments arrive already checked against the input schemas;
// this module enforces the rules a schema cannot say (a task and project must
// exist, an archived project takes no tasks, an assignee must be a member, a
// done task cannot be completed again, only done tasks are deleted without
// force, a checklist item must exist and be unticked). A failed call changes
// nothing.

import { copyPlain } from '../../core/json-copy.js';
import type { JsonObject, JsonValue } from '../../core/json-value.js';
import type { World } from '../world-contract.js';
import { dispatchTo, fail, succeed, type ToolHandler } from '../tool-handlers.js';
import {
  compareIds,
  generateTasksState,
  isOverdue,
  taskId,
  timestamp,
  type Priority,
  type Project,
  type Status,
  type Task,
  type TasksConfig,
  type TasksState,
} from './tasks-state.js';
import { DEFAULT_LIMIT, TASKS_TOOLS } from './tasks-tools.js';
import { inclusiveRangeSchema } from '../config-schema.js';


function fullTask(task: Task): JsonObject {
  return copyPlain(task) as unknown as JsonObject;
}

function summary(task: Task): JsonObject {
  return {
    id: task.id,
    title: task.title,
    project: task.project,
    status: task.status,
    priority: task.priority,
    due: task.due,
    assignee: task.assignee,
    tags: [...task.tags],
  };
}

function findTask(state: TasksState, id: unknown): Task | string {
  const task = state.tasks.get(id as string);
  if (task) return task;
  const gone = state.deleted.get(id as string);
  return gone ? `Task ${id} was deleted at ${gone.deleted_at}.` : `Task ${id} not found in the workspace.`;
}

/** A project that may take tasks: it exists and is not archived. */
function writableProject(state: TasksState, key: string): Project | string {
  const project = state.projects.get(key);
  const active = () => [...state.projects.values()].filter((candidate) => !candidate.archived).map((candidate) => candidate.key).join(', ');
  if (!project) return `Project ${key} not found; active projects: ${active()}.`;
  if (project.archived) return `Project ${key} is archived and takes no tasks; active projects: ${active()}.`;
  return project;
}

function memberProblem(state: TasksState, email: string): string | undefined {
  if (state.people.some((person) => person.email === email)) return undefined;
  return `Cannot assign to ${email}: not a member of the workspace (members: ${state.people.map((person) => person.email).join(', ')}).`;
}

function tick(state: TasksState): string {
  state.clock += 1;
  return timestamp(state.clock);
}

function matches(state: TasksState, task: Task, filter: JsonObject): boolean {
  if (filter.project !== undefined && task.project !== filter.project) return false;
  if (filter.status !== undefined && !(filter.status as string[]).includes(task.status)) return false;
  if (filter.priority !== undefined && task.priority !== filter.priority) return false;
  if (filter.tag !== undefined && !task.tags.includes(filter.tag as string)) return false;
  if (filter.assignee !== undefined && task.assignee !== filter.assignee) return false;
  if (filter.text !== undefined && !task.title.toLowerCase().includes((filter.text as string).toLowerCase())) return false;
  if (filter.due_before !== undefined && (task.due === null || task.due >= (filter.due_before as string))) return false;
  if (filter.overdue !== undefined && isOverdue(task, state.today) !== filter.overdue) return false;
  return true;
}

function matching(state: TasksState, args: JsonObject): Task[] {
  const filter = (args.filter as JsonObject | undefined) ?? {};
  return [...state.tasks.values()].filter((task) => matches(state, task, filter)).sort((left, right) => compareIds(left.id, right.id));
}

const handlers: Record<string, ToolHandler<TasksState>> = {
  list_projects(state, args) {
    const projects = [...state.projects.values()]
      .filter((project) => args.include_archived === true || !project.archived)
      .sort((left, right) => (left.key < right.key ? -1 : left.key > right.key ? 1 : 0))
      .map((project) => ({ ...project }));
    return succeed({ projects });
  },

  list_tasks(state, args) {
    const limit = (args.limit as number | undefined) ?? DEFAULT_LIMIT;
    const page = (args.page as number | undefined) ?? 1;
    const found = matching(state, args);
    const tasks = found.slice((page - 1) * limit, page * limit).map(summary);
    return succeed({ tasks, count: tasks.length, page, next_page: found.length > page * limit ? page + 1 : null, today: state.today });
  },

  count_tasks(state, args) {
    return succeed({ count: matching(state, args).length });
  },

  get_task(state, args) {
    const task = findTask(state, args.id);
    return typeof task === 'string' ? fail(task) : succeed({ task: fullTask(task) });
  },

  create_task(state, args) {
    const project = writableProject(state, args.project as string);
    if (typeof project === 'string') return fail(project);
    const problem = args.assignee === undefined ? undefined : memberProblem(state, args.assignee as string);
    if (problem) return fail(problem);
    const now = tick(state);
    const task: Task = {
      id: taskId(state.next_number++),
      title: args.title as string,
      project: project.key,
      status: 'todo',
      priority: (args.priority as Priority | undefined) ?? 'medium',
      due: (args.due as string | undefined) ?? null,
      tags: [...((args.tags as string[] | undefined) ?? [])].sort(),
      assignee: (args.assignee as string | undefined) ?? null,
      checklist: ((args.checklist as string[] | undefined) ?? []).map((text) => ({ text, done: false })),
      created_at: now,
      updated_at: now,
      completed_at: null,
      completed_by: null,
    };
    state.tasks.set(task.id, task);
    return succeed({ task: fullTask(task) });
  },

  update_task(state, args) {
    const task = findTask(state, args.id);
    if (typeof task === 'string') return fail(task);
    const fields = args.fields as JsonObject;
    if (fields.project !== undefined) {
      const project = writableProject(state, fields.project as string);
      if (typeof project === 'string') return fail(project);
    }
    if (typeof fields.assignee === 'string') {
      const problem = memberProblem(state, fields.assignee);
      if (problem) return fail(problem);
    }
    if (fields.title !== undefined) task.title = fields.title as string;
    if (fields.project !== undefined) task.project = fields.project as string;
    if (fields.priority !== undefined) task.priority = fields.priority as Priority;
    if (fields.due !== undefined) task.due = fields.due as string | null;
    if (fields.tags !== undefined) task.tags = [...(fields.tags as string[])].sort();
    if (fields.assignee !== undefined) task.assignee = fields.assignee as string | null;
    if (fields.status !== undefined) {
      // Moving a done task back to todo or doing reopens it.
      task.status = fields.status as Status;
      task.completed_at = null;
      task.completed_by = null;
    }
    task.updated_at = tick(state);
    return succeed({ task: fullTask(task) });
  },

  complete_task(state, args) {
    const task = findTask(state, args.id);
    if (typeof task === 'string') return fail(task);
    if (task.status === 'done') {
      return fail(`Task ${task.id} is already done (completed at ${task.completed_at} by ${task.completed_by}); nothing changed.`);
    }
    const now = tick(state);
    task.status = 'done';
    task.completed_at = now;
    task.completed_by = state.viewer;
    task.updated_at = now;
    return succeed({ task: fullTask(task) });
  },

  tick_checklist_item(state, args) {
    const task = findTask(state, args.id);
    if (typeof task === 'string') return fail(task);
    const unticked = () => task.checklist.filter((item) => !item.done).map((item) => item.text);
    const item = task.checklist.find((candidate) => candidate.text === args.item);
    if (!item) {
      const items = task.checklist.map((candidate) => `"${candidate.text}"`).join(', ');
      return fail(`Task ${task.id} has no checklist item "${args.item}"; ${items ? `its items are: ${items}` : 'its checklist is empty'}.`);
    }
    if (item.done) {
      const open = unticked();
      return fail(`"${item.text}" on task ${task.id} is already ticked; unticked items: ${open.length ? open.map((text) => `"${text}"`).join(', ') : 'none'}.`);
    }
    item.done = true;
    task.updated_at = tick(state);
    return succeed({ task: fullTask(task), remaining: unticked() });
  },

  delete_task(state, args) {
    const task = findTask(state, args.id);
    if (typeof task === 'string') return fail(task);
    const force = args.force === true;
    if (task.status !== 'done' && !force) {
      return fail(`Task ${task.id} is ${task.status}, not done: only done tasks can be deleted (complete it first, or pass force: true).`);
    }
    state.tasks.delete(task.id);
    state.deleted.set(task.id, { ...copyPlain(task), deleted_at: tick(state), forced: force });
    const remaining = [...state.tasks.values()].filter((other) => other.project === task.project).length;
    return succeed({ deleted: { id: task.id, title: task.title, status: task.status }, remaining_in_project: remaining });
  },
};

function byKey<T>(map: ReadonlyMap<string, T>, order: (left: string, right: string) => number, view: (value: T) => JsonValue): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const key of [...map.keys()].sort(order)) out[key] = view(map.get(key)!);
  return out;
}

const codeUnitOrder = (left: string, right: string) => (left < right ? -1 : left > right ? 1 : 0);

export const tasksWorld: World<TasksState> = {
  name: 'tasks',
  version: '1.0.0',
  description:
    'A to-do service: projects and tasks with status, priority, due dates, tags, assignees and checklists. ' +
    'Its tools come in near-twin pairs told apart only by their schemas.',
  tools: TASKS_TOOLS,
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      open_tasks_per_project: inclusiveRangeSchema(11, 20, 'Inclusive range of open tasks per active project; at least 11, more than one default page of list_tasks.'),
    },
  },
  init(random, config) {
    return generateTasksState(random, config as TasksConfig);
  },
  call: dispatchTo('tasks', handlers),
  snapshot(state): JsonValue {
    // A deep copy. Two derived fields are hidden from the tools and exist for
    // predicates, which cannot compare dates or count by themselves: a task's
    // `overdue` and a project's `open_task_count`.
    const open = (key: string) => [...state.tasks.values()].filter((task) => task.project === key && task.status !== 'done').length;
    return copyPlain({
      workspace: state.workspace,
      viewer: state.viewer,
      today: state.today,
      people: state.people as unknown as JsonValue,
      projects: byKey(state.projects, codeUnitOrder, (project) => ({ ...project, open_task_count: open(project.key) })),
      tasks: byKey(state.tasks, compareIds, (task) => ({ ...(task as unknown as JsonObject), overdue: isOverdue(task, state.today) })),
      deleted: byKey(state.deleted, compareIds, (task) => task as unknown as JsonValue),
      flag_tags: [...state.flag_tags],
      clock: state.clock,
      next_number: state.next_number,
    });
  },
};
