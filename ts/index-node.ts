/**
 * `fedmix` in Node (package.json's "node" condition): the library of
 * ts/index.ts with apache-arrow loaded at once, since Node downloads nothing;
 * toArrow() and Arrow IPC bytes work without `await loadArrow()`. Browsers and
 * bundlers get ts/index.ts, which loads apache-arrow only when asked.
 *
 * @module fedmix
 */
import * as apacheArrow from 'apache-arrow';
import { provideArrow } from './data/arrow-library.js';

provideArrow(apacheArrow);

export * from './index.js';
