/**
 * FedGenGMM, one-shot federated Gaussian mixtures (Zhang Pettersson, Liang,
 * Andresen): clients fit local mixtures and upload them once; the server fits
 * the global mixture on data sampled from their union, or (serverStep
 * 'hierarchical') reduces the union by hierarchical EM without sampling.
 */
export { FedGenGMMClient, type FedGenGMMClientOptions } from './client.js';
export { FedGenGMMServer, SERVER_STEPS, type FedGenGMMServerOptions, type ServerStep, type Aggregate as FedGenGMMAggregate } from './server.js';
export { fedGenGMM, type FedGenGMMOptions, type FedGenGMMResult } from './run.js';
export { FEDGENGMM_PROTOCOL, TRAIN, LOCAL_MODEL, GLOBAL_MODEL, receiveLocalModel, type LocalModelPayload } from './messages.js';
