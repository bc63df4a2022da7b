// Owns `export sft`: one training row per verified, completed episode, in the
// conversational form trainers read: `messages` (with tool calls and tool
// results) and `tools` (function schemas), plus the record id for lineage.

import { rmSync } from 'node:fs';
import type { Message, ToolDescriptor } from '../core/conversation.js';
import { moveIntoPlace, temporaryPathFor } from '../records/atomic-file.js';
import { fromRecordMessage, fromRecordTool } from '../records/episode-record.js';
import { JsonlAppender } from '../records/jsonl.js';
import { type ArgumentsForm, textArguments, toChatMessages, toChatTools, type ChatMessage, type ChatTool } from '../records/chat-format.js';
import { EPISODES_FILE, passOverDataset, type PassOptions } from './dataset-reader.js';

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

export interface ExportOptions {
  /** How tool-call arguments are written (see chat-format.ts); default "string". */
  arguments?: ArgumentsForm;
  /** The records file of the dataset directory to read; default episodes.jsonl. */
  file?: string;
  onProgress?: PassOptions['onProgress'];
  /** Called as each pass over the records starts (DPO makes two). */
  onStage?: (stage: string) => void;
}

export interface SftOptions extends ExportOptions {
  renderer?: TranscriptRenderer;
}

export interface SftSummary {
  dir: string;
  /** The records file read. */
  source: string;
  out: string;
  records: number;
  exported: number;
  /** Records left out because the task was not completed (they belong in DPO, as rejected answers). */
  not_completed: number;
  arguments: ArgumentsForm;
  /** In the "object" form, calls whose arguments stayed text because the policy emitted no JSON object. */
  arguments_kept_as_text: number;
  /** The chat template the `text` column was rendered with, if any. */
  rendered_with?: string;
}

/**
 * Writes rows to `out` through a temporary file moved into place at the end,
 * so a crash or a refused dataset leaves the previous export whole.
 */
export async function writeRowsAtomically<Row>(out: string, write: (append: (row: Row) => void) => void | Promise<void>): Promise<void> {
  const temporary = temporaryPathFor(out);
  const writer = new JsonlAppender(temporary);
  try {
    await write((row) => writer.append(row));
    writer.close({ sync: true });
  } catch (error) {
    writer.close();
    rmSync(temporary, { force: true });
    throw error;
  }
  moveIntoPlace(temporary, out);
}

export async function exportSft(dir: string, out: string, options: SftOptions = {}): Promise<SftSummary> {
  const form = options.arguments ?? 'string';
  const source = options.file ?? EPISODES_FILE;
  const renderer = options.renderer;
  let records = 0;
  let exported = 0;
  let keptAsText = 0;
  // Streamed: a row is written as its record is read, and the file only moved into place when every line was a record.
  await writeRowsAtomically<SftRow>(out, async (append) => {
    records = await passOverDataset(dir, 'exported', ({ record }) => {
      if (!record.result.task_completed) return;
      const row: SftRow = { record_id: record.record_id, messages: toChatMessages(record.messages, form), tools: toChatTools(record.tools, record.catalog_updates) };
      if (form === 'object') keptAsText += textArguments(row.messages);
      if (renderer) {
        const tools = [...record.tools, ...record.catalog_updates.flatMap((update) => update.added)].map(fromRecordTool);
        const unique = [...new Map(tools.map((tool) => [tool.name, tool])).values()];
        row.text = renderer.render(record.messages.map(fromRecordMessage), unique);
      }
      append(row);
      exported++;
    }, { file: source, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  });
  return {
    dir,
    source,
    out,
    records,
    exported,
    not_completed: records - exported,
    arguments: form,
    arguments_kept_as_text: keptAsText,
    ...(renderer ? { rendered_with: renderer.name } : {}),
  };
}
