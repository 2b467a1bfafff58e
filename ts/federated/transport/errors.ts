import { FedmixError, type FedmixErrorCode } from '../../errors.js';

/**
 * A broker could not be started or stopped: a port in use, a missing or failing
 * mosquitto, a configuration it refused. The message carries the broker's own
 * words (mosquitto's log) where there are any.
 */
export class BrokerError extends FedmixError {
  constructor(message: string) {
    // 'TRANSPORT' is not yet a member of FedmixErrorCode: errors.ts belongs to
    // the main branch, where it should be added with this class.
    super('TRANSPORT' as FedmixErrorCode, message);
  }
}
