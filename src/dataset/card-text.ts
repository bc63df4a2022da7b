// Owns the dataset card's text primitives: Markdown tables and code spans,
// YAML scalars, counted nouns, lists, and a lane's seeds as the ranges
// `generate` takes. Every section writes through these, so the card's
// quoting and wording rules live in one place.

/** Plain YAML scalars where they are unambiguous; double-quoted (JSON is valid YAML) otherwise. */
export function yamlScalar(value: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9_.\-/<>]*$/.test(value) && !/^(true|false|null|yes|no|on|off|~)$/i.test(value) && !/^[0-9.eE+-]+$/.test(value)
    ? value
    : JSON.stringify(value);
}

function markdownCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(markdownCell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n') + '\n';
}

export function code(text: string): string {
  return '`' + text.replace(/`/g, "'") + '`';
}

/** `0..7` or `0..3, 8, 10..12`: a lane's seeds as the ranges generate takes. */
export function seedRanges(seeds: readonly number[]): string[] {
  const sorted = [...new Set(seeds)].sort((left, right) => left - right);
  const ranges: string[] = [];
  let start: number | undefined;
  let previous: number | undefined;
  const close = (): void => {
    if (start === undefined || previous === undefined) return;
    ranges.push(start === previous ? String(start) : `${start}..${previous}`);
  };
  for (const seed of sorted) {
    if (previous !== undefined && seed === previous + 1) {
      previous = seed;
      continue;
    }
    close();
    start = seed;
    previous = seed;
  }
  close();
  return ranges;
}

export function plural(count: number, one: string, many = one + 's'): string {
  return `${count} ${count === 1 ? one : many}`;
}

export function list(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
