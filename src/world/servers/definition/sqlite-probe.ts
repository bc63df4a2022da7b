// Owns the `sqlite` probe part: a database file of the sandbox read back as
// JSON through the `sqlite3` module (the native module mcp-sqlite brings, so
// nothing new is installed): its schema as sqlite_master keeps it, and every
// table's columns and rows in rowid order. Blobs show as their sha256, so a
// snapshot stays text. The file is opened read-only: probing never creates it.

import { createRequire } from 'node:module';
import { FactoryError, errorMessage } from '../../../core/errors.js';
import { sha256Hex } from '../../../core/hashing.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';

interface SqliteDatabase {
  all(sql: string, params: readonly unknown[], callback: (error: Error | null, rows: Record<string, unknown>[]) => void): void;
  close(callback: (error: Error | null) => void): void;
}

interface SqliteModule {
  Database: new (path: string, mode: number, callback: (error: Error | null) => void) => SqliteDatabase;
  OPEN_READONLY: number;
}

let loaded: SqliteModule | undefined;

function sqlite3(): SqliteModule {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)('sqlite3') as SqliteModule;
  } catch (error) {
    throw new FactoryError('server_package', `the sqlite3 module (a sqlite probe part reads through it) does not load: ${errorMessage(error)}`, {
      fix: 'npm install --save-exact mcp-sqlite@1.0.9 (it brings sqlite3; building it needs python3, make and a C++ compiler)',
      cause: error,
    });
  }
  return loaded;
}

function all(db: SqliteDatabase, sql: string): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => db.all(sql, [], (error, rows) => (error ? reject(error) : resolve(rows))));
}

function quoted(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

function cell(value: unknown): JsonValue {
  if (Buffer.isBuffer(value)) return { blob_sha256: sha256Hex(value) };
  if (typeof value === 'bigint') return value.toString();
  return value as JsonValue;
}

/** Rows in rowid order; a WITHOUT ROWID table has none, so its rows go in primary-key order. */
async function tableRows(db: SqliteDatabase, table: string): Promise<Record<string, unknown>[]> {
  try {
    return await all(db, `SELECT * FROM ${quoted(table)} ORDER BY rowid`);
  } catch {
    return all(db, `SELECT * FROM ${quoted(table)}`);
  }
}

/** The database at `path`: {schema, tables}. Throws when the file is not a database. */
export async function probeSqliteFile(path: string): Promise<JsonObject> {
  const module = sqlite3();
  const db = await new Promise<SqliteDatabase>((resolve, reject) => {
    const opened = new module.Database(path, module.OPEN_READONLY, (error) => (error ? reject(error) : resolve(opened)));
  });
  try {
    const objects = await all(db, "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name");
    const schema: JsonObject[] = objects.map((object) => ({ type: String(object.type), name: String(object.name), sql: (object.sql as string | null) ?? null }));
    const tables: JsonObject = {};
    for (const object of schema.filter((entry) => entry.type === 'table')) {
      const name = object.name as string;
      const columns = (await all(db, `PRAGMA table_info(${quoted(name)})`)).map((column) => String(column.name));
      const rows = (await tableRows(db, name)).map((row) => Object.fromEntries(columns.map((column) => [column, cell(row[column])])) as JsonObject);
      tables[name] = { columns, rows };
    }
    return { schema, tables };
  } finally {
    await new Promise<void>((resolve, reject) => db.close((error) => (error ? reject(error) : resolve())));
  }
}
