// `worlds init` through the installed command, against the real server
// packages installed here: the catalog it writes is the live tools/list byte
// for byte, the definition loads and `worlds show` serves it from the working
// directory, a server that wants its root gets it on the second try, the
// guessed guards of git-mcp-server name its network tools and path
// arguments, and a missing package, another version or an existing --out is
// exit 2 naming the fix.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { looksLikePath, looksNetworked, worldNameOf } from '../../src/world/servers/definition/definition-skeleton.js';
import { loadDefinition } from '../../src/world/servers/definition/definition-loader.js';
import { ChildTransport } from '../../src/world/servers/child-transport.js';
import { createSandbox, removeSandbox } from '../../src/world/servers/sandbox.js';
import { serverEnvironment } from '../../src/world/servers/server-session.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

const MEMORY = '@modelcontextprotocol/server-memory@2026.8.31';
const FILESYSTEM = '@modelcontextprotocol/server-filesystem@2026.8.31';
const GIT = '@cyanheads/git-mcp-server@2.15.3';

/** The live tools/list of an installed package's dist/index.js, started here independently of `worlds init`. */
async function liveTools(packageName: string, withRoot: boolean): Promise<unknown[]> {
  const sandbox = await createSandbox('init-test', 'sandbox');
  const transport = new ChildTransport({
    command: process.execPath,
    args: [join(REPO_ROOT, 'node_modules', packageName, 'dist', 'index.js'), ...(withRoot ? [sandbox.root] : [])],
    cwd: sandbox.root,
    env: serverEnvironment(sandbox),
  });
  const client = new Client({ name: 'worlds-init-test', version: '1' });
  try {
    await client.connect(transport, { timeout: 15_000 });
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    await client.close().catch(() => undefined);
    await transport.close();
    await removeSandbox(sandbox);
  }
}

function workingDirectory(): string {
  const directory = temporaryDirectory('ef-worlds-init-');
  mkdirSync(join(directory, 'worlds'));
  return directory;
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}

