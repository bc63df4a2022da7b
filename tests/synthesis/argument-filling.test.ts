// How the sampler fills a tool's schema: an argument naming a record is bound
// to one through a lane parameter (by its name, its description, or the
// record's own noun), a creating tool's name is fresh, an enum takes one of
// its values, integers keep to their bounds, a path goes under the shown
// root unless the schema says it is relative, and a repository argument is
// the root itself.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { substream } from '../../src/core/random.js';
import { fillArguments, ParameterPool } from '../../src/synthesis/argument-filling.js';
import { tablesAmong } from '../../src/synthesis/candidate-sampler.js';
import { surveyState } from '../../src/synthesis/state-survey.js';

const state = {
  entities: [
    { name: 'Orion', entityType: 'project', observations: ['deadline in Q3'] },
    { name: 'Hana Rahman', entityType: 'person', observations: ['based in Oslo'] },
    { name: 'Granite', entityType: 'project', observations: [] },
  ],
  tables: { orders: { name: 'orders', row_count: 4 }, items: { name: 'items', row_count: 9 } },
  files: { 'notes/todo.md': { path: 'notes/todo.md', text: 'x' } },
};
const collections = surveyState(state);
const entities = collections.find((collection) => collection.pointer === '/entities')!;
const tables = collections.find((collection) => collection.pointer === '/tables')!;
const files = collections.find((collection) => collection.pointer === '/files')!;

function fill(schema: object, target: typeof entities | undefined, name = 'tool', shownRoot?: string) {
  const random = substream(1, 'argument-filling-test');
  const pool = new ParameterPool(random);
  const filled = fillArguments({ name, inputSchema: schema as never }, { random, pool, collections, ...(target ? { target } : {}), ...(shownRoot ? { shownRoot } : {}) });
  return { filled, pool };
}

