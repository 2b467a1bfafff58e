/**
 * What a user of the built package downloads (byte counts of dist/, not
 * timings): the WebAssembly builds as separate files, gzipped; the library's
 * own JavaScript minified, without Arrow and the WASM; and where the base64
 * builds are: only in fedmix/inline, never in the graph of dist/index.js or
 * of the worker modules.
 *
 * Needs `bash scripts/setup.sh` first (it builds dist/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions } from 'esbuild';
import { describe, expect, test } from 'vitest';
import { FEATURES } from '../ts/wasm/modules.js';
import { DIST, moduleGraph } from './support/dist-graph.js';

const KB = 1024;

/**
 * Ceilings, each about 5% above what the build measures (README, "Loading the
 * WebAssembly", has the numbers, what they are made of and why they are above
 * the bars of 120 KB and 150 KB), so that growth is a decision, not an
 * accident.
 */
const LIMITS = {
  /**
   * The core module of each build (fedmix-simd.wasm, fedmix-scalar.wasm: what every program
   * loads). One module of everything was 272.4 KB (SIMD) and 251.1 KB (scalar); split into a
   * core and feature modules (issue 15 item 2: the bar is 120 KB for the SIMD build), the core
   * measured 94.2 KB and 87.8 KB; with issue 23's checks of saved mixtures (gmm/check.rs,
   * Gmm::from_saved) 100.1 KB and 94.0 KB.
   */
  simdGzip: 105 * KB,
  scalarGzip: 99 * KB,
  /** each feature module, either build (the largest, dem, measures 93.0 KB SIMD) */
  featureGzip: 98 * KB,
  /**
   * The library's own JavaScript that a program takes, minified, Arrow and the WASM not counted: what a
   * user's bundler keeps of dist/ (one file per source module, "sideEffects": false) for the imports of
   * the program. The issue's bar (item 2) is 150 KB. Every program of one model or one federated
   * algorithm met it until issue 24 (the packages fedmix bundles, valibot and for communities graphology,
   * counted in). Issue 24 took FedDistr from 149.9 KB to 161.4 KB (the generated ABI tables +5.9 KB net:
   * the export placement map and a writer per option struct; the round loop's stages and hooks +3 KB;
   * valibot +1 KB), a regression partly won back: one generic writer reading a field table per struct, the
   * placement as one string of names per feature module, no copy of modules.json and the constants' names
   * read from the core's table (the ABI tables now cost no more than the hand-written ones before them),
   * and one valibot object schema for options and messages: FedDistr 161.4 -> 155.0 KB. The option
   * declarations of every algorithm and model, and each server's state save and restore (the checkpoint's
   * schemas kept out of programs that never resume: ts/federated/runtime/resume-point.ts), then took it to
   * 158.6 KB (valibot +4.5 KB as the declarations use more of its schemas, the declarations and the
   * round loop's resume): raised to 162 KB, about 2% over, a regression still to win back. What stays above
   * the bar is the round loop's stages, hooks and resume (+4.6 KB) and the option declarations. Issue 25's
   * run identity (the run's id in every envelope and the checks of it), the missed-rounds quorum and the
   * round records' new fields took FedDistr to 162.4 KB: raised to 166 KB. Issue 26's privacy ledger in
   * the round loop (the RDP accountant and the run's ledger, +8 KB in every federated program, and the
   * releases' RDP report in FedDistr) took it from 163.8 to 172.4 KB. Issue 26's secure aggregation in
   * the round loop and the client host (the four-stage round, SecAgg+'s state machines, keys, Shamir,
   * fixed point) and the clients' privacy ledgers took every federated program up by 38-51 KB (a device
   * joining over MQTT 119.6 -> 157.2 KB, FedDistr 180.0 -> 223.2 KB) although a run without
   * secureAggregation never calls it: raised to 228 KB, a regression to win back by loading the secure
   * round only when a policy asks for it (a dynamic import, which this measure must then count apart).
   * Session 5's consistency check against a server lying about dropouts (signatures of the survivor set,
   * +10 KB in every federated program) took FedDistr from 223 to 233.0 KB: raised to 238 KB, the same
   * regression to win back with the same dynamic import.
   */
  program: 238 * KB,
  /**
   * The same for each paper's whole experiment (every method and baseline of the paper's tables), which
   * is above the bar: ceilings about 2% over what the build measures. Before issue 24: FedGenGMM 150.4 KB;
   * communities 278.4 KB, 90 KB of it graphology; FedDistr 183.2 KB, 195.4 KB with issue 23's covariance
   * shrinkage and checks; trainCommunities (the community step scored on labelled outliers) 149.5 KB.
   * Issue 24's registry, round hooks and generated ABI tables took them to 165.8, 299.0, 206.9 and 160.8 KB;
   * the compact ABI tables (as the program bar says) to 159.2, 292.4, 200.6 and 154.7 KB; every option
   * declaration and the servers' state save and restore to 165.3, 299.7, 205.4 and 160.8 KB; issue 25's run
   * identity, quorum and round records to 168.9, 305.1 and 210.8 KB (FedGenGMM and communities at their
   * ceilings, FedDistr raised to 215 KB) and trainCommunities to 166.2 KB (raised to 170 KB). Issue 26's
   * privacy ledger in the round loop (+8 KB, as the programs') took them to 178.3, 318.5, 224.2 and
   * 178.9 KB; secure aggregation and the clients' ledgers (as the programs') to 231.3, 371.0, 276.7 and
   * 231.4 KB: raised to about 2% over. Session 5's consistency check (as the programs') took them to
   * 241.2, 380.9, 286.6 and 241.3 KB: raised to about 2% over.
   */
  experiments: { runFedGenGMMExperiment: 246 * KB, runCommunityExperiment: 389 * KB, runFedDistrExperiment: 292 * KB, trainCommunities: 246 * KB },
  /**
   * All of dist/index.js, minified: 518.5 KB measured (issue 24 moved the papers' experiments to
   * fedmix/experiments, -60 KB, and added the registry with each algorithm's CLI options and saved forms,
   * the round hooks and the option declarations: 527.2 KB; the compact ABI tables -8.7 KB), of which
   * graphology is 90 KB, papaparse 22 KB and valibot 5 KB; every algorithm's and model's option
   * declarations, the servers' state save and restore and the run checkpoints then took it to 535.8 KB.
   * Raised over the sessions from 425 KB to 547 KB as the algorithms, Arrow interop, FedmixWorker, strict
   * options, the hierarchical server step and checkpoints landed; no program takes all of it. Issue 25
   * (the saved-model artifact and loadModel, TLS, broker limits, reconnects and presence, run identity,
   * robust FedAvg) and the privacy accountant took it to 555.5 KB: raised to 567 KB. Issue 26 (secure
   * aggregation: SecAgg+'s state machines, keys, Shamir, fixed point, secureSum; the run's privacy ledger,
   * DP-FedAvg, clients' budgets, Skellam noise) took it to 629.7 KB: raised to 643 KB.
   */
  library: 643 * KB,
};

