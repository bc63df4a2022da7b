// Owns the probe parts that read a sandbox through the server itself: a
// read-only tool of the catalog called on a child of its own, started on the
// sandbox exactly as an episode's is and killed (its whole group) after the
// call, its answer normalised like every other.

import { FactoryError, errorMessage } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { createClient } from '../../in-process-connection.js';
import type { PopulateContext, ServerWorld } from '../../server-world.js';
import { NormalisingTransport } from '../normalising-transport.js';
import type { Sandbox } from '../sandbox.js';
import { childOnSandbox } from '../server-session.js';

const PROBE_CALL_TIMEOUT_MS = 15_000;

/** The tool's result as the server answers it (content, structuredContent, isError), the arguments in the model's view. */
export async function callProbeTool(world: ServerWorld, sandbox: Sandbox, context: PopulateContext, tool: string, args: JsonObject): Promise<JsonValue> {
  const annotations = world.tools.find((spec) => spec.name === tool)?.annotations;
  if (annotations && annotations.readOnlyHint === false) {
    throw new FactoryError('definition_invalid', `the probe of ${world.name} calls ${tool}, which the server does not mark read-only`, { fix: 'probe with a tool that only reads' });
  }
  const child = childOnSandbox(world, sandbox, context);
  const client = createClient();
  try {
    await client.connect(new NormalisingTransport(child, world.normalisations(sandbox, context.pinnedDate)), { timeout: PROBE_CALL_TIMEOUT_MS });
    return (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: PROBE_CALL_TIMEOUT_MS })) as JsonValue;
  } catch (error) {
    throw new FactoryError('server_failed', `the probe of ${world.name} could not call ${tool}: ${errorMessage(error)}`, { fix: 'check the tool-call part of the definition\'s probe with `episode-factory worlds check`' });
  } finally {
    await client.close().catch(() => undefined);
    await child.close().catch(() => undefined);
  }
}
