// Owns reading a count from a flag (--workers, --sample, --count, …): a whole
// number of at least 1 and at most `digits` digits; anything else is a usage
// error naming the flag, with the fix.

import { FactoryError } from '../core/errors.js';

export function parseCount(flag: string, text: string, digits = 6): number {
  if (!new RegExp(`^[0-9]{1,${digits}}$`).test(text) || Number(text) < 1) throw new FactoryError('usage', `${flag} "${text}" is not a positive whole number`, { fix: `pass ${flag} 1 or more` });
  return Number(text);
}
