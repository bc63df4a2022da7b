// Owns where an OpenAI-compatible server is and how to authenticate to it, for
// every part of the factory that talks to one (the model roles, the
// embedder): --base-url, else OPENAI_BASE_URL, else vLLM's default; the key
// from the environment variable the user names, never from a flag's value,
// so it cannot land in shell history, a record or a log.

import { FactoryError } from '../../core/errors.js';

/** Where an OpenAI-compatible server listens when neither --base-url nor OPENAI_BASE_URL says: vLLM's default. */
export const DEFAULT_OPENAI_BASE_URL = 'http://127.0.0.1:8000/v1';

export function resolveBaseUrl(explicit: string | undefined, environment: NodeJS.ProcessEnv = process.env): string {
  const flag = explicit?.trim();
  const fromEnvironment = !flag && Boolean(environment.OPENAI_BASE_URL?.trim());
  const chosen = flag || environment.OPENAI_BASE_URL?.trim() || DEFAULT_OPENAI_BASE_URL;
  // A bad value is named where it came from: the flag, or the variable.
  const source = fromEnvironment ? 'OPENAI_BASE_URL' : '--base-url';
  let url: URL;
  try {
    url = new URL(chosen);
  } catch {
    throw new FactoryError('usage', `${source} "${chosen}" is not a URL`, { fix: "give the server's API root, e.g. --base-url http://127.0.0.1:8000/v1" });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FactoryError('usage', `${source} "${chosen}" is not http or https`, { fix: 'give e.g. --base-url http://127.0.0.1:8000/v1' });
  if (url.username || url.password) throw new FactoryError('usage', `${source} carries credentials in the URL, which would reach logs`, { fix: 'put the key in an environment variable and name it with --api-key-env' });
  return chosen.replace(/\/+$/, '');
}

/**
 * How a --api-key-env value is shown: a variable name as written (they are
 * UPPER_SNAKE_CASE), anything else only by its first characters, because a
 * user who passed the key itself must not see it printed back.
 */
function shown(name: string): string {
  return /^[A-Z_][A-Z0-9_]{0,63}$/.test(name) ? name : `${name.slice(0, 3)}… (${name.length} characters, not shown)`;
}

/** The key from the variable the user named; only its presence is ever reported. */
export function readApiKey(name: string | undefined, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name === undefined) return undefined;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new FactoryError('usage', `--api-key-env ${shown(name)} is not the name of an environment variable`, {
      fix: 'name the variable that holds the key (e.g. --api-key-env VLLM_API_KEY), never the key itself',
    });
  }
  const value = environment[name];
  if (value === undefined || value.trim() === '') {
    throw new FactoryError('usage', `--api-key-env ${shown(name)}: the variable is not set`, {
      fix: `export the variable holding the key (e.g. export ${shown(name) === name ? name : 'VLLM_API_KEY'}=<key>) before running, or drop --api-key-env for a server that needs no key`,
    });
  }
  return value.trim();
}

