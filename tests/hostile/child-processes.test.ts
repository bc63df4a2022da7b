// Hostile: what a child process of the factory inherits, and what the proxy
// leaves behind. The proxy runs in front of a tiny MCP server that reports the
// names of its environment, driven by the real SDK client, with the operator's
// secrets in the proxy's own environment: none may reach the server unless
// --pass-env names it. Without --log the proxy writes no file at all.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { childEnvironment } from '../../src/core/child-environment.js';
import { CLI, REPO_ROOT, temporaryDirectory } from '../helpers.js';

const TSX = import.meta.resolve('tsx');
const ENVIRONMENT_SERVER = fileURLToPath(new URL('../fixtures/environment-server.ts', import.meta.url));

/** What an operator's shell might hold: none of it is the server's business. */
const SECRETS: Record<string, string> = {
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  AWS_ACCESS_KEY_ID: 'AKIA0000',
  GITHUB_TOKEN: 'ghp_secret',
  GH_TOKEN: 'gh-secret',
  DB_PASSWORD: 'hunter2',
  PGPASSWORD: 'hunter3',
  SOME_API_KEY: 'sk-secret',
  OPENAI_API_KEY: 'sk-openai',
  ANTHROPIC_API_KEY: 'sk-ant',
  HF_TOKEN: 'hf_secret',
  NPM_TOKEN: 'npm-secret',
  NODE_AUTH_TOKEN: 'npm-secret-2',
  MY_CREDENTIALS: 'user:pass',
  GOOGLE_APPLICATION_CREDENTIALS: '/home/me/sa.json',
  CLIENT_SECRET: 'oauth-secret',
  SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
  DATABASE_URL: 'postgres://app:hunter4@db.internal/app',
  token: 'lowercase-secret',
};

async function proxyEnvironmentNames(directory: string, extraArgs: string[], env: Record<string, string>) {
  const planPath = join(directory, 'plan.json');
  writeFileSync(planPath, JSON.stringify({ faults: [] }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'proxy', '--faults', planPath, '--log', join(directory, 'faults.jsonl'), ...extraArgs, '--', process.execPath, '--import', TSX, ENVIRONMENT_SERVER],
    env,
    cwd: directory,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const client = new Client({ name: 'hostile-env', version: '1' });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: 'environment', arguments: {} });
    return { names: (result.structuredContent as { names: string[] }).names, stderr: () => stderr };
  } finally {
    await client.close();
  }
}

