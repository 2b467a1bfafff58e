/** Types of honest-federations.mjs (plain JavaScript, shared with scripts/honest-federations.mjs). */
import type { ExcludedClient, GaussianMixture, Matrix } from '../../ts/index.js';

export declare const SCHEMES: string[];
export declare function tinyRows(nFeatures: number): number;
export declare function honestPartition(f: unknown, scheme: string, classes: Int32Array, options: { clients: number; nFeatures: number; seed: number }): ArrayLike<number>[];
export declare function classesOf(f: unknown, X: Matrix, labels: Int32Array | undefined, seed: number): Int32Array;
export declare function honestFedGenGMM(
  f: unknown,
  X: Matrix,
  parts: ArrayLike<number>[],
  options: { nComponents: number; serverStep?: 'sample' | 'hierarchical'; featureRange?: [number, number]; seed: number; suspects?: (models: GaussianMixture[]) => number[] },
): { clients: number; excluded: ExcludedClient[]; suspects?: string[]; incoming: number; model: number };
export declare function histograms(classes: Int32Array, parts: ArrayLike<number>[]): number[][];
export declare function honestMdm(f: unknown, hist: number[][], variant: 'fit' | 'groups' | 'select' | 'privacy', options: { seed: number; rounds?: number }): { clients: number; excluded: ExcludedClient[]; error?: string };
