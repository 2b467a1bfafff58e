/**
 * The messages of community association (Nardi, Valerio, Passarella,
 * Algorithm 1), declared once.
 *
 *   server -> client  FIT        fit your local detector on your rows
 *   client -> server  DETECTOR   the fitted detector (LocalDetector's JSON:
 *                                kind, threshold, and one model's parts; a
 *                                OneClassSVM's support vectors are rows of
 *                                the client's data)
 *   server -> client  RELAY      the detectors of the partners this client
 *                                tests, each under a token (the server's
 *                                number for the partner: no client ids
 *                                travel), and the tolerance q
 *   client -> server  DECISIONS  for each token it was sent, whether it
 *                                accepts the partner: |in_ji - in_ii| <= q;
 *                                nothing else (no shares, no scores)
 */
import { MAX_LAYERS } from '../messages/network.js';
import { InvalidMessageError } from '../../errors.js';
import { DETECTOR_KINDS, type LocalDetectorJSON } from '../../models/detectors.js';
import { ACTIVATIONS } from '../../models/network.js';
import { COVARIANCE_TYPES, covarianceLength } from '../../models/gaussian-mixture.js';
import { OCSVM_KERNELS } from '../../models/one-class-svm.js';
import { LIMITS } from '../../validate.js';
import { lengthIs } from '../messages/checks.js';
import type { Message } from '../messages/envelope.js';
import { defineMessage, f32Array, f64Array, finiteNumber, flag, listOf, literal, oneOf, optional, record, u32Array, wholeNumber, type PayloadOf } from '../messages/schema.js';
import { defineProtocol } from '../runtime/roles.js';

/** Most partners one client is sent in a round (a federation of more clients uses the sampled variant). */
export const MAX_PARTNERS = 4096;

export const DETECTOR_SCHEMA = record({
  format: literal('fedmix.LocalDetector'),
  version: literal(1),
  kind: oneOf(DETECTOR_KINDS),
  contamination: finiteNumber(),
  threshold: finiteNumber(),
  nFeatures: wholeNumber(1, LIMITS.values),
  ocsvm: optional(record({ kernel: oneOf(OCSVM_KERNELS), gamma: finiteNumber(), nu: finiteNumber(), supportVectors: f64Array(), dualCoef: f64Array(), offset: finiteNumber() })),
  gmm: optional(record({ covarianceType: oneOf(COVARIANCE_TYPES), weights: f64Array(), means: f64Array(), covariances: f64Array() })),
  autoencoder: optional(record({ sizes: listOf(wholeNumber(1, LIMITS.layerWidth), MAX_LAYERS + 1), activation: oneOf(ACTIVATIONS), outputActivation: oneOf(ACTIVATIONS), parameters: f32Array() })),
});

export const FIT = defineMessage('communities/fit', record({}));
export const DETECTOR = defineMessage('communities/detector', record({ detector: DETECTOR_SCHEMA }));
export const RELAY = defineMessage(
  'communities/relay',
  record({
    q: finiteNumber(),
    partners: listOf(record({ token: wholeNumber(0, 2 ** 32 - 1), detector: DETECTOR_SCHEMA }), MAX_PARTNERS),
  }),
);
export const DECISIONS = defineMessage('communities/decisions', record({ partners: u32Array(), accept: listOf(flag(), MAX_PARTNERS) }));

export const COMMUNITIES_PROTOCOL = defineProtocol('Communities', [
  [FIT, DETECTOR],
  [RELAY, DECISIONS],
]);

export type DetectorPayload = PayloadOf<typeof DETECTOR>;
export type RelayPayload = PayloadOf<typeof RELAY>;
export type DecisionsPayload = PayloadOf<typeof DECISIONS>;
export type WireDetector = DetectorPayload['detector'];

/**
 * A detector as the server takes it: of the kind and dimension the server
 * expects, carrying exactly its kind's parts, each of the right length (the
 * schema has already refused NaN, infinities and undeclared fields).
 *
 * An honest client's detector always passes, whatever its rows (tested on
 * digits under IID, Dirichlet 0.1 and 0.3, one-class, quantity-skew
 * partitions down to a client of one row, and 8 rows of 64 features, every
 * kind: test/honest-communities-fedavg.test.ts). Its kind, contamination and
 * dimension are the federation's: CommunitiesClient fits the detector its
 * options name on rows of the federation's features, and LocalDetector.toJSON
 * writes exactly that model's parts, in f64 that both wires carry exactly. A
 * fitted mixture has 1 to nComponents components (bounded as here when its
 * options were checked), non-negative weights (EM's, or the noise's floored
 * at 1e-6) and covariances with regCovar on the diagonal, so positive
 * definite: it loads. A fitted OneClassSVM has at least one support vector (a
 * client of one row: that row), gamma > 0 ('auto' is 1/d; 'scale' falls back
 * to 1 for constant rows, as scikit-learn) and the nu its options checked. An
 * autoencoder detector's layers run from d through its hidden widths back to
 * d, its parameters counted by the same sizes.
 */
export function receiveDetector(m: Message, kind: string, nFeatures: number, contamination: number): LocalDetectorJSON {
  const det = (m.payload as DetectorPayload).detector;
  if (det.kind !== kind) throw new InvalidMessageError(`the detector is '${det.kind}'; this federation uses '${kind}'`, 'the detector is of another kind');
  if (det.nFeatures !== nFeatures) throw new InvalidMessageError(`the detector takes ${det.nFeatures} features; the federation's rows have ${nFeatures}`, 'the detector has the wrong dimension');
  if (det.contamination !== contamination) throw new InvalidMessageError(`the detector's contamination is ${det.contamination}; the federation's is ${contamination}`, 'the detector has another contamination');
  for (const other of DETECTOR_KINDS) {
    if ((other === kind) !== (det[other] !== undefined)) throw new InvalidMessageError(`a '${kind}' detector carries exactly its ${kind} field`, 'the detector carries the wrong parts');
  }
  const d = nFeatures;
  if (det.gmm) {
    const k = det.gmm.weights.length;
    if (k < 1 || k > LIMITS.components) throw new InvalidMessageError(`the mixture has ${k} components; 1 to ${LIMITS.components} are accepted`, 'the mixture has no or too many components');
    lengthIs('gmm.means', det.gmm.means, k * d);
    lengthIs('gmm.covariances', det.gmm.covariances, covarianceLength(det.gmm.covarianceType, k, d));
    for (const w of det.gmm.weights) if (!(w >= 0)) throw new InvalidMessageError('the mixture weights must be >= 0', 'a mixture weight is negative');
  }
  if (det.ocsvm) {
    const n = det.ocsvm.dualCoef.length;
    if (n < 1) throw new InvalidMessageError('a one-class SVM needs at least one support vector', 'no support vectors');
    lengthIs('ocsvm.supportVectors', det.ocsvm.supportVectors, n * d);
    if (!(det.ocsvm.gamma > 0) || !(det.ocsvm.nu > 0 && det.ocsvm.nu <= 1)) throw new InvalidMessageError('gamma must be > 0 and nu in (0, 1]', 'gamma or nu out of range');
  }
  if (det.autoencoder) {
    const s = det.autoencoder.sizes;
    if (s.length < 3 || s[0] !== d || s[s.length - 1] !== d) throw new InvalidMessageError(`the autoencoder's layers must run from ${d} features back to ${d}`, 'the autoencoder has the wrong dimension');
    let count = 0;
    for (let i = 1; i < s.length; i++) count += s[i - 1]! * s[i]! + s[i]!;
    lengthIs('autoencoder.parameters', det.autoencoder.parameters, count);
  }
  return det as LocalDetectorJSON;
}