/**
 * Programs, each by the names it imports from fedmix (or fedmix/experiments): a fit of one model, each
 * federated algorithm (with the transports a page or a device uses), and the papers' experiments.
 */
const PROGRAMS: Record<string, string[]> = {
  'a GaussianMixture': ['init', 'GaussianMixture'],
  'k-means, PCA and a scaler': ['init', 'KMeans', 'PCA', 'StandardScaler'],
  'FedGenGMM and distributed EM': ['init', 'fedGenGMM', 'distributedEM'],
  'FedGenGMM over Web Workers': ['init', 'fedGenGMM', 'WebWorkerTransport'],
  'a device joining over MQTT': ['init', 'join', 'FedGenGMMClient', 'DemClient'],
  'a server over MQTT': ['init', 'MqttTransport', 'runFederation', 'FedGenGMMServer'],
  FedGEM: ['init', 'fedGEM'],
  'the MDM fit': ['init', 'fitMdm', 'selectMdm'],
  'FedAvg, FedProx and SCAFFOLD': ['init', 'fedAvg', 'Autoencoder', 'MLPClassifier'],
  // community anomaly detection's step, trainCommunities (scored on labelled outliers: the paper's evaluation), is
  // in fedmix/experiments now and has its ceiling among the experiments'; its detectors are the FedAvg program's
  FedDistr: ['init', 'fedDistr'],
};


/** The start of every module, "\0asm" and version 1, as base64: what an embedded build begins with. */
const WASM_BASE64 = 'AGFzbQEAAAA';

const count = (code: string, s: string) => code.split(s).length - 1;

