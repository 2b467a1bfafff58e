/**
 * FedGEM (federated generalized EM for mixtures with an unknown number of
 * components): clients with overlapping subsets of the clusters train
 * isotropic mixtures together without knowing how many clusters exist; the
 * server learns which client components are the same cluster and estimates the
 * global K. `fedGEM` runs a federation in-process through the accounting
 * transport (Algorithm 1 of the paper):
 *
 *   rounds:  clients take L local EM steps and upload (maximizer, radius) per
 *            component; the server moves each component to the average of the
 *            meeting points of its overlaps and sends the centers back;
 *   final:   clients upload their centers; the server merges overlapping ones
 *            (final radius phi * delta_c / sqrt(n_c)) into super-clusters;
 *   tuning:  with several phi, the clients score each candidate's global
 *            centers by the silhouette of their validation rows; the smallest
 *            phi within one standard error of the best mean silhouette wins;
 *   result:  each client learns its components' super-clusters and takes
 *            their centers; its weights stay its own (personalization).
 */
import { FedmixError, InvalidParameterError } from '../../errors.js';
import type { MatrixLike } from '../../data/matrix.js';
import { requireInteger, requirePositive } from '../../validate.js';
import { majorityDimension } from '../simulation.js';
import { InProcessTransport, type ExcludedClient, type Traffic } from '../transport.js';
import { FedGEMClient, type FedGEMClientOptions } from './client.js';
import { FedGEMServer, type FedGEMServerOptions, type RoundSummary } from './server.js';

export { FedGEMClient, type FedGEMClientOptions } from './client.js';
export { FedGEMServer, type FedGEMServerOptions, type Merge, type RoundSummary } from './server.js';
export { centerNoiseStd, type PrivacyOptions } from './privacy.js';
export { BALLS, CENTERS, FINAL, CANDIDATES, SILHOUETTES, RESULT } from './messages.js';

/** A grid of phi to tune over: 0.25 to 32 by factors of two. */
export const PHI_GRID: readonly number[] = [0.25, 0.5, 1, 2, 4, 8, 16, 32];

export interface FedGEMOptions {
  /** every client's options, or one per client (K_c usually differs) */
  client: FedGEMClientOptions | FedGEMClientOptions[];
  /** collaborative rounds T (default 10) */
  rounds?: number;
  /**
   * the final-radius hyperparameter: a number (default 1), or candidates to
   * tune by the clients' validation silhouettes (e.g. PHI_GRID)
   */
  phi?: number | readonly number[];
  /** when tuning: keep the smallest phi whose silhouette is within this of the best (default: one standard error) */
  phiTolerance?: number;
  /** per client: the rows that score the candidates when phi is tuned (default: its training rows) */
  validation?: MatrixLike[];
  server?: FedGEMServerOptions;
  /** stop the rounds early once every radius is below this (a number > 0; default: run them all) */
  tol?: number;
}

export interface FedGEMResult {
  estimatedK: number;
  phi: number;
  /** mean validation silhouette of each candidate phi (when tuned) */
  phiScores?: { phi: number; score: number; standardError: number; estimatedK: number }[];
  /** estimatedK x d, row-major */
  globalCenters: Float64Array;
  /** the clients that finished, with their personalized models (the caller disposes them) */
  clients: FedGEMClient[];
  /** per client id: the super-cluster of each of its components */
  memberships: Map<string, Int32Array>;
  history: RoundSummary[];
  traffic: Traffic;
  excluded: ExcludedClient[];
  /** wall time of the server's part */
  serverSeconds: number;
}

