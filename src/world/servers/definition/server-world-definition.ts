// Owns the shape of a server world written as data (a definition file,
// schemas/server-world.v1.schema.json): how the server is launched, where its
// sandbox lives, the seeded generator, the state probe, the normalisations and
// the guards. These types mirror the schema; the loader validates a file
// against the schema before anything reads it as one of these.

import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import type { Where } from '../../../core/where-clause.js';

export const DEFINITION_FORMAT = 'episode-factory.server-world.v1';

export interface ServerWorldDefinition {
  format: typeof DEFINITION_FORMAT;
  name: string;
  version: string;
  description: string;
  notes?: string;
  launch: LaunchDefinition;
  sandbox: SandboxDefinition;
  /** The pinned tools/list answer: a file beside the definition, or the tools inline. */
  catalog: string | JsonObject[];
  claims?: Record<string, string[]>;
  config_schema?: JsonObject;
  seed: SeedDefinition;
  probe: ProbeDefinition;
  normalisations?: NormalisationDefinition[];
  guards?: GuardDefinition[];
}

export interface LaunchDefinition {
  package?: PackageDefinition;
  /** Instead of a package: a program on PATH and its first arguments. */
  command?: string[];
  args?: string[];
  env?: Record<string, string>;
  /** System programs that must be on PATH (checked before the first sandbox is made). */
  requires?: string[];
  keep?: KeepDefinition;
}

export interface PackageDefinition {
  name: string;
  version: string;
  /** A file of the package run with this Node. */
  entry?: string;
  /** Or an executable inside the package, run directly, by `${process.platform}-${process.arch}`. */
  binary?: Record<string, string>;
}

/**
 * `none`: a child per connection. `swapped-link`: one child per thread kept
 * between episodes, started on `link` (relative to its own directory; the
 * root's name under `current/` by default), a symlink swapped to each
 * episode's root; `args` and `env` replace and overlay the fresh launch line's,
 * with `{root}` and `{link}` the link's path and `{home}` the child's home;
 * `repoint_calls` are tool calls made after each swap (not the first), never
 * recorded, to clear what the server remembers of the last episode.
 */
export type KeepDefinition =
  | { kind: 'none' }
  | { kind: 'swapped-link'; link?: string; args?: string[]; env?: Record<string, string>; repoint_calls?: RepointCall[] };

export interface RepointCall {
  tool: string;
  arguments?: JsonObject;
}

export interface SandboxDefinition {
  /** How the root shows to the model; its last component names the root on disk. */
  shown_as: string;
  /** Where the private directory lives: TMPDIR, or a directory under HOME for servers that refuse /tmp. */
  parent?: 'temporary' | 'home-cache';
}

export type Count = number | { min: number; max: number };

export type DrawDefinition =
  | { let: string; pick: string }
  | { let: string; sample: string; count: Count }
  | { let: string; integer: { min: number; max: number } }
  | { let: string; chance: number }
  | { let: string; value: JsonValue }
  | { let: string; for_each: string; as: string; draws: DrawDefinition[] };

export interface FileDefinition {
  path: string;
  for_each?: string;
  as?: string;
  text?: string;
  json?: JsonValue;
  json_lines?: JsonValue;
  sqlite?: string;
  encoder?: string;
  value?: JsonValue;
}

export interface CommandDefinition {
  run: string[];
  env?: Record<string, string>;
}

export interface SeedDefinition {
  vocabularies?: Record<string, JsonValue[]>;
  draws?: DrawDefinition[];
  files?: FileDefinition[];
  commands?: CommandDefinition[];
  /** Escape hatch: a module exporting populate({random, root, home, config, pinnedDate}). */
  module?: string;
}

export type RecordsParse = { records: { separator: string; fields: string[] } };
export type OutputParse = 'text' | 'lines' | 'json' | RecordsParse;

export type ProbePartDefinition =
  | { name: string; kind: 'file-tree'; path?: string; exclude?: string[]; parsers?: Record<string, string> }
  | { name: string; kind: 'json'; path: string; missing?: JsonValue }
  | { name: string; kind: 'json-lines'; path: string; missing?: JsonValue }
  | { name: string; kind: 'sqlite'; path: string }
  | { name: string; kind: 'decoded'; decoder: string; path: string; missing?: JsonValue }
  | { name: string; kind: 'command'; run: string[]; parse?: OutputParse }
  | { name: string; kind: 'tool-call'; tool: string; arguments?: JsonObject; parse?: 'text' | 'json' };

export interface ViewDefinition {
  name: string;
  from: string;
  where?: Where;
  key?: string;
  select?: string[];
}

export interface ProbeDefinition {
  parts: ProbePartDefinition[];
  views?: ViewDefinition[];
  volatile?: string[];
  /** Escape hatch: a module exporting views({snapshot, root}) → object of extra views. */
  module?: string;
}

export type NormalisationDefinition =
  | 'sandbox-path'
  | 'js-date-string'
  /** sandbox-path with the arguments a self-containing server reads as paths (no guard refuses them). */
  | { kind: 'sandbox-path'; path_arguments?: string[] }
  | { id: string; kind: 'regex'; pattern: string; flags?: string; replace: string; keys?: boolean; describe?: string };

export type GuardDefinition =
  | { kind: 'deny-tools'; id?: string; tools: string[]; reason?: string }
  | { kind: 'paths-under-root'; id?: string; arguments: string[]; tools?: string[] }
  | { kind: 'named'; name: string };

/** What the seed program, the probe and the escape hatch are given about one sandbox. */
export interface SandboxContext {
  /** The real root the server works in. */
  root: string;
  /** The child's HOME. */
  home: string;
  /** The lane's produced_at, ISO 8601: every date a command writes. */
  pinnedDate: string;
  /** Where the definition file lives: relative module paths resolve against it. */
  definitionDirectory: string;
}
