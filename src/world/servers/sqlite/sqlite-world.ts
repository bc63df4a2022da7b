// Owns the code of the server world of mcp-sqlite that its definition
// (worlds/sqlite-server.json: launch on the database inside the sandbox,
// catalog, normalisations of the database path and db_info's Date string,
// the sql-no-other-files guard of sql-containment.ts, since the server does
// not contain itself) cannot say as data: the seeded generator that writes
// one SQLite database of a small online store (customers, leads, products,
// orders, order lines) with planted traps (two active customers of the same
// name, a soft-deleted older row behind a returning customer, leads who are
// not customers yet, product sizes of which one is out of stock), whose
// constrained draws no data seed replays byte for byte; and the state probe
// that reads the database back as logical content (every object's SQL, every
// table's rows in rowid order, rows keyed by primary key, and derived views
// of customers, orders and products) at the snapshot's top level.
//
// The generator and the probe use the `sqlite3` module in the factory
// process (../sqlite-database.ts), resolved from mcp-sqlite's own directory so it is the very binary
// the server runs (SQLite 3.44.2 here), loaded only when this world is used:
// a missing or unbuilt optional dependency then fails this world alone, with
// the install line as the fix. Going through the child instead would cost a
// ~0.2 s spawn for every populate and probe (three per
// episode, plus one per seed of every phrasing check), and would read the
// rows back through the server's JSON rendering rather than SQLite's own
// values; the native module is already required by the server we pin, so
// nothing new is installed.

import { join } from 'node:path';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { capitalise } from '../../../core/letter-case.js';
import { PACKAGE_ROOT } from '../../../core/package-paths.js';
import type { Random } from '../../../core/random.js';
import { FIRST_NAMES, LAST_NAMES } from '../../people-vocabulary.js';
import type { ServerWorld } from '../../server-world.js';
import { loadDefinition } from '../definition/definition-loader.js';
import { serverWorldFromDefinition } from '../definition/defined-server-world.js';
import type { PopulateArguments } from '../definition/escape-hatch.js';
import { openSqlite, sqliteAll, sqliteClose, sqliteExec, sqliteRun, type SqliteDatabase } from '../sqlite-database.js';

/** The database, as the definition's launch line names it. */
const DB_FILE = 'db.sqlite';

// ---------------------------------------------------------------------------
// The seeded generator.

/** The store's schema, in creation order; sqlite_master keeps each text as written. */
export const STORE_SCHEMA: readonly string[] = [
  `CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  city TEXT NOT NULL,
  deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1))
)`,
  `CREATE TABLE leads (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  city TEXT NOT NULL,
  source TEXT NOT NULL,
  converted INTEGER NOT NULL DEFAULT 0 CHECK (converted IN (0, 1))
)`,
  `CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  category TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents > 0),
  stock INTEGER NOT NULL CHECK (stock >= 0)
)`,
  `CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  code TEXT UNIQUE,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  status TEXT NOT NULL CHECK (status IN ('pending', 'shipped', 'cancelled')),
  placed_on TEXT NOT NULL,
  tracking TEXT
)`,
  // New orders get their code from the database, so no one has to invent one.
  `CREATE TRIGGER orders_assign_code AFTER INSERT ON orders WHEN NEW.code IS NULL
BEGIN
  UPDATE orders SET code = 'SO-' || (10000 + NEW.id) WHERE id = NEW.id;
END`,
  `CREATE TABLE order_items (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  product_id INTEGER NOT NULL REFERENCES products(id),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  unit_price_cents INTEGER NOT NULL
)`,
];

const CITIES = ['Leeds', 'Porto', 'Lyon', 'Graz', 'Turku', 'Ghent', 'Bergen', 'Cork', 'Brno', 'Malmo'] as const;
/** Domains of customers' and leads' addresses; the lane's new addresses use other ones. */
const DOMAINS = ['mail.example', 'post.example', 'inbox.example'] as const;
/** Where the soft-deleted rows' old addresses were. */
const OLD_DOMAIN = 'oldmail.example';
const LEAD_SOURCES = ['trade fair', 'newsletter', 'referral', 'webinar'] as const;

