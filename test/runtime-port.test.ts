/**
 * The federation runtime port changed how the four algorithms exchange
 * messages, not what they compute: each public one-call function gives, at the
 * same seeds, exactly the outputs recorded before the port
 * (test/fixtures/runtime-port.json, from scripts/record-runtime-port.mjs).
 *
 * One thing changed on purpose: exclusions carry the runtime's communication
 * round (from 1; FedGenGMM and FedGEM counted theirs from 0) and a reason that
 * starts with the client's id once (FedGenGMM and FedGEM wrote "client 3:").
 * Since then a second: a client whose data has another column count is the
 * caller's error before the run (issue 23), no longer a client the one-call
 * function excludes, so the cases recorded with one now throw.
 */
import { beforeAll, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import { fixture } from './helpers.js';
import { runtimePortCases } from './runtime-port-cases.mjs';

const recorded = fixture<Record<string, { excluded: { client: string; round: number; reason: string }[] }>>('runtime-port.json');
const cases = runtimePortCases(fedmix) as Record<string, () => { excluded: { client: string; round: number; reason: string }[] }>;

beforeAll(async () => {
  await fedmix.init();
});

test('every recorded case is run', () => {
  expect(Object.keys(cases).sort()).toEqual(Object.keys(recorded).sort());
});

/** An exclusion's reason after its client's id. */
const why = (e: { client: string; reason: string }) => e.reason.replace(new RegExp(`^(client )?${e.client}: `), '');

/** Cases recorded with a client of another column count: now an InvalidDataError before the run. */
const wrongDimension = Object.keys(recorded).filter((name) => name.endsWith('a client of the wrong dimension'));

test.each(wrongDimension)('%s: an InvalidDataError naming the client and both column counts', (name) => {
  expect(() => cases[name]!()).toThrow(fedmix.InvalidDataError);
  expect(() => cases[name]!()).toThrow(/^client(-| )\d+ \(clientData\[\d+\]\) has 3 columns but client(-| )\d+ \(clientData\[\d+\]\) has 2/);
});

test.each(Object.keys(recorded).filter((name) => !wrongDimension.includes(name)))('%s: the same numbers as before the port', (name) => {
  // JSON both ways: numbers compare exactly, undefined fields as absent
  const now = JSON.parse(JSON.stringify(cases[name]!())) as (typeof recorded)[string];
  const before = recorded[name]!;
  expect({ ...now, excluded: [] }).toEqual({ ...before, excluded: [] });
  expect(now.excluded.map((e) => [e.client, why(e)])).toEqual(before.excluded.map((e) => [e.client, why(e)]));
  expect(now.excluded.every((e) => e.round >= 1)).toBe(true);
});
