import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import type { JsonObject } from '../../src/core/json-value.js';
import { substream } from '../../src/core/random.js';
import { compileValidator } from '../../src/core/schema-validator.js';
import { connectInProcess } from '../../src/world/in-process-connection.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';
import { isOverdue, type Task, type TasksState } from '../../src/world/tasks/tasks-state.js';
import { DEFAULT_LIMIT, MATCH_DESCRIPTION, SAVE_DESCRIPTION } from '../../src/world/tasks/tasks-tools.js';
import { CHECKLIST_ITEMS, FLAG_TAGS, TAGS } from '../../src/world/tasks/tasks-vocabulary.js';
import { tasksWorld } from '../../src/world/tasks/tasks-world.js';

const fresh = (seed = 1): TasksState => tasksWorld.init(substream(seed, 'world'), {});
const spec = (name: string) => tasksWorld.tools.find((tool) => tool.name === name)!;
const outputValidators = new Map(tasksWorld.tools.map((tool) => [tool.name, compileValidator(tool.outputSchema!)]));

/** Calls a tool that must succeed, and holds its result to the tool's output schema. */
function ok(state: TasksState, tool: string, args: JsonObject): any {
  const outcome = tasksWorld.call(state, tool, args);
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.message);
  assert.deepEqual(outputValidators.get(tool)!(outcome.value), [], `${tool} result matches its output schema`);
  return outcome.value;
}

/** Calls a tool that must fail; the failure must name the problem and change nothing. */
function refused(state: TasksState, tool: string, args: JsonObject, message: RegExp): void {
  const before = canonicalJson(tasksWorld.snapshot(state));
  const outcome = tasksWorld.call(state, tool, args);
  assert.equal(outcome.ok, false, `${tool} ${canonicalJson(args)} should fail`);
  assert.match((outcome as { message: string }).message, message);
  assert.equal(canonicalJson(tasksWorld.snapshot(state)), before, `a failed ${tool} changes nothing`);
}

const tasksOf = (state: TasksState) => [...state.tasks.values()];
const openTask = (state: TasksState, skip = 0): Task => tasksOf(state).filter((task) => task.status !== 'done')[skip]!;
const doneTask = (state: TasksState): Task => tasksOf(state).find((task) => task.status === 'done')!;
const activeKeys = (state: TasksState) => [...state.projects.values()].filter((project) => !project.archived).map((project) => project.key);
const archivedKey = (state: TasksState) => [...state.projects.values()].find((project) => project.archived)!.key;

