/**
 * Options declared once (ts/options/): the atoms' messages are the require*
 * checks' own, word for word, for values they take and values they refuse;
 * checking resolves the defaults, once; a role handed resolved options takes
 * them as they are.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FedGenGMMServer, GaussianMixture } from '../ts/index.js';
import { checkClientOptions, checkServerOptions } from '../ts/federated/fedgengmm/options.js';
import { checkServerOptions as checkDemServerOptions } from '../ts/federated/dem/options.js';
import * as atoms from '../ts/options/atoms.js';
import { defineOptions } from '../ts/options/check.js';
import { gaussianMixtureOptions } from '../ts/models/gaussian-mixture.js';
import { refusal } from './helpers.js';
import { LIMITS, requireInteger, requireNumber, requireOneOf, requirePositive, requireSeconds, requireBoolean } from '../ts/validate.js';


const anything = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.double(),
  fc.constantFrom(0, -0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 1e300, NaN, Infinity, -Infinity, 0.5, 65536, 65537, 1e6, 1e6 + 1),
  fc.constantFrom('full', 'diag', 'dense', '', 'bic', true, false, null, undefined, [], {}, [1], 5n),
);

describe('an atom words its refusal as the require* check of the same bound', () => {
  const one = (name: string, schema: unknown) =>
    defineOptions<Record<string, unknown>>()({ [name]: schema } as never) as unknown as { check(o: unknown): Record<string, unknown> };
  const pairs: [string, unknown, (x: unknown) => unknown][] = [
    ['seed', atoms.seed(), (x) => requireInteger('seed', x, 0)],
    ['nComponents', atoms.nComponents(), (x) => requireInteger('nComponents', x, 1, LIMITS.components)],
    ['nInit', atoms.nInit(), (x) => requireInteger('nInit', x, 1, LIMITS.nInit)],
    ['maxIter', atoms.maxIterations(0), (x) => requireInteger('maxIter', x, 0, LIMITS.maxIter)],
    ['rounds', atoms.rounds(1), (x) => requireInteger('rounds', x, 1, LIMITS.rounds)],
    ['tol', atoms.tolerance(), (x) => requireNumber('tol', x, 0)],
    ['learningRate', atoms.learningRate(), (x) => requirePositive('learningRate', x)],
    ['timeout', atoms.seconds(), (x) => requireSeconds('timeout', x)],
    ['warmStart', atoms.flag(), (x) => requireBoolean('warmStart', x)],
    ['covarianceType', atoms.covarianceType(), (x) => requireOneOf('covarianceType', x, ['full', 'tied', 'diag', 'spherical'])],
  ];
  for (const [name, schema, check] of pairs) {
    test(name, () => {
      const decl = one(name, schema);
      fc.assert(
        fc.property(anything, (x) => {
          // undefined is "not given" to a declaration (its atom is required here, so it is refused as the check refuses it)
          expect(refusal(() => decl.check({ [name]: x }))).toBe(refusal(() => check(x)));
        }),
        { numRuns: 300, seed: 1 },
      );
    });
  }
});

test('the seed has one bound, [0, 2^53 - 1], worded as the tests and README state it', () => {
  for (const make of [(seed: number) => new GaussianMixture({ seed }), (seed: number) => checkClientOptions({ seed }), (seed: number) => checkDemServerOptions({ nFeatures: 2, seed })]) {
    expect(() => make(2 ** 53 - 1)).not.toThrow();
    expect(() => make(0)).not.toThrow();
    expect(() => make(-1)).toThrow(/^seed must be an integer >= 0, got -1$/);
    expect(() => make(1.5)).toThrow(/^seed must be an integer >= 0, got 1.5$/);
    expect(() => make(2 ** 53)).toThrow(/^seed must be an integer in \[0, 9007199254740991\], got 9007199254740992$/);
  }
});

test('checking resolves the defaults, frozen; a role handed resolved options takes them as they are', () => {
  const server = checkServerOptions({ nFeatures: 2, nComponents: 3 });
  expect(server).toEqual({
    kMin: 1, covarianceType: 'diag', criterion: 'bic', nInit: 10, tol: 1e-3, maxIter: 100, regCovar: 1e-6,
    serverStep: 'sample', h: 100, nFeatures: 2, nComponents: 3, maxSyntheticRows: 1_000_000,
  });
  expect(Object.isFrozen(server)).toBe(true);
  expect(checkServerOptions(server)).toBe(server);
  expect(checkClientOptions(undefined)).toEqual({ kMin: 1, covarianceType: 'diag', criterion: 'bic', nInit: 1, tol: 1e-3, maxIter: 100, regCovar: 1e-6 });
  expect(gaussianMixtureOptions.check({ nComponents: 2 })).toEqual({ nComponents: 2, covarianceType: 'full', tol: 1e-3, regCovar: 1e-6, maxIter: 100, nInit: 1, initParams: 'kmeans', warmStart: false });
  // a model made from resolved options holds them
  const gm = new GaussianMixture(gaussianMixtureOptions.check({ nComponents: 2, seed: 4 }));
  expect(gm.options.seed).toBe(4);
  // resolved options cannot be changed in place, and a changed copy is checked again
  expect(() => checkServerOptions({ ...server, h: 0 })).toThrow(/^h must be an integer in \[1, 2147483647\], got 0$/);
  expect(() => checkServerOptions({ ...server, nComponent: 2 })).toThrow(/unknown option "nComponent"; did you mean "nComponents"\?/);
});

test('a FedGenGMM server refuses a number of global components no GaussianMixture holds when it is made, not when it aggregates', () => {
  // on main this server was made, and its global fit failed after every client had trained
  expect(() => new FedGenGMMServer({ nFeatures: 1, nComponents: LIMITS.components + 1 })).toThrow(/^nComponents must be an integer in \[1, 65536\], got 65537$/);
  expect(() => new FedGenGMMServer({ nFeatures: 1, nComponents: LIMITS.components }).dispose()).not.toThrow();
});
