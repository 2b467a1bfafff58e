/**
 * fedmix/node: what only Node can do, beside the library (import both):
 * clients in worker threads, the embedded MQTT broker and mosquitto's
 * configuration, serving and joining federations from files and processes.
 */
export { WorkerTransport, type WorkerTransportOptions } from './federated/transport/workers.js';
export { ALGORITHMS, makeClient, makeServer, matrixData, type AlgorithmName, type ClientSpec, type MatrixData } from './federated/algorithms.js';
