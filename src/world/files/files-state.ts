// Owns the state of the files world and its seeded generation: a virtual file
// tree (never the real disk) holding a read-only /etc and a project workspace
// whose files carry tokens (API keys, build ids, owner emails, retention holds)
// that cannot be guessed without reading them through the tools. Also owns the
// path rules every tool shares: absolute POSIX paths, no "." or ".." segments.

import { sha256Hex } from '../../core/hashing.js';
import { parseDateTime, isoTimestamp } from '../../core/date-time.js';
import type { Random } from '../../core/random.js';
import { capitalise } from '../../core/letter-case.js';
import {
  CHANGELOG_NOTES,
  DOC_STEPS,
  DOCS,
  ENV_FILES,
  ETC_SETTINGS,
  HOSTS,
  LOCKED_DOCS,
  LOG_LEVELS,
  MODULES,
  PROJECTS,
  REGIONS,
  SERVICES,
  TODO_ITEMS,
} from './files-vocabulary.js';
import { FIRST_NAMES, LAST_NAMES, ORGANISATIONS } from '../people-vocabulary.js';

export type NodeType = 'file' | 'dir';

export interface FileNode {
  path: string;
  type: NodeType;
  /** File text; always '' for a directory. */
  content: string;
  /** Minutes since EPOCH on the world clock. */
  modified: number;
  /** Changes with every write of the content; null for a directory. */
  revision: string | null;
  /** Hidden from the tools: what generation planted here (predicates and task parameters use it). */
  tags: string[];
}

/** A planted API key: which file defines it, its value, the rotated-out twin and the file's owner. */
export interface PlantedSetting {
  name: string;
  value: string;
  previous: string;
  path: string;
  key: string;
  owner: string;
}

/** A setting of the read-only /etc service config, with a value a task may ask for instead. */
export interface PlantedEtcSetting {
  name: string;
  value: string;
  target: string;
  path: string;
  key: string;
}

export interface PlantedLock {
  path: string;
  key: string;
  hold: string;
  contact: string;
}

export interface PlantedExtension {
  extension: string;
  /** Files under /workspace with this extension at generation. */
  count: number;
}

/**
 * What generation planted, for drawing task parameters and judging answers.
 * Tools never reveal it and never update it: it describes the initial tree.
 */
export interface Planted {
  settings: PlantedSetting[];
  etc_settings: PlantedEtcSetting[];
  locks: PlantedLock[];
  extensions: PlantedExtension[];
}

export interface FilesState {
  project: string;
  organisation: string;
  /** Every node but the root "/", which always exists, by path. */
  nodes: Map<string, FileNode>;
  /** The world's own clock in minutes since EPOCH; advances one minute per write. */
  clock: number;
  /** Seeds revision ids, so a new revision cannot be predicted from the path and clock alone. */
  salt: string;
  planted: Planted;
}

export const EPOCH = Date.UTC(2026, 0, 1);
const DAY = 24 * 60;
/** Build logs before this day (2026-03-01) are stale; the lane's cleanup task uses the same cutoff. */
export const STALE_BEFORE_DAY = 59;

export const MAX_FILE_BYTES = 16_384;
export const ROOT = '/';
export const READ_ONLY_ROOT = '/etc';

export function timestamp(minutes: number): string {
  return isoTimestamp(EPOCH + minutes * 60_000);
}

/** World minutes of a date-time an agent sent, or why it cannot be read. */
export function minutesOf(dateTime: string): number | { problem: string } {
  const parsed = parseDateTime(dateTime);
  return 'problem' in parsed ? parsed : Math.floor((parsed.millis - EPOCH) / 60_000);
}

function dateOf(day: number): string {
  return new Date(EPOCH + day * DAY * 60_000).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------- paths

const SEGMENT = /^[A-Za-z0-9._-]{1,64}$/;

/** Why a path is not an absolute POSIX path this world accepts, or null when it is. */
export function pathProblem(path: string): string | null {
  if (!path.startsWith('/')) return `"${path}" is not absolute: paths start with "/", e.g. /workspace/README.md`;
  if (path === ROOT) return null;
  if (path.endsWith('/')) return `"${path}" ends with "/": write it without the trailing slash`;
  for (const segment of path.slice(1).split('/')) {
    if (segment === '.' || segment === '..') return `"${path}" has a "${segment}" segment: write the full absolute path instead`;
    if (!SEGMENT.test(segment)) return `"${path}" has an invalid segment "${segment}": names use letters, digits, ".", "_" and "-"`;
  }
  return null;
}

export function parentOf(path: string): string {
  const index = path.lastIndexOf('/');
  return index <= 0 ? ROOT : path.slice(0, index);
}

export function nameOf(path: string): string {
  return path === ROOT ? ROOT : path.slice(path.lastIndexOf('/') + 1);
}

/** Snapshot key of a path: no "/" (JSON pointers), ":" cannot occur in a name. */
export function keyOf(path: string): string {
  return path.slice(1).split('/').join(':');
}

export function extensionOf(path: string): string {
  const name = nameOf(path);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1) : '';
}

