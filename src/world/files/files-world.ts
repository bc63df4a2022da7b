// Owns the behaviour of the files world: a virtual file tree whose tools list,
// find, read, grep, write, edit, copy, move, delete and create folders.
// Arguments arrive already checked against the input schemas; this module
// enforces what a schema cannot say (the path must exist, /etc is read-only, a
// write must not replace a file unless asked, a move never replaces anything)
// and every failed call leaves the tree exactly as it was.

import { copyPlain } from '../../core/json-copy.js';
import type { JsonObject, JsonValue } from '../../core/json-value.js';
import { compilePattern } from '../../core/safe-pattern.js';
import { PatternError, stepBudget, type SafePattern } from '../../core/safe-pattern-contract.js';
import type { World } from '../world-contract.js';
import { dispatchTo, fail, succeed, type ToolHandler } from '../tool-handlers.js';
import {
  byteLength,
  compareText,
  extensionOf,
  generateFilesState,
  isInside,
  isReadOnly,
  keyOf,
  MAX_FILE_BYTES,
  minutesOf,
  nameOf,
  nextRevision,
  parentOf,
  pathProblem,
  READ_ONLY_ROOT,
  ROOT,
  splitLines,
  timestamp,
  type FileNode,
  type FilesState,
} from './files-state.js';
import { FILES_TOOLS } from './files-tools.js';


/** The root is not stored: it always exists and no tool may change it. */
const ROOT_NODE: FileNode = { path: ROOT, type: 'dir', content: '', modified: 0, revision: null, tags: [] };

function lookup(state: FilesState, path: string): FileNode | undefined {
  return path === ROOT ? ROOT_NODE : state.nodes.get(path);
}

function childrenOf(state: FilesState, path: string): FileNode[] {
  return [...state.nodes.values()].filter((node) => parentOf(node.path) === path);
}

function descendantsOf(state: FilesState, path: string): FileNode[] {
  return [...state.nodes.values()].filter((node) => isInside(node.path, path));
}

/** The deepest existing folder on the way to a missing path, to point the caller somewhere useful. */
function nearestExisting(state: FilesState, path: string): string {
  let current = parentOf(path);
  while (current !== ROOT && !state.nodes.has(current)) current = parentOf(current);
  return current;
}

function missing(state: FilesState, path: string, what = 'file or folder'): string {
  const nearest = nearestExisting(state, path);
  if (lookup(state, nearest)?.type === 'file') return `No such ${what}: ${path}. ${nearest} is a file, not a folder.`;
  return `No such ${what}: ${path}. The nearest existing folder is ${nearest}; list it with ls to see what is there.`;
}

function readOnly(path: string, action: string): string {
  return `Cannot ${action} ${path}: everything under ${READ_ONLY_ROOT} is read-only.`;
}

/** Checks a path argument; the schema already does, but a direct caller may not have. */
function checkPath(value: unknown, field: string): string | null {
  if (typeof value !== 'string') return `${field} must be a string path`;
  const problem = pathProblem(value);
  return problem ? `${field}: ${problem}` : null;
}

function entryOf(state: FilesState, node: FileNode): JsonObject {
  const entry: JsonObject = {
    path: node.path,
    name: nameOf(node.path),
    type: node.type,
    size: node.type === 'file' ? byteLength(node.content) : 0,
    modified_at: timestamp(node.modified),
    readonly: isReadOnly(node.path),
    revision: node.revision,
  };
  if (node.type === 'dir') entry.children = childrenOf(state, node.path).length;
  return entry;
}

function byPath(left: FileNode, right: FileNode): number {
  return compareText(left.path, right.path);
}

