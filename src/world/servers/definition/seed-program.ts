// Owns running a definition's seed program on a fresh sandbox: the draws
// (seed-draws.ts) bind a scope from the world's random substream, the files
// are rendered from it and written under the root in the order listed, then
// the commands run in order with a pinned environment (fixed author, fixed
// dates, no system or global git config), so one seed always gives the same
// bytes on disk. Nothing is written outside the root: a path that is
// absolute, has `..` or resolves elsewhere is refused, and no symlink is ever
// followed or created on the way to a file. `seed.module` (the escape hatch)
// is run by whoever calls this, not here.

import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { lstat, mkdir, open, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep, win32 } from 'node:path';
import { childEnvironment } from '../../../core/child-environment.js';
import { FactoryError, errorMessage } from '../../../core/errors.js';
import type { Random } from '../../../core/random.js';
import { fileFormat } from '../formats/file-formats.js';
import { openSqlite, sqliteClose, sqliteExec } from '../sqlite-database.js';
import { render, renderValue, type Scope } from './definition-template.js';
import { commandVariables } from './probe-command.js';
import { drawScope, located, namedList } from './seed-draws.js';
import type { CommandDefinition, FileDefinition, SandboxContext, SeedDefinition } from './server-world-definition.js';

const COMMAND_DEADLINE_MS = 30_000;
const STDERR_TAIL = 2000;

export async function runSeedProgram(seed: SeedDefinition, random: Random, context: SandboxContext, where: string): Promise<void> {
  const scope = drawScope(seed, random, where);
  for (const [index, file] of (seed.files ?? []).entries()) await writeFileDefinition(file, scope, context.root, where, `/seed/files/${index}`);
  for (const [index, command] of (seed.commands ?? []).entries()) await runCommand(command, scope, context, where, `/seed/commands/${index}`);
}

function invalid(where: string, pointer: string, message: string, fix: string): FactoryError {
  return new FactoryError('definition_invalid', `${where}: ${pointer}: ${message}`, { fix, problems: [{ where: `${where}#${pointer}`, reason: message }] });
}

// ---------------------------------------------------------------------------
// Files.

const CONTENT_KINDS = ['text', 'json', 'json_lines', 'sqlite', 'encoder'] as const;

async function writeFileDefinition(file: FileDefinition, scope: Scope, root: string, where: string, pointer: string): Promise<void> {
  const kinds = CONTENT_KINDS.filter((kind) => file[kind] !== undefined);
  if (kinds.length !== 1) throw invalid(where, pointer, `gives ${kinds.length === 0 ? 'no content' : kinds.join(' and ')}`, `give exactly one of ${CONTENT_KINDS.join(', ')}`);
  if (file.for_each === undefined) {
    await writeOne(file, scope, root, where, pointer);
    return;
  }
  const list = located(where, `${pointer}/for_each`, () => namedList(file.for_each!, scope, where, `${pointer}/for_each`));
  const name = file.as ?? 'item';
  for (const [index, item] of list.entries()) await writeOne(file, { ...scope, [name]: item, index }, root, where, pointer);
}

async function writeOne(file: FileDefinition, scope: Scope, root: string, where: string, pointer: string): Promise<void> {
  const relative = located(where, `${pointer}/path`, () => render(file.path, scope));
  const target = insideRoot(relative, root, where, `${pointer}/path`);
  await makeParents(root, target, where, pointer);
  if (file.sqlite !== undefined) {
    const sql = located(where, `${pointer}/sqlite`, () => render(file.sqlite!, scope));
    await writeSqlite(target, sql, relative, where, pointer);
    return;
  }
  await writeBytes(target, fileBytes(file, scope, where, pointer), relative, where, pointer);
}

function fileBytes(file: FileDefinition, scope: Scope, where: string, pointer: string): Buffer {
  if (file.text !== undefined) return Buffer.from(located(where, `${pointer}/text`, () => render(file.text!, scope)), 'utf8');
  if (file.json !== undefined) {
    const value = located(where, `${pointer}/json`, () => renderValue(file.json!, scope));
    return Buffer.from(JSON.stringify(value, null, 2) + '\n', 'utf8');
  }
  if (file.json_lines !== undefined) {
    const value = located(where, `${pointer}/json_lines`, () => renderValue(file.json_lines!, scope));
    if (!Array.isArray(value)) throw invalid(where, `${pointer}/json_lines`, 'does not give a list', 'give a list, or a template yielding one, like "{{notes}}"');
    return Buffer.from(value.map((item) => JSON.stringify(item) + '\n').join(''), 'utf8');
  }
  const format = located(where, `${pointer}/encoder`, () => fileFormat(file.encoder!));
  const value = located(where, `${pointer}/value`, () => renderValue(file.value ?? null, scope));
  try {
    return format.encode(value);
  } catch (error) {
    if (error instanceof FactoryError) throw error;
    throw invalid(where, `${pointer}/value`, `the ${file.encoder} encoder refuses it: ${errorMessage(error)}`, `give a value the ${file.encoder} format describes`);
  }
}

