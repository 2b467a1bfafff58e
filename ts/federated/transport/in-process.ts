/**
 * Clients in the server's own process: the default of every simulation. Each
 * message is encoded and decoded as it would be on a network, so a receiver
 * sees exactly what would cross one (only what the message declares), and its
 * bytes are counted for every client it goes to. A request sent to many
 * clients (a broadcast) is encoded and decoded once, and its clients share
 * the decoded request: requests are read-only to clients. A binary reply is
 * handed over without its Arrow bytes (codec.ts BinaryInProcess): the server
 * decodes from it what it would from them, with the same checks, and counts
 * their exact size. With encoding
 * 'none', for simulations too large to encode every message, messages are
 * copied instead (nothing shared between server and clients) and their bytes
 * are the declared sizes (codec.ts copyMessage).
 */
import { FedmixError, formatValue, InvalidParameterError } from '../../errors.js';
import { LIMITS, guardRead, isArray, readArray, readOptions, requireInteger } from '../../validate.js';
import { copyMessage, decodeMessage, DEFAULT_MAX_MESSAGE_BYTES, encodeMessage, type Encoding } from '../messages/codec.js';
import type { Message } from '../messages/envelope.js';
import { ClientHost } from '../runtime/client-host.js';
import type { ClientBudget } from '../runtime/client-budget.js';
import type { ClientRole } from '../runtime/roles.js';
import { checkExchange, type Exchange, type ExchangeOptions, type Received, type SyncTransport } from './transport.js';

export interface InProcessOptions {
  /** 'binary' (Arrow IPC, default), 'json', or 'none' (copies; declared sizes) */
  encoding?: Encoding | 'none';
  /** per message, checked before decoding (default 64 MiB) */
  maxMessageBytes?: number;
  /** clients' own privacy budgets, by client id (ClientBudget.open; runtime/client-budget.ts): answered only with runFederation (async) */
  budgets?: ReadonlyMap<string, ClientBudget>;
}

export class InProcessTransport implements SyncTransport {
  readonly name = 'in-process';
  readonly encoding: Encoding | 'none';
  private readonly maxMessageBytes: number;
  private readonly hosts = new Map<string, ClientHost>();

  constructor(roles: readonly ClientRole[], given: InProcessOptions = {}) {
    if (!isArray('clients', roles)) throw new InvalidParameterError(`clients must be an array of client roles, got ${formatValue(roles)}`);
    const clients = readArray('clients', roles, LIMITS.clients) as ClientRole[];
    const options = readOptions(given, ['encoding', 'maxMessageBytes', 'budgets']);
    if (options.budgets !== undefined && !(options.budgets instanceof Map)) throw new InvalidParameterError(`budgets must be a Map from client id to its ClientBudget, got ${formatValue(options.budgets)}`);
    const encoding = options.encoding ?? 'binary';
    if (encoding !== 'binary' && encoding !== 'json' && encoding !== 'none') throw new InvalidParameterError(`encoding must be 'binary', 'json' or 'none', got ${formatValue(encoding)}`);
    this.encoding = encoding;
    this.maxMessageBytes = requireInteger('maxMessageBytes', options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 1);
    for (const c of clients) {
      // ClientHost checks the role; its id is read here once
      const budget = options.budgets === undefined ? undefined : options.budgets.get(guardRead('a client id', () => (c as { id?: unknown }).id) as string);
      const host = new ClientHost(c, { maxMessageBytes: this.maxMessageBytes, ...(budget !== undefined ? { budget } : {}) });
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
    const wires = new Wires(this, deliveries);
    try {
      for (const d of deliveries) {
        const wire = wires.take(d, out);
        const reply = this.deliverSync(d.host, wire);
        if (options.replies && reply !== undefined) out.received.set(d.id, [reply]);
        wires.answered(d);
      }
    } finally {
      wires.release();
    }
    return out;
  }

  async exchange(_round: number, requests: ReadonlyMap<string, Message>, exchangeOptions: ExchangeOptions): Promise<Exchange> {
    const { messages, options } = checkExchange(requests, exchangeOptions);
    const { out, deliveries } = this.plan(messages);
    const wires = new Wires(this, deliveries);
    // one client at a time, as a simulation on one thread runs them; each may await
    try {
      for (const d of deliveries) {
        const wire = wires.take(d, out);
        const reply = await this.deliver(d.host, wire);
        if (options.replies && reply !== undefined) out.received.set(d.id, [reply]);
        wires.answered(d);
      }
    } finally {
      wires.release();
    }
    return out;
  }

  /**
   * What goes to whom. Messages are encoded when delivered, not all first: a
   * round of distinct large requests (the communities relay: every partner's
   * detector, to each client) then holds one at a time. A message to a client
   * that is not here is encoded now, for its bytes.
   */
  private plan(messages: ReadonlyMap<string, Message>): { out: Exchange; deliveries: Delivery[] } {
    const out: Exchange = { sent: new Map(), received: new Map(), missing: new Map() };
    const deliveries: Delivery[] = [];
    for (const [id, m] of messages) {
      const host = this.hosts.get(id);
      if (host) {
        out.sent.set(id, 0); // in the requests' order; the bytes once encoded
        deliveries.push({ id, host, message: m });
      } else {
        out.sent.set(id, this.wire(m).bytes);
        out.missing.set(id, { kind: 'dropout', reason: `${id} is not among the clients` });
      }
    }
    return { out, deliveries };
  }

  /** @internal (Wires) */
  wire(m: Message): Wire {
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
    return 'copy' in wire ? host.handleCopySync(wire.copy) : host.passDecodedSync(wire.decoded, wire.encoding);
  }

  private deliver(host: ClientHost, wire: Wire): Promise<Received | undefined> {
    return 'copy' in wire ? host.handleCopy(wire.copy) : host.passDecoded(wire.decoded, wire.encoding);
  }
}

type Wire = { decoded: Message | FedmixError; bytes: number; encoding: Encoding } | { copy: Message; bytes: number };

type Delivery = { id: string; host: ClientHost; message: Message };

/**
 * The wire forms of one exchange's messages: a message sent to many clients (a
 * broadcast) is encoded and decoded once, and dropped, with requestDone to its
 * clients, when the last of them has answered (at once for a message to one).
 */
class Wires {
  private readonly pending = new Map<Message, { wire: Wire; left: number; hosts: ClientHost[] }>();
  private readonly uses = new Map<Message, number>();

  constructor(
    private readonly transport: InProcessTransport,
    deliveries: readonly Delivery[],
  ) {
    for (const d of deliveries) this.uses.set(d.message, (this.uses.get(d.message) ?? 0) + 1);
  }

  take(d: Delivery, out: Exchange): Wire {
    let entry = this.pending.get(d.message);
    if (!entry) this.pending.set(d.message, (entry = { wire: this.transport.wire(d.message), left: this.uses.get(d.message)!, hosts: [] }));
    entry.hosts.push(d.host);
    out.sent.set(d.id, entry.wire.bytes);
    return entry.wire;
  }

  answered(d: Delivery): void {
    const entry = this.pending.get(d.message)!;
    if (--entry.left > 0) return;
    this.pending.delete(d.message);
    done(entry.wire, entry.hosts);
  }

  /** After a failure: the clients that got a request still pending are done with it. */
  release(): void {
    for (const entry of this.pending.values()) done(entry.wire, entry.hosts);
    this.pending.clear();
  }
}

function done(wire: Wire, hosts: readonly ClientHost[]): void {
  for (const host of hosts) host.requestDone('copy' in wire ? wire.copy : wire.decoded);
}
