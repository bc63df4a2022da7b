// Holds the README and the pages under docs/ to what they point at: every
// relative link reaches a file and every #anchor a heading of it (GitHub's
// slugs), every source, test or script path it names exists, every
// `episode-factory` command line in a code block names a real
// command with real flags of the real commander program, and the README stays
// a short front door with its quick start on the first screen, and every page
// of docs/ starts from a command that runs.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli/main.js';
import type { Streams } from '../src/cli/output.js';
import { REPO_ROOT } from './helpers.js';

const DOCS = join(REPO_ROOT, 'docs');
const PAGES = [join(REPO_ROOT, 'README.md'), ...readdirSync(DOCS).filter((name) => name.endsWith('.md')).sort().map((name) => join(DOCS, name))];

interface Line {
  text: string;
  number: number;
  code: boolean;
}

/** Each line of a Markdown file, marked when it sits inside a fenced code block (the fences count as code). */
function markdownLines(path: string): Line[] {
  let fence: string | undefined;
  return readFileSync(path, 'utf8').split('\n').map((text, index) => {
    const opening = /^\s*(```+|~~~+)/.exec(text);
    if (opening !== null) {
      const marker = opening[1]!;
      if (fence === undefined) fence = marker;
      else if (marker.startsWith(fence)) fence = undefined;
      return { text, number: index + 1, code: true };
    }
    return { text, number: index + 1, code: fence !== undefined };
  });
}

/** GitHub's heading anchor: lower case, punctuation but `-`, `_` and spaces dropped, spaces made `-`. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a file's headings make, a repeated heading numbered as GitHub numbers it (`-1`, `-2`, …). */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of markdownLines(path)) {
    const heading = line.code ? null : /^#{1,6} (.*)$/.exec(line.text);
    if (heading === null) continue;
    const slug = slugOf(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every link target outside code blocks and inline code, with where it was written. */
function linksOf(path: string): { target: string; where: string }[] {
  const links: { target: string; where: string }[] = [];
  for (const line of markdownLines(path)) {
    if (line.code) continue;
    const prose = line.text.replace(/`[^`]*`/g, '``');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ target: match[1]!, where: `${relative(REPO_ROOT, path)}:${line.number}` });
    }
  }
  return links;
}

/** What is wrong with one link, or undefined when it resolves. */
function linkProblem(from: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: — not this repository's
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = file === '' ? from : join(dirname(from), decodeURIComponent(file));
  const name = relative(REPO_ROOT, path);
  if (!existsSync(path)) return `${target}: no file ${name}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!statSync(path).isFile() || !path.endsWith('.md')) return `${target}: an anchor into ${name}, which is not a Markdown page`;
  return anchorsOf(path).has(anchor) ? undefined : `${target}: ${name} has no heading whose anchor is #${anchor}`;
}

