// Owns the first draft of a server world written for a package nobody has
// described yet: a definition that validates, built from the package and its
// live tools/list, with the guesses that can be made from names alone (path
// arguments to keep under the root, tools that may reach the network) and the
// list of what only a person can say (the seed, views, volatile values, the
// normalisations of what varies between runs, read-only hints).

import type { JsonObject } from '../../../core/json-value.js';
import type { ListedTool } from '../listed-catalog.js';
import { DEFINITION_FORMAT, type GuardDefinition, type ServerWorldDefinition } from './server-world-definition.js';

/** Words that, as the last word of an argument's name, make it a path. */
const PATH_WORDS = new Set(['path', 'file', 'filename', 'dir', 'directory', 'folder', 'source', 'destination', 'target', 'root', 'cwd']);
/** Words in a tool's name that suggest it reaches the network or leaves the sandbox. */
const NETWORK_WORDS = ['clone', 'fetch', 'pull', 'push', 'remote', 'http', 'url', 'download', 'upload', 'web', 'browse', 'send', 'email'];
/** Words in a tool's name that suggest it only reads. */
const READING_WORDS = new Set(['get', 'list', 'read', 'show', 'search', 'find', 'status', 'log', 'diff', 'view', 'describe', 'query', 'info', 'stat', 'open', 'blame', 'inspect', 'count', 'tree', 'ls']);

export const NETWORK_REASON = 'guessed: may reach the network; remove if it does not';

export interface SkeletonInput {
  name: string;
  package: { name: string; version: string; entry: string; description: string };
  /** The launch arguments that made the server answer, with placeholders. */
  args: string[];
  tools: readonly ListedTool[];
  /** The catalog file, relative to the definition. */
  catalogFile: string;
  /** The schema, relative to the definition, when the factory's schema file exists. */
  schemaPath?: string;
}

export interface SkeletonGuesses {
  /** Path-like arguments, as `name` or `name[]`, with the tools that take each. */
  pathArguments: { argument: string; tools: string[] }[];
  deniedTools: string[];
  /** Tools whose names read as read-only but that say nothing with readOnlyHint. */
  readingWithoutHint: string[];
}

export interface Skeleton {
  definition: ServerWorldDefinition & { $schema?: string };
  guesses: SkeletonGuesses;
}

/** A world name from a package name: its last path component, lowercase, non-alphanumerics to `-`. */
export function worldNameOf(packageName: string): string {
  const last = packageName.split('/').pop() ?? packageName;
  const slug = last.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^[^a-z]+/, '').replace(/-+$/, '');
  return slug || 'server';
}

/** The words of an identifier: split at `_`, `-`, `.`, spaces and camelCase humps, lowercased. */
export function wordsOf(identifier: string): string[] {
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());
}

/** Whether an argument's name reads as a path (`path`, `filePath`, `worktreePath`, `paths`, `source_dir`…). */
export function looksLikePath(argument: string): boolean {
  const last = wordsOf(argument).pop();
  if (last === undefined) return false;
  return PATH_WORDS.has(last) || (last.endsWith('s') && PATH_WORDS.has(last.slice(0, -1))) || (last.endsWith('ies') && PATH_WORDS.has(`${last.slice(0, -3)}y`));
}

/** Whether a tool's name suggests the network or leaving the sandbox. */
export function looksNetworked(tool: string): boolean {
  return wordsOf(tool).some((word) => NETWORK_WORDS.some((network) => word.startsWith(network)));
}

function typesOf(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const type = (schema as { type?: unknown }).type;
  return Array.isArray(type) ? type.filter((item): item is string => typeof item === 'string') : typeof type === 'string' ? [type] : [];
}

/** The guard's spelling of a path-like top-level argument: `name` for a string, `name[]` for a list of strings, else none. */
function pathArgument(name: string, schema: unknown): string | undefined {
  if (!looksLikePath(name)) return undefined;
  const types = typesOf(schema);
  if (types.includes('string')) return name;
  if (types.includes('array') && typesOf((schema as { items?: unknown }).items).includes('string')) return `${name}[]`;
  return undefined;
}

export function guessesOf(tools: readonly ListedTool[]): SkeletonGuesses {
  const byArgument = new Map<string, string[]>();
  for (const tool of tools) {
    const properties = (tool.inputSchema as { properties?: Record<string, unknown> }).properties ?? {};
    for (const [name, schema] of Object.entries(properties)) {
      const argument = pathArgument(name, schema);
      if (argument !== undefined) byArgument.set(argument, [...(byArgument.get(argument) ?? []), tool.name]);
    }
  }
  return {
    pathArguments: [...byArgument.entries()].map(([argument, using]) => ({ argument, tools: using })),
    deniedTools: tools.filter((tool) => looksNetworked(tool.name)).map((tool) => tool.name),
    readingWithoutHint: tools.filter((tool) => tool.annotations?.readOnlyHint === undefined && wordsOf(tool.name).some((word) => READING_WORDS.has(word))).map((tool) => tool.name),
  };
}

const NOTES =
  'Written by `episode-factory worlds init`: a skeleton that runs but does not yet vary. ' +
  'To fill in: seed (what the sandbox starts with, drawn from the seed: vocabularies, draws, files, commands), ' +
  'probe.views (what predicates read), probe.volatile (values that differ between runs), ' +
  'normalisations (answers that vary between runs: run `episode-factory worlds check` on this file), ' +
  'check the guessed guards, and replace these notes with why this server and what it varies.';

export function definitionSkeleton(input: SkeletonInput): Skeleton {
  const guesses = guessesOf(input.tools);
  const guards: GuardDefinition[] = [];
  if (guesses.pathArguments.length > 0) guards.push({ kind: 'paths-under-root', id: 'paths-in-sandbox', arguments: guesses.pathArguments.map((entry) => entry.argument) });
  if (guesses.deniedTools.length > 0) guards.push({ kind: 'deny-tools', id: 'no-network', tools: guesses.deniedTools, reason: NETWORK_REASON });
  const description = input.package.description.trim() || `${input.package.name}@${input.package.version} as a world`;
  const definition: Skeleton['definition'] = {
    ...(input.schemaPath ? { $schema: input.schemaPath } : {}),
    format: DEFINITION_FORMAT,
    name: input.name,
    version: '1',
    description,
    notes: NOTES,
    launch: {
      package: { name: input.package.name, version: input.package.version, entry: input.package.entry },
      args: [...input.args],
      env: {},
    },
    sandbox: { shown_as: '/sandbox' },
    catalog: input.catalogFile,
    seed: {
      files: [{ path: 'README.md', text: `# Sandbox of ${input.name}\n\nAn example file, so the sandbox is not empty: replace it with what the seed draws.\n` }],
    },
    probe: { parts: [{ name: 'files', kind: 'file-tree', path: '.' }] },
    normalisations: ['sandbox-path'],
    ...(guards.length > 0 ? { guards } : {}),
  };
  return { definition, guesses };
}

/** The catalog file's bytes: the tools/list tools exactly, 1-space indent, as the other catalogs. */
export function catalogText(tools: readonly ListedTool[]): string {
  return JSON.stringify(tools as unknown as JsonObject[], null, 1) + '\n';
}
