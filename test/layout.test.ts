/**
 * Where an algorithm's code lives (issue 24): its federation in
 * ts/federated/<name>/, its experiment and `fedmix` commands in
 * ts/experiments/<name>/. The CLI's own files and the WASM loader's name no
 * algorithm; lists that must name them (the registry's, the experiments'
 * entry and commands, the public entry, the feature modules) are the only
 * other places.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { commands } from '../ts/cli/main.js';
import { EXPERIMENT_COMMANDS } from '../ts/experiments/commands.js';
import { algorithms } from '../ts/federated/registry/index.js';
import { FEATURES } from '../ts/wasm/modules.js';
import { ROOT } from './support/doc-examples.js';

const NAMES = algorithms().map((d) => d.name);
/** fedprox and scaffold live in fedavg's folders. */
const FOLDER: Record<string, string> = { fedprox: 'fedavg', scaffold: 'fedavg' };

const printer = ts.createPrinter({ removeComments: true });
/** A file's code without its comments (strings and template text stay). */
function code(file: string): string {
  return printer.printFile(ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
}
/** The words of `names` that `text` holds as whole words (letters, digits and _ around them are not), case-insensitively. */
const named = (text: string, names: readonly string[]) => names.filter((n) => new RegExp(`(?<![A-Za-z0-9_])${n}(?![A-Za-z0-9_])`, 'i').test(text));
const tsFiles = (dir: string) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.ts')).map((f) => `${dir}/${f}`);
/** Every .ts file under `dir`, its subfolders included. */
const allTsFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((f) => (statSync(join(ROOT, dir, f)).isDirectory() ? allTsFiles(`${dir}/${f}`) : f.endsWith('.ts') ? [`${dir}/${f}`] : []));

describe("an algorithm's code lives in its folders", () => {
  test('no file of ts/cli/ names an algorithm in its code', () => {
    const found = tsFiles('ts/cli').flatMap((f) => named(code(f), NAMES).map((n) => `${f}: ${n}`));
    expect(found).toEqual([]);
    // and the check sees a name where there is one
    expect(named(code('ts/federated/registry/built-in.ts'), NAMES).sort()).toEqual([...NAMES].sort());
  });

  test("ts/wasm/source.ts names no feature module: the modules' URLs are generated with their list", () => {
    expect(named(code('ts/wasm/source.ts'), FEATURES)).toEqual([]);
    expect(named(code('ts/wasm/abi.generated.ts'), FEATURES).sort()).toEqual([...FEATURES].sort());
  });

  test("each folder of ts/experiments/ is an algorithm's, and its files outside them name none but the lists", () => {
    const folders = readdirSync(join(ROOT, 'ts/experiments'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.length).toBeGreaterThan(0);
    expect(folders.filter((f) => !NAMES.some((n) => (FOLDER[n] ?? n) === f))).toEqual([]);
    const lists = new Set(['ts/experiments/index.ts', 'ts/experiments/commands.ts']);
    expect(tsFiles('ts/experiments').filter((f) => !lists.has(f)).flatMap((f) => named(code(f), NAMES).map((n) => `${f}: ${n}`))).toEqual([]);
  });

  test("the CLI's commands are the experiments' commands, then server, client and privacy", () => {
    expect(Object.keys(commands)).toEqual([...EXPERIMENT_COMMANDS.map((c) => c.name), 'server', 'client', 'privacy']);
    for (const c of EXPERIMENT_COMMANDS) {
      expect(commands[c.name]!.summary, c.name).toBe(c.summary);
      expect(commands[c.name]!.options, c.name).toEqual({ ...c.options, json: expect.objectContaining({ type: 'string' }) });
    }
  });

  test("the library names an algorithm outside its folders only in the lists, and in the places each exception says", () => {
    // the lists: the registry's (built-in.ts), the core's feature modules (modules.ts), the public entry (index.ts);
    // docs/ is the fourth place. ts/experiments/ is the papers' experiments, apart from the library (its own test above).
    // the entries by feature (ts/entries/) are public entries too: one per algorithm, each naming its WASM modules
    const lists = new Set(['ts/federated/registry/built-in.ts', 'ts/wasm/modules.ts', 'ts/index.ts', ...tsFiles('ts/entries')]);
    const exceptions: Record<string, string> = {
      // FedGenGMM's hierarchical server step is in the core's distributed-EM feature module ('dem'), which it loads
      'ts/federated/fedgengmm/descriptor.ts: dem': 'the WASM feature module named dem',
      // GaussianMixture's threads run the sharded E-step and M-step of the same feature module, which each thread loads
      'ts/parallel/shard-task.ts: dem': 'the WASM feature module named dem',
      // ... and the threads' modules register its files, to load it when the calling thread sends none
      'ts/parallel/shard-worker.ts: dem': 'the WASM feature module named dem',
      'ts/parallel/web-shard-worker.ts: dem': 'the WASM feature module named dem',
      // partition.mdm is the MDM paper's scheme for simulating clients from histograms, a public name
      'ts/partition/histograms.ts: mdm': 'partition.mdm',
      'ts/partition/index.ts: mdm': 'partition.mdm',
      // files fedmix wrote before the saved-model artifact name no algorithm: loadModel recognises each by its fields
      ...Object.fromEntries(['communities', 'dem', 'fedavg', 'feddistr', 'fedgem', 'fedgengmm', 'fedprox', 'mdm', 'scaffold'].map((n) => [`ts/federated/registry/model-file.ts: ${n}`, 'version-0 files'])),
      // graph communities (Louvain, fast greedy, modularity): the word, not the algorithm
      'ts/graph/communities.ts: communities': 'graph communities',
      'ts/graph/index.ts: communities': 'graph communities',
      'ts/graph/louvain.ts: communities': 'graph communities',
      'ts/graph/modularity.ts: communities': 'graph communities',
    };
    const found = allTsFiles('ts')
      .filter((f) => !f.startsWith('ts/experiments/') && !f.endsWith('.generated.ts') && !lists.has(f))
      .filter((f) => named(readFileSync(join(ROOT, f), 'utf8'), NAMES).length > 0) // comments removed only where a name is in the text
      .flatMap((f) => named(code(f), NAMES).filter((n) => !f.startsWith(`ts/federated/${FOLDER[n] ?? n}/`)).map((n) => `${f}: ${n}`));
    expect(found.sort()).toEqual(Object.keys(exceptions).sort());
  });

  test('the layers below the federation import nothing from it, the experiments or the CLI', () => {
    const below = ['data', 'models', 'wasm', 'distributions', 'privacy', 'special', 'metrics', 'assignment', 'graph', 'partition', 'options', 'parallel'];
    const upward = below
      .flatMap((d) => allTsFiles(`ts/${d}`))
      .flatMap((f) => [...readFileSync(join(ROOT, f), 'utf8').matchAll(/from '((?:\.\.\/)+(?:federated|experiments|cli)\/[^']*)'/g)].map((m) => `${f} -> ${m[1]}`));
    expect(upward).toEqual([]);
    // and the check sees an upward import where there is one
    expect([..."import { x } from '../federated/robust.js';".matchAll(/from '((?:\.\.\/)+(?:federated|experiments|cli)\/[^']*)'/g)]).toHaveLength(1);
  });
});