/** The command lines of code blocks: continuation lines joined, comments cut, split at && || ; | so each segment is one command. */
function commandLines(path: string): { command: string; where: string }[] {
  const found: { command: string; where: string }[] = [];
  const lines = markdownLines(path);
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (!line.code || /^\s*(```|~~~)/.test(line.text)) continue;
    let text = line.text;
    while (text.trimEnd().endsWith('\\') && lines[index + 1]?.code) text = text.trimEnd().slice(0, -1) + ' ' + lines[++index]!.text.trim();
    const withoutComment = text.replace(/(^|\s)#.*$/, '');
    for (const segment of withoutComment.split(/&&|\|\||;|\|/)) {
      const command = segment.trim().replace(/^(do|then)\s+/, '');
      // `episode-factory merge: required option …` is the program's own output quoted, not a command line.
      if (/^(npx )?episode-factory(\s|$)/.test(command) && !/^(npx )?episode-factory \S+:(\s|$)/.test(command)) found.push({ command, where: `${relative(REPO_ROOT, path)}:${line.number}` });
    }
  }
  return found;
}

/** The repository paths a text names under the folders whose files move with the code (lanes and datasets a reader makes are left alone). */
function missingPaths(text: string): string[] {
  const named = text.match(/\b(?:src|tests|scripts|schemas|bench|clients|examples)\/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*]/g) ?? [];
  return [...new Set(named)].filter((path) => !pathExists(path));
}

/** Whether a path exists; a `*` in its last part stands for any characters, as in `tests/policy/model-*.test.ts`. */
function pathExists(path: string): boolean {
  if (!path.includes('*')) return existsSync(join(REPO_ROOT, path));
  if (dirname(path).includes('*')) return existsSync(join(REPO_ROOT, path.slice(0, path.indexOf('*')))); // a pattern over folders: its fixed start
  const folder = join(REPO_ROOT, dirname(path));
  const pattern = new RegExp(`^${path.slice(dirname(path).length + 1).split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return existsSync(folder) && readdirSync(folder).some((name) => pattern.test(name));
}

/** Each path a page names that is not in the repository, with the page and line. */
function pathProblems(page: string): string[] {
  return markdownLines(page).flatMap((line) => missingPaths(line.text).map((path) => `${relative(REPO_ROOT, page)}:${line.number}: names ${path}, which does not exist`));
}

const silent: Streams = { stdout: new Writable({ write: (_chunk, _encoding, done) => done() }), stderr: new Writable({ write: (_chunk, _encoding, done) => done() }) };
const programs = new Map<string, Promise<Command>>();

/** The real program, with only the named command loaded (as main() loads it), built once per command. */
function programFor(name: string): Promise<Command> {
  let program = programs.get(name);
  if (program === undefined) {
    program = buildProgram(silent, () => {}, name);
    programs.set(name, program);
  }
  return program;
}

const named = (command: Command, name: string) => command.commands.find((sub) => sub.name() === name || sub.aliases().includes(name));
const ALWAYS = new Set(['--help', '-h']); // commander's help option, on every command

/** What is wrong with one `episode-factory …` command line, or an empty list. */
async function commandProblems(line: string): Promise<string[]> {
  const words = line.replace(/^npx\s+/, '').split(/\s+/).filter((word) => word !== '').slice(1);
  const end = words.indexOf('--'); // what follows a bare -- is another program's command line (proxy)
  const own = end === -1 ? words : words.slice(0, end);
  const positional = own.filter((word) => !word.startsWith('-'));
  if (positional.length === 0) return own.every((word) => ALWAYS.has(word) || ['--version', '-V'].includes(word)) ? [] : [`${line}: names no command`];
  const program = await programFor(positional[0]!);
  let command = named(program, positional[0]!);
  if (command === undefined) return [`${line}: no command "${positional[0]}"`];
  if (command.commands.length > 0 && positional[1] !== undefined && positional[1] !== 'help') {
    const sub = named(command, positional[1]);
    if (sub === undefined) return [`${line}: "${positional[0]}" has no subcommand "${positional[1]}" (it has ${command.commands.map((each) => each.name()).join(', ')})`];
    command = sub;
  }
  const known = new Set<string>(ALWAYS);
  for (let at: Command | null = command; at !== null; at = at.parent) {
    for (const option of at.options) for (const flag of [option.long, option.short]) if (flag) known.add(flag);
  }
  const problems: string[] = [];
  for (const word of own) {
    if (!word.startsWith('-') || /^-\d/.test(word)) continue;
    const flag = word.split('=', 1)[0]!;
    if (!known.has(flag)) problems.push(`${line}: "${positional[0]}${command === named(program, positional[0]!) ? '' : ' ' + command.name()}" has no option ${flag}`);
  }
  return problems;
}

describe('the documentation', () => {
  it('finds the README and the docs pages', () => {
    const names = PAGES.map((path) => relative(REPO_ROOT, path));
    for (const page of ['README.md', 'docs/faults.md', 'docs/models.md', 'docs/development.md']) assert.ok(names.includes(page), page);
  });

  it('reads anchors as GitHub writes them', () => {
    assert.equal(slugOf('A real engine here: a tiny model through llama.cpp (`episode-factory engine`)'), 'a-real-engine-here-a-tiny-model-through-llamacpp-episode-factory-engine');
    assert.equal(slugOf('What `npm test` needs'), 'what-npm-test-needs');
    assert.equal(slugOf('Speed: a kept child per worker'), 'speed-a-kept-child-per-worker');
  });

  it('has every relative link reach a file, and every #anchor a heading of that file', () => {
    const problems: string[] = [];
    for (const page of PAGES) {
      for (const link of linksOf(page)) {
        const problem = linkProblem(page, link.target);
        if (problem !== undefined) problems.push(`${link.where}: ${problem}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('finds a broken link and a broken anchor', () => {
    const readme = join(REPO_ROOT, 'README.md');
    assert.match(linkProblem(readme, 'docs/no-such-page.md') ?? '', /no file docs\/no-such-page\.md/);
    assert.match(linkProblem(readme, 'docs/faults.md#no-such-heading') ?? '', /has no heading whose anchor is #no-such-heading/);
    assert.equal(linkProblem(readme, 'docs/faults.md#the-fault-proxy'), undefined);
  });

  it('names only source, test and script paths that exist', () => {
    const problems = PAGES.flatMap((page) => pathProblems(page));
    assert.deepEqual(problems, []);
  });

  it('finds a path that is gone', () => {
    assert.deepEqual(missingPaths('see `src/world/world-contract.ts`, tests/docs.test.ts and `tests/world/*-world.test.ts`.'), []);
    assert.deepEqual(missingPaths('`tests/world/*-planet.test.ts`'), ['tests/world/*-planet.test.ts']);
    assert.deepEqual(missingPaths('the old `src/factory/no-such-module.ts` (and tests/factory/no-such-module.test.ts)'), ['src/factory/no-such-module.ts', 'tests/factory/no-such-module.test.ts']);
  });

  it('names only real commands, subcommands and flags in its command lines', async () => {
    const lines = PAGES.flatMap(commandLines);
    assert.ok(lines.length > 50, `found ${lines.length} command lines`);
    const problems: string[] = [];
    for (const { command, where } of lines) for (const problem of await commandProblems(command)) problems.push(`${where}: ${problem}`);
    assert.deepEqual(problems, []);
  });

  it('refuses a misspelt flag, an unknown command and an unknown subcommand', async () => {
    assert.match((await commandProblems('npx episode-factory generate tool-world-v1 --sedes 0..9')).join(), /"generate" has no option --sedes/);
    assert.match((await commandProblems('npx episode-factory lanes check issues-v1 --seed 0..2')).join(), /"lanes check" has no option --seed/);
    assert.match((await commandProblems('episode-factory genrate tool-world-v1')).join(), /no command "genrate"/);
    assert.match((await commandProblems('npx episode-factory lanes lst')).join(), /"lanes" has no subcommand "lst"/);
    assert.deepEqual(await commandProblems('npx episode-factory lanes check issues-v1 --seeds 0..2 --json --help'), []);
    assert.deepEqual(await commandProblems('npx episode-factory proxy --faults plan.json -- npx -y some-server --port 3'), []);
  });

  it('starts every page of docs/ from a command that runs, within its first screen', () => {
    const late = PAGES.filter((page) => page.startsWith(DOCS)).filter((page) => {
      const opening = markdownLines(page).slice(0, 15);
      return !opening.some((line) => line.code && /^\s*(npx episode-factory|episode-factory|npm|node) /.test(line.text));
    });
    assert.deepEqual(late.map((page) => relative(REPO_ROOT, page)), []);
  });

  it('keeps the README a front door: at most 200 lines, the quick start within the first 60', () => {
    const lines = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n');
    assert.ok(lines.length <= 200, `README.md has ${lines.length} lines`);
    const heading = lines.findIndex((line) => /^## Quick start/.test(line));
    assert.ok(heading !== -1 && heading < 60, `the quick start heading is at line ${heading + 1}`);
    const firstScreen = lines.slice(0, 60).join('\n');
    assert.ok(firstScreen.includes('npm ci && npx episode-factory generate tool-world-v1'), 'the install-and-generate command is on the first screen');
    assert.match(firstScreen, /^npm test(\s|$)/m, 'npm test, the command CI runs, is on the first screen');
  });
});
