/** The one message of FedGenGMM: a client's local mixture and how many rows it was fitted on. */
import { InvalidMessageError } from '../../errors.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import { receiveGmmParams, type GmmParams } from '../gmm-params.js';
import type { Message } from '../message.js';

export const LOCAL_MODEL = 'fedgengmm/local-model';
/** the server's answer: the global model, sent to every client that took part */
export const GLOBAL_MODEL = 'fedgengmm/global-model';

export interface LocalModelPayload {
  model: GmmParams;
  /** |D_c|, the rows behind the model (the server weights components by it) */
  nSamples: number;
}

export type LocalModelMessage = Message<typeof LOCAL_MODEL, LocalModelPayload>;

/** Validates a received upload; the returned model belongs to the caller. */
export function receiveLocalModel(m: Message, nFeatures?: number): { model: GaussianMixture; nSamples: number } {
  const who = `client ${m.from}`;
  const p = m.payload as Partial<LocalModelPayload> | null;
  if (p === null || typeof p !== 'object') throw new InvalidMessageError(`${who}: the payload must be an object`);
  const n = p.nSamples;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw new InvalidMessageError(`${who}: nSamples must be a positive integer (the rows behind the model), got ${String(n)}`);
  }
  const model = receiveGmmParams(p.model, who, nFeatures);
  if (model.nComponents > n) {
    model.dispose();
    throw new InvalidMessageError(`${who}: ${model.nComponents} components cannot come from ${n} rows`);
  }
  return { model, nSamples: n };
}
