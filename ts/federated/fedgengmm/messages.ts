/**
 * The messages of FedGenGMM, declared once:
 *
 *   down 'fedgengmm/train'        {}                    fit your local mixture and upload it (once)
 *   up   'fedgengmm/local-model'  { model, nSamples }   the local parameters and |D_c|
 *   down 'fedgengmm/global-model' GMM parameters        the result, to every client that took part (no reply)
 */
import { InvalidMessageError } from '../../errors.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import { GMM_PARAMS, receiveGmmParams } from '../gmm-params.js';
import { defineMessage, record, wholeNumber, type PayloadOf } from '../messages/schema.js';
import type { Message } from '../messages/envelope.js';
import { defineProtocol } from '../runtime/roles.js';

/** Most components one upload may hold, and most rows it may claim: the synthetic set grows with both (as FedGEM's caps). */
export const MAX_COMPONENTS = 4096;
export const MAX_SAMPLES = 2 ** 48;

export const TRAIN = defineMessage('fedgengmm/train', record({}));
export const LOCAL_MODEL = defineMessage('fedgengmm/local-model', record({ model: GMM_PARAMS, nSamples: wholeNumber(0) }));
export const GLOBAL_MODEL = defineMessage('fedgengmm/global-model', GMM_PARAMS);

export const FEDGENGMM_PROTOCOL = defineProtocol('FedGenGMM', [
  [TRAIN, LOCAL_MODEL],
  [GLOBAL_MODEL, null],
]);

export type LocalModelPayload = PayloadOf<typeof LOCAL_MODEL>;

/**
 * Validates a received upload (the reasons do not name the sender: the
 * runtime does); the returned model belongs to the caller.
 */
export function receiveLocalModel(m: Message, nFeatures?: number): { model: GaussianMixture; nSamples: number } {
  const p = LOCAL_MODEL.read(m).payload;
  const n = p.nSamples;
  if (n < 1) throw new InvalidMessageError(`nSamples must be a positive integer (the rows behind the model), got ${n}`);
  if (n > MAX_SAMPLES) throw new InvalidMessageError(`nSamples is ${n}; at most 2^48 rows per client are accepted`);
  if (p.model.nComponents > MAX_COMPONENTS) throw new InvalidMessageError(`the model has ${p.model.nComponents} components; a client may upload at most ${MAX_COMPONENTS}`);
  const model = receiveGmmParams(p.model, undefined, nFeatures);
  const k = model.nComponents;
  if (k > n) {
    model.dispose();
    throw new InvalidMessageError(`${k} components cannot come from ${n} rows`);
  }
  return { model, nSamples: n };
}
