// Holds the code to the design's boundaries: dependencies point one way, the
// code that acts (policy, runner) cannot reach hidden predicates or task
// parameters, and nothing reads the clock or Math.random where it could reach
// a record.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './helpers.js';

const SOURCE = join(REPO_ROOT, 'src');

function sourceFiles(directory = SOURCE): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(directory, entry.name)) : entry.name.endsWith('.ts') ? [join(directory, entry.name)] : [],
  );
}

const moduleOf = (path: string) => relative(SOURCE, path).split('/')[0]!;

const ARCHITECTURE = join(REPO_ROOT, 'docs', 'architecture.md');

/**
 * Which folders each folder may import (besides itself), read from the table
 * in docs/architecture.md, so the page and the code cannot disagree.
 */
function allowedImports(): Record<string, string[]> {
  const allowed: Record<string, string[]> = {};
  for (const line of readFileSync(ARCHITECTURE, 'utf8').split('\n')) {
    const row = /^\| `([a-z-]+)\/` \| .+ \| (.+) \|$/.exec(line);
    if (!row) continue;
    const folder = row[1]!;
    const may = row[2]!.trim();
    allowed[folder] = may === 'nothing' ? [] : may === 'every folder above' ? Object.keys(allowed) : [...may.matchAll(/`([a-z-]+)`/g)].map((match) => match[1]!);
  }
  return allowed;
}

const ALLOWED = allowedImports();

describe('architecture', () => {
  it('names every folder of src/ in docs/architecture.md, and only those, each importing only folders listed above it', () => {
    const folders = readdirSync(SOURCE, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
    assert.deepEqual(Object.keys(ALLOWED).sort(), folders, 'the table of folders in docs/architecture.md');
    const order = Object.keys(ALLOWED);
    for (const [folder, may] of Object.entries(ALLOWED)) {
      for (const target of may) assert.ok(order.indexOf(target) < order.indexOf(folder), `${folder} may import ${target}, which the table lists after it`);
    }
  });

  it('names only paths that exist in docs/architecture.md', () => {
    const named = [...readFileSync(ARCHITECTURE, 'utf8').matchAll(/`((?:src|tests|schemas)\/[^`\s]+)`/g)].map((match) => match[1]!);
    assert.ok(named.length > 5);
    assert.deepEqual(named.filter((path) => !existsSync(join(REPO_ROOT, path))), []);
  });

  it('keeps every import inside the allowed direction of dependencies', () => {
    const violations: string[] = [];
    for (const file of sourceFiles()) {
      const from = moduleOf(file);
      assert.ok(ALLOWED[from], `unknown folder ${from} (${relative(REPO_ROOT, file)}): add it to the table in docs/architecture.md first`);
      // Static imports and re-exports (`from '…'`) and dynamic ones (`import('…')`) alike.
      for (const match of readFileSync(file, 'utf8').matchAll(/(?:from |import\()'(\.[^']+)'/g)) {
        const target = moduleOf(join(file, '..', match[1]!));
        if (target !== from && !ALLOWED[from]!.includes(target)) violations.push(`${relative(REPO_ROOT, file)} imports ${target}`);
      }
    }
    assert.deepEqual(violations, []);
  });

  it('never uses Math.random or the current time outside traces and limits', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles()) {
      const text = readFileSync(file, 'utf8');
      if (/Math\.random\s*\(/.test(text)) offenders.push(`${relative(REPO_ROOT, file)}: Math.random`);
      // The engine's answers carry the server's time, as Ollama's do; a policy never writes them into a record.
      const servesTime = relative(SOURCE, file) === 'engine/http-exchange.ts';
      if (!servesTime && /Date\.now\s*\(|new Date\(\s*\)/.test(text)) offenders.push(`${relative(REPO_ROOT, file)}: reads the date`);
    }
    assert.deepEqual(offenders, []);
  });

  it('has no import circles between files: a circle is two concepts that should be one, or a third cut out of both', () => {
    const files = sourceFiles();
    const known = new Set(files);
    const imports = new Map(
      files.map((file) => [file, [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)\.js'/g)].map((match) => join(file, '..', `${match[1]!}.ts`)).filter((target) => known.has(target))]),
    );
    // Depth-first search: a file met again while it is still on the path closes a circle.
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]) => {
      state.set(file, 'open');
      for (const target of imports.get(file)!) {
        if (state.get(target) === 'open') circles.push([...path.slice(path.indexOf(target)), file, target].map((entry) => relative(SOURCE, entry)).join(' -> '));
        else if (!state.has(target)) visit(target, [...path, file]);
      }
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file, []);
    assert.deepEqual(circles, []);
  });

  it('gives every module a header comment saying what it owns', () => {
    const missing = sourceFiles().filter((file) => !readFileSync(file, 'utf8').startsWith('//'));
    assert.deepEqual(missing.map((file) => relative(REPO_ROOT, file)), []);
  });

  it('keeps every file of src/ to 500 lines at most: a longer one holds more than one concept', () => {
    const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const tooLong = sourceFiles()
      .map((file) => ({ file: relative(REPO_ROOT, file), lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter(({ lines }) => lines > 500)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    assert.deepEqual(tooLong, [], 'split these along their concepts');
  });
});