describe('worlds init', () => {
  it('writes the live catalog of server-memory and a definition that loads and that `worlds show` serves from the working directory', async () => {
    const cwd = workingDirectory();
    const result = await runCliAsync(cwd, 'worlds', 'init', '--package', MEMORY, '--out', 'worlds/server-memory.json');
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /started {3}with no arguments: memory-server 0\.6\.3/);
    assert.match(result.stdout, /worlds check worlds\/server-memory\.json/);
    const catalog = readFileSync(join(cwd, 'worlds', 'server-memory.catalog.json'), 'utf8');
    assert.equal(catalog, JSON.stringify(await liveTools('@modelcontextprotocol/server-memory', false), null, 1) + '\n');
    const loaded = loadDefinition(join(cwd, 'worlds', 'server-memory.json'));
    assert.equal(loaded.definition.name, 'server-memory');
    assert.deepEqual(loaded.definition.launch, { package: { name: '@modelcontextprotocol/server-memory', version: '2026.8.31', entry: 'dist/index.js' }, args: [], env: {} });
    assert.equal(loaded.definition.description, 'MCP server for enabling memory for Claude through a knowledge graph');
    assert.deepEqual(loaded.definition.normalisations, ['sandbox-path']);
    assert.deepEqual(loaded.definition.probe.parts, [{ name: 'files', kind: 'file-tree', path: '.' }]);
    assert.equal(loaded.definition.seed.files?.length, 1);
    assert.match(readJson(join(cwd, 'worlds', 'server-memory.json')).$schema, /^(\.\.\/)+.*schemas\/server-world\.v1\.schema\.json$/);
    assert.ok(existsSync(join(cwd, 'worlds', readJson(join(cwd, 'worlds', 'server-memory.json')).$schema)), 'the $schema path reaches the schema');
    assert.equal(loaded.catalog.length, 9);

    const show = await runCliAsync(cwd, 'worlds', 'show', 'server-memory');
    assert.equal(show.status, 0, show.stderr);
    assert.match(show.stdout, /^world {3}server-memory 1\n/);
    assert.match(show.stdout, /defined worlds\/server-memory\.json/);
    assert.match(show.stdout, /tools {3}9\n/);
  });

  it('starts server-filesystem again with the root as its argument after it asks for one, and says so', async () => {
    const cwd = workingDirectory();
    const result = await runCliAsync(cwd, 'worlds', 'init', '--package', FILESYSTEM, '--json');
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout);
    assert.equal(report.definition, 'worlds/server-filesystem.json');
    assert.deepEqual(report.args, ['{root}']);
    assert.deepEqual(report.attempts.map((attempt: { args: string[] }) => attempt.args), [[], ['{root}']]);
    assert.match(report.attempts[0].outcome, /usage/i);
    const loaded = loadDefinition(join(cwd, 'worlds', 'server-filesystem.json'));
    assert.deepEqual(loaded.definition.launch.args, ['{root}']);
    assert.equal(readFileSync(join(cwd, 'worlds', 'server-filesystem.catalog.json'), 'utf8'), JSON.stringify(await liveTools('@modelcontextprotocol/server-filesystem', true), null, 1) + '\n');
    assert.deepEqual(loaded.definition.guards, [{ kind: 'paths-under-root', id: 'paths-in-sandbox', arguments: ['path', 'paths[]', 'source', 'destination'] }]);
  });

  it('guesses deny-tools for the network tools of git-mcp-server and keeps its path arguments under the root', async () => {
    const cwd = workingDirectory();
    const result = await runCliAsync(cwd, 'worlds', 'init', '--package', GIT, '--out', 'worlds/git-mcp-server.json');
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /deny-tools {8}git_clone, git_fetch, git_pull, git_push, git_remote {2}\("guessed: may reach the network; remove if it does not"\)/);
    const loaded = loadDefinition(join(cwd, 'worlds', 'git-mcp-server.json'));
    const deny = loaded.definition.guards?.find((guard) => guard.kind === 'deny-tools');
    assert.deepEqual(deny, { kind: 'deny-tools', id: 'no-network', tools: ['git_clone', 'git_fetch', 'git_pull', 'git_push', 'git_remote'], reason: 'guessed: may reach the network; remove if it does not' });
    const paths = loaded.definition.guards?.find((guard) => guard.kind === 'paths-under-root');
    assert.ok(paths && paths.kind === 'paths-under-root');
    for (const argument of ['path', 'paths[]', 'filePath', 'worktreePath']) assert.ok(paths.arguments.includes(argument), argument);
    assert.deepEqual(loaded.definition.launch.args, []);
    assert.equal(readFileSync(join(cwd, 'worlds', 'git-mcp-server.catalog.json'), 'utf8'), JSON.stringify(await liveTools('@cyanheads/git-mcp-server', false), null, 1) + '\n');
    const show = await runCliAsync(cwd, 'worlds', 'show', 'git-mcp-server', '--json');
    assert.equal(show.status, 0, show.stderr);
    assert.equal(JSON.parse(show.stdout).tools.length, loaded.catalog.length);
  });

  it('refuses a package that is not installed, naming the install line, and writes nothing', async () => {
    const cwd = workingDirectory();
    const result = await runCliAsync(cwd, 'worlds', 'init', '--package', '@example/not-installed-server@1.2.3');
    assert.equal(result.status, 2);
    assert.match(result.stderr, /npm install --save-exact @example\/not-installed-server@1\.2\.3/);
    assert.equal(existsSync(join(cwd, 'worlds', 'not-installed-server.json')), false);
  });

  it('refuses another version than the one installed, naming both and the install line', async () => {
    const cwd = workingDirectory();
    const result = await runCliAsync(cwd, 'worlds', 'init', '--package', '@modelcontextprotocol/server-memory@1.0.0');
    assert.equal(result.status, 2);
    assert.match(result.stderr, /installed at 2026\.8\.31/);
    assert.match(result.stderr, /npm install --save-exact @modelcontextprotocol\/server-memory@1\.0\.0/);
  });

  it('refuses to overwrite an existing --out without --force, and overwrites it with --force', async () => {
    const cwd = workingDirectory();
    const out = join(cwd, 'worlds', 'server-memory.json');
    writeFileSync(out, '{"mine": true}\n');
    const refused = await runCliAsync(cwd, 'worlds', 'init', '--package', MEMORY, '--out', 'worlds/server-memory.json');
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /worlds\/server-memory\.json already exists.*--force/);
    assert.equal(readFileSync(out, 'utf8'), '{"mine": true}\n');
    const forced = await runCliAsync(cwd, 'worlds', 'init', '--package', MEMORY, '--out', 'worlds/server-memory.json', '--force');
    assert.equal(forced.status, 0, forced.stderr);
    assert.equal(loadDefinition(out).definition.name, 'server-memory');
  });

  it('refuses an --out whose file name is not the world name, and a malformed --package', async () => {
    const cwd = workingDirectory();
    const misnamed = await runCliAsync(cwd, 'worlds', 'init', '--package', MEMORY, '--out', 'worlds/memory.json');
    assert.equal(misnamed.status, 2);
    assert.match(misnamed.stderr, /--name memory/);
    const malformed = await runCliAsync(cwd, 'worlds', 'init', '--package', '@modelcontextprotocol/server-memory');
    assert.equal(malformed.status, 2);
    assert.match(malformed.stderr, /<name>@<exact version>/);
  });

  it('explains what it does in --help', async () => {
    const help = await runCliAsync(REPO_ROOT, 'worlds', 'init', '--help');
    assert.equal(help.status, 0);
    for (const text of ['--package <name@version>', '--out <file>', '--name <world>', '--force', '--json', 'npm install --save-exact', 'usage line', 'readOnlyHint', 'worlds check', '.catalog.json']) {
      assert.ok(help.stdout.includes(text), text);
    }
  });
});

describe('worlds init guesses', () => {
  it('reads path arguments from their last word, camelCase and plurals included', () => {
    for (const name of ['path', 'file', 'filename', 'dir', 'directory', 'folder', 'source', 'destination', 'target', 'root', 'cwd', 'filePath', 'fileAbsolutePath', 'worktreePath', 'source_dir', 'paths', 'directories']) {
      assert.ok(looksLikePath(name), name);
    }
    for (const name of ['pattern', 'content', 'pathology', 'message', 'branch']) assert.equal(looksLikePath(name), false, name);
  });

  it('reads network tools from any word of their name', () => {
    for (const name of ['git_clone', 'fetchUrl', 'http_get', 'send_email', 'browser_navigate', 'download-file']) assert.ok(looksNetworked(name), name);
    for (const name of ['git_commit', 'read_file', 'search_nodes']) assert.equal(looksNetworked(name), false, name);
  });

  it('derives the world name from the package name', () => {
    assert.equal(worldNameOf('@cyanheads/git-mcp-server'), 'git-mcp-server');
    assert.equal(worldNameOf('@scope/My_Server.JS'), 'my-server-js');
    assert.equal(worldNameOf('9lives'), 'lives');
  });
});
