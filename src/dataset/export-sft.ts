// Owns `export sft`: one training row per verified, completed episode, in the
// conversational form trainers read: `messages` (with tool calls and tool
// results) and `tools` (function schemas), plus the record id for lineage.

import { JsonlAppender } from '../records/jsonl.js';
import { toChatMessages, toChatTools, type ChatMessage, type ChatTool } from './chat-format.js';
import { readWholeDataset } from './dataset-reader.js';

export interface SftRow {
  record_id: string;
  messages: ChatMessage[];
  tools: ChatTool[];
}

export interface SftSummary {
  dir: string;
  out: string;
  records: number;
  exported: number;
  /** Records left out because the task was not completed (they belong in DPO, as rejected answers). */
  not_completed: number;
}

export async function exportSft(dir: string, out: string): Promise<SftSummary> {
  const dataset = await readWholeDataset(dir, 'exported');
  const writer = new JsonlAppender(out);
  let exported = 0;
  try {
    for (const { record } of dataset.rows) {
      if (!record.result.task_completed) continue;
      const row: SftRow = { record_id: record.record_id, messages: toChatMessages(record.messages), tools: toChatTools(record.tools, record.catalog_updates) };
      writer.append(row);
      exported++;
    }
  } finally {
    writer.close({ sync: true });
  }
  return { dir, out, records: dataset.rows.length, exported, not_completed: dataset.rows.length - exported };
}
