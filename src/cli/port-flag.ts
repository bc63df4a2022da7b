// Owns reading a TCP port from a flag (serve --http, env serve --port): a
// whole number up to 65535, 0 asking the system for a free one; anything else
// is a usage error naming the flag, with an example of a good value.

import { FactoryError } from '../core/errors.js';

export function parsePort(flag: string, text: string, example: number): number {
  const port = Number(text);
  if (!/^[0-9]{1,5}$/.test(text) || port > 65535) throw new FactoryError('usage', `${flag} "${text}" is not a port`, { fix: `pass a port such as ${flag} ${example}, or ${flag} 0 for a free one` });
  return port;
}
