/**
 * The server of community association (Nardi, Valerio, Passarella,
 * Algorithm 1, with the mutual rule), in two rounds:
 *
 *   round 1  every client fits its local detector and uploads it; the server
 *            checks each (kind, dimension, parts: it must load) and keeps it.
 *   round 2  each client is sent the detectors of its partners: every other
 *            client (partners 'all', as the paper), or, with partners = s,
 *            the s clients it draws at random and those that drew it (a pair
 *            is tested both ways or not at all, so that the mutual rule can
 *            link it); each answers only its accept/reject decisions. A
 *            client's partners go in relay messages of at most
 *            maxRelayBytes each (a detector larger than that alone), over as
 *            many rounds as the largest share needs: OCSVM detectors carry
 *            hundreds of 784-value rows, and a Fashion-MNIST client's 89
 *            partners at once would be ~190 MB, far above the runtime's
 *            64 MiB message limit. A client that misses one of its relay
 *            rounds is not in the graph.
 *   then     two clients are linked when both accepted each other; the graph
 *            (every client that answered round 2, isolated ones as
 *            communities of one) is split into communities by fast greedy
 *            (Clauset-Newman-Moore, the paper's code: default) or Louvain.
 *
 * A client excluded in either round is not in the graph, and its decisions
 * and the others' decisions about it are dropped, so the graph is the one of
 * the run without it.
 */
