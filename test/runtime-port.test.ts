/**
 * The federation runtime port changed how the four algorithms exchange
 * messages, not what they compute: each public one-call function gives, at the
 * same seeds, exactly the outputs recorded before the port
 * (test/fixtures/runtime-port.json, from scripts/record-runtime-port.mjs).
 *
 * One thing changed on purpose: exclusions carry the runtime's communication
 * round (from 1; FedGenGMM and FedGEM counted theirs from 0) and a reason that
 * starts with the client's id once (FedGenGMM and FedGEM wrote "client 3:").
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

test.each(Object.keys(recorded))('%s: the same numbers as before the port', (name) => {
  // JSON both ways: numbers compare exactly, undefined fields as absent
  const now = JSON.parse(JSON.stringify(cases[name]!())) as (typeof recorded)[string];
  const before = recorded[name]!;
  expect({ ...now, excluded: [] }).toEqual({ ...before, excluded: [] });
  expect(now.excluded.map((e) => [e.client, why(e)])).toEqual(before.excluded.map((e) => [e.client, why(e)]));
  expect(now.excluded.every((e) => e.round >= 1)).toBe(true);
});
