/** Types of drive.mjs (plain JavaScript, shared with demo/screenshot.mjs). */
import type { Page } from 'playwright-core';
export interface DemoServer {
  url: string;
  stop(): Promise<void>;
  log(): string;
}
export interface DemoControls {
  partition?: 'iid' | 'dirichlet' | 'shift';
  alpha?: number;
  classes?: number;
  clients?: number;
  repeats?: number;
  seed?: number;
}
export declare function startDemoServer(options?: { build?: boolean; timeoutMs?: number }): Promise<DemoServer>;
export declare function runDemo(page: Page, url: string, controls?: DemoControls, options?: { timeoutMs?: number }): Promise<unknown>;
