/**
 * How a central dataset becomes simulated clients: `partition.iid`,
 * `partition.dirichlet` (Dir(alpha)), `partition.quantity` (Quantity(alpha))
 * and `partition.shift` with `partition.applyShift` (the WADI scheme), as in
 * the FedGenGMM paper's section 5.2; and, after the MDM paper, `partition.mdm`
 * (histograms and sizes drawn from a learned DirichletMultinomialMixture) with
 * its baselines `partition.fullyIid` and `partition.conditionallyIid`;
 * `partition.contaminated`, the community anomaly detection paper's inliers
 * with a share d of one circulating outlier class per client; and, after the
 * FedDistr paper, `partition.entangled`, which deals subclasses at a target
 * entangled coefficient (Definition 1). Every
 * scheme is seeded through the one Rng and returns per-client row indices,
 * per-client class histograms and the class list.
 */
import { applyShift, shift } from './shift.js';
import { dirichlet } from './dirichlet.js';
import { iid } from './iid.js';
import { quantity } from './quantity.js';
import { conditionallyIid, fullyIid, mdm } from './histograms.js';
import { contaminated } from './contaminated.js';
import { entangled } from './entangled.js';

export const partition = { iid, dirichlet, quantity, shift, applyShift, mdm, fullyIid, conditionallyIid, contaminated, entangled } as const;

export type { Label, Partition } from './shared.js';
export type { LabelsLike } from '../data/labels.js';
export type { IidOptions } from './iid.js';
export type { EntangledOptions, EntangledPartition } from './entangled.js';
export { entangledCoefficient, averageEntanglement } from './entangled.js';
export type { DirichletOptions, DirichletPartition } from './dirichlet.js';
export type { HistogramDealOptions, ConditionallyIidOptions, MdmPartitionOptions, MdmPartition, FullyIidOptions } from './histograms.js';
export type { QuantityOptions, QuantityPartition, QuantityImbalance } from './quantity.js';
export type { ContaminatedOptions, ContaminatedPartition } from './contaminated.js';
export type { ShiftOptions, ShiftParameters, ShiftPartition, ShiftedRows } from './shift.js';
