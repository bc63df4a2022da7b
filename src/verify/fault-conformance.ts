// Owns the conformance check that every kind of the fault catalog fires in
// front of a world: for each kind, a connection behind the fault layer with a
// plan that forces that kind on the first call (or listing), a call of a tool
// that answers made-up arguments cleanly, and then both what the layer
// recorded (FaultState.fired, what becomes recovery.faults_fired) and what the
// client saw (an error, an isError result, a renamed tool, a stale answer).

import { canonicalJson } from '../core/canonical-json.js';
import type { JsonObject } from '../core/json-value.js';
import { substream } from '../core/random.js';
import { FAULT_KINDS, LIST_FAULTS, type FaultEntry, type FaultKind, type FiredFault } from '../world/faults/fault-plan.js';
import { FaultState } from '../world/faults/fault-state.js';
import type { Connection } from '../world/in-process-connection.js';
import { isServerWorld } from '../world/server-world.js';
import type { ToolSpec } from '../world/world-contract.js';
import { exampleObject } from './conformance-arguments.js';
import { recordedCalls } from './conformance-episodes.js';
import { callTool, listEveryTool, openSeeded, type ConformanceCheck, type ConformanceContext } from './conformance-session.js';

type Outcome = Omit<ConformanceCheck, 'id' | 'title'>;

interface WorkingCall {
  tool: ToolSpec;
  args: JsonObject;
}

/** What a kind needs beyond "call a tool that works": its plan entry's extras, and which calls to make. */
interface Provocation {
  entry: FaultEntry;
  /** What the client saw went wrong, or undefined when the fault showed as it should. */
  run: (connection: Connection) => Promise<string | undefined>;
}

const isRead = (call: WorkingCall) => call.tool.annotations?.readOnlyHint === true;

function provocation(kind: FaultKind, working: readonly WorkingCall[], toolCount: number): Provocation | string {
  const subject = working.find(isRead) ?? working[0]!;
  const base = { id: `conformance-${kind}`, kind };
  const first = LIST_FAULTS.has(kind) ? { lists: [1] } : { calls: [1], tools: [subject.tool.name] };
  const call = (connection: Connection, target: WorkingCall = subject, timeoutMs?: number) => callTool(connection, target.tool.name, target.args, timeoutMs);
  switch (kind) {
    case 'empty_first_page':
      return {
        entry: { ...base, ...first },
        run: async (connection) => {
          const page = await connection.client.listTools();
          if (page.tools.length !== 0 || !page.nextCursor) return `the first page held ${page.tools.length} tools${page.nextCursor ? '' : ' and no cursor'}`;
          const all = await listEveryTool(connection);
          return all.length === toolCount ? undefined : `following the cursor gave ${all.length} tools, not ${toolCount}`;
        },
      };
    case 'paginate_tools':
      return {
        entry: { ...base, ...first, params: { page_size: 2 } },
        run: async (connection) => {
          const page = await connection.client.listTools();
          if (page.tools.length > 2 || (toolCount > 2 && !page.nextCursor)) return `the first page held ${page.tools.length} tools${page.nextCursor ? '' : ' and no cursor'}`;
          const all = await listEveryTool(connection);
          return all.length === toolCount ? undefined : `the pages held ${all.length} tools, not ${toolCount}`;
        },
      };
    case 'jsonrpc_error':
      return { entry: { ...base, ...first }, run: async (connection) => ((await call(connection)).error ? undefined : 'the call was not answered with a JSON-RPC error') };
    case 'tool_error':
    case 'transient':
      return {
        entry: { ...base, ...first },
        run: async (connection) => {
          if ((await call(connection)).result?.isError !== true) return 'the call was not answered with an isError result';
          // A transient failure passes: the same call again works.
          if (kind === 'transient' && !(await call(connection)).ok) return 'the retry after a transient failure failed too';
          return undefined;
        },
      };
    case 'timeout':
      return { entry: { ...base, ...first }, run: async (connection) => (/time/i.test((await call(connection, subject, 500)).error ?? '') ? undefined : 'the call did not time out') };
    case 'latency':
      return { entry: { ...base, ...first, params: { ms: 20 } }, run: async (connection) => ((await call(connection)).ok ? undefined : 'a merely late answer was not a clean one') };
    case 'truncated_result':
      return { entry: { ...base, ...first }, run: async (connection) => ((await call(connection)).result ? undefined : 'no result came back') };
    case 'wrong_result_schema': {
      const withSchema = working.find((candidate) => candidate.tool.outputSchema !== undefined);
      if (!withSchema) return 'no tool that answered cleanly declares an output schema, so there is nothing to violate';
      return { entry: { ...base, calls: [1], tools: [withSchema.tool.name] }, run: async (connection) => ((await call(connection, withSchema)).result ? undefined : 'no result came back') };
    }
    case 'tool_renamed':
      return {
        entry: { ...base, ...first },
        run: async (connection) => {
          if ((await call(connection)).ok) return 'the call under the old name still worked';
          const names = (await listEveryTool(connection)).map((tool) => tool.name);
          return !names.includes(subject.tool.name) && names.includes(`${subject.tool.name}_v2`) ? undefined : `the listing after the rename is [${names.join(', ')}]`;
        },
      };
    case 'disconnect':
      return { entry: { ...base, ...first }, run: async (connection) => ((await call(connection)).ok ? 'the call was answered through a dropped connection' : undefined) };
    case 'stale_read': {
      // A read, a write the layer counts (another tool: the plan makes every call of the read tool a read; the first write that works again here), the same read again.
      const writes = working.filter((candidate) => candidate.tool.name !== subject.tool.name && !isRead(candidate));
      if (writes.length === 0) return 'no call but the read answered cleanly, so no write could make a read stale';
      return {
        entry: { ...base, tools: [subject.tool.name], params: { reads: [subject.tool.name] } },
        run: async (connection) => {
          const before = await call(connection);
          let wrote = false;
          for (const write of writes) if (!wrote) wrote = (await call(connection, write)).ok;
          if (!wrote) return `none of the ${writes.length} writes that worked in the trial worked again`;
          const stale = await call(connection);
          return canonicalJson((stale.result ?? null) as never) === canonicalJson((before.result ?? null) as never) ? undefined : 'the read after the write was not the answer from before it';
        },
      };
    }
  }
}

