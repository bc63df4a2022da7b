// Owns the recording of a writer model's answers, kept next to the lane it
// proposed (`<lane>.writer.json`): which writer (as asked for, as served, and
// its pin), and per draw the digest of the request and the raw text the model
// returned. A rerun with the same writer reads an answer from here whenever
// the request is the same, so the lane is made again byte for byte without
// the model. Written atomically after every new answer, so a run cut short
// keeps what it was told.

import { existsSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { readDefinitionFile } from '../core/definition-file.js';
import { errorMessage, FactoryError } from '../core/errors.js';
import { isJsonObject, type JsonValue } from '../core/json-value.js';
import { writeFileAtomically } from '../records/atomic-file.js';

export const WRITER_RECORDING_FORMAT = 'episode-factory.writer-answers.v1';

export interface RecordedAnswer {
  draw: number;
  /** sha256 of the request as sent (messages and sampling): an answer is replayed only for the same request. */
  request: string;
  /** The model's text, exactly as returned. */
  text: string;
}

export interface WriterRecording {
  format: typeof WRITER_RECORDING_FORMAT;
  world: string;
  /** The writer as --writer named it, e.g. openai:qwen2.5-7b-instruct. */
  writer: string;
  /** The writer as its server names it, which every task's `synthesized.by` gives. */
  by: string;
  /** What pins the writer's weights, which every task's `synthesized.writer_digest` gives. */
  writer_digest: string;
  answers: RecordedAnswer[];
}

/** `lanes/git-synth-v1.json` → `lanes/git-synth-v1.writer.json`. */
export function writerRecordingPath(lanePath: string): string {
  return join(dirname(lanePath), `${basename(lanePath, '.json')}.writer.json`);
}

/** The recording at `path` if it was made by this writer on this world; undefined when there is none or it is another's. */
export function readWriterRecording(path: string, writer: string, world: string): WriterRecording | undefined {
  if (!existsSync(path)) return undefined;
  let value: JsonValue;
  try {
    value = readDefinitionFile(path) as JsonValue;
  } catch (error) {
    throw new FactoryError('usage', `${path} cannot be read as a writer recording: ${errorMessage(error)}`, { fix: 'delete it, and the writer is asked again' });
  }
  if (!isJsonObject(value) || value.format !== WRITER_RECORDING_FORMAT || !Array.isArray(value.answers) || typeof value.by !== 'string' || typeof value.writer_digest !== 'string') {
    throw new FactoryError('usage', `${path} is not a writer recording (${WRITER_RECORDING_FORMAT})`, { fix: 'delete it, and the writer is asked again' });
  }
  const recording = value as unknown as WriterRecording;
  return recording.writer === writer && recording.world === world ? recording : undefined;
}

export function recordedAnswer(recording: WriterRecording, draw: number, request: string): string | undefined {
  return recording.answers.find((answer) => answer.draw === draw && answer.request === request)?.text;
}

/** Adds (or replaces) one draw's answer and writes the file whole. */
export function saveWriterAnswer(path: string, recording: WriterRecording, answer: RecordedAnswer): void {
  recording.answers = [...recording.answers.filter((entry) => entry.draw !== answer.draw), answer].sort((left, right) => left.draw - right.draw);
  writeFileAtomically(path, JSON.stringify(recording, null, 2) + '\n');
}
