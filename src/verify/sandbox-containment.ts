// Owns the two conformance checks only a server world can fail: that calls
// aimed outside its sandbox (paths that climb out of it, absolute paths
// elsewhere, SQL that attaches a file elsewhere) change nothing and read
// nothing outside the sandbox root, and that disposing of a session leaves no
// process of the child's group and no sandbox directory behind. A scripted
// world lives in this process's memory and skips both.

import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import type { JsonObject } from '../core/json-value.js';
import type { Connection } from '../world/in-process-connection.js';
import { groupGone } from '../world/servers/child-transport.js';
import type { Sandbox } from '../world/servers/sandbox.js';
import { closeKeptChildren } from '../world/servers/server-pool.js';
import { isServerWorld, type ServerWorld } from '../world/server-world.js';
import { aimedProperties, exampleObject, type AimedProperty } from './conformance-arguments.js';
import { callTool, listEveryTool, openSeeded, type ConformanceCheck, type ConformanceContext } from './conformance-session.js';

type Outcome = Omit<ConformanceCheck, 'id' | 'title'>;

const PROBE = 'conformance-outside-probe';
const NO_SANDBOX = 'a scripted world lives in this process’s memory: it has no sandbox on disk and no child process';

/** The world as given, telling us each sandbox it is handed (sessions do not show theirs). */
function watching(world: ServerWorld, sandboxes: Sandbox[], withoutReuse = false): ServerWorld {
  const { reuse, ...rest } = world;
  return {
    ...rest,
    ...(reuse && !withoutReuse ? { reuse } : {}),
    populate: (sandbox, random, config, context) => {
      sandboxes.push(sandbox);
      return world.populate(sandbox, random, config, context);
    },
  };
}

/** Every name under `directory` with its size (directories end in /), skipping what lies under `skip`. */
function tree(directory: string, skip?: string): string[] {
  const out: string[] = [];
  const walk = (current: string) => {
    let names: string[];
    try {
      names = readdirSync(current).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(current, name);
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (!stat) continue;
      const shown = relative(directory, path);
      if (stat.isDirectory()) {
        out.push(`${shown}/`);
        if (path !== skip) walk(path);
      } else out.push(`${shown} ${stat.size}`);
    }
  };
  walk(directory);
  return out;
}

function changes(before: readonly string[], after: readonly string[]): string[] {
  const was = new Set(before);
  const is = new Set(after);
  return [...after.filter((entry) => !was.has(entry)).map((entry) => `+${entry}`), ...before.filter((entry) => !is.has(entry)).map((entry) => `-${entry}`)];
}

/** The values a call aims outside with: relative climbs, absolute paths elsewhere, the shown root climbed out of, SQL attaching a file elsewhere. */
function aimedValues(property: AimedProperty, world: ServerWorld, decoy: string): string[] {
  const decoyName = basename(decoy);
  if (property.kind === 'sql') {
    return [
      `ATTACH DATABASE '${decoy}/${PROBE}.db' AS conformance_probe`,
      `ATTACH DATABASE '../../${decoyName}/${PROBE}-relative.db' AS conformance_probe`,
      `VACUUM INTO '${decoy}/${PROBE}-vacuum.db'`,
    ];
  }
  return [`../${PROBE}`, `../../${PROBE}`, `../../${decoyName}/${PROBE}`, `${decoy}/${PROBE}`, `${decoy}/existing.txt`, `${world.shownRoot}/../../${decoyName}/${PROBE}`];
}

/** A file inside the sandbox as the model names it, for the path arguments not being aimed (a move's source). */
function insidePath(world: ServerWorld, sandbox: Sandbox): string {
  const file = tree(sandbox.root).find((entry) => !entry.endsWith('/'));
  return file ? `${world.shownRoot}/${file.slice(0, file.lastIndexOf(' '))}` : world.shownRoot;
}

export async function checkSandboxContainment(context: ConformanceContext): Promise<Outcome> {
  const { world } = context;
  if (!isServerWorld(world)) return { status: 'skip', detail: NO_SANDBOX };
  // A child of its own works in the sandbox root, so relative climbs start there; a kept child of the pool works elsewhere and is re-pointed.
  const modes: Array<[label: string, withoutReuse: boolean]> = world.reuse ? [['own child', true], ['kept child', false]] : [['', true]];
  const failures: string[] = [];
  const seen: string[] = [];
  for (const [label, withoutReuse] of modes) {
    const aimed = await aimOutside(context, world, withoutReuse);
    const prefix = label ? `${label}: ` : '';
    if (aimed.calls === 0) return { status: 'pass', detail: `no tool takes a path-like or SQL argument, so no call could be aimed outside (${world.tools.length} tools)` };
    const tally = `${prefix}${aimed.calls} calls aimed outside through ${aimed.tools} tools: ${aimed.refused} refused, ${aimed.answered.length} answered`;
    if (aimed.changed.length > 0) failures.push(`${tally}; outside the sandbox root changed: ${aimed.changed.slice(0, 8).join(', ')}${aimed.answered.length ? `; answered: ${aimed.answered.slice(0, 5).join(', ')}` : ''}`);
    else if (aimed.leaked.length > 0) failures.push(`${tally}; the decoy file's content outside the sandbox was read back by ${aimed.leaked.slice(0, 5).join(', ')}`);
    else seen.push(`${tally}${aimed.answered.length ? ` (${aimed.answered.slice(0, 2).join(', ')}${aimed.answered.length > 2 ? ', …' : ''})` : ''}`);
  }
  if (failures.length > 0) return { status: 'fail', detail: failures.join('; ') };
  return { status: 'pass', detail: `${seen.join('; ')}; nothing outside the sandbox root changed or was read` };
}

