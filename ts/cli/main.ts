/**
 * The `fedmix` command. Each command declares its options (args.ts) and runs
 * on the library's public API: the experiments' commands come from their
 * folders (ts/experiments/commands.ts), the federation's are here.
 */
import { writeFileAtomicSync } from '../atomic-write.js';
import { FedmixError } from '../errors.js';
import { optionsHelp, parseOptions, type OptionSpec } from './args.js';
import { delimiterOption, fileError, UnreadableFileError } from './data.js';
import { EXIT_EXCLUDED, output, result } from './io.js';
import { init } from '../wasm/loader.js';
import { EXPERIMENT_COMMANDS } from '../experiments/commands.js';
import { federationOptions, loadAlgorithmModules, runClientCommand, runServerCommand } from './federation.js';
import type { Command } from './command.js';
import { privacyCommand } from './privacy.js';
// the command runs every algorithm: every module's files
import '../wasm/files-all.generated.js';

declare const __FEDMIX_VERSION__: string;

export type { Command };

const jsonOption: OptionSpec = { type: 'string', help: 'also write the results as JSON to this file; - writes them to stdout (and the table to stderr)' };

/** Options every command takes, declared once. */
const globalOptions: Record<string, OptionSpec> = {
  quiet: { type: 'flag', short: 'q', help: 'no progress or notes on stderr (warnings and errors still); with --json -, no table either' },
  help: { type: 'flag', short: 'h', help: "this command's options" },
};

/** A command's options as parsed and as its help lists them: its own, --delimiter where it reads --data, and the global ones. */
export function optionsOf(c: Command): Record<string, OptionSpec> {
  return { ...c.options, ...(c.options.data ? { delimiter: delimiterOption } : {}), ...globalOptions };
}

function commandHelp(name: string, c: Command): string {
  return `usage: fedmix ${name} [options]\n\n${c.summary}\n\noptions:\n${optionsHelp(optionsOf(c))}`;
}

/** The experiments' commands (ts/experiments/commands.ts), then the federation's, then the privacy accountant's: `fedmix help` lists them in this order. */
export const commands: Record<string, Command> = {
  ...Object.fromEntries(EXPERIMENT_COMMANDS.map(({ name, ...c }): [string, Command] => [name, { ...c, options: { ...c.options, json: jsonOption } }])),
  server: {
    summary: "run a federation's server over MQTT (the embedded broker, or --broker URL) and write the model",
    // read when the command runs: the registered algorithms (with --algorithm-module's) bring their options
    get options() {
      return { ...federationOptions('server'), json: jsonOption };
    },
    prepare: loadAlgorithmModules,
    run: runServerCommand,
  },
  client: {
    summary: 'join a federation over MQTT with this machine\'s data, until the server ends the run',
    get options() {
      return { ...federationOptions('client'), json: jsonOption };
    },
    prepare: loadAlgorithmModules,
    run: runClientCommand,
  },
  privacy: { ...privacyCommand, options: { ...privacyCommand.options, json: jsonOption } },
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
    ['help [cmd]', "this text, or a command's options (also: fedmix <command> --help)"],
    ['version', 'the fedmix version'],
  ];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return `usage: fedmix <command> [options]\n\ncommands:\n${rows.map(([name, summary]) => `  ${name.padEnd(width)}${summary}`).join('\n')}`;
}

/** Commands of a group (`mdm` has `mdm fit` and `mdm simulate`). */
const groupOf = (word: string) => Object.keys(commands).filter((n) => n.startsWith(`${word} `));

/** Help on `topic`: a command's options, a group's commands, or (no topic) every command. */
function help(topic: string | undefined): number {
  if (topic === undefined) {
    process.stdout.write(usage() + '\n');
    return 0;
  }
  const c = commands[topic];
  if (c) {
    process.stdout.write(commandHelp(topic, c) + '\n');
    return 0;
  }
  const group = groupOf(topic);
  if (group.length) {
    process.stdout.write(`usage: fedmix ${topic} <${group.map((n) => n.split(' ')[1]).join('|')}> [options]\n\n${group.map((n) => `  ${n}: ${commands[n]!.summary}`).join('\n')}\n`);
    return 0;
  }
  process.stderr.write(`fedmix: unknown command "${topic}"\n\n${usage()}\n`);
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  const [name, rest] = split(argv);
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    return help(split(rest)[0]);
  }
  if (name === 'version' || name === '--version') {
    process.stdout.write(`${typeof __FEDMIX_VERSION__ === 'string' ? __FEDMIX_VERSION__ : 'dev'}\n`);
    return 0;
  }
  const command = commands[name];
  const wantsHelp = rest.includes('--help') || rest.includes('-h');
  if (!command) {
    if (groupOf(name).length && (wantsHelp || rest.length === 0)) return help(name);
    const what = groupOf(name).length ? `${name} ${rest[0] ?? ''}`.trim() : name;
    process.stderr.write(`fedmix: unknown command "${what}"\n\n${usage()}\n`);
    return 2;
  }
  try {
    // before --help too: a module's algorithms bring options the help lists
    await command.prepare?.(rest);
    // --help wins over everything else on the line, as in every conventional CLI
    if (wantsHelp) return help(name);
    const options = parseOptions(rest, optionsOf(command));
    output.quiet = options.quiet === true;
    output.jsonToStdout = options.json === '-';
    await init();
    const { text, json, excluded } = await command.run(options);
    result(text);
    // an exclusion is a warning: on stderr even with --quiet, in the JSON, and in the exit status
    for (const line of excluded ?? []) process.stderr.write(`fedmix ${name}: warning: excluded ${line}\n`);
    const out = excluded !== undefined && json !== null && typeof json === 'object' && !Array.isArray(json) ? { ...json, exclusions: excluded } : json;
    const jsonText = JSON.stringify(out, null, 2) + '\n';
    if (output.jsonToStdout) process.stdout.write(jsonText);
    else if (typeof options.json === 'string') writeFileAtomicSync(options.json, jsonText);
    return excluded !== undefined && excluded.length > 0 ? EXIT_EXCLUDED : 0;
  } catch (e) {
    if (e instanceof FedmixError) {
      process.stderr.write(`fedmix ${name}: ${e.message}\n`);
      return 2;
    }
    // a file that cannot be read or written (missing, a folder, no permission): one line, status 1
    const file = e instanceof UnreadableFileError ? e : fileError(e);
    if (file) {
      process.stderr.write(`fedmix ${name}: ${file.message}\n`);
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