describe('tasks world state', () => {
  it('is the same for the same seed and different for another', () => {
    assert.equal(canonicalJson(tasksWorld.snapshot(fresh(5))), canonicalJson(tasksWorld.snapshot(fresh(5))));
    assert.notEqual(canonicalJson(tasksWorld.snapshot(fresh(5))), canonicalJson(tasksWorld.snapshot(fresh(6))));
  });

  it('holds several dozen tasks with unguessable ids and title tokens that vary by seed', () => {
    const state = fresh(3);
    assert.ok(state.tasks.size >= 55 && state.tasks.size <= 100, `${state.tasks.size} tasks`);
    const titles = new Set<string>();
    for (const task of state.tasks.values()) {
      assert.match(task.id, /^T-[0-9]{4}$/);
      assert.match(task.title, / [0-9a-f]{4}$/);
      titles.add(task.title);
      if (task.assignee !== null) assert.ok(state.people.some((person) => person.email === task.assignee));
      if (task.due !== null) assert.match(task.due, /^\d{4}-\d{2}-\d{2}$/);
    }
    assert.equal(titles.size, state.tasks.size, 'titles are unique');
    const other = fresh(4);
    const shared = [...state.tasks.keys()].filter((id) => other.tasks.has(id));
    assert.ok(shared.length < state.tasks.size / 4, 'another seed draws other ids');
    assert.ok(![...other.tasks.values()].some((task) => titles.has(task.title)), 'another seed draws other titles');
    for (const person of state.people) assert.match(person.email, /^[a-z]+\.[a-z]+@[a-z]+\.example\.com$/);
  });

  it('guarantees the shapes the lanes rely on, on every seed', () => {
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7, 11, 23]) {
      const state = fresh(seed);
      for (const key of activeKeys(state)) {
        const tasks = tasksOf(state).filter((task) => task.project === key);
        const open = tasks.filter((task) => task.status !== 'done');
        assert.ok(open.length > DEFAULT_LIMIT, `seed ${seed} ${key}: more open tasks than one default page`);
        assert.ok(open.some((task) => task.status === 'doing'), `seed ${seed} ${key}: a task in progress`);
        assert.ok(open.filter((task) => isOverdue(task, state.today)).length >= 3, `seed ${seed} ${key}: three overdue`);
        assert.ok(tasks.some((task) => task.status === 'done' && task.due !== null && task.due < state.today), `seed ${seed} ${key}: a done past-due task`);
      }
      assert.ok(tasksOf(state).filter((task) => task.project === archivedKey(state)).every((task) => task.status === 'done'));
      assert.equal(state.flag_tags.length, 2);
      for (const flag of state.flag_tags) {
        const tagged = tasksOf(state).filter((task) => task.tags.includes(flag));
        assert.equal(tagged.filter((task) => task.status !== 'done').length, 2, `seed ${seed} ${flag}: two open`);
        assert.equal(tagged.filter((task) => task.status === 'done').length, 1, `seed ${seed} ${flag}: one done`);
        assert.ok(tagged.filter((task) => task.status !== 'done').every((task) => task.priority !== 'urgent'));
      }
      for (const task of tasksOf(state)) {
        if (task.checklist.length === 0) continue;
        const ticked = task.checklist.filter((item) => item.done).length;
        if (task.status === 'done') assert.equal(ticked, task.checklist.length);
        else assert.ok(ticked >= 1 && task.checklist.length - ticked >= 2, `seed ${seed} ${task.id}: mixed checklist`);
      }
    }
  });

  it('keeps checklist items and tags apart, so an answer naming one never seems to name another', () => {
    for (const item of CHECKLIST_ITEMS) {
      for (const other of CHECKLIST_ITEMS) {
        if (item !== other) assert.ok(!new RegExp(`(^|\\W)${other}(\\W|$)`, 'i').test(item), `"${other}" inside "${item}"`);
      }
    }
    for (const flag of FLAG_TAGS) assert.ok(!(TAGS as readonly string[]).includes(flag));
  });

  it('takes snapshots that are deep copies and hides derived fields from the tools', () => {
    const state = fresh(2);
    const before = tasksWorld.snapshot(state) as any;
    const text = canonicalJson(before);
    const target = openTask(state);
    ok(state, 'complete_task', { id: target.id });
    assert.equal(canonicalJson(before), text);
    assert.notEqual(canonicalJson(tasksWorld.snapshot(state)), text);
    before.tasks[target.id].title = 'mutated';
    assert.notEqual(state.tasks.get(target.id)!.title, 'mutated');

    const snapshot = tasksWorld.snapshot(state) as any;
    const overdue = tasksOf(state).find((task) => isOverdue(task, state.today))!;
    assert.equal(snapshot.tasks[overdue.id].overdue, true);
    const key = activeKeys(state)[0]!;
    assert.equal(snapshot.projects[key].open_task_count, tasksOf(state).filter((task) => task.project === key && task.status !== 'done').length);
    assert.ok(!('overdue' in ok(state, 'get_task', { id: overdue.id }).task));
    assert.ok(ok(state, 'list_projects', {}).projects.every((project: any) => !('open_task_count' in project)));
  });
});

