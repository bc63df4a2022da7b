// Owns RFC 6901 JSON pointers: the addressing used by hidden predicates and by
// error reports that name a place in a file.

export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new SyntaxError(`JSON pointer must start with "/": ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function formatPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => '/' + String(token).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

export interface Resolved {
  found: boolean;
  value: unknown;
}

export function resolvePointer(document: unknown, pointer: string): Resolved {
  let current: unknown = document;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return { found: false, value: undefined };
      const index = Number(token);
      if (index >= current.length) return { found: false, value: undefined };
      current = current[index];
    } else if (typeof current === 'object' && current !== null && Object.prototype.hasOwnProperty.call(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value: current };
}