describe('hostile: the environment of child processes', () => {
  it('the proxy passes no secret to the server, only harmless variables and those named with --pass-env', { timeout: 60_000 }, async () => {
    const directory = temporaryDirectory('ef-hostile-env-');
    const env = { ...(process.env as Record<string, string>), ...SECRETS, HARMLESS_SETTING: 'blue', DEPLOY_TOKEN: 'wanted-by-the-server' };
    const { names, stderr } = await proxyEnvironmentNames(directory, ['--pass-env', 'DEPLOY_TOKEN', '--pass-env', 'HF_TOKEN'], env);
    const leaked = Object.keys(SECRETS).filter((name) => name !== 'HF_TOKEN' && names.includes(name));
    assert.deepEqual(leaked, [], 'secrets reached the server');
    for (const name of ['HARMLESS_SETTING', 'DEPLOY_TOKEN', 'HF_TOKEN', 'PATH', 'HOME']) assert.ok(names.includes(name), `${name} should reach the server`);
    assert.match(stderr(), /not passing .*AWS_SECRET_ACCESS_KEY.*GITHUB_TOKEN.* to the server \(let one through with --pass-env NAME\)/);
    assert.doesNotMatch(stderr(), /hunter|sk-|ghp_/, 'values of secrets are never printed');
  });

  it('the filter holds back secret-shaped names and provider families, and keeps ordinary ones', () => {
    const secret = [
      ...Object.keys(SECRETS),
      'KEY', 'API_KEY', 'APIKEY', 'PRIVATE_KEY_PEM', 'STRIPE_SECRET', 'JWT_SECRET_BASE64', 'TOKEN', 'CI_JOB_TOKEN', 'NGROK_AUTHTOKEN', 'PASSWORD',
      'MYSQL_PWD', 'SMTP_PASS', 'GPG_PASSPHRASE', 'CREDENTIALS', 'AZURE_CLIENT_ID', 'GCLOUD_PROJECT', 'GCP_SA', 'CLOUDSDK_AUTH_ACCESS_TOKEN_FILE',
      'GITLAB_HOST', 'GITHUB_ACTOR', 'BITBUCKET_USER', 'ANTHROPIC_BASE_URL', 'OPENAI_ORG_ID', 'HUGGING_FACE_HUB_TOKEN', 'VAULT_TOKEN', 'DOCKER_AUTH_CONFIG',
      'DOCKER_CONFIG', 'KUBECONFIG', 'NPM_CONFIG__AUTH', 'npm_config_//registry.npmjs.org/:_authToken', 'GIT_ASKPASS', 'GIT_CONFIG_PARAMETERS',
      'SENTRY_DSN', 'SLACK_WEBHOOK_URL', 'SESSION_COOKIE', 'EPISODE_FACTORY_DEBUG', 'GPG_AGENT_INFO', 'DBUS_SESSION_BUS_ADDRESS',
    ];
    const ordinary = [
      'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LC_ALL', 'PWD', 'OLDPWD', 'TMPDIR', 'NODE_OPTIONS', 'NODE_ENV', 'SOURCE_DATE_EPOCH',
      'OLLAMA_HOST', 'MEMORY_FILE_PATH', 'TOKENIZERS_PARALLELISM', 'KEYTIMEOUT', 'SSH_TTY', 'XDG_RUNTIME_DIR', 'HTTP_PROXY', 'npm_config_cache', 'CI',
    ];
    const values: Record<string, string> = Object.fromEntries([...secret, ...ordinary].map((name) => [name, 'x']));
    values.HTTP_PROXY = 'http://proxy.internal:3128';
    values.DATABASE_URL = SECRETS.DATABASE_URL!;
    const { env, withheld } = childEnvironment(values);
    assert.deepEqual(withheld, [...secret].sort());
    assert.deepEqual(Object.keys(env).sort(), [...ordinary].sort());
    assert.deepEqual(childEnvironment({ ...values, HTTP_PROXY: 'http://me:pw@proxy.internal:3128' }).withheld.includes('HTTP_PROXY'), true, 'a URL with a password');
    assert.deepEqual(Object.keys(childEnvironment(values, ['GITHUB_TOKEN', 'KEY']).env).filter((name) => !ordinary.includes(name)).sort(), ['GITHUB_TOKEN', 'KEY']);
  });

  it('every place the factory starts a process takes its environment from the filter', () => {
    const roots = ['src', 'bench', 'tests/headless-chromium.ts'];
    const files = roots.flatMap((root) => listTypeScript(join(REPO_ROOT, root)));
    // Worker threads are left out on purpose: a worker is the factory itself (same process, same code), not a child process.
    const starts = /from 'node:child_process'|from 'child_process'|new\s+StdioClientTransport\s*\(|\.launch\s*\(/;
    const starters = files.filter((file) => starts.test(readFileSync(file, 'utf8')));
    assert.ok(starters.some((file) => file.endsWith('src/world/faults/stdio-proxy.ts')), `found ${starters.map((file) => relative(REPO_ROOT, file))}`);
    const unfiltered = starters.filter((file) => !/child-environment\.js'/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(unfiltered.map((file) => relative(REPO_ROOT, file)), []);
  });

  it('--pass-env takes variable names only', { timeout: 30_000 }, () => {
    const directory = temporaryDirectory('ef-hostile-env-');
    const result = spawnSync(process.execPath, [CLI, 'proxy', '--faults', join(REPO_ROOT, 'lanes', 'plans', 'chaos.json'), '--pass-env', 'A=B', '--', 'node', 'x.js'], {
      cwd: directory,
      encoding: 'utf8',
      input: '',
    });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--pass-env "A=B" is not an environment variable name — fix: /);
  });
});

describe('hostile: files the proxy leaves behind', () => {
  it('writes no fault log without --log, and the log to FILE with --log FILE', { timeout: 60_000 }, async () => {
    const directory = temporaryDirectory('ef-hostile-log-');
    const elsewhere = temporaryDirectory('ef-hostile-log-');
    const plan = join(elsewhere, 'plan.json');
    writeFileSync(plan, JSON.stringify({ faults: [{ id: 'busy', kind: 'tool_error', calls: [1] }] }));
    const session = async (extra: string[]) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'proxy', '--faults', plan, ...extra, '--', process.execPath, '--import', TSX, ENVIRONMENT_SERVER],
        cwd: directory,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
      const client = new Client({ name: 'hostile-log', version: '1' });
      await client.connect(transport);
      try {
        const result = await client.callTool({ name: 'environment', arguments: {} });
        assert.equal(result.isError, true, 'the planned fault fired');
      } finally {
        await client.close();
      }
      for (let waited = 0; waited < 5_000 && !/session ended/.test(stderr); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      return stderr;
    };
    const quiet = await session([]);
    assert.deepEqual(readdirSync(directory), [], 'no file in the working directory');
    assert.match(quiet, /fault tool_error \(busy\) on environment/);
    assert.match(quiet, /session ended \(client_closed\); 1 fault fired\n/);
    const log = join(elsewhere, 'faults.jsonl');
    const logged = await session(['--log', log]);
    assert.match(logged, /1 fault fired, logged to /);
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines.map((entry) => [entry.kind, entry.fault, entry.tool]), [['tool_error', 'busy', 'environment']]);
    assert.deepEqual(readdirSync(directory), [], 'still no file in the working directory');
  });
});

function listTypeScript(path: string): string[] {
  if (path.endsWith('.ts')) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listTypeScript(join(path, entry.name)) : entry.name.endsWith('.ts') ? [join(path, entry.name)] : [],
  );
}
