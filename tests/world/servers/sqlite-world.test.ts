// The SQLite server world: the real mcp-sqlite on a seeded store database,
// through the declared normalisations, gives byte-identical results and
// snapshots on two fresh sandboxes from the same seed and a different
// database from another seed; its pinned catalog is what the live server
// lists; SQL that would open or write files outside the sandbox is refused by
// the guard before it reaches the server, and nothing appears outside; the
// child's process group and the sandbox are gone after dispose.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../../src/core/canonical-json.js';
import { substream } from '../../../src/core/random.js';
import { groupAlive } from '../../../src/world/servers/child-transport.js';
import { sqlEscapes, sqlOutsideQuotes } from '../../../src/world/servers/sqlite/sql-containment.js';
import { sqliteServerWorld } from '../../../src/world/servers/sqlite/sqlite-world.js';
import { openWorldSession, type WorldSession } from '../../../src/world/world-session.js';
import { liveAndPinnedCatalog, PINNED, sessionCalls, type Call } from './server-world-harness.js';


/** A session whose child's pid is known (from the session's own start-up event). */
async function open(seed: number): Promise<{ session: WorldSession; pids: number[] }> {
  const pids: number[] = [];
  const session = await openWorldSession(sqliteServerWorld, substream(seed, 'world'), {}, {
    pinnedDate: PINNED,
    onEvent: (event, data) => {
      if (event === 'server_started' && typeof data.pid === 'number') pids.push(data.pid);
    },
  });
  return { session, pids };
}

const text = (result: CallToolResult) => (result.content as Array<{ text: string }>).map((block) => block.text).join('\n');

/** One episode's worth of calls on a fresh sandbox from `seed`; everything it returns is what a record would hold. */
function episode(seed: number) {
  return sessionCalls(sqliteServerWorld, seed, (initial) => {
    const customer = Object.values(initial.customer_view as Record<string, any>).find((row) => row.deleted === 0)!;
    const calls: Call[] = [
      ['db_info', {}],
      ['list_tables', {}],
      ['get_table_schema', { tableName: 'orders' }],
      ['read_records', { table: 'customers', conditions: { email: customer.email } }],
      ['create_record', { table: 'orders', data: { customer_id: customer.id, status: 'pending', placed_on: '2026-12-02' } }],
      ['query', { sql: 'SELECT code, status FROM orders WHERE customer_id = ? ORDER BY id', values: [customer.id] }],
      ['update_records', { table: 'products', data: { stock: 41 }, conditions: { id: 1 } }],
      ['create_record', { table: 'orders', data: { customer_id: customer.id, status: 'lost', placed_on: '2026-12-02' } }],
      ['read_records', { table: 'nope' }],
      ['read_records', { table: 'orders', limit: 'five' }],
      ['delete_records', { table: 'leads', conditions: { converted: 1 } }],
      ['db_info', {}],
    ];
    return { calls, customer };
  });
}

describe('sql containment guard', () => {
  it('blanks comments, string literals and quoted identifiers, and nothing else', () => {
    assert.equal(sqlOutsideQuotes("SELECT 'it''s attach' AS \"attach\" -- attach\nFROM [attach] /* attach */ WHERE `a``b` = 1"), 'SELECT   AS    FROM     WHERE   = 1');
  });

  it('finds ATTACH, DETACH, VACUUM INTO, load_extension and the directory pragmas however they are written', () => {
    const refused: Array<[string, string]> = [
      ["ATTACH DATABASE '/tmp/x.db' AS x", 'ATTACH'],
      ["attach '/tmp/x.db' as x", 'ATTACH'],
      ["/* hello */\n\tAtTaCh\n'x.db' AS x", 'ATTACH'],
      ['-- note\nattach ? as x', 'ATTACH'],
      ['SELECT 1;ATTACH \'x\' AS y', 'ATTACH'],
      ['DETACH x', 'DETACH'],
      ["VACUUM INTO '/tmp/copy.db'", 'VACUUM INTO'],
      ["vacuum main into '../copy.db'", 'VACUUM INTO'],
      ["VACUUM/**/\"main\"/**/INTO/**/'x'", 'VACUUM INTO'],
      ["SELECT load_extension('/tmp/evil.so')", 'load_extension'],
      ["SELECT \"LOAD_EXTENSION\"('x')", 'load_extension'],
      ["PRAGMA temp_store_directory = '/tmp'", 'temp_store_directory'],
      ["PRAGMA \"data_store_directory\" = '/tmp'", 'data_store_directory'],
    ];
    for (const [sql, rule] of refused) assert.ok(sqlEscapes(sql).includes(rule), `${JSON.stringify(sql)} should be refused for ${rule}`);
    const allowed = [
      "SELECT * FROM customers WHERE city = 'Attach'",
      "UPDATE orders SET tracking = 'vacuum into bag' WHERE id = 1",
      'SELECT attachment, detached_at FROM "attach"',
      'VACUUM',
      "VACUUM; INSERT INTO t VALUES ('x')",
      'SELECT * FROM orders -- attach later',
    ];
    for (const sql of allowed) assert.deepEqual(sqlEscapes(sql), [], JSON.stringify(sql));
  });
});

