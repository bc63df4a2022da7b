// Owns finding out, before any episode runs, that a model behind an
// OpenAI-compatible server can act: something answers at the base URL, it
// speaks the protocol (GET /models lists models), the key is accepted, and
// the model asked for is served. Then, best effort, what the server says it
// loaded, so a record can be traced back to the weights: vLLM's `root` and
// /version, llama.cpp's /props, SGLang's /get_model_info, Ollama's
// /api/tags digest. Every request has a silence limit; every way the check
// fails is one line naming the problem and the flag or command that fixes it,
// and the API key is in no message.

import { createHash } from 'node:crypto';
import { errorMessage, FactoryError } from '../../core/errors.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../chat-model.js';
import { sameModel } from '../model-name.js';
import { fetchWithSilenceLimit, formatSeconds, SilenceTimeoutError } from '../../core/timed-fetch.js';
import { authorizationHeaders, openAIOrigin, redactKey, serverErrorMessage, type OpenAIServer } from './chat-completion.js';
import { textPreview } from '../../core/clipped-text.js';

export type OpenAIServerKind = 'vllm' | 'llama.cpp' | 'sglang' | 'ollama' | 'unknown';

export interface OpenAIModelInfo {
  baseUrl: string;
  /** The model id as the server lists it (the id requested). */
  model: string;
  server: OpenAIServerKind;
  /** What the server says it loaded: vLLM /v1/models `root`, llama.cpp /props `model_path`, SGLang /get_model_info `model_path`; null when none. */
  weights: string | null;
  /** vLLM max_model_len, llama.cpp default_generation_settings.n_ctx (or /v1/models data[].meta.n_ctx_train), else null. */
  max_model_len: number | null;
  owned_by: string | null;
  /** vLLM GET {origin}/version {version}; llama.cpp /props build_info; Ollama GET {origin}/api/version. */
  server_version: string | null;
  /** sha256 hex of llama.cpp /props chat_template text. */
  chat_template_sha256: string | null;
  /** Ollama's /v1: the model's digest from {origin}/api/tags (sha256 hex, as Ollama lists it); null elsewhere. */
  digest: string | null;
  /** Every id GET /models lists, sorted. */
  served: string[];
}

export interface InspectOpenAIOptions {
  /** The longest one request may stay silent; default STARTUP_CHECK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** The flag that named the model, for the fix when it is not served; default `--policy`. */
  flag?: string;
}

const START_FIX = 'start the server (e.g. `vllm serve <model>` or `llama-server -m <file> --port 8080`) or point --base-url (or OPENAI_BASE_URL) at it';
const NOT_OPENAI_FIX = 'point --base-url (or OPENAI_BASE_URL) at an OpenAI-compatible server, with its /v1 prefix (`curl <base>/models` lists its models)';