/** The absolute path of a rendered relative path, refused unless it lies strictly under the root. */
function insideRoot(relative: string, root: string, where: string, pointer: string): string {
  const fix = 'write a relative path inside the sandbox root, without ".."';
  if (relative.trim() === '') throw invalid(where, pointer, 'renders to an empty path', fix);
  if (isAbsolute(relative) || win32.isAbsolute(relative)) throw invalid(where, pointer, `"${relative}" is absolute`, fix);
  if (relative.split(/[\\/]/).includes('..')) throw invalid(where, pointer, `"${relative}" has ".."`, fix);
  if (relative.includes('\u0000')) throw invalid(where, pointer, `"${relative}" holds a NUL`, fix);
  const target = resolve(root, relative);
  if (!target.startsWith(root.endsWith(sep) ? root : root + sep)) throw invalid(where, pointer, `"${relative}" resolves outside the root`, fix);
  return target;
}

function seedFailed(where: string, pointer: string, message: string, fix: string, cause?: unknown): FactoryError {
  return new FactoryError('seed_failed', `${where}: ${pointer}: ${message}`, { fix, cause });
}

/** Creates each directory between the root and the file, refusing one that is a symlink or not a directory. */
async function makeParents(root: string, target: string, where: string, pointer: string): Promise<void> {
  const parts = dirname(target).slice(root.length).split(sep).filter((part) => part !== '');
  let current = root;
  for (const part of parts) {
    current = join(current, part);
    const found = await lstat(current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (found === undefined) await mkdir(current);
    else if (!found.isDirectory()) {
      throw seedFailed(where, pointer, `"${current.slice(root.length + 1)}" is ${found.isSymbolicLink() ? 'a symlink' : 'not a directory'}: the file would not land where it is listed`, 'list each file under a plain directory, and no file where a directory must be');
    }
  }
}

async function refuseSymlink(target: string, relative: string, where: string, pointer: string): Promise<boolean> {
  const found = await lstat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (found?.isSymbolicLink()) throw seedFailed(where, pointer, `"${relative}" is a symlink; the seed never writes through one`, 'write each file at a path no symlink occupies');
  return found !== undefined;
}

async function writeBytes(target: string, bytes: Buffer, relative: string, where: string, pointer: string): Promise<void> {
  let handle;
  try {
    // O_NOFOLLOW: a symlink at the last component fails the open instead of being written through.
    handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    throw seedFailed(where, pointer, `cannot write "${relative}": ${errorMessage(error)}`, 'write each file at a path no symlink or directory occupies', error);
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
}

// ---------------------------------------------------------------------------
// SQLite files, through the sqlite3 module mcp-sqlite depends on (../sqlite-database.ts).

async function writeSqlite(target: string, sql: string, relative: string, where: string, pointer: string): Promise<void> {
  // A fresh database each time: the file's bytes then depend on the SQL alone.
  if (await refuseSymlink(target, relative, where, pointer)) await unlink(target);
  const db = await openSqlite(target, 'create', 'a seed program that writes a SQLite file');
  try {
    // The page size is fixed so the file's bytes do not follow the build's default.
    await sqliteExec(db, 'PRAGMA page_size = 4096');
    await sqliteExec(db, sql);
  } catch (error) {
    throw invalid(where, `${pointer}/sqlite`, `SQLite refuses the SQL for "${relative}": ${errorMessage(error)}`, 'fix the SQL (string values through the |sql filter)');
  } finally {
    await sqliteClose(db);
  }
}

// ---------------------------------------------------------------------------
// Commands.

/** `YYYY-MM-DDTHH:MM:SSZ`, seconds precision, UTC. */
function isoSeconds(milliseconds: number): string {
  return new Date(milliseconds).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function pinnedMilliseconds(context: SandboxContext, where: string): number {
  const milliseconds = Date.parse(context.pinnedDate);
  if (Number.isNaN(milliseconds)) throw seedFailed(where, '/seed/commands', `the pinned date "${context.pinnedDate}" is not an ISO 8601 date`, "give the lane's produced_at as an ISO 8601 date");
  return milliseconds;
}

const PLACEHOLDER = /(?<!\{)\{(root|home|pinned_epoch|pinned_date)(?:\+([0-9]+))?\}(?!\})/g;
// Placeholders become private-use markers while the template renders, so neither a path nor a drawn value is read as the other.
const MARK_OPEN = '\uE000';
const MARK_CLOSE = '\uE001';

/** Renders a command argument or env value: placeholders (`{root}`, `{pinned_date+3600}`, …) and `{{…}}` templates. */
function renderArgument(text: string, scope: Scope, context: SandboxContext, where: string, pointer: string): string {
  const values: string[] = [];
  const marked = text.replace(PLACEHOLDER, (match, name: string, offset: string | undefined) => {
    if (offset !== undefined && name !== 'pinned_date') throw invalid(where, pointer, `"${match}": only {pinned_date} takes an offset`, 'write {pinned_date+SECONDS}');
    let value: string;
    if (name === 'root') value = context.root;
    else if (name === 'home') value = context.home;
    else if (name === 'pinned_epoch') value = String(Math.floor(pinnedMilliseconds(context, where) / 1000));
    else value = offset === undefined ? context.pinnedDate : isoSeconds(pinnedMilliseconds(context, where) + Number(offset) * 1000);
    values.push(value);
    return `${MARK_OPEN}${values.length - 1}${MARK_CLOSE}`;
  });
  const rendered = located(where, pointer, () => render(marked, scope));
  return rendered.replace(new RegExp(`${MARK_OPEN}([0-9]+)${MARK_CLOSE}`, 'g'), (_match, index: string) => values[Number(index)]!);
}

function seedCommandEnvironment(command: CommandDefinition, scope: Scope, context: SandboxContext, where: string, pointer: string): NodeJS.ProcessEnv {
  const env: Record<string, string> = {
    GIT_AUTHOR_NAME: 'Episode Factory',
    GIT_COMMITTER_NAME: 'Episode Factory',
    GIT_AUTHOR_EMAIL: 'factory@example.invalid',
    GIT_COMMITTER_EMAIL: 'factory@example.invalid',
    GIT_AUTHOR_DATE: context.pinnedDate,
    GIT_COMMITTER_DATE: context.pinnedDate,
  };
  for (const [name, value] of Object.entries(command.env ?? {})) env[name] = renderArgument(value, scope, context, where, `${pointer}/env/${name}`);
  // The definition's own variables go through the secret filter like everything a child is given.
  return childEnvironment({ ...commandVariables(context), ...env }).env;
}

async function runCommand(command: CommandDefinition, scope: Scope, context: SandboxContext, where: string, pointer: string): Promise<void> {
  if (command.run.length === 0) throw invalid(where, `${pointer}/run`, 'is empty', 'give the program and its arguments, like ["git", "init"]');
  const argv = command.run.map((argument, index) => renderArgument(argument, scope, context, where, `${pointer}/run/${index}`));
  const env = seedCommandEnvironment(command, scope, context, where, pointer);
  const shown = argv.map((argument) => (/^[\w@%+=:,./-]+$/.test(argument) ? argument : JSON.stringify(argument))).join(' ');
  const [program, ...args] = argv;
  await new Promise<void>((resolvePromise, reject) => {
    const child = spawn(program!, args, { cwd: context.root, env, stdio: ['ignore', 'ignore', 'pipe'], shell: false });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4 * STDERR_TAIL);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      // A grandchild may still hold stderr open, so the deadline does not wait for 'close'.
      child.stderr.destroy();
      reject(seedFailed(where, `${pointer}/run`, `\`${shown}\` did not finish within ${COMMAND_DEADLINE_MS / 1000} s`, 'make the command finish quickly, without waiting for input'));
    }, COMMAND_DEADLINE_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(seedFailed(where, `${pointer}/run`, `\`${shown}\` did not start: ${errorMessage(error)}`, `install ${program} and put it on PATH (list it in launch.requires)`, error));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const tail = stderr.trim().slice(-STDERR_TAIL);
      if (code !== 0) {
        const status = code === null ? `signal ${signal}` : `exit code ${code}`;
        reject(seedFailed(where, `${pointer}/run`, `\`${shown}\` failed with ${status}${tail ? `: ${tail}` : ' (no stderr)'}`, 'fix the command, or the files it runs on'));
      } else resolvePromise();
    });
  });
}
