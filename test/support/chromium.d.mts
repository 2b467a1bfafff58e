/** Types of chromium.mjs (plain JavaScript, shared with demo/). */
import type { Browser } from 'playwright-core';
export declare const CHROMIUM: string;
export declare function launchHeadlessChromium(): Promise<Browser>;
