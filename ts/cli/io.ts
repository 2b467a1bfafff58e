/**
 * Where the CLI's output goes. stdout carries results: the table, or the JSON
 * alone with `--json -` (the table then goes to stderr, so that the JSON can
 * be piped). stderr carries progress and notes, which `--quiet` silences;
 * warnings and errors are always written.
 */
export const output = { quiet: false, jsonToStdout: false };

/** A line of the results: stdout, or stderr while stdout carries the JSON. */
export function result(text: string): void {
  if (!output.jsonToStdout) process.stdout.write(text + '\n');
  else if (!output.quiet) process.stderr.write(text + '\n');
}

/** Progress and notes on stderr, unless --quiet. */
export function note(text: string): void {
  if (!output.quiet) process.stderr.write(text + '\n');
}
