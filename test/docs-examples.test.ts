/**
 * Every code block of docs/, CONTRIBUTING.md and BENCHMARKS.md, run as a
 * user's program, as README.md's are (test/readme-examples.test.ts; the
 * conventions are test/support/doc-examples.ts's). A block tagged until-X waits
 * for another part of issue 24 and is skipped until that part lands; then the
 * tag must go.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import * as fedmixNode from '../ts/node.js';
import {
  EXAMPLE_TIMEOUT_MS, examplesOf, fenceProblem, inBrowser, inNode, inShell, PENDING, removeProject, ROOT, RUNNABLE,
  runExample, runInChromium, scratchProject, unimported, waitsFor, where, type Example,
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
const waiting = (e: Example) => {
  const part = waitsFor(e);
  return part !== undefined && !PENDING[part]!.landed();
};

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

  test('a block waits only for a part of issue 24 that has not landed (once it has, remove its until- tag)', () => {
    const landed = examples.filter((e) => waitsFor(e) !== undefined && !waiting(e)).map((e) => `${where(e)}: ${PENDING[waitsFor(e)!]!.what} has landed`);
    expect(landed).toEqual([]);
  });

  // in the order they are written, file by file, in one folder
  test.each(ordered.filter((e) => !waiting(e)).map((e) => [where(e), e] as const))('%s runs', async (_at, e) => {
    await runExample(app, e);
  }, EXAMPLE_TIMEOUT_MS + 10_000);

  test.each(examples.filter((e) => inBrowser(e) && !waiting(e)).map((e) => [where(e), e] as const))('%s runs in Chromium', async (_at, e) => {
    await runInChromium(app, e);
  }, EXAMPLE_TIMEOUT_MS + 30_000);

  // shown as skipped, each saying what it waits for
  test.skip.each(examples.filter((e) => (inNode(e) || inShell(e) || inBrowser(e)) && waiting(e)).map((e) => [where(e), PENDING[waitsFor(e)!]!.what] as const))('%s waits for %s', () => {});

  test.each(examples.filter((e) => RUNNABLE.has(e.lang)).map((e) => [where(e), e] as const))('%s imports what it uses', async (_at, e) => {
    const exported = new Set([...Object.keys(fedmix), ...Object.keys(fedmixNode)]);
    // fedmix/experiments, once it exists (issue 24, item 4)
    const experimentsEntry = join(ROOT, 'ts', 'experiments.ts');
    if (existsSync(experimentsEntry)) for (const name of Object.keys((await import(/* @vite-ignore */ experimentsEntry)) as object)) exported.add(name);
    expect(unimported(e, exported)).toEqual([]);
  });
});
