/**
 * The FedAvg family's messages (FedAvg, FedProx, SCAFFOLD share them), declared once.
 *
 *   server -> client  TRAIN    the global parameters, the network they belong
 *                              to, the local training to do (epochs, batch
 *                              size, optimizer, early stopping) and, by
 *                              algorithm, FedProx's mu or SCAFFOLD's server
 *                              control variate
 *   client -> server  UPDATE   its parameters after local training (with early
 *                              stopping, those of its best epoch), its row
 *                              count, its mean training loss, the epochs it ran
 *                              and (SCAFFOLD) the change of its control variate
 *   server -> client  RESULT   the final global parameters (no reply)
 *
 * The network's description travels with every request (a few dozen bytes), so
 * a client needs nothing but its rows: the same client answers all three
 * algorithms, from any transport.
 */
import { InvalidMessageError } from '../../errors.js';
import { EARLY_STOPPING_MONITORS } from '../../models/early-stopping.js';
import { LIMITS } from '../../validate.js';
import { lengthIs } from '../messages/checks.js';
import type { Message } from '../messages/envelope.js';
import { NETWORK_FIELDS } from '../messages/network.js';
import { defineMessage, f32Array, finiteNumber, flag, oneOf, optional, record, wholeNumber, type PayloadOf } from '../messages/schema.js';
import { defineProtocol } from '../runtime/roles.js';
import { flattenFields, type AdditiveField, type AdditiveLayout } from '../secure-aggregation/layout.js';

/** Most rows a client may claim: counts weigh the average, so one claim cannot be unbounded. */
export const MAX_SAMPLES = 2 ** 48;
const network = record(NETWORK_FIELDS);

const optimizer = record({
  name: oneOf(['sgd', 'adam'] as const),
  learningRate: finiteNumber(),
  momentum: optional(finiteNumber()),
  dampening: optional(finiteNumber()),
  nesterov: optional(flag()),
  weightDecay: optional(finiteNumber()),
  beta1: optional(finiteNumber()),
  beta2: optional(finiteNumber()),
  eps: optional(finiteNumber()),
});

export const TRAIN = defineMessage(
  'fedavg/train',
  record({
    network,
    parameters: f32Array(),
    epochs: wholeNumber(1, LIMITS.localSteps),
    batchSize: wholeNumber(1, LIMITS.count),
    optimizer,
    // FedProx's proximal weight (absent: FedAvg)
    mu: optional(finiteNumber()),
    // SCAFFOLD's server control variate c (absent: no control variates)
    control: optional(f32Array()),
    // DP-FedAvg: the L2 bound the client clips its update (parameters minus the global ones) to (absent: no clipping)
    clipNorm: optional(finiteNumber()),
    // early stopping of every client's local epochs (absent: every client trains all its epochs)
    earlyStopping: optional(
      record({
        monitor: oneOf(EARLY_STOPPING_MONITORS),
        patience: wholeNumber(1, LIMITS.localSteps),
        // 'validation-loss': the share of its rows a client holds out; 'separation': the contamination
        validationShare: optional(finiteNumber()),
        contamination: optional(finiteNumber()),
      }),
    ),
  }),
);
export const UPDATE = defineMessage(
  'fedavg/update',
  record({
    parameters: f32Array(),
    nSamples: wholeNumber(1, MAX_SAMPLES),
    // every client sends it; absent only from DP-FedAvg's secure sum, which releases no client's loss (receiveUpdate)
    loss: optional(finiteNumber()),
    /** the local epochs it ran: E, or fewer when early stopping stopped it */
    epochs: wholeNumber(1, LIMITS.localSteps),
    /** SCAFFOLD: c_i+ - c_i */
    controlDelta: optional(f32Array()),
    /** DP-FedAvg: whether the client had to scale its update down to the clip bound (present exactly when the request asked it to clip) */
    clipped: optional(flag()),
  }),
);
export const RESULT = defineMessage('fedavg/result', record({ parameters: f32Array() }));

/**
 * UPDATE under secure aggregation: weighted, so that it sums. A client sends
 * nSamples x parameters, nSamples, nSamples x loss, nSamples x epochs and
 * (SCAFFOLD) its control change as it is; the sum is read back as one update:
 * the sample-weighted mean parameters, loss and epochs of all the survivors,
 * their total rows, and the sum of their control changes (SCAFFOLD's server
 * divides it by the clients present, as it does the plain sum).
 *
 * DP-FedAvg's request (clipNorm) lays out otherwise (McMahan et al. 2018 with
 * distributed noise): a client sends only its update, parameters minus the
 * global ones, clipped to clipNorm in double precision (weight 1: the L2 norm
 * of its whole vector is at most clipNorm, the sensitivity its noise share is
 * calibrated to); its row count, loss, epochs and clipped flag never travel.
 * The noised sum is read back as the global parameters plus the sum over the
 * survivors' count: their mean clipped update, and the noise.
 */
function updateFields(request: Message): AdditiveField[] {
  const p = request.payload as TrainPayload;
  const n = p.parameters.length;
  if (p.clipNorm !== undefined) return [{ name: 'parameters', length: n }];
  const fields: AdditiveField[] = [
    { name: 'parameters', length: n },
    { name: 'nSamples', length: 1 },
    { name: 'loss', length: 1 },
    { name: 'epochs', length: 1 },
  ];
  if (p.control !== undefined) fields.push({ name: 'controlDelta', length: n });
  return fields;
}

