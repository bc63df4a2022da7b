// Owns the `dedup` command: flags to options (thresholds, the embedder), a
// progress line, and the one-line report with counts per reason (or JSON).

import { type Command, InvalidArgumentError } from 'commander';
import { FactoryError } from '../core/errors.js';
import { DEFAULT_COSINE_THRESHOLD, DEFAULT_NEAR_THRESHOLD, dedupDataset, type DedupSummary } from '../dataset/dedup.js';
import type { Embedder } from '../dataset/embedder.js';
import { DEFAULT_EMBED_BATCH, DEFAULT_EMBED_TIMEOUT_MS, OllamaEmbedder } from '../dataset/ollama-embedder.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../core/ollama-host.js';
import { normaliseModelDigest } from '../core/model-pin.js';
import { readApiKey, resolveBaseUrl } from '../core/openai-endpoint.js';
import { OpenAIEmbedder } from '../dataset/openai-embedder.js';
import { parseSeconds } from './model-timeout.js';
import { ProgressLine, type Streams, writeJson } from './output.js';
import { checkInputs } from '../dataset/dataset-inputs.js';
import { EPISODES_FILE } from '../dataset/dataset-reader.js';
import { writeDerivedManifest } from '../dataset/derived-manifest.js';

interface DedupFlags {
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

export interface EmbedderServerOptions {
  host?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  modelDigest?: string;
  timeoutMs?: number;
}

/** `ollama:<model>` or `openai:<model>`; each provider's flags apply to it alone. */
export function embedderFromSpec(spec: string, options: EmbedderServerOptions = {}): Embedder {
  const separator = spec.indexOf(':');
  const provider = separator < 0 ? spec : spec.slice(0, separator);
  const model = separator < 0 ? '' : spec.slice(separator + 1).trim();
  if ((provider !== 'ollama' && provider !== 'openai') || model === '') {
    throw new FactoryError('usage', `--embed ${spec} is not a provider:model pair this tool knows`, {
      fix: 'write --embed ollama:<model> (e.g. ollama:nomic-embed-text) or --embed openai:<model> with --base-url',
    });
  }
  const timeout = options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {};
  if (provider === 'ollama') {
    for (const [flag, value] of [['--base-url', options.baseUrl], ['--api-key-env', options.apiKeyEnv], ['--model-digest', options.modelDigest]] as const) {
      if (value !== undefined) throw new FactoryError('usage', `${flag} applies to --embed openai:<model>`, { fix: `drop ${flag}, or embed with openai:<model>` });
    }
    return new OllamaEmbedder({ model, ...(options.host !== undefined ? { host: options.host } : {}), ...timeout });
  }
  if (options.host !== undefined) throw new FactoryError('usage', '--ollama-host applies to --embed ollama:<model>', { fix: 'drop --ollama-host (use --base-url)' });
  const digest = options.modelDigest === undefined ? undefined : normaliseModelDigest(options.modelDigest);
  if (options.modelDigest !== undefined && digest === undefined) {
    throw new FactoryError('usage', `--model-digest "${options.modelDigest}" is not a digest`, { fix: 'pass sha256:<64 hex> of the weights file, or a 40-hex Hugging Face revision' });
  }
  const apiKey = readApiKey(options.apiKeyEnv);
  return new OpenAIEmbedder({ model, baseUrl: resolveBaseUrl(options.baseUrl), ...(apiKey !== undefined ? { apiKey } : {}), ...(digest !== undefined ? { digest } : {}), ...timeout });
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
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--quiet', 'no progress line')
    .addHelpText(
      'after',
      '\nExamples:\n  episode-factory dedup datasets/tool-world-v1 --out datasets/tool-world-v1-dedup\n' +
        '  episode-factory dedup datasets/tool-world-faults-v1 --out /tmp/faults-dedup --near 0.8 --json\n' +
        '  episode-factory dedup datasets/tool-world-v1 --out /tmp/semantic --no-near --embed ollama:nomic-embed-text --cosine 0.97',
    )
    .action(async (dir: string, flags: DedupFlags) => {
      for (const [flag, value] of [['--ollama-host', flags.ollamaHost], ['--base-url', flags.baseUrl], ['--api-key-env', flags.apiKeyEnv], ['--model-digest', flags.modelDigest]] as const) {
        if (value !== undefined && flags.embed === undefined) throw new FactoryError('usage', `${flag} was given without --embed`, { fix: `add --embed ${flag === '--ollama-host' ? 'ollama' : 'openai'}:<model>, or drop ${flag}` });
      }
      if (flags.modelTimeout !== undefined && flags.embed === undefined) {
        throw new FactoryError('usage', '--model-timeout was given without --embed', { fix: 'add --embed ollama:<model> or --embed openai:<model>, or drop --model-timeout' });
      }
      const timeoutMs = flags.modelTimeout === undefined ? undefined : parseSeconds('--model-timeout', flags.modelTimeout, DEFAULT_EMBED_TIMEOUT_MS / 1000);
      const embedder =
        flags.embed === undefined
          ? undefined
          : embedderFromSpec(flags.embed, {
              ...(flags.ollamaHost !== undefined ? { host: flags.ollamaHost } : {}),
              ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
              ...(flags.apiKeyEnv !== undefined ? { apiKeyEnv: flags.apiKeyEnv } : {}),
              ...(flags.modelDigest !== undefined ? { modelDigest: flags.modelDigest } : {}),
              ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            });
      // The source must match its manifest; one with none is read with a warning, and the output's manifest then names no source manifest.
      const checked = await checkInputs(dir, 'dedup', [EPISODES_FILE]);
      if (checked.warning) streams.stderr.write(`dedup: warning: ${checked.warning}\n`);
      const progress = new ProgressLine(streams.stderr, !flags.json && !flags.quiet);
      const summary = await dedupDataset({
        dir,
        outDir: flags.out,
        ...(flags.near !== undefined ? { near: flags.near } : {}),
        ...(embedder ? { embedder } : {}),
        ...(flags.cosine !== undefined ? { cosine: flags.cosine } : {}),
        onProgress: (message) => progress.update(`dedup ${dir}: ${message}`),
      });
      progress.clear();
      // The output is a dataset like any other: columnar copies and a manifest naming where it came from, down to its manifest's bytes.
      await writeDerivedManifest(summary.out_dir, 'dedup', { dir, ...(checked.manifest ? { manifest: checked.manifest } : {}) }, { dropped: summary.dropped });
      if (flags.json) writeJson(streams, summary);
      else streams.stdout.write(formatDedupSummary(summary) + '\n');
      setExit(0);
    });
}
