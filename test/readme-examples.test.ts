/**
 * README.md's examples, run as a user's programs: the five-minute walkthrough
 * (a fit, a federation over the embedded broker with two `fedmix client`
 * processes, the saved model loaded back). The conventions (setup and check
 * comments, fence words, one scratch project per file) are
 * test/support/doc-examples.ts's; docs/ has its own test,
 * test/docs-examples.test.ts.
 */
import { describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import * as fedmixNode from '../ts/node.js';
import { examplesOf, fenceProblem, inNode, inShell, testExamples } from './support/doc-examples.js';

const examples = examplesOf('README.md');

describe('README examples', () => {
  test('the blocks are found, and each is code to run, a browser example, a shell session, or not code', () => {
    // the walkthrough: a fit, a federation of two client processes, the saved model scored
    expect(examples.filter(inNode).length).toBeGreaterThanOrEqual(2);
    expect(examples.filter(inShell).length).toBeGreaterThanOrEqual(1);
    expect(examples.map(fenceProblem).filter(Boolean)).toEqual([]);
  });

  // the exports of fedmix and fedmix/node
  testExamples('readme', examples, () => new Set([...Object.keys(fedmix), ...Object.keys(fedmixNode)]));
});
