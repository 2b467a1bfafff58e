/**
 * The `fedmix` command. Each command declares its options (args.ts) and runs
 * on the library's public API.
 */
import { writeFileSync } from 'node:fs';
import { FedmixError } from '../errors.js';
import { optionsHelp, parseOptions, type OptionSpec, type Options } from './args.js';
import { init } from '../wasm/loader.js';
import { demoOptions, runDemoCommand } from './demo.js';
import { experimentOptions, runExperimentCommand } from './experiment.js';
import { mdmFitOptions, mdmSimulateOptions, runMdmFitCommand, runMdmSimulateCommand } from './mdm.js';
import { fedgemOptions, runFedgemCommand } from './fedgem.js';
import { feddistrOptions, runFeddistrCommand } from './feddistr.js';
import { clientOptions, runClientCommand, runServerCommand, serverOptions } from './federation.js';
import { communitiesOptions, runCommunitiesCommand } from './communities.js';

declare const __FEDMIX_VERSION__: string;

interface Command {
  summary: string;
  options: Record<string, OptionSpec>;
  run(o: Options): Promise<{ text: string; json: unknown }>;
}

const jsonOption: OptionSpec = { type: 'string', help: 'also write the results as JSON to this file' };

const commands: Record<string, Command> = {
  demo: {
    summary: 'FedGenGMM and its baselines on the embedded thyroid anomaly dataset',
    options: { ...demoOptions, json: jsonOption },
    run: runDemoCommand,
  },
  experiment: {
    summary: "the FedGenGMM paper's experiment on a CSV file: every method, scores over repeats",
    options: { ...experimentOptions, json: jsonOption },
    run: runExperimentCommand,
  },
  'mdm fit': {
    summary: 'learn a mixture of Dirichlet-multinomials from client histograms (federated, in process)',
    options: { ...mdmFitOptions, json: jsonOption },
    run: runMdmFitCommand,
  },
  'mdm simulate': {
    summary: 'deal a labelled central dataset into simulated clients (MDM, fully IID, conditionally IID)',
    options: { ...mdmSimulateOptions, json: jsonOption },
    run: runMdmSimulateCommand,
  },
  fedgem: {
    summary: 'FedGEM: federated clustering with an unknown number of clusters (CSV or blobs), against a central GMM',
    options: { ...fedgemOptions, json: jsonOption },
    run: runFedgemCommand,
  },
  communities: {
    summary: 'community-based federated anomaly detection (Nardi et al.): association, communities, per-community training, the paper\'s tables (Fashion-MNIST or CSV)',
    options: { ...communitiesOptions, json: jsonOption },
    run: runCommunitiesCommand,
  },
  feddistr: {
    summary: "FedDistr's one round against FedAvg, FedProx, SCAFFOLD and central training (Fashion-MNIST or a CSV with subclasses)",
    options: { ...feddistrOptions, json: jsonOption },
    run: runFeddistrCommand,
  },
  server: {
    summary: "run a federation's server over MQTT (the embedded broker, or --broker URL) and write the model",
    options: { ...serverOptions, json: jsonOption },
    run: runServerCommand,
  },
  client: {
    summary: 'join a federation over MQTT with this machine\'s data, until the server ends the run',
    options: { ...clientOptions, json: jsonOption },
    run: runClientCommand,
  },
};

/** Commands of two words (`fedmix mdm fit`) are looked up by their first two arguments. */
function split(argv: string[]): [string | undefined, string[]] {
  const [a, b, ...rest] = argv;
  if (a !== undefined && b !== undefined && commands[`${a} ${b}`]) return [`${a} ${b}`, rest];
  return [a, argv.slice(1)];
}

function usage(): string {
  const rows: [string, string][] = [
    ...Object.entries(commands).map(([name, c]): [string, string] => [name, c.summary]),
    ['help [cmd]', "this text, or a command's options"],
    ['version', 'the fedmix version'],
  ];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return `usage: fedmix <command> [options]\n\ncommands:\n${rows.map(([name, summary]) => `  ${name.padEnd(width)}${summary}`).join('\n')}`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, rest] = split(argv);
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const [topic] = split(rest);
    const c = topic !== undefined ? commands[topic] : undefined;
    process.stdout.write((c ? `fedmix ${topic}: ${c.summary}\n\noptions:\n${optionsHelp(c.options)}` : usage()) + '\n');
    return 0;
  }
  if (name === 'version' || name === '--version') {
    process.stdout.write(`${typeof __FEDMIX_VERSION__ === 'string' ? __FEDMIX_VERSION__ : 'dev'}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    const what = name === 'mdm' ? `mdm ${rest[0] ?? ''}`.trim() : name;
    process.stderr.write(`fedmix: unknown command "${what}"\n\n${usage()}\n`);
    return 2;
  }
  try {
    const options = parseOptions(rest, command.options);
    await init();
    const { text, json } = await command.run(options);
    process.stdout.write(text + '\n');
    if (typeof options.json === 'string') writeFileSync(options.json, JSON.stringify(json, null, 2) + '\n');
    return 0;
  } catch (e) {
    if (e instanceof FedmixError) {
      process.stderr.write(`fedmix ${name}: ${e.message}\n`);
      return 2;
    }
    // a file that cannot be read (missing, a folder, no permission): said plainly, status 1
    const code = (e as { code?: unknown } | null)?.code;
    if (e instanceof Error && typeof code === 'string' && /^E[A-Z]+$/.test(code) && 'path' in e) {
      process.stderr.write(`fedmix ${name}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

// run when executed as the `fedmix` binary (not when imported by tests)
if (typeof require !== 'undefined' && require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`fedmix: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
