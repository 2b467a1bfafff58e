/**
 * README.md's examples, run as a user's programs: each ```ts or ```js block
 * becomes an ES module (TypeScript's types stripped by its transpiler) in a scratch project
 * whose node_modules/fedmix links to this repository, so `import ... from
 * 'fedmix'` and 'fedmix/node' resolve through package.json's exports to the
 * built dist/ (`npx tsup` first), and runs in its own Node process. A failure
 * names the block's README line.
 *
 * Around a block, HTML comments (not rendered) hold what the prose leaves to
 * the reader:
 *   <!-- setup ... -->  right before it: the data it speaks of (X, labels,
 *                       clients, ...), run first;
 *   <!-- check ... -->  right after it: what its comments claim, asserted
 *                       (node:assert/strict's `assert` is in scope).
 * Every example runs after `await init()`, as the first one says to do once.
 * Blocks in other languages (html, sh, text) are not programs; a block tagged
 * ```ts browser or ```js browser needs a page or a Web Worker: it runs in
 * headless Chromium instead, inline in a page that imports dist/browser.js.
 *
 * Each example also imports every fedmix export it uses (no reliance on the
 * setup's imports): checked here too, without running anything.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import * as fedmixNode from '../ts/node.js';
import { launchChromium, originOf, startStaticServer, stopStaticServer, watchProblems } from './support/browser.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** A slow example is made smaller in README.md, not given more time. */
const EXAMPLE_TIMEOUT_MS = 60_000;

interface Example {
  /** README line of the opening fence (1-based) */
  line: number;
  lang: string;
  /** words after the language on the fence (`browser`) */
  tags: string[];
  code: string;
  setup: string;
  check: string;
}

/** Every fenced block of README.md, with the setup and check comments beside it. */
function readmeExamples(text = README): Example[] {
  const lines = text.split('\n');
  const out: Example[] = [];
  let pendingSetup: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const comment = /^<!-- (setup|check)\s*$/.exec(line);
    if (comment) {
      const end = lines.indexOf('-->', i);
      if (end < 0) throw new Error(`README.md:${i + 1}: a ${comment[1]} comment without its closing -->`);
      const body = lines.slice(i + 1, end).join('\n');
      if (comment[1] === 'setup') pendingSetup = body;
      else {
        const last = out[out.length - 1];
        if (!last || last.check) throw new Error(`README.md:${i + 1}: a check comment that follows no example`);
        last.check = body;
      }
      i = end;
      continue;
    }
    const fence = /^```(\S*)(.*)$/.exec(line);
    if (fence) {
      const end = lines.indexOf('```', i + 1);
      out.push({ line: i + 1, lang: fence[1]!, tags: fence[2]!.trim().split(/\s+/).filter(Boolean), code: lines.slice(i + 1, end).join('\n'), setup: pendingSetup ?? '', check: '' });
      pendingSetup = undefined;
      i = end;
      continue;
    }
    // a setup belongs to the block right after it (blank lines between are fine)
    if (line.trim() !== '' && pendingSetup !== undefined) throw new Error(`README.md:${i + 1}: a setup comment not followed by an example`);
  }
  return out;
}

const RUNNABLE = new Set(['ts', 'js']);
const examples = readmeExamples();
const inNode = examples.filter((e) => RUNNABLE.has(e.lang) && !e.tags.includes('browser'));
const inBrowser = examples.filter((e) => RUNNABLE.has(e.lang) && e.tags.includes('browser'));

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
function program(e: Example, where: 'node' | 'browser'): string {
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
  const body = [strip(e.setup), `// README.md:${e.line}`, strip(e.code), strip(e.check)].join('\n');
  const imports = [...named].map(([from, names]) => `import { ${[...names].join(', ')} } from '${from}';`);
  if (where === 'node') {
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

let app = '';
beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), 'fedmix-readme-'));
  mkdirSync(join(app, 'node_modules'));
  // fedmix as installed (its package.json exports point at dist/), its peer Arrow beside it
  symlinkSync(ROOT, join(app, 'node_modules', 'fedmix'));
  symlinkSync(join(ROOT, 'node_modules', 'apache-arrow'), join(app, 'node_modules', 'apache-arrow'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }));
});
afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

