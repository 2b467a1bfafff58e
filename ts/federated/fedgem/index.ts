/**
 * FedGEM (federated generalized EM for mixtures with an unknown number of
 * components): clients with overlapping subsets of the clusters train
 * isotropic mixtures together without knowing how many clusters exist; the
 * server learns which client components are the same cluster and estimates the
 * global K (Algorithm 1 of the paper; see server.ts).
 *
 *   spread:  when the variance is not known, clients report their rows'
 *            within-cluster sum of squares around local k-means clusters and
 *            its degrees of freedom; the server pools them into sigma^2 and
 *            sends it with every later request;
 *   rounds:  clients take L local EM steps and upload (maximizer, radius) per
 *            component; the server moves each component to the average of the
 *            meeting points of its overlaps and sends the centers back;
 *   final:   clients upload their centers; the server merges overlapping ones
 *            (final radius phi * delta_c / sqrt(n_c)) into super-clusters;
 *   tuning:  with several phi, the clients score each candidate's global
 *            centers by the silhouette of their validation rows; the smallest
 *            phi within one standard error of the best mean silhouette wins;
 *   result:  each client learns its components' super-clusters and takes
 *            their centers; its weights stay its own (personalization).
 */
export { FedGEMClient, type FedGEMClientOptions } from './client.js';
export { FedGEMServer, PHI_GRID, type FedGEMServerOptions, type FedGEMOutcome, type Merge, type RoundSummary, type VarianceEstimate } from './server.js';
export { fedGEM, type FedGEMOptions, type FedGEMResult } from './run.js';
export { centerNoiseStd, type PrivacyOptions } from './privacy.js';
export { FEDGEM_PROTOCOL, SPREAD, SPREAD_SUMS, ROUND, BALLS, FINISH, FINAL, CANDIDATES, SILHOUETTES, RESULT } from './messages.js';
