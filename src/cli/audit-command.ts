// Owns the `audit` command: one line per finding, a summary, exit 1 on any;
// a progress line on a terminal while it hashes, compares and reproduces.

import type { Command } from 'commander';
import { type AuditProgress, auditDataset, DEFAULT_SAMPLE } from '../dataset-replay/audit-dataset.js';
import { parseCount } from './count-flag.js';
import { ProgressLine, shortDuration, type Streams, writeJson } from './output.js';

interface AuditFlags {
  sample?: string;
  workers?: string;
  full?: boolean;
  parent?: string[];
  json?: boolean;
  quiet?: boolean;
}

export function registerAudit(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('audit')
    .summary("check a dataset's files, lines, ids, provenance, turns and columnar copies, and reproduce a sample (or every record)")
    .description(
      'Checks that manifest.json lists every file with its exact sha256, size and rows (nothing missing, nothing added); ' +
        'that every JSONL line reads (torn and corrupt lines named by file and line); that record ids are unique and every ' +
        'source_record_id resolves here or in a --parent; that every record passes the provenance gate (a policy actor, a ' +
        'digest or a pinned weights revision for any model that acted, a user simulator actor for any user message after the opening request, seed, ' +
        'lane and lane hash, the commands to regenerate and replay it); that every tool message answers a call of the ' +
        'assistant turn before it (by tool_call_id, once, in the order of the calls) and every call is answered unless ' +
        'the episode ran out of wall time there, each finding named by line, record id and JSON pointer; that ' +
        'episodes.arrow and episodes.parquet hold exactly the records of episodes.jsonl, row for row and column for column; ' +
        'and that a deterministic sample of records (--full: every record) is rebuilt from its lineage byte for byte, by ' +
        'replaying its actions and, for scripted policies, by regenerating it. The manifest is a consistency check, not a ' +
        'signature: whoever can edit the files can rewrite it, which the columnar comparison and --full do not depend on. ' +
        'Exit 0 when nothing is found, 1 with one line per finding, 2 for a usage problem.',
    )
    .argument('<dir>', 'a dataset directory')
    .option('--sample <n>', `how many records to reproduce (0 to skip; default ${DEFAULT_SAMPLE})`)
    .option('--full', 'reproduce every record instead of a sample (minutes on large datasets)')
    .option('--parent <dir...>', 'datasets this one was derived from, for resolving source_record_id')
    .option('--workers <n>', 'threads to reproduce on (default: the number of cores when 200 records or more are reproduced, else one); the report is the same whatever the count')
    .option('--json', 'print the report as one JSON object on stdout')
    .option('--quiet', 'no progress line')
    .action(async (dir: string, flags: AuditFlags) => {
      const progress = new ProgressLine(streams.stderr, !flags.json && !flags.quiet);
      const started = performance.now();
      let reproductionStarted = 0;
      const show = (step: AuditProgress) => {
        if (!progress.active) return;
        if (step.stage === 'records') {
          const share = step.totalBytes ? ` (${Math.floor((100 * (step.bytes ?? 0)) / step.totalBytes)}%)` : '';
          progress.update(`audit ${dir}: checking records${step.records === undefined ? '' : ` ${step.records.toLocaleString('en-US')}${share}`}`, { force: step.records === undefined });
        }
        else if (step.stage === 'manifest') progress.update(`audit ${dir}: hashing files against the manifest`, { force: true });
        else if (step.stage === 'columnar') progress.update(`audit ${dir}: comparing ${step.files.join(' and ')} with episodes.jsonl, row ${step.rows}/${step.total}`);
        else if (step.stage === 'reproduction') {
          if (step.done === 0) reproductionStarted = performance.now();
          const seconds = (performance.now() - reproductionStarted) / 1000;
          const rate = step.done > 0 && seconds > 0 ? step.done / seconds : 0;
          const eta = rate > 0 ? `, ETA ${shortDuration((step.total - step.done) / rate)}` : '';
          progress.update(`audit ${dir}: reproduced ${step.done}/${step.total} records${rate > 0 ? `, ${rate.toFixed(1)}/s` : ''}${eta}`);
        }
      };
      const report = await auditDataset(dir, {
        ...(flags.sample !== undefined ? { sample: Number(flags.sample) } : {}),
        full: flags.full === true,
        parents: flags.parent ?? [],
        workers: flags.workers === undefined ? 'auto' : parseCount('--workers', flags.workers, 4),
        onProgress: show,
      });
      progress.clear();
      if (flags.json) {
        writeJson(streams, { ...report, wall_seconds: Math.round(performance.now() - started) / 1000 });
      } else {
        for (const finding of report.findings) streams.stdout.write(`FAIL ${finding.check}: ${finding.where}: ${finding.reason}\n`);
        const checks = Object.entries(report.checks).map(([check, count]) => `${check} ${count === 0 ? 'ok' : `${count} finding${count === 1 ? '' : 's'}`}`);
        const reproduced = report.full ? `${report.sampled.length} reproduced (every record)` : `${report.sampled.length} reproduced`;
        streams.stdout.write(`audit ${dir}: ${report.records} records, ${reproduced}; ${checks.join(', ')}\n`);
      }
      setExit(report.ok ? 0 : 1);
    });
}
