/**
 * The E-step of EM on one shard of rows (fm_gmm_shard_stats), as the calling
 * thread runs it on its own shard and each worker on its shard: the shard's
 * sufficient statistics in wire form and the sum of its log-likelihoods.
 */
import { GMM_FROM_PARTS_OPTIONS } from '../wasm/abi.generated.js';
import { coreConstant } from '../wasm/constants.js';
import type { Scope } from '../wasm/memory.js';

/** A model as it is sent to the workers: its parameters, the covariance type as the core's code. */
export interface ShardModel {
  covType: number;
  k: number;
  d: number;
  weights: Float64Array;
  means: Float64Array;
  covariances: Float64Array;
  precisionsCholesky: Float64Array;
}

/** One shard's E-step: nk (k), s1 (k x d), s2 in wire form, and the sum of the rows' log-likelihoods. */
export interface ShardStats {
  nk: Float64Array;
  s1: Float64Array;
  s2: Float64Array;
  loglik: number;
}

/** Values of s2 in wire form: a full matrix's packed upper triangle, the diagonal of diag and spherical, none for tied. */
export function wireS2Length(covType: number, k: number, d: number): number {
  if (covType === coreConstant('covariance_type', 'full')) return (k * d * (d + 1)) / 2;
  if (covType === coreConstant('covariance_type', 'tied')) return 0;
  return k * d;
}

/** The E-step statistics of the n rows at `ptr` (column-major) under the model `handle` of k components. */
export function shardStats(s: Scope, handle: number, covType: number, k: number, ptr: number, n: number, d: number): ShardStats {
  const l2 = wireS2Length(covType, k, d);
  const [nk, s1, s2, loglik] = [s.f64(k), s.f64(k * d), s.f64(l2), s.f64(1)];
  s.check(s.w.fm_gmm_shard_stats(handle, ptr, n, d, nk, s1, s2, loglik));
  return { nk: s.readF64(nk, k), s1: s.readF64(s1, k * d), s2: s.readF64(s2, l2), loglik: s.readF64(loglik, 1)[0]! };
}

/** A worker's copy of the model (fm_gmm_from_parts: the factors checked against the covariances); the caller frees it. */
export function modelHandle(s: Scope, m: ShardModel): number {
  const out = s.u32(1);
  const [w, mu, pc, c] = [s.f64Optional(m.weights), s.f64Optional(m.means), s.f64Optional(m.precisionsCholesky), s.f64Optional(m.covariances)];
  const parts = s.struct(GMM_FROM_PARTS_OPTIONS, { covType: m.covType, k: m.k, d: m.d, weightsLen: w[1], meansLen: mu[1], precisionsCholLen: pc[1], covariancesLen: c[1] });
  s.check(s.w.fm_gmm_from_parts(parts, w[0], mu[0], pc[0], c[0], out));
  return s.readU32(out, 1)[0]!;
}