/** `trained` minus `global` in double precision, scaled down so that its L2 norm is at most `bound` exactly. */
function clippedUpdate(trained: ArrayLike<number>, global: ArrayLike<number>, bound: number): Float64Array {
  const d = new Float64Array(global.length);
  for (let i = 0; i < d.length; i++) d[i] = trained[i]! - global[i]!;
  const norm = (): number => Math.sqrt(d.reduce((a, x) => a + x * x, 0));
  const length = norm();
  if (!(length > bound)) return d;
  const factor = bound / length;
  for (let i = 0; i < d.length; i++) d[i]! *= factor;
  // the scaled norm can round a hair above the bound: shrink by a few ulps until it is not
  while (norm() > bound) for (let i = 0; i < d.length; i++) d[i]! *= 1 - 2 ** -50;
  return d;
}

const UPDATE_LAYOUT: AdditiveLayout = {
  reply: UPDATE,
  fields: updateFields,
  withheld: [],
  flatten(reply, request) {
    const clipNorm = (request.payload as TrainPayload).clipNorm;
    if (clipNorm !== undefined) return clippedUpdate((reply.payload as UpdatePayload).parameters, (request.payload as TrainPayload).parameters, clipNorm);
    const fields = updateFields(request);
    const out = flattenFields(reply.payload, fields, UPDATE.kind);
    // weight x update, weight, weight x loss, weight x epochs; the control change sums as it is
    const w = out[fields[0]!.length]!;
    for (let i = 0; i < fields[0]!.length; i++) out[i]! *= w;
    out[fields[0]!.length + 1]! *= w;
    out[fields[0]!.length + 2]! *= w;
    return out;
  },
  build(sum, request, users) {
    const p = request.payload as TrainPayload;
    const n = p.parameters.length;
    if (p.clipNorm !== undefined) {
      // the mean clipped update of the survivors (their count is public under secure aggregation) with the noise over it
      const parameters = new Float32Array(n);
      for (let i = 0; i < n; i++) parameters[i] = p.parameters[i]! + sum[i]! / users;
      return { parameters, nSamples: users, epochs: p.epochs } satisfies UpdatePayload;
    }
    const w = Math.max(1, Math.round(sum[n]!));
    const parameters = new Float32Array(n);
    for (let i = 0; i < n; i++) parameters[i] = sum[i]! / w;
    const epochs = Math.min(p.epochs, Math.max(1, Math.round(sum[n + 2]! / w)));
    const out: UpdatePayload = { parameters, nSamples: w, loss: sum[n + 1]! / w, epochs };
    if (p.control !== undefined) out.controlDelta = Float32Array.from(sum.subarray(n + 3, n + 3 + n));
    return out;
  },
};

export const FEDAVG_PROTOCOL = defineProtocol(
  'FedAvg',
  [
    [TRAIN, UPDATE],
    [RESULT, null],
  ],
  { layouts: [UPDATE_LAYOUT] },
);

export type TrainPayload = PayloadOf<typeof TRAIN>;
export type UpdatePayload = PayloadOf<typeof UPDATE>;
export type WireNetwork = TrainPayload['network'];
export type WireOptimizer = TrainPayload['optimizer'];

/** A client's update as the server keeps it. */
export interface ReceivedUpdate {
  client: string;
  parameters: Float32Array;
  nSamples: number;
  loss: number;
  epochs: number;
  controlDelta?: Float32Array;
  /** DP-FedAvg: whether the client clipped its update */
  clipped?: boolean;
  /** DP-FedAvg under secure aggregation: the clients whose clipped updates this noised sum averages (it releases no loss or epochs: NaN) */
  clients?: number;
}

/**
 * An UPDATE checked against what the server asked: one value per parameter,
 * at most the epochs asked, a control delta exactly when SCAFFOLD asked for
 * one. An honest client always passes: it sends its network's parameters, runs
 * at most the epochs it was sent, and adds a control delta only to a request
 * that carried SCAFFOLD's control variate.
 */
export function receiveUpdate(m: Message, nParameters: number, scaffold: boolean, epochs: number, clipping = false, secureSum = false): ReceivedUpdate {
  const p = m.payload as UpdatePayload;
  if (secureSum) {
    // DP-FedAvg's noised secure sum (UPDATE_LAYOUT): the parameters and the survivors' count, built by the runtime from the layout
    lengthIs('parameters', p.parameters, nParameters);
    return { client: m.from, parameters: p.parameters, nSamples: p.nSamples, loss: NaN, epochs: NaN, clients: p.nSamples };
  }
  if (p.loss === undefined) throw new InvalidMessageError('an update needs its loss', 'loss is missing');
  if (clipping !== (p.clipped !== undefined)) {
    throw new InvalidMessageError(clipping ? 'a DP-FedAvg update says whether it clipped (clipped)' : 'clipped was not asked for (this server does not run DP-FedAvg)', clipping ? 'clipped is missing' : 'clipped was not asked for');
  }
  lengthIs('parameters', p.parameters, nParameters);
  if (p.epochs > epochs) throw new InvalidMessageError(`the update says it ran ${p.epochs} local epochs; ${epochs} were asked`, 'more epochs than asked');
  if (scaffold) {
    if (!p.controlDelta) throw new InvalidMessageError('a SCAFFOLD update needs controlDelta', 'controlDelta is missing');
    lengthIs('controlDelta', p.controlDelta, nParameters);
  } else if (p.controlDelta) {
    throw new InvalidMessageError('controlDelta was not asked for (this server does not run SCAFFOLD)', 'controlDelta was not asked for');
  }
  const update: ReceivedUpdate = { client: m.from, parameters: p.parameters, nSamples: p.nSamples, loss: p.loss, epochs: p.epochs, controlDelta: p.controlDelta };
  if (p.clipped !== undefined) update.clipped = p.clipped;
  return update;
}
