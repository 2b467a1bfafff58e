/**
 * The in-process transport of simulations. Every message is encoded to its wire
 * form and decoded again, so a receiver sees exactly what would cross a network
 * (only what the message declares leaves a party), and every round and byte is
 * counted each way.
 */
import { FedmixError } from '../errors.js';
import { decodeMessage, encodeMessage, wireBytes, type Message } from './message.js';

/** A client a server turned away, and why (its message, or its training, failed). */
export interface ExcludedClient {
  client: string;
  /** the communication round of the failed message */
  round: number;
  reason: string;
}

/** A client's answer as its receiver gets it: wire text, or why there is none. */
export type ClientReply = { from: string; text: string } | { from: string; error: string };

/** A client role: answers the server's message with its own. */
export interface Responder {
  respond(m: Message): Message;
}

/**
 * Each requested client's answer through `transport`, or why there is none. A
 * client that throws a FedmixError while answering (a message it cannot use, a
 * reply that cannot be encoded, e.g. NaN) is a refusal for the receiver to
 * record; a WASM trap or any other error is a bug and propagates.
 */
export function collectReplies(requests: ReadonlyMap<string, Message>, clients: ReadonlyMap<string, Responder>, transport: InProcessTransport): ClientReply[] {
  const replies: ClientReply[] = [];
  for (const [id, m] of requests) {
    const received = transport.down(m);
    const client = clients.get(id);
    if (!client) {
      replies.push({ from: id, error: `${id} is not among the clients` });
      continue;
    }
    try {
      replies.push({ from: id, text: transport.up(client.respond(received)) });
    } catch (e) {
      if (!(e instanceof FedmixError) || e.code === 'WASM') throw e;
      replies.push({ from: id, error: e.message });
    }
  }
  return replies;
}

export interface Traffic {
  /** communication rounds (a round: clients send, and/or the server sends back) */
  rounds: number;
  bytesUp: number;
  bytesDown: number;
  messagesUp: number;
  messagesDown: number;
}

export class InProcessTransport {
  readonly traffic: Traffic = { rounds: 0, bytesUp: 0, bytesDown: 0, messagesUp: 0, messagesDown: 0 };

  /** Starts a new communication round. */
  nextRound(): void {
    this.traffic.rounds += 1;
  }

  /** A client-to-server message as the server receives it (wire text). */
  up(m: Message): string {
    const text = encodeMessage(m);
    this.traffic.bytesUp += wireBytes(text);
    this.traffic.messagesUp += 1;
    return text;
  }

  /** A server-to-client message as the client receives it (decoded). */
  down(m: Message): Message {
    const text = encodeMessage(m);
    this.traffic.bytesDown += wireBytes(text);
    this.traffic.messagesDown += 1;
    return decodeMessage(text, m.kind);
  }
}
