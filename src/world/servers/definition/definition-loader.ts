// Owns reading a server world's definition file: within the definition-file
// limits, valid against schemas/server-world.v1.schema.json, its catalog read
// from beside it, and the checks a schema cannot make (names that must be
// unique, tools a guard or a claim names that the catalog lacks). Every
// problem names the file and the JSON pointer; the error is exit 2.

import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { JsonLimitError } from '../../../core/bounded-json.js';
import { limitReason, readDefinitionFile } from '../../../core/definition-file.js';
import { errorMessage, FactoryError, type Problem } from '../../../core/errors.js';
import { isJsonObject } from '../../../core/json-value.js';
import { SCHEMAS_DIR } from '../../../core/package-paths.js';
import { compileRegistered, type Validator } from '../../../core/schema-validator.js';
import { InvalidUtf8Error } from '../../../core/utf8-text.js';
import type { ListedTool } from '../listed-catalog.js';
import type { ServerWorldDefinition } from './server-world-definition.js';

export interface LoadedDefinition {
  definition: ServerWorldDefinition;
  /** The definition file, absolute. */
  path: string;
  /** Its directory: the catalog and escape-hatch modules resolve against it. */
  directory: string;
  /** The pinned tools/list answer. */
  catalog: ListedTool[];
}

const SCHEMA_ID = 'https://episode-factory.dev/schemas/server-world.v1.schema.json';
let validator: Validator | undefined;

function validate(document: unknown) {
  validator ??= compileRegistered([JSON.parse(readFileSync(join(SCHEMAS_DIR, 'server-world.v1.schema.json'), 'utf8')) as object & { $id: string }], SCHEMA_ID, { pointers: true });
  return validator(document);
}

function shown(path: string): string {
  const here = relative(process.cwd(), path);
  return here.startsWith('..') ? path : here;
}

function invalid(file: string, problems: Problem[]): FactoryError {
  return new FactoryError('definition_invalid', `${file} is not a valid server world (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
    fix: 'fix each problem listed above; the format is schemas/server-world.v1.schema.json, explained in docs/server-worlds.md',
    problems,
  });
}

/** A definition file, read, validated and checked; its catalog read from beside it. */
export function loadDefinition(path: string): LoadedDefinition {
  const absolute = resolve(path);
  const file = shown(absolute);
  if (!existsSync(absolute)) throw new FactoryError('world_unknown', `server world file ${file} does not exist`, { fix: 'check the path, or run `episode-factory worlds init --package <name>@<version> --out worlds/<name>.json` to write one' });
  let document: unknown;
  try {
    document = readDefinitionFile(absolute);
  } catch (error) {
    if (error instanceof InvalidUtf8Error) throw invalid(file, [{ where: file, reason: `${error.message}: a definition is UTF-8 JSON` }]);
    if (error instanceof JsonLimitError) throw invalid(file, [{ where: file, reason: limitReason(error, 'a server world definition') }]);
    if (error instanceof SyntaxError) throw invalid(file, [{ where: file, reason: `not valid JSON: ${error.message}` }]);
    throw new FactoryError('world_unknown', `cannot read ${file}: ${errorMessage(error)}`, { fix: 'check the file permissions' });
  }
  const schemaProblems = validate(document).map((problem) => ({ where: `${file}: ${problem.path || '/'}`, reason: problem.reason }));
  if (schemaProblems.length > 0) throw invalid(file, schemaProblems);
  const definition = document as ServerWorldDefinition;
  const directory = dirname(absolute);
  const problems: Problem[] = [];
  const at = (pointer: string, reason: string) => problems.push({ where: `${file}: ${pointer}`, reason });

  if (basename(absolute) !== `${definition.name}.json` && basename(absolute) !== 'definition.json') {
    at('/name', `the world is named "${definition.name}" but its file is ${basename(absolute)}: name the file ${definition.name}.json, so lanes find it by name`);
  }
  const catalog = readCatalog(definition, directory, file, at);
  const tools = new Set(catalog.map((tool) => tool.name));
  const knownTool = (pointer: string, name: string) => {
    if (catalog.length > 0 && !tools.has(name)) at(pointer, `no tool "${name}" in the catalog; the tools are: ${[...tools].sort().join(', ')}`);
  };
  for (const [name] of Object.entries(definition.claims ?? {})) knownTool(`/claims/${name}`, name);
  (definition.guards ?? []).forEach((guard, index) => {
    if (guard.kind === 'deny-tools') guard.tools.forEach((tool, position) => knownTool(`/guards/${index}/tools/${position}`, tool));
    if (guard.kind === 'paths-under-root') (guard.tools ?? []).forEach((tool, position) => knownTool(`/guards/${index}/tools/${position}`, tool));
  });
  const names = new Set<string>();
  const unique = (pointer: string, name: string) => {
    if (names.has(name)) at(pointer, `"${name}" names two parts or views of the probe: each needs its own name`);
    names.add(name);
  };
  definition.probe.parts.forEach((part, index) => {
    unique(`/probe/parts/${index}/name`, part.name);
    if (part.kind === 'tool-call') knownTool(`/probe/parts/${index}/tool`, part.tool);
  });
  (definition.probe.views ?? []).forEach((view, index) => unique(`/probe/views/${index}/name`, view.name));
  const regexIds = new Set<string>();
  (definition.normalisations ?? []).forEach((rule, index) => {
    if (typeof rule === 'string') return;
    if (regexIds.has(rule.id)) at(`/normalisations/${index}/id`, `two normalisations are named "${rule.id}"`);
    regexIds.add(rule.id);
    try {
      new RegExp(rule.pattern, rule.flags ?? 'g');
    } catch (error) {
      at(`/normalisations/${index}/pattern`, `not a regular expression: ${errorMessage(error)}`);
    }
  });
  for (const [key, module] of [['/seed/module', definition.seed.module], ['/probe/module', definition.probe.module]] as const) {
    if (module !== undefined && !existsSync(resolve(directory, module))) at(key, `no module ${module} beside the definition (${resolve(directory, module)})`);
  }
  if (definition.launch.keep?.kind === 'swapped-link' && !definition.launch.package) at('/launch/keep', 'a kept child needs a package launch');
  if (problems.length > 0) throw invalid(file, problems);
  return { definition, path: absolute, directory, catalog };
}

function readCatalog(definition: ServerWorldDefinition, directory: string, file: string, at: (pointer: string, reason: string) => void): ListedTool[] {
  if (Array.isArray(definition.catalog)) return definition.catalog as unknown as ListedTool[];
  const path = resolve(directory, definition.catalog);
  if (!existsSync(path)) {
    at('/catalog', `no catalog file ${definition.catalog} beside the definition: run \`episode-factory worlds init\` to write it from the live server's tools/list`);
    return [];
  }
  let listed: unknown;
  try {
    listed = readDefinitionFile(path);
  } catch (error) {
    at('/catalog', `${definition.catalog} is not readable JSON: ${errorMessage(error)}`);
    return [];
  }
  const tools = isJsonObject(listed) && Array.isArray(listed.tools) ? listed.tools : listed;
  if (!Array.isArray(tools) || tools.some((tool) => !isJsonObject(tool) || typeof tool.name !== 'string' || !isJsonObject(tool.inputSchema))) {
    at('/catalog', `${definition.catalog} must hold the tools/list answer: a list of tools, each with a name and an inputSchema (in ${file})`);
    return [];
  }
  return tools as unknown as ListedTool[];
}
