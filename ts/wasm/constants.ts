/**
 * Numbers that belong to the core: the codes of the C ABI's enumerations, the
 * status codes, and limits and thresholds TypeScript applies around a call.
 * The core exports them as a table of (name, value) rows
 * (crates/fedmix-wasm/src/constants.rs) that the loader reads once at init();
 * their names are generated from that table (./abi.generated.ts) and
 * TypeScript asks for them by name here instead of copying the numbers.
 *
 * A few copies remain where a value is needed before init() or is public API
 * as a plain number (MDM_MAX_CELLS, MDM_GUARDS, ABI_VERSION in the loader);
 * test/wasm-constants.test.ts compares each with the core's.
 */
import { WasmError } from '../errors.js';
import { CORE_CONSTANTS } from './abi.generated.js';
import { instance } from './loader.js';

/** Every row of the core's table, by group, generated from it (scripts/gen-wasm-abi.mjs); test/wasm-constants.test.ts checks that the core exports exactly these. */
export { CORE_CONSTANTS };

export type ConstantGroup = keyof typeof CORE_CONSTANTS;
export type ConstantMember<G extends ConstantGroup> = (typeof CORE_CONSTANTS)[G][number];

/** The core's value of `group.member`. Needs init(). */
export function coreConstant<G extends ConstantGroup>(group: G, member: ConstantMember<G>): number {
  const v = instance().constants.get(`${group}.${member}`);
  if (v === undefined) throw new WasmError(`the WASM core has no constant ${group}.${member}; rebuild it with scripts/build-wasm.sh`);
  return v;
}

/**
 * The member of `group` whose value is `value`, or undefined. Needs init().
 * Read from the core's table, which holds exactly CORE_CONSTANTS (checked at
 * build, test/wasm-constants.test.ts), so that programs carry no list of names.
 */
export function coreConstantName<G extends ConstantGroup>(group: G, value: number): ConstantMember<G> | undefined {
  for (const [name, v] of instance().constants) if (v === value && name.startsWith(`${group}.`)) return name.slice(group.length + 1) as ConstantMember<G>;
  return undefined;
}

/**
 * The codes of `group` as an object whose properties read the core when
 * used (so it can be created at module load, before init()); a name the
 * core lacks is coreConstant's error.
 */
/* @__NO_SIDE_EFFECTS__ */
export function codeTable<G extends ConstantGroup>(group: G): Readonly<Record<ConstantMember<G>, number>> {
  return new Proxy({} as Record<ConstantMember<G>, number>, { get: (_, m) => (typeof m === 'string' ? coreConstant(group, m as ConstantMember<G>) : undefined) });
}
