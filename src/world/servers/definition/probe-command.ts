// Owns the `command` probe part: a program run in the sandbox root (no shell,
// a fixed environment, a deadline) whose standard output is read as text,
// lines, JSON or records. A command that exits non-zero is part of what the
// snapshot says (its exit code and the tail of its stderr), not a crash:
// a server that breaks the repository it works on is judged, not fatal.

import { spawn } from 'node:child_process';
import { childEnvironment } from '../../../core/child-environment.js';
import { FactoryError, errorMessage } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import type { OutputParse, SandboxContext } from './server-world-definition.js';

const DEADLINE_MS = 30_000;
const STDERR_TAIL = 2_000;

/** `{root}`, `{home}` and `{pinned_date}` in one argument. */
export function fillPlaceholders(text: string, context: SandboxContext): string {
  return text.replace(/\{(root|home|pinned_date)\}/g, (_, name: string) => (name === 'root' ? context.root : name === 'home' ? context.home : context.pinnedDate));
}

/**
 * The environment of every definition command: nothing of the user's own
 * (no git config, no locale, no time zone) so two machines read the same.
 */
export function commandVariables(context: SandboxContext): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: context.home,
    TZ: 'UTC',
    LANG: 'C.UTF-8',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
}

function lines(text: string): string[] {
  const split = text.split('\n');
  if (split[split.length - 1] === '') split.pop();
  return split;
}

/** Standard output (or a tool's text) read as the definition says; JSON that does not parse is `{json_error}`. */
export function parseOutput(text: string, parse: OutputParse | undefined): JsonValue {
  if (parse === undefined || parse === 'text') return text;
  if (parse === 'lines') return lines(text);
  if (parse === 'json') {
    try {
      return JSON.parse(text) as JsonValue;
    } catch (error) {
      return { json_error: errorMessage(error) };
    }
  }
  const { separator, fields } = parse.records;
  // The last field takes the rest of the line, so a separator inside it (a subject line) costs nothing.
  return lines(text).map((line) => {
    const values = line.split(separator);
    const record: JsonObject = {};
    fields.forEach((field, index) => {
      record[field] = index === fields.length - 1 ? values.slice(index).join(separator) : (values[index] ?? '');
    });
    return record;
  });
}

/** Runs one command part; `where` names the part in errors. */
export async function runProbeCommand(run: string[], parse: OutputParse | undefined, context: SandboxContext, where: string): Promise<JsonValue> {
  const [program, ...args] = run.map((argument) => fillPlaceholders(argument, context));
  if (!program) throw new FactoryError('definition_invalid', `${where}: a command probe part has an empty run`, { fix: 'give the program and its arguments, e.g. ["git", "log"]' });
  const child = spawn(program, args, { cwd: context.root, env: childEnvironment(commandVariables(context)).env, stdio: ['ignore', 'pipe', 'pipe'], shell: false });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, DEADLINE_MS);
  let exitCode: number | null;
  try {
    exitCode = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve(code));
    });
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new FactoryError(missing ? 'server_requires' : 'server_failed', `${where}: the probe command ${program} ${missing ? 'is not on PATH' : `did not start: ${errorMessage(error)}`}`, {
      fix: missing ? `install ${program}, or list it in launch.requires so the world is refused before its first sandbox` : 'check the command of this probe part',
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) {
    throw new FactoryError('server_failed', `${where}: the probe command ${program} ran past ${DEADLINE_MS / 1000} s`, { fix: 'a probe command must only read the sandbox; make it finish quickly' });
  }
  if (exitCode !== 0) {
    return { exit_code: exitCode ?? -1, stderr: Buffer.concat(stderr).toString('utf8').slice(-STDERR_TAIL) };
  }
  return parseOutput(Buffer.concat(stdout).toString('utf8'), parse);
}
