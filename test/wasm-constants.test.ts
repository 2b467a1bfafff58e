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
import { FEDGEM_CLIENT_NEW_OPTIONS, GMM_FROM_COVARIANCES_OPTIONS } from '../ts/wasm/abi.generated.js';
import { COV_CODE, covarianceLength } from '../ts/models/gaussian-mixture.js';
import { withScope } from '../ts/wasm/memory.js';
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

test("covarianceLength is the core's rule (CovarianceType::shape_powers, generated): the core takes exactly that many covariance values, of every type", async () => {
  await init();
  const [k, d] = [3, 4];
  const expected = { full: k * d * d, tied: d * d, diag: k * d, spherical: k };
  for (const t of ['full', 'tied', 'diag', 'spherical'] as const) {
    expect(covarianceLength(t, k, d), t).toBe(expected[t]);
    const fromCovariances = (length: number) =>
      withScope((s) => {
        // identity covariances (a variance of 1) in each type's layout, one value more or less when asked
        const covariances = new Float64Array(length);
        if (t === 'full' || t === 'tied') for (let c = 0; c < (t === 'full' ? k : 1); c++) for (let j = 0; j < d; j++) covariances[c * d * d + j * d + j] = 1;
        else covariances.fill(1);
        const [w, m, c] = [s.f64From(new Float64Array(k).fill(1 / k)), s.f64From(new Float64Array(k * d)), s.f64From(covariances)];
        const shape = s.struct(GMM_FROM_COVARIANCES_OPTIONS, { covType: COV_CODE[t], k, d, weightsLen: k, meansLen: k * d, covariancesLen: length });
        const out = s.u32(1);
        const status = s.w.fm_gmm_from_covariances(shape, w, m, c, out);
        if (status === 0) s.w.fm_gmm_free(s.readU32(out, 1)[0]!);
        else s.w.fm_clear_error();
        return status;
      });
    expect(fromCovariances(covarianceLength(t, k, d)), t).toBe(0);
    expect(fromCovariances(covarianceLength(t, k, d) + 1), t).toBe(coreConstant('status', 'invalid_parameter'));
  }
});
