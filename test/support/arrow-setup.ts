/**
 * The tests import the library's sources (ts/index.ts), as a bundled program
 * would: apache-arrow is then loaded on demand. They run in Node, where
 * `fedmix` (ts/index-node.ts) loads it at once; this does the same for them.
 * test/arrow-library.test.ts unloads it to see the error a program gets.
 */
import * as apacheArrow from 'apache-arrow';
import { provideArrow } from '../../ts/data/arrow-library.js';

provideArrow(apacheArrow);

// and every WebAssembly module's files, as `fedmix` registers them, for the tests that import the loader
// or a model's source file without ts/index.ts (test/bundlers.test.ts and test/builds.test.ts check the entries)
import '../../ts/wasm/files-all.generated.js';