export function isReadOnly(path: string): boolean {
  return path === READ_ONLY_ROOT || path.startsWith(`${READ_ONLY_ROOT}/`);
}

export function isInside(path: string, ancestor: string): boolean {
  return ancestor === ROOT ? path !== ROOT : path.startsWith(`${ancestor}/`);
}

/** UTF-8 bytes, a lone surrogate counting as the three of U+FFFD (as TextEncoder writes it), without encoding. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Lines without their terminators; a final newline does not start another line. */
export function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Code-unit order: the order must not depend on the machine's locale. */
export function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

export function nextRevision(state: FilesState, path: string): string {
  return `r${sha256Hex(`${state.salt}\u0000${path}\u0000${state.clock}`).slice(0, 10)}`;
}

// ---------------------------------------------------------------- generation

interface Person {
  email: string;
}

class TreeBuilder {
  readonly nodes = new Map<string, FileNode>();
  constructor(private readonly random: Random) {}

  dir(path: string, day: number): void {
    this.nodes.set(path, { path, type: 'dir', content: '', modified: day * DAY + this.random.int(0, 5 * 60), revision: null, tags: [] });
  }

  file(path: string, content: string, modified: number, tags: string[] = []): FileNode {
    const node: FileNode = { path, type: 'file', content, modified, revision: `r${this.random.hex(10)}`, tags };
    this.nodes.set(path, node);
    return node;
  }

  /** A time on a given day, in working hours. */
  at(day: number): number {
    return day * DAY + this.random.int(6 * 60, 22 * 60);
  }
}

