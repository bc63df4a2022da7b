// Holds the code to the design's boundaries: dependencies point one way, the
// code that acts (policy, runner) cannot reach hidden predicates or task
// parameters, and nothing reads the clock or Math.random where it could reach
// a record.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
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

/** Which modules each module may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  core: [],
  records: ['core'],
  world: ['core'],
  policy: ['core'],
  models: ['core'],
  runner: ['core', 'records', 'world', 'policy'],
  lanes: ['core', 'records', 'world', 'policy', 'runner'],
  verify: ['core', 'records', 'world', 'policy', 'runner', 'lanes'],
  // Dataset operations work on records alone.
  dataset: ['core', 'records', 'models'],
  factory: ['core', 'records', 'world', 'policy', 'runner', 'lanes', 'verify', 'dataset', 'models'],
  // The inference engine serves a model over Ollama's and OpenAI's APIs; it reads and writes with the policies' codecs.
  engine: ['core', 'policy'],
  cli: ['core', 'records', 'world', 'policy', 'runner', 'lanes', 'verify', 'factory', 'dataset', 'engine', 'models'],
};

describe('architecture', () => {
  it('keeps every import inside the allowed direction of dependencies', () => {
    const violations: string[] = [];
    for (const file of sourceFiles()) {
      const from = moduleOf(file);
      assert.ok(ALLOWED[from], `unknown module ${from} (${relative(REPO_ROOT, file)}): add it to the design first`);
      for (const match of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
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
});