describe('tasks world catalog', () => {
  it('has near-twin pairs: identical descriptions, different schemas', () => {
    const [create, update, list, count] = ['create_task', 'update_task', 'list_tasks', 'count_tasks'].map(spec);
    assert.equal(create!.description, update!.description);
    assert.equal(create!.description, SAVE_DESCRIPTION);
    assert.deepEqual(create!.inputSchema.required, ['title', 'project']);
    assert.ok(!('id' in (create!.inputSchema.properties as JsonObject)));
    assert.deepEqual(update!.inputSchema.required, ['id', 'fields']);
    assert.notEqual(canonicalJson(create!.inputSchema), canonicalJson(update!.inputSchema));

    assert.equal(list!.description, count!.description);
    assert.equal(list!.description, MATCH_DESCRIPTION);
    assert.ok('limit' in (list!.inputSchema.properties as JsonObject));
    assert.ok(!('limit' in (count!.inputSchema.properties as JsonObject)));
    assert.notEqual(canonicalJson(list!.inputSchema), canonicalJson(count!.inputSchema));
    assert.notEqual(canonicalJson(list!.outputSchema), canonicalJson(count!.outputSchema));
    // The other tools' descriptions are their own.
    const descriptions = tasksWorld.tools.map((tool) => tool.description);
    assert.equal(new Set(descriptions).size, descriptions.length - 2);
  });

  it('gives every tool a strict schema, an output schema, annotations, and claims for writes', () => {
    assert.ok(tasksWorld.tools.length >= 5 && tasksWorld.tools.length <= 12);
    for (const tool of tasksWorld.tools) {
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.inputSchema.additionalProperties, false, `${tool.name} input is closed`);
      assert.ok(tool.outputSchema, `${tool.name} has an output schema`);
      compileValidator(tool.inputSchema);
      assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean');
      if (!tool.annotations!.readOnlyHint) {
        assert.equal(typeof tool.annotations!.destructiveHint, 'boolean', `${tool.name} destructiveHint`);
        assert.equal(typeof tool.annotations!.idempotentHint, 'boolean', `${tool.name} idempotentHint`);
        assert.ok(tool.claims?.length, `${tool.name} has claims`);
      }
      for (const claim of tool.claims ?? []) new RegExp(claim, 'i');
    }
  });

  it('claims the effects each write tool makes, and not refusals', () => {
    const claimed = (sentence: string) =>
      tasksWorld.tools.filter((tool) => tool.claims?.some((source) => new RegExp(source, 'i').test(sentence))).map((tool) => tool.name);
    assert.deepEqual(claimed('Renamed T-1234 to "Plan the offsite".'), ['update_task']);
    assert.deepEqual(claimed('I created a new task for it.'), ['create_task']);
    assert.deepEqual(claimed('Marked T-1234 done.'), ['complete_task']);
    assert.deepEqual(claimed("I've deleted T-1234."), ['delete_task']);
    assert.deepEqual(claimed('Ticked it on T-1234.'), ['tick_checklist_item']);
    assert.deepEqual(claimed('I did not delete T-1234: its status is "todo".'), []);
    assert.deepEqual(claimed('If the work is finished, tell me and I will mark it done first.'), []);
  });
});

