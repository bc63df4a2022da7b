// Owns the files world's tool catalog: names, descriptions and the JSON
// Schemas (draft 2020-12) of inputs and outputs that clients see in tools/list,
// and the claim patterns that tie a final answer's sentences to the tools.

import type { JsonObject } from '../../core/json-value.js';
import type { ToolSpec } from '../world-contract.js';
import { claimSubject } from '../claim-subject.js';
import { objectSchema } from '../tool-schema.js';
import { MAX_FILE_BYTES } from './files-state.js';

/** Absolute POSIX path: "/" or "/seg/seg…", each segment of letters, digits, ".", "_", "-", never "." or "..". */
export const PATH_PATTERN = '^(?:/|(?:/(?!\\.\\.?(?:/|$))[A-Za-z0-9._-]{1,64})+)$';

const path = (description: string): JsonObject => ({ type: 'string', pattern: PATH_PATTERN, maxLength: 255, description });
const glob = (description: string): JsonObject => ({
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9._*?-]+$',
  description: `${description} Matched against file names only (not folders): "*" is any run of characters, "?" one character.`,
});

const CLAIM_SUBJECT = claimSubject('successfully');

const timestampField: JsonObject = { type: 'string', format: 'date-time' };
const revisionField: JsonObject = { type: 'string', pattern: '^r[0-9a-f]{10}$' };

const entry: JsonObject = {
  type: 'object',
  required: ['path', 'name', 'type', 'size', 'modified_at', 'readonly', 'revision'],
  properties: {
    path: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: ['file', 'dir'] },
    size: { type: 'integer', minimum: 0, description: 'Bytes of content; 0 for a folder.' },
    modified_at: timestampField,
    readonly: { type: 'boolean' },
    revision: { anyOf: [revisionField, { type: 'null' }] },
    children: { type: 'integer', minimum: 0, description: 'Entries directly inside a folder.' },
  },
};

const line: JsonObject = objectSchema({ n: { type: 'integer', minimum: 1 }, text: { type: 'string' } }, ['n', 'text']);

