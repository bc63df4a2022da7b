// Owns `engine`: a GGUF model run by llama.cpp (node-llama-cpp, CPU) and served
// on loopback behind Ollama's API and the OpenAI-compatible /v1 routes, so
// `generate --policy ollama:NAME` or `--policy openai:NAME` drive a real model
// on a machine without Ollama. `tiny` names the tiny model
// scripts/tiny-model.sh builds for the tests.

import type { Command } from 'commander';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { FACTORY_VERSION, PACKAGE_ROOT } from '../core/package-paths.js';
import { startEngine } from '../engine/engine-server.js';
import type { Streams } from './output.js';

interface EngineFlags {
  name?: string;
  port: string;
  host: string;
  context?: string;
  threads?: string;
  json?: boolean;
}

/** The model scripts/tiny-model.sh built last: `current` links to the directory named by the hash of its inputs. */
export const TINY_MODEL_CURRENT = join(PACKAGE_ROOT, '.cache', 'tiny-model', 'current', 'tiny-qwen2.gguf');

/** The model file `tiny` stands for (EPISODE_FACTORY_TINY_MODEL, else the last one scripts/tiny-model.sh built), or why there is none. */
export function tinyModelPath(): string {
  const chosen = process.env.EPISODE_FACTORY_TINY_MODEL;
  if (chosen) {
    if (!existsSync(chosen)) throw new FactoryError('model_unavailable', `EPISODE_FACTORY_TINY_MODEL names ${chosen}, which does not exist`, { fix: 'point it at a .gguf file, or unset it to use the one scripts/tiny-model.sh built' });
    return chosen;
  }
  if (!existsSync(TINY_MODEL_CURRENT)) {
    throw new FactoryError('model_unavailable', `the tiny model is not built on this machine (no ${TINY_MODEL_CURRENT})`, { fix: 'run scripts/python-loaders.sh, then scripts/tiny-model.sh (about 8 minutes on 2 cores; it prints the model\'s path)' });
  }
  return realpathSync(TINY_MODEL_CURRENT);
}

function whole(text: string | undefined, flag: string, low: number, high: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^[0-9]{1,9}$/.test(text) || value < low || value > high) throw new FactoryError('usage', `${flag} "${text}" is not a whole number from ${low} to ${high}`, { fix: `pass ${flag} ${Math.max(low, 1)} or more` });
  return value;
}

export function registerEngine(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('engine')
    .summary('serve a GGUF model with llama.cpp behind the Ollama and OpenAI APIs')
    .description(
      'Load a GGUF model with llama.cpp (node-llama-cpp, on the CPU) and serve it on loopback behind Ollama\'s REST API ' +
        '(/api/version, /api/tags, /api/show, /api/ps, /api/chat with tools and NDJSON streaming, /api/generate, raw ' +
        'or templated) and the OpenAI-compatible routes (GET /v1/models, POST /v1/chat/completions with tools and ' +
        'server-sent events). Chats are rendered with the codec of the model\'s architecture (qwen2: Qwen2.5\'s Hermes ' +
        'template) and the model\'s calls are read back by the same codec. The digest it reports is the sha256 of the ' +
        'file, so a record pins the exact weights. Decoding is greedy unless a request sets a temperature. <model> is ' +
        'a .gguf path, or `tiny` for the tiny model scripts/tiny-model.sh builds. Runs until Ctrl-C or SIGTERM.',
    )
    .argument('<model>', 'a .gguf file, or `tiny`')
    .option('--name <name>', 'the name it is served as (default: the file name without .gguf, tagged :latest)')
    .option('--port <n>', 'the port (0 picks a free one)', '11435')
    .option('--host <address>', 'the address to listen on (the engine has no authentication: keep it on loopback)', '127.0.0.1')
    .option('--context <tokens>', 'tokens the context holds, prompt and answer (default: 8192, or less if the model was trained with less)')
    .option('--threads <n>', 'CPU threads for evaluation (default 1: more threads spin against each other on a small or busy machine)')
    .option('--json', 'print one JSON line on stdout once serving (url, name, digest, ...), for scripts')
    .addHelpText(
      'after',
      '\nExamples:\n  scripts/tiny-model.sh && episode-factory engine tiny\n' +
        '  episode-factory generate tool-world-v1 --seeds 0..1 --policy ollama:tiny-qwen2 --ollama-host http://127.0.0.1:11435\n' +
        '  episode-factory generate tool-world-v1 --seeds 0..1 --policy openai:tiny-qwen2:latest --base-url http://127.0.0.1:11435/v1',
    )
    .action(async (given: string, flags: EngineFlags) => {
      const modelPath = given === 'tiny' ? tinyModelPath() : given;
      const port = whole(flags.port, '--port', 0, 65535)!;
      const contextSize = whole(flags.context, '--context', 64, 1 << 20);
      const threads = whole(flags.threads, '--threads', 1, 1024);
      const engine = await startEngine({
        modelPath,
        ...(flags.name ? { name: flags.name } : {}),
        host: flags.host,
        port,
        version: `episode-factory-engine ${FACTORY_VERSION}`,
        ...(contextSize ? { contextSize } : {}),
        ...(threads ? { threads } : {}),
      });
      const { served } = engine;
      const description = served.model.description;
      if (flags.json) {
        streams.stdout.write(
          JSON.stringify({ url: engine.url, openai_base_url: `${engine.url}/v1`, name: served.name, digest: description.sha256, architecture: description.architecture, codec: served.codec.name, parameters: description.parameters, context: served.model.contextSize, path: description.path }) + '\n',
        );
      }
      const bare = served.name.replace(/:latest$/, '');
      streams.stderr.write(
        `episode-factory engine: ${served.name} (${description.architecture}, ${description.parameter_size} parameters, ${description.quantization}, context ${served.model.contextSize}, sha256 ${description.sha256.slice(0, 12)}) at ${engine.url}\n` +
          `  --policy ollama:${bare} --ollama-host ${engine.url}\n  --policy openai:${served.name} --base-url ${engine.url}/v1\n(Ctrl-C to stop)\n`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await engine.close();
      streams.stderr.write('episode-factory engine: stopped\n');
      setExit(0);
    });
}
