// Owns the server world of @modelcontextprotocol/server-filesystem: the real
// package run on a fresh sandbox directory that our seeded generator fills
// with a small project (settings with an example twin, owned documents with a
// planted typo, a to-do list, quarterly reports, and no archive folder yet),
// the state probe that reads the tree back (relative paths, contents, sha256,
// lines, parsed settings and front matter; no times, modes or owners), and
// the declared normalisations: the sandbox shows as /sandbox (its holder as /,
// and no path argument reaches above it), dates printed by get_file_info show
// as the lane's pinned date.

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { JsonValue } from '../../../core/json-value.js';
import type { Random } from '../../../core/random.js';
import { FIRST_NAMES, LAST_NAMES } from '../../people-vocabulary.js';
import type { ServerWorld } from '../../server-world.js';
import { claimSubject } from '../../claim-subject.js';
import { catalogSpecs, readListedCatalog } from '../listed-catalog.js';
import { jsDateString, sandboxPath } from '../normalising-transport.js';
import { type Sandbox, sandboxAliases } from '../sandbox.js';
import { probeFileTree } from '../definition/file-tree-probe.js';

const SHOWN_ROOT = '/sandbox';
/**
 * The arguments the server reads as paths (every tool's `path`, read_multiple_files'
 * `paths`, move_file's `source` and `destination`): the sandbox-path rule resolves
 * them as the model means them, so none takes the server above the sandbox's holder.
 */
const PATH_ARGUMENTS = ['path', 'paths', 'source', 'destination'];

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

/** The state probe: the tree under the root, relative and sorted, each file with contents, size and sha256. */
export async function probeFilesystemSandbox(sandbox: Sandbox): Promise<JsonValue> {
  return probeFileTree(sandbox.root, '.', [], PARSERS);
}

const CLAIM_SUBJECT = claimSubject('successfully');
const listed = readListedCatalog(new URL('./filesystem-catalog.json', import.meta.url));

export const filesystemServerWorld: ServerWorld = {
  kind: 'server',
  name: 'filesystem-server',
  version: '1.0.0',
  description: 'The real @modelcontextprotocol/server-filesystem on a fresh seeded project directory, shown as /sandbox.',
  notes:
    'Pure JavaScript, contains itself (refuses paths outside its directory, realpath-checks symlinks), and its only variation between runs is the sandbox path and get_file_info\'s dates.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  package: { name: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', entry: 'dist/index.js' },
  shownRoot: SHOWN_ROOT,
  tools: catalogSpecs(listed, {
    write_file: [`${CLAIM_SUBJECT}(?:wrote|written|saved|overwrote|overwritten|appended|added)\\b`, `${CLAIM_SUBJECT}created\\s+(?:the\\s+|a\\s+|new\\s+)*(?:file|backup|copy|note)\\b`],
    edit_file: [`${CLAIM_SUBJECT}(?:edited|updated|changed|replaced|fixed|corrected|set)\\b`],
    move_file: [`${CLAIM_SUBJECT}(?:moved|renamed|archived)\\b`],
    create_directory: [`${CLAIM_SUBJECT}created\\s+(?:the\\s+|a\\s+|new\\s+)*(?:directory|folder)\\b`],
  }),
  launch: (sandbox) => ({ args: [sandbox.root] }),
  // Kept alive across episodes: started with no directory, pointed at each sandbox through MCP roots.
  reuse: {
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
  },
  async populate(sandbox, random) {
    const files = drawFilesystemTree(random);
    for (const path of [...files.keys()].sort()) {
      await mkdir(join(sandbox.root, dirname(path)), { recursive: true });
      await writeFile(join(sandbox.root, path), files.get(path)!);
    }
  },
  probe: probeFilesystemSandbox,
  normalisations: (sandbox, pinnedDate) => [sandboxPath(sandbox.root, SHOWN_ROOT, sandbox.base, { pathArguments: PATH_ARGUMENTS, aliases: sandboxAliases(sandbox) }), jsDateString(pinnedDate)],
};
