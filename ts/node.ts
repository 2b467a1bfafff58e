/**
 * fedmix/node: what only Node can do, beside the library (import both; they
 * share one copy of it): clients in worker threads, the embedded MQTT broker
 * and mosquitto's configuration, serving a federation, and reading
 * Fashion-MNIST from a folder.
 *
 * @module fedmix/node
 */
import * as apacheArrow from 'apache-arrow';
import { provideArrow } from './data/arrow-library.js';

// Node downloads nothing: Arrow output and IPC input work at once, without loadArrow()
provideArrow(apacheArrow);

export { WorkerTransport, type WorkerTransportOptions } from './federated/transport/workers.js';
export { ALGORITHMS, makeClient, makeServer, matrixData, resultJson, type AlgorithmName, type ClientSpec, type MatrixData } from './federated/algorithms.js';
export { startBroker, type BrokerOptions, type BrokerTls, type RunningBroker } from './federated/transport/broker.js';
export type { BrokerLimits } from './federated/transport/limits.js';
export {
  startMosquitto,
  writeMosquittoConfig,
  mosquittoConfig,
  MOSQUITTO,
  MOSQUITTO_PASSWD,
  type MosquittoConfigOptions,
  type MosquittoFiles,
  type StartMosquittoOptions,
  type RunningMosquitto,
} from './federated/transport/mosquitto.js';
export { freePort } from './federated/transport/ports.js';
export { FileLedgerStore } from './federated/ledger-file.js';
export { serve, SERVER_USER, type ServeOptions } from './federated/serve.js';
export { loadFashionMnist, FASHION_MNIST_DIR, FASHION_MNIST_PACKAGE, type LoadFashionMnistOptions } from './data/datasets/fashion-mnist-node.js';