interface Family {
  name: string;
  prefix: string;
  category: string;
  sizes: readonly [string, string];
  price: number;
}

const FAMILIES: readonly Family[] = [
  { name: 'Trail Mug', prefix: 'MUG', category: 'kitchen', sizes: ['12 oz', '16 oz'], price: 1200 },
  { name: 'Desk Lamp', prefix: 'LMP', category: 'office', sizes: ['small', 'large'], price: 3400 },
  { name: 'Canvas Tote', prefix: 'TOT', category: 'bags', sizes: ['small', 'large'], price: 1800 },
  { name: 'Notebook', prefix: 'NBK', category: 'office', sizes: ['A5', 'A4'], price: 900 },
  { name: 'Water Bottle', prefix: 'BTL', category: 'kitchen', sizes: ['500 ml', '750 ml'], price: 1500 },
  { name: 'Wool Beanie', prefix: 'BNE', category: 'apparel', sizes: ['child', 'adult'], price: 2200 },
  { name: 'Travel Pillow', prefix: 'PLW', category: 'travel', sizes: ['standard', 'XL'], price: 2600 },
  { name: 'Phone Stand', prefix: 'STD', category: 'office', sizes: ['mini', 'max'], price: 1400 },
  { name: 'Tea Tin', prefix: 'TEA', category: 'kitchen', sizes: ['50 g', '100 g'], price: 800 },
  { name: 'Rain Poncho', prefix: 'PON', category: 'apparel', sizes: ['M', 'L'], price: 2900 },
];

const STATUS_WEIGHTS = { pending: 35, shipped: 45, cancelled: 20 } as const;

interface Customer { id: number; name: string; email: string; city: string; deleted: 0 | 1 }
interface Lead { id: number; name: string; email: string; city: string; source: string; converted: 0 | 1 }
interface Product { id: number; sku: string; name: string; category: string; price_cents: number; stock: number }
/** Inserted without a code: the trigger gives it one, as it does to an order an episode adds. */
interface Order { id: number; customer_id: number; status: string; placed_on: string; tracking: string | null }
interface OrderItem { id: number; order_id: number; product_id: number; quantity: number; unit_price_cents: number }

export interface StoreRows {
  customers: Customer[];
  leads: Lead[];
  products: Product[];
  orders: Order[];
  order_items: OrderItem[];
}

