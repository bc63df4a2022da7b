// Hostile: secrets the name rules alone let through. The proxy runs in front
// of a tiny MCP server that reports the names of its environment, driven by
// the real SDK client, with the proxy's own environment holding credentials
// under names that did not look like secrets (`STRIPE_SK_LIVE`,
// `SLACK_BOT_OAUTH`) or under plain names with a secret value (a connection
// string with `Password=`, provider tokens, a JWT, a private key): none may
// reach the server unless --pass-env names it, and ordinary variables still do.
// The fake tokens are assembled from pieces so that no scanner takes this file
// for a leak.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { childEnvironment, secretReason } from '../../src/core/child-environment.js';
import { CLI, temporaryDirectory } from '../helpers.js';

const TSX = import.meta.resolve('tsx');
const ENVIRONMENT_SERVER = fileURLToPath(new URL('../fixtures/environment-server.ts', import.meta.url));

const random = (length: number) => 'aB3dE5fG7hJ9kL2mN4pQ6rS8tU1vW0xYz'.repeat(8).slice(0, length);

/** Secrets under names that did not look like one: caught by the name rules added for them. */
const SECRET_NAMES: Record<string, string> = {
  STRIPE_SK_LIVE: 'opaque-1',
  SLACK_BOT_OAUTH: 'opaque-2',
  DEVOPS_PAT: 'opaque-3',
  SERVICE_JWT: 'opaque-4',
  API_BEARER: 'opaque-5',
  SIGNING_PRIVATE_PEM: 'opaque-6',
  DB_CONNECTION_STRING: 'opaque-7',
  SQLCONNSTR_MAIN: 'opaque-8',
};

/** Secrets under plain names: caught by their values. */
const SECRET_VALUES: Record<string, string> = {
  ORDERS_DB: 'Server=db.internal;Database=orders;User Id=app;Password=hunter2;',
  LEGACY_DB: 'Driver={ODBC Driver 18};Server=db;UID=app; PWD = hunter3',
  PG_SETTINGS: 'host=db user=app password=hunter4 dbname=app',
  STORAGE: `DefaultEndpointsProtocol=https;AccountName=store;AccountKey=${random(40)}==;EndpointSuffix=core.windows.net`,
  BUS: `Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=${random(32)}=`,
  CACHE_URL: 'redis://:hunter5@cache.internal:6379/0',
  MY_CONFIG_VALUE: `${'sk'}-proj-${random(48)}`,
  CLAUDE: `${'sk'}-ant-api03-${random(64)}`,
  PAYMENTS: `${'rk'}_live_${random(24)}`,
  PAYMENTS_TEST: `${'sk'}_test_${random(24)}`,
  HOOK_SIGNING: `${'whsec'}_${random(32)}`,
  CI_HELPER: `${'ghp'}_${random(36)}`,
  FINE_GRAINED: `${'github'}_pat_${random(22)}_${random(59)}`,
  REPO_ACCESS: `${'glpat'}-${random(20)}`,
  CHAT_BOT: `${'xox'}b-1234567890-0987654321-${random(24)}`,
  DEPLOY_HOOK: `https://hooks.${'slack'}.com/services/T0000000/B0000000/${random(24)}`,
  LEGACY_ID: `${'AKIA'}Q3EGRJ5ZKPLMN7XV`,
  MAPS: `${'AIza'}Sy${random(33)}`,
  MODEL_HUB: `${'hf'}_${random(34)}`,
  PUBLISH: `${'npm'}_${random(36)}`,
  UPSTREAM_AUTHORIZATION: `Bearer ${'eyJ'}hbGciOiJIUzI1NiJ9.${'eyJ'}zdWIiOiIxMjM0NTY3ODkwIn0.${random(43)}`,
  SIGNING_MATERIAL: `-----BEGIN ${'RSA PRIVATE'} KEY-----\nMIIEow${random(60)}\n-----END RSA PRIVATE KEY-----`,
  DEPLOY_MATERIAL: `-----BEGIN ${'OPENSSH PRIVATE'} KEY-----\nb3Blbn${random(60)}\n-----END OPENSSH PRIVATE KEY-----`,
};

/** Ordinary settings, some with values close to a secret's shape: all must pass. */
const ORDINARY: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/root',
  TERM: 'xterm-256color',
  LANG: 'C.UTF-8',
  NODE_OPTIONS: '--max-old-space-size=4096',
  TMPDIR: process.env.TMPDIR ?? '/tmp',
  SSH_TTY: '/dev/pts/0',
  XDG_SESSION_ID: '3',
  DESKTOP_SESSION: 'ubuntu',
  PATCH_LEVEL: '2',
  DISK_SIZE: '100G',
  LS_COLORS: 'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:or=40;31;01:ex=01;32:*.tar=01;31',
  MODEL_DIR: '/opt/sk-learn-models-collection-2024',
  HF_HOME: '/home/me/.cache/huggingface',
  BUILD_URL: 'https://ci.example.com/job/build/1234/',
  DOCS_LINK: 'https://user@example.com/docs',
  JAVA_TOOL_OPTIONS: '-Dfile.encoding=UTF-8',
  GREETING: 'password reminders are off',
  SHORT_NOTE: `${'sk'}-test`,
  CLI_FLAGS: '--pwd-file=/etc/app/pwd',
};