export function fedGEM(clientData: MatrixLike[], options: FedGEMOptions): FedGEMResult {
  const rounds = requireInteger('rounds', options.rounds ?? 10, 0);
  const tol = options.tol === undefined ? 0 : requirePositive('tol', options.tol);
  const phis = typeof options.phi === 'number' ? [options.phi] : options.phi ?? [1];
  if (!Array.isArray(phis) || phis.length === 0) {
    throw new InvalidParameterError(`phi must be a number or a non-empty list of candidates (e.g. PHI_GRID), got ${Array.isArray(phis) ? '[]' : String(phis)}`);
  }
  phis.forEach((p, i) => requirePositive(typeof options.phi === 'number' ? 'phi' : `phi[${i}]`, p));
  const throwOnBad = options.server?.onInvalidClient === 'throw';
  const transport = new InProcessTransport();
  const server = new FedGEMServer({ ...options.server, nFeatures: options.server?.nFeatures ?? majorityDimension(clientData) });
  const excluded: ExcludedClient[] = [];
  let clients: FedGEMClient[] = [];
  let serverMs = 0;
  const timed = <T>(fn: () => T): T => {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      serverMs += performance.now() - t0;
    }
  };
  // a client that fails on its own side is dropped, with the reason
  const guard = (id: string, round: number, what: string, fn: () => void): boolean => {
    try {
      fn();
      return true;
    } catch (e) {
      if (!(e instanceof FedmixError) || e.code === 'WASM' || throwOnBad) throw e;
      excluded.push({ client: id, round, reason: `${what} failed: ${e.message}` });
      return false;
    }
  };
  const keep = (c: FedGEMClient, ok: boolean) => {
    if (!ok || !server.isActive(c.id)) c.dispose();
    return ok && server.isActive(c.id);
  };
  try {
    clientData.forEach((data, i) => {
      const id = String(i);
      const opts = Array.isArray(options.client) ? options.client[i] : options.client;
      guard(id, 0, 'creating the client', () => {
        if (!opts) throw new InvalidParameterError(`no client options for client ${id}`);
        clients.push(new FedGEMClient(id, data, opts, options.validation?.[i]));
      });
    });
    let round = 0;
    for (; round < rounds; round++) {
      transport.nextRound();
      let largest = 0;
      clients = clients.filter((c) =>
        keep(
          c,
          guard(c.id, round, 'local training', () => {
            const m = c.localRound(round);
            for (const r of m.payload.radii) largest = Math.max(largest, r);
            const wire = transport.up(m);
            timed(() => server.receiveBalls(wire, round));
          }),
        ),
      );
      const replies = timed(() => server.update(round));
      clients = clients.filter((c) => keep(c, guard(c.id, round, 'taking the update', () => c.applyCenters(transport.down(replies.get(c.id)!)))));
      if (largest < tol) {
        round++;
        break;
      }
    }
    transport.nextRound();
    clients = clients.filter((c) =>
      keep(
        c,
        guard(c.id, round, 'the final upload', () => {
          const wire = transport.up(c.finalUpload(round));
          timed(() => server.receiveFinal(wire, round));
        }),
      ),
    );
    let phi = phis[0]!;
    let phiScores: FedGEMResult['phiScores'];
    if (phis.length > 1) {
      transport.nextRound();
      const offer = timed(() => server.candidates(phis, round));
      clients = clients.filter((c) =>
        keep(
          c,
          guard(c.id, round, 'scoring the candidates', () => {
            const wire = transport.up(c.silhouettes(transport.down(offer), round));
            timed(() => server.receiveSilhouettes(wire, round));
          }),
        ),
      );
      const chosen = timed(() => server.choosePhi(phis, options.phiTolerance));
      phi = chosen.phi;
      phiScores = phis.map((p, i) => ({ phi: p, score: chosen.scores[i]!, standardError: chosen.standardErrors[i]!, estimatedK: offer.payload.candidates[i]!.estimatedK }));
    }
    const { merge, messages } = timed(() => server.result(phi, round));
    // the result travels in the same round as the final upload (or the tuning)
    clients = clients.filter((c) => keep(c, messages.has(c.id) && guard(c.id, round, 'taking the result', () => c.applyResult(transport.down(messages.get(c.id)!)))));
    return {
      estimatedK: merge.estimatedK,
      phi,
      phiScores,
      globalCenters: merge.globalCenters,
      clients,
      memberships: merge.memberships,
      history: server.history,
      traffic: transport.traffic,
      excluded: [...excluded, ...server.excluded],
      serverSeconds: serverMs / 1000,
    };
  } catch (e) {
    for (const c of clients) c.dispose();
    throw e;
  }
}
