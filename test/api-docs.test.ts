/**
 * The API reference (`npm run docs`, TypeDoc over typedoc.json) builds without
 * a warning (treatWarningsAsErrors: a type the public API names but does not
 * export, a broken {@link}, a doubtful comment), documents the package's
 * entries by their import names, and leaves out what is @internal, private or
 * protected. Converted in memory: nothing is rendered.
 */
import { fileURLToPath } from 'node:url';
import { Application, LogLevel, type ProjectReflection, type Reflection } from 'typedoc';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function names(r: Reflection, out = new Set<string>()): Set<string> {
  out.add(r.name);
  r.traverse((child) => {
    names(child, out);
  });
  return out;
}

test('the API reference builds without warnings, internals left out', async () => {
  const messages: string[] = [];
  const cwd = process.cwd();
  process.chdir(root);
  let project: ProjectReflection | undefined;
  let app: Application;
  try {
    app = await Application.bootstrapWithPlugins({ options: 'typedoc.json', logLevel: LogLevel.Warn });
    // every warning and error, whatever TypeDoc's own counting does with them
    const log = app.logger.log.bind(app.logger);
    app.logger.log = (message, level) => {
      if (level >= LogLevel.Warn) messages.push(String(message));
      log(message, level);
    };
    project = await app.convert();
    if (project) app.validate(project);
  } finally {
    process.chdir(cwd);
  }
  expect(messages).toEqual([]);
  expect(project).toBeDefined();
  expect(app.logger.hasErrors() || app.logger.hasWarnings()).toBe(false);
  // fedmix, fedmix/node, fedmix/inline, fedmix/experiments, and the entries by feature (ts/entries/)
  expect(project!.children?.map((m) => m.name)).toEqual([
    'fedmix',
    'fedmix/communities',
    'fedmix/core',
    'fedmix/dem',
    'fedmix/experiments',
    'fedmix/fedavg',
    'fedmix/feddistr',
    'fedmix/federation',
    'fedmix/fedgem',
    'fedmix/fedgengmm',
    'fedmix/inline',
    'fedmix/mdm',
    'fedmix/networks',
    'fedmix/node',
    'fedmix/svm',
  ]);
  const documented = names(project!);
  // the public API is there, members and all
  for (const name of ['GaussianMixture', 'fitMdm', 'runFederation', 'WorkerTransport', 'scoreSamples', 'nComponents', 'runFedGenGMMExperiment', 'trainCommunities']) expect(documented.has(name), name).toBe(true);
  // the loader's options, the WebAssembly modules among them (init({ features }), options.wasm by module)
  for (const name of ['InitOptions', 'InitInfo', 'features', 'Feature', 'ModuleName', 'BuildSource', 'WasmSources']) expect(documented.has(name), name).toBe(true);
  // internals are not (stripInternal's names, private and protected members)
  for (const name of ['fitResident', 'scoreSamplesResident', 'fromHandle', 'pointers', 'optionNames', 'trainPayload', 'blame']) expect(documented.has(name), name).toBe(false);
}, 180_000);
