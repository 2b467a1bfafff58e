/**
 * The encoder a FedDistr server shares, read from the caller (readEncoder)
 * and applied to rows: identity, a PCA's projection, or an Autoencoder's code
 * layer (the network sent with its parameters). The clients encode their rows
 * with it before clustering, and the global model encodes the rows it
 * classifies with the same one, so both live in one latent space.
 */
import { Matrix } from '../../data/matrix.js';
import { PCA } from '../../data/pca.js';
import { FedmixError, formatValue, InvalidParameterError } from '../../errors.js';
import { Autoencoder } from '../../models/autoencoder.js';
import { Network } from '../../models/network.js';
import { guardRead, isFloat64Array, readRecord, requireInteger } from '../../validate.js';
import { MAX_DIMENSION, type DescribePayload } from './messages.js';

/** An encoder as DESCRIBE carries it. */
export type WireEncoder = DescribePayload['encoder'];

/** A PCA's parameters as the server shares them: mean (features) and components (dimension x features, row-major). */
export interface PcaEncoder {
  mean: Float64Array;
  components: Float64Array;
}

/**
 * The encoder as a caller gives it: 'identity' (needs the rows' `dimension`),
 * a fitted PCA or its { mean, components }, or a fitted Autoencoder (its code
 * layer's outputs; the network and its parameters are sent to the clients).
 */
export type FedDistrEncoder = 'identity' | PCA | PcaEncoder | Autoencoder;

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

/**
 * The encoder a caller gave, read once under guard (an instance's fields, a
 * record's arrays) and checked: what DESCRIBE carries. `dimension` is the
 * rows' number of features when given (an integer >= 1, checked by the
 * caller's declaration): the identity's latent dimension, or what a PCA's or
 * an Autoencoder's input width must be.
 */
export function readEncoder(given: unknown, dimension: number | undefined): WireEncoder {
  if (given === 'identity') {
    if (dimension === undefined) throw new InvalidParameterError("the identity encoder needs `dimension`: the rows' number of features");
    return { kind: 'identity', dimension: requireInteger('dimension', dimension, 1, MAX_DIMENSION) };
  }
  if (guardRead('encoder', () => given instanceof Autoencoder)) {
    const ae = given as Autoencoder;
    const f = ae.nFeatures;
    if (dimension !== undefined && dimension !== f) throw new InvalidParameterError(`dimension is ${dimension} but the Autoencoder takes ${f} features`);
    const o = ae.options;
    const sizes = [f, ...o.hiddenLayers, f];
    const codeLayer = ae.codeLayer;
    const k = sizes[codeLayer]!;
    if (k > MAX_DIMENSION) throw new InvalidParameterError(`the Autoencoder's code is ${k} wide; at most ${MAX_DIMENSION}`);
    return { kind: 'autoencoder', dimension: k, network: { sizes, activation: o.activation, outputActivation: o.outputActivation, loss: o.loss, parameters: ae.getParameters(), codeLayer } };
  }
  if (guardRead('encoder', () => given instanceof PCA)) {
    const pca = given as PCA;
    const mean = pca.mean;
    const components = pca.components;
    return checkPca(mean, components, dimension);
  }
  if (given !== null && typeof given === 'object') {
    const e = readRecord(given as PcaEncoder, ['mean', 'components'], 'encoder');
    if (!isFloat64Array(e.mean) || !isFloat64Array(e.components)) throw new InvalidParameterError('a PCA encoder is { mean: Float64Array, components: Float64Array } (or a fitted PCA)');
    return checkPca(e.mean.slice(), e.components.slice(), dimension);
  }
  throw new InvalidParameterError(`encoder must be 'identity', a fitted PCA or { mean, components }, or a fitted Autoencoder, got ${formatValue(given)}`);
}

function checkPca(mean: Float64Array, components: Float64Array, dimension: number | undefined): WireEncoder {
  const f = mean.length;
  if (f === 0 || components.length === 0 || components.length % f !== 0) throw new InvalidParameterError(`a PCA encoder's components (${components.length} values) must be a whole number of rows of its ${f} features`);
  for (const v of mean) if (!Number.isFinite(v)) throw new InvalidParameterError('the PCA encoder\'s mean holds a value that is not finite');
  for (const v of components) if (!Number.isFinite(v)) throw new InvalidParameterError('the PCA encoder\'s components hold a value that is not finite');
  const k = components.length / f;
  if (k > MAX_DIMENSION) throw new InvalidParameterError(`the PCA encoder has ${k} components; at most ${MAX_DIMENSION}`);
  if (dimension !== undefined && dimension !== f) throw new InvalidParameterError(`dimension is ${dimension} but the PCA encoder takes ${f} features`);
  return { kind: 'pca', dimension: k, mean, components };
}