/** A file-name glob as a pattern: "*" any run, "?" one character, the rest literal. */
function globPattern(glob: string): SafePattern {
  const source = [...glob].map((character) => (character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'))).join('');
  return compilePattern(`^${source}$`);
}

function tick(state: FilesState): number {
  state.clock += 1;
  return state.clock;
}

/** Stores new content at a path (creating the file if needed) with a fresh revision. */
function store(state: FilesState, path: string, content: string): FileNode {
  const now = tick(state);
  const existing = state.nodes.get(path);
  const node: FileNode = existing ?? { path, type: 'file', content: '', modified: now, revision: null, tags: [] };
  node.content = content;
  node.modified = now;
  node.revision = nextRevision(state, path);
  state.nodes.set(path, node);
  return node;
}

/** Why a new entry cannot be placed at `path` (its parent is missing, a file, or read-only), or null. */
function placementProblem(state: FilesState, path: string, action: string): string | null {
  if (path === ROOT) return `Cannot ${action} /: it is the root folder.`;
  if (isReadOnly(path)) return readOnly(path, action);
  const parent = parentOf(path);
  const folder = lookup(state, parent);
  if (!folder) return `Cannot ${action} ${path}: its folder ${parent} does not exist. Create it first with mkdir (parents: true creates the whole chain).`;
  if (folder.type !== 'dir') return `Cannot ${action} ${path}: ${parent} is a file, not a folder.`;
  return null;
}

function sortedMap(state: FilesState): void {
  const sorted = [...state.nodes.entries()].sort(([left], [right]) => compareText(left, right));
  state.nodes.clear();
  for (const [path, node] of sorted) state.nodes.set(path, node);
}

const handlers: Record<string, ToolHandler<FilesState>> = {
  ls(state, args) {
    const problem = checkPath(args.path, 'path');
    if (problem) return fail(problem);
    const path = args.path as string;
    const node = lookup(state, path);
    if (!node) return fail(missing(state, path, 'folder'));
    if (args.depth !== undefined && args.recursive === false) {
      return fail('depth only applies to a recursive listing: pass recursive: true with it, or leave depth out.');
    }
    if (node.type === 'file') return succeed({ path, entries: [entryOf(state, node)], total: 1 });
    const recursive = args.recursive === true || args.depth !== undefined;
    const depth = recursive ? ((args.depth as number | undefined) ?? Number.POSITIVE_INFINITY) : 1;
    const base = path === ROOT ? 0 : path.split('/').length - 1;
    const entries = descendantsOf(state, path)
      .filter((candidate) => candidate.path.split('/').length - 1 - base <= depth)
      .sort(byPath)
      .map((candidate) => entryOf(state, candidate));
    return succeed({ path, entries, total: entries.length });
  },

  find(state, args) {
    const problem = checkPath(args.path, 'path');
    if (problem) return fail(problem);
    const path = args.path as string;
    const node = lookup(state, path);
    if (!node) return fail(missing(state, path, 'folder'));
    if (node.type !== 'dir') return fail(`${path} is a file: find searches below a folder, e.g. ${parentOf(path)}.`);
    const window = (args.modified as JsonObject | undefined) ?? {};
    const parsedBefore = window.before === undefined ? undefined : minutesOf(window.before as string);
    const parsedAfter = window.after === undefined ? undefined : minutesOf(window.after as string);
    if (typeof parsedBefore === 'object') return fail(`modified.before: ${parsedBefore.problem}.`);
    if (typeof parsedAfter === 'object') return fail(`modified.after: ${parsedAfter.problem}.`);
    const before = parsedBefore;
    const after = parsedAfter;
    if (before !== undefined && after !== undefined && after >= before) {
      return fail(`modified.after (${window.after}) must be earlier than modified.before (${window.before}); nothing can match that window.`);
    }
    const include = args.name_glob === undefined ? undefined : globPattern(args.name_glob as string);
    const exclude = args.exclude_glob === undefined ? undefined : globPattern(args.exclude_glob as string);
    const sort = (args.sort as string | undefined) ?? 'path';
    const matches = descendantsOf(state, path)
      .filter((candidate) => args.type === undefined || candidate.type === args.type)
      .filter((candidate) => !include || include.test(nameOf(candidate.path)))
      .filter((candidate) => !exclude || !exclude.test(nameOf(candidate.path)))
      .filter((candidate) => before === undefined || candidate.modified < before)
      .filter((candidate) => after === undefined || candidate.modified >= after)
      .sort((left, right) => {
        const order =
          sort === 'newest'
            ? right.modified - left.modified
            : sort === 'oldest'
              ? left.modified - right.modified
              : sort === 'largest'
                ? byteLength(right.content) - byteLength(left.content)
                : 0;
        return order !== 0 ? order : byPath(left, right);
      });
    const limit = (args.limit as number | undefined) ?? 100;
    return succeed({
      path,
      entries: matches.slice(0, limit).map((candidate) => entryOf(state, candidate)),
      total: matches.length,
      truncated: matches.length > limit,
    });
  },

  read(state, args) {
    const problem = checkPath(args.path, 'path');
    if (problem) return fail(problem);
    const path = args.path as string;
    const node = lookup(state, path);
    if (!node) return fail(missing(state, path, 'file'));
    if (node.type !== 'file') return fail(`${path} is a folder, not a file: list it with ls.`);
    const all = splitLines(node.content);
    const start = (args.start_line as number | undefined) ?? 1;
    const requestedEnd = args.end_line as number | undefined;
    if (requestedEnd !== undefined && requestedEnd < start) {
      return fail(`end_line (${requestedEnd}) is before start_line (${start}); the range is inclusive, so end_line must be at least start_line.`);
    }
    if (start > Math.max(all.length, 1)) {
      return fail(`start_line ${start} is past the end of ${path}, which has ${all.length} line${all.length === 1 ? '' : 's'}.`);
    }
    const end = Math.min(requestedEnd ?? all.length, all.length);
    const whole = start === 1 && end === all.length;
    const selected = all.slice(start - 1, end);
    // The whole file comes back byte for byte (a missing final newline stays missing).
    const content = whole ? node.content : selected.map((text) => `${text}\n`).join('');
    return succeed({
      path,
      content,
      lines: selected.map((text, index) => ({ n: start + index, text })),
      start_line: start,
      end_line: end,
      total_lines: all.length,
      size: byteLength(node.content),
      revision: node.revision!,
    });
  },

  grep(state, args) {
    const path = (args.path as string | undefined) ?? ROOT;
    const problem = checkPath(path, 'path');
    if (problem) return fail(problem);
    const node = lookup(state, path);
    if (!node) return fail(missing(state, path));
    const source = args.literal === true ? (args.pattern as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : (args.pattern as string);
    // A model's pattern runs on the linear-time matcher: no pattern can stall the world (see core/safe-pattern).
    let pattern: SafePattern;
    try {
      pattern = compilePattern(source, args.ignore_case === true ? 'i' : '');
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      if (error.kind === 'invalid') return fail(`pattern is not a valid regular expression (${error.message}); escape special characters or pass literal: true.`);
      return fail(`pattern cannot be used: ${error.message}; ${error.fix}, or pass literal: true.`);
    }
    const nameFilter = args.glob === undefined ? undefined : globPattern(args.glob as string);
    const files = (node.type === 'file' ? [node] : descendantsOf(state, path).filter((candidate) => candidate.type === 'file'))
      .filter((candidate) => !nameFilter || nameFilter.test(nameOf(candidate.path)))
      .sort(byPath);
    // One budget for the whole search, so that many files cannot add up to a stall either.
    const budget = stepBudget();
    const matches: JsonObject[] = [];
    try {
      for (const file of files) {
        splitLines(file.content).forEach((text, index) => {
          if (pattern.test(text, budget)) matches.push({ path: file.path, line: index + 1, text });
        });
      }
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      return fail(`search stopped: ${error.message}; simplify the pattern, narrow path or glob, or pass literal: true.`);
    }
    const limit = (args.max_results as number | undefined) ?? 50;
    return succeed({ matches: matches.slice(0, limit), total: matches.length, truncated: matches.length > limit, files_searched: files.length });
  },

  write(state, args) {
    const problem = checkPath(args.path, 'path');
    if (problem) return fail(problem);
    const path = args.path as string;
    const content = args.content as string;
    const placement = placementProblem(state, path, 'write');
    if (placement) return fail(placement);
    const bytes = byteLength(content);
    if (bytes > MAX_FILE_BYTES) return fail(`content is ${bytes} bytes; a file holds at most ${MAX_FILE_BYTES} bytes.`);
    const existing = state.nodes.get(path);
    if (existing?.type === 'dir') return fail(`${path} is a folder; write needs a file path inside it, e.g. ${path}/notes.md.`);
    if (existing && args.overwrite !== true) {
      return fail(
        `${path} already exists (${byteLength(existing.content)} bytes, revision ${existing.revision}). Pass overwrite: true to replace its whole content, or choose another path.`,
      );
    }
    const node = store(state, path, content);
    return succeed({ path, size: bytes, revision: node.revision!, created: !existing });
  },

  edit(state, args) {
    const problem = checkPath(args.path, 'path');
    if (problem) return fail(problem);
    const path = args.path as string;
    const node = lookup(state, path);
    if (!node) return fail(missing(state, path, 'file'));
    if (isReadOnly(path)) return fail(readOnly(path, 'edit'));
    if (node.type !== 'file') return fail(`${path} is a folder; edit works on files.`);
    const oldText = args.old_text as string;
    const newText = args.new_text as string;
    const occurrences = node.content.split(oldText).length - 1;
    if (occurrences === 0) return fail(`old_text was not found in ${path}; read the file and copy the exact text, whitespace included.`);
    if (occurrences > 1 && args.replace_all !== true) {
      return fail(`old_text occurs ${occurrences} times in ${path}; include more surrounding text so it occurs once, or pass replace_all: true.`);
    }
    const content = node.content.split(oldText).join(newText);
    const bytes = byteLength(content);
    if (bytes > MAX_FILE_BYTES) return fail(`the edited file would be ${bytes} bytes; a file holds at most ${MAX_FILE_BYTES} bytes.`);
    const stored = store(state, path, content);
    return succeed({ path, replacements: occurrences, size: bytes, revision: stored.revision! });
  },

  copy(state, args) {
    const problem = checkPath(args.source, 'source') ?? checkPath(args.target, 'target');
    if (problem) return fail(problem);
    const source = args.source as string;
    const target = args.target as string;
    const node = lookup(state, source);
    if (!node) return fail(missing(state, source, 'file'));
    if (node.type !== 'file') return fail(`${source} is a folder; copy works on single files.`);
    if (source === target) return fail('source and target are the same path; give the copy another path.');
    const placement = placementProblem(state, target, 'copy to');
    if (placement) return fail(placement);
    const existing = state.nodes.get(target);
    if (existing?.type === 'dir') return fail(`${target} is a folder; give the full path of the copy, e.g. ${target}/${nameOf(source)}.`);
    if (existing && args.overwrite !== true) {
      return fail(`${target} already exists (${byteLength(existing.content)} bytes, revision ${existing.revision}). Pass overwrite: true to replace it, or choose another target.`);
    }
    const stored = store(state, target, node.content);
    return succeed({ source, target, size: byteLength(stored.content), revision: stored.revision!, overwritten: existing !== undefined });
  },

  move(state, args) {
    const problem = checkPath(args.source, 'source') ?? checkPath(args.target, 'target');
    if (problem) return fail(problem);
    const source = args.source as string;
    const target = args.target as string;
    if (source === ROOT) return fail('Cannot move /: it is the root folder.');
    const node = state.nodes.get(source);
    if (!node) return fail(missing(state, source));
    if (isReadOnly(source)) return fail(readOnly(source, 'move'));
    if (source === target) return fail('source and target are the same path.');
    if (isInside(target, source)) return fail(`Cannot move ${source} into itself (${target} is inside it).`);
    const placement = placementProblem(state, target, 'move to');
    if (placement) return fail(placement);
    if (state.nodes.has(target)) {
      return fail(`${target} already exists; move never replaces anything. Give the full new path${node.type === 'file' ? `, e.g. ${target}/${nameOf(source)} to move it into that folder` : ''}, or delete the target first.`);
    }
    const moving = [node, ...descendantsOf(state, source)];
    for (const moved of moving) state.nodes.delete(moved.path);
    for (const moved of moving) {
      moved.path = target + moved.path.slice(source.length);
      state.nodes.set(moved.path, moved);
    }
    sortedMap(state);
    tick(state);
    return succeed({ source, target, type: node.type, size: node.type === 'file' ? byteLength(node.content) : 0, entries_moved: moving.length });
  },

  delete(state, args) {
    const paths = args.paths as string[];
    const problems: string[] = [];
    for (const path of paths) {
      const problem = checkPath(path, 'paths');
      if (problem) {
        problems.push(problem);
        continue;
      }
      if (path === ROOT) {
        problems.push('/ is the root folder and cannot be deleted');
        continue;
      }
      const node = state.nodes.get(path);
      if (!node) problems.push(`${path} does not exist`);
      else if (isReadOnly(path)) problems.push(`${path} is under ${READ_ONLY_ROOT}, which is read-only`);
      else if (node.type === 'dir' && args.recursive !== true) {
        const count = childrenOf(state, path).length;
        if (count > 0) problems.push(`${path} is a folder with ${count} entr${count === 1 ? 'y' : 'ies'}; pass recursive: true to delete it with everything inside`);
      }
    }
    if (problems.length > 0) return fail(`Nothing was deleted: ${problems.join('; ')}.`);
    let removed = 0;
    for (const path of paths) {
      if (!state.nodes.has(path)) continue; // already gone with a folder listed before it
      for (const node of [state.nodes.get(path)!, ...descendantsOf(state, path)]) {
        state.nodes.delete(node.path);
        removed++;
      }
    }
    tick(state);
    return succeed({ deleted: [...paths], entries_removed: removed });
  },

  mkdir(state, args) {
    const problem = checkPath(args.path, 'path');
    if (problem) return fail(problem);
    const path = args.path as string;
    if (isReadOnly(path)) return fail(readOnly(path, 'create'));
    const existing = lookup(state, path);
    if (existing) {
      if (existing.type === 'dir' && args.parents === true) return succeed({ path, created: [] });
      return fail(`${path} already exists (a ${existing.type === 'dir' ? 'folder' : 'file'}).${existing.type === 'dir' ? ' Pass parents: true to accept an existing folder.' : ''}`);
    }
    const chain: string[] = [];
    for (let current = path; !lookup(state, current); current = parentOf(current)) chain.unshift(current);
    const blocker = lookup(state, parentOf(chain[0]!))!;
    if (blocker.type !== 'dir') return fail(`Cannot create ${path}: ${blocker.path} is a file, not a folder.`);
    if (chain.length > 1 && args.parents !== true) {
      return fail(`Cannot create ${path}: its parent ${parentOf(path)} does not exist. Pass parents: true to create the missing folders too.`);
    }
    const now = tick(state);
    for (const created of chain) state.nodes.set(created, { path: created, type: 'dir', content: '', modified: now, revision: null, tags: [] });
    sortedMap(state);
    return succeed({ path, created: chain });
  },
};

function snapshotNode(node: FileNode): JsonValue {
  return {
    key: keyOf(node.path),
    path: node.path,
    dir: parentOf(node.path),
    name: nameOf(node.path),
    type: node.type,
    extension: node.type === 'file' ? extensionOf(node.path) : '',
    size: node.type === 'file' ? byteLength(node.content) : 0,
    modified_at: timestamp(node.modified),
    revision: node.revision,
    readonly: isReadOnly(node.path),
    content: node.type === 'file' ? node.content : null,
    lines: node.type === 'file' ? splitLines(node.content).map((text, index) => ({ n: index + 1, text })) : [],
    tags: [...node.tags],
  };
}

export const filesWorld: World<FilesState> = {
  name: 'files',
  version: '1.0.0',
  description:
    'A virtual file tree of a small project workspace (never the real disk): list, find, read, grep, write, edit, copy, move, delete and mkdir, with a read-only /etc.',
  tools: FILES_TOOLS,
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  init(random) {
    return generateFilesState(random);
  },
  call: dispatchTo('files', handlers),
  snapshot(state): JsonValue {
    // Keyed by path with ":" for "/" so JSON pointers can name a file; a deep
    // copy throughout (snapshotNode builds new values, so only the rest is copied).
    const files: Record<string, JsonValue> = {};
    const keyed = [...state.nodes.values()].map((node) => ({ key: keyOf(node.path), node }));
    for (const { key, node } of keyed.sort((left, right) => compareText(left.key, right.key))) files[key] = snapshotNode(node);
    return {
      project: state.project,
      organisation: state.organisation,
      clock: state.clock,
      salt: state.salt,
      files,
      planted: copyPlain(state.planted as unknown as JsonValue),
    };
  },
};
