/**
 * Debian's Chromium driven by playwright-core, as the browser tests and the
 * scripts that take screenshots launch it (plain JavaScript, shared with
 * demo/). Never downloads a browser: a missing Chromium fails loudly.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Headless Chromium, offline-safe; throws when it is missing. */
export async function launchHeadlessChromium() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: this needs Debian's chromium package (bash scripts/setup.sh installs it). Browsers are never downloaded.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // offline machine: keep Chromium from phoning home (and from hanging on it)
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
