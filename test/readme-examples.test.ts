/**
 * README.md's examples, run as a user's programs: the five-minute walkthrough
 * (a fit, a federation over the embedded broker with two `fedmix client`
 * processes, the saved model loaded back). The conventions (setup and check
 * comments, fence words, one scratch project per file) are
 * test/support/doc-examples.ts's; docs/ has its own test,
 * test/docs-examples.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import * as fedmixNode from '../ts/node.js';
import {
  EXAMPLE_TIMEOUT_MS, examplesOf, fenceProblem, inBrowser, inNode, inShell, removeProject, RUNNABLE,
  runExample, runInChromium, scratchProject, unimported, where,
} from './support/doc-examples.js';

const examples = examplesOf('README.md');
const ordered = examples.filter((e) => inNode(e) || inShell(e));

let app = '';
beforeAll(() => {
  app = scratchProject('readme');
});
afterAll(() => removeProject(app));

describe('README examples', () => {
  test('the blocks are found, and each is code to run, a browser example, a shell session, or not code', () => {
    // the walkthrough: a fit, a federation of two client processes, the saved model scored
    expect(examples.filter(inNode).length).toBeGreaterThanOrEqual(2);
    expect(examples.filter(inShell).length).toBeGreaterThanOrEqual(1);
    expect(examples.map(fenceProblem).filter(Boolean)).toEqual([]);
  });

  // in the order they are written, in one folder: the walkthrough's steps build on each other
  test.each(ordered.map((e) => [where(e), e] as const))('%s runs', async (_at, e) => {
    await runExample(app, e);
  }, EXAMPLE_TIMEOUT_MS + 10_000);

  test.each(examples.filter(inBrowser).map((e) => [where(e), e] as const))('%s runs in Chromium', async (_at, e) => {
    await runInChromium(app, e);
  }, EXAMPLE_TIMEOUT_MS + 30_000);

  test.each(examples.filter((e) => RUNNABLE.has(e.lang)).map((e) => [where(e), e] as const))('%s imports what it uses', (_at, e) => {
    expect(unimported(e, new Set([...Object.keys(fedmix), ...Object.keys(fedmixNode)]))).toEqual([]);
  });
});
