// Owns the globs a definition uses to name files of a sandbox (file-tree
// parsers and excludes): matched against a path relative to the tree's start,
// `*` within one component, `**` across components (`**/` also matches no
// directory at all, so `**/*.md` names a Markdown file at any depth).

const compiled = new Map<string, RegExp>();

function compile(glob: string): RegExp {
  let pattern = '';
  for (let index = 0; index < glob.length; index += 1) {
    const character = glob[index]!;
    if (character === '*' && glob[index + 1] === '*') {
      if (glob[index + 2] === '/') {
        pattern += '(?:.*/)?';
        index += 2;
      } else {
        pattern += '.*';
        index += 1;
      }
    } else if (character === '*') {
      pattern += '[^/]*';
    } else if (character === '?') {
      pattern += '[^/]';
    } else {
      pattern += character.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${pattern}$`);
}

export function matchesGlob(relativePath: string, glob: string): boolean {
  let expression = compiled.get(glob);
  if (!expression) {
    expression = compile(glob);
    compiled.set(glob, expression);
  }
  return expression.test(relativePath);
}