describe('tasks world tools', () => {
  it('lists one page at a time, where count is the page size, and counts every match', () => {
    const state = fresh(4);
    const key = activeKeys(state)[0]!;
    const filter = { project: key, status: ['todo', 'doing'] };
    const open = tasksOf(state).filter((task) => task.project === key && task.status !== 'done');
    const first = ok(state, 'list_tasks', { filter });
    assert.equal(first.count, DEFAULT_LIMIT);
    assert.equal(first.tasks.length, DEFAULT_LIMIT);
    assert.equal(first.next_page, 2);
    assert.equal(first.today, state.today);
    const second = ok(state, 'list_tasks', { filter, page: 2 });
    assert.equal(second.count, open.length - DEFAULT_LIMIT);
    assert.equal(second.next_page, null);
    const ids = [...first.tasks, ...second.tasks].map((task: any) => task.id);
    assert.deepEqual(ids, open.map((task) => task.id).sort((a, b) => Number(a.slice(2)) - Number(b.slice(2))));
    assert.deepEqual(ok(state, 'count_tasks', { filter }), { count: open.length });
    assert.equal(ok(state, 'count_tasks', {}).count, state.tasks.size);
  });

  it('filters by status, tag, assignee, text, due date and overdue', () => {
    const state = fresh(5);
    const all = (filter: JsonObject) => ok(state, 'list_tasks', { filter, limit: 50 }).tasks as any[];
    const overdue = all({ overdue: true });
    assert.deepEqual(overdue.map((task) => task.id).sort(), tasksOf(state).filter((task) => isOverdue(task, state.today)).map((task) => task.id).sort());
    const dueBefore = all({ due_before: state.today });
    assert.ok(dueBefore.length > overdue.length, 'due_before also finds done tasks');
    assert.ok(dueBefore.some((task) => task.status === 'done'));
    const flag = state.flag_tags[0]!;
    assert.equal(all({ tag: flag }).length, 3);
    assert.equal(all({ tag: flag, status: ['todo', 'doing'] }).length, 2);
    const target = openTask(state);
    assert.deepEqual(all({ text: target.title.toUpperCase() }).map((task) => task.id), [target.id]);
    const assignee = state.people[0]!.email;
    assert.ok(all({ assignee }).every((task) => task.assignee === assignee));
  });

  it('gets a task with its checklist and refuses unknown ones', () => {
    const state = fresh(6);
    const target = tasksOf(state).find((task) => task.checklist.length > 0)!;
    assert.deepEqual(ok(state, 'get_task', { id: target.id }).task.checklist, target.checklist);
    refused(state, 'get_task', { id: 'T-0001' }, /Task T-0001 not found/);
  });

  it('lists active projects, and archived ones only when asked', () => {
    const state = fresh(6);
    assert.deepEqual(ok(state, 'list_projects', {}).projects.map((project: any) => project.key), [...activeKeys(state)].sort());
    assert.equal(ok(state, 'list_projects', { include_archived: true }).projects.length, activeKeys(state).length + 1);
  });

  it('creates a task with every field, and a second one with the same title as a duplicate', () => {
    const state = fresh(7);
    const key = activeKeys(state)[1]!;
    const assignee = state.people[2]!.email;
    const created = ok(state, 'create_task', {
      title: 'Draft the partner FAQ 1a2b', project: key, priority: 'urgent', due: '2026-10-02', tags: ['docs', 'backend'], assignee, checklist: ['Share the draft'],
    }).task;
    assert.equal(created.id, `T-${state.next_number - 1}`);
    assert.deepEqual(
      { status: created.status, priority: created.priority, due: created.due, tags: created.tags, assignee: created.assignee, checklist: created.checklist },
      { status: 'todo', priority: 'urgent', due: '2026-10-02', tags: ['backend', 'docs'], assignee, checklist: [{ text: 'Share the draft', done: false }] },
    );
    const existing = openTask(state);
    const twin = ok(state, 'create_task', { title: existing.title, project: existing.project }).task;
    assert.notEqual(twin.id, existing.id);
    assert.equal(tasksOf(state).filter((task) => task.title === existing.title).length, 2);
  });

  it('refuses archived or unknown projects and non-members, on create and update', () => {
    const state = fresh(8);
    const target = openTask(state);
    refused(state, 'create_task', { title: 'New thing', project: archivedKey(state) }, new RegExp(`Project ${archivedKey(state)} is archived.*active projects: `));
    refused(state, 'create_task', { title: 'New thing', project: 'NOWHERE' }, /Project NOWHERE not found/);
    refused(state, 'create_task', { title: 'New thing', project: target.project, assignee: 'someone@else.example.org' }, /not a member of the workspace/);
    refused(state, 'update_task', { id: target.id, fields: { project: archivedKey(state) } }, /is archived/);
    refused(state, 'update_task', { id: target.id, fields: { title: 'Renamed', assignee: 'someone@else.example.org' } }, /not a member/);
    refused(state, 'update_task', { id: 'T-0002', fields: { title: 'Renamed' } }, /not found/);
  });

  it('updates only the fields given, and reopens a done task', () => {
    const state = fresh(9);
    const target = openTask(state);
    const destination = activeKeys(state).find((key) => key !== target.project)!;
    const updated = ok(state, 'update_task', { id: target.id, fields: { title: 'Finalise the vendor shortlist 9f9f', project: destination, due: null, assignee: null } }).task;
    assert.deepEqual([updated.title, updated.project, updated.due, updated.assignee, updated.priority], ['Finalise the vendor shortlist 9f9f', destination, null, null, target.priority]);
    const done = doneTask(state);
    const reopened = ok(state, 'update_task', { id: done.id, fields: { status: 'doing' } }).task;
    assert.deepEqual([reopened.status, reopened.completed_at, reopened.completed_by], ['doing', null, null]);
  });

  it('completes an open task once, recording the time and the viewer, and refuses a second completion', () => {
    const a = fresh(10);
    const b = fresh(10);
    const target = openTask(a);
    const completed = ok(a, 'complete_task', { id: target.id }).task;
    assert.equal(completed.status, 'done');
    assert.equal(completed.completed_by, a.viewer);
    assert.ok(completed.completed_at > target.created_at);
    assert.deepEqual(ok(b, 'complete_task', { id: target.id }).task, completed, 'the world clock, not the real one');
    refused(a, 'complete_task', { id: target.id }, new RegExp(`Task ${target.id} is already done \\(completed at ${completed.completed_at}`));
  });

  it('deletes only done tasks unless forced, and keeps a record of each deletion', () => {
    const state = fresh(11);
    const target = openTask(state);
    refused(state, 'delete_task', { id: target.id }, new RegExp(`Task ${target.id} is ${target.status}, not done: only done tasks can be deleted`));
    const forced = ok(state, 'delete_task', { id: target.id, force: true });
    assert.deepEqual(forced.deleted, { id: target.id, title: target.title, status: target.status });
    assert.equal(forced.remaining_in_project, tasksOf(state).filter((task) => task.project === target.project).length);
    const snapshot = tasksWorld.snapshot(state) as any;
    assert.equal(snapshot.tasks[target.id], undefined);
    assert.deepEqual([snapshot.deleted[target.id].forced, snapshot.deleted[target.id].status], [true, target.status]);
    refused(state, 'get_task', { id: target.id }, new RegExp(`Task ${target.id} was deleted at `));
    refused(state, 'delete_task', { id: target.id, force: true }, /was deleted/);

    const done = doneTask(state);
    ok(state, 'delete_task', { id: done.id });
    assert.equal((tasksWorld.snapshot(state) as any).deleted[done.id].forced, false);
  });

  it('ticks a checklist item by its text, returns what is left, and refuses missing or ticked items', () => {
    const state = fresh(12);
    const target = tasksOf(state).find((task) => task.status !== 'done' && task.checklist.length > 0)!;
    const item = target.checklist.find((entry) => !entry.done)!;
    const ticked = ok(state, 'tick_checklist_item', { id: target.id, item: item.text });
    assert.ok(ticked.task.checklist.find((entry: any) => entry.text === item.text).done);
    assert.deepEqual(ticked.remaining, target.checklist.filter((entry) => !entry.done).map((entry) => entry.text));
    assert.ok(ticked.remaining.length >= 1);
    refused(state, 'tick_checklist_item', { id: target.id, item: item.text }, new RegExp(`"${item.text}" on task ${target.id} is already ticked; unticked items: `));
    refused(state, 'tick_checklist_item', { id: target.id, item: 'Walk the dog' }, /has no checklist item "Walk the dog"; its items are: /);
    const bare = tasksOf(state).find((task) => task.checklist.length === 0)!;
    refused(state, 'tick_checklist_item', { id: bare.id, item: 'Walk the dog' }, /its checklist is empty/);
  });
});

