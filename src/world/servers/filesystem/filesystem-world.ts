// Owns the code of the server world of @modelcontextprotocol/server-filesystem
// that its definition (worlds/filesystem-server.json: launch, sandbox shown as
// /sandbox, catalog, claims, normalisations) cannot say as data: the seeded
// generator that fills the sandbox with a small project (settings with an
// example twin, owned documents with a planted typo, a to-do list, quarterly
// reports, and no archive folder yet), whose constrained draws no data seed
// replays byte for byte; the state probe that reads the tree back at the
// snapshot's top level (relative paths, contents, sha256, lines, parsed
// settings and front matter; no times, modes or owners); and the kept child
// pointed at each episode's sandbox through MCP roots.

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../../core/json-value.js';
import { PACKAGE_ROOT } from '../../../core/package-paths.js';
import type { Random } from '../../../core/random.js';
import { FIRST_NAMES, LAST_NAMES } from '../../people-vocabulary.js';
import type { ServerReuse, ServerWorld } from '../../server-world.js';
import { loadDefinition } from '../definition/definition-loader.js';
import { serverWorldFromDefinition } from '../definition/defined-server-world.js';
import type { PopulateArguments } from '../definition/escape-hatch.js';
import { probeFileTree } from '../definition/file-tree-probe.js';

const SETTINGS: Record<string, readonly string[]> = {
  API_URL: ['https://api.internal.example/v2', 'https://gateway.example.net/v1', 'https://svc.example.org/api'],
  TIMEOUT_SECONDS: ['15', '30', '45', '90'],
  MAX_RETRIES: ['2', '3', '5', '8'],
  LOG_LEVEL: ['debug', 'info', 'warn'],
  CACHE_SIZE_MB: ['64', '128', '256', '512'],
  REGION: ['eu-west', 'us-east', 'ap-south'],
  WORKER_COUNT: ['2', '4', '6', '12'],
  FEATURE_SEARCH: ['on', 'off'],
};

const DOCS = ['onboarding', 'architecture', 'release-process', 'style-guide', 'roadmap', 'incident-review'] as const;
const STATUSES = ['draft', 'review', 'final'] as const;
const QUARTERS = ['q1', 'q2', 'q3', 'q4'] as const;
const TODOS = [
  'renew the staging certificate', 'book the design review', 'update the runbook', 'rotate the deploy key',
  'archive last quarter\'s tickets', 'send the budget summary', 'fix the flaky upload test', 'write the launch checklist',
];
const WORDS = ['alpha', 'review', 'deadline', 'owner', 'status', 'blocked', 'done', 'pending', 'budget', 'team', 'launch', 'metrics', 'latency', 'rollout'];
/** The planted typo (and its fix) that one document carries once. */
const TYPO = 'recieve';

function person(random: Random): string {
  const capital = (word: string) => word[0]!.toUpperCase() + word.slice(1);
  return `${capital(random.pick(FIRST_NAMES))} ${capital(random.pick(LAST_NAMES))}`;
}

function sentence(random: Random): string {
  const words = Array.from({ length: random.int(4, 8) }, () => random.pick(WORDS));
  return words.join(' ');
}

/** The files of one sandbox, path → content, drawn from `random` alone. */
export function drawFilesystemTree(random: Random): Map<string, string> {
  const files = new Map<string, string>();
  // Every sandbox has the two settings tasks change; two to four others vary.
  const always = ['MAX_RETRIES', 'TIMEOUT_SECONDS'];
  const keys = [...always, ...random.sample(Object.keys(SETTINGS).filter((key) => !always.includes(key)), random.int(2, 4))].sort();
  const values = keys.map((key) => [key, random.pick(SETTINGS[key]!)] as const);
  const settingsOwner = person(random);
  files.set('config/settings.env', `# owner: ${settingsOwner}\n${values.map(([key, value]) => `${key}=${value}`).join('\n')}\n`);
  // The plausible wrong file: same keys, example values.
  files.set('config/settings.example.env', `# example only, not used by the service\n${keys.map((key) => `${key}=${SETTINGS[key]!.find((value) => value !== values.find(([k]) => k === key)![1])}`).join('\n')}\n`);
  const docs = random.sample(DOCS, 3).sort();
  const owners = new Set<string>();
  const typoDoc = random.pick(docs);
  for (const doc of docs) {
    let owner = person(random);
    while (owners.has(owner)) owner = person(random);
    owners.add(owner);
    const lines = Array.from({ length: random.int(2, 4) }, () => sentence(random));
    if (doc === typoDoc) lines.splice(random.int(0, lines.length - 1), 0, `teams will ${TYPO} the ${random.pick(WORDS)} notes by friday`);
    const title = doc.split('-').map((word) => word[0]!.toUpperCase() + word.slice(1)).join(' ');
    files.set(`docs/${doc}.md`, `# ${title}\nowner: ${owner}\nstatus: ${random.pick(STATUSES)}\n\n${lines.join('\n')}\n`);
  }
  files.set('notes/todo.txt', random.sample(TODOS, random.int(3, 5)).map((item) => `- ${item}`).join('\n') + '\n');
  for (const quarter of random.sample(QUARTERS, 2).sort()) {
    files.set(`reports/report-2026-${quarter}.md`, `# Report ${quarter.toUpperCase()} 2026\n${Array.from({ length: random.int(2, 3) }, () => sentence(random)).join('\n')}\n`);
  }
  return files;
}

/** Markdown files give their title and `key: value` lines, .env files their KEY=value settings. */
const PARSERS = { '**/*.md': 'front-matter', '**/*.env': 'settings' };

/** The seed (escape hatch): the drawn tree, written in sorted path order. */
export async function populate({ random, root }: PopulateArguments): Promise<void> {
  const files = drawFilesystemTree(random);
  for (const path of [...files.keys()].sort()) {
    await mkdir(join(root, dirname(path)), { recursive: true });
    await writeFile(join(root, path), files.get(path)!);
  }
}

/** The state probe (escape hatch): the tree under the root, relative and sorted, each file with contents, size and sha256, at the snapshot's top level. */
export async function views({ root }: { root: string }): Promise<JsonObject> {
  return (await probeFileTree(root, '.', [], PARSERS)) as JsonObject;
}

/** Kept alive across episodes: started with no directory, pointed at each sandbox through MCP roots. */
const reuse: ServerReuse = {
  launch: () => ({ args: [] }),
  async repoint(channel, sandbox) {
    channel.onServerRequest((method) => (method === 'roots/list' ? { roots: [{ uri: pathToFileURL(sandbox.root).href, name: 'sandbox' }] } : undefined));
    await channel.request('initialize', { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'episode-factory-pool', version: '1' } });
    await channel.notify('notifications/initialized');
    // The server asks for the roots once initialized and applies them asynchronously: wait until it names this sandbox.
    for (let attempt = 0; attempt < 500; attempt++) {
      const answer = await channel.request('tools/call', { name: 'list_allowed_directories', arguments: {} });
      const text = (answer.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? '';
      if (text.split('\n').includes(sandbox.root)) return;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    throw new Error(`server-filesystem did not take ${sandbox.root} as its root`);
  },
};

export const filesystemServerWorld: ServerWorld = {
  ...serverWorldFromDefinition(loadDefinition(join(PACKAGE_ROOT, 'worlds', 'filesystem-server.json')), { populate, views }),
  reuse,
};
