// Owns the `card` command: regenerate a dataset's README.md (its Hugging Face
// dataset card) from the records, the lanes' dataset_card and the exports,
// and refuse to write one that is not fit to publish unless asked for a draft.

import type { Command } from 'commander';
import { writeDatasetCard } from '../dataset/dataset-card.js';
import { beginDatasetUpdate, describedInputs } from '../dataset/dataset-inputs.js';
import { CARD_FILE } from '../dataset/dataset-card.js';
import { laneCardReader } from '../lanes/lane-cards.js';
import { PassProgress, type Streams, writeJson } from './output.js';

interface CardFlags {
  license?: string;
  draft?: boolean;
  lane?: string;
  json?: boolean;
}

export function registerCard(program: Command, streams: Streams): void {
  program
    .command('card')
    .summary("write a dataset's README.md (Hugging Face dataset card) from its records")
    .description(
      'Writes <dir>/README.md in the Hugging Face dataset-card form: YAML front matter (license, pretty_name, tags, ' +
        'task_categories, size_categories, configs and dataset_info), then purpose, files, training exports, record schema, ' +
        'generation (lanes, tasks, policies and variants, worlds, verification), provenance, the statistics of ' +
        '`episode-factory stats`, and limitations. The configs are "default" (the records: the files named in ' +
        '<dir>/split.json when there is one, otherwise episodes.jsonl as the train split) and "sft" and "dpo" when ' +
        '`export sft|dpo <dir>` wrote them, with features that keep tool schemas and object arguments intact, so ' +
        '`load_dataset(<dir>, "sft")` works. The license and task categories come from each lane\'s "dataset_card" ' +
        '(lanes are found by name, as replay finds them) or from --license. Everything comes from the data, so the same ' +
        'dataset gives the same bytes: regenerate it after changing the data rather than editing it. A card that is not ' +
        'fit to publish (no license, lanes that disagree on it, an export that no longer matches the records) is not ' +
        'written: exit 1 with the fix, unless --draft. Prints the path. The card vouches for the data, so every file it ' +
        'reads (records, split.json, rejected.jsonl, exports) must match manifest.json first, and every line must be a ' +
        'record: a dataset edited after its run wrote it, with no manifest, with unreadable lines or with a record_id ' +
        'holding two contents is refused, even with --draft. ' +
        'Exit 0; 1 not fit to publish or the files differ from the manifest; 2 when <dir> is not a dataset, has unreadable lines or split.json is unusable.',
    )
    .argument('<dir>', 'a dataset directory written by generate (holds episodes.jsonl)')
    .option('--license <id>', "the license id for the front matter (mit, apache-2.0, cc-by-4.0, ...), instead of the lanes' dataset_card.license")
    .option('--draft', 'write the card even when it is not fit to publish: a placeholder license, stale exports left out, each reason on stderr')
    .option('--lane <file>', "read dataset_card from this lane file instead of looking each lane up by name (a lane kept outside lanes/)")
    .option('--json', 'print {path, draft, not_publishable} as JSON')
    .addHelpText(
      'after',
      '\nIn the lane:\n  "dataset_card": {"license": "cc-by-4.0", "task_categories": ["text-generation"]}\n\n' +
        'Examples:\n  episode-factory card datasets/tool-world-v1\n  episode-factory card datasets/tool-world-faults-v1 --license cc-by-4.0\n  episode-factory card /tmp/mine --draft',
    )
    .action(async (dir: string, flags: CardFlags) => {
      const update = await beginDatasetUpdate(dir, 'card', { inputs: describedInputs(dir), outputs: [CARD_FILE] });
      const progress = new PassProgress(streams, 'card', !flags.json);
      const result = await writeDatasetCard(dir, {
        ...(flags.license === undefined ? {} : { license: flags.license }),
        ...(flags.draft ? { draft: true } : {}),
        laneCards: laneCardReader(flags.lane === undefined ? {} : { lane: flags.lane }),
        onProgress: progress.update,
      }).finally(() => progress.clear());
      await update.commit();
      for (const reason of result.draft) streams.stderr.write(`card ${dir}: draft, not fit to publish: ${reason.reason} — fix: ${reason.fix}\n`);
      if (flags.json) return writeJson(streams, { path: result.path, draft: result.draft.length > 0, not_publishable: result.draft });
      streams.stdout.write(`${result.path}\n`);
    });
}
