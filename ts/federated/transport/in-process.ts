/**
 * Clients in the server's own process: the default of every simulation. Each
 * message is encoded and decoded as it would be on a network, so a receiver
 * sees exactly what would cross one (only what the message declares), and its
 * bytes are counted for every client it goes to. A request sent to many
 * clients (a broadcast) is encoded and decoded once, and its clients share
 * the decoded request: requests are read-only to clients. With encoding
 * 'none', for simulations too large to encode every message, messages are
 * copied instead (nothing shared between server and clients) and their bytes
 * are the declared sizes (codec.ts copyMessage).
 */
import { FedmixError, formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead, readArray, readOptions, requireInteger } from '../../validate.js';
import { copyMessage, decodeMessage, DEFAULT_MAX_MESSAGE_BYTES, encodeMessage, type Encoding } from '../messages/codec.js';
import type { Message } from '../messages/envelope.js';
import { ClientHost } from '../runtime/client-host.js';
import type { ClientRole } from '../runtime/roles.js';
import { checkExchange, type Exchange, type ExchangeOptions, type Received, type SyncTransport } from './transport.js';

export interface InProcessOptions {
  /** 'binary' (Arrow IPC, default), 'json', or 'none' (copies; declared sizes) */
  encoding?: Encoding | 'none';
  /** per message, checked before decoding (default 64 MiB) */
  maxMessageBytes?: number;
}

export class InProcessTransport implements SyncTransport {
  readonly name = 'in-process';
  readonly encoding: Encoding | 'none';
  private readonly maxMessageBytes: number;
  private readonly hosts = new Map<string, ClientHost>();

  constructor(roles: readonly ClientRole[], given: InProcessOptions = {}) {
    if (!guardRead('clients', () => Array.isArray(roles))) throw new InvalidParameterError(`clients must be an array of client roles, got ${formatValue(roles)}`);
    const clients = readArray('clients', roles) as ClientRole[];
    const options = readOptions(given, ['encoding', 'maxMessageBytes']);
    const encoding = options.encoding ?? 'binary';
    if (encoding !== 'binary' && encoding !== 'json' && encoding !== 'none') throw new InvalidParameterError(`encoding must be 'binary', 'json' or 'none', got ${formatValue(encoding)}`);
    this.encoding = encoding;
    this.maxMessageBytes = requireInteger('maxMessageBytes', options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 1);
    for (const c of clients) {
      // ClientHost checks the role; its id is read here once
      const host = new ClientHost(c, { maxMessageBytes: this.maxMessageBytes });
      if (this.hosts.has(host.id)) throw new InvalidParameterError(`two clients have the id ${formatValue(host.id)}; ids must be distinct`);
      this.hosts.set(host.id, host);
    }
  }

  availableSync(): readonly string[] {
    return [...this.hosts.keys()];
  }

  available(): Promise<readonly string[]> {
    return Promise.resolve(this.availableSync());
  }

  users(id: string): number {
    return this.hosts.get(id)?.users ?? 1;
  }

  exchangeSync(_round: number, requests: ReadonlyMap<string, Message>, exchangeOptions: ExchangeOptions): Exchange {
    const { messages, options } = checkExchange(requests, exchangeOptions);
    const { out, deliveries } = this.plan(messages);
    try {
      for (const { id, host, wire } of deliveries) {
        const reply = this.deliverSync(host, wire);
        if (options.replies && reply !== undefined) out.received.set(id, [reply]);
      }
    } finally {
      requestsDone(deliveries);
    }
    return out;
  }

  async exchange(_round: number, requests: ReadonlyMap<string, Message>, exchangeOptions: ExchangeOptions): Promise<Exchange> {
    const { messages, options } = checkExchange(requests, exchangeOptions);
    const { out, deliveries } = this.plan(messages);
    // one client at a time, as a simulation on one thread runs them; each may await
    try {
      for (const { id, host, wire } of deliveries) {
        const reply = await this.deliver(host, wire);
        if (options.replies && reply !== undefined) out.received.set(id, [reply]);
      }
    } finally {
      requestsDone(deliveries);
    }
    return out;
  }

  /** What goes to whom: a message sent to many clients is encoded once (a broadcast); each client decodes its own copy. */
  private plan(messages: ReadonlyMap<string, Message>): { out: Exchange; deliveries: { id: string; host: ClientHost; wire: Wire }[] } {
    const out: Exchange = { sent: new Map(), received: new Map(), missing: new Map() };
    const deliveries: { id: string; host: ClientHost; wire: Wire }[] = [];
    const encoded = new Map<Message, Wire>();
    for (const [id, m] of messages) {
      const host = this.hosts.get(id);
      let wire = encoded.get(m);
      if (!wire) encoded.set(m, (wire = this.wire(m)));
      out.sent.set(id, wire.bytes);
      if (host) deliveries.push({ id, host, wire });
      else out.missing.set(id, { kind: 'dropout', reason: `${id} is not among the clients` });
    }
    return { out, deliveries };
  }

  private wire(m: Message): Wire {
    if (this.encoding === 'none') {
      const { message, bytes } = copyMessage(m);
      return { copy: message, bytes };
    }
    const bytes = encodeMessage(m, this.encoding);
    // decoded once, as each client that gets it would (they all have the same limit)
    let decoded: Message | FedmixError;
    try {
      decoded = decodeMessage(bytes, { maxBytes: this.maxMessageBytes });
    } catch (e) {
      if (!(e instanceof FedmixError)) throw e;
      decoded = e;
    }
    return { decoded, bytes: bytes.length, encoding: this.encoding };
  }

  private deliverSync(host: ClientHost, wire: Wire): Received | undefined {
    return 'copy' in wire ? host.handleCopySync(wire.copy) : host.handleDecodedSync(wire.decoded, wire.encoding);
  }

  private deliver(host: ClientHost, wire: Wire): Promise<Received | undefined> {
    return 'copy' in wire ? host.handleCopy(wire.copy) : host.handleDecoded(wire.decoded, wire.encoding);
  }
}

type Wire = { decoded: Message | FedmixError; bytes: number; encoding: Encoding } | { copy: Message; bytes: number };

/** Every client is done with the requests of the exchange (shared ones only now, when all have answered). */
function requestsDone(deliveries: readonly { host: ClientHost; wire: Wire }[]): void {
  for (const { host, wire } of deliveries) host.requestDone('copy' in wire ? wire.copy : wire.decoded);
}
