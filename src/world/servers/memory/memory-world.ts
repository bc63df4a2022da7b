// Owns the code of the server world of @modelcontextprotocol/server-memory
// that its definition (worlds/memory-server.json: launch with the graph file
// inside the sandbox, catalog, claims, normalisations) cannot say as data: the
// seeded generator that writes one knowledge-graph file in the server's own
// JSON-lines format (people with their city, contact preference and leave
// notes, teams with leads and a newcomer mentioned but not yet recorded,
// projects with one similarly named archived twin, tools, and a near-duplicate
// of one person), whose constrained draws no data seed replays byte for byte;
// the state probe that reads the file back into the graph plus views keyed by
// name that predicates and task parameters point into; and the kept child
// whose graph file path goes through a link swapped to each episode's sandbox.

import { readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { capitalise } from '../../../core/letter-case.js';
import { PACKAGE_ROOT } from '../../../core/package-paths.js';
import type { Random } from '../../../core/random.js';
import { FIRST_NAMES, LAST_NAMES } from '../../people-vocabulary.js';
import type { ServerReuse, ServerWorld } from '../../server-world.js';
import { loadDefinition } from '../definition/definition-loader.js';
import { serverWorldFromDefinition } from '../definition/defined-server-world.js';
import type { PopulateArguments } from '../definition/escape-hatch.js';

/** The graph file: always absolute and inside the sandbox (a relative or missing MEMORY_FILE_PATH writes into the package directory; the definition's launch names it so). */
export const MEMORY_FILE = 'memory.jsonl';

// Names are chosen so that no one is a substring of another entity's text
// (search_nodes matches substrings of names, types and observations): only a
// project's planted twin shares its name. "Ember" would hide in "September".
const CITIES = ['Lisbon', 'Berlin', 'Warsaw', 'Nairobi', 'Osaka', 'Toronto', 'Porto', 'Dublin', 'Madrid', 'Oslo'] as const;
const CHANNELS = ['prefers email', 'prefers Slack', 'prefers phone calls', 'prefers video calls'] as const;
const EXTRAS = ['works part-time', 'mentors new hires', 'joined in 2023', 'joined in 2024', 'speaks Portuguese', 'speaks Japanese', 'runs the weekly demo', 'is a first-aider'] as const;
const LEAVE_MONTHS = ['March', 'April', 'June', 'October'] as const;
const START_MONTHS = ['January', 'February', 'July', 'August'] as const;
const PROJECTS = ['Atlas', 'Beacon', 'Comet', 'Falcon', 'Granite', 'Harbor', 'Juniper', 'Orion'] as const;
const TWIN_SUFFIXES = ['Legacy', 'Pilot', 'Classic'] as const;
const PROJECT_NOTES = ['status: active', 'budget approved', 'weekly sync on Tuesdays', 'deadline in Q2', 'deadline in Q3', 'demo planned for the all-hands'] as const;
const TEAMS = ['Platform Team', 'Data Team', 'Design Team', 'Mobile Team', 'Security Team'] as const;
const TEAM_NOTES = ['standup at 09:30', 'standup at 10:00', 'on-call rotation is weekly', 'plans in two-week sprints'] as const;
const TOOLS = ['Jira', 'Figma', 'Grafana', 'Terraform', 'Notion', 'Sentry'] as const;
const TOOL_NOTES = ['licence renews in June', 'self-hosted', 'paid seats: 25', 'single sign-on enabled'] as const;

export interface MemoryEntity {
  name: string;
  entityType: string;
  observations: string[];
}

export interface MemoryRelation {
  from: string;
  to: string;
  relationType: string;
}

export interface MemoryGraph {
  entities: MemoryEntity[];
  relations: MemoryRelation[];
}

/** A seeded knowledge graph, drawn from `random` alone. */
export function drawMemoryGraph(random: Random): MemoryGraph {
  const count = random.int(7, 9);
  // Distinct first and last names, so "T. Novak" can stand for exactly one person; one more for the newcomer.
  const firsts = random.sample(FIRST_NAMES, count + 1);
  const lasts = random.sample(LAST_NAMES, count + 1);
  const names = firsts.map((first, index) => `${capitalise(first)} ${capitalise(lasts[index]!)}`);
  const newcomer = names.pop()!;
  const teams = random.sample(TEAMS, random.int(2, 3));
  const projects = random.sample(PROJECTS, 3);
  const tools = random.sample(TOOLS, 4);
  const cities = random.sample(CITIES, 4);

  // At least two cities, so someone can move to a city the graph already knows.
  const homes = names.map(() => random.pick(cities));
  if (homes[1] === homes[0]) homes[1] = random.pick(cities.filter((city) => city !== homes[0]));
  const people = names.map((name, index) => {
    const lead = index < teams.length;
    const team = lead ? teams[index]! : random.pick(teams);
    const observations = [`based in ${homes[index]}`];
    if (random.chance(0.6)) observations.push(random.pick(CHANNELS));
    if (random.chance(0.5)) observations.push(random.pick(EXTRAS));
    // Every project has someone on it; the rest are drawn.
    const project = index < projects.length ? projects[(index + 1) % projects.length]! : random.pick(projects);
    // Person 0 uses the first tool and person 1 does not, so some tool has users and non-users.
    const used = index === 1 ? random.sample(tools.slice(1), random.int(1, 2)) : random.sample(tools, random.int(1, 2));
    if (index === 0 && !used.includes(tools[0]!)) used[0] = tools[0]!;
    return { name, lead, team, observations, project, tools: used.sort() };
  });
  // One or two people on leave (never a team lead, whom another task needs as they are).
  for (const person of random.sample(people.filter((entry) => !entry.lead), random.int(1, 2))) {
    person.observations.push(`on leave until ${random.pick(LEAVE_MONTHS)}`);
  }
  const leadOf = new Map(people.filter((person) => person.lead).map((person) => [person.team, person.name]));

  // A near-duplicate of one person ("T. Novak" for "Tomasz Novak"), holding what the original does not say.
  const original = random.pick(people.filter((person) => !person.lead));
  const [first, last] = original.name.split(' ') as [string, string];
  const duplicate: MemoryEntity = {
    name: `${first[0]}. ${last}`,
    entityType: 'person',
    observations: random.sample(EXTRAS.filter((extra) => !original.observations.includes(extra)), random.int(1, 2)),
  };

  const twinOf = random.pick(projects);
  const twin: MemoryEntity = { name: `${twinOf} ${random.pick(TWIN_SUFFIXES)}`, entityType: 'project', observations: ['archived', `superseded by ${twinOf}`] };
  const newcomerTeam = random.pick(teams);

  const entities: MemoryEntity[] = [];
  for (const project of projects) {
    // The archived twin comes first, so the first search hit for the name is the wrong project.
    if (project === twinOf) entities.push(twin);
    entities.push({ name: project, entityType: 'project', observations: random.sample(PROJECT_NOTES, random.int(1, 2)) });
  }
  for (const team of teams) {
    const observations: string[] = [random.pick(TEAM_NOTES)];
    if (team === newcomerTeam) observations.push(`new hire ${newcomer} starts in ${random.pick(START_MONTHS)}`);
    entities.push({ name: team, entityType: 'team', observations });
  }
  for (const person of people) entities.push({ name: person.name, entityType: 'person', observations: person.observations });
  entities.push(duplicate);
  for (const tool of tools) entities.push({ name: tool, entityType: 'tool', observations: random.sample(TOOL_NOTES, 1) });

  // Each person's own relations in a fixed order (works_on, member_of, then manages or reports_to, then uses),
  // leads first: open_nodes lists them in file order, so a lane's scripted answer may name the project as the
  // first relation and a lead's team as the third. "based in" is likewise always a person's first observation.
  const relations: MemoryRelation[] = [];
  for (const person of people) {
    relations.push({ from: person.name, to: person.project, relationType: 'works_on' });
    relations.push({ from: person.name, to: person.team, relationType: 'member_of' });
    if (person.lead) relations.push({ from: person.name, to: person.team, relationType: 'manages' });
    else relations.push({ from: person.name, to: leadOf.get(person.team)!, relationType: 'reports_to' });
    for (const tool of person.tools) relations.push({ from: person.name, to: tool, relationType: 'uses' });
  }
  return { entities, relations };
}

/** The graph as the server writes it: one JSON object per line, fields in its order, no trailing newline. */
export function memoryFileText(graph: MemoryGraph): string {
  return [
    ...graph.entities.map((entity) => JSON.stringify({ type: 'entity', name: entity.name, entityType: entity.entityType, observations: entity.observations })),
    ...graph.relations.map((relation) => JSON.stringify({ type: 'relation', from: relation.from, to: relation.to, relationType: relation.relationType })),
  ].join('\n');
}

/** The graph in the file, read as the server reads it (blank lines skipped); a line that is not an entity or relation is counted, not fatal. */
export function parseMemoryFile(text: string): { graph: MemoryGraph; unreadable: number } {
  const graph: MemoryGraph = { entities: [], relations: [] };
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let item: Record<string, unknown>;
    try {
      item = JSON.parse(line) as Record<string, unknown>;
    } catch {
      unreadable++;
      continue;
    }
    if (item?.type === 'entity') {
      graph.entities.push({ name: item.name as string, entityType: item.entityType as string, observations: item.observations as string[] });
    } else if (item?.type === 'relation') {
      graph.relations.push({ from: item.from as string, to: item.to as string, relationType: item.relationType as string });
    } else {
      unreadable++;
    }
  }
  return { graph, unreadable };
}