export const FILES_TOOLS: readonly ToolSpec[] = [
  {
    name: 'ls',
    claims: [`${CLAIM_SUBJECT}(?:listed|looked through)\\b`],
    annotations: { readOnlyHint: true },
    description:
      'List a folder: its entries (path, name, type, size in bytes, modified_at, readonly, revision) in path order. ' +
      'With recursive: true, everything below it, down to `depth` levels (1 is the same as not recursive). ' +
      'Listing a file returns that one entry.',
    inputSchema: objectSchema(
      {
        path: path('The folder to list, e.g. /workspace.'),
        recursive: { type: 'boolean', default: false, description: 'Also list everything inside sub-folders.' },
        depth: { type: 'integer', minimum: 1, maximum: 16, description: 'How many levels to descend; only with recursive: true.' },
      },
      ['path'],
    ),
    outputSchema: objectSchema({ path: { type: 'string' }, entries: { type: 'array', items: entry }, total: { type: 'integer', minimum: 0 } }, [
      'path',
      'entries',
      'total',
    ]),
  },
  {
    name: 'find',
    claims: [`${CLAIM_SUBJECT}(?:searched for|looked for)\\s+(?:the\\s+)?files\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Find entries anywhere below a folder (recursive), filtered by file-name glob, an exclusion glob, type and ' +
      'a last-modified window, sorted by path (default), newest or oldest first, or largest first. Returns at most `limit` ' +
      'entries and the total that matched.',
    inputSchema: objectSchema(
      {
        path: path('The folder to search below, e.g. /workspace/logs.'),
        name_glob: glob('Only entries whose name matches, e.g. "*.log".'),
        exclude_glob: glob('Leave out entries whose name matches, e.g. "*.bak".'),
        type: { type: 'string', enum: ['file', 'dir'], description: 'Only files or only folders.' },
        modified: objectSchema(
          {
            before: { type: 'string', format: 'date-time', description: 'Only entries last modified strictly before this time, e.g. 2026-03-01T00:00:00Z.' },
            after: { type: 'string', format: 'date-time', description: 'Only entries last modified at or after this time.' },
          },
          [],
          { minProperties: 1, description: 'A window on the last-modified time; give before, after or both.' },
        ),
        sort: { type: 'string', enum: ['path', 'newest', 'oldest', 'largest'], default: 'path' },
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 100, description: 'Maximum entries to return (1-200).' },
      },
      ['path'],
    ),
    outputSchema: objectSchema(
      {
        path: { type: 'string' },
        entries: { type: 'array', items: entry },
        total: { type: 'integer', minimum: 0 },
        truncated: { type: 'boolean' },
      },
      ['path', 'entries', 'total', 'truncated'],
    ),
  },
  {
    name: 'read',
    claims: [`${CLAIM_SUBJECT}(?:read|opened)\\s+(?:the\\s+)?(?:file|lines?)\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Read a text file, whole or a range of lines (1-based, inclusive; an end past the last line stops at the last line). ' +
      'Returns the exact text of those lines as `content`, each line numbered in `lines`, the file\'s total_lines and revision.',
    inputSchema: objectSchema(
      {
        path: path('The file to read, e.g. /workspace/README.md.'),
        start_line: { type: 'integer', minimum: 1, maximum: 100000, description: 'First line to return (default 1).' },
        end_line: { type: 'integer', minimum: 1, maximum: 100000, description: 'Last line to return (default: the last line).' },
      },
      ['path'],
    ),
    outputSchema: objectSchema(
      {
        path: { type: 'string' },
        content: { type: 'string' },
        lines: { type: 'array', items: line },
        start_line: { type: 'integer', minimum: 1 },
        end_line: { type: 'integer', minimum: 0 },
        total_lines: { type: 'integer', minimum: 0 },
        size: { type: 'integer', minimum: 0 },
        revision: revisionField,
      },
      ['path', 'content', 'lines', 'start_line', 'end_line', 'total_lines', 'size', 'revision'],
    ),
  },
  {
    name: 'grep',
    claims: [`${CLAIM_SUBJECT}(?:searched|grepped)\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Search file contents line by line below a folder (or in one file) for a JavaScript regular expression, or for ' +
      'literal text with literal: true. Optionally only files whose name matches `glob`. Matches come in path order, then ' +
      'line order: path, line number and the whole line text.',
    inputSchema: objectSchema(
      {
        pattern: { type: 'string', minLength: 1, maxLength: 200, description: 'A regular expression such as "^LEDGER_API_KEY=", or literal text.' },
        path: path('Folder to search below, or a single file (default /).'),
        literal: { type: 'boolean', default: false, description: 'Treat the pattern as plain text, not a regular expression.' },
        ignore_case: { type: 'boolean', default: false },
        glob: glob('Only search files whose name matches, e.g. "*.env".'),
        max_results: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Maximum matches to return (1-200).' },
      },
      ['pattern'],
    ),
    outputSchema: objectSchema(
      {
        matches: {
          type: 'array',
          items: objectSchema({ path: { type: 'string' }, line: { type: 'integer', minimum: 1 }, text: { type: 'string' } }, ['path', 'line', 'text']),
        },
        total: { type: 'integer', minimum: 0 },
        truncated: { type: 'boolean' },
        files_searched: { type: 'integer', minimum: 0 },
      },
      ['matches', 'total', 'truncated', 'files_searched'],
    ),
  },
  {
    name: 'write',
    claims: [
      `${CLAIM_SUBJECT}(?:wrote|written|saved|overwrote|overwritten|appended)\\b`,
      `${CLAIM_SUBJECT}created\\s+(?:the\\s+|a\\s+|new\\s+)*file\\b`,
      '^(?:wrote|saved|overwrote|appended)\\b',
      '^created\\s+(?:the\\s+|a\\s+|new\\s+)*file\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description:
      `Create a file, or replace an existing file's whole content with overwrite: true (without it, writing to an existing ` +
      `file fails). The parent folder must already exist (see mkdir). At most ${MAX_FILE_BYTES} bytes. Everything under /etc is ` +
      'read-only. Returns the new size and revision.',
    inputSchema: objectSchema(
      {
        path: path('The file to write, e.g. /workspace/notes/plan.md.'),
        content: { type: 'string', maxLength: MAX_FILE_BYTES, description: 'The complete new content of the file.' },
        overwrite: { type: 'boolean', default: false, description: 'Replace the file if it exists; otherwise an existing file is an error.' },
      },
      ['path', 'content'],
    ),
    outputSchema: objectSchema(
      { path: { type: 'string' }, size: { type: 'integer', minimum: 0 }, revision: revisionField, created: { type: 'boolean' } },
      ['path', 'size', 'revision', 'created'],
    ),
  },
  {
    name: 'edit',
    claims: [`${CLAIM_SUBJECT}(?:edited|updated|changed|replaced)\\b`, '^(?:edited|updated|changed|replaced)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description:
      'Replace exact text in a file. `old_text` must occur exactly once, unless replace_all: true replaces every occurrence; ' +
      'copy it from read or grep output, whitespace included. Everything under /etc is read-only.',
    inputSchema: objectSchema(
      {
        path: path('The file to edit.'),
        old_text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The exact text to replace.' },
        new_text: { type: 'string', maxLength: 4000, description: 'What to put in its place (may be empty).' },
        replace_all: { type: 'boolean', default: false },
      },
      ['path', 'old_text', 'new_text'],
    ),
    outputSchema: objectSchema(
      { path: { type: 'string' }, replacements: { type: 'integer', minimum: 1 }, size: { type: 'integer', minimum: 0 }, revision: revisionField },
      ['path', 'replacements', 'size', 'revision'],
    ),
  },
  {
    name: 'copy',
    claims: [`${CLAIM_SUBJECT}(?:copied|duplicated|backed up)\\b`, '^(?:copied|duplicated|backed up)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description:
      'Copy one file to a new path (give the full target path, not a folder). Fails if the target exists unless ' +
      'overwrite: true; the target folder must exist. Files under /etc can be copied out but nothing can be copied into /etc.',
    inputSchema: objectSchema(
      {
        source: path('The file to copy.'),
        target: path('The full path of the copy, e.g. /workspace/config/app.env.bak.'),
        overwrite: { type: 'boolean', default: false, description: 'Replace the target if it exists.' },
      },
      ['source', 'target'],
    ),
    outputSchema: objectSchema(
      {
        source: { type: 'string' },
        target: { type: 'string' },
        size: { type: 'integer', minimum: 0 },
        revision: revisionField,
        overwritten: { type: 'boolean' },
      },
      ['source', 'target', 'size', 'revision', 'overwritten'],
    ),
  },
  {
    name: 'move',
    claims: [`${CLAIM_SUBJECT}(?:moved|renamed|archived)\\b`, '^(?:moved|renamed|archived)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Move or rename a file or folder (a folder moves with everything inside it). `target` is the full new path, not a ' +
      'folder to move into. Fails if the source is missing or the target already exists. Nothing under /etc can be moved.',
    inputSchema: objectSchema(
      {
        source: path('What to move, e.g. /workspace/docs/draft.md.'),
        target: path('Its full new path, e.g. /workspace/docs/final.md.'),
      },
      ['source', 'target'],
    ),
    outputSchema: objectSchema(
      {
        source: { type: 'string' },
        target: { type: 'string' },
        type: { type: 'string', enum: ['file', 'dir'] },
        size: { type: 'integer', minimum: 0 },
        entries_moved: { type: 'integer', minimum: 1 },
      },
      ['source', 'target', 'type', 'size', 'entries_moved'],
    ),
  },
  {
    name: 'delete',
    claims: [`${CLAIM_SUBJECT}(?:deleted|removed|erased)\\b`, '^(?:deleted|removed|erased)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description:
      'Delete files or folders, all or nothing: if any path is missing or not allowed, nothing is deleted. An empty folder ' +
      'can be deleted as is; a folder with entries only with recursive: true, which deletes everything inside it. ' +
      'Nothing under /etc can be deleted.',
    inputSchema: objectSchema(
      {
        paths: {
          type: 'array',
          minItems: 1,
          maxItems: 50,
          uniqueItems: true,
          items: path('A file or folder to delete.'),
          description: 'Absolute paths to delete (1-50).',
        },
        recursive: { type: 'boolean', default: false, description: 'Allow deleting folders that still have entries.' },
      },
      ['paths'],
    ),
    outputSchema: objectSchema(
      {
        deleted: { type: 'array', items: { type: 'string' } },
        entries_removed: { type: 'integer', minimum: 1 },
      },
      ['deleted', 'entries_removed'],
    ),
  },
  {
    name: 'mkdir',
    claims: [
      `${CLAIM_SUBJECT}(?:created|made)\\s+(?:the\\s+|a\\s+|new\\s+)*(?:folder|directory)\\b`,
      '^(?:created|made)\\s+(?:the\\s+|a\\s+|new\\s+)*(?:folder|directory)\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Create a folder. Its parent must exist unless parents: true, which also creates missing parents and accepts a ' +
      'folder that already exists. Nothing can be created under /etc.',
    inputSchema: objectSchema(
      {
        path: path('The folder to create, e.g. /workspace/archive.'),
        parents: { type: 'boolean', default: false, description: 'Create missing parent folders too; an existing folder is then not an error.' },
      },
      ['path'],
    ),
    outputSchema: objectSchema({ path: { type: 'string' }, created: { type: 'array', items: { type: 'string' } } }, ['path', 'created']),
  },
];
