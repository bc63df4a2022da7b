// Owns showing a kept child's link to the sandbox as the sandbox itself: a
// kept child is started once on a path of its own (a symlink the pool swaps to
// each episode's root), so it names the root by the link's path where a fresh
// child names the real one. Wrapped around the sandbox-path rule, answers say
// the link's path as the real root before the rule shows it as the shown root,
// and arguments the rule sends down under the real root go under the link, so
// a server that checks a path prefix against the path it was started with
// (git-mcp-server's GIT_BASE_DIR) accepts them. Id and description are the
// wrapped rule's, so a record cannot tell the two children apart.

import type { Normalisation } from './normalising-transport.js';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `rule` for a child that sees `realRoot` as `linkPath`. */
export function throughLink(rule: Normalisation, realRoot: string, linkPath: string): Normalisation {
  // The link's path as a whole path component (not the prefix of a longer name).
  const link = new RegExp(`${escapeRegExp(linkPath)}(?=/|$|[^A-Za-z0-9._-])`, 'g');
  return {
    ...rule,
    up: (text) => rule.up(text.includes(linkPath) ? text.replace(link, realRoot) : text),
    down(text, argument) {
      const sent = rule.down(text, argument);
      if (sent === realRoot || sent.startsWith(`${realRoot}/`)) return linkPath + sent.slice(realRoot.length);
      return sent;
    },
  };
}
