/**
 * The algorithms by name, for everything that builds roles from plain data
 * rather than code: a worker thread creating its clients, the `fedmix server`
 * and `fedmix client` commands, serve() and join(). Each algorithm is one
 * descriptor in the registry (./registry/); this module is its entry with the
 * built-in algorithms registered.
 */
export { ALGORITHMS, algorithm, makeClient, makeServer, matrixData, resultJson, loadResult, type AlgorithmName, type ClientSpec, type MatrixData } from './registry/index.js';