export function generateFilesState(random: Random): FilesState {
  const project = random.pick(PROJECTS);
  const organisation = random.pick(ORGANISATIONS);
  const lasts = random.sample(LAST_NAMES, 6);
  const people = random.sample(FIRST_NAMES, 6).map((first, index): Person => ({ email: `${first}.${lasts[index]!}@${organisation}.example.com` }));
  const person = () => random.pick(people).email;
  const tree = new TreeBuilder(random);
  const token = (length: number) => random.hex(length);
  const host = () => `${random.pick(HOSTS)}-${token(4)}.internal`;
  const fill = (template: string) =>
    template
      .replaceAll('{hex}', token(6))
      .replaceAll('{host}', host())
      .replaceAll('{email}', person())
      .replaceAll('{n}', String(random.int(3, 900)));
  const planted: Planted = { settings: [], etc_settings: [], locks: [], extensions: [] };
  const major = random.int(1, 4);
  const minor = random.int(0, 19);
  const patch = random.int(1, 9);
  const version = `${major}.${minor}.${patch}`;

  for (const [path, day] of [['/etc', 0], [`/etc/${project}`, 0], ['/workspace', 0], ['/workspace/config', 1], ['/workspace/config/overrides', 2], ['/workspace/src', 1], ['/workspace/docs', 2], ['/workspace/logs', 2], ['/workspace/tmp', 3]] as const) {
    tree.dir(path, day);
  }

  // /etc: read-only for every tool.
  tree.file('/etc/hosts', `127.0.0.1 localhost\n10.${random.int(0, 255)}.${random.int(0, 255)}.${random.int(1, 254)} ${host()}\n10.${random.int(0, 255)}.${random.int(0, 255)}.${random.int(1, 254)} ${host()}\n`, tree.at(0), ['etc']);
  const confPath = `/etc/${project}/service.conf`;
  const confLines = [`# owner: ${person()}`, `# Managed by the platform team. Read-only here: local changes go in /workspace/config/overrides/.`, `log_level = ${random.pick(LOG_LEVELS)}`];
  for (const setting of ETC_SETTINGS) {
    const value = random.int(setting.min, setting.max);
    let target = random.int(setting.min, setting.max);
    while (target === value) target = random.int(setting.min, setting.max);
    confLines.push(`${setting.name} = ${value}`);
    planted.etc_settings.push({ name: setting.name, value: String(value), target: String(target), path: confPath, key: keyOf(confPath) });
  }
  confLines.push(`region = ${random.pick(REGIONS)}`);
  tree.file(confPath, `${confLines.join('\n')}\n`, tree.at(0), ['etc', 'etc-conf']);

  // Project files at the workspace root.
  const maintainer = person();
  tree.file(
    '/workspace/README.md',
    `# ${capitalise(project)}\n\n${capitalise(project)} is a service of ${organisation}.\n\nMaintainer: ${maintainer}\nCurrent version: ${version}\nBuild: b-${token(10)}\n`,
    tree.at(random.int(60, 110)),
    ['doc-root'],
  );
  const notes = random.sample(CHANGELOG_NOTES, 4);
  tree.file(
    '/workspace/CHANGELOG.md',
    `# Changelog\n\n## ${version} - ${dateOf(random.int(90, 110))}\n- ${notes[0]} (#${random.int(100, 999)})\n- ${notes[1]} (#${random.int(100, 999)})\n\n## ${major}.${minor}.${patch - 1} - ${dateOf(random.int(30, 80))}\n- ${notes[2]} (#${random.int(100, 999)})\n- ${notes[3]} (#${random.int(100, 999)})\n`,
    tree.at(random.int(90, 110)),
  );
  const items = random.sample(TODO_ITEMS, random.int(3, 5));
  tree.file(
    '/workspace/TODO.md',
    `# TODO\n${items.map((item, index) => `- [${index > 0 && random.chance(0.3) ? 'x' : ' '}] ${item} (T-${token(5)})`).join('\n')}\n`,
    tree.at(random.int(70, 110)),
    ['todo'],
  );
  tree.file(
    '/workspace/package.json',
    `${JSON.stringify({ name: `@${organisation}/${project}`, version, private: true, scripts: { build: 'tsc -p .', test: 'node --test' } }, null, 2)}\n`,
    tree.at(random.int(60, 110)),
  );

  // Env files: every service's key appears in exactly one file, right below its rotated-out twin.
  const services = random.sample(SERVICES, ENV_FILES.length * 2);
  const bakDay = random.int(20, 50);
  ENV_FILES.forEach((envFile, index) => {
    const path = `/workspace/config/${envFile.name}`;
    const owner = person();
    const lines = [`# owner: ${owner}`, `# ${envFile.purpose} settings for ${project}; keys rotate every quarter.`];
    const backupLines = [`# owner: ${owner}`, `# Backup of ${envFile.name} taken ${dateOf(bakDay)}.`];
    for (const service of services.slice(index * 2, index * 2 + 2)) {
      const name = `${service}_API_KEY`;
      const value = `key-${token(16)}`;
      const previous = `key-${token(16)}`;
      lines.push(`${name}_PREVIOUS=${previous}`, `${name}=${value}`);
      backupLines.push(`${name}=${previous}`);
      planted.settings.push({ name, value, previous, path, key: keyOf(path), owner });
    }
    lines.push(`${envFile.name.split('.')[0]!.toUpperCase()}_DATABASE_URL=postgres://${project}@db-${token(4)}.internal:5432/${project}`);
    tree.file(path, `${lines.join('\n')}\n`, tree.at(random.int(bakDay + 5, 110)), ['env']);
    if (envFile.name === 'app.env') {
      tree.file('/workspace/config/app.env.bak', `${backupLines.join('\n')}\n`, tree.at(bakDay), ['backup']);
    }
  });
  tree.file(
    '/workspace/config/settings.json',
    `${JSON.stringify({ region: random.pick(REGIONS), feature_flags: { [`ff_${token(4)}`]: random.chance(0.5), [`ff_${token(4)}`]: random.chance(0.5) }, build_id: `b-${token(10)}` }, null, 2)}\n`,
    tree.at(random.int(10, 110)),
  );
  tree.file(
    '/workspace/config/overrides/README.md',
    '# Overrides\nDrop-in files for the read-only settings under /etc.\nA drop-in has the same file name as the file it overrides and holds only the changed `key = value` lines.\n',
    tree.at(2),
  );

  // Source files.
  for (const module of random.sample(MODULES, random.int(3, 5))) {
    const constant = module.toUpperCase();
    tree.file(
      `/workspace/src/${module}.ts`,
      `// owner: ${person()}\nexport const ${constant}_BUILD_ID = 'b-${token(10)}';\nexport const ${constant}_TIMEOUT_MS = ${random.int(100, 9000)};\n\nexport function ${module}Ready(): boolean {\n  return true;\n}\n`,
      tree.at(random.int(5, 110)),
      ['source'],
    );
  }
  if (random.chance(0.5)) {
    tree.file('/workspace/src/README.md', `# Source layout\nOne module per file; owners are named on each file's first line.\nBuild tag: b-${token(8)}\n`, tree.at(random.int(5, 110)), ['doc-src']);
  }

  // Documentation: numbered steps, every line distinct and non-empty.
  for (const doc of random.sample(DOCS, random.int(2, 4))) {
    const steps = random.sample(DOC_STEPS, random.int(8, 10)).map((step, index) => `${index + 1}. ${fill(step)}`);
    tree.file(`/workspace/docs/${doc.name}`, `# ${doc.title} for ${project} (rev ${token(6)})\n${steps.join('\n')}\n`, tree.at(random.int(5, 110)), ['doc']);
  }
  const lockedDoc = random.pick(LOCKED_DOCS);
  const docHold = `RH-${random.int(10_000, 99_999)}`;
  const docContact = person();
  const lockedDocPath = `/workspace/docs/${lockedDoc.name}`;
  tree.file(
    lockedDocPath,
    `# LOCKED: retention hold ${docHold} (${lockedDoc.reason})\n# Hold contact: ${docContact}\n${random
      .sample(DOC_STEPS, 6)
      .map((step, index) => `${index + 1}. ${fill(step)}`)
      .join('\n')}\n`,
    tree.at(random.int(5, 50)),
    ['doc', 'locked'],
  );
  planted.locks.push({ path: lockedDocPath, key: keyOf(lockedDocPath), hold: docHold, contact: docContact });

  // Logs: three stale build logs and a LOCKED audit log before the cutoff, two recent build logs after it.
  const staleDays = random.distinctIntegers(4, 3, STALE_BEFORE_DAY - 7);
  const recentDays = random.distinctIntegers(2, STALE_BEFORE_DAY + 3, 100).sort((left, right) => left - right);
  const buildLog = (day: number, tags: string[]) => {
    const started = tree.at(day);
    const stamp = (offset: number) => `[${timestamp(started - 40 + offset)}]`;
    const modules = random.int(40, 400);
    const tests = random.int(50, 900);
    tree.file(
      `/workspace/logs/build-${dateOf(day)}.log`,
      `${stamp(0)} build b-${token(10)} started on ${host()}\n${stamp(7)} compiled ${modules} modules in ${random.int(900, 90_000)} ms\n${stamp(19)} tests passed: ${tests}/${tests}\n${stamp(31)} artifact ${project}-${version}-${token(8)}.tgz\n`,
      started,
      ['log', ...tags],
    );
  };
  for (const day of staleDays.slice(0, 3)) buildLog(day, ['stale-log']);
  buildLog(recentDays[0]!, ['recent-log']);
  buildLog(recentDays[1]!, ['recent-log', 'newest-build-log']);
  const auditDay = staleDays[3]!;
  const auditHold = `RH-${random.int(10_000, 99_999)}`;
  const auditContact = person();
  const auditPath = `/workspace/logs/audit-${dateOf(auditDay)}-LOCKED.log`;
  tree.file(
    auditPath,
    `# LOCKED: retention hold ${auditHold} (security audit)\n# Hold contact: ${auditContact}\n[${timestamp(auditDay * DAY + 300)}] login ok user=${person()} session=s-${token(8)}\n[${timestamp(auditDay * DAY + 420)}] role granted admin to ${person()} ticket=SEC-${random.int(100, 999)}\n`,
    tree.at(auditDay),
    ['log', 'locked'],
  );
  planted.locks.push({ path: auditPath, key: keyOf(auditPath), hold: auditHold, contact: auditContact });

  // Scratch files.
  for (let index = random.int(2, 4); index > 0; index--) {
    tree.file(`/workspace/tmp/${token(8)}.tmp`, `cache ${token(16)}\n`, tree.at(random.int(60, 110)), ['tmp']);
  }

  const nodes = new Map([...tree.nodes.entries()].sort(([left], [right]) => compareText(left, right)));
  const counts = new Map<string, number>();
  for (const node of nodes.values()) {
    if (node.type === 'file' && isInside(node.path, '/workspace')) counts.set(extensionOf(node.path), (counts.get(extensionOf(node.path)) ?? 0) + 1);
  }
  planted.extensions = [...counts.entries()].sort(([left], [right]) => compareText(left, right)).map(([extension, count]) => ({ extension, count }));
  planted.settings.sort((left, right) => compareText(left.name, right.name));
  const latest = Math.max(...[...nodes.values()].map((node) => node.modified));
  return { project, organisation, nodes, clock: latest + 60, salt: random.hex(16), planted };
}
