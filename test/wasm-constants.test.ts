/**
 * The core's constants (crates/fedmix-wasm/src/constants.rs), read by
 * ts/wasm/constants.ts at init(): the table holds exactly the names TypeScript
 * reads, in both builds; and the copies that remain in TypeScript equal the
 * core's values:
 * - MDM_MAX_CELLS and MDM_GUARDS are public API as plain values, and
 *   MDM_MAX_CELLS is needed before init() (the default of an option checked
 *   when a client is constructed);
 * - ts/federated/fedgem/client.ts writes its init and radius codes inline
 *   (ts/federated is being rewritten; it can call coreConstant then), so they
 *   are checked by watching the codes it passes to the core.
 */
import { afterAll, expect, test, vi } from 'vitest';
import {
  COVARIANCE_TYPES,
  FedGEMClient,
  INIT_PARAMS,
  InvalidDataError,
  InvalidParameterError,
  MDM_GUARDS,
  MDM_MAX_CELLS,
  NumericalError,
  WasmAllocationError,
  WasmError,
  init,
} from '../ts/index.js';
import { errorFromStatus } from '../ts/errors.js';
import { CORE_CONSTANTS, coreConstant, coreConstantName, type ConstantGroup } from '../ts/wasm/constants.js';
import { FEDGEM_CLIENT_NEW_OPTIONS } from '../ts/wasm/abi.generated.js';
import { instance, resetForTests } from '../ts/wasm/loader.js';
import { blobs } from './helpers.js';

afterAll(() => resetForTests());

const declared = Object.entries(CORE_CONSTANTS).flatMap(([g, members]) => members.map((m) => `${g}.${m}`));

async function table(backend: 'simd' | 'scalar'): Promise<ReadonlyMap<string, number>> {
  resetForTests();
  await init({ backend });
  return instance().constants;
}

test('both builds export exactly the constants TypeScript reads, with the same values', async () => {
  const simd = await table('simd');
  const scalar = await table('scalar');
  expect([...simd.keys()].sort(), 'the core table (left) against CORE_CONSTANTS (right)').toEqual(declared.slice().sort());
  expect([...scalar].sort()).toEqual([...simd].sort());
  for (const [name, v] of simd) expect(Number.isFinite(v), name).toBe(true);
});

test('the codes of a group are distinct, and coreConstantName inverts coreConstant', async () => {
  await init();
  const codes: ConstantGroup[] = ['status', 'covariance_type', 'init_params', 'gmm_read', 'kmeans_init', 'gamma_differences', 'mdm_guard', 'fedgem_init', 'fedgem_radius'];
  for (const g of codes) {
    const members = CORE_CONSTANTS[g] as readonly string[];
    const values = members.map((m) => coreConstant(g, m as never));
    expect(new Set(values).size, g).toBe(values.length);
    for (const m of members) expect(coreConstantName(g, coreConstant(g, m as never))).toBe(m);
  }
  expect(coreConstantName('covariance_type', 99)).toBeUndefined();
});

test('every covariance type and initParams option has a code in the core, and nothing else does', async () => {
  await init();
  expect([...CORE_CONSTANTS.covariance_type].sort()).toEqual([...COVARIANCE_TYPES].sort());
  expect([...CORE_CONSTANTS.init_params].sort()).toEqual([...INIT_PARAMS].sort());
});

test('every failed status of the core maps to its error class; an unknown one to WasmError', async () => {
  await init();
  const classes = { invalid_data: InvalidDataError, invalid_parameter: InvalidParameterError, numerical: NumericalError, allocation: WasmAllocationError } as const;
  for (const name of CORE_CONSTANTS.status) {
    if (name === 'ok') continue;
    const status = coreConstant('status', name);
    const e = errorFromStatus(status, coreConstantName('status', status), 'message');
    expect(e, name).toBeInstanceOf(classes[name]);
    expect(e.message).toBe('message');
  }
  expect(errorFromStatus(99, coreConstantName('status', 99), 'm')).toBeInstanceOf(WasmError);
});

test('MDM_MAX_CELLS, a public constant needed before init(), equals the core mdm::MAX_CELLS', async () => {
  await init();
  expect(MDM_MAX_CELLS).toBe(coreConstant('mdm', 'max_cells'));
});

test("MDM_GUARDS, public API, names the core's guard flags bit by bit", async () => {
  await init();
  expect(MDM_GUARDS.map((g) => g.replace(/-/g, '_'))).toEqual([...CORE_CONSTANTS.mdm_guard]);
  MDM_GUARDS.forEach((g, b) => expect(coreConstant('mdm_guard', g.replace(/-/g, '_') as never), g).toBe(2 ** b));
});

test("the FedGEM client passes the core's init and radius codes", async () => {
  await init();
  const w = instance().exports;
  // the init code travels in the option struct: read where the generated layout puts it, during the call
  const createNew = w.fm_fedgem_client_new.bind(w);
  const initCodes: number[] = [];
  const created = vi.spyOn(w, 'fm_fedgem_client_new').mockImplementation((...args) => {
    initCodes.push(new DataView(w.memory.buffer).getInt32(args[1] + FEDGEM_CLIENT_NEW_OPTIONS.offsets.init, true));
    return createNew(...args);
  });
  const stepped = vi.spyOn(w, 'fm_fedgem_client_steps');
  const x = blobs(60, 2, 2, 3);
  try {
    for (const [init, radius] of [
      ['k-means++', 'closed-form'],
      ['kmeans', 'bisection'],
    ] as const) {
      const client = new FedGEMClient('a', x, { nComponents: 2, variance: 1, init, radius, seed: 1 });
      client.localRound();
      client.dispose();
      expect(initCodes.at(-1), init).toBe(coreConstant('fedgem_init', init));
      expect(stepped.mock.lastCall![2], radius).toBe(coreConstant('fedgem_radius', radius === 'closed-form' ? 'closed_form' : 'bisection'));
    }
  } finally {
    created.mockRestore();
    stepped.mockRestore();
  }
});