import { formatValue, FedmixError, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { communities as findCommunities, type CommunityMethod } from '../../graph/communities.js';
import { LocalDetector, type DetectorKind, type LocalDetectorJSON } from '../../models/detectors.js';
import { Rng } from '../../random.js';
import type { Message } from '../messages/envelope.js';
import { checkAccepted, checkContext, checkFailures, readReply, type Failure, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { checkServerOptions, isQ, type CommunitiesServerOptions, type ResolvedCommunitiesServerOptions } from './options.js';

export type { CommunitiesServerOptions } from './options.js';
import { stateMismatch } from '../registry/artifact.js';
import { decodeMessage, encodeMessage } from '../messages/codec.js';
import { COMMUNITIES_PROTOCOL, DETECTOR, FIT, RELAY, receiveDetector, type DecisionsPayload } from './messages.js';

/** Arrays of detectors in one relay message: at about 200 schema bytes each, well within the decoders' 64 KiB schema bound. */
const RELAY_ARRAYS_PER_MESSAGE = 192;
const SCHEMA_BYTES_PER_ARRAY = 200;

/** One decision: `client` tested `partner`'s detector on its own rows and accepted it or not (b_partner,client). */
export interface AssociationDecision {
  client: string;
  partner: string;
  accept: boolean;
}

export interface Association {
  /** the communities, each its client ids sorted; a client without mutual links is a community of one */
  communities: string[][];
  /** each client's community: its index in `communities` */
  membership: Map<string, number>;
  /** the clients in the graph (those whose decisions were accepted), in the server's order */
  nodes: string[];
  /** the mutual pairs, each once, ordered */
  edges: [string, string][];
  /** Newman's modularity of the communities (NaN for a graph without links) */
  modularity: number;
  method: CommunityMethod;
  /** every decision of the clients in the graph about partners in the graph */
  decisions: AssociationDecision[];
  /** tests run: decisions reported (an all-pairs run of n clients: n (n - 1)) */
  tests: number;
}

/** What accept() makes of a reply. */
type Accepted = { kind: 'detector'; client: string; detector: LocalDetectorJSON } | { kind: 'decisions'; client: string; partners: string[]; accept: boolean[] };

export class CommunitiesServer implements ServerRole<Accepted, Association> {
  readonly protocol = COMMUNITIES_PROTOCOL;
  readonly nFeatures: number;
  readonly kind: DetectorKind;
  readonly contamination: number;
  readonly q: number;
  readonly partners: 'all' | number;
  readonly seed: number;
  readonly method: CommunityMethod;
  readonly maxRelayBytes: number;
  private phase: 'fit' | 'relay' | 'done' = 'fit';
  /** accepted detectors by client, in the order they arrived */
  private readonly detectors = new Map<string, LocalDetectorJSON>();
  /** the clients by token (their position in `detectors`) */
  private tokens: string[] = [];
  /** each client's token */
  private tokenOf = new Map<string, number>();
  /** what each client was sent in this relay round: its partners' ids */
  private readonly sent = new Map<string, string[]>();
  /** each client's partners not yet sent (set in the first relay round) */
  private queue: Map<string, string[]> | undefined;
  /** each client's decisions so far, in the order its partners were sent */
  private readonly said = new Map<string, { partner: string; accept: boolean }[]>();
  /** clients that missed a relay round they were sent: out of the graph */
  private readonly missed = new Set<string>();
  private outcome: Association | undefined;
  private readonly made = new WeakSet<object>();

  /** Options checked here (checkServerOptions), unless they are what it returned. */
  constructor(options: CommunitiesServerOptions | ResolvedCommunitiesServerOptions) {
    const o = checkServerOptions(options);
    this.nFeatures = o.nFeatures;
    this.kind = o.kind;
    this.contamination = o.contamination;
    this.q = o.q;
    this.partners = o.partners;
    this.seed = o.seed;
    this.method = o.method;
    this.maxRelayBytes = o.maxRelayBytes;
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  configure(context: RoundContext): Map<string, Message> {
    const ctx = checkContext(context);
    const out = new Map<string, Message>();
    if (this.phase === 'fit') {
      const request = FIT.create('server', ctx.round, {});
      this.made.add(request);
      for (const id of ctx.clients) out.set(id, request);
    } else if (this.phase === 'relay') {
      this.sent.clear();
      let targets: string[];
      if (!this.queue) {
        // the first relay round: every present client with a detector, even one without partners
        targets = ctx.clients.filter((id) => this.detectors.has(id));
        this.queue = this.plan(targets);
        for (const id of targets) this.said.set(id, []);
      } else {
        const here = new Set(ctx.clients);
        targets = [];
        for (const [id, q] of this.queue) {
          if (q.length === 0 || this.missed.has(id)) continue;
          // a client gone before all its partners were sent cannot complete its decisions
          if (here.has(id)) targets.push(id);
          else this.missed.add(id);
        }
        if (targets.length === 0) {
          this.outcome = this.associate();
          this.phase = 'done';
          return out;
        }
      }
      for (const id of targets) {
        const partners = this.chunk(this.queue.get(id)!);
        this.sent.set(id, partners);
        const request = RELAY.create('server', ctx.round, {
          q: this.q,
          partners: partners.map((p) => ({ token: this.tokenOf.get(p)!, detector: this.detectors.get(p)! })),
        });
        this.made.add(request);
        out.set(id, request);
      }
    }
    return out;
  }

  /** Takes from the front of `queue` the partners whose detectors fit in one relay message (at least one). */
  private chunk(queue: string[]): string[] {
    let bytes = 0;
    let schemaArrays = 0;
    let n = 0;
    while (n < queue.length) {
      const { bytes: size, arrays } = detectorSize(this.detectors.get(queue[n]!)!);
      // arrays are bounded too, not only bytes: the binary wire's schema names every array of every
      // detector (a GMM's are a few hundred bytes each), and decoders refuse a schema over 64 KiB
      if (n > 0 && (bytes + size > this.maxRelayBytes || schemaArrays + arrays > RELAY_ARRAYS_PER_MESSAGE)) break;
      schemaArrays += arrays;
      bytes += size;
      n++;
    }
    return queue.splice(0, n);
  }

  /** Each client's partners: all the others, or the s each draws and those that drew it. */
  private plan(present: string[]): Map<string, string[]> {
    const out = new Map<string, Set<string>>(present.map((id) => [id, new Set<string>()]));
    if (this.partners === 'all') {
      for (const a of present) for (const b of present) if (a !== b) out.get(a)!.add(b);
    } else {
      const s = Math.min(this.partners, present.length - 1);
      const rng = new Rng(this.seed);
      try {
        present.forEach((a, i) => {
          if (s <= 0) return;
          for (const k of rng.choice(present.length - 1, s)) {
            const b = present[k >= i ? k + 1 : k]!;
            out.get(a)!.add(b);
            out.get(b)!.add(a);
          }
        });
      } finally {
        rng.dispose();
      }
    }
    // in the server's order, so the run is the same on every transport
    return new Map([...out].map(([id, set]) => [id, present.filter((p) => set.has(p))]));
  }

  accept(unread: Message, request: Message): Accepted {
    if (request === null || typeof request !== 'object' || !this.made.has(request)) {
      throw new InvalidParameterError(`accept() takes a request this server's configure() made, got ${formatValue(request)}`);
    }
    const reply = readReply(this.protocol, request, unread);
    let accepted: Accepted;
    if (reply.kind === DETECTOR.kind) {
      const detector = receiveDetector(reply, this.kind, this.nFeatures, this.contamination);
      // what other clients will load must load: a detector that does not is this client's fault, not theirs
      // (an honest one loads: see receiveDetector; so a partner's detector relayed never fails an honest receiver)
      try {
        LocalDetector.fromJSON(detector).dispose();
      } catch (e) {
        if (!(e instanceof FedmixError) || e.code === 'WASM') throw e;
        throw new InvalidMessageError(`the detector does not load: ${e.message}`, 'the detector does not load');
      }
      accepted = { kind: 'detector', client: reply.from, detector };
    } else {
      // an honest client answers once for each partner it was sent, in order, under the tokens it was sent: it always passes
      const p = reply.payload as DecisionsPayload;
      const sent = this.sent.get(reply.from) ?? [];
      if (p.partners.length !== sent.length || p.accept.length !== sent.length) {
        throw new InvalidMessageError(`${p.partners.length} partners and ${p.accept.length} decisions came back; ${sent.length} partners were sent`, 'decisions for a different number of partners');
      }
      const expected = new Set(sent.map((id) => this.tokenOf.get(id)!));
      const seen = new Set<number>();
      const partners: string[] = [];
      for (const t of p.partners) {
        if (!expected.has(t) || seen.has(t)) throw new InvalidMessageError(`a decision names partner ${t}, which was not sent (or is named twice)`, 'a decision for an unknown partner');
        seen.add(t);
        partners.push(this.tokens[t]!);
      }
      accepted = { kind: 'decisions', client: reply.from, partners, accept: [...p.accept] };
    }
    this.made.add(accepted);
    return accepted;
  }

  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, Accepted>, failed: readonly Failure[] = []): { clients: number } {
    const ctx = checkContext(context);
    const accepted = checkAccepted<Accepted>(acceptedReplies, this.made);
    checkFailures(failed);
    if (this.phase === 'fit') {
      for (const [id, a] of accepted) if (a.kind === 'detector') this.detectors.set(id, a.detector);
      this.tokens = [...this.detectors.keys()];
      this.tokenOf = new Map(this.tokens.map((id, t) => [id, t]));
      this.phase = 'relay';
      return { clients: this.detectors.size };
    }
    if (this.phase !== 'relay') throw new InvalidParameterError(`round ${ctx.round}: the server has nothing to aggregate`);
    for (const id of this.sent.keys()) {
      const a = accepted.get(id);
      if (a?.kind !== 'decisions') {
        this.missed.add(id);
        continue;
      }
      const list = this.said.get(id)!;
      a.partners.forEach((partner, i) => list.push({ partner, accept: a.accept[i]! }));
    }
    const left = [...this.queue!].some(([id, q]) => q.length > 0 && !this.missed.has(id));
    if (left) return { clients: this.sent.size };
    this.outcome = this.associate();
    this.phase = 'done';
    return { clients: this.outcome.nodes.length };
  }

  /** The mutual graph of the clients whose decisions all came back, and its communities. */
  private associate(): Association {
    const nodes = this.tokens.filter((id) => this.said.has(id) && !this.missed.has(id));
    const inGraph = new Set(nodes);
    const said = new Map<string, boolean>();
    const decisions: AssociationDecision[] = [];
    for (const id of nodes) {
      for (const { partner, accept } of this.said.get(id)!) {
        if (!inGraph.has(partner)) continue;
        said.set(`${id}\u0000${partner}`, accept);
        decisions.push({ client: id, partner, accept });
      }
    }
    const edges: [string, string][] = [];
    nodes.forEach((a, i) => {
      for (let j = i + 1; j < nodes.length; j++) {
        const b = nodes[j]!;
        if (said.get(`${a}\u0000${b}`) === true && said.get(`${b}\u0000${a}`) === true) edges.push([a, b]);
      }
    });
    if (nodes.length === 0) return { communities: [], membership: new Map(), nodes, edges, modularity: NaN, method: this.method, decisions, tests: 0 };
    const found = findCommunities({ nodes, edges }, this.method === 'louvain' ? { method: 'louvain', seed: this.seed } : { method: 'fast-greedy' });
    return { communities: found.communities, membership: found.membership, nodes, edges, modularity: found.modularity, method: this.method, decisions, tests: decisions.length };
  }

  /** The state between rounds, as JSON-safe data (the descriptor's state.save): the detectors, the relay plan and the decisions so far. @internal */
  saveState(): unknown {
    return {
      phase: this.phase,
      // each detector as the JSON text of the message that brought it: its arrays kept exactly, read back with a reply's checks
      detectors: [...this.detectors].map(([id, detector]) => [id, encodeMessage(DETECTOR.create(id, 1, { detector }))]),
      queue: this.queue ? [...this.queue].map(([id, q]) => [id, [...q]]) : null,
      said: [...this.said].map(([id, list]) => [id, list.map((x) => ({ ...x }))]),
      missed: [...this.missed],
    };
  }

  /** A saved state (its schema checked it) put into this new server role; a finished association is found again from the decisions. @internal */
  restoreState(state: { phase: 'fit' | 'relay' | 'done'; detectors: Map<string, string>; queue: Map<string, string[]> | null; said: Map<string, { partner: string; accept: boolean }[]>; missed: string[] }): void {
    const bad = (field: string, why: string) => stateMismatch('communities', field, why);
    const detectors = new Map<string, LocalDetectorJSON>();
    for (const [id, text] of state.detectors) {
      try {
        const m = DETECTOR.read(decodeMessage(text));
        if (m.from !== id) throw new InvalidMessageError(`it is ${JSON.stringify(m.from)}'s`);
        const d = receiveDetector(m, this.kind, this.nFeatures, this.contamination);
        LocalDetector.fromJSON(d).dispose();
        detectors.set(id, d);
      } catch (e) {
        if (!(e instanceof FedmixError) || e.code === 'WASM') throw e;
        throw bad('detectors', `${id}'s detector: ${e.message}`);
      }
    }
    const known = (id: string) => detectors.has(id);
    for (const [id, q] of state.queue ?? []) if (!known(id) || !q.every(known)) throw bad('queue', `${id}'s partners are not all clients with a detector`);
    for (const [id, list] of state.said) if (!known(id) || !list.every((x) => known(x.partner))) throw bad('said', `${id}'s decisions name a client without a detector`);
    if (state.phase === 'fit' && detectors.size > 0) throw bad('phase', 'a server still fitting has no detectors');
    this.phase = state.phase;
    for (const [id, d] of detectors) this.detectors.set(id, d);
    this.tokens = [...this.detectors.keys()];
    this.tokenOf = new Map(this.tokens.map((id, t) => [id, t]));
    this.queue = state.queue ?? undefined;
    for (const [id, list] of state.said) this.said.set(id, list);
    for (const id of state.missed) this.missed.add(id);
    if (this.phase === 'done') this.outcome = this.associate();
  }

  result(): Association {
    if (!this.outcome) throw new InvalidParameterError('the association is not over yet: run both rounds first');
    const o = this.outcome;
    return { ...o, communities: o.communities.map((c) => c.slice()), membership: new Map(o.membership), nodes: o.nodes.slice(), edges: o.edges.map((e) => [e[0], e[1]]), decisions: o.decisions.map((d) => ({ ...d })) };
  }
}

/** A detector's size on the wire, about: 8 bytes per value of its arrays, and some for the rest. */
/** By detector: what it weighs in a relay, worked out once (every client's queue asks again each round). */
const sizes = new WeakMap<LocalDetectorJSON, { bytes: number; arrays: number }>();

function detectorSize(det: LocalDetectorJSON): { bytes: number; arrays: number } {
  let size = sizes.get(det);
  if (!size) {
    const { values, arrays } = arraysIn(det.ocsvm ?? det.gmm ?? det.autoencoder, 0);
    // an array costs its values and, on the binary wire, a schema field (about 200 bytes; see chunk)
    size = { bytes: 8 * values + SCHEMA_BYTES_PER_ARRAY * arrays + 256, arrays };
    sizes.set(det, size);
  }
  return size;
}

/** The numbers held in arrays anywhere in a detector's JSON (nested for networks), and how many arrays hold them. */
function arraysIn(x: unknown, depth: number): { values: number; arrays: number } {
  if (x === null || typeof x !== 'object' || depth > 8) return { values: 0, arrays: 0 };
  if (ArrayBuffer.isView(x)) return { values: (x as unknown as ArrayLike<number>).length, arrays: 1 };
  if (Array.isArray(x) && (x.length === 0 || typeof x[0] === 'number')) return { values: x.length, arrays: 1 };
  let values = 0;
  let arrays = 0;
  for (const v of Object.values(x)) {
    const r = arraysIn(v, depth + 1);
    values += r.values;
    arrays += r.arrays;
  }
  return { values, arrays };
}

/** q in [0, 1]: an InvalidParameterError otherwise (the server's declaration says it in the same words). */
export function requireQ(value: unknown): number {
  if (!isQ(value)) throw new InvalidParameterError(`q must be a number in [0, 1], got ${formatValue(value)}`);
  return value;
}
