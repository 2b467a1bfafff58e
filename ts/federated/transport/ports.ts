/**
 * Free TCP ports (Node only). Bind port 0 and let the kernel choose rather than
 * guess: a guessed port may be taken, by another test run among others.
 */
import { createServer } from 'node:net';
import { BrokerError, formatValue, InvalidParameterError } from '../../errors.js';

/**
 * A port on `host` that was free a moment ago: for a process that must be told
 * its port in advance (mosquitto). A server of our own should listen on port 0
 * instead and read the port back, which leaves no window for another process.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  if (typeof host !== 'string' || host.length === 0) return Promise.reject(new InvalidParameterError(`host must be a non-empty string, got ${formatValue(host)}`));
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (e) => reject(new BrokerError(`no free port on ${host}: ${e.message}`)));
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `host:port` as a URL authority (IPv6 literals in brackets). */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
