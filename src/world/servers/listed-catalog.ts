// Owns reading a server world's pinned catalog: the tools/list answer of the
// exact package version, kept as JSON beside its adapter (a test compares it
// with the live server, so it cannot drift), turned into tool specs with our
// `claims` overlays, which the server cannot supply.

import { readFileSync } from 'node:fs';
import type { JsonObject } from '../../core/json-value.js';
import type { ToolSpec } from '../world-contract.js';

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations?: ToolSpec['annotations'];
}

export function readListedCatalog(url: URL): ListedTool[] {
  return JSON.parse(readFileSync(url, 'utf8')) as ListedTool[];
}

export function catalogSpecs(listed: readonly ListedTool[], claims: Readonly<Record<string, string[]>>): ToolSpec[] {
  return listed.map((tool) => ({
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    ...(claims[tool.name] ? { claims: claims[tool.name] } : {}),
  }));
}
