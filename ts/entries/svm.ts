/**
 * fedmix/svm: OneClassSVM, with the 'svm' WebAssembly module's files (import
 * init and Matrix from fedmix/core). A bundler emits only the core's and the
 * svm module's files for a program that imports it and fedmix/core
 * (docs/browsers-and-workers.md).
 *
 * @module fedmix/svm
 */
import '../wasm/files-core.generated.js';
import '../wasm/files-svm.generated.js';

export {
  OneClassSVM,
  OCSVM_KERNELS,
  type OneClassSVMKernel,
  type OneClassSVMOptions,
  type ResolvedOneClassSVMOptions,
  type OneClassSVMJSON,
  type OneClassSVMArraysJSON,
} from '../models/one-class-svm.js';
