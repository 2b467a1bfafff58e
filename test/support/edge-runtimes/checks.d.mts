/** Types of checks.mjs (plain JavaScript: Deno, Bun and workerd run it as it is). */
import type * as Fedmix from '../../../ts/index.js';

export interface ModelNumbers {
  weights: number[];
  means: number[];
  covariances: number[];
  [extra: string]: unknown;
}
export interface InProcessResult {
  info: Fedmix.InitInfo;
  fit: ModelNumbers;
  fedgengmm: ModelNumbers;
  dem: ModelNumbers;
}
export declare const DEM: { nComponents: number; nFeatures: number; covarianceType: 'diag'; init: 'kfed'; seed: number; maxRounds: number };
export declare function inProcess(fedmix: typeof Fedmix, options: { rows: number[][][]; wasm?: Fedmix.WasmSources }): Promise<InProcessResult>;
export declare function joinFederation(
  fedmix: typeof Fedmix,
  options: { rows: number[][]; url: string; federation: string; id: string; password: string },
): Promise<{ ok: boolean; answered: number; reason?: string }>;
export declare function modelOf(m: { weights: ArrayLike<number>; means: ArrayLike<number>; covariances: ArrayLike<number> }, extra?: Record<string, unknown>): ModelNumbers;