interface Aimed {
  calls: number;
  tools: number;
  refused: number;
  /** The calls answered without an error (a refusal may still be text in a clean result). */
  answered: string[];
  /** The calls whose answer carried the decoy file's content. */
  leaked: string[];
  /** What changed outside the sandbox root, as +name size / -name size. */
  changed: string[];
}

async function aimOutside(context: ConformanceContext, world: ServerWorld, withoutReuse: boolean): Promise<Aimed> {
  const sandboxes: Sandbox[] = [];
  const session = await openSeeded(context, 0, {}, watching(world, sandboxes, withoutReuse));
  const sandbox = sandboxes[0]!;
  // Next to the sandbox's private directory, where a climb out of it or an absolute path would land.
  const decoy = await mkdtemp(join(dirname(sandbox.base), 'episode-factory-conformance-decoy-'));
  const secret = `decoy-secret-${[...basename(decoy)].reverse().join('')}`;
  await writeFile(join(decoy, 'existing.txt'), `${secret}\n`);
  const stray = join(dirname(sandbox.base), PROBE);
  try {
    const before = { holder: tree(sandbox.base, sandbox.root), decoy: tree(decoy), stray: existsSync(stray) };
    const hints = { insidePath: insidePath(world, sandbox) };
    const aimed: Aimed = { calls: 0, tools: 0, refused: 0, answered: [], leaked: [], changed: [] };
    const tools = new Set<string>();
    let connection: Connection = await session.connect({});
    try {
      for (const tool of world.tools) {
        for (const property of aimedProperties(tool)) {
          for (const value of aimedValues(property, world, decoy)) {
            const args: JsonObject = { ...exampleObject(tool.inputSchema, hints), [property.name]: property.list ? [value] : value };
            const outcome = await callTool(connection, tool.name, args, 10_000);
            aimed.calls++;
            tools.add(tool.name);
            if (outcome.ok) aimed.answered.push(`${tool.name}(${property.name}: ${value})`);
            else aimed.refused++;
            if (outcome.text.includes(secret)) aimed.leaked.push(`${tool.name}(${property.name}: ${value})`);
            // A server that died of a call is a fault of its own; the check goes on with a fresh connection.
            if (outcome.error && /closed|not connected/i.test(outcome.error)) {
              await connection.close().catch(() => undefined);
              connection = await session.connect({});
            }
          }
        }
      }
    } finally {
      await connection.close();
    }
    aimed.tools = tools.size;
    const after = { holder: tree(sandbox.base, sandbox.root), decoy: tree(decoy), stray: existsSync(stray) };
    aimed.changed = [
      ...changes(before.holder, after.holder).map((entry) => `sandbox holder ${entry}`),
      ...changes(before.decoy, after.decoy).map((entry) => `decoy ${entry}`),
      ...(after.stray && !before.stray ? [`${stray} was created`] : []),
    ];
    return aimed;
  } finally {
    await session.dispose();
    await rm(decoy, { recursive: true, force: true });
    // A probe that escaped must not stay behind, whatever the verdict said.
    await rm(stray, { recursive: true, force: true });
  }
}

export async function checkNoLeftovers(context: ConformanceContext): Promise<Outcome> {
  const { world } = context;
  if (!isServerWorld(world)) return { status: 'skip', detail: NO_SANDBOX };
  const problems: string[] = [];
  const seen: string[] = [];
  // A child of its own per connection, disposed with the connection still open (the harsher ending).
  const fresh = await sessionLeftovers(context, world, true);
  if (fresh.pids.length === 0) problems.push('no child was started for a connection');
  for (const pid of fresh.pids) if (!(await groupGone(pid, 2000))) problems.push(`process group ${pid} still alive after dispose`);
  if (existsSync(fresh.sandbox)) problems.push(`sandbox ${fresh.sandbox} still exists after dispose`);
  seen.push(`own child (group ${fresh.pids.join(', ') || 'none'}) gone, sandbox removed`);
  if (world.reuse) {
    // A kept child outlives its episodes by design; the sandbox must not, and closing the pool must end the child's group.
    const kept = await sessionLeftovers(context, world, false);
    if (existsSync(kept.sandbox)) problems.push(`sandbox ${kept.sandbox} still exists after dispose of a pooled session`);
    await closeKeptChildren();
    for (const pid of kept.pids) if (!(await groupGone(pid, 2000))) problems.push(`kept process group ${pid} still alive after the pool was closed`);
    seen.push(`kept child (group ${kept.pids.join(', ') || 'none'}) gone once the pool closed, sandbox removed`);
  }
  if (problems.length > 0) return { status: 'fail', detail: problems.join('; ') };
  return { status: 'pass', detail: seen.join('; ') };
}

async function sessionLeftovers(context: ConformanceContext, world: ServerWorld, withoutReuse: boolean): Promise<{ pids: number[]; sandbox: string }> {
  const pids: number[] = [];
  const sandboxes: Sandbox[] = [];
  const watched = watching(world, sandboxes, withoutReuse);
  const session = await openSeeded(context, 0, { onEvent: (event, data) => void (event === 'server_started' && typeof data.pid === 'number' && pids.push(data.pid)) }, watched);
  try {
    const connection = await session.connect({});
    await listEveryTool(connection);
  } finally {
    await session.dispose();
  }
  return { pids, sandbox: sandboxes[0]?.base ?? '' };
}
