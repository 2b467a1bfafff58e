/**
 * The FedAvg family: federated training of a network's parameters by
 * averaging. FedAvg (McMahan et al. 2017), FedProx (Li et al. 2020: a
 * proximal term keeps local training near the global parameters) and
 * SCAFFOLD (Karimireddy et al. 2020: control variates correct client drift)
 * are three server roles over one client role and one protocol.
 *
 *   each round:  the sampled clients set the global parameters, train E local
 *                epochs of batch B and send their parameters (and SCAFFOLD's
 *                control change) with their row counts;
 *   the server:  averages them (by row count, equally, or by a robust rule)
 *                into the next global parameters;
 *   the end:     every client present receives the final parameters.
 */
export { FedAvgClient, localEpochSeed, type FedAvgClientOptions } from './client.js';
export { DEFAULT_EPOCHS, DEFAULT_OPTIMIZER, FedAvgServer, FedProxServer, ScaffoldServer, type FedAvgAlgorithm, type FedAvgServerOptions, type FedProxServerOptions, type ScaffoldServerOptions, type FedAvgOutcome, type FedAvgRound } from './server.js';
export { type EarlyStoppingOptions } from '../../models/early-stopping.js';
export { fedAvg, type FedAvgClientData, type FedAvgOptions, type FedAvgResult } from './run.js';
export { FEDAVG_PROTOCOL, TRAIN as FEDAVG_TRAIN, UPDATE as FEDAVG_UPDATE, RESULT as FEDAVG_RESULT } from './messages.js';
