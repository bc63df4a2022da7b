// Owns turning a definition's declared normalisations and guards into the
// rules the server session applies: the built-in normalisations by name, a
// declared regex rule (over answers, the snapshot and, if asked, object keys),
// a guard that denies tools outright, one that keeps path arguments under the
// root, and the named guards the factory ships.

import { posix } from 'node:path';
import type { JsonObject } from '../../../core/json-value.js';
import type { ArgumentGuard } from '../guarding-transport.js';
import { jsDateString, sandboxPath, type Normalisation } from '../normalising-transport.js';
import { SHOWN_HOME, type Sandbox, sandboxAliases } from '../sandbox.js';
import { sqlContainmentGuard } from '../sqlite/sql-containment.js';
import type { GuardDefinition, NormalisationDefinition } from './server-world-definition.js';

/** The top-level arguments the path guards name (`files[]` as `files`), and any the rule declares itself: the sandbox-path rule resolves these as the model means them. */
export function pathArgumentsOf(guards: readonly GuardDefinition[], declared: readonly string[] = []): string[] {
  return [...new Set([...declared, ...guards.flatMap((guard) => (guard.kind === 'paths-under-root' ? guard.arguments.map((name) => name.replace(/\[\]$/, '')) : []))])].sort();
}

/** True for the sandbox-path rule, by name or as an object declaring its path arguments. */
export function isSandboxPathRule(rule: NormalisationDefinition): boolean {
  return rule === 'sandbox-path' || (typeof rule === 'object' && rule.kind === 'sandbox-path');
}

export function definedNormalisations(rules: readonly NormalisationDefinition[], guards: readonly GuardDefinition[], sandbox: Sandbox, shownRoot: string, pinnedDate: string): Normalisation[] {
  return rules.map((rule): Normalisation => {
    if (rule === 'sandbox-path') return sandboxPath(sandbox.root, shownRoot, sandbox.base, { aliases: sandboxAliases(sandbox), pathArguments: pathArgumentsOf(guards) });
    if (rule === 'js-date-string') return jsDateString(pinnedDate);
    if (rule.kind === 'sandbox-path') return sandboxPath(sandbox.root, shownRoot, sandbox.base, { aliases: sandboxAliases(sandbox), pathArguments: pathArgumentsOf(guards, rule.path_arguments) });
    const pattern = new RegExp(rule.pattern, rule.flags ?? 'g');
    const replacement = rule.replace.replaceAll('{pinned_date}', pinnedDate).replaceAll('{pinned_epoch}', String(Math.floor(Date.parse(pinnedDate) / 1000)));
    return {
      id: rule.id,
      describe: rule.describe ?? `/${rule.pattern}/${rule.flags ?? 'g'} shows as "${rule.replace}"${rule.keys ? ', in object keys too' : ''}`,
      up: (text) => text.replace(pattern, replacement),
      down: (text) => text,
      ...(rule.keys ? { keys: true } : {}),
    };
  });
}

export function definedGuards(guards: readonly GuardDefinition[], shownRoot: string): ArgumentGuard[] {
  return guards.map((guard, index): ArgumentGuard => {
    switch (guard.kind) {
      case 'named':
        return sqlContainmentGuard;
      case 'deny-tools': {
        const denied = new Set(guard.tools);
        const id = guard.id ?? `deny-tools-${index}`;
        const reason = guard.reason ?? 'it could reach outside the sandbox';
        return {
          id,
          describe: `${guard.tools.join(', ')} ${guard.tools.length === 1 ? 'is' : 'are'} refused: ${reason}`,
          check: (tool) => (denied.has(tool) ? `Refused by ${id}: the tool ${tool} is not available in this environment (${reason}).` : undefined),
        };
      }
      case 'paths-under-root': {
        const id = guard.id ?? `paths-under-root-${index}`;
        const tools = guard.tools ? new Set(guard.tools) : undefined;
        const names = guard.arguments.map((name) => ({ name: name.replace(/\[\]$/, ''), each: name.endsWith('[]') }));
        return {
          id,
          describe: `the path arguments ${guard.arguments.join(', ')} must stay under ${shownRoot}`,
          check(tool, args: JsonObject) {
            if (tools && !tools.has(tool)) return undefined;
            for (const { name, each } of names) {
              const value = args[name];
              const values = each && Array.isArray(value) ? value : [value];
              for (const item of values) {
                if (typeof item !== 'string') continue;
                if (!underRoot(item, shownRoot)) return `Refused by ${id}: ${name} "${item}" is outside ${shownRoot}; use a path under ${shownRoot}.`;
              }
            }
            return undefined;
          },
        };
      }
    }
  });
}

/** Where the model means a path to be, in its own view: relative to the shown root, `~` its home. */
function underRoot(path: string, shownRoot: string): boolean {
  if (path.includes('\0')) return false;
  const meant = path === '~' || path.startsWith('~/') ? posix.resolve(SHOWN_HOME, `.${path.slice(1)}`) : posix.resolve(shownRoot, path);
  return meant === shownRoot || meant.startsWith(`${shownRoot}/`);
}
