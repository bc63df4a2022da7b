// Owns the environment every child process the factory starts inherits: the
// caller's, minus every variable that looks like a secret, a credential or a
// door to one (an agent socket, a cloud or git provider's settings), unless
// the caller keeps it by name. Each spawn site takes its `env` from here, so a
// third-party server behind the proxy never sees the operator's keys.

export interface SecretRule {
  /** Matched case-insensitively against the variable's whole name. */
  pattern: RegExp;
  /** How the rule reads in --help and the README. */
  shows: string;
}

/** Names that look like a secret or a credential, whoever they belong to. */
const SECRET_SHAPES: readonly SecretRule[] = [
  { pattern: /(^|_)KEYS?(_|$)|(API|ACCESS|PRIVATE|SECRET|SIGNING|ENCRYPTION|MASTER)_?KEY/i, shows: '*_KEY, *_KEY_*, KEY, *APIKEY*, *ACCESS_KEY*, *PRIVATE_KEY*' },
  { pattern: /SECRET/i, shows: '*SECRET*' },
  { pattern: /TOKEN$|(^|_)TOKENS?(_|$)/i, shows: '*TOKEN, *_TOKEN_* (GITHUB_TOKEN, HF_TOKEN, HUGGING_FACE_HUB_TOKEN, NPM_TOKEN, NODE_AUTH_TOKEN, VAULT_TOKEN)' },
  { pattern: /PASSWORD|PASSWD|PASSPHRASE|(^|_)PASS$|_PWD$/i, shows: '*PASSWORD*, *PASSWD*, *PASSPHRASE*, *_PASS, *_PWD (not PWD)' },
  { pattern: /CREDENTIAL/i, shows: '*CREDENTIAL*' },
  { pattern: /(^|_)AUTH(_|$)|ASKPASS/i, shows: '*_AUTH, *_AUTH_* (e.g. NPM_CONFIG__AUTH, DOCKER_AUTH_CONFIG), *ASKPASS*' },
  { pattern: /COOKIE|WEBHOOK|(^|_)DSN$/i, shows: '*COOKIE*, *WEBHOOK*, *_DSN' },
];

/** Whole families: cloud, git and model providers, agents and tools whose settings lead to credentials. */
const PROVIDERS: readonly SecretRule[] = [
  { pattern: /^(AWS|AZURE|ARM|GOOGLE|GCP|GCLOUD|CLOUDSDK)_/i, shows: 'AWS_*, AZURE_*, ARM_*, GOOGLE_*, GCP_*, GCLOUD_*, CLOUDSDK_*' },
  { pattern: /^(GITHUB|GH|GITLAB|BITBUCKET|GITEA)_/i, shows: 'GITHUB_*, GH_*, GITLAB_*, BITBUCKET_*, GITEA_*' },
  { pattern: /^GIT_CONFIG_(PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)$/i, shows: 'GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT/KEY_n/VALUE_n' },
  { pattern: /^(ANTHROPIC|OPENAI)_/i, shows: 'ANTHROPIC_*, OPENAI_*' },
  { pattern: /^(DOCKER_CONFIG|DOCKER_USERNAME|KUBECONFIG|NETRC)$/i, shows: 'DOCKER_CONFIG, DOCKER_USERNAME, KUBECONFIG, NETRC (files and names that lead to credentials)' },
  { pattern: /^(SSH_AUTH_SOCK|SSH_AGENT_PID|GPG_AGENT_INFO|DBUS_SESSION_BUS_ADDRESS)$/i, shows: 'SSH_AUTH_SOCK, SSH_AGENT_PID, GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS (agents and the desktop keyring)' },
  { pattern: /^EPISODE_FACTORY_/i, shows: 'EPISODE_FACTORY_* (the factory\'s own settings)' },
];

export const SECRET_RULES: readonly SecretRule[] = [...SECRET_SHAPES, ...PROVIDERS];

/** A value that is a URL carrying a password (`scheme://user:password@host`), e.g. a DATABASE_URL or an HTTPS_PROXY with credentials. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]+@/i;

declare const filtered: unique symbol;
/** An environment that went through the filter; spawn sites take only this. */
export type ChildEnvironment = Readonly<Record<string, string>> & { readonly [filtered]: true };

export interface FilteredEnvironment {
  env: ChildEnvironment;
  /** The names held back, sorted. */
  withheld: string[];
}

/** Why `name=value` is held back from a child, or undefined when it may pass. */
export function secretReason(name: string, value: string): string | undefined {
  const rule = SECRET_RULES.find((candidate) => candidate.pattern.test(name));
  if (rule) return rule.shows;
  if (URL_WITH_PASSWORD.test(value)) return 'a URL with a password in it';
  return undefined;
}

/** The caller's environment minus secrets; `keep` names (exactly, case-sensitively) the variables to pass anyway. */
export function childEnvironment(environment: NodeJS.ProcessEnv, keep: readonly string[] = []): FilteredEnvironment {
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined) continue;
    if (!keep.includes(name) && secretReason(name, value) !== undefined) withheld.push(name);
    else env[name] = value;
  }
  return { env: env as ChildEnvironment, withheld: withheld.sort() };
}

/** One line per rule, for --help. */
export function describeSecretRules(): string {
  return [...SECRET_RULES.map((rule) => rule.shows), 'any variable whose value is a URL with a password (scheme://user:password@host)'].join('; ');
}

/** A name --pass-env can take. */
export function isVariableName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}
