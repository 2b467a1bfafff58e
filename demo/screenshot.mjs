#!/usr/bin/env node
/**
 * Makes demo/screenshot.png for docs/browsers-and-workers.md: builds and serves the demo, runs
 * it at `fedmix demo`'s settings in headless Chromium and captures the page.
 *
 *   node demo/screenshot.mjs [out.png]
 */
import { fileURLToPath } from 'node:url';
import { launchHeadlessChromium } from '../test/support/chromium.mjs';
import { runDemo, startDemoServer } from './drive.mjs';

const out = process.argv[2] ?? fileURLToPath(new URL('./screenshot.png', import.meta.url));
const server = await startDemoServer();
const browser = await launchHeadlessChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const state = await runDemo(page, server.url);
  if (state.state !== 'done') throw new Error(`the demo did not finish: ${state.error ?? state.state}`);
  await page.screenshot({ path: out, fullPage: true });
  console.log(`demo: wrote ${out}`);
} finally {
  await browser.close();
  await server.stop();
}
