// Owns the containment guard of the SQLite server world. mcp-sqlite runs any
// SQL its `query` tool is given, and SQLite itself can open or write files
// other than the database: ATTACH creates a database file at any path, VACUUM
// INTO writes a copy anywhere, load_extension loads native code, and the
// deprecated temp_store_directory / data_store_directory pragmas point it at
// other directories (docs/server-worlds.md, "Normalisations and guards", measured: ATTACH made
// a file outside the sandbox). The guard refuses such SQL before it reaches
// the child. Keywords are looked for where SQLite would read them as keywords
// (comments, string literals and quoted identifiers blanked first, so
// `AT/**/TACH` is two words to both of us and a customer note saying "attach"
// is not refused); function and pragma names are looked for anywhere, since
// SQLite accepts them quoted.

import type { JsonObject } from '../../../core/json-value.js';
import type { ArgumentGuard } from '../guarding-transport.js';

export const SQL_GUARD_ID = 'sql-no-other-files';

/**
 * The SQL with every comment, string literal and quoted identifier replaced
 * by one space: what is left are the words SQLite reads as keywords, names
 * and operators. An unterminated comment or quote runs to the end, as in
 * SQLite (which then refuses an unterminated quote as a syntax error).
 */
export function sqlOutsideQuotes(sql: string): string {
  let out = '';
  let at = 0;
  const closing: Record<string, string> = { "'": "'", '"': '"', '`': '`', '[': ']' };
  while (at < sql.length) {
    const char = sql[at]!;
    if (char === '-' && sql[at + 1] === '-') {
      const end = sql.indexOf('\n', at + 2);
      at = end === -1 ? sql.length : end + 1;
      out += ' ';
    } else if (char === '/' && sql[at + 1] === '*') {
      const end = sql.indexOf('*/', at + 2);
      at = end === -1 ? sql.length : end + 2;
      out += ' ';
    } else if (char in closing) {
      const close = closing[char]!;
      let end = at + 1;
      for (;;) {
        end = sql.indexOf(close, end);
        if (end === -1) {
          end = sql.length;
          break;
        }
        // A doubled quote is an escaped one (not so for brackets).
        if (close !== ']' && sql[end + 1] === close) {
          end += 2;
          continue;
        }
        end += 1;
        break;
      }
      at = end;
      out += ' ';
    } else {
      out += char;
      at++;
    }
  }
  return out;
}

const KEYWORD_RULES: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'ATTACH', pattern: /\bATTACH\b/i },
  { name: 'DETACH', pattern: /\bDETACH\b/i },
  // VACUUM [schema] INTO 'file', within one statement.
  { name: 'VACUUM INTO', pattern: /\bVACUUM\b[^;]*\bINTO\b/i },
];

const ANYWHERE_RULES: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'load_extension', pattern: /load_extension/i },
  { name: 'temp_store_directory', pattern: /temp_store_directory/i },
  { name: 'data_store_directory', pattern: /data_store_directory/i },
];

/** What in `sql` would reach outside the database file, by name; empty when nothing does. */
export function sqlEscapes(sql: string): string[] {
  const words = sqlOutsideQuotes(sql);
  return [
    ...KEYWORD_RULES.filter((rule) => rule.pattern.test(words)).map((rule) => rule.name),
    ...ANYWHERE_RULES.filter((rule) => rule.pattern.test(sql)).map((rule) => rule.name),
  ];
}

export const sqlContainmentGuard: ArgumentGuard = {
  id: SQL_GUARD_ID,
  describe:
    'query calls whose SQL uses ATTACH, DETACH, VACUUM INTO, load_extension or the temp_store_directory/data_store_directory pragmas are refused with an isError result and never reach the server: they open or write files outside the sandbox',
  check(tool: string, args: JsonObject): string | undefined {
    if (tool !== 'query' || typeof args.sql !== 'string') return undefined;
    const found = sqlEscapes(args.sql);
    if (found.length === 0) return undefined;
    return (
      `Error: refused by the sandbox rule ${SQL_GUARD_ID}: this database does not run SQL that opens or writes other files ` +
      `(ATTACH, DETACH, VACUUM INTO, load_extension, the *_directory pragmas). The statement uses ${found.join(', ')}. Work in the one database instead.`
    );
  },
};
