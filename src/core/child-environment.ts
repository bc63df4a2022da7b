// Owns the environment every child process the factory starts inherits: the
// caller's, minus every variable that looks like a secret, a credential or a
// door to one (an agent socket, a cloud or git provider's settings), unless
// the caller keeps it by name. Each spawn site takes its `env` from here, so a
// third-party server behind the proxy never sees the operator's keys.
//
// A variable is held back for its name (the shapes and families below) or for
// its value: a URL with a password, a connection string with `Password=`,
// `Pwd=`, `AccountKey=` or `SharedAccessKey=`, a PEM private key, a JWT, or a
// token in a known provider's format (OpenAI and Anthropic `sk-`, Stripe
// `sk_live_`/`rk_live_`/`whsec_`, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/
// `github_pat_`, GitLab `glpat-`, Slack `xox?-` and its webhook URLs, AWS
// `AKIA`/`ASIA`, Google `AIza`, Hugging Face `hf_`, npm `npm_`). This is a
// best-effort filter, not a guarantee: a secret under a plain name in a format
// it does not know passes, which is why every held-back name is listed and
// anything sensitive is better kept out of the caller's environment.

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
  // A segment, not a substring: PATH, PATCH_LEVEL and DISK_SIZE are not secrets.
  { pattern: /(^|_)(SK|PAT|JWT)(_|$)|OAUTH|BEARER|PRIVATE/i, shows: '*_SK, *_SK_* (STRIPE_SK_LIVE), *_PAT, *_PAT_*, *_JWT, *_JWT_*, *OAUTH*, *BEARER*, *PRIVATE*' },
  { pattern: /CONN(ECTION)?_?STR/i, shows: '*CONNECTION_STRING*, *CONNSTR* (SQLCONNSTR_*, CUSTOMCONNSTR_*)' },
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

export interface SecretValueRule {
  /** Searched for anywhere in the value. */
  pattern: RegExp;
  /** What it catches, for --help, the README and the reason a variable is held back. */
  shows: string;
  /** A further test of the matched text, where the pattern alone would catch ordinary words. */
  accepts?: (match: string) => boolean;
}

/** Mixed case and a digit: a random token, not a word like `sk-learn-models-collection`. */
const looksRandom = (text: string) => /[0-9]/.test(text) && /[a-z]/.test(text) && /[A-Z]/.test(text);

/**
 * Values that are a secret whatever the variable is called. Each token shape
 * starts at a boundary (the value's start or a character that cannot be part
 * of the token), so a path or a word that merely contains the prefix passes;
 * and every unbounded run begins after a literal or a boundary, so a search
 * is linear in the value's length (a value can be 128 KiB: a scheme allowed
 * to start anywhere made one of letters take 27 s).
 */
const SECRET_VALUES: readonly SecretValueRule[] = [
  { pattern: /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}:\/\/[^/@\s:]*:[^/@\s]+@/i, shows: 'a URL with a password (scheme://user:password@host)' },
  { pattern: /(^|[;\s?&])(password|pwd|accountkey|sharedaccesskey)\s*=\s*[^;\s&]/i, shows: 'a connection string with Password=, Pwd=, AccountKey= or SharedAccessKey=' },
  { pattern: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/, shows: 'a PEM or PGP private key' },
  { pattern: /(^|[^\w.-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/, shows: 'a JSON Web Token (eyJ….eyJ….…)' },
  { pattern: /(^|[^\w-])sk-[\w-]{32,}/, shows: 'an OpenAI or Anthropic key (sk-…)', accepts: looksRandom },
  { pattern: /(^|[^\w])(sk|rk)_(live|test)_[0-9a-z]{16,}|(^|[^\w])whsec_[0-9a-z]{24,}/i, shows: 'a Stripe secret, restricted or webhook key (sk_live_…, rk_live_…, whsec_…)' },
  { pattern: /(^|[^\w])(gh[pousr]_[0-9a-z]{36}|github_pat_\w{40,})/i, shows: 'a GitHub token (ghp_…, gho_…, github_pat_…)' },
  { pattern: /(^|[^\w-])glpat-[\w-]{20,}/, shows: 'a GitLab token (glpat-…)' },
  { pattern: /(^|[^\w-])xox[abeprs]-[0-9a-z-]{10,}|hooks\.slack\.com\/services\/T\w+\//i, shows: 'a Slack token (xoxb-…, xoxp-…) or webhook URL' },
  { pattern: /(^|[^0-9A-Z])(AKIA|ASIA)[0-9A-Z]{16}($|[^0-9A-Z])/, shows: 'an AWS access key id (AKIA…, ASIA…)' },
  { pattern: /(^|[^\w-])AIza[\w-]{35}/, shows: 'a Google API key (AIza…)' },
  { pattern: /(^|[^\w])hf_[0-9a-z]{30,}/i, shows: 'a Hugging Face token (hf_…)', accepts: looksRandom },
  { pattern: /(^|[^\w])npm_[0-9a-z]{36}/i, shows: 'an npm token (npm_…)', accepts: looksRandom },
];

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
  for (const candidate of SECRET_VALUES) {
    const found = candidate.pattern.exec(value);
    if (found && (!candidate.accepts || candidate.accepts(found[0]))) return `its value: ${candidate.shows}`;
  }
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
  return [...SECRET_RULES.map((rule) => rule.shows), `any variable whose value holds ${SECRET_VALUES.map((rule) => rule.shows).join(', ')} (a best-effort filter, not a guarantee)`].join('; ');
}

/** A name --pass-env can take. */
export function isVariableName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}
