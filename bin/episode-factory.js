#!/usr/bin/env node
// The installed command: runs the TypeScript CLI through tsx's loader, so a
// fresh clone needs no build step.
import { register } from 'tsx/esm/api';

register();
// `episode-factory ... | head` closes the pipe early: that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
