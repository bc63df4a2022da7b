// Owns finding out, before any episode runs, that a model can act: Ollama
// answers at the host, the model is pulled, its digest can be read (a record
// from a model without one could not be traced back to it), and which family
// it is (for the codec). Every way this fails is one line naming the problem
// and the command that fixes it.

import { Ollama } from 'ollama';
import { errorMessage, FactoryError } from '../../core/errors.js';
import { sameModel } from '../../core/ollama-host.js';

export interface ModelInfo {
  host: string;
  /** The name as the user asked for it. */
  model: string;
  /** sha256 digest from /api/tags. */
  digest: string;
  family: string | null;
  parameter_size: string | null;
  quantization: string | null;
  /** Whether /api/show says the model supports native tool calling. */
  tools_capable: boolean;
  ollama_version: string;
}

interface ClientError {
  name?: string;
  status_code?: number;
  cause?: { code?: string; message?: string };
}

function unavailable(message: string, fix: string, cause?: unknown): FactoryError {
  return new FactoryError('model_unavailable', message, { fix, cause });
}

export async function inspectModel(host: string, model: string, client: Ollama = new Ollama({ host })): Promise<ModelInfo> {
  let version: string;
  try {
    version = (await client.version()).version;
  } catch (error) {
    const cause = (error as ClientError).cause;
    throw unavailable(
      `Ollama is not answering at ${host} (${cause?.code ?? cause?.message ?? errorMessage(error)})`,
      'start it with `ollama serve`, or point --ollama-host (or OLLAMA_HOST) at a running Ollama',
      error,
    );
  }
  let listed: { name: string; model?: string; digest?: string; details?: { family?: string; parameter_size?: string; quantization_level?: string } }[];
  try {
    listed = (await client.list()).models;
  } catch (error) {
    throw unavailable(`Ollama at ${host} could not list its models: ${errorMessage(error)}`, 'check the server with `ollama list`', error);
  }
  const found = listed.find((candidate) => sameModel(model, candidate.name) || (candidate.model !== undefined && sameModel(model, candidate.model)));
  if (!found) {
    const names = listed.map((candidate) => candidate.name).sort();
    throw unavailable(`model "${model}" is not pulled on ${host}${names.length ? ` (it has: ${names.join(', ')})` : ' (it has no models)'}`, `run \`ollama pull ${model}\``);
  }
  if (typeof found.digest !== 'string' || !/^(sha256:)?[0-9a-f]{12,}$/.test(found.digest)) {
    throw unavailable(`cannot read the digest of model "${model}" from ${host}/api/tags`, `pull it again with \`ollama pull ${model}\`: records must name the exact model that acted`);
  }
  let capabilities: string[] = [];
  let family = found.details?.family ?? null;
  try {
    const shown = await client.show({ model: found.name });
    capabilities = Array.isArray(shown.capabilities) ? shown.capabilities : [];
    family = shown.details?.family ?? family;
  } catch (error) {
    if ((error as ClientError).status_code !== 404) throw unavailable(`Ollama at ${host} could not show model "${model}": ${errorMessage(error)}`, 'check the model with `ollama show ' + model + '`', error);
  }
  return {
    host,
    model,
    digest: found.digest,
    family,
    parameter_size: found.details?.parameter_size ?? null,
    quantization: found.details?.quantization_level ?? null,
    tools_capable: capabilities.includes('tools'),
    ollama_version: version,
  };
}