function unavailable(message: string, fix: string, cause?: unknown): FactoryError {
  return new FactoryError('model_unavailable', message, { fix, cause });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface Answer {
  status: number;
  text: string;
}

/** One GET, its whole body read within the silence limit. */
async function get(url: string, server: OpenAIServer, silenceMs: number): Promise<Answer> {
  const timed = fetchWithSilenceLimit({ silenceMs });
  const response = await timed(url, { headers: { Accept: 'application/json', ...authorizationHeaders(server) } });
  return { status: response.status, text: await response.text() };
}

/** A JSON object from `url`, or null for anything else: the extras never fail the check. */
async function extra(url: string, server: OpenAIServer, silenceMs: number): Promise<Record<string, unknown> | null> {
  try {
    const answer = await get(url, server, silenceMs);
    if (answer.status !== 200) return null;
    const parsed: unknown = JSON.parse(answer.text);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const count = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null);

/** The GET /models list, or the FactoryError saying why there is none. */
async function listModels(server: OpenAIServer, silenceMs: number): Promise<Record<string, unknown>[]> {
  const base = server.baseUrl;
  const scrub = (message: string) => redactKey(message, server.apiKey);
  let answer: Answer;
  try {
    answer = await get(`${base.replace(/\/+$/, '')}/models`, server, silenceMs);
  } catch (error) {
    if (error instanceof SilenceTimeoutError) {
      throw unavailable(`${base} did not answer GET /models within ${formatSeconds(silenceMs)}: it is not an OpenAI-compatible server`, `${NOT_OPENAI_FIX}; a host that accepts connections but never answers is not one`, error);
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw unavailable(`nothing is answering at ${base} (${cause?.code ?? cause?.message ?? errorMessage(error)})`, START_FIX, error);
  }
  if (answer.status === 401 || answer.status === 403) {
    throw unavailable(
      scrub(`${base} refused GET /models: HTTP ${answer.status}: ${serverErrorMessage(answer.text)}`),
      server.apiKey
        ? 'the key was refused: check the environment variable named by --api-key-env NAME holds the key the server was started with'
        : 'the server wants a key: pass --api-key-env NAME, naming an environment variable that holds it',
    );
  }
  if (answer.status === 404) {
    throw unavailable(`${base} has no GET /models (HTTP 404): it is not an OpenAI-compatible base URL`, `${NOT_OPENAI_FIX}; most servers want the /v1 at the end`);
  }
  if (answer.status !== 200) throw unavailable(scrub(`${base} answered GET /models with HTTP ${answer.status}: ${serverErrorMessage(answer.text)}`), NOT_OPENAI_FIX);
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    throw unavailable(scrub(`${base} answered GET /models with something that is not JSON (${textPreview(answer.text)}): it is not an OpenAI-compatible server`), NOT_OPENAI_FIX);
  }
  if (!isObject(parsed) || !Array.isArray(parsed.data)) {
    throw unavailable(scrub(`${base} answered GET /models without a \`data\` list (${textPreview(answer.text)}): it is not an OpenAI-compatible server`), NOT_OPENAI_FIX);
  }
  return parsed.data.filter((entry): entry is Record<string, unknown> => isObject(entry) && typeof entry.id === 'string');
}

function chosenModel(listed: Record<string, unknown>[], model: string): Record<string, unknown> | undefined {
  // Ollama's /v1 lists `name:tag`, and takes a name without a tag for `:latest`.
  return listed.find((entry) => entry.id === model) ?? listed.find((entry) => sameModel(model, entry.id as string));
}

export async function inspectOpenAIModel(server: OpenAIServer, model: string, options: InspectOpenAIOptions = {}): Promise<OpenAIModelInfo> {
  const silenceMs = options.timeoutMs ?? STARTUP_CHECK_TIMEOUT_MS;
  const listed = await listModels(server, silenceMs);
  const served = listed.map((entry) => entry.id as string).sort();
  const entry = chosenModel(listed, model);
  if (!entry) {
    const flag = options.flag ?? '--policy';
    throw unavailable(
      `model "${model}" is not served at ${server.baseUrl} (${served.length ? `it serves: ${served.join(', ')}` : 'it serves no models'})`,
      served.length === 1 ? `pass ${flag} openai:${served[0]}` : `pass ${flag} openai:<one of them>`,
    );
  }
  const id = entry.id as string;
  const ownedBy = text(entry.owned_by);
  const meta = isObject(entry.meta) ? entry.meta : {};

  const origin = openAIOrigin(server.baseUrl);
  const ask = (path: string) => extra(`${origin}${path}`, server, silenceMs);
  // vLLM, SGLang and llama.cpp name themselves in owned_by, so only their own extras are asked;
  // any other owner (Ollama says `library`) shows what it is by which extras answer.
  const owner = ownedBy === 'vllm' || ownedBy === 'sglang' || ownedBy === 'llamacpp' ? ownedBy : 'other';
  const [version, props, modelInfo, ollamaVersion, tags] = await Promise.all([
    owner === 'vllm' || owner === 'other' ? ask('/version') : null,
    owner === 'llamacpp' || owner === 'other' ? ask('/props') : null,
    owner === 'sglang' || owner === 'other' ? ask('/get_model_info') : null,
    owner === 'other' ? ask('/api/version') : null,
    owner === 'other' ? ask('/api/tags') : null,
  ]);

  const isProps = props !== null && (text(props.model_path) !== null || isObject(props.default_generation_settings) || text(props.build_info) !== null);
  const isSglang = ownedBy === 'sglang' || (modelInfo !== null && text(modelInfo.model_path) !== null);
  const isOllama = ollamaVersion !== null && text(ollamaVersion.version) !== null;
  const kind: OpenAIServerKind = ownedBy === 'vllm' ? 'vllm' : isProps || ownedBy === 'llamacpp' ? 'llama.cpp' : isSglang ? 'sglang' : isOllama ? 'ollama' : 'unknown';

  const info: OpenAIModelInfo = {
    baseUrl: server.baseUrl,
    model: id,
    server: kind,
    weights: null,
    max_model_len: count(entry.max_model_len),
    owned_by: ownedBy,
    server_version: null,
    chat_template_sha256: null,
    digest: null,
    served,
  };
  switch (kind) {
    case 'vllm':
      info.weights = text(entry.root);
      info.server_version = version ? text(version.version) : null;
      break;
    case 'llama.cpp': {
      const settings = props && isObject(props.default_generation_settings) ? props.default_generation_settings : {};
      info.weights = props ? (text(props.model_path) ?? text(props.model_alias)) : null;
      info.max_model_len = count(settings.n_ctx) ?? count(props?.n_ctx) ?? count(meta.n_ctx_train) ?? info.max_model_len;
      info.server_version = props ? text(props.build_info) : null;
      const template = props ? text(props.chat_template) : null;
      info.chat_template_sha256 = template === null ? null : createHash('sha256').update(template).digest('hex');
      break;
    }
    case 'sglang':
      info.weights = (modelInfo ? text(modelInfo.model_path) : null) ?? text(entry.root);
      break;
    case 'ollama': {
      info.server_version = text(ollamaVersion!.version);
      const models = tags && Array.isArray(tags.models) ? tags.models.filter(isObject) : [];
      const found = models.find((candidate) => (typeof candidate.name === 'string' && sameModel(id, candidate.name)) || (typeof candidate.model === 'string' && sameModel(id, candidate.model)));
      const digest = found ? text(found.digest) : null;
      info.digest = digest !== null && /^(sha256:)?[0-9a-f]{12,}$/.test(digest) ? digest : null;
      break;
    }
    case 'unknown':
      info.weights = text(entry.root);
      info.server_version = version ? text(version.version) : null;
      break;
  }
  return info;
}
