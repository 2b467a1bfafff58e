/**
 * The docs list what the library has: the algorithms (docs/algorithms.md's
 * table, every `--algorithm a|b|...` list in the docs, a guide per algorithm,
 * each algorithm's folder in CONTRIBUTING.md's layout) and the CLI's commands
 * (docs/command-line.md's table). The tables are generated regions, written by
 * `FEDMIX_WRITE_DOCS=1 npx vitest run test/docs-registry.test.ts`, never by hand.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { commands } from '../ts/cli/main.js';
import { algorithms } from '../ts/federated/registry/index.js';
import { ROOT } from './support/doc-examples.js';

interface Listed {
  name: string;
  summary?: string;
}

/** The registered algorithms (the built-in ones: the test registers none of its own). */
const registered = (): Listed[] => algorithms().map((d) => ({ name: d.name, summary: d.summary }));

/** The guide of each algorithm: docs/algorithms/<name>.md, or its family's. */
const FAMILY: Record<string, string> = { fedprox: 'fedavg', scaffold: 'fedavg' };
const guideOf = (name: string) => `algorithms/${FAMILY[name] ?? name}.md`;
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const titleOf = (file: string) => /^# (.+)$/m.exec(read(file))?.[1] ?? '';

function algorithmTable(): string {
  const rows = registered().map((a) => `| \`${a.name}\` | ${a.summary ?? titleOf(`docs/${guideOf(a.name)}`)} | [${guideOf(a.name).replace(/^algorithms\/|\.md$/g, '')}](${guideOf(a.name)}) |`);
  return ['| name | what it is | guide |', '|---|---|---|', ...rows].join('\n');
}

function commandTable(): string {
  const rows = Object.entries(commands).map(([name, c]) => `| \`fedmix ${name}\` | ${c.summary.replace(/\|/g, '\\|')} |`);
  return ['| command | what it does |', '|---|---|', ...rows].join('\n');
}

/** The text between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->`; with `write`, replaced by it. */
function region(file: string, name: string, write?: string): string {
  const text = read(file);
  const begin = new RegExp(`^<!-- ${name}:begin[^\\n]*-->\\n`, 'm').exec(text);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  if (!begin || end < begin.index) throw new Error(`${file} has no ${name}:begin ... ${name}:end region`);
  const from = begin.index + begin[0].length;
  if (write !== undefined) writeFileSync(join(ROOT, file), text.slice(0, from) + write + '\n' + text.slice(end));
  return text.slice(from, end).replace(/\n$/, '');
}

const WRITE = process.env.FEDMIX_WRITE_DOCS === '1';

/** docs/**\/*.md, README.md and CONTRIBUTING.md */
function docTexts(): [string, string][] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (`${dir}/${e.name}` === 'docs/api' ? [] : walk(`${dir}/${e.name}`)) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
    );
  return [...walk('docs'), 'README.md', 'CONTRIBUTING.md'].filter((f) => existsSync(join(ROOT, f))).map((f) => [f, read(f)]);
}

describe('the docs list what the library has', () => {
  test("docs/algorithms.md's table is the registry's algorithms", () => {
    const table = algorithmTable();
    if (WRITE) region('docs/algorithms.md', 'algorithms', table);
    expect(region('docs/algorithms.md', 'algorithms')).toBe(table);
  });

  test("docs/command-line.md's table is the CLI's commands", () => {
    const table = commandTable();
    if (WRITE) region('docs/command-line.md', 'commands', table);
    expect(region('docs/command-line.md', 'commands')).toBe(table);
  });

  test('every algorithm has its guide, and every guide its algorithm', () => {
    const names = registered().map((a) => a.name);
    expect(names.filter((n) => !existsSync(join(ROOT, 'docs', guideOf(n))))).toEqual([]);
    const guides = readdirSync(join(ROOT, 'docs', 'algorithms')).map((f) => `algorithms/${f}`);
    expect(guides.filter((g) => !names.some((n) => guideOf(n) === g))).toEqual([]);
  });

  test('every list of algorithms in the docs (`--algorithm a|b|c`) names them all', () => {
    const names = registered().map((a) => a.name).sort();
    const lists: string[] = [];
    for (const [file, text] of docTexts()) {
      for (const m of text.matchAll(/--algorithm[ =]([a-z0-9-]+(?:\|[a-z0-9-]+){2,})/g)) {
        const listed = m[1]!.split('|').sort();
        if (JSON.stringify(listed) !== JSON.stringify(names)) lists.push(`${file}: --algorithm ${m[1]} (the library has ${names.join('|')})`);
      }
    }
    expect(lists).toEqual([]);
  });

  test("CONTRIBUTING.md's layout names every algorithm's folder of ts/federated/", () => {
    const layout = read('CONTRIBUTING.md');
    // folders of ts/federated/ that are not an algorithm's
    const shared = new Set(['runtime', 'messages', 'transport', 'registry']);
    const folders = readdirSync(join(ROOT, 'ts', 'federated'), { withFileTypes: true }).filter((e) => e.isDirectory() && !shared.has(e.name)).map((e) => e.name);
    expect(folders.length).toBeGreaterThan(0);
    expect(folders.filter((f) => !new RegExp(`^\\s+${f}/\\s`, 'm').test(layout))).toEqual([]);
    // and every algorithm lives in one of them (fedprox and scaffold in fedavg/)
    expect(registered().map((a) => FAMILY[a.name] ?? a.name).filter((f) => !folders.includes(f))).toEqual([]);
  });
});
