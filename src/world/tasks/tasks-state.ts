// Owns the state of the tasks world and its seeded generation: a workspace of
// people, projects and several dozen tasks whose ids, title tokens, due dates,
// assignees and checklists cannot be guessed without reading them through the
// tools. Generation guarantees the shapes the lanes rely on: every active
// project has more open tasks than one default page of results, at least
// three overdue ones, one task in progress and a done task with a past due
// date; an open task's checklist, if any, has one ticked item and two
// unticked ones at least; each flag tag sits on exactly two open tasks and one
// done task.

import type { Random } from '../../core/random.js';
import { capitalise } from '../../core/letter-case.js';
import {
  CHECKLIST_ITEMS,
  FLAG_TAGS,
  PRIORITIES,
  PROJECT_KEYS,
  PROJECT_PURPOSES,
  STATUSES,
  TAGS,
  TASK_PHRASES,
} from './tasks-vocabulary.js';
import { FIRST_NAMES, LAST_NAMES, ORGANISATIONS } from '../people-vocabulary.js';
import { isoTimestamp } from '../../core/date-time.js';

export type Status = (typeof STATUSES)[number];
export type Priority = (typeof PRIORITIES)[number];

export interface Person {
  email: string;
  name: string;
}

export interface Project {
  key: string;
  name: string;
  owner: string;
  archived: boolean;
}

export interface ChecklistItem {
  text: string;
  done: boolean;
}

export interface Task {
  id: string;
  title: string;
  project: string;
  status: Status;
  priority: Priority;
  due: string | null;
  tags: string[];
  assignee: string | null;
  checklist: ChecklistItem[];
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  completed_by: string | null;
}

/** A deleted task as it was at deletion, kept so predicates can judge how it went. */
export interface DeletedTask extends Task {
  deleted_at: string;
  forced: boolean;
}

export interface TasksState {
  workspace: string;
  /** The person the assistant acts for: completions are recorded in their name. */
  viewer: string;
  /** The world's calendar date; "overdue" means due before it and not done. */
  today: string;
  people: Person[];
  projects: Map<string, Project>;
  tasks: Map<string, Task>;
  deleted: Map<string, DeletedTask>;
  /** Hidden from the tools: the two flag tags this world uses (lanes draw one). */
  flag_tags: string[];
  /** The world's own clock in minutes since EPOCH; advances one minute per write. */
  clock: number;
  next_number: number;
}

export interface TasksConfig {
  /** Open tasks per active project, inclusive range; at least 11, so one default page never holds them all. */
  open_tasks_per_project?: [number, number];
}

const EPOCH = Date.UTC(2026, 0, 1);
const DAY = 24 * 60;
const ACTIVE_PROJECTS = 4;
const GUARANTEED_OVERDUE = 3;

export function timestamp(minutes: number): string {
  return isoTimestamp(EPOCH + minutes * 60_000);
}

export function dateOf(day: number): string {
  return new Date(EPOCH + day * DAY * 60_000).toISOString().slice(0, 10);
}

export function isOverdue(task: Task, today: string): boolean {
  return task.due !== null && task.due < today && task.status !== 'done';
}

export function taskId(number: number): string {
  return `T-${number}`;
}

interface Draft {
  project: string;
  status: Status;
  /** Days relative to today, or null for no due date. */
  dueOffset: number | null;
}

