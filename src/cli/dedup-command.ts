// Owns the `dedup` command: flags to options (thresholds, the embedder), a
// progress line, and the one-line report with counts per reason (or JSON).

import { type Command, InvalidArgumentError } from 'commander';
import { DEFAULT_COSINE_THRESHOLD, DEFAULT_NEAR_THRESHOLD, dedupDataset, type DedupSummary } from '../dataset/dedup.js';
import { DEFAULT_EMBED_BATCH, DEFAULT_EMBED_TIMEOUT_MS } from '../models/embedding/embedder.js';
import { embedderFromSpec, refuseOptionsWithoutEmbedder } from '../models/embedding/embedder-registry.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../models/chat-model.js';
import { parseSeconds } from './model-timeout.js';
import { PassProgress, ProgressLine, type Streams, writeJson } from './output.js';
import { checkInputs } from '../dataset/dataset-inputs.js';
import { EPISODES_FILE } from '../dataset/dataset-reader.js';
import { writeDerivedManifest } from '../dataset/derived-manifest.js';
import { MAX_FILE_SIZE_HELP, parseFileSize } from './file-size-flag.js';

interface DedupFlags {
  maxFileSize?: string;
  out: string;
  /** A number from --near, false from --no-near, undefined when neither was given. */
  near?: number | false;
  embed?: string;
  cosine?: number;
  ollamaHost?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  modelDigest?: string;
  modelTimeout?: string;
  json?: boolean;
  quiet?: boolean;
}

function threshold(flag: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || parsed <= 0 || parsed > 1) {
      throw new InvalidArgumentError(`${flag} takes a number in (0, 1], e.g. ${flag} 0.9`);
    }
    return parsed;
  };
}

export function formatDedupSummary(summary: DedupSummary): string {
  const reasons = `exact ${summary.by_reason.exact}, near ${summary.by_reason.near}, semantic ${summary.by_reason.semantic}`;
  const near = summary.near_threshold === null ? 'near off' : `near jaccard >= ${summary.near_threshold} (${summary.near_banding!.bands}x${summary.near_banding!.rows} bands)`;
  const semantic = summary.embed_model ? `, semantic cosine >= ${summary.cosine_threshold} with ${summary.embed_model}` : '';
  return (
    `dedup ${summary.dir}: ${summary.records} records, ${summary.kept} kept, ${summary.dropped} dropped (${reasons}); ` +
    `${near}${semantic}, wall ${summary.wall_seconds.toFixed(2)}s -> ${summary.out_dir}`
  );
}

