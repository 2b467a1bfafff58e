/**
 * Dir(alpha), the label-skew scheme of the FedGenGMM paper (section 5.2,
 * Figure 1): each client c draws its mixture weights over the K classes,
 * pi_c ~ Dirichlet(alpha, ..., alpha) (pi_{c,m} of the paper's Eq. 1), and
 * then every class m is dealt among all clients in proportion to their
 * weights for it: client c gets the share pi_{c,m} / sum_c' pi_{c',m} of class
 * m's rows (rounded so the shares add up, |error| < 1 row each).
 *
 * Why this dealing: it uses exactly the per-client weights the paper
 * describes, every row is dealt, and it gives Figure 1's behaviour. With small
 * alpha each pi_c is dominated by one or two classes, so each class goes
 * almost entirely to the one or two clients that weight it most, and a client
 * holds whatever its favourite classes amount to: dataset sizes vary, more so
 * the smaller alpha. With large alpha every pi_c is near uniform and every
 * client gets about 1/clients of every class. (Dealing each class by a fresh
 * Dirichlet over clients, as Li et al. 2022 do, behaves alike but draws
 * per-class rather than per-client weights.) A client's class mix is then
 * proportional to pi_{c,m} * n_m / sum_c' pi_{c',m}: its own weights tilted by
 * the class sizes and by the competition for each class.
 *
 * The weights are drawn in logs (Rng.logDirichlet): at alpha = 0.001 most
 * weights underflow to 0, and a class that every client weights below 1e-308
 * must still go to the clients whose weights for it are the largest.
 */
import type { LabelsLike } from '../data/labels.js';
import { Matrix } from '../data/matrix.js';
import { InvalidParameterError } from '../errors.js';
import { readOptions, requirePositive } from '../validate.js';
import { coreConstant } from '../wasm/constants.js';
import {
  assemble,
  emptyBuckets,
  encodeLabels,
  requireCells,
  requireClients,
  requireMinSize,
  rowsByClass,
  topUp,
  withRng,
  type Partition,
} from './shared.js';

export interface DirichletOptions {
  clients: number;
  /** concentration of the symmetric Dirichlet (> 0): small is heterogeneous (0.1), large is near iid (100) */
  alpha: number;
  seed?: number;
  /**
   * Fewest rows a client may end with (default 1). Clients left below it are
   * topped up from the clients that can spare rows, with rows of the classes
   * they weight most (see topUp in shared.ts); 0 allows empty clients.
   */
  minSize?: number;
}

export interface DirichletPartition extends Partition {
  /** the drawn mixture weights pi: clients x classes, each row sums to 1 */
  weights: Matrix;
}

export function dirichlet(labels: LabelsLike, options: DirichletOptions): DirichletPartition {
  const { codes, classes } = encodeLabels(labels);
  const n = codes.length;
  const K = classes.length;
  const o = readOptions(options, ['clients', 'alpha', 'seed', 'minSize']);
  const minSize = requireMinSize(o.minSize);
  const clients = requireClients(o.clients, n, minSize);
  requireCells(clients, K);
  const alpha = requirePositive('alpha', o.alpha);
  const minShape = coreConstant('distributions', 'min_shape');
  if (alpha < minShape) throw new InvalidParameterError(`alpha must be >= ${minShape}, got ${alpha}; smaller concentrations overflow the gamma draws`);
  const byClass = rowsByClass(codes, K);
  return withRng(o.seed, (rng) => {
    // logW.data[k * clients + c] = ln pi_{c,k}
    const logW = rng.logDirichlet(new Float64Array(K).fill(alpha), clients);
    const buckets = emptyBuckets(clients, K);
    const share = new Float64Array(clients);
    for (let k = 0; k < K; k++) {
      const col = logW.column(k);
      let max = -Infinity;
      for (const v of col) max = Math.max(max, v);
      let sum = 0;
      for (let c = 0; c < clients; c++) sum += share[c] = Math.exp(col[c]! - max); // the largest is 1: never all zero
      const rows = byClass[k]!;
      const perm = rng.permutation(rows.length);
      // cumulative rounding: client c gets rows [round(n_k * cum_{c-1}), round(n_k * cum_c))
      let cum = 0;
      let start = 0;
      for (let c = 0; c < clients; c++) {
        cum += share[c]! / sum;
        const end = c === clients - 1 ? rows.length : Math.min(rows.length, Math.round(rows.length * cum));
        for (let i = start; i < end; i++) buckets[c]![k]!.push(rows[perm[i]!]!);
        start = Math.max(start, end);
      }
    }
    const preference = (c: number) => Int32Array.from({ length: K }, (_, k) => k).sort((a, b) => logW.data[b * clients + c]! - logW.data[a * clients + c]! || a - b);
    // never leaves a client short: requireClients ensured clients * minSize <= n,
    // so while one is short another has a row to spare, and any class will do
    topUp(buckets, minSize, preference, false);
    const weights = new Matrix(logW.data.map(Math.exp), clients, K);
    return { ...assemble(buckets, classes), weights };
  });
}
