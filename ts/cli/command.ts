/**
 * What a `fedmix` command is: its summary and options (args.ts), and what it
 * runs. The CLI's table (main.ts) holds the commands that are not an
 * experiment (server, client) and the experiments' commands, which each
 * experiment's folder declares (ts/experiments/<algorithm>/command.ts) and
 * ts/experiments/commands.ts lists.
 */
import type { OptionSpec, Options } from './args.js';
import type { CommandResult } from './io.js';

export interface Command {
  summary: string;
  options: Record<string, OptionSpec>;
  /** run before the options are parsed (and before --help): `fedmix server` and `client` import their --algorithm-module modules here */
  prepare?(argv: string[]): Promise<void>;
  run(o: Options): Promise<CommandResult>;
}

/** A command of an experiment, with its name on the command line: one word, or a group's two (`fedmix <group> <command>`). */
export interface NamedCommand extends Command {
  name: string;
}