export function registerDedup(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('dedup')
    .summary('drop duplicate episodes (exact, near, optionally semantic) into a new dataset')
    .description(
      'Reads <dir>/episodes.jsonl in file order and keeps the first record of every duplicate group. A record is dropped as ' +
        '"exact" when its normalised trajectory (tools called, canonical arguments, results, texts; ids and provenance ignored) ' +
        'hashes like an earlier one (kept or dropped), e.g. two seeds that reproduced the same episode or a line copied twice; as "near" when the Jaccard similarity of its ' +
        'word 3-grams (roles, texts, calls with canonical arguments, tool outcomes; not tool result contents) with a kept record ' +
        'reaches --near (MinHash, 128 permutations, LSH bands, each candidate confirmed exactly); and, with --embed, as "semantic" ' +
        'when the cosine of its embedding with a kept record reaches --cosine. Writes <out>/episodes.jsonl (kept records, with ' +
        'lineage operation "dedup" and source_record_id), <out>/dropped.jsonl ({record_id, reason, duplicate_of, similarity, record}) ' +
        'and <out>/dedup.json (settings, counts, file hashes), and <out>/manifest.json naming <dir> and the sha256 of its ' +
        'manifest. Same input, same bytes. <dir>/episodes.jsonl must match its manifest.json first (a source with no manifest is ' +
        'read with a warning, and the output names no source manifest). Refuses a dataset edited after its run wrote it and ' +
        'a record_id that holds two contents (exit 1); corrupt, torn or ' +
        'non-UTF-8 lines, --out equal to <dir>, and a non-empty --out that an earlier dedup did not write (exit 2).',
    )
    .argument('<dir>', 'a dataset directory with episodes.jsonl, e.g. datasets/tool-world-v1')
    .requiredOption('--out <dir>', 'where to write the deduplicated dataset (new, empty, or an earlier dedup output)')
    .option('--near <jaccard>', `Jaccard threshold for near duplicates, in (0, 1] (default: ${DEFAULT_NEAR_THRESHOLD})`, threshold('--near'))
    .option('--no-near', 'no near-duplicate pass: exact (and semantic, with --embed) only')
    .option('--embed <provider:model>', 'also drop semantic duplicates, embedding with a model pulled into Ollama (ollama:nomic-embed-text) or served through an OpenAI-compatible /v1/embeddings (openai:<model>, with --base-url)')
    .option('--cosine <x>', `cosine threshold for semantic duplicates, in (0, 1] (default: ${DEFAULT_COSINE_THRESHOLD}; needs --embed)`, threshold('--cosine'))
    .option('--ollama-host <url>', 'the Ollama server for --embed ollama:<model> (default: $OLLAMA_HOST, else http://127.0.0.1:11434)')
    .option('--base-url <url>', 'the API root for --embed openai:<model> (default: $OPENAI_BASE_URL, else http://127.0.0.1:8000/v1)')
    .option('--api-key-env <name>', 'with --embed openai:<model>: the environment variable holding the API key')
    .option('--model-digest <digest>', 'with --embed openai:<model>: pins the embedding weights in the report (sha256 or 40-hex revision)')
    .option(
      '--model-timeout <seconds>',
      `with --embed: the longest the embedding server may stay silent on one request of ${DEFAULT_EMBED_BATCH} texts (default ${DEFAULT_EMBED_TIMEOUT_MS / 1000}; the start-up check waits at most ${STARTUP_CHECK_TIMEOUT_MS / 1000})`,
    )
    .option('--max-file-size <size>', MAX_FILE_SIZE_HELP)
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--quiet', 'no progress line')
    .addHelpText(
      'after',
      '\nExamples:\n  episode-factory dedup datasets/tool-world-v1 --out datasets/tool-world-v1-dedup\n' +
        '  episode-factory dedup datasets/tool-world-faults-v1 --out /tmp/faults-dedup --near 0.8 --json\n' +
        '  episode-factory dedup datasets/tool-world-v1 --out /tmp/semantic --no-near --embed ollama:nomic-embed-text --cosine 0.97',
    )
    .action(async (dir: string, flags: DedupFlags) => {
      const server = { host: flags.ollamaHost, baseUrl: flags.baseUrl, apiKeyEnv: flags.apiKeyEnv, modelDigest: flags.modelDigest };
      if (flags.embed === undefined) refuseOptionsWithoutEmbedder({ ...server, timeoutMs: flags.modelTimeout });
      const timeoutMs = flags.modelTimeout === undefined ? undefined : parseSeconds('--model-timeout', flags.modelTimeout, DEFAULT_EMBED_TIMEOUT_MS / 1000);
      const embedder = flags.embed === undefined ? undefined : embedderFromSpec(flags.embed, { ...server, timeoutMs });
      // The source must match its manifest; one with none is read with a warning, and the output's manifest then names no source manifest.
      const maxFileBytes = parseFileSize('--max-file-size', flags.maxFileSize);
      const checked = await checkInputs(dir, 'dedup', [EPISODES_FILE]);
      if (checked.warning) streams.stderr.write(`dedup: warning: ${checked.warning}\n`);
      const progress = new ProgressLine(streams.stderr, !flags.json && !flags.quiet);
      const pass = new PassProgress(streams, `dedup ${dir}`, !flags.json && !flags.quiet);
      const summary = await dedupDataset({
        dir,
        outDir: flags.out,
        ...(flags.near !== undefined ? { near: flags.near } : {}),
        ...(embedder ? { embedder } : {}),
        ...(flags.cosine !== undefined ? { cosine: flags.cosine } : {}),
        maxFileBytes,
        onProgress: (message) => progress.update(`dedup ${dir}: ${message}`),
        onStage: (stage) => pass.begin(stage),
        onPass: pass.update,
      });
      progress.clear();
      pass.clear();
      // The output is a dataset like any other: columnar copies and a manifest naming where it came from, down to its manifest's bytes.
      await writeDerivedManifest(summary.out_dir, 'dedup', { dir, ...(checked.manifest ? { manifest: checked.manifest } : {}) }, { dropped: summary.dropped }, maxFileBytes);
      if (flags.json) writeJson(streams, summary);
      else streams.stdout.write(formatDedupSummary(summary) + '\n');
      setExit(0);
    });
}
