/**
 * The documentation's examples, run as a user's programs (README.md by
 * test/readme-examples.test.ts; docs/, CONTRIBUTING.md and BENCHMARKS.md by
 * test/docs-examples.test.ts): each ```ts or ```js block becomes an ES module
 * (TypeScript's types stripped by its transpiler) in a scratch project whose
 * node_modules/fedmix links to this repository, so `import ... from 'fedmix'`
 * and 'fedmix/node' resolve through package.json's exports to the built dist/
 * (`npx tsup` first), and runs in its own Node process. A failure names the
 * block's file and line.
 *
 * Around a block, HTML comments (not rendered) hold what the prose leaves to
 * the reader:
 *   <!-- setup ... -->  right before it: the data it speaks of (X, labels,
 *                       clients, ...), run first;
 *   <!-- check ... -->  right after it: what its comments claim, asserted
 *                       (node:assert/strict's `assert` is in scope).
 * Every example runs after `await init()`, as the first one says to do once.
 * Words after the language on the fence:
 *   browser   (```ts browser, ```js browser) needs a page or a Web Worker: it
 *             runs in headless Chromium instead, inline in a page that imports
 *             dist/browser.js;
 *   run       (```sh run) a shell session a reader types: run by bash in the
 *             scratch project, with `npx fedmix` installed there as npm would
 *             (its setup and check comments are shell too). Other shell blocks
 *             are commands to read, not run;
 * Blocks in other languages (html, sh, text, json) are not programs. The
 * blocks of one file run in the order they are written, in one folder: a
 * file one block writes is there for the next.
 *
 * Each example also imports every fedmix export it uses (no reliance on the
 * setup's imports): checked too, without running anything.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launchChromium, originOf, startStaticServer, stopStaticServer, watchProblems } from './browser.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** A slow example is made smaller in the docs, not given more time. */
export const EXAMPLE_TIMEOUT_MS = 60_000;

export interface Example {
  /** the file, relative to the repository (README.md, docs/models.md, ...) */
  file: string;
  /** line of the opening fence (1-based) */
  line: number;
  lang: string;
  /** words after the language on the fence (`browser`, `run`) */
  tags: string[];
  code: string;
  setup: string;
  check: string;
}

export const RUNNABLE = new Set(['ts', 'js']);
export const SHELL = new Set(['sh', 'bash']);
const OTHER = new Set(['html', 'text', 'json', '']);

/** Every fenced block of a markdown text, with the setup and check comments beside it. */
export function examplesOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): Example[] {
  const lines = text.split('\n');
  const out: Example[] = [];
  let pendingSetup: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const comment = /^<!-- (setup|check)\s*$/.exec(line);
    if (comment) {
      const end = lines.indexOf('-->', i);
      if (end < 0) throw new Error(`${file}:${i + 1}: a ${comment[1]} comment without its closing -->`);
      const body = lines.slice(i + 1, end).join('\n');
      if (comment[1] === 'setup') pendingSetup = body;
      else {
        const last = out[out.length - 1];
        if (!last || last.check) throw new Error(`${file}:${i + 1}: a check comment that follows no example`);
        last.check = body;
      }
      i = end;
      continue;
    }
    const fence = /^```(\S*)(.*)$/.exec(line);
    if (fence) {
      const end = lines.indexOf('```', i + 1);
      if (end < 0) throw new Error(`${file}:${i + 1}: a code block without its closing fence`);
      out.push({ file, line: i + 1, lang: fence[1]!, tags: fence[2]!.trim().split(/\s+/).filter(Boolean), code: lines.slice(i + 1, end).join('\n'), setup: pendingSetup ?? '', check: '' });
      pendingSetup = undefined;
      i = end;
      continue;
    }
    // a setup belongs to the block right after it (blank lines between are fine)
    if (line.trim() !== '' && pendingSetup !== undefined) throw new Error(`${file}:${i + 1}: a setup comment not followed by an example`);
  }
  return out;
}

export const where = (e: Example) => `${e.file}:${e.line}`;
/** the part of issue 24 a block waits for, if any */
export const inNode = (e: Example) => RUNNABLE.has(e.lang) && !e.tags.includes('browser');
export const inBrowser = (e: Example) => RUNNABLE.has(e.lang) && e.tags.includes('browser');
export const inShell = (e: Example) => SHELL.has(e.lang) && e.tags.includes('run');

/** What is wrong with a block's language and fence words, or undefined. */
export function fenceProblem(e: Example): string | undefined {
  const known = RUNNABLE.has(e.lang) || SHELL.has(e.lang) || OTHER.has(e.lang);
  if (!known) return `${where(e)}: \`\`\`${e.lang} is neither code to run nor a known language`;
  const allowed = (t: string) =>
    (t === 'browser' && RUNNABLE.has(e.lang)) || (t === 'run' && SHELL.has(e.lang));
  const bad = e.tags.filter((t) => !allowed(t));
  return bad.length ? `${where(e)}: fence words ${bad.join(' ')}` : undefined;
}