/** TypeScript to the JavaScript a runtime takes (types stripped), or an error naming the block. */
function toJs(source: string, where: string): string {
  const out = ts.transpileModule(source, {
    fileName: `${where.replace(/\W/g, '-')}.ts`,
    reportDiagnostics: true,
    // imports kept as written: an example's unused import still has to resolve, as a user's would
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: true },
  });
  const problems = (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  if (problems.length > 0) throw new Error(`${where} does not parse: ${problems.join('; ')}`);
  return out.outputText;
}

function run(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [file], { cwd: app, timeout: EXAMPLE_TIMEOUT_MS, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr: error && error.killed ? `${stderr}\nkilled after ${EXAMPLE_TIMEOUT_MS} ms` : stderr });
    });
  });
}

describe('README examples', () => {
  test('the blocks are found, and each is code to run, a browser example, or not code', () => {
    expect(inNode.length).toBeGreaterThan(15);
    for (const e of examples) {
      const kind = RUNNABLE.has(e.lang) ? 'code' : ['html', 'sh', 'bash', 'text', 'json', ''].includes(e.lang) ? 'other' : 'unknown';
      expect(kind, `README.md:${e.line}: \`\`\`${e.lang}`).not.toBe('unknown');
      expect(e.tags.filter((t) => t !== 'browser'), `README.md:${e.line}: fence words`).toEqual([]);
    }
  });

  test.each(inNode.map((e) => [`README.md:${e.line}`, e] as const))('%s runs', async (where, e) => {
    const js = toJs(program(e, 'node'), where);
    const file = join(app, `example-${e.line}.mjs`);
    writeFileSync(file, js);
    const r = await run(file);
    if (r.code !== 0) throw new Error(`${where} failed (exit ${r.code}):\n${r.stderr.slice(-4000)}`);
  }, EXAMPLE_TIMEOUT_MS + 10_000);

  // pages and Web Workers: headless Chromium, the module inline in a page; 'fedmix' and the
  // README's '/fedmix/dist/browser.js' map to the built dist/browser.js, '/assets/' serves dist/ too
  test.each(inBrowser.map((e) => [`README.md:${e.line}`, e] as const))('%s runs in Chromium', async (where, e) => {
    const site = join(app, 'site');
    mkdirSync(site, { recursive: true });
    for (const link of ['dist', 'assets']) if (!existsSync(join(site, link))) symlinkSync(join(ROOT, 'dist'), join(site, link));
    const imports = { fedmix: '/dist/browser.js', '/fedmix/dist/browser.js': '/dist/browser.js' };
    const page = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><script type="importmap">${JSON.stringify({ imports })}</script></head><body><script type="module">\n${toJs(program(e, 'browser'), where)}\n</script></body></html>`;
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
      expect(outcome, `${where} in Chromium`).toBe('ok');
      expect(problems, `${where}: errors in the page or its workers`).toEqual([]);
    } finally {
      await browser.close();
      await stopStaticServer(server);
    }
  }, EXAMPLE_TIMEOUT_MS + 30_000);

  // every fedmix export an example calls (`Name.x`, `Name(`, `new Name`) is in its own import lines
  test.each(examples.filter((e) => RUNNABLE.has(e.lang) && /from '(fedmix(\/node)?|\/fedmix\/dist\/browser\.js)'/.test(e.code)).map((e) => [`README.md:${e.line}`, e] as const))('%s imports what it uses', (_where, e) => {
    const exported = new Set([...Object.keys(fedmix), ...Object.keys(fedmixNode)]);
    const imported = new Set<string>();
    for (const m of e.code.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'(?:fedmix(?:\/node)?|\/fedmix\/dist\/browser\.js)'/g)) {
      for (const part of m[1]!.split(',')) {
        const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim();
        if (name) imported.add(name);
      }
    }
    const code = e.code.split('\n').filter((l) => !l.trim().startsWith('//') && !l.trim().startsWith('import')).join('\n').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').replace(/'[^'\n]*'|"[^"\n]*"|`[^`]*`/g, "''");
    const declared = new Set([...code.matchAll(/\b(?:const|let|var|function|class)\s+\{?\s*([A-Za-z_$][\w$]*)/g)].map((m) => m[1]!));
    const used = [...code.matchAll(/(?<![.\w$])([A-Za-z_$][\w$]*)\s*(?=[.(])|\bnew\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1] ?? m[2]!);
    const missing = [...new Set(used.filter((n) => exported.has(n) && !imported.has(n) && !declared.has(n)))];
    expect(missing).toEqual([]);
  });
});
