#!/usr/bin/env node
// The installed command: runs the TypeScript CLI through tsx's loader, so a
// fresh clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
