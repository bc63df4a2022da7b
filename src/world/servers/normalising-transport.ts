// Owns the declared normalisations of a server world, applied where the fault
// layer's upstream meets the child: the sandbox's real absolute path is shown
// to everything above as a fixed root (and rewritten back in tool-call
// arguments on the way down), and values a server legitimately varies (dates)
// are replaced by pinned ones. Everything above this transport (fault layer,
// client, runner, record, replay) sees only normalised bytes. Each rule has an
// id that the record lists.

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface Normalisation {
  /** Stable id, listed in the record. */
  id: string;
  /** What it does, for the record and the README. */
  describe: string;
  /** Rewrites one string of a server's answer. */
  up(text: string): string;
  /** Rewrites one string of a tool call's arguments (identity for one-way rules). */
  down(text: string): string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The sandbox as the model sees it: `shown` (e.g. `/sandbox`) stands for the
 * real root, and `base` (our private temporary directory holding the root)
 * shows as `/`, so a `..` out of the root does not leak TMPDIR either.
 * Arguments are rewritten only where the whole string is the shown root or
 * starts with it followed by `/`.
 */
export function sandboxPath(realRoot: string, shown: string, base: string): Normalisation {
  const parent = base;
  const rootPattern = new RegExp(`${escapeRegExp(realRoot)}(?=/|$|[^A-Za-z0-9._-])`, 'g');
  const parentPattern = parent.length > 0 ? new RegExp(`${escapeRegExp(parent)}(?=/)`, 'g') : undefined;
  return {
    id: 'sandbox-path',
    describe: `the sandbox's absolute path shows as ${shown}, the private directory holding it as /`,
    up(text) {
      const rooted = text.replace(rootPattern, shown);
      return parentPattern ? rooted.replace(parentPattern, '') : rooted;
    },
    down(text) {
      if (text === shown) return realRoot;
      if (text.startsWith(`${shown}/`)) return realRoot + text.slice(shown.length);
      return text;
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
  return mapStrings(value, (text) => rules.reduce((current, rule) => rule.up(current), text));
}

export function normaliseDown(value: unknown, rules: readonly Normalisation[]): unknown {
  return mapStrings(value, (text) => rules.reduceRight((current, rule) => rule.down(current), text));
}

/**
 * Wraps the transport to the child: tool-call arguments go down rewritten,
 * every result and error comes up rewritten. Requests the server makes of the
 * client (roots/list) and notifications pass untouched.
 */
export class NormalisingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(
    private readonly inner: Transport,
    private readonly rules: readonly Normalisation[],
  ) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message) => {
      const record = message as Record<string, unknown>;
      if (!('method' in record) && ('result' in record || 'error' in record)) {
        this.onmessage?.({ ...record, ...('result' in record ? { result: normaliseUp(record.result, this.rules) } : {}), ...('error' in record ? { error: normaliseUp(record.error, this.rules) } : {}) } as JSONRPCMessage);
      } else {
        this.onmessage?.(message);
      }
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const record = message as Record<string, any>;
    if (record.method === 'tools/call' && record.params && typeof record.params === 'object') {
      const params = { ...record.params, arguments: normaliseDown(record.params.arguments ?? {}, this.rules) };
      return this.inner.send({ ...record, params } as JSONRPCMessage);
    }
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