/** The asserts the checks use, for pages (node:assert is Node's). */
const BROWSER_ASSERT = `const assert = {
  ok(v, m) { if (!v) throw new Error(m ?? 'assert.ok failed'); },
  equal(a, b) { if (!Object.is(a, b)) throw new Error(\`expected \${String(b)}, got \${String(a)}\`); },
  deepEqual(a, b) { if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(\`expected \${JSON.stringify(b)}, got \${JSON.stringify(a)}\`); },
};`;

/**
 * One module from the setup, the example and the check: the named imports of
 * all three merged (one statement per module; the same name imported twice is
 * one binding), `assert` added, and `await init()` first unless the example
 * calls init itself. In a page, the outcome goes to globalThis.readmeExample.
 */
export function program(e: Example, at: 'node' | 'browser'): string {
  const named = new Map<string, Set<string>>();
  const strip = (code: string) =>
    code.replace(/^import\s*(type\s+)?\{([^}]*)\}\s*from\s*'([^']+)';?[^\S\n]*$/gm, (_m, typeOnly: string | undefined, names: string, from: string) => {
      if (typeOnly) return '';
      const set = named.get(from) ?? new Set<string>();
      for (const n of names.split(',').map((s) => s.trim()).filter((s) => s && !s.startsWith('type '))) set.add(n);
      named.set(from, set);
      return '';
    });
  const selfInit = /\binit\(/.test(e.code);
  const body = [strip(e.setup), `// ${where(e)}`, strip(e.code), strip(e.check)].join('\n');
  const imports = [...named].map(([from, names]) => `import { ${[...names].join(', ')} } from '${from}';`);
  if (at === 'node') {
    return ["import assert from 'node:assert/strict';", "import { init as initFedmix } from 'fedmix';", ...imports, selfInit ? '' : 'await initFedmix();', body].join('\n');
  }
  return [
    "import { init as initFedmix } from 'fedmix';",
    ...imports,
    BROWSER_ASSERT,
    'try {',
    selfInit ? '' : 'await initFedmix();',
    body,
    "globalThis.readmeExample = 'ok';",
    '} catch (e) {',
    '  globalThis.readmeExample = String((e && e.stack) || e);',
    '}',
  ].join('\n');
}

/**
 * A scratch project where fedmix is installed as npm installs it: the package
 * (its package.json exports point at dist/), its peer Arrow beside it, and the
 * `fedmix` command in node_modules/.bin.
 */
export function scratchProject(name: string): string {
  const app = mkdtempSync(join(tmpdir(), `fedmix-${name}-`));
  mkdirSync(join(app, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(app, 'node_modules', 'fedmix'));
  symlinkSync(join(ROOT, 'node_modules', 'apache-arrow'), join(app, 'node_modules', 'apache-arrow'));
  symlinkSync(join('..', 'fedmix', 'dist', 'cli.cjs'), join(app, 'node_modules', '.bin', 'fedmix'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `${name}-examples`, private: true, type: 'module' }));
  return app;
}

export function removeProject(app: string): void {
  if (app) rmSync(app, { recursive: true, force: true });
}

/** TypeScript to the JavaScript a runtime takes (types stripped), or an error naming the block. */
export function toJs(source: string, at: string): string {
  const out = ts.transpileModule(source, {
    fileName: `${at.replace(/\W/g, '-')}.ts`,
    reportDiagnostics: true,
    // imports kept as written: an example's unused import still has to resolve, as a user's would
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: true },
  });
  const problems = (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  if (problems.length > 0) throw new Error(`${at} does not parse: ${problems.join('; ')}`);
  return out.outputText;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnIn(app: string, command: string, args: string[]): Promise<Ran> {
  return new Promise((done) => {
    // the project's own commands first, as `npx` and npm scripts find them
    const env = { ...process.env, PATH: `${join(app, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` };
    execFile(command, args, { cwd: app, env, timeout: EXAMPLE_TIMEOUT_MS, maxBuffer: 16 << 20, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr: error && error.killed ? `${stderr}\nkilled after ${EXAMPLE_TIMEOUT_MS} ms` : stderr });
    });
  });
}

/** Runs a Node example or a shell session in the scratch project; throws naming the block on failure. */
export async function runExample(app: string, e: Example): Promise<void> {
  const at = where(e);
  const stem = `example-${e.file.replace(/\W/g, '-')}-${e.line}`;
  let r: Ran;
  if (inShell(e)) {
    const file = join(app, `${stem}.sh`);
    // the whole session runs, its background jobs waited for; any failing command fails it
    writeFileSync(file, ['set -euo pipefail', e.setup, `# ${at}`, e.code, e.check].join('\n'));
    r = await spawnIn(app, 'bash', [file]);
  } else {
    const file = join(app, `${stem}.mjs`);
    writeFileSync(file, toJs(program(e, 'node'), at));
    r = await spawnIn(app, process.execPath, [file]);
  }
  if (r.code !== 0) throw new Error(`${at} failed (exit ${r.code}):\n${r.stderr.slice(-4000)}`);
}

