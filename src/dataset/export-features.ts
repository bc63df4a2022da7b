// Owns the Hugging Face `datasets` feature declarations of the exports, which
// the card writes as `dataset_info.features`. Declaring them is what keeps
// the JSON intact in a loader: without them Arrow infers one struct per
// column, so the tool schemas of different tools (and object arguments of
// different calls) are merged into one shape and every missing key comes back
// as null, which a chat template would then render. The parts whose shape
// varies are declared with the `Json` type (datasets >= 4.7), which stores
// each value as JSON text and gives back exactly what was written.

import type { ExportFacts } from './export-configs.js';

export type Feature = { dtype: 'string' | 'int64' | 'json' } | { list: Field[] } | { struct: Field[] };

export interface Field {
  name: string;
  feature: Feature;
}

const text: Feature = { dtype: 'string' };

function messages(argumentsFeature: Feature): Feature {
  return {
    list: [
      { name: 'role', feature: text },
      { name: 'content', feature: text },
      {
        name: 'tool_calls',
        feature: {
          list: [
            { name: 'id', feature: text },
            { name: 'type', feature: text },
            { name: 'function', feature: { struct: [{ name: 'name', feature: text }, { name: 'arguments', feature: argumentsFeature }] } },
          ],
        },
      },
      { name: 'tool_call_id', feature: text },
      { name: 'name', feature: text },
    ],
  };
}

const tools: Feature = {
  list: [
    { name: 'type', feature: text },
    {
      name: 'function',
      feature: {
        struct: [
          { name: 'name', feature: text },
          { name: 'description', feature: text },
          { name: 'parameters', feature: { dtype: 'json' } },
        ],
      },
    },
  ],
};

/** The columns of an export, in the order its rows have them. */
export function exportFeatures(facts: Pick<ExportFacts, 'config' | 'arguments' | 'text'>): Field[] {
  const conversation = messages(facts.arguments === 'object' ? { dtype: 'json' } : text);
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

/** The YAML block `datasets` reads (the form its own `Features._to_yaml_list` writes). */
export function featureLines(fields: readonly Field[], indent: string): string[] {
  const lines: string[] = [];
  for (const field of fields) {
    lines.push(`${indent}- name: ${field.name}`);
    const inner = `${indent}  `;
    const feature = field.feature;
    if ('dtype' in feature) lines.push(`${inner}dtype: ${feature.dtype}`);
    else if ('list' in feature) lines.push(`${inner}list:`, ...featureLines(feature.list, inner));
    else lines.push(`${inner}struct:`, ...featureLines(feature.struct, inner));
  }
  return lines;
}
