// Owns the --model-timeout flag that generate, gate and dedup --embed share:
// how long an Ollama server may stay silent on one request before it counts
// as failed, given in seconds and parsed to milliseconds.

import { FactoryError } from '../core/errors.js';

/** `--model-timeout 20` (seconds, fractions allowed) in milliseconds. */
export function parseSeconds(flag: string, text: string, example: number): number {
  const seconds = Number(text);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text.trim()) || !(seconds > 0) || seconds > 86_400) {
    throw new FactoryError('usage', `${flag} "${text}" is not a number of seconds`, { fix: `pass ${flag} with a number of seconds above 0 (at most a day), e.g. ${flag} ${example}` });
  }
  return Math.round(seconds * 1000);
}