export function generateTasksState(random: Random, config: TasksConfig): TasksState {
  const [low, high] = config.open_tasks_per_project ?? [12, 16];
  const organisation = random.pick(ORGANISATIONS);
  const people = generatePeople(random, organisation);
  const emails = people.map((person) => person.email);
  const todayDay = random.int(60, 150);
  const today = dateOf(todayDay);
  const clock = todayDay * DAY + 9 * 60 + random.int(0, 59);

  const keys = random.sample(PROJECT_KEYS, ACTIVE_PROJECTS + 1);
  const projects = new Map<string, Project>();
  keys.forEach((key, index) => {
    projects.set(key, {
      key,
      name: `${key.charAt(0)}${key.slice(1).toLowerCase()} ${random.pick(PROJECT_PURPOSES)}`,
      owner: random.pick(emails),
      archived: index === ACTIVE_PROJECTS,
    });
  });

  const drafts: Draft[] = [];
  keys.forEach((key, index) => {
    if (index < ACTIVE_PROJECTS) {
      const open = random.int(low, high);
      for (let position = 0; position < open; position++) {
        // The first open task is always in progress, so "open" and "to do" never count the same.
        const status: Status = position === 0 ? 'doing' : random.weighted({ todo: 3, doing: 1 });
        const dueOffset = position < GUARANTEED_OVERDUE ? -random.int(1, 40) : openDueOffset(random);
        drafts.push({ project: key, status, dueOffset });
      }
    }
    const done = random.int(3, 5);
    for (let position = 0; position < done; position++) {
      // A done task with a past due date is the distractor for "overdue".
      const dueOffset = position === 0 ? -random.int(1, 30) : random.chance(0.6) ? -random.int(1, 60) : null;
      drafts.push({ project: key, status: 'done', dueOffset });
    }
  });

  const numbers = random.distinctIntegers(drafts.length, 1000, 8999);
  const titles = new Set<string>();
  const tasks: Task[] = drafts.map((draft, index) => {
    let title: string;
    do title = `${random.pick(TASK_PHRASES)} ${random.hex(4)}`;
    while (titles.has(title));
    titles.add(title);
    const created = clock - random.int(2 * DAY, 90 * DAY);
    const updated = Math.min(clock - 30, created + random.int(60, 20 * DAY));
    const done = draft.status === 'done';
    return {
      id: taskId(numbers[index]!),
      title,
      project: draft.project,
      status: draft.status,
      priority: random.pick(PRIORITIES),
      due: draft.dueOffset === null ? null : dateOf(todayDay + draft.dueOffset),
      tags: random.sample(TAGS, random.int(0, 2)).sort(),
      assignee: random.chance(0.8) ? random.pick(emails) : null,
      checklist: generateChecklist(random, done),
      created_at: timestamp(created),
      updated_at: timestamp(updated),
      completed_at: done ? timestamp(updated) : null,
      completed_by: done ? random.pick(emails) : null,
    };
  });

  const flagTags = random.sample(FLAG_TAGS, 2).sort();
  const active = (task: Task) => !projects.get(task.project)!.archived;
  const unflagged = new Set(tasks);
  for (const flag of flagTags) {
    const open = random.sample([...unflagged].filter((task) => task.status !== 'done' && active(task)), 2);
    const done = random.sample([...unflagged].filter((task) => task.status === 'done'), 1);
    for (const task of [...open, ...done]) {
      unflagged.delete(task);
      task.tags = [...task.tags, flag].sort();
    }
    // Raising them to urgent must be a change, or doing nothing would pass.
    for (const task of open) if (task.priority === 'urgent') task.priority = random.pick(['low', 'medium', 'high'] as const);
  }

  const byId = new Map<string, Task>();
  for (const task of tasks.sort((left, right) => compareIds(left.id, right.id))) byId.set(task.id, task);
  return {
    workspace: `${organisation}.example.com`,
    viewer: random.pick(emails),
    today,
    people,
    projects,
    tasks: byId,
    deleted: new Map(),
    flag_tags: flagTags,
    clock,
    next_number: Math.max(...numbers) + 1,
  };
}

function openDueOffset(random: Random): number | null {
  const kind = random.weighted({ overdue: 2, soon: 6, none: 2 });
  if (kind === 'none') return null;
  return kind === 'overdue' ? -random.int(1, 40) : random.int(0, 60);
}

function generateChecklist(random: Random, done: boolean): { text: string; done: boolean }[] {
  if (!random.chance(done ? 0.3 : 0.45)) return [];
  const items = random.sample(CHECKLIST_ITEMS, random.int(done ? 2 : 3, 5));
  // An open task's checklist has at least one ticked item and two unticked
  // ones, so after ticking one, "which are still unticked" is never empty.
  const ticked = done ? items.length : random.int(1, items.length - 2);
  const flags = random.shuffle(items.map((_, index) => index < ticked));
  return items.map((text, index) => ({ text, done: flags[index]! }));
}

function generatePeople(random: Random, organisation: string): Person[] {
  const firsts = random.sample(FIRST_NAMES, 6);
  const lasts = random.sample(LAST_NAMES, 6);
  const people = firsts.map((first, index) => {
    const last = lasts[index]!;
    return { email: `${first}.${last}@${organisation}.example.com`, name: `${capitalise(first)} ${capitalise(last)}` };
  });
  // Code-unit order, not localeCompare: the order must not depend on the machine's locale.
  return people.sort((left, right) => (left.email < right.email ? -1 : left.email > right.email ? 1 : 0));
}

/** Ids in numeric order (T-999 before T-1000), the order every listing uses. */
export function compareIds(left: string, right: string): number {
  return Number(left.slice(2)) - Number(right.slice(2));
}