function date(random: Random): string {
  const month = random.int(1, 11);
  const day = random.int(1, 28);
  return `2026-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Every row of one store, drawn from `random` alone; ids are the rows' positions. */
export function drawStore(random: Random): StoreRows {
  // People: distinct names, 9 regular customers, 1 name shared by two active
  // customers, 2 returning customers (an older soft-deleted row, then the
  // active one) and 3 leads who are not customers yet.
  const names: Array<{ first: string; last: string }> = [];
  const taken = new Set<string>();
  while (names.length < 15) {
    const first = random.pick(FIRST_NAMES);
    const last = random.pick(LAST_NAMES);
    if (taken.has(`${first} ${last}`)) continue;
    taken.add(`${first} ${last}`);
    names.push({ first, last });
  }
  const fullName = (person: { first: string; last: string }) => `${capitalise(person.first)} ${capitalise(person.last)}`;
  const emails = new Set<string>();
  const email = (local: string, domain: string) => {
    let candidate = `${local}@${domain}`;
    for (let suffix = 2; emails.has(candidate); suffix++) candidate = `${local}${suffix}@${domain}`;
    emails.add(candidate);
    return candidate;
  };
  const regular = names.slice(0, 9);
  const twin = names[9]!;
  const returning = names.slice(10, 12);
  const prospects = names.slice(12, 15);
  // Slots in row order: a shuffled list of who each customer row belongs to.
  type Role = 'regular' | 'twin' | 'returning';
  const slots = random.shuffle<{ person: { first: string; last: string }; role: Role }>([
    ...regular.map((person) => ({ person, role: 'regular' as const })),
    { person: twin, role: 'twin' },
    { person: twin, role: 'twin' },
    ...returning.flatMap((person) => [{ person, role: 'returning' as const }, { person, role: 'returning' as const }]),
  ]);
  const seen = new Map<string, number>();
  const customers: Customer[] = slots.map((slot, index): Customer => {
    const key = fullName(slot.person);
    const occurrence = seen.get(key) ?? 0;
    seen.set(key, occurrence + 1);
    const { first, last } = slot.person;
    const city = random.pick(CITIES);
    if (slot.role === 'returning' && occurrence === 0) {
      return { id: index + 1, name: key, email: email(`${first}.${last}`, OLD_DOMAIN), city, deleted: 1 };
    }
    const local = slot.role === 'twin' && occurrence === 1 ? `${first[0]}${last}` : `${first}.${last}`;
    return { id: index + 1, name: key, email: email(local, random.pick(DOMAINS)), city, deleted: 0 };
  });

  // Leads: the three prospects and one who already became a customer.
  const converted = customers.find((row) => row.deleted === 0 && regular.some((person) => fullName(person) === row.name))!;
  const leads: Lead[] = random
    .shuffle<Omit<Lead, 'id'>>([
      ...prospects.map((person) => ({ name: fullName(person), email: email(`${person.first}.${person.last}`, random.pick(DOMAINS)), city: random.pick(CITIES), source: random.pick(LEAD_SOURCES), converted: 0 as const })),
      { name: converted.name, email: converted.email, city: converted.city, source: random.pick(LEAD_SOURCES), converted: 1 as const },
    ])
    .map((row, index) => ({ id: index + 1, ...row }));

  // Products: two sizes of six families; in two families the second size is
  // out of stock while the first is not, and every other stock is at least 3.
  const families = random.sample(FAMILIES, 6);
  const soldOut = new Set(random.sample(families, 2).map((family) => family.name));
  const skus = new Set<string>();
  const products: Product[] = families.flatMap((family) =>
    family.sizes.map((size, position): Omit<Product, 'id'> => {
      let sku: string;
      do sku = `${family.prefix}-${random.hex(4).toUpperCase()}`;
      while (skus.has(sku));
      skus.add(sku);
      const price = family.price + position * 400 + random.int(0, 6) * 50;
      const stock = soldOut.has(family.name) && position === 1 ? 0 : random.int(soldOut.has(family.name) ? 5 : 3, 40);
      return { sku, name: `${family.name}, ${size}`, category: family.category, price_cents: price, stock };
    }),
  ).map((row, index) => ({ id: index + 1, ...row }));

  // Orders: zero to two per active customer, one of history per soft-deleted
  // row; the later of the two namesakes has a pending and a shipped order,
  // the earlier one a pending order. Ids follow the order date.
  const drafts: Array<{ customer_id: number; status: string; placed_on: string }> = [];
  const namesakes = customers.filter((row) => row.name === fullName(twin)).map((row) => row.id);
  for (const customer of customers) {
    const id = customer.id;
    let statuses: string[];
    if (id === namesakes[1]) statuses = ['pending', 'shipped'];
    else if (id === namesakes[0]) statuses = ['pending'];
    else if (customer.deleted === 1) statuses = [random.pick(['shipped', 'cancelled'])];
    else statuses = Array.from({ length: random.int(0, 2) }, () => random.weighted(STATUS_WEIGHTS));
    for (const status of statuses) drafts.push({ customer_id: id, status, placed_on: date(random) });
  }
  const dated = drafts.map((draft, index) => ({ draft, index })).sort((a, b) => (a.draft.placed_on < b.draft.placed_on ? -1 : a.draft.placed_on > b.draft.placed_on ? 1 : a.index - b.index));
  const orders: Order[] = dated.map(({ draft }, index) => ({
    id: index + 1,
    customer_id: draft.customer_id,
    status: draft.status,
    placed_on: draft.placed_on,
    tracking: draft.status === 'shipped' ? `TRK${random.hex(8).toUpperCase()}` : null,
  }));
  const order_items: OrderItem[] = [];
  for (const order of orders) {
    for (const product of random.sample(products, random.int(1, 3))) {
      order_items.push({ id: order_items.length + 1, order_id: order.id, product_id: product.id, quantity: random.int(1, 3), unit_price_cents: product.price_cents });
    }
  }
  return { customers, leads, products, orders, order_items };
}

async function writeStore(path: string, rows: StoreRows): Promise<void> {
  const db = await openSqlite(path, 'create', 'the sqlite-server world\'s generator');
  try {
    // Pinned, so the file's size (which db_info prints) cannot follow the device.
    await sqliteExec(db, 'PRAGMA page_size = 4096');
    await sqliteExec(db, 'BEGIN');
    for (const statement of STORE_SCHEMA) await sqliteExec(db, statement);
    for (const table of ['customers', 'leads', 'products', 'orders', 'order_items'] as const) {
      for (const row of rows[table] as ReadonlyArray<object>) {
        const entries = Object.entries(row);
        await sqliteRun(db, `INSERT INTO ${table} (${entries.map(([column]) => column).join(', ')}) VALUES (${entries.map(() => '?').join(', ')})`, entries.map(([, value]) => value));
      }
    }
    await sqliteExec(db, 'COMMIT');
  } finally {
    await sqliteClose(db);
  }
}

// ---------------------------------------------------------------------------
// The state probe.

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** One SQLite value as JSON: blobs as hex, non-finite reals as text. */
function cell(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return { blob_hex: Buffer.from(value).toString('hex') };
  return String(value);
}

interface TableProbe {
  name: string;
  sql: string | null;
  columns: JsonObject[];
  rows: JsonObject[];
  row_count: number;
  /** The id SQLite gives the next row inserted without one (max rowid + 1), for predicates on rows an episode adds. */
  next_rowid: number | null;
}

async function probeTable(db: SqliteDatabase, name: string, sql: string | null): Promise<{ table: TableProbe; keyed: Record<string, JsonObject> }> {
  const quoted = quoteIdentifier(name);
  const info = await sqliteAll(db, `PRAGMA table_info(${quoted})`);
  const columns = info.map((column) => ({ name: cell(column.name), type: cell(column.type), notnull: cell(column.notnull), default: cell(column.dflt_value), pk: cell(column.pk) }));
  let rows: Record<string, unknown>[];
  let nextRowid: number | null = null;
  try {
    rows = await sqliteAll(db, `SELECT * FROM ${quoted} ORDER BY rowid`);
    const [max] = await sqliteAll(db, `SELECT max(rowid) AS max FROM ${quoted}`);
    nextRowid = typeof max?.max === 'number' ? max.max + 1 : 1;
  } catch {
    // A WITHOUT ROWID table (or a view-like virtual table): every column, in order.
    rows = await sqliteAll(db, `SELECT * FROM ${quoted} ORDER BY ${columns.map((_, index) => index + 1).join(', ') || '1'}`);
  }
  const json = rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, cell(value)])) as JsonObject);
  // Keyed by the single-column primary key when there is one whose values make clean keys, else by position from 1.
  const keys = columns.filter((column) => column.pk !== 0 && column.pk !== null);
  const pk = keys.length === 1 ? String(keys[0]!.name) : undefined;
  const byPk = pk !== undefined ? json.map((row) => (row[pk] === null || row[pk] === undefined ? undefined : String(row[pk]))) : [];
  const clean = pk !== undefined && byPk.every((key) => key !== undefined && key !== '' && !/[/~]/.test(key)) && new Set(byPk).size === byPk.length;
  const keyed: Record<string, JsonObject> = {};
  json.forEach((row, index) => (keyed[clean ? byPk[index]! : String(index + 1)] = row));
  return { table: { name, sql, columns, rows: json, row_count: json.length, next_rowid: nextRowid }, keyed };
}

const num = (value: JsonValue | undefined): number => (typeof value === 'number' ? value : 0);

/** Views of the store that make task parameters and predicates easy; built from the rows alone, and as far as the tables still allow. */
function storeViews(keyed: Record<string, Record<string, JsonObject>>): JsonObject {
  const customers = Object.values(keyed.customers ?? {});
  const orders = Object.values(keyed.orders ?? {});
  const items = Object.values(keyed.order_items ?? {});
  const products = keyed.products ?? {};
  const customerById = keyed.customers ?? {};
  const family = (name: JsonValue | undefined) => (typeof name === 'string' ? name.split(', ')[0]! : null);

  const productView: Record<string, JsonObject> = {};
  for (const [key, row] of Object.entries(products)) {
    const codes = items.filter((item) => item.product_id === row.id).map((item) => orders.find((order) => order.id === item.order_id)?.code ?? null);
    productView[key] = { ...row, family: family(row.name), order_codes: [...new Set(codes)] };
  }

  const orderView: Record<string, JsonObject> = {};
  for (const order of orders) {
    const customer = customerById[String(order.customer_id)];
    const lines = items
      .filter((item) => item.order_id === order.id)
      .map((item) => ({ sku: products[String(item.product_id)]?.sku ?? null, quantity: item.quantity ?? null, unit_price_cents: item.unit_price_cents ?? null }));
    const totalCents = lines.reduce((sum, line) => sum + num(line.quantity) * num(line.unit_price_cents), 0);
    const others = orders.filter((other) => other.id !== order.id && other.customer_id === order.customer_id);
    orderView[String(order.id)] = {
      ...order,
      customer_email: customer?.email ?? null,
      customer_name: customer?.name ?? null,
      lines,
      line_skus: lines.map((line) => line.sku),
      line_count: lines.length,
      total_cents: totalCents,
      total: (totalCents / 100).toFixed(2),
      customer_other_open: others.filter((other) => other.status !== 'cancelled').length,
    };
  }

  const customerView: Record<string, JsonObject> = {};
  for (const customer of customers) {
    const namesakes = customers.filter((other) => other.id !== customer.id && other.name === customer.name);
    const own = orders.filter((order) => order.customer_id === customer.id);
    customerView[String(customer.id)] = {
      ...customer,
      login: typeof customer.name === 'string' ? customer.name.toLowerCase().split(/\s+/).join('.') : null,
      same_name_count: namesakes.length,
      same_name_active_before: namesakes.filter((other) => other.deleted === 0 && num(other.id) < num(customer.id)).length,
      same_name_deleted: namesakes.filter((other) => other.deleted === 1).length,
      order_codes: own.map((order) => order.code ?? null),
      pending_codes: own.filter((order) => order.status === 'pending').map((order) => order.code ?? null),
    };
  }
  return { customer_view: customerView, order_view: orderView, product_view: productView };
}

/**
 * The state probe: every schema object's SQL (sorted by type and name), every
 * user table's columns and rows in rowid order, the rows keyed by primary key
 * (`/rows/<table>/<id>`), and the derived views. Logical content, not the
 * file's bytes.
 */
export async function probeSqliteSandbox(sandbox: { root: string }): Promise<JsonObject> {
  const db = await openSqlite(join(sandbox.root, DB_FILE), 'write', 'the sqlite-server world\'s probe');
  try {
    const objects = await sqliteAll(db, "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");
    const tables: Record<string, JsonObject> = {};
    const keyed: Record<string, Record<string, JsonObject>> = {};
    for (const object of objects.filter((entry) => entry.type === 'table')) {
      const name = String(object.name);
      const probed = await probeTable(db, name, typeof object.sql === 'string' ? object.sql : null);
      tables[name] = probed.table as unknown as JsonObject;
      keyed[name] = probed.keyed;
    }
    return {
      schema: objects.map((object) => ({ type: cell(object.type), name: cell(object.name), table: cell(object.tbl_name), sql: cell(object.sql) })),
      tables,
      rows: keyed,
      ...storeViews(keyed),
    };
  } finally {
    await sqliteClose(db);
  }
}

/** The seed (escape hatch): the drawn store, written into a new database. */
export async function populate({ random, root }: PopulateArguments): Promise<void> {
  await writeStore(join(root, DB_FILE), drawStore(random));
}

/** The state probe (escape hatch): the database's logical content and views, at the snapshot's top level. */
export function views({ root }: { root: string }): Promise<JsonObject> {
  return probeSqliteSandbox({ root });
}

export const sqliteServerWorld: ServerWorld = serverWorldFromDefinition(loadDefinition(join(PACKAGE_ROOT, 'worlds', 'sqlite-server.json')), { populate, views });
