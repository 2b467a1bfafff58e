/**
 * Community association for unsupervised federated anomaly detection (Nardi,
 * Valerio, Passarella: Algorithm 1, mutual): clients whose rows are mostly one
 * pattern find, without labels, the others that share it.
 *
 *   round 1:  each client fits a local detector and uploads it (a OneClassSVM
 *             detector carries support vectors, which are client rows; a GMM
 *             detector only mixture parameters; an autoencoder its weights);
 *   round 2:  the server relays to each client its partners' detectors (all
 *             pairs, or s sampled partners); each client answers only
 *             b_ji = |in_ji - in_ii| <= q for each;
 *   the end:  mutual pairs are linked and the graph split into communities
 *             (fast greedy by default, or Louvain).
 */
export { CommunitiesClient, type CommunitiesClientOptions } from './client.js';
export { CommunitiesServer, type CommunitiesServerOptions, type Association, type AssociationDecision } from './server.js';
export { associate, type AssociateOptions, type AssociateResult } from './run.js';
export { COMMUNITIES_PROTOCOL, FIT as COMMUNITIES_FIT, DETECTOR as COMMUNITIES_DETECTOR, RELAY as COMMUNITIES_RELAY, DECISIONS as COMMUNITIES_DECISIONS } from './messages.js';
