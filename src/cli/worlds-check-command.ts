// Owns `worlds check`: the world conformance suite run on one world or on
// every registered world, one line per check (✓ passed, ✗ failed, – skipped,
// with what was seen or why it cannot apply), or JSON for scripts. Exit 1
// when any check failed; an unknown world is a usage problem (2).

import type { Command } from 'commander';
import { checkWorldConformance, loadableLanes, type ConformanceCheck, type ConformanceReport } from '../verify/world-conformance.js';
import { getWorld, loadWorldFile, worldNames } from '../world/world-registry.js';
import { type Streams, writeJson } from './output.js';

const MARK: Record<ConformanceCheck['status'], string> = { pass: '✓', fail: '✗', skip: '–' };

export function registerWorldsCheck(worlds: Command, streams: Streams, setExit: (status: number) => void): void {
  worlds
    .command('check')
    .description(
      'Run the world conformance suite on one world, or on every registered world: the checks a world, scripted or server, must pass before its episodes can be trusted. ' +
        'One line per check: ✓ passed, ✗ failed, – skipped (the check cannot apply to this kind of world; the line says why).',
    )
    .addHelpText(
      'after',
      [
        '',
        'Checks:',
        '  seed      the same seed gives the same initial snapshot bytes; another seed gives other bytes',
        '  probe     two snapshots of an untouched world are equal (also after a tools/list)',
        '  catalog   the live tools/list is the declared catalog: names, descriptions, schemas, annotations',
        '  sandbox   server worlds: path-like arguments (and SQL) aimed outside the sandbox change and read nothing outside it',
        '  cleanup   server worlds: after dispose no process of the child’s group and no sandbox directory remain',
        '  faults    every fault kind fires in front of the world, is recorded by the fault layer and shows to the client',
        '  replay    one episode of a lane on this world, played by the scripted policy, replays to a verified record',
        '',
        'Exit status: 0 every check passed or was skipped, 1 a check failed, 2 an unknown world or a definition file with problems (each named by its JSON pointer).',
      ].join('\n'),
    )
    .argument('[world]', 'a world name, or a definition file (worlds/<name>.json) (default: every world)')
    .option('--json', 'print one report per world as JSON: {world, kind, passed, checks: [{id, title, status, detail}]}')
    .action(async (name: string | undefined, flags: { json?: boolean }) => {
      const worlds = name === undefined ? worldNames().map(getWorld) : [name.endsWith('.json') || name.includes('/') ? loadWorldFile(name) : getWorld(name)];
      const lanes = loadableLanes();
      const reports: ConformanceReport[] = [];
      for (const world of worlds) {
        if (!flags.json) streams.stdout.write(`${world.name}\n`);
        const report = await checkWorldConformance(world, {
          lanes,
          ...(flags.json ? {} : { onCheck: (check: ConformanceCheck) => streams.stdout.write(`  ${MARK[check.status]} ${check.id.padEnd(8)} ${check.title}: ${check.detail}\n`) }),
        });
        reports.push(report);
      }
      const failed = reports.filter((report) => !report.passed);
      if (flags.json) writeJson(streams, name === undefined ? reports : reports[0]);
      else streams.stdout.write(`${reports.length} world${reports.length === 1 ? '' : 's'} checked: ${failed.length === 0 ? 'all conform' : `${failed.length} failed (${failed.map((report) => report.world).join(', ')})`}\n`);
      setExit(failed.length === 0 ? 0 : 1);
    });
}