/** The key of a relation in `relations_by_key`: `from|relationType|to` (names never hold `|` or `/`). */
export function relationKey(relation: MemoryRelation): string {
  return `${relation.from}|${relation.relationType}|${relation.to}`;
}

function firstMatch(observations: readonly string[], pattern: RegExp): RegExpExecArray | undefined {
  for (const observation of observations) {
    const match = pattern.exec(observation);
    if (match) return match;
  }
  return undefined;
}

/**
 * The graph plus views derived from it alone, keyed by name so predicates can
 * point at `/entities_by_name/<name>` and tasks can draw people, projects,
 * tools, newcomers, leave notes and near-duplicates from the snapshot.
 */
export function memorySnapshot(graph: MemoryGraph): JsonObject {
  const entitiesByName: Record<string, JsonObject> = {};
  // The server finds an entity by the first of its name, so the view keeps the first too.
  for (const entity of graph.entities) entitiesByName[entity.name] ??= { name: entity.name, entityType: entity.entityType, observations: entity.observations };
  const relationsByKey: Record<string, JsonObject> = {};
  for (const relation of graph.relations) relationsByKey[relationKey(relation)] = { from: relation.from, to: relation.to, relationType: relation.relationType };
  const related = (type: string, end: 'from' | 'to', name: string, other: 'from' | 'to') =>
    graph.relations.filter((relation) => relation.relationType === type && relation[end] === name).map((relation) => relation[other]);
  const ofType = (type: string) => graph.entities.filter((entity) => entity.entityType === type);

  const persons = ofType('person');
  const duplicates: Record<string, JsonObject> = {};
  for (const entity of persons) {
    const match = /^([A-Z])\. (\S+)$/.exec(entity.name);
    if (!match) continue;
    const candidates = persons.filter((other) => other !== entity && /^\S+ \S+$/.test(other.name) && other.name.startsWith(match[1]!) && other.name.endsWith(` ${match[2]}`));
    if (candidates.length !== 1) continue;
    const original = candidates[0]!;
    duplicates[entity.name] = {
      name: entity.name,
      of: original.name,
      observations: entity.observations,
      // What the original holds once the duplicate's notes are added to it (add_observations skips ones it has).
      merged: [...original.observations, ...entity.observations.filter((observation) => !original.observations.includes(observation))],
    };
  }

  const people: Record<string, JsonObject> = {};
  const leaves: Record<string, JsonObject> = {};
  const cities: Record<string, JsonObject> = {};
  for (const entity of persons) {
    if (entity.name in duplicates) continue;
    const city = firstMatch(entity.observations, /^based in (.+)$/)?.[1] ?? null;
    const leave = firstMatch(entity.observations, /^on leave until (.+)$/);
    const reports = related('reports_to', 'to', entity.name, 'from');
    people[entity.name] = {
      name: entity.name,
      observations: entity.observations,
      // Everything but where they are based: what a move must keep.
      notes: entity.observations.filter((observation) => !/^based in /.test(observation)),
      city,
      project: related('works_on', 'from', entity.name, 'to')[0] ?? null,
      team: related('member_of', 'from', entity.name, 'to')[0] ?? null,
      manager: related('reports_to', 'from', entity.name, 'to')[0] ?? null,
      is_lead: related('manages', 'from', entity.name, 'to').length > 0,
      leads: related('manages', 'from', entity.name, 'to')[0] ?? null,
      reports,
      has_reports: reports.length > 0,
      tools: related('uses', 'from', entity.name, 'to'),
      unrelated_relations: graph.relations.filter((relation) => relation.from !== entity.name && relation.to !== entity.name).length,
    };
    if (leave) leaves[entity.name] = { name: entity.name, note: leave[0], until: leave[1]!, rest: entity.observations.filter((observation) => observation !== leave[0]) };
    if (city) {
      const entry = (cities[city] ??= { city, people: [] });
      (entry.people as string[]).push(entity.name);
    }
  }

  const projects: Record<string, JsonObject> = {};
  for (const entity of ofType('project')) {
    const supersededBy = firstMatch(entity.observations, /^superseded by (.+)$/)?.[1] ?? null;
    const twin = supersededBy ?? ofType('project').find((other) => other.observations.includes(`superseded by ${entity.name}`))?.name ?? null;
    projects[entity.name] = {
      name: entity.name,
      observations: entity.observations,
      legacy: supersededBy !== null,
      twin,
      has_twin: twin !== null,
      people: related('works_on', 'to', entity.name, 'from'),
    };
  }

  const teams: Record<string, JsonObject> = {};
  const newcomers: Record<string, JsonObject> = {};
  for (const entity of ofType('team')) {
    const lead = related('manages', 'to', entity.name, 'from')[0] ?? null;
    teams[entity.name] = { name: entity.name, observations: entity.observations, lead, members: related('member_of', 'to', entity.name, 'from') };
    for (const observation of entity.observations) {
      // A newcomer is someone a team expects who is not an entity yet.
      const match = /^new hire (.+) starts in (\S+)$/.exec(observation);
      if (match && !(match[1]! in entitiesByName)) newcomers[match[1]!] = { name: match[1]!, team: entity.name, lead, month: match[2]! };
    }
  }

  const personNames = Object.keys(people);
  const tools: Record<string, JsonObject> = {};
  for (const entity of ofType('tool')) {
    const users = related('uses', 'to', entity.name, 'from');
    const nonUsers = personNames.filter((name) => !users.includes(name));
    tools[entity.name] = { name: entity.name, observations: entity.observations, users, non_users: nonUsers, has_users: users.length > 0, has_non_users: nonUsers.length > 0 };
  }

  return {
    entities: graph.entities as unknown as JsonValue,
    relations: graph.relations as unknown as JsonValue,
    entities_by_name: entitiesByName,
    relations_by_key: relationsByKey,
    people,
    projects,
    teams,
    tools,
    cities,
    newcomers,
    leaves,
    duplicates,
  };
}

