/** Types of server-sweep.mjs (plain JavaScript, shared with scripts/fedgengmm-server-sweep.mjs). */
import type { FedGenGMMClient, LabelledData, Matrix } from '../../ts/index.js';

export declare const CLIENTS: number;
export declare const CENTRAL_N_INIT: number;
export declare const SETS: Record<'shift' | 'dirichlet', { datasets: { name: string; label?: string; anomaly?: string }[]; ks: number[] }>;
export interface SweepRepeat {
  seed: number;
  train: Matrix;
  test: Matrix;
  clients: FedGenGMMClient[];
}
export declare function sweepRepeat(f: unknown, data: LabelledData, set: 'shift' | 'dirichlet', repeat: number, kMax: number): SweepRepeat;
export declare function sweepScore(f: unknown, repeat: SweepRepeat, K: number, step: 'central' | 'sample' | 'hierarchical', nInit?: number): { score: number; excluded: number };
