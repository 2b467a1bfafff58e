/**
 * The federation runtime port changed how the four algorithms exchange
 * messages, not what they compute: each public one-call function gives, at the
 * same seeds, exactly the outputs recorded before the port
 * (test/fixtures/runtime-port.json, from scripts/record-runtime-port.mjs).
 */
import { beforeAll, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import { fixture } from './helpers.js';
// @ts-expect-error plain JavaScript shared with the recorder script
import { runtimePortCases } from './runtime-port-cases.mjs';

const recorded = fixture<Record<string, unknown>>('runtime-port.json');
const cases = runtimePortCases(fedmix) as Record<string, () => unknown>;

beforeAll(async () => {
  await fedmix.init();
});

test('every recorded case is run', () => {
  expect(Object.keys(cases).sort()).toEqual(Object.keys(recorded).sort());
});

test.each(Object.keys(recorded))('%s: the same numbers as before the port', (name) => {
  // JSON both ways: numbers compare exactly, undefined fields as absent
  expect(JSON.parse(JSON.stringify(cases[name]!()))).toEqual(recorded[name]);
});
