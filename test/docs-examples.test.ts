/**
 * Every code block of docs/, CONTRIBUTING.md and BENCHMARKS.md, run as a
 * user's program, as README.md's are (test/readme-examples.test.ts; the
 * conventions are test/support/doc-examples.ts's).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import * as fedmixNode from '../ts/node.js';
import * as fedmixExperiments from '../ts/experiments/index.js';
import { examplesOf, fenceProblem, inNode, ROOT, testExamples } from './support/doc-examples.js';

/** docs/**\/*.md (docs/api/ is TypeDoc's output, not committed), then the two top-level guides */
function docFiles(dir = 'docs'): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (path !== 'docs/api') out.push(...docFiles(path));
    } else if (entry.name.endsWith('.md')) out.push(path);
  }
  return out;
}

const files = [...docFiles(), ...['CONTRIBUTING.md', 'BENCHMARKS.md'].filter((f) => existsSync(join(ROOT, f)))];
const examples = files.flatMap((f) => examplesOf(f));

describe('docs examples', () => {
  test('the blocks are found, and each is code to run, a browser example, a shell session, or not code', () => {
    expect(files).toContain('docs/models.md');
    expect(examples.filter(inNode).length).toBeGreaterThan(15);
    expect(examples.map(fenceProblem).filter(Boolean)).toEqual([]);
  });

  // file by file, in one folder; the exports of fedmix, fedmix/node and fedmix/experiments
  testExamples('docs', examples, () => new Set([...Object.keys(fedmix), ...Object.keys(fedmixNode), ...Object.keys(fedmixExperiments)]));
});
