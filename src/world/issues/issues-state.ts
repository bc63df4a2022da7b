// Owns the state of the issues world and its seeded generation: a repository
// with users, labels and a few dozen issues whose numbers, titles, assignees
// and tokens cannot be guessed without reading them through the tools.

import type { Random } from '../../core/random.js';
import { capitalise } from '../../core/letter-case.js';
import {
  BODY_OPENINGS,
  CLOSE_REASONS,
  COMMENT_BODIES,
  EXTRA_LABELS,
  LABELS,
  PRIORITIES,
  REPOSITORIES,
  SYMPTOMS,
  TOPICS,
  type Topic,
} from './issues-vocabulary.js';
import { FIRST_NAMES, LAST_NAMES, ORGANISATIONS } from '../people-vocabulary.js';
import { isoTimestamp } from '../../core/date-time.js';

export type IssueStateName = 'open' | 'closed';
export type Priority = (typeof PRIORITIES)[number];
export type CloseReason = (typeof CLOSE_REASONS)[number];

export interface User {
  login: string;
  name: string;
  email: string;
}

export interface Comment {
  id: string;
  author: string;
  body: string;
  created_at: string;
  notified: string[];
}

export interface Issue {
  number: number;
  title: string;
  body: string;
  state: IssueStateName;
  closed_reason: CloseReason | null;
  duplicate_of: number | null;
  labels: string[];
  assignee: string | null;
  priority: Priority;
  due_on: string | null;
  author: string;
  created_at: string;
  updated_at: string;
  comments: Comment[];
  /** Hidden from the tools: which topic the title is about (predicates use it). */
  topic: Topic | null;
}

export interface IssuesState {
  repository: string;
  viewer: string;
  labels: string[];
  users: User[];
  topics: Topic[];
  issues: Map<number, Issue>;
  /** The world's own clock in minutes since EPOCH; advances one minute per write. */
  clock: number;
  next_comment: number;
}

export interface IssuesConfig {
  /** Issues per topic, inclusive range. */
  issues_per_topic?: [number, number];
}

const EPOCH = Date.UTC(2026, 0, 5);

export function timestamp(minutes: number): string {
  return isoTimestamp(EPOCH + minutes * 60_000);
}

export function generateIssuesState(random: Random, config: IssuesConfig): IssuesState {
  const [low, high] = config.issues_per_topic ?? [3, 4];
  const organisation = random.pick(ORGANISATIONS);
  const users = generateUsers(random, organisation);
  const logins = users.map((user) => user.login);
  const issueCount = TOPICS.length * high;
  const numbers = random.distinctIntegers(issueCount, 1000, 9999);
  const issues = new Map<number, Issue>();
  let commentCounter = random.int(10_000, 60_000);
  let numberIndex = 0;
  let latest = 0;

  for (const topic of TOPICS) {
    const count = random.int(low, high);
    const tails = random.shuffle(SYMPTOMS[topic]);
    for (let position = 0; position < count; position++) {
      const number = numbers[numberIndex++]!;
      const created = random.int(0, 200 * 24 * 60);
      // The first issue of a topic is always an open bug and the second a
      // distractor (closed, or not a bug), so a topic search always has both a
      // right answer and a wrong one.
      const kind = position === 0 ? 'bug' : random.weighted({ bug: 5, enhancement: 3, question: 2 });
      const state: IssueStateName =
        position === 0 ? 'open' : position === 1 && kind === 'bug' ? 'closed' : random.chance(0.7) ? 'open' : 'closed';
      const labels = [kind as string];
      if (random.chance(0.45)) labels.push(random.pick(EXTRA_LABELS));
      const comments: Comment[] = [];
      let updated = created + random.int(5, 3000);
      for (let index = random.int(0, 3); index > 0; index--) {
        updated += random.int(10, 2000);
        comments.push({
          id: `c-${commentCounter++}`,
          author: random.pick(logins),
          body: random.pick(COMMENT_BODIES),
          created_at: timestamp(updated),
          notified: [],
        });
      }
      latest = Math.max(latest, updated);
      issues.set(number, {
        number,
        title: `${capitalise(topic)}: ${tails[position % tails.length]}`,
        body: `${random.pick(BODY_OPENINGS)} Build ${random.hex(7)}, trace ${random.hex(4)}-${random.hex(4)}.`,
        state,
        closed_reason: state === 'closed' ? random.pick(['completed', 'not_planned'] as const) : null,
        duplicate_of: null,
        labels,
        assignee: random.chance(0.75) ? random.pick(logins) : null,
        priority: random.pick(PRIORITIES),
        due_on: null,
        author: random.pick(logins),
        created_at: timestamp(created),
        updated_at: timestamp(updated),
        comments,
        topic,
      });
    }
  }

  return {
    repository: `${organisation}/${random.pick(REPOSITORIES)}`,
    viewer: 'factory-bot',
    labels: [...LABELS],
    users,
    topics: [...TOPICS],
    issues,
    clock: latest + 60,
    next_comment: commentCounter,
  };
}

function generateUsers(random: Random, organisation: string): User[] {
  const firsts = random.sample(FIRST_NAMES, 8);
  const lasts = random.sample(LAST_NAMES, 8);
  const users = firsts.map((first, index) => {
    const last = lasts[index]!;
    const login = `${first}.${last}${random.int(10, 99)}`;
    return { login, name: `${capitalise(first)} ${capitalise(last)}`, email: `${first}.${last}@${organisation}.example.com` };
  });
  // Code-unit order, not localeCompare: the order must not depend on the machine's locale.
  return users.sort((left, right) => (left.login < right.login ? -1 : left.login > right.login ? 1 : 0));
}
