/**
 * Command-line options: each command declares its options once; parsing,
 * validation and the help text all come from that declaration. The words are
 * split by Node's own util.parseArgs (strict: unknown options, missing values
 * and stray arguments are refused), which takes its configuration from the
 * same declarations; commander or cac would have needed a second declaration
 * of every option in their own form, and their typing (int, number, range,
 * choices) is what this file adds anyway.
 */
import { parseArgs } from 'node:util';
import { InvalidParameterError } from '../errors.js';

export type OptionType = 'int' | 'number' | 'string' | 'flag' | 'range';

export interface OptionSpec {
  type: OptionType;
  help: string;
  default?: number | string | boolean | [number, number];
  /** for 'string': the accepted values */
  choices?: readonly string[];
  /** a one-letter alias, -x */
  short?: string;
}

export type Options = Record<string, number | string | boolean | [number, number] | undefined>;

/** "a..b" or "a-b" (inclusive) or a single integer "a". */
function parseRange(name: string, text: string): [number, number] {
  const m = /^(\d+)\s*(?:\.\.|-)\s*(\d+)$/.exec(text) ?? /^(\d+)$/.exec(text);
  if (!m) throw new InvalidParameterError(`--${name} takes a range like 2..10, got "${text}"`);
  const a = Number(m[1]);
  const b = Number(m[2] ?? m[1]);
  if (b < a) throw new InvalidParameterError(`--${name}: the range ${text} is empty`);
  return [a, b];
}

/** util.parseArgs's refusal as the CLI says it (status 2, what to change). */
function usageError(e: unknown, spec: Record<string, OptionSpec>): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_') || !(e instanceof Error)) return e;
  const quoted = /'([^']+)'/.exec(e.message)?.[1] ?? '';
  // parseArgs names an option with an alias as '-q, --quiet': the long name is the one the CLI says
  const option = /--[\w-]+/.exec(quoted)?.[0] ?? quoted.split(' ')[0]!;
  const name = option.replace(/^--?/, '');
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return new InvalidParameterError(`unknown option ${option}; known: ${Object.keys(spec).map((n) => `--${n}`).join(', ')}`);
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return new InvalidParameterError(`unexpected argument "${quoted}"; options look like --name value`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const long = spec[name] ? `--${name}` : option;
    if (/does not take an argument/.test(e.message)) return new InvalidParameterError(`${long} takes no value`);
    if (/ambiguous/.test(e.message)) return new InvalidParameterError(`${long} needs a value; a value starting with a dash is written ${long}=-1`);
    return new InvalidParameterError(`${long} needs a value`);
  }
  return new InvalidParameterError(e.message.split('\n')[0]!);
}

export function parseOptions(argv: string[], spec: Record<string, OptionSpec>): Options {
  const config = Object.fromEntries(
    Object.entries(spec).map(([name, s]) => [name, { type: s.type === 'flag' ? ('boolean' as const) : ('string' as const), ...(s.short ? { short: s.short } : {}) }]),
  );
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: config, strict: true, allowPositionals: false }) as { values: Record<string, string | boolean | undefined> });
  } catch (e) {
    throw usageError(e, spec);
  }
  const out: Options = {};
  for (const [name, s] of Object.entries(spec)) out[name] = s.default;
  for (const [name, value] of Object.entries(values)) {
    const s = spec[name]!;
    if (value === undefined) continue;
    if (typeof value === 'boolean') {
      out[name] = value;
      continue;
    }
    switch (s.type) {
      case 'int': {
        const v = Number(value);
        if (!Number.isInteger(v)) throw new InvalidParameterError(`--${name} takes an integer, got "${value}"`);
        out[name] = v;
        break;
      }
      case 'number': {
        const v = Number(value);
        if (!Number.isFinite(v)) throw new InvalidParameterError(`--${name} takes a number, got "${value}"`);
        out[name] = v;
        break;
      }
      case 'range':
        out[name] = parseRange(name, value);
        break;
      case 'string':
        if (s.choices && !s.choices.includes(value)) {
          throw new InvalidParameterError(`--${name} must be one of ${s.choices.join(', ')}, got "${value}"`);
        }
        out[name] = value;
        break;
    }
  }
  return out;
}

export function optionsHelp(spec: Record<string, OptionSpec>): string {
  return Object.entries(spec)
    .map(([name, s]) => {
      const arg = s.type === 'flag' ? '' : s.type === 'range' ? ' A..B' : s.choices ? ` ${s.choices.join('|')}` : ` ${s.type.toUpperCase()}`;
      const def = s.default === undefined || s.type === 'flag' ? '' : ` (default ${Array.isArray(s.default) ? s.default.join('..') : String(s.default)})`;
      return `  ${s.short ? `-${s.short}, ` : ''}--${name}${arg}\n      ${s.help}${def}`;
    })
    .join('\n');
}
