// Owns what environment the proxied server inherits: the caller's, minus the
// variables that look like the factory's own secrets (API keys and tokens it
// has no reason to hand to a third-party server), unless kept by name.

const SECRET_NAMES = [/_API_KEY$/i, /_API_TOKEN$/i, /^EPISODE_FACTORY_/i];

export function proxyEnvironment(environment: NodeJS.ProcessEnv, keep: readonly string[] = []): { env: Record<string, string>; withheld: string[] } {
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined) continue;
    if (!keep.includes(name) && SECRET_NAMES.some((pattern) => pattern.test(name))) withheld.push(name);
    else env[name] = value;
  }
  return { env, withheld: withheld.sort() };
}
