// Owns finding out, before any episode runs, that a model can act: Ollama
// answers at the host, the model is pulled, its digest can be read (a record
// from a model without one could not be traced back to it), and which family
// it is (for the codec). Every request has a silence limit, so a host that
// accepts connections and never answers is reported, not waited on forever.
// Every way this fails is one line naming the problem and the command that
// fixes it.

import { Ollama } from 'ollama';
import { errorMessage, FactoryError } from '../../core/errors.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../chat-model.js';
import { sameModel } from '../model-name.js';
import { fetchWithSilenceLimit, formatSeconds, SilenceTimeoutError } from '../../core/timed-fetch.js';

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

const NOT_AN_OLLAMA_FIX = 'point --ollama-host (or OLLAMA_HOST) at a running Ollama (`ollama serve`; `curl <host>/api/version` answers at once)';

/** A start-up request that failed for a reason other than the connection: silence, an answer that is not JSON, an HTTP error. */
function badAnswer(host: string, endpoint: string, error: unknown): FactoryError | undefined {
  if (error instanceof SilenceTimeoutError) {
    return unavailable(`Ollama at ${host} did not answer ${endpoint} within ${formatSeconds(error.silenceMs)}`, `${NOT_AN_OLLAMA_FIX}; a host that accepts connections but never answers is not one`, error);
  }
  if (error instanceof SyntaxError) return unavailable(`${host} answered ${endpoint} with something that is not JSON (${errorMessage(error)}): it is not an Ollama`, NOT_AN_OLLAMA_FIX, error);
  return undefined;
}

export interface InspectOptions {
  /** The client to ask; by default one whose every request waits at most `timeoutMs`. */
  client?: Ollama;
  /** The longest one request may stay silent; default STARTUP_CHECK_TIMEOUT_MS. */
  timeoutMs?: number;
}

export async function inspectModel(host: string, model: string, options: InspectOptions = {}): Promise<ModelInfo> {
  const client = options.client ?? new Ollama({ host, fetch: fetchWithSilenceLimit({ silenceMs: options.timeoutMs ?? STARTUP_CHECK_TIMEOUT_MS }) });
  let version: string;
  try {
    version = (await client.version()).version;
  } catch (error) {
    const bad = badAnswer(host, '/api/version', error);
    if (bad) throw bad;
    const shaped = error as ClientError;
    if (shaped.name === 'ResponseError') throw unavailable(`${host} answered /api/version with HTTP ${shaped.status_code}: ${errorMessage(error)}`, NOT_AN_OLLAMA_FIX, error);
    const cause = shaped.cause;
    throw unavailable(
      `Ollama is not answering at ${host} (${cause?.code ?? cause?.message ?? errorMessage(error)})`,
      'start it with `ollama serve`, or point --ollama-host (or OLLAMA_HOST) at a running Ollama',
      error,
    );
  }
  if (typeof version !== 'string') throw unavailable(`${host} answered /api/version without a version: it is not an Ollama`, NOT_AN_OLLAMA_FIX);
  let listed: { name: string; model?: string; digest?: string; details?: { family?: string; parameter_size?: string; quantization_level?: string } }[];
  try {
    listed = (await client.list()).models;
  } catch (error) {
    throw badAnswer(host, '/api/tags', error) ?? unavailable(`Ollama at ${host} could not list its models: ${errorMessage(error)}`, 'check the server with `ollama list`', error);
  }
  if (!Array.isArray(listed)) throw unavailable(`${host} answered /api/tags without a model list: it is not an Ollama`, NOT_AN_OLLAMA_FIX);
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
    const bad = badAnswer(host, '/api/show', error);
    if (bad) throw bad;
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
