// Owns the `sqlite` probe part: a database file of the sandbox read back as
// JSON through the `sqlite3` module (the native module mcp-sqlite brings, so
// nothing new is installed): its schema as sqlite_master keeps it, and every
// table's columns and rows in rowid order. Blobs show as their sha256, so a
// snapshot stays text. The file is opened read-only: probing never creates it.

import { sha256Hex } from '../../../core/hashing.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { openSqlite, sqliteAll, sqliteClose, type SqliteDatabase } from '../sqlite-database.js';

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
    return await sqliteAll(db, `SELECT * FROM ${quoted(table)} ORDER BY rowid`);
  } catch {
    return sqliteAll(db, `SELECT * FROM ${quoted(table)}`);
  }
}

/** The database at `path`: {schema, tables}. Throws when the file is not a database. */
export async function probeSqliteFile(path: string): Promise<JsonObject> {
  const db = await openSqlite(path, 'read', 'a sqlite probe part');
  try {
    const objects = await sqliteAll(db, "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name");
    const schema: JsonObject[] = objects.map((object) => ({ type: String(object.type), name: String(object.name), sql: (object.sql as string | null) ?? null }));
    const tables: JsonObject = {};
    for (const object of schema.filter((entry) => entry.type === 'table')) {
      const name = object.name as string;
      const columns = (await sqliteAll(db, `PRAGMA table_info(${quoted(name)})`)).map((column) => String(column.name));
      const rows = (await tableRows(db, name)).map((row) => Object.fromEntries(columns.map((column) => [column, cell(row[column])])) as JsonObject);
      tables[name] = { columns, rows };
    }
    return { schema, tables };
  } finally {
    await sqliteClose(db);
  }
}
