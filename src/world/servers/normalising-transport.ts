// Owns the declared normalisations of a server world, applied where the fault
// layer's upstream meets the child: the sandbox's real absolute path is shown
// to everything above as a fixed root (and rewritten back in tool-call
// arguments on the way down), and values a server legitimately varies (dates)
// are replaced by pinned ones. Everything above this transport (fault layer,
// client, runner, record, replay) sees only normalised bytes. Each rule has an
// id that the record lists.

import { posix } from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SHOWN_HOME } from './sandbox.js';
import { WrappingTransport } from './wrapping-transport.js';

export interface Normalisation {
  /** Stable id, listed in the record. */
  id: string;
  /** What it does, for the record and the README. */
  describe: string;
  /** Rewrites one string of a server's answer. */
  up(text: string): string;
  /**
   * Rewrites one string of a tool call's arguments (identity for one-way
   * rules); `argument` names the top-level argument the string is in.
   */
  down(text: string, argument?: string): string;
  /** Whether object keys of answers and snapshots are rewritten too (a declared regex rule may ask for it). */
  keys?: boolean;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A character that can continue a path component, so a match must not be followed by one. */
const COMPONENT = 'A-Za-z0-9._-';

export interface SandboxPathOptions {
  /**
   * The top-level arguments the server reads as paths (server-filesystem's
   * `path`, `paths`, `source`, `destination`): these are resolved as the
   * model means them before they go down, so no `..` can take the server
   * above our private directory. Other arguments (file contents, patterns)
   * are only rewritten where they name the shown root.
   */
  pathArguments?: readonly string[];
  /**
   * Other spellings of our private directory (`base`): `base` is realpath'd,
   * and where TMPDIR goes through a symlink (macOS: /tmp and /var/folders
   * under /private) the spelling under TMPDIR as given names it too.
   */
  aliases?: readonly string[];
}

/** `path` equals `directory` or lies under it (both resolved, POSIX). */
function within(path: string, directory: string): boolean {
  return path === directory || path.startsWith(directory === '/' ? '/' : `${directory}/`);
}

/**
 * The sandbox as the model sees it: `shown` (e.g. `/sandbox`) stands for the
 * real root, and `base` (our private temporary directory holding the root)
 * shows as `/`: the model sees a machine whose `/` is our private directory,
 * as in a chroot. A path the model means to be above `/` is `/` (POSIX: `/..`
 * is `/`), so no answer names what is above `base` — TMPDIR, its parents, the
 * random name of `base` — and every answer is the same on every machine.
 *
 * Why not also rewrite TMPDIR and its parents in answers: they are ordinary
 * text (`/tmp`), which a file the model wrote may hold; rewriting it would
 * make the answer depend on the machine's TMPDIR, the very thing to avoid.
 * Instead the server is never asked about a path above `base`: path
 * arguments that would resolve there go down as the path the model meant,
 * placed under `base` (the server then refuses it, as before, and the answer
 * names the path the model meant). Everything else goes down as before:
 * arguments that are exactly `shown` or start with it followed by `/` are
 * rewritten to the real root, so the bytes the server sees (and echoes) are
 * unchanged wherever they stay inside `base`.
 */
export function sandboxPath(realRoot: string, shown: string, base: string, options: SandboxPathOptions = {}): Normalisation {
  const bases = [...new Set([base, ...(options.aliases ?? [])])].filter((form) => form.startsWith('/') && form.length > 1);
  const roots = bases.map((form) => (realRoot.startsWith(`${base}/`) ? form + realRoot.slice(base.length) : realRoot));
  // Longest spelling first; no spelling (a base of `/` or ``) is no pattern, never one that matches everywhere.
  const pattern = (forms: readonly string[], after: string) =>
    forms.length === 0 ? undefined : new RegExp(`(?:${[...new Set(forms)].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|')})${after}`, 'g');
  // The real root wherever it is a whole path component; then `base/…` loses `base`, and `base` itself is `/`.
  const rules: Array<[RegExp | undefined, string]> = [
    [pattern(roots.length > 0 ? roots : [realRoot], `(?=/|$|[^${COMPONENT}])`), shown],
    [pattern(bases, '(?=/)'), ''],
    [pattern(bases, `(?=$|[^/${COMPONENT}])`), '/'],
  ];
  const pathArguments = new Set(options.pathArguments ?? []);

  /** The real path of a path the model means (absolute, resolved in its view). */
  const real = (meant: string): string => {
    if (within(meant, shown)) return realRoot + meant.slice(shown.length);
    return meant === '/' ? base : base + meant;
  };

  /** A string as before: the shown root, or a path under it, becomes the real one. */
  const rooted = (text: string): string => {
    if (text === shown) return realRoot;
    if (text.startsWith(`${shown}/`)) return realRoot + text.slice(shown.length);
    return text;
  };

  /**
   * A path argument, as the model means it: `~` is its home (SHOWN_HOME, as
   * a fresh child's HOME under `base` shows; a kept child's HOME is elsewhere
   * and the server would expand `~` to that), an absolute path is in its
   * view, and a relative one is relative to the shown root (the server
   * resolves it against its allowed directory). Where the server would
   * resolve the argument as before to the same place, it goes down as
   * before; anywhere else, as the real path of what the model means.
   */
  const downPath = (text: string): string => {
    // A Windows drive path the server refuses itself, echoing it as given.
    if (/^[A-Za-z]:(?:[\\/]|$)/.test(text)) return text;
    if (text === '~' || text.startsWith('~/')) return real(posix.resolve(SHOWN_HOME, `.${text.slice(1)}`));
    const meant = posix.resolve(shown, text);
    const sent = text.startsWith('/') ? rooted(text) : text;
    return posix.resolve(realRoot, sent) === real(meant) ? sent : real(meant);
  };

  return {
    id: 'sandbox-path',
    describe: `the sandbox's absolute path shows as ${shown}, the private directory holding it as /`,
    up(text) {
      return rules.reduce((current, [found, shownAs]) => (found ? current.replace(found, shownAs) : current), text);
    },
    down(text, argument) {
      return argument !== undefined && pathArguments.has(argument) ? downPath(text) : rooted(text);
    },
  };
}

/** JavaScript's Date#toString() form, in any zone: `Thu Dec 03 2026 09:23:13 GMT+0000 (Coordinated Universal Time)`. */
const JS_DATE = /\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4} \([^)]*\)/g;

