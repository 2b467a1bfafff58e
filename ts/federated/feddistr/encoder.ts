/**
 * The encoder a FedDistr server shares, applied to rows: identity, a PCA's
 * projection, or an Autoencoder's code layer (the network sent with its
 * parameters). The clients encode their rows with it before clustering, and
 * the global model encodes the rows it classifies with the same one, so both
 * live in one latent space.
 */
import { Matrix } from '../../data/matrix.js';
import { FedmixError } from '../../errors.js';
import { Network } from '../../models/network.js';
import type { DescribePayload } from './messages.js';

/** An encoder as DESCRIBE carries it. */
export type WireEncoder = DescribePayload['encoder'];

type ErrorClass = new (message: string) => FedmixError;

/**
 * The rows of X encoded: n x d, row-major. `who` names the rows' owner in
 * errors, and `Err` is the error a mismatch raises (a client refusing the
 * server's encoder raises InvalidMessageError, a caller's rows InvalidDataError).
 */
export function encodeRows(X: Matrix, e: WireEncoder, who: string, Err: ErrorClass): Float64Array {
  const n = X.nRows;
  const f = X.nCols;
  const d = e.dimension;
  if (e.kind === 'identity') {
    if (d !== f) throw new Err(`the identity encoder's dimension is ${d}; ${who} rows have ${f} features`);
    const Z = new Float64Array(n * d);
    for (let j = 0; j < d; j++) for (let i = 0; i < n; i++) Z[i * d + j] = X.data[j * n + i]!;
    return Z;
  }
  if (e.kind === 'autoencoder') return autoencode(X, e, who, Err);
  if (!e.mean || !e.components) throw new Err('a PCA encoder needs its mean and components');
  if (e.mean.length !== f || e.components.length !== d * f) {
    throw new Err(`the PCA encoder takes ${e.mean.length} features to ${d}; ${who} rows have ${f} features`);
  }
  const Z = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    for (let r = 0; r < d; r++) {
      let s = 0;
      for (let j = 0; j < f; j++) s += (X.data[j * n + i]! - e.mean[j]!) * e.components[r * f + j]!;
      Z[i * d + r] = s;
    }
  }
  return Z;
}

/** The code layer's outputs of the encoder network (n x d, row-major). */
function autoencode(X: Matrix, e: WireEncoder, who: string, Err: ErrorClass): Float64Array {
  const w = e.network;
  const d = e.dimension;
  if (!w) throw new Err('an autoencoder encoder needs its network');
  const f = X.nCols;
  if (w.sizes[0] !== f) throw new Err(`the encoder network takes ${w.sizes[0]} inputs; ${who} rows have ${f} features`);
  if (!(w.codeLayer < w.sizes.length) || w.sizes[w.codeLayer] !== d) throw new Err(`the encoder's code layer ${w.codeLayer} is not ${d} wide`);
  let net: Network;
  try {
    net = new Network({ sizes: w.sizes, activation: w.activation, outputActivation: w.outputActivation, loss: w.loss });
  } catch (x) {
    if (x instanceof FedmixError && x.code !== 'WASM') throw new Err(`the encoder network cannot be built: ${x.message}`);
    throw x;
  }
  try {
    net.setParameters(w.parameters);
    const code = net.layerOutputs(X, w.codeLayer);
    const n = X.nRows;
    const Z = new Float64Array(n * d);
    for (let j = 0; j < d; j++) for (let i = 0; i < n; i++) Z[i * d + j] = code.data[j * n + i]!;
    return Z;
  } catch (x) {
    if (x instanceof FedmixError && x.code !== 'WASM') throw new Err(`the encoder network refused: ${x.message}`);
    throw x;
  } finally {
    net.dispose();
  }
}
