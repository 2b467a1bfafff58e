/**
 * FedDistr (one-shot federated learning by disentangling client distributions
 * and matching them with the Hungarian algorithm), with Gaussian base
 * distributions in an encoder's latent space (the paper's equation 5).
 *
 *   round 1:  each client encodes its rows, clusters each task label's rows
 *             into base distributions and uploads their task labels, counts,
 *             means and covariances, once;
 *   server:   matches every pair of clients' base distributions (Kuhn-Munkres
 *             on 2-Wasserstein or Bhattacharyya costs, different task labels
 *             forbidden), joins parallel pairs into sets, keeps one
 *             representative per set and every orthogonal base;
 *   the end:  every client present receives the consolidated set; the
 *             global model is that set as a Bayes classifier, or an
 *             MLPClassifier trained on rows drawn from it (global.ts).
 */
export { FedDistrClient, gaussianSigma, MIN_SILHOUETTE, type FedDistrClientOptions, type FedDistrPrivacy } from './client.js';
export { FedDistrServer, type FedDistrServerOptions, type FedDistrOutcome, type FedDistrCost, type ConsolidatedBase, type MatchedPair, type PcaEncoder } from './server.js';
export { fedDistr, type FedDistrClientData, type FedDistrOptions, type FedDistrResult, type FedDistrEvaluation } from './run.js';
export { BaseDistributionClassifier, sampleBaseDistributions, type BaseDistributionClassifierOptions, type LabelledGaussian, type SampleBaseOptions, type SampledRows } from './global.js';
export { wasserstein2, bhattacharyya, type Gaussian, type CovarianceKind } from './gaussian.js';
export { type Shrinkage } from './covariance.js';
export { FEDDISTR_PROTOCOL, DESCRIBE as FEDDISTR_DESCRIBE, DISTRIBUTIONS as FEDDISTR_DISTRIBUTIONS, CONSOLIDATED as FEDDISTR_CONSOLIDATED } from './messages.js';
export { entangledCoefficient, averageEntanglement } from '../../partition/entangled.js';