/**
 * The fedmix exports an example calls (`Name.x`, `Name(`, `new Name`) that are
 * missing from its own import lines.
 */
export function unimported(e: Example, exported: ReadonlySet<string>): string[] {
  // fedmix, fedmix/node, fedmix/experiments and the entries by feature (fedmix/core, fedmix/fedavg, ...)
  const entry = /from '(?:fedmix(?:\/[a-z-]+)?|\/fedmix\/dist\/browser\.js)'/;
  const imported = new Set<string>();
  for (const m of e.code.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'(?:fedmix(?:\/[a-z-]+)?|\/fedmix\/dist\/browser\.js)'/g)) {
    for (const part of m[1]!.split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim();
      if (name) imported.add(name);
    }
  }
  if (!entry.test(e.code)) return [];
  const code = e.code.split('\n').filter((l) => !l.trim().startsWith('//') && !l.trim().startsWith('import')).join('\n').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').replace(/'[^'\n]*'|"[^"\n]*"|`[^`]*`/g, "''");
  const declared = new Set([...code.matchAll(/\b(?:const|let|var|function|class)\s+\{?\s*([A-Za-z_$][\w$]*)/g)].map((m) => m[1]!));
  const used = [...code.matchAll(/(?<![.\w$])([A-Za-z_$][\w$]*)\s*(?=[.(])|\bnew\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1] ?? m[2]!);
  return [...new Set(used.filter((n) => exported.has(n) && !imported.has(n) && !declared.has(n)))];
}

/**
 * A page or Web Worker example in headless Chromium, the module inline in a
 * page: 'fedmix' and the docs' '/fedmix/dist/browser.js' map to the built
 * dist/browser.js, '/assets/' serves dist/ too. Throws naming the block.
 */
export async function runInChromium(app: string, e: Example): Promise<void> {
  const at = where(e);
  const site = join(app, 'site');
  mkdirSync(site, { recursive: true });
  for (const link of ['dist', 'assets']) if (!existsSync(join(site, link))) symlinkSync(join(ROOT, 'dist'), join(site, link));
  const imports = { fedmix: '/dist/browser.js', '/fedmix/dist/browser.js': '/dist/browser.js' };
  const page = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><script type="importmap">${JSON.stringify({ imports })}</script></head><body><script type="module">\n${toJs(program(e, 'browser'), at)}\n</script></body></html>`;
  const requested: string[] = [];
  const problems: string[] = [];
  const server = await startStaticServer(page, requested, site);
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    watchProblems(tab, problems);
    await tab.goto(`${originOf(server)}/`);
    await tab.waitForFunction(() => (globalThis as { readmeExample?: unknown }).readmeExample !== undefined, undefined, { timeout: EXAMPLE_TIMEOUT_MS });
    const outcome = await tab.evaluate(() => (globalThis as unknown as { readmeExample: string }).readmeExample);
    if (outcome !== 'ok') throw new Error(`${at} in Chromium: ${outcome}`);
    if (problems.length) throw new Error(`${at}: errors in the page or its workers:\n${problems.join('\n')}`);
  } finally {
    await browser.close();
    await stopStaticServer(server);
  }
}

/**
 * The tests of one set of documents' examples (`name` names its scratch
 * project): the Node examples and shell sessions run in the order they are
 * written, in one folder (a walkthrough's steps build on each other), the
 * browser examples in Chromium, and every runnable block imports the exports
 * in `exported` that it uses.
 */
export function testExamples(name: string, examples: Example[], exported: () => ReadonlySet<string>): void {
  const ordered = examples.filter((e) => inNode(e) || inShell(e));
  let app = '';
  beforeAll(() => {
    app = scratchProject(name);
  });
  afterAll(() => removeProject(app));

  test.each(ordered.map((e) => [where(e), e] as const))('%s runs', async (_at, e) => {
    await runExample(app, e);
  }, EXAMPLE_TIMEOUT_MS + 10_000);

  test.each(examples.filter(inBrowser).map((e) => [where(e), e] as const))('%s runs in Chromium', async (_at, e) => {
    await runInChromium(app, e);
  }, EXAMPLE_TIMEOUT_MS + 30_000);

  test.each(examples.filter((e) => RUNNABLE.has(e.lang)).map((e) => [where(e), e] as const))('%s imports what it uses', (_at, e) => {
    expect(unimported(e, exported())).toEqual([]);
  });
}
