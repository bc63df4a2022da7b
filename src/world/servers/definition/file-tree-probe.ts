// Owns the file-tree probe: a directory of a sandbox read back as JSON, one
// entry per file (size, sha256, the text and its numbered lines when it is
// small UTF-8, plus what the file's parser reads from it). Both the
// definition's `file-tree` probe part and server-filesystem's probe build
// their entries here, so the two can never drift apart. Symlinks are listed,
// never followed; no times, modes or owners reach the snapshot (they differ
// between two runs of the same episode).

import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../../../core/errors.js';
import { sha256Hex } from '../../../core/hashing.js';
import type { JsonObject } from '../../../core/json-value.js';
import { fileFormat } from '../formats/file-formats.js';
import { matchesGlob } from './path-glob.js';
import { resolveUnderRoot } from './sandbox-relative-path.js';

export interface FileTree {
  [key: string]: string[] | Record<string, JsonObject>;
  dirs: string[];
  files: Record<string, JsonObject>;
  other: string[];
}

/** Files larger than this are represented by their hash alone. */
const TEXT_LIMIT = 64 * 1024;

/** KEY=value lines (a .env file), each with its line number. */
function readSettings(lines: string[]): JsonObject[] {
  return lines.flatMap((line, index) => {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    return match ? [{ key: match[1]!, value: match[2]!, line: index + 1 }] : [];
  });
}

/** A Markdown title and the `key: value` lines right after it. */
function readFrontMatter(lines: string[]): JsonObject | undefined {
  if (!lines[0]?.startsWith('# ')) return undefined;
  const meta: JsonObject = {};
  for (const line of lines.slice(1)) {
    const match = /^([a-z_]+): (.*)$/.exec(line);
    if (!match) break;
    meta[match[1]!] = match[2]!;
  }
  return { title: lines[0].slice(2), meta };
}

/** A YAML scalar as front matter writes one: quotes removed, nothing else interpreted (dates and numbers stay text). */
function yamlScalar(text: string): string {
  const trimmed = text.trim();
  const quoted = /^"(.*)"$/.exec(trimmed) ?? /^'(.*)'$/.exec(trimmed);
  return quoted ? quoted[1]! : trimmed;
}

/**
 * YAML front matter between `---` lines at the top of a Markdown file (as
 * Obsidian and static-site tools write it): `key: value`, inline lists
 * `key: [a, b]` and block lists of `- item` lines, and the body after it.
 * Anything richer stays in the text, which the entry holds anyway.
 */
function readYamlFrontMatter(lines: string[]): JsonObject {
  if (lines[0] !== '---') return { front_matter: null, body: lines.join('\n') };
  const end = lines.indexOf('---', 1);
  if (end === -1) return { front_matter: null, body: lines.join('\n') };
  const fields: JsonObject = {};
  let list: string[] | undefined;
  for (const line of lines.slice(1, end)) {
    const item = /^\s*-\s+(.*)$/.exec(line);
    if (item && list) {
      list.push(yamlScalar(item[1]!));
      continue;
    }
    const field = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(line);
    if (!field) continue;
    const value = field[2]!.trim();
    if (value === '') {
      list = [];
      fields[field[1]!] = list;
    } else {
      list = undefined;
      const inline = /^\[(.*)\]$/.exec(value);
      fields[field[1]!] = inline ? inline[1]!.split(',').map(yamlScalar).filter((entry) => entry !== '') : yamlScalar(value);
    }
  }
  return { front_matter: fields, body: lines.slice(end + 1).join('\n') };
}

/** Parsers of a file's text; any other name is a decoder of its bytes (formats/file-formats.ts). */
const TEXT_PARSERS = new Set(['settings', 'front-matter', 'yaml-front-matter']);

/** The parser named by the first glob (in the definition's order) that matches the path. */
export function parserFor(path: string, parsers: Record<string, string>): string | undefined {
  for (const [glob, parser] of Object.entries(parsers)) {
    if (matchesGlob(path, glob)) return parser;
  }
  return undefined;
}

/**
 * One file's entry. `text` and `lines` come with every small UTF-8 file;
 * `settings` and `front-matter` read that text; `json` and decoders read the
 * bytes whatever their size, and a file they cannot read gets `<parser>_error`
 * (a server that writes garbage is judged by the snapshot, not crashed on).
 */
export function describeFile(path: string, dir: string, name: string, content: Buffer, parser: string | undefined): JsonObject {
  const entry: JsonObject = { path, dir, name, bytes: content.length, sha256: sha256Hex(content) };
  if (content.length <= TEXT_LIMIT) {
    let text: string | undefined;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    } catch {
      // Binary: the hash stands for it.
    }
    if (text !== undefined) {
      const lines = text.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      Object.assign(entry, { text, lines: lines.map((line, index) => ({ n: index + 1, text: line })) });
      if (parser === 'settings') entry.settings = readSettings(lines);
      if (parser === 'front-matter') Object.assign(entry, readFrontMatter(lines));
      if (parser === 'yaml-front-matter') Object.assign(entry, readYamlFrontMatter(lines));
    }
  }
  if (parser === 'json') {
    try {
      entry.json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(content));
    } catch (error) {
      entry.json_error = errorMessage(error);
    }
  } else if (parser !== undefined && !TEXT_PARSERS.has(parser)) {
    const format = fileFormat(parser);
    try {
      entry[parser] = format.decode(content);
    } catch (error) {
      entry[`${parser}_error`] = errorMessage(error);
    }
  }
  return entry;
}

/**
 * The tree under `root`/`relativeStart`, paths relative to the start, each
 * directory's names sorted (a directory's contents follow it). An excluded directory is skipped whole; a missing start is an empty
 * tree (a server may delete it).
 */
export async function probeFileTree(root: string, relativeStart: string, exclude: string[], parsers: Record<string, string>): Promise<FileTree> {
  const start = resolveUnderRoot(root, relativeStart, 'file-tree path');
  for (const parser of new Set(Object.values(parsers))) {
    if (parser !== 'json' && parser !== 'settings' && parser !== 'front-matter') fileFormat(parser);
  }
  const tree: FileTree = { dirs: [], files: {}, other: [] };
  async function walk(relativeDirectory: string): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(join(start, relativeDirectory))).sort();
    } catch (error) {
      if (relativeDirectory === '' && (error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const name of names) {
      const path = relativeDirectory ? `${relativeDirectory}/${name}` : name;
      if (exclude.some((glob) => matchesGlob(path, glob))) continue;
      const full = join(start, path);
      const stat = await lstat(full);
      if (stat.isDirectory()) {
        tree.dirs.push(path);
        await walk(path);
      } else if (stat.isFile()) {
        tree.files[path] = describeFile(path, relativeDirectory, name, await readFile(full), parserFor(path, parsers));
      } else {
        tree.other.push(path);
      }
    }
  }
  await walk('');
  return tree;
}
