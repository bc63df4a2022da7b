// Owns the `audit` command: one line per finding, a summary, exit 1 on any.

import type { Command } from 'commander';
import { auditDataset, DEFAULT_SAMPLE } from '../factory/audit-dataset.js';
import { type Streams, writeJson } from './output.js';

export function registerAudit(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('audit')
    .summary("check a dataset's files, lines, ids, provenance and columnar copies, and reproduce a sample")
    .description(
      'Checks that manifest.json lists every file with its exact sha256, size and rows (nothing missing, nothing added); ' +
        'that every JSONL line reads (torn and corrupt lines named by file and line); that record ids are unique and every ' +
        'source_record_id resolves here or in a --parent; that every record passes the provenance gate (a policy actor, a ' +
        'digest for any model that acted, seed, lane and lane hash, the commands to regenerate and replay it); that ' +
        'episodes.arrow and episodes.parquet hold exactly the records of episodes.jsonl, row for row and column for column; ' +
        'and that a deterministic sample of records is rebuilt from its lineage byte for byte, by replaying its actions and, for ' +
        'scripted policies, by regenerating it. Exit 0 when nothing is found, 1 with one line per finding, 2 for a usage problem.',
    )
    .argument('<dir>', 'a dataset directory')
    .option('--sample <n>', 'how many records to reproduce (0 to skip)', String(DEFAULT_SAMPLE))
    .option('--parent <dir...>', 'datasets this one was derived from, for resolving source_record_id')
    .option('--json', 'print the report as one JSON object on stdout')
    .action(async (dir: string, flags: { sample: string; parent?: string[]; json?: boolean }) => {
      const report = await auditDataset(dir, { sample: Number(flags.sample), parents: flags.parent ?? [] });
      if (flags.json) {
        writeJson(streams, report);
      } else {
        for (const finding of report.findings) streams.stdout.write(`FAIL ${finding.check}: ${finding.where}: ${finding.reason}\n`);
        const checks = Object.entries(report.checks).map(([check, count]) => `${check} ${count === 0 ? 'ok' : `${count} finding${count === 1 ? '' : 's'}`}`);
        streams.stdout.write(`audit ${dir}: ${report.records} records, ${report.sampled.length} reproduced; ${checks.join(', ')}\n`);
      }
      setExit(report.ok ? 0 : 1);
    });
}
