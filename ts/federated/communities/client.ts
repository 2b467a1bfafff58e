/**
 * A client of community association: it fits its local detector on its own
 * rows (FIT) and uploads it; then, sent its partners' detectors (RELAY), it
 * applies each to its own training rows and answers, for each partner j,
 * only b_ji = |in_ji - in_ii| <= q, where in_ji is the share of its rows
 * j's detector calls inliers and in_ii the share its own does.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { InvalidDataError, InvalidMessageError } from '../../errors.js';
import { LocalDetector, type LocalDetectorJSON } from '../../models/detectors.js';
import type { Message } from '../messages/envelope.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import { COMMUNITIES_PROTOCOL, DECISIONS, DETECTOR, FIT, RELAY, type RelayPayload } from './messages.js';
import { checkClientOptions, type CommunitiesClientOptions } from './options.js';

export type { CommunitiesClientOptions } from './options.js';

export class CommunitiesClient implements ClientRole {
  readonly id: string;
  readonly protocol = COMMUNITIES_PROTOCOL;
  readonly nSamples: number;
  private readonly X: Matrix;
  private readonly detector: LocalDetector;
  /** in_ii: the share of its rows its own detector calls inliers (once fitted) */
  private own: number | undefined;

  /** Options read here (checkClientOptions), unless they are what it returned; the detector's are checked by the model. */
  constructor(id: string, data: MatrixLike, options: CommunitiesClientOptions = {}) {
    this.id = requireClientId(id);
    const o = checkClientOptions(options);
    this.X = Matrix.from(data);
    this.nSamples = this.X.nRows;
    this.detector = new LocalDetector(o.detector);
    if (this.X.nRows < this.detector.minRows) {
      throw new InvalidDataError(`client ${id} has ${this.X.nRows} rows; its '${this.detector.kind}' detector needs at least ${this.detector.minRows}`);
    }
  }

  /** in_ii, once the detector is fitted. */
  get ownInlierShare(): number | undefined {
    return this.own;
  }

  respond(request: Message): Message {
    const m = readRequest(this.protocol, request);
    switch (m.kind) {
      case FIT.kind:
        this.detector.fit(this.X);
        this.own = this.detector.trainingInlierShare;
        return DETECTOR.create(this.id, m.round, { detector: typedParts(this.detector.toJSON()) });
      case RELAY.kind:
        return this.decide(m.round, m.payload as RelayPayload);
      default:
        throw new InvalidMessageError(`a communities client does not answer ${m.kind}`);
    }
  }

  private decide(round: number, p: RelayPayload): Message {
    if (this.own === undefined) throw new InvalidMessageError('partners arrived before this client fitted its detector');
    if (!(p.q >= 0 && p.q <= 1)) throw new InvalidMessageError(`q is ${p.q}; it must be in [0, 1]`);
    const tokens = new Uint32Array(p.partners.length);
    const accept: boolean[] = [];
    p.partners.forEach((partner, i) => {
      tokens[i] = partner.token;
      let det: LocalDetector | undefined;
      try {
        det = LocalDetector.fromJSON(partner.detector as LocalDetectorJSON);
        if (det.nFeatures !== this.X.nCols) throw new InvalidMessageError(`partner ${partner.token}'s detector takes ${det.nFeatures} features; this client has ${this.X.nCols}`);
        accept.push(Math.abs(det.inlierShare(this.X) - this.own!) <= p.q);
      } finally {
        det?.dispose();
      }
    });
    return DECISIONS.create(this.id, round, { partners: tokens, accept });
  }

  dispose(): void {
    this.detector.dispose();
  }
}

/**
 * The detector with its arrays as typed arrays (toJSON gives number arrays,
 * for JSON.stringify): the binary wire then carries them as columns rather
 * than as JSON text (a OneClassSVM's support vectors: 10^5-10^6 numbers).
 */
function typedParts(j: LocalDetectorJSON): LocalDetectorJSON {
  const f64 = (a: ArrayLike<number>) => new Float64Array(a);
  if (j.ocsvm) return { ...j, ocsvm: { ...j.ocsvm, supportVectors: f64(j.ocsvm.supportVectors), dualCoef: f64(j.ocsvm.dualCoef) } };
  if (j.gmm) return { ...j, gmm: { ...j.gmm, weights: f64(j.gmm.weights), means: f64(j.gmm.means), covariances: f64(j.gmm.covariances) } };
  // an autoencoder's parameters are float32 values already (its toJSON widens them)
  if (j.autoencoder) return { ...j, autoencoder: { ...j.autoencoder, parameters: new Float32Array(j.autoencoder.parameters) } };
  return j;
}
