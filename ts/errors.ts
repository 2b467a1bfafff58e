/**
 * Every error fedmix throws is a FedmixError; the subclass (and `code`) says
 * what kind of problem it is, the message says what to change.
 */
export type FedmixErrorCode = 'INVALID_DATA' | 'INVALID_PARAMETER' | 'INVALID_MESSAGE' | 'FEDERATION' | 'NUMERICAL' | 'NOT_FITTED' | 'WASM';

export class FedmixError extends Error {
  readonly code: FedmixErrorCode;
  constructor(code: FedmixErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The data cannot be used as given: NaN/Inf, empty, wrong shape, too few rows. */
export class InvalidDataError extends FedmixError {
  constructor(message: string) {
    super('INVALID_DATA', message);
  }
}

/** An option or initial parameter is out of range, of the wrong type or shape. */
export class InvalidParameterError extends FedmixError {
  constructor(message: string) {
    super('INVALID_PARAMETER', message);
  }
}

/**
 * A federated message that cannot be accepted: malformed envelope, wrong shapes,
 * NaN/Inf, negative counts or weights, a covariance that is not positive
 * definite. The receiving role rejects it without changing its state.
 */
export class InvalidMessageError extends FedmixError {
  /**
   * Which check failed, without the sender's values or its id (e.g. "u has a
   * negative entry"), where `message` gives them: what a private aggregator
   * passes on. Undefined when the message holds nothing of the sender's data.
   */
  readonly check: string | undefined;
  constructor(message: string, check?: string) {
    super('INVALID_MESSAGE', message);
    this.check = check;
  }
}

/**
 * What one client contributed made a round's aggregate fail (a numerical
 * breakdown its removal cures), found by the server while aggregating: the
 * server's state is unchanged, and the runtime excludes `client` as it would
 * for an invalid reply, then aggregates the others again.
 */
export class ContributionError extends InvalidMessageError {
  constructor(
    readonly client: string,
    message: string,
    check?: string,
  ) {
    super(message, check);
  }
}

/**
 * A federation cannot go on: too few clients joined or answered a round, a
 * client failed under the 'fail' policy, a transport closed. The server's
 * state is as it was after the last complete round.
 */
export class FederationError extends FedmixError {
  constructor(message: string) {
    super('FEDERATION', message);
  }
}

/**
 * A broker could not be started or stopped: a port in use, a missing or
 * failing mosquitto, a configuration it refused. The message carries the
 * broker's own words (mosquitto's log) where there are any.
 */
export class BrokerError extends FederationError {}

/** Fitting broke down numerically (a singular covariance, a non-finite likelihood). */
export class NumericalError extends FedmixError {
  constructor(message: string) {
    super('NUMERICAL', message);
  }
}

/** A method that needs a fitted model was called before fit() or after dispose(). */
export class NotFittedError extends FedmixError {
  constructor(message: string) {
    super('NOT_FITTED', message);
  }
}

/** The WebAssembly core is not initialized, failed to load or trapped. */
export class WasmError extends FedmixError {
  constructor(message: string) {
    super('WASM', message);
  }
}

/**
 * WASM memory cannot hold what a call needs: refused before the call by
 * TypeScript's estimate, or reported by the core, whose large allocations
 * fail with a status instead of a trap. Unlike after a trap the instance is
 * intact: every model made before it keeps working, and the same request
 * succeeds once memory is freed. The code stays 'WASM': like a trap it is the
 * machine's limit, not the input's fault, so nothing retells it as an input
 * error (restated) and federated runs do not blame a client's message for it
 * (a client host turns it into the client's refusal).
 */
export class WasmAllocationError extends WasmError {}

/**
 * Maps a failed status of the C ABI to its class, by the status's name in the
 * core's table (ErrorKind in fedmix-core; see ts/wasm/constants.ts).
 */
export function errorFromStatus(status: number, name: string | undefined, message: string): FedmixError {
  switch (name) {
    case 'invalid_data':
      return new InvalidDataError(message);
    case 'invalid_parameter':
      return new InvalidParameterError(message);
    case 'numerical':
      return new NumericalError(message);
    case 'allocation':
      return new WasmAllocationError(message);
    default:
      return new WasmError(`unexpected status ${status} from the WASM core: ${message}`);
  }
}

/**
 * `e` told again by `restate` when it is a fedmix error about the input (any
 * code but WASM: a trap or a failed allocation is the machine's, not the
 * input's, and stays as it is); anything else untouched. For catch blocks
 * that add context or turn a check's verdict into another kind of error.
 */
export function restated(e: unknown, restate: (error: FedmixError) => FedmixError): unknown {
  return e instanceof FedmixError && e.code !== 'WASM' ? restate(e) : e;
}

/** `e` as the same kind of error with `context` before its message (see restated). */
export function inContext(e: unknown, context: string): unknown {
  return restated(e, (x) => new (x.constructor as new (message: string) => FedmixError)(`${context}: ${x.message}`));
}
