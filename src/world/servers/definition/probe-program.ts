// Owns running a definition's probe: each part reads one thing of the sandbox
// (a file tree, a JSON or JSON-lines file, a SQLite database, a file in a
// registered format, a command's output, a read-only tool's answer) and goes
// under its name; then the views select from those parts. Content a server
// wrote badly (JSON that does not parse, a line that is not JSON, a command
// that fails) is recorded in the snapshot rather than thrown: the episode is
// judged on it. Only a fault of the definition itself throws.

import { readFile } from 'node:fs/promises';
import { FactoryError, errorMessage } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { fileFormat } from '../formats/file-formats.js';
import { probeFileTree } from './file-tree-probe.js';
import { parseOutput, runProbeCommand } from './probe-command.js';
import { addViews } from './probe-views.js';
import { resolveUnderRoot } from './sandbox-relative-path.js';
import type { ProbeDefinition, ProbePartDefinition, SandboxContext } from './server-world-definition.js';
import { probeSqliteFile } from './sqlite-probe.js';

export type ProbeContext = SandboxContext & {
  /** Calls a tool on a running child of the server and gives its CallToolResult. */
  callTool?: (tool: string, args: JsonObject) => Promise<JsonValue>;
};

/** The file's bytes, or undefined when there is no such file. */
async function readIfPresent(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parseJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    return { json_error: errorMessage(error) };
  }
}

/** The first text content of a CallToolResult; a result marked isError is `{tool_error: text}`. */
function toolAnswer(result: JsonValue, parse: 'text' | 'json' | undefined): JsonValue {
  const content = typeof result === 'object' && result !== null && !Array.isArray(result) ? result.content : undefined;
  const first = Array.isArray(content) ? content.find((item) => typeof item === 'object' && item !== null && !Array.isArray(item) && item.type === 'text') : undefined;
  const text = first && typeof first === 'object' && !Array.isArray(first) && typeof first.text === 'string' ? first.text : '';
  if (typeof result === 'object' && result !== null && !Array.isArray(result) && result.isError === true) return { tool_error: text };
  return parseOutput(text, parse ?? 'text');
}

async function runPart(part: ProbePartDefinition, context: ProbeContext, where: string, snapshot: JsonObject): Promise<void> {
  const at = `${where} (probe part "${part.name}")`;
  switch (part.kind) {
    case 'file-tree':
      snapshot[part.name] = await probeFileTree(context.root, part.path ?? '.', part.exclude ?? [], part.parsers ?? {});
      return;
    case 'json': {
      const bytes = await readIfPresent(resolveUnderRoot(context.root, part.path, at));
      snapshot[part.name] = bytes === undefined ? (part.missing ?? null) : parseJson(bytes.toString('utf8'));
      return;
    }
    case 'json-lines': {
      const bytes = await readIfPresent(resolveUnderRoot(context.root, part.path, at));
      if (bytes === undefined) {
        snapshot[part.name] = part.missing ?? null;
        return;
      }
      const items: JsonValue[] = [];
      const unreadable: string[] = [];
      for (const line of bytes.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        try {
          items.push(JSON.parse(line) as JsonValue);
        } catch {
          unreadable.push(line);
        }
      }
      snapshot[part.name] = items;
      if (unreadable.length > 0) snapshot[`${part.name}_unreadable_lines`] = unreadable;
      return;
    }
    case 'sqlite': {
      const path = resolveUnderRoot(context.root, part.path, at);
      if ((await readIfPresent(path)) === undefined) {
        snapshot[part.name] = null;
        return;
      }
      try {
        snapshot[part.name] = await probeSqliteFile(path);
      } catch (error) {
        if (error instanceof FactoryError) throw error;
        snapshot[part.name] = { sqlite_error: errorMessage(error) };
      }
      return;
    }
    case 'decoded': {
      const format = fileFormat(part.decoder);
      const bytes = await readIfPresent(resolveUnderRoot(context.root, part.path, at));
      if (bytes === undefined) {
        snapshot[part.name] = part.missing ?? null;
        return;
      }
      try {
        snapshot[part.name] = format.decode(bytes);
      } catch (error) {
        snapshot[part.name] = { [`${part.decoder}_error`]: errorMessage(error) };
      }
      return;
    }
    case 'command':
      snapshot[part.name] = await runProbeCommand(part.run, part.parse, context, at);
      return;
    case 'tool-call':
      if (!context.callTool) {
        throw new FactoryError('definition_invalid', `${at}: a tool-call probe part needs a running server, and this probe has none`, {
          fix: 'run this probe where the world gives it a child of the server, or read the state from the sandbox with another kind of part',
        });
      }
      snapshot[part.name] = toolAnswer(await context.callTool(part.tool, part.arguments ?? {}), part.parse);
      return;
  }
}

/** Every name a part puts in the snapshot, refused when two clash. */
function checkPartNames(parts: ProbePartDefinition[], where: string): Set<string> {
  const names = new Set<string>();
  const claim = (name: string): void => {
    if (names.has(name)) {
      throw new FactoryError('definition_invalid', `${where}: two probe parts put "${name}" in the snapshot`, { fix: 'give each part its own name (json-lines parts also add "<name>_unreadable_lines")' });
    }
    names.add(name);
  };
  for (const part of parts) {
    claim(part.name);
    if (part.kind === 'json-lines') claim(`${part.name}_unreadable_lines`);
  }
  return names;
}

/**
 * The sandbox read back as the definition's probe says, parts in order, then
 * views. `where` names the definition (its file) in errors. The escape
 * hatch's module is the caller's to run.
 */
export async function runProbe(probe: ProbeDefinition, context: ProbeContext, where: string): Promise<JsonObject> {
  const partNames = checkPartNames(probe.parts, where);
  const snapshot: JsonObject = {};
  for (const part of probe.parts) await runPart(part, context, where, snapshot);
  addViews(snapshot, probe.views ?? [], where, partNames);
  return snapshot;
}
