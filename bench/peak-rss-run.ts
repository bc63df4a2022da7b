// Runs one CLI command in this process and reports its peak resident set size
// (the whole process: main thread, worker threads, WebAssembly memory) and
// wall time as one JSON line on stderr, for the benchmark's memory figure.

import { main } from '../src/cli/main.js';

const started = performance.now();
const status = await main(process.argv);
process.stderr.write(
  `\nBENCH_RESULT ${JSON.stringify({ status, max_rss_bytes: process.resourceUsage().maxRSS * 1024, wall_seconds: (performance.now() - started) / 1000 })}\n`,
);
process.exitCode = status;
