/**
 * Options declared once, as valibot schemas, and checked once, at the public
 * edge. A declaration (defineOptions) names every option with its schema
 * (atoms.ts); its check() reads the caller's object under guard (readOptions:
 * getters and Proxies that throw, unknown keys), checks the plain values it
 * read against the schema, fills in the defaults and returns them frozen: the
 * resolved options. Internal constructors and the roles the runtime calls
 * take resolved options and check nothing again; a public constructor handed
 * what check() returned (isResolved) takes it as it is.
 *
 * A failed check is an InvalidParameterError in the words every option's
 * check has used: "<name> must be <what it needs>, got <what it got>"
 * (issueMessage turns a valibot issue into that). A rule across options
 * (kMax at least kMin, a model within its size cap) is the declaration's
 * `refine`, which throws the typed error itself.
 */
import * as v from 'valibot';
import { formatValue, InvalidParameterError } from '../errors.js';
import { readOptions } from '../validate.js';

/** The schema of every option, by name. */
export type OptionEntries = Record<string, v.GenericSchema<unknown, unknown>>;

/** The options a schema's entries give: a value for each option that has a default, the others as given or absent. */
export type EntriesOutput<E extends OptionEntries> = v.InferOutput<v.ObjectSchema<E, undefined>>;

export interface OptionsDeclaration<E extends OptionEntries, R extends object> {
  /** every option's schema, by name (to extend: `{ ...decl.entries, more }`) */
  readonly entries: E;
  /** the option names, in the order they are checked */
  readonly keys: readonly (keyof E & string)[];
  /** the valibot schema of the options object (entries, then refine): what check() runs on the values it read */
  readonly schema: v.GenericSchema<unknown, R>;
  /**
   * `given` read under guard and checked (undefined gives every default):
   * the resolved options, frozen. An InvalidParameterError names a bad
   * option; unknown ones are named with `name` ("options.server").
   */
  check(given: unknown, name?: string): Readonly<R>;
  /** Whether `value` is what this declaration's check() (or trust()) returned. */
  isResolved(value: unknown): value is Readonly<R>;
  /**
   * Options the library itself built from resolved ones, each value already
   * of its schema's kind (the compiler checks the type): marked resolved
   * without checking again. Internal only: a caller's values go through check().
   */
  trust(resolved: R): Readonly<R>;
}

/**
 * Declares the options of one public call: `entries` name every option of
 * the interface T (the compiler says when one is missing or extra, as the
 * key lists of readOptions did) with its schema; `refine` checks rules
 * across options and may add what the resolved form carries.
 */
export function defineOptions<T extends object>() {
  return <const E extends { [K in keyof Required<T> & string]: v.GenericSchema<unknown, unknown> }, R extends object = EntriesOutput<E>>(
    entries: E & Record<Exclude<keyof E, keyof T>, never>,
    refine?: (o: EntriesOutput<E>) => R,
  ): OptionsDeclaration<E, R> => declare(entries, refine);
}

function declare<E extends OptionEntries, R extends object>(entries: E, refine?: (o: EntriesOutput<E>) => R): OptionsDeclaration<E, R> {
  const keys = Object.keys(entries) as (keyof E & string)[];
  const object = v.strictObject(entries);
  const schema = (refine ? v.pipe(object, v.transform((o) => refine(withoutUndefined(o) as EntriesOutput<E>))) : object) as unknown as v.GenericSchema<unknown, R>;
  const resolved = new WeakSet<object>();
  const mark = (o: R): Readonly<R> => {
    const out = Object.freeze(withoutUndefined(o)) as Readonly<R>;
    resolved.add(out);
    return out;
  };
  return {
    entries,
    keys,
    schema,
    check(given, name = 'options') {
      if (given !== null && typeof given === 'object' && resolved.has(given)) return given as Readonly<R>;
      const read = readOptions(given as Record<string, unknown> | undefined, keys as readonly string[], name) as Record<string, unknown>;
      // every option present, undefined when not given: the schema of a required one then says what it needs
      const values: Record<string, unknown> = {};
      for (const key of keys) values[key] = read[key];
      return mark(parseOptions(schema, values));
    },
    isResolved: (value): value is Readonly<R> => value !== null && typeof value === 'object' && resolved.has(value),
    trust: mark,
  };
}

/** `value` checked against `schema`, its first issue an InvalidParameterError (issueMessage); a typed error thrown by a rule passes through. */
export function parseOptions<S extends v.GenericSchema<unknown, unknown>>(schema: S, value: unknown): v.InferOutput<S> {
  const r = v.safeParse(schema, value, { abortEarly: true });
  if (!r.success) throw new InvalidParameterError(issueMessage(r.issues[0]));
  return r.output;
}

/**
 * A valibot issue in the words of fedmix's checks. An atom's message says
 * what the value must be ("must be an integer in [1, 65536]"); the issue's
 * path names the option ("nComponents", "covarianceTypes[1]"), and what it
 * got follows: "nComponents must be an integer in [1, 65536], got 0". An
 * issue without a path (a rule about the whole object) is its message.
 */
export function issueMessage(issue: v.BaseIssue<unknown>): string {
  const name = optionName(issue.path);
  if (name === '') return issue.message;
  return `${name} ${issue.message}, got ${formatValue(issue.input)}`;
}

/** Where an issue is: "seed", "server.nFeatures", "covarianceTypes[0]". */
function optionName(path: v.BaseIssue<unknown>['path']): string {
  let out = '';
  for (const p of path ?? []) {
    const key = p.key;
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** `o` without its undefined entries: an option not given is absent from the resolved options, as it was from the given ones. */
function withoutUndefined<O extends object>(o: O): O {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) if (x !== undefined) out[k] = x;
  return out as O;
}

