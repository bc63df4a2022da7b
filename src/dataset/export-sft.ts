// Owns `export sft`: one training row per verified, completed episode, in the
// conversational form trainers read: `messages` (with tool calls and tool
// results) and `tools` (function schemas), plus the record id for lineage.

import type { Message, ToolDescriptor } from '../core/conversation.js';
import { fromRecordMessage, fromRecordTool } from '../records/episode-record.js';
import { JsonlAppender } from '../records/jsonl.js';
import { toChatMessages, toChatTools, type ChatMessage, type ChatTool } from './chat-format.js';
import { readWholeDataset } from './dataset-reader.js';

export interface SftRow {
  record_id: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  /** With a renderer: the whole conversation as the model family's chat template writes it. */
  text?: string;
}

/** A model family's chat template, given by the caller (the codecs live with the policies). */
export interface TranscriptRenderer {
  name: string;
  render(messages: Message[], tools: ToolDescriptor[]): string;
}

export interface SftSummary {
  dir: string;
  out: string;
  records: number;
  exported: number;
  /** Records left out because the task was not completed (they belong in DPO, as rejected answers). */
  not_completed: number;
  /** The chat template the `text` column was rendered with, if any. */
  rendered_with?: string;
}

export async function exportSft(dir: string, out: string, renderer?: TranscriptRenderer): Promise<SftSummary> {
  const dataset = await readWholeDataset(dir, 'exported');
  const writer = new JsonlAppender(out);
  let exported = 0;
  try {
    for (const { record } of dataset.rows) {
      if (!record.result.task_completed) continue;
      const row: SftRow = { record_id: record.record_id, messages: toChatMessages(record.messages), tools: toChatTools(record.tools, record.catalog_updates) };
      if (renderer) {
        const tools = [...record.tools, ...record.catalog_updates.flatMap((update) => update.added)].map(fromRecordTool);
        const unique = [...new Map(tools.map((tool) => [tool.name, tool])).values()];
        row.text = renderer.render(record.messages.map(fromRecordMessage), unique);
      }
      writer.append(row);
      exported++;
    }
  } finally {
    writer.close({ sync: true });
  }
  return { dir, out, records: dataset.rows.length, exported, not_completed: dataset.rows.length - exported, ...(renderer ? { rendered_with: renderer.name } : {}) };
}