describe('sizes', () => {
  test('the WebAssembly modules, gzipped', () => {
    const files: [string, number][] = [
      ['fedmix-simd.wasm', LIMITS.simdGzip],
      ['fedmix-scalar.wasm', LIMITS.scalarGzip],
      ...FEATURES.flatMap((f) => [[`fedmix-simd-${f}.wasm`, LIMITS.featureGzip], [`fedmix-scalar-${f}.wasm`, LIMITS.featureGzip]] as [string, number][]),
    ];
    for (const [file, limit] of files) {
      const bytes = readFileSync(join(DIST, file));
      const gz = gzipSync(bytes, { level: 9 }).length;
      console.log(`${file}: ${(bytes.length / KB).toFixed(1)} KB, gzip -9 ${(gz / KB).toFixed(1)} KB (ceiling ${limit / KB} KB)`);
      expect(gz, file).toBeLessThanOrEqual(limit);
      expect(bytes.subarray(0, 4)).toEqual(Buffer.from('\0asm', 'latin1'));
    }
  });

  test("the library's own JavaScript a program takes, minified (no Arrow, no WASM)", async () => {
    for (const [program, names] of Object.entries(PROGRAMS)) {
      const bytes = await programBytes(names);
      console.log(`${program}: ${(bytes / KB).toFixed(1)} KB (bar ${LIMITS.program / KB} KB)`);
      expect(bytes, program).toBeLessThanOrEqual(LIMITS.program);
    }
    for (const [name, limit] of Object.entries(LIMITS.experiments)) {
      const bytes = await programBytes(['init', name]);
      console.log(`${name}: ${(bytes / KB).toFixed(1)} KB (ceiling ${limit / KB} KB)`);
      expect(bytes, name).toBeLessThanOrEqual(limit);
    }
    // a GaussianMixture takes a small part of the library: no module-level code keeps the rest alive
    expect(await programBytes(['init', 'GaussianMixture'])).toBeLessThan(60 * KB);
  });

  test("the library's own JavaScript, all of it, minified", async () => {
    const js = await bundle({ entryPoints: [join(DIST, 'index.js')] });
    expect(count(new TextDecoder().decode(js), WASM_BASE64)).toBe(0);
    console.log(`dist/index.js and every module it imports, minified: ${(js.length / KB).toFixed(1)} KB, gzip ${(gzipSync(js).length / KB).toFixed(1)} KB (ceiling ${LIMITS.library / KB} KB)`);
    expect(js.length).toBeLessThanOrEqual(LIMITS.library);
  });
});

/** dist/ bundled and minified as a user's bundler would, Arrow (the user's) and mqtt (loaded when a broker connection is made) left out. */
async function bundle(input: Pick<BuildOptions, 'entryPoints' | 'stdin'>): Promise<Uint8Array> {
  const out = await build({ ...input, bundle: true, minify: true, format: 'esm', platform: 'browser', external: ['apache-arrow', 'mqtt'], write: false, logLevel: 'silent' });
  return out.outputFiles[0]!.contents;
}

/** The names fedmix/experiments exports (the papers' experiments, apart from the library). */
const EXPERIMENTS = new Set(Object.keys(await import('../ts/experiments/index.js')));

/** The bytes of a program that imports `names` from fedmix (those of the experiments from fedmix/experiments) and uses them all. */
async function programBytes(names: string[]): Promise<number> {
  const from = (entry: string, of: string[]) => (of.length ? `export { ${of.join(', ')} } from ${JSON.stringify(join(DIST, entry))};\n` : '');
  const contents = from('index.js', names.filter((n) => !EXPERIMENTS.has(n))) + from('experiments.js', names.filter((n) => EXPERIMENTS.has(n)));
  const js = await bundle({ stdin: { contents, resolveDir: DIST } });
  return js.length;
}

describe('where the builds are', () => {
  test('fedmix (ESM and CommonJS), fedmix/node, fedmix/experiments and the worker modules embed no build', () => {
    for (const entry of ['index.js', 'index.cjs', 'node.js', 'node.cjs', 'experiments.js', 'experiments.cjs', 'worker.js', 'web-worker.js', 'cli.cjs']) {
      const graph = moduleGraph(entry);
      for (const [file, code] of graph) expect(count(code, WASM_BASE64), `${entry}: ${file}`).toBe(0);
    }
    // the entry finds the files beside it, in the form bundlers recognise as assets
    const code = [...moduleGraph('index.js').values()].join('\n');
    for (const b of ['simd', 'scalar']) {
      expect(code).toContain(`new URL("./fedmix-${b}.wasm", import.meta.url)`);
      for (const f of FEATURES) expect(code).toContain(`new URL("./fedmix-${b}-${f}.wasm", import.meta.url)`);
    }
  });

  test('fedmix/inline embeds both builds, every module, byte for byte the shipped files', () => {
    const files = ['simd', 'scalar'].flatMap((b) => [`fedmix-${b}.wasm`, ...FEATURES.map((f) => `fedmix-${b}-${f}.wasm`)]);
    for (const entry of ['inline.js', 'inline.cjs']) {
      const code = [...moduleGraph(entry).values()].join('\n');
      expect(count(code, WASM_BASE64), entry).toBe(files.length);
      for (const file of files) {
        expect(code, `${entry} ${file}`).toContain(`"${readFileSync(join(DIST, file)).toString('base64')}"`);
      }
    }
  });
});
