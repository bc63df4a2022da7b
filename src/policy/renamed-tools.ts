// Owns finding a tool again after the server renamed it: the tool in the
// current catalog with another name but the same description and input schema
// as the one the policy first saw.

import { canonicalJson } from '../core/canonical-json.js';
import type { ToolDescriptor } from '../core/conversation.js';

export function findRenamed(original: ToolDescriptor | undefined, catalog: readonly ToolDescriptor[]): ToolDescriptor | undefined {
  if (!original) return undefined;
  const schema = canonicalJson(original.input_schema);
  return catalog
    .filter((tool) => tool.name !== original.name && tool.description === original.description && canonicalJson(tool.input_schema) === schema)
    .sort((left, right) => (left.name < right.name ? -1 : 1))[0];
}