/** Every Date#toString() in an answer becomes the pinned instant, printed the same way in UTC. */
export function jsDateString(pinned: string): Normalisation {
  const instant = new Date(pinned);
  if (Number.isNaN(instant.getTime())) throw new RangeError(`not a date: ${pinned}`);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (value: number) => String(value).padStart(2, '0');
  const shown =
    `${days[instant.getUTCDay()]} ${months[instant.getUTCMonth()]} ${two(instant.getUTCDate())} ${instant.getUTCFullYear()} ` +
    `${two(instant.getUTCHours())}:${two(instant.getUTCMinutes())}:${two(instant.getUTCSeconds())} GMT+0000 (Coordinated Universal Time)`;
  return {
    id: 'js-date-string',
    describe: `dates printed by Date#toString() show as ${shown}`,
    up: (text) => text.replace(JS_DATE, shown),
    down: (text) => text,
  };
}

/** Every string inside `value`, rewritten by `rewrite`; other values untouched. */
export function mapStrings(value: unknown, rewrite: (text: string) => string): unknown {
  if (typeof value === 'string') return rewrite(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, rewrite));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, rewrite)]));
  }
  return value;
}

export function normaliseUp(value: unknown, rules: readonly Normalisation[]): unknown {
  const rewrite = (text: string) => rules.reduce((current, rule) => rule.up(current), text);
  const keyRules = rules.filter((rule) => rule.keys);
  if (keyRules.length === 0) return mapStrings(value, rewrite);
  const rewriteKey = (key: string) => keyRules.reduce((current, rule) => rule.up(current), key);
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return rewrite(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === 'object') return Object.fromEntries(Object.entries(item).map(([key, inner]) => [rewriteKey(key), walk(inner)]));
    return item;
  };
  return walk(value);
}

/** Tool-call arguments on their way down: each string is rewritten knowing the top-level argument it is in. */
export function normaliseDown(value: unknown, rules: readonly Normalisation[]): unknown {
  const rewrite = (argument: string | undefined) => (text: string) => rules.reduceRight((current, rule) => rule.down(current, argument), text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return mapStrings(value, rewrite(undefined));
  return Object.fromEntries(Object.entries(value).map(([argument, item]) => [argument, mapStrings(item, rewrite(argument))]));
}

/**
 * Wraps the transport to the child: tool-call arguments go down rewritten,
 * every result and error comes up rewritten. Requests the server makes of the
 * client (roots/list) and notifications pass untouched.
 */
export class NormalisingTransport extends WrappingTransport {
  constructor(
    inner: Transport,
    private readonly rules: readonly Normalisation[],
  ) {
    super(inner);
  }

  protected override receive(message: JSONRPCMessage): void {
    const record = message as Record<string, unknown>;
    if (!('method' in record) && ('result' in record || 'error' in record)) {
      this.onmessage?.({ ...record, ...('result' in record ? { result: normaliseUp(record.result, this.rules) } : {}), ...('error' in record ? { error: normaliseUp(record.error, this.rules) } : {}) } as JSONRPCMessage);
    } else {
      this.onmessage?.(message);
    }
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    const record = message as Record<string, any>;
    if (record.method === 'tools/call' && record.params && typeof record.params === 'object') {
      const params = { ...record.params, arguments: normaliseDown(record.params.arguments ?? {}, this.rules) };
      return super.send({ ...record, params } as JSONRPCMessage);
    }
    return super.send(message);
  }
}