export async function checkFaultKinds(context: ConformanceContext): Promise<Outcome> {
  const { world } = context;
  // The calls a scripted solution made name real records (an order id); they were made on the lane's first seed.
  const recorded = recordedCalls(await context.episodes());
  const seed = context.lane && context.noEpisode === undefined ? context.lane.seeds.from : 0;
  // Each kind then gets a fresh world of that seed, so a write that worked in the trial works again in front of its fault.
  const hints = { insidePath: isServerWorld(world) ? world.shownRoot : '/' };
  // Which calls answer without an error: the recorded ones, in order, then arguments made up from each schema.
  const working = await workingCalls(context, seed, [...recorded, ...world.tools.map((tool) => ({ name: tool.name, args: exampleObject(tool.inputSchema, hints) }))]);
  if (working.length === 0) return { status: 'fail', detail: `no call answered without an error (${recorded.length} from scripted episodes, ${world.tools.length} with arguments made from the schemas), so no call fault could be shown` };
  const fired: string[] = [];
  const problems: string[] = [];
  const unexercised: string[] = [];
  for (const kind of FAULT_KINDS) {
    const plan = provocation(kind, working, world.tools.length);
    if (typeof plan === 'string') {
      unexercised.push(`${kind} (${plan})`);
      continue;
    }
    const firedFaults: FiredFault[] = [];
    const state = new FaultState({ faults: [plan.entry] }, substream(0, 'faults'), (fault) => firedFaults.push(fault));
    const fresh = await openSeeded(context, seed);
    let problem: string | undefined;
    try {
      const connection = await fresh.connect({ faults: state });
      try {
        problem = await plan.run(connection);
      } finally {
        await connection.close();
      }
    } finally {
      await fresh.dispose();
    }
    if (!firedFaults.some((fault) => fault.kind === kind)) problems.push(`${kind}: the fault layer recorded no ${kind}${firedFaults.length ? ` (it recorded ${firedFaults.map((fault) => fault.kind).join(', ')})` : ''}`);
    else if (problem) problems.push(`${kind}: recorded, but ${problem}`);
    else fired.push(kind);
  }
  const note = unexercised.length ? `; not exercised: ${unexercised.join('; ')}` : '';
  if (problems.length > 0) return { status: 'fail', detail: `${problems.join('; ')}${note}` };
  return { status: 'pass', detail: `${fired.length} of ${FAULT_KINDS.length} kinds fired, were recorded and showed (on ${[...new Set(working.map((call) => call.tool.name))].slice(0, 3).join(', ')}…)${note}` };
}

/** The candidates that answer without an error, tried in order on one fresh world of `seed`. */
async function workingCalls(context: ConformanceContext, seed: number, candidates: ReadonlyArray<{ name: string; args: JsonObject }>): Promise<WorkingCall[]> {
  const session = await openSeeded(context, seed);
  const working: WorkingCall[] = [];
  try {
    const trial = await session.connect({});
    try {
      for (const { name, args } of candidates) {
        const tool = context.world.tools.find((candidate) => candidate.name === name);
        if (tool && (await callTool(trial, name, args, 10_000)).ok) working.push({ tool, args });
      }
    } finally {
      await trial.close();
    }
  } finally {
    await session.dispose();
  }
  return working;
}
