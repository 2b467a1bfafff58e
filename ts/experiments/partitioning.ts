/**
 * The experiment's training rows dealt to clients by the chosen scheme. The
 * shift scheme also perturbs the rows themselves, and the same shift must then
 * apply to the test rows, so it returns both.
 */
import type { Matrix } from '../data/matrix.js';
import { InvalidParameterError } from '../errors.js';
// each scheme from its own module: the partition namespace holds every scheme (partition.mdm brings the MDM model)
import { dirichlet } from '../partition/dirichlet.js';
import { iid } from '../partition/iid.js';
import { quantity } from '../partition/quantity.js';
import { applyShift, shift } from '../partition/shift.js';

export type PartitionScheme = 'iid' | 'dirichlet' | 'quantity' | 'shift';

export interface ClientPartition {
  /** the training rows as the clients hold them (perturbed by the shift scheme) */
  train: Matrix;
  /** each client's rows of `train` */
  clients: Int32Array[];
  /** the shift scheme's perturbation of other rows (test, anomalies) */
  shiftTest?: (X: Matrix, seed: number) => Matrix;
}

export function partitionRows(
  train: Matrix,
  labels: Int32Array | undefined,
  c: { clients: number; partition: PartitionScheme; alpha?: number; beta?: number; classes?: number },
  seed: number,
): ClientPartition {
  const needLabels = () => {
    if (!labels) throw new InvalidParameterError(`the ${c.partition} partition deals classes: name the class column (--label), or deal k-means clusters of the rows (--cluster-classes K)`);
    return labels;
  };
  switch (c.partition) {
    case 'iid':
      return { train, clients: iid(train.nRows, { clients: c.clients, seed }).indices };
    case 'dirichlet':
      return { train, clients: dirichlet(needLabels(), { clients: c.clients, alpha: c.alpha ?? 0.3, seed }).indices };
    case 'quantity':
      return { train, clients: quantity(needLabels(), { clients: c.clients, alpha: c.alpha ?? 2, seed }).indices };
    case 'shift': {
      const s = shift(train, { parts: c.classes ?? 10, beta: c.beta ?? 0.5, clients: c.clients, alpha: c.alpha ?? 2, seed });
      return { train: s.X, clients: s.indices, shiftTest: (X, sd) => applyShift(X, s.shift, { seed: sd }).X };
    }
    default:
      throw new InvalidParameterError(`unknown partition "${String(c.partition)}"; choose iid, dirichlet, quantity or shift`);
  }
}
