/**
 * Every code block of docs/, CONTRIBUTING.md and BENCHMARKS.md, run as a
 * user's program, as README.md's are (test/readme-examples.test.ts; the
 * conventions are test/support/doc-examples.ts's).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import * as fedmixNode from '../ts/node.js';
import * as fedmixExperiments from '../ts/experiments/index.js';
import {
  EXAMPLE_TIMEOUT_MS, examplesOf, fenceProblem, inBrowser, inNode, inShell, removeProject, ROOT, RUNNABLE,
  runExample, runInChromium, scratchProject, unimported, where,
} from './support/doc-examples.js';

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
const ordered = examples.filter((e) => inNode(e) || inShell(e));

let app = '';
beforeAll(() => {
  app = scratchProject('docs');
});
afterAll(() => removeProject(app));

describe('docs examples', () => {
  test('the blocks are found, and each is code to run, a browser example, a shell session, or not code', () => {
    expect(files).toContain('docs/models.md');
    expect(examples.filter(inNode).length).toBeGreaterThan(15);
    expect(examples.map(fenceProblem).filter(Boolean)).toEqual([]);
  });

  // in the order they are written, file by file, in one folder
  test.each(ordered.map((e) => [where(e), e] as const))('%s runs', async (_at, e) => {
    await runExample(app, e);
  }, EXAMPLE_TIMEOUT_MS + 10_000);

  test.each(examples.filter(inBrowser).map((e) => [where(e), e] as const))('%s runs in Chromium', async (_at, e) => {
    await runInChromium(app, e);
  }, EXAMPLE_TIMEOUT_MS + 30_000);

  test.each(examples.filter((e) => RUNNABLE.has(e.lang)).map((e) => [where(e), e] as const))('%s imports what it uses', async (_at, e) => {
    const exported = new Set([...Object.keys(fedmix), ...Object.keys(fedmixNode)]);
    // and fedmix/experiments'
    for (const name of Object.keys(fedmixExperiments)) exported.add(name);
    expect(unimported(e, exported)).toEqual([]);
  });
});
