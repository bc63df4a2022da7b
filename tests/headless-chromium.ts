// Launches Debian's Chromium for the report's browser test and the benchmark,
// through playwright-core (which downloads no browser of its own).

import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { childEnvironment } from '../src/core/child-environment.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export async function launchChromium(): Promise<Browser> {
  if (!chromiumInstalled()) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install Debian's package (sudo apt-get install chromium, as .ci/run does) or set CHROMIUM_PATH`);
  }
  // The flags keep Chromium from calling home: the network here is closed, and the report must not need it.
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    env: childEnvironment(process.env).env,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