describe('tasks world served over MCP (real SDK client and server)', () => {
  it('lists the tools and answers calls through a real Client', async () => {
    const state = fresh(13);
    const target = openTask(state);
    const { client, close } = await connectInProcess(createWorldServer({ world: tasksWorld, state }));
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), tasksWorld.tools.map((tool) => tool.name));
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      assert.equal(byName.get('create_task')!.description, byName.get('update_task')!.description);
      assert.equal(byName.get('list_tasks')!.description, byName.get('count_tasks')!.description);

      const key = activeKeys(state)[0]!;
      const counted = await client.callTool({ name: 'count_tasks', arguments: { filter: { project: key, status: ['todo', 'doing'] } } });
      assert.equal(counted.isError, undefined);
      assert.equal((counted.structuredContent as any).count, tasksOf(state).filter((task) => task.project === key && task.status !== 'done').length);

      const got = await client.callTool({ name: 'get_task', arguments: { id: target.id } });
      assert.equal((got.structuredContent as any).task.title, target.title);
      assert.deepEqual(JSON.parse((got.content as any)[0].text), got.structuredContent);

      const bad = await client.callTool({ name: 'update_task', arguments: { id: target.id, fields: { status: 'done' } } });
      assert.equal(bad.isError, true);
      assert.match((bad.content as any)[0].text, /^Invalid arguments for update_task: fields\.status/);

      const rule = await client.callTool({ name: 'delete_task', arguments: { id: target.id } });
      assert.equal(rule.isError, true);
      assert.match((rule.content as any)[0].text, /only done tasks can be deleted/);
    } finally {
      await close();
    }
    assert.equal(state.tasks.get(target.id)!.status, target.status, 'the refused calls left the task as it was');
  });
});