async function serverEnvironmentNames(directory: string, extraArgs: string[], env: Record<string, string>, limitMs = 45_000) {
  const planPath = join(directory, 'plan.json');
  writeFileSync(planPath, JSON.stringify({ faults: [] }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'proxy', '--faults', planPath, ...extraArgs, '--', process.execPath, '--import', TSX, ENVIRONMENT_SERVER],
    env,
    cwd: directory,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  // The hard limit: closing the transport kills the proxy, and with it the server.
  const killer = setTimeout(() => void transport.close(), limitMs);
  const client = new Client({ name: 'hostile-secret-values', version: '1' });
  try {
    await client.connect(transport);
    const result = await client.callTool({ name: 'environment', arguments: {} });
    return { names: (result.structuredContent as { names: string[] }).names, stderr: () => stderr };
  } finally {
    clearTimeout(killer);
    await client.close();
  }
}

describe('hostile: secrets the name rules alone let through', () => {
  it('a server behind the proxy sees none of them, and every ordinary variable', { timeout: 60_000 }, async () => {
    const directory = temporaryDirectory('ef-hostile-secret-values-');
    const env = { ...ORDINARY, ...SECRET_NAMES, ...SECRET_VALUES };
    const { names, stderr } = await serverEnvironmentNames(directory, [], env);
    const leaked = [...Object.keys(SECRET_NAMES), ...Object.keys(SECRET_VALUES)].filter((name) => names.includes(name));
    assert.deepEqual(leaked, [], 'secrets reached the server');
    assert.deepEqual(Object.keys(ORDINARY).filter((name) => !names.includes(name)), [], 'ordinary variables held back');
    assert.match(stderr(), /not passing .*ORDERS_DB.*STRIPE_SK_LIVE.* to the server \(let one through with --pass-env NAME\)/);
    for (const value of Object.values(SECRET_VALUES)) assert.ok(!stderr().includes(value), 'a secret value was printed');
    assert.doesNotMatch(stderr(), /hunter/);
  });

  it('--pass-env lets one through by name, whatever its value', { timeout: 60_000 }, async () => {
    const directory = temporaryDirectory('ef-hostile-secret-values-');
    const env = { ...ORDINARY, ...SECRET_VALUES, STRIPE_SK_LIVE: 'opaque-1' };
    const { names } = await serverEnvironmentNames(directory, ['--pass-env', 'ORDERS_DB', '--pass-env', 'STRIPE_SK_LIVE'], env);
    assert.ok(names.includes('ORDERS_DB') && names.includes('STRIPE_SK_LIVE'), `passed by name: ${names.join(', ')}`);
    assert.deepEqual(Object.keys(SECRET_VALUES).filter((name) => name !== 'ORDERS_DB' && names.includes(name)), []);
  });

  it('long ordinary values are read in linear time: the proxy starts its server with three 120 KiB values', { timeout: 60_000 }, async () => {
    // Each took the first value filter 10 to 27 s (a URL scheme could begin at any letter); all three now take milliseconds.
    const directory = temporaryDirectory('ef-hostile-secret-values-');
    const long = { LONG_LETTERS: 'a'.repeat(120 * 1024), LONG_BASE64: Buffer.alloc(90 * 1024, 7).toString('base64'), LONG_DASHES: 'sk-'.repeat(40 * 1024) };
    const { names } = await serverEnvironmentNames(directory, [], { ...ORDINARY, ...long }, 20_000);
    assert.deepEqual(Object.keys(long).filter((name) => !names.includes(name)), [], 'long ordinary values held back');
  });

  it('the filter says why: a name rule or the shape of the value, never the value', () => {
    assert.match(secretReason('STRIPE_SK_LIVE', 'x')!, /STRIPE_SK_LIVE/);
    assert.match(secretReason('ORDERS_DB', SECRET_VALUES.ORDERS_DB!)!, /^its value: a connection string with Password=/);
    assert.match(secretReason('CI_HELPER', SECRET_VALUES.CI_HELPER!)!, /^its value: a GitHub token/);
    assert.match(secretReason('MAPS', SECRET_VALUES.MAPS!)!, /^its value: a Google API key/);
    for (const [name, value] of Object.entries(SECRET_VALUES)) assert.ok(!secretReason(name, value)!.includes(value.slice(0, 12)), `${name}: the reason quotes the value`);
    const { env, withheld } = childEnvironment({ ...ORDINARY, ...SECRET_NAMES, ...SECRET_VALUES });
    assert.deepEqual(withheld, [...Object.keys(SECRET_NAMES), ...Object.keys(SECRET_VALUES)].sort());
    assert.deepEqual(Object.keys(env).sort(), Object.keys(ORDINARY).sort());
  });
});
