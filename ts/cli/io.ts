/**
 * Where the CLI's output goes. stdout carries results: the table, or the JSON
 * alone with `--json -` (the table then goes to stderr, so that the JSON can
 * be piped). stderr carries progress and notes, which `--quiet` silences;
 * warnings and errors are always written.
 */
import { describeExclusion, type ExcludedClient } from '../federated/runtime/roles.js';

export const output = { quiet: false, jsonToStdout: false };

/**
 * What a command gives back: the text for stdout, the value for --json, and,
 * for a command that runs federations, every client they excluded, one line
 * each naming the run, the client and the reason: written on stderr (even
 * with --quiet), added to the JSON as `exclusions`, and the exit status is
 * EXIT_EXCLUDED when there is any.
 */
export interface CommandResult {
  text: string;
  json: unknown;
  excluded?: readonly string[];
}

/** The exit status of a command that finished, but whose federations excluded clients (README: The command line). */
export const EXIT_EXCLUDED = 3;

/** A line of the results: stdout, or stderr while stdout carries the JSON. */
export function result(text: string): void {
  if (!output.jsonToStdout) process.stdout.write(text + '\n');
  else if (!output.quiet) process.stderr.write(text + '\n');
}

/** A client a run excluded, as the CLI reports it: the run (when the command runs several), the round and the reason (which names the client). */
export function exclusionLine(e: ExcludedClient, run?: string): string {
  return `${run === undefined ? '' : `${run}, `}${describeExclusion(e)}`;
}

/** Progress and notes on stderr, unless --quiet. */
export function note(text: string): void {
  if (!output.quiet) process.stderr.write(text + '\n');
}
