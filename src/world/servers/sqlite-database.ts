// Owns the one way the factory opens a SQLite file itself (a seed that writes
// one, a probe that reads one, the sqlite-server world's generator and probe):
// the sqlite3 native module mcp-sqlite brings, so nothing new is installed,
// loaded once from mcp-sqlite's own directory, with promise forms of the few
// calls they make.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { errorMessage, FactoryError } from '../../core/errors.js';
import type { ServerPackage } from '../server-world.js';
import { installedPackage } from './server-package.js';

/** The package whose sqlite3 is used: the sqlite-server world's (worlds/sqlite-server.json pins the same). */
export const SQLITE_SERVER_PACKAGE: ServerPackage = { name: 'mcp-sqlite', version: '1.0.9', entry: 'mcp-sqlite-server.js' };

export interface SqliteDatabase {
  all(sql: string, params: readonly unknown[], callback: (error: Error | null, rows: Record<string, unknown>[]) => void): void;
  run(sql: string, params: readonly unknown[], callback: (error: Error | null) => void): void;
  exec(sql: string, callback: (error: Error | null) => void): void;
  close(callback: (error: Error | null) => void): void;
}

interface SqliteModule {
  Database: new (path: string, mode: number, callback: (error: Error | null) => void) => SqliteDatabase;
  OPEN_READONLY: number;
  OPEN_READWRITE: number;
  OPEN_CREATE: number;
}

let loaded: SqliteModule | undefined;

/** mcp-sqlite's sqlite3, or a FactoryError naming what needed it and the install line. */
function sqlite3(purpose: string): SqliteModule {
  if (loaded) return loaded;
  const pinned = SQLITE_SERVER_PACKAGE;
  const found = installedPackage(pinned);
  try {
    loaded = createRequire(join(dirname(found.entry), 'package.json'))('sqlite3') as SqliteModule;
  } catch (error) {
    throw new FactoryError('server_package', `${purpose} needs the sqlite3 native module of ${pinned.name}@${pinned.version}, which does not load: ${errorMessage(error)}`, {
      fix: `npm install --save-exact ${pinned.name}@${pinned.version} (sqlite3 builds from source when no prebuilt binary fits: it needs python3, make, a C++ compiler and Node's headers)`,
      cause: error,
    });
  }
  return loaded;
}

/** `read` never creates the file; `create` makes it when it is missing. */
export function openSqlite(path: string, mode: 'read' | 'write' | 'create', purpose: string): Promise<SqliteDatabase> {
  const module = sqlite3(purpose);
  const flags = mode === 'read' ? module.OPEN_READONLY : module.OPEN_READWRITE | (mode === 'create' ? module.OPEN_CREATE : 0);
  return new Promise((resolve, reject) => {
    const db = new module.Database(path, flags, (error) => (error ? reject(error) : resolve(db)));
  });
}

export function sqliteAll(db: SqliteDatabase, sql: string, params: readonly unknown[] = []): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows))));
}

export function sqliteRun(db: SqliteDatabase, sql: string, params: readonly unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())));
}

export function sqliteExec(db: SqliteDatabase, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())));
}

export function sqliteClose(db: SqliteDatabase): Promise<void> {
  return new Promise((resolve, reject) => db.close((error) => (error ? reject(error) : resolve())));
}