describe('filling a tool schema', () => {
  it('surveys collections of records and what names them', () => {
    assert.deepEqual(entities.naming, ['name']);
    assert.equal(files.kind, 'map', 'a map of one record keyed by its path is a collection');
    assert.deepEqual(entities.kinds, [{ field: 'entityType', values: ['person', 'project'] }], 'a field with a few values shared by records is a kind');
    assert.deepEqual(tables.kinds, []);
  });

  it('binds an argument to a record by its name, its description or the record\'s noun', () => {
    const { filled, pool } = fill({ type: 'object', required: ['entityName', 'note'], properties: { entityName: { type: 'string' }, note: { type: 'string' } } }, entities);
    assert.ok(!('problem' in filled));
    assert.equal(filled.arguments.entityName, '{{target.name}}');
    assert.deepEqual(Object.keys(pool.params).sort(), ['note', 'target']);
    assert.equal((pool.params.target as { from: string }).from, '/entities');
    assert.ok('choice' in pool.params.note! && pool.params.note.choice.length === 6, 'a fresh value is one of six, picked per seed');
    const described = fill({ type: 'object', required: ['from'], properties: { from: { type: 'string', description: 'The name of the entity where the relation starts' } } }, entities);
    assert.equal(!('problem' in described.filled) && described.filled.arguments.from, '{{target.name}}');
    const noun = fill({ type: 'object', required: ['table'], properties: { table: { type: 'string' } } }, tables);
    assert.equal(!('problem' in noun.filled) && noun.filled.arguments.table, '{{target.name}}');
  });

  it('gives a creating tool a fresh name, and an entry of a record\'s list to a tool that takes one out', () => {
    const created = fill({ type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, entities, 'create_entity');
    assert.ok(!('problem' in created.filled));
    assert.equal(created.filled.arguments.name, '{{name}}');
    const removed = fill({ type: 'object', required: ['entityName', 'observation'], properties: { entityName: { type: 'string' }, observation: { type: 'string' } } }, entities, 'delete_observation');
    assert.equal(!('problem' in removed.filled) && removed.filled.arguments.observation, '{{target.observations.0}}');
  });

  it('takes an enum value, keeps integers in bounds, and writes paths under the root unless relative', () => {
    const { filled, pool } = fill(
      { type: 'object', required: ['reason', 'limit', 'path'], properties: { reason: { enum: ['completed', 'not_planned'] }, limit: { type: 'integer', minimum: 1, maximum: 5 }, path: { type: 'string' } } },
      files,
      'tool',
      '/repo',
    );
    assert.ok(!('problem' in filled));
    assert.ok(['completed', 'not_planned'].includes(filled.arguments.reason as string));
    const limits = (pool.params.limit as { choice: number[] }).choice;
    assert.ok(limits.length > 0 && limits.every((value) => value >= 1 && value <= 5), `limits ${limits}`);
    assert.equal(filled.arguments.path, '/repo/{{target.path}}');
    const relative = fill({ type: 'object', required: ['filePath'], properties: { filePath: { type: 'string', description: 'Path relative to the repository root' } } }, files, 'tool', '/repo');
    assert.equal(!('problem' in relative.filled) && relative.filled.arguments.filePath, '{{target.path}}');
    const relation = fill({ type: 'object', required: ['from', 'to'], properties: { from: { type: 'string', description: 'The name of the entity where it starts' }, to: { type: 'string', description: 'The name of the entity where it ends' } } }, entities);
    assert.ok(!('problem' in relation.filled));
    assert.deepEqual(relation.filled.arguments, { from: '{{target.name}}', to: '{{target_other1.name}}' }, 'a second argument naming a record by the same field names another one');
    assert.deepEqual(relation.pool.params.target_other1, { from: '/entities', where: { name: { not: '{{target.name}}' } } });
  });

  it('gives an optional repository argument the shown root, and says why a schema cannot be filled', () => {
    const { filled } = fill({ type: 'object', properties: { path: { type: 'string', description: 'Path to the Git repository.' } } }, undefined, 'git_status', '/repo');
    assert.equal(!('problem' in filled) && filled.arguments.path, '/repo');
    const odd = fill({ type: 'object', required: ['blob'], properties: { blob: { type: 'null' } } }, undefined);
    assert.match('problem' in odd.filled ? odd.filled.problem : '', /property "blob" is of a type the sampler does not fill/);
  });
});

describe('filling values in the form a schema asks for', () => {
  const folders = surveyState({ files: [{ path: 'docs/a.md', dir: 'docs', name: 'a.md' }, { path: 'notes/b.md', dir: 'notes', name: 'b.md' }] });
  const documents = folders[0]!;
  const fresh = (pool: ParameterPool, name: string) => (pool.params[name] as { choice: unknown[] }).choice;

  it('a date-time, a pattern\'s form, a multiple, an id named after its record', () => {
    const { filled, pool } = fill(
      {
        type: 'object',
        required: ['start', 'project', 'minutes', 'entity_name'],
        properties: { start: { type: 'string', format: 'date-time' }, project: { type: 'string', pattern: '^[A-Z]{3,12}$' }, minutes: { type: 'integer', multipleOf: 15, minimum: 15, maximum: 120 }, entity_name: { type: 'string' } },
      },
      undefined,
      'schedule',
    );
    assert.ok(!('problem' in filled), JSON.stringify(filled));
    for (const value of fresh(pool, 'start')) assert.match(String(value), /^2027-0[1-9]-[12][0-9]T(09|1[0-6]):00:00Z$/);
    for (const value of fresh(pool, 'project')) assert.match(String(value), /^[A-Z]{3,12}$/);
    for (const value of fresh(pool, 'minutes')) assert.ok(Number(value) % 15 === 0 && Number(value) >= 15 && Number(value) <= 120, String(value));
    assert.equal(filled.arguments.entity_name, '{{target.name}}', '"entity_name" names an entity');
    const impossible = fill({ type: 'object', required: ['code'], properties: { code: { type: 'string', pattern: '^ZZ[0-9]{9}$' } } }, undefined, 'make');
    assert.match('problem' in impossible.filled ? impossible.filled.problem : '', /must match \^ZZ\[0-9\]\{9\}\$/);
  });

  it('a folder tool takes the folder a record is in; a vault named by name gets the sandbox\'s name and relative paths', () => {
    const random = substream(2, 'argument-filling-test');
    const listing = fillArguments({ name: 'list_directory', inputSchema: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } } }, { random, pool: new ParameterPool(random), collections: folders, target: documents, shownRoot: '/sandbox' });
    assert.equal(!('problem' in listing) && listing.arguments.path, '/sandbox/{{target.dir}}');
    const vault = fillArguments(
      { name: 'delete-note', inputSchema: { type: 'object', required: ['vault', 'path'], properties: { vault: { type: 'string', description: 'Name of the vault containing the note' }, path: { type: 'string', description: 'Path of the note' } } } },
      { random, pool: new ParameterPool(random), collections: folders, target: documents, shownRoot: '/vault' },
    );
    assert.deepEqual(!('problem' in vault) && vault.arguments, { vault: 'vault', path: '{{target.path}}' });
  });

  it('an edit finds the record\'s first line as it is, and a search looks in the folder of the file it names', () => {
    const tree = surveyState({ files: [
      { path: 'docs/a.md', dir: 'docs', name: 'a.md', text: '# A\nowner: Ana\n', lines: [{ n: 1, text: '# A' }, { n: 2, text: 'owner: Ana' }] },
      { path: 'notes/b.md', dir: 'notes', name: 'b.md', text: '# B\n', lines: [{ n: 1, text: '# B' }] },
    ] });
    const random = substream(4, 'argument-filling-test');
    const editSchema = { type: 'object', required: ['path', 'edits'], properties: { path: { type: 'string' }, edits: { type: 'array', items: { type: 'object', required: ['oldText', 'newText'], properties: { oldText: { type: 'string', description: 'Text to search for - must match exactly' }, newText: { type: 'string' } } } } } };
    const pool = new ParameterPool(random);
    const edit = fillArguments({ name: 'edit_file', inputSchema: editSchema }, { random, pool, collections: tree, target: tree[0]!, shownRoot: '/sandbox' });
    assert.ok(!('problem' in edit), JSON.stringify(edit));
    const [change] = edit.arguments.edits as { oldText: string; newText: string }[];
    assert.equal(change!.oldText, '{{target.lines.0.text}}', 'the text to find is the line the file has on every seed');
    assert.match(change!.newText, /^\{\{new_text\}\}$/, 'the text it becomes is fresh');
    assert.ok(edit.mentions.some((mention) => mention.property === 'old text' && mention.text === '{{target.lines.0.text}}'), 'the line to find is stated');
    const blank = surveyState({ files: [{ path: 'a.md', name: 'a.md', lines: [{ n: 1, text: '' }] }, { path: 'b.md', name: 'b.md', lines: [{ n: 1, text: 'x' }] }] });
    const unmatched = fillArguments({ name: 'edit_file', inputSchema: editSchema }, { random, pool: new ParameterPool(random), collections: blank, target: blank[0]! });
    assert.ok(!('problem' in unmatched) && !JSON.stringify(unmatched.arguments).includes('lines.0'), 'a record with an empty first line has no line to find');
    const notes = surveyState({ notes: [
      { path: 'a.md', name: 'a.md', front_matter: { status: 'open', tags: ['research', 'project'] } },
      { path: 'b.md', name: 'b.md', front_matter: { status: 'done', tags: ['ops'] } },
    ] });
    const untag = fillArguments({ name: 'remove-tags', inputSchema: { type: 'object', required: ['files', 'tags'], properties: { files: { type: 'array', items: { type: 'string' } }, tags: { type: 'array', items: { type: 'string' } } } } }, { random, pool: new ParameterPool(random), collections: notes, target: notes[0]! });
    assert.deepEqual(!('problem' in untag) && untag.arguments, { files: ['{{target.path}}'], tags: ['{{target.front_matter.tags.0}}'] }, 'a tag to take out is the note\'s first, one object down');
    const search = fillArguments({ name: 'search_files', inputSchema: { type: 'object', required: ['path', 'pattern'], properties: { path: { type: 'string' }, pattern: { type: 'string' } } } }, { random, pool: new ParameterPool(random), collections: tree, target: tree[0]!, shownRoot: '/sandbox' });
    assert.deepEqual(!('problem' in search) && search.arguments, { path: '/sandbox/{{target.dir}}', pattern: '{{target.name}}' }, 'search_files takes a folder, not a file');
  });

  it('a database tool names a table, its row by the table\'s identity and its values column by column', () => {
    const database = surveyState({
      rows: {
        customers: { '1': { id: 1, name: 'Ada Byrne', city: 'Leeds', deleted: 0 }, '2': { id: 2, name: 'Bo Chen', city: 'Lyon', deleted: 0 }, '3': { id: 3, name: 'Cy Dunn', city: 'Ghent', deleted: 1 }, '4': { id: 4, name: 'Di Eze', city: 'Oslo', deleted: 0 }, '5': { id: 5, name: 'Ed Fox', city: 'Rome', deleted: 0 } },
        orders: { '1': { id: 1, customer_id: 2, total_cents: 900 }, '2': { id: 2, customer_id: 1, total_cents: 450 } },
      },
      customer_view: [{ id: 1, login: 'ada' }, { id: 2, login: 'bo' }],
    });
    const customers = database.find((collection) => collection.pointer === '/rows/customers')!;
    const orders = database.find((collection) => collection.pointer === '/rows/orders')!;
    assert.deepEqual(tablesAmong(database).map((collection) => collection.pointer), ['/rows/customers', '/rows/orders'], 'a view beside the tables is not one');
    const columnMap = { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } };
    const random = substream(3, 'argument-filling-test');
    const context = (target: typeof customers) => ({ random, pool: new ParameterPool(random), collections: database, target });
    const update = fillArguments({ name: 'update_records', inputSchema: { type: 'object', required: ['table', 'data', 'conditions'], properties: { table: { type: 'string' }, data: columnMap, conditions: columnMap } } }, context(customers));
    assert.ok(!('problem' in update), JSON.stringify(update));
    assert.equal(update.arguments.table, 'customers', 'the table by its own name');
    assert.deepEqual(update.arguments.conditions, { id: '{{target.id}}' }, 'the row by the identity, through a parameter');
    assert.equal(Object.keys(update.arguments.data as object).length, 1, 'a change writes one column');
    const created = context(orders);
    const insert = fillArguments({ name: 'create_record', inputSchema: { type: 'object', required: ['table', 'data'], properties: { table: { type: 'string' }, data: columnMap } } }, created);
    assert.ok(!('problem' in insert), JSON.stringify(insert));
    assert.deepEqual(Object.keys(insert.arguments.data as object), ['customer_id', 'total_cents'], 'a new row gets every column but the identity the table assigns');
    assert.equal((insert.arguments.data as Record<string, string>).customer_id, '{{target.id}}', 'a column named after another table takes one of its rows');
    assert.equal((created.pool.params.target as { from: string }).from, '/rows/customers');
    const forCustomers = context(customers);
    const flag = fillArguments({ name: 'create_record', inputSchema: { type: 'object', required: ['table', 'data'], properties: { table: { type: 'string' }, data: columnMap } } }, forCustomers);
    assert.ok(!('problem' in flag));
    const data = flag.arguments.data as Record<string, string>;
    assert.deepEqual(forCustomers.pool.params[data.deleted!.replace(/[{}]/g, '')], { choice: [0, 1] }, 'a column of a few values takes one the table already has');
    assert.ok('choice' in forCustomers.pool.params[data.city!.replace(/[{}]/g, '')]!, 'a column of free text takes a fresh value');
    assert.ok(flag.mentions.some((mention) => mention.property === 'deleted' && mention.text === data.deleted), 'every value is stated');
    const noTable = fillArguments({ name: 'delete_records', inputSchema: { type: 'object', required: ['table', 'conditions'], properties: { table: { type: 'string' }, conditions: columnMap } } }, { random, pool: new ParameterPool(random), collections: database });
    assert.match('problem' in noTable ? noTable.problem : '', /names a table/);
  });
});