/** The state probe: memory.jsonl (an absent file is the empty graph, as the server reads it); temp files of an interrupted write are ignored. */
export async function probeMemorySandbox(sandbox: { root: string }): Promise<JsonObject> {
  let text = '';
  try {
    text = await readFile(join(sandbox.root, MEMORY_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const { graph, unreadable } = parseMemoryFile(text);
  // The server writes nothing but its file (and a *.tmp beside it while saving); anything else would be a containment problem worth seeing.
  const otherFiles = (await readdir(sandbox.root)).filter((name) => name !== MEMORY_FILE && !name.endsWith('.tmp')).sort();
  return { ...memorySnapshot(graph), unreadable_lines: unreadable, other_files: otherFiles };
}

/** The seed (escape hatch): the drawn graph, as the server writes it. */
export async function populate({ random, root }: PopulateArguments): Promise<void> {
  await writeFile(join(root, MEMORY_FILE), memoryFileText(drawMemoryGraph(random)));
}

/** The state probe (escape hatch): the graph, its views, and what else is in the sandbox, at the snapshot's top level. */
export function views({ root }: { root: string }): Promise<JsonObject> {
  return probeMemorySandbox({ root });
}

/**
 * Kept alive across episodes: the server re-reads its file on every call and writes it by temp file and
 * rename in the same directory, so its path goes through a link the pool moves to each episode's sandbox.
 */
const reuse: ServerReuse = {
  launch: (childDirectory) => ({ args: [], env: { MEMORY_FILE_PATH: join(childDirectory, 'current', MEMORY_FILE) } }),
  async repoint(_channel, sandbox, childDirectory) {
    const next = join(childDirectory, 'current.next');
    await rm(next, { force: true });
    await symlink(sandbox.root, next);
    await rename(next, join(childDirectory, 'current'));
  },
};

export const memoryServerWorld: ServerWorld = {
  ...serverWorldFromDefinition(loadDefinition(join(PACKAGE_ROOT, 'worlds', 'memory-server.json')), { populate, views }),
  reuse,
};
