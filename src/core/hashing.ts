// Owns content hashing: sha256 hex digests of bytes, strings and canonical JSON.

import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
