// Owns the Hugging Face `datasets` feature declarations of the exports, which
// the card writes as `dataset_info.features`. Declaring them is what keeps
// the JSON intact in a loader: without them Arrow infers one struct per
// column, so the tool schemas of different tools, the object arguments of
// different calls and messages of different roles are merged into one shape,
// and every missing key comes back as null, which a chat template would then
// render or test for. Each message and each tool is declared with the `Json`
// type (datasets >= 4.7), which stores it as JSON text and gives back exactly
// what was written, in whichever --arguments form.

import type { ExportFacts } from './export-configs.js';

export type Feature = { dtype: 'string' | 'int64' | 'json' } | { list: 'json' };

export interface Field {
  name: string;
  feature: Feature;
}

const text: Feature = { dtype: 'string' };
/** A list of JSON values, each given back exactly as written: a message with only its own keys, a tool with its whole schema. */
const jsonList: Feature = { list: 'json' };

/** The columns of an export, in the order its rows have them. */
export function exportFeatures(facts: Pick<ExportFacts, 'config' | 'text'>): Field[] {
  const conversation = jsonList;
  const tools = jsonList;
  if (facts.config === 'sft') {
    return [
      { name: 'record_id', feature: text },
      { name: 'messages', feature: conversation },
      { name: 'tools', feature: tools },
      ...(facts.text ? [{ name: 'text', feature: text }] : []),
    ];
  }
  return [
    { name: 'prompt', feature: conversation },
    { name: 'chosen', feature: conversation },
    { name: 'rejected', feature: conversation },
    { name: 'tools', feature: tools },
    { name: 'chosen_record_id', feature: text },
    { name: 'rejected_record_id', feature: text },
    { name: 'chosen_variant', feature: text },
    { name: 'rejected_variant', feature: text },
    { name: 'task', feature: text },
    { name: 'seed', feature: { dtype: 'int64' } },
  ];
}

/**
 * The columns of the records themselves (the default config): the flat ones
 * as text, every nested one as `Json`, so a loader neither infers a shape from
 * its first rows (a list empty in one file and full in the next fails to
 * cast) nor pads a record with the keys of another: each loads as written.
 */
export function recordFeatures(): Field[] {
  const json: Feature = { dtype: 'json' };
  return [
    { name: 'record_id', feature: text },
    { name: 'family', feature: text },
    { name: 'schema_version', feature: text },
    { name: 'world', feature: json },
    { name: 'task', feature: json },
    { name: 'tools', feature: jsonList },
    { name: 'messages', feature: jsonList },
    { name: 'catalog_updates', feature: jsonList },
    { name: 'recovery', feature: json },
    { name: 'result', feature: json },
    { name: 'provenance', feature: json },
  ];
}

/** The YAML block `datasets` reads (the form its own `Features._to_yaml_list` writes). */
export function featureLines(fields: readonly Field[], indent: string): string[] {
  const lines: string[] = [];
  for (const field of fields) {
    lines.push(`${indent}- name: ${field.name}`);
    const inner = `${indent}  `;
    const feature = field.feature;
    lines.push('dtype' in feature ? `${inner}dtype: ${feature.dtype}` : `${inner}list: ${feature.list}`);
  }
  return lines;
}