describe('sqlite server world', () => {
  it('lists exactly the pinned catalog the adapter declares', async () => {
    const { listed, pinned, serverInfo } = await liveAndPinnedCatalog(sqliteServerWorld, new URL('../../../worlds/sqlite-server.catalog.json', import.meta.url));
    assert.deepEqual(serverInfo, { name: 'mcp-sqlite-server', version: '1.0.0' });
    assert.equal(canonicalJson(listed as never), canonicalJson(pinned as never));
    assert.deepEqual(sqliteServerWorld.tools.map((tool) => tool.name), listed.map((tool) => tool.name));
  });

  it('gives byte-identical normalised results and snapshots for the same seed on two fresh sandboxes', async () => {
    const a = await episode(5);
    const b = await episode(5);
    assert.equal(canonicalJson(a.initial), canonicalJson(b.initial));
    assert.equal(canonicalJson(a.results as never), canonicalJson(b.results as never));
    assert.equal(canonicalJson(a.final), canonicalJson(b.final));
    const all = canonicalJson(a.results as never);
    assert.ok(!all.includes('episode-factory-sqlite-server-'), 'no real sandbox path reaches a result');
    assert.ok(!all.includes(tmpdir() + '/'), 'no temporary directory reaches a result');
    // db_info: the shown path, the pinned date, and a size that only the writes decide.
    const info = JSON.parse(text(a.results[0]!.result));
    assert.equal(info.dbPath, '/sandbox/db.sqlite');
    assert.equal(info.lastModified, 'Thu Jan 15 2026 12:00:00 GMT+0000 (Coordinated Universal Time)');
    assert.equal(info.tableCount, 5);
    assert.equal(info.size % 4096, 0);
    assert.equal(a.actor.package, 'mcp-sqlite@1.0.9');
    assert.match(String(a.actor.integrity), /^sha512-/);
    assert.equal(a.actor.server_info, 'mcp-sqlite-server 1.0.0');
    assert.deepEqual((a.actor.normalisations as Array<{ id: string }>).map((rule) => rule.id), ['sandbox-path', 'js-date-string']);
    assert.deepEqual((a.actor.guards as Array<{ id: string }>).map((rule) => rule.id), ['sql-no-other-files']);
    // The writes are in the final snapshot: the new order got its code from the trigger.
    const next = a.initial.tables.orders.next_rowid;
    assert.equal(a.final.rows.orders[String(next)].code, `SO-${10000 + next}`);
    assert.equal(a.final.order_view[String(next)].customer_email, a.customer.email);
    assert.equal(a.final.rows.products['1'].stock, 41);
    assert.equal(Object.keys(a.final.rows.leads).length, Object.keys(a.initial.rows.leads).length - 1);
    // Errors are the server's own, as isError results.
    const errors = a.results.filter((entry) => entry.result.isError).map((entry) => text(entry.result));
    assert.deepEqual(errors, [
      'Error creating record: SQLITE_CONSTRAINT: CHECK constraint failed: status IN (\'pending\', \'shipped\', \'cancelled\')',
      'Error reading records: Table "nope" does not exist',
      'MCP error -32602: Input validation error: Invalid arguments for tool read_records: Invalid input: expected number, received string at limit',
    ]);
  });

  it('draws a different database from a different seed', async () => {
    const { session: a } = await open(5);
    const { session: c } = await open(6);
    try {
      assert.notEqual(canonicalJson(a.initialSnapshot), canonicalJson(c.initialSnapshot));
      assert.notEqual(canonicalJson((a.initialSnapshot as any).tables.customers.rows), canonicalJson((c.initialSnapshot as any).tables.customers.rows));
    } finally {
      await a.dispose();
      await c.dispose();
    }
  });

  it('plants the traps its lane relies on, on every seed of the lane', async () => {
    for (let seed = 0; seed < 8; seed++) {
      const { session } = await open(seed);
      const snapshot = session.initialSnapshot as any;
      await session.dispose();
      const customers = Object.values(snapshot.customer_view as Record<string, any>);
      const orders = Object.values(snapshot.order_view as Record<string, any>);
      const products = Object.values(snapshot.product_view as Record<string, any>);
      const later = customers.filter((row) => row.deleted === 0 && row.same_name_active_before === 1);
      assert.equal(later.length, 1, `seed ${seed}: one customer shares an active namesake's name`);
      assert.ok(later[0].pending_codes.length >= 1 && later[0].order_codes.length > later[0].pending_codes.length, `seed ${seed}: the later namesake has pending and other orders`);
      const returning = customers.filter((row) => row.deleted === 0 && row.same_name_deleted === 1);
      assert.equal(returning.length, 2, `seed ${seed}: two returning customers`);
      for (const row of returning) {
        const old = customers.find((other) => other.name === row.name && other.deleted === 1);
        assert.ok(old.id < row.id, `seed ${seed}: the soft-deleted row comes first`);
      }
      const soldOut = products.filter((row) => row.stock === 0);
      assert.equal(soldOut.length, 2, `seed ${seed}: two sizes are sold out`);
      for (const row of soldOut) {
        const sibling = products.find((other) => other.family === row.family && other.id !== row.id);
        assert.ok(sibling.id < row.id && sibling.stock >= 5, `seed ${seed}: the in-stock size of ${row.family} comes first`);
      }
      assert.ok(products.every((row) => row.stock === 0 || row.stock >= 3), `seed ${seed}: stock is 0 or at least 3`);
      assert.equal(Object.values(snapshot.rows.leads).filter((row: any) => row.converted === 0).length, 3, `seed ${seed}: three prospects`);
      assert.ok(orders.some((row) => row.status === 'pending' && row.customer_other_open > 0), `seed ${seed}: a pending order whose customer has another open one`);
      assert.ok(orders.every((row) => row.line_count >= 1 && /^SO-1\d{4}$/.test(row.code)), `seed ${seed}: every order has lines and a code`);
    }
  });

  it('refuses SQL that would reach outside the sandbox, and nothing appears outside it', async () => {
    const { session, pids } = await open(3);
    const marker = `ef-sqlite-escape-${process.pid}-${Date.now()}`;
    const outside = join(tmpdir(), `${marker}.db`);
    try {
      const connection = await session.connect({});
      const root = readlinkSync(`/proc/${pids[0]}/cwd`);
      const base = dirname(root);
      const before = readdirSync(base).sort();
      const attacks = [
        `ATTACH DATABASE '${outside}' AS x`,
        `attach '../${marker}.db' as y`,
        `/* a comment */ Attach\n'${outside}' AS z`,
        `VACUUM INTO '${outside}'`,
        `vacuum main into '../${marker}-copy.db'`,
        `SELECT load_extension('${outside}')`,
        "PRAGMA temp_store_directory = '/tmp'",
        'DETACH x',
      ];
      for (const sql of attacks) {
        const result = (await connection.client.callTool({ name: 'query', arguments: { sql } })) as CallToolResult;
        assert.equal(result.isError, true, sql);
        assert.match(text(result), /^Error: refused by the sandbox rule sql-no-other-files: /, sql);
      }
      // Ordinary SQL still reaches the server, including words that only look like the rules.
      const ordinary = (await connection.client.callTool({ name: 'query', arguments: { sql: "SELECT count(*) AS n FROM customers WHERE city <> 'attach'" } })) as CallToolResult;
      assert.equal(ordinary.isError, undefined);
      assert.ok(JSON.parse(text(ordinary))[0].n > 0);
      await connection.close();
      assert.deepEqual(readdirSync(base).sort(), before, 'nothing new beside the sandbox');
      assert.deepEqual(readdirSync(root).sort(), ['db.sqlite'], 'nothing new in the sandbox');
      assert.deepEqual(readdirSync(tmpdir()).filter((name) => name.startsWith(marker)), [], 'nothing new in the temporary directory');
    } finally {
      await session.dispose();
    }
  });

  it('leaves no process of the child behind, and removes the sandbox', async () => {
    const { session, pids } = await open(9);
    const connection = await session.connect({});
    await connection.client.listTools();
    const pid = pids[0]!;
    const base = dirname(readlinkSync(`/proc/${pid}/cwd`));
    assert.ok(groupAlive(pid), 'the child runs while connected');
    assert.ok(existsSync(join(base, 'sandbox', 'db.sqlite')));
    await session.dispose();
    assert.equal(groupAlive(pid), false);
    assert.equal(existsSync(base), false);
  });
});
