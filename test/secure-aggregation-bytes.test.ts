/**
 * The bytes of one distributed EM round per client, secure (SecAgg+ at its
 * defaults) and plain, pinned at an upper bound built from what the protocol
 * has to carry: each message's keys, shares, signatures and masked words (or
 * the model and its statistics), the ids and small fields of its JSON header,
 * and the binary wire form's stated framing per message and per numeric
 * array. And the run's traffic is the bytes that crossed the transport, once:
 * session 8's bench read a secure round's bytes as nearly double session 4's
 * because the run added each stage's running total again after every later
 * stage (a fifth stage, the consistency check, made that worse).
 * Over the embedded MQTT broker (real clients joined with join()), the same
 * round's count per client equals the in-process run's, message for message,
 * and equals the payload bytes the server's MQTT connection published to and
 * received from that client's topics.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { init, join as joinFederation, makeBlobs } from '../ts/index.js';
import { DemClient } from '../ts/federated/dem/client.js';
import { DemServer } from '../ts/federated/dem/server.js';
import { decodeMessage } from '../ts/federated/messages/codec.js';
import type { Message } from '../ts/federated/messages/envelope.js';
import { runFederation, type FederationResult } from '../ts/federated/runtime/run.js';
import { DEFAULT_SECURE_CLIP } from '../ts/federated/runtime/policy.js';
import { openFederation } from '../ts/federated/serve.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import { federationTopics } from '../ts/federated/transport/topics.js';
import type { Exchange, ExchangeOptions, Transport } from '../ts/federated/transport/transport.js';
import { detectCurve, IV_BYTES, publicKeyBytes, TAG_BYTES } from '../ts/privacy/secure-aggregation/keys.js';
import { COMMITMENT_BYTES, SHARE_CIPHERTEXT_BYTES } from '../ts/privacy/secure-aggregation/protocol.js';
import { SHARE_BYTES } from '../ts/privacy/secure-aggregation/shamir.js';
import { detectSignatureScheme, SIGNATURE_BYTES, verificationKeyBytes } from '../ts/privacy/secure-aggregation/signatures.js';

beforeAll(async () => {
  await init();
});

// The binary wire form's cost beyond a message's content (arrow-ipc.ts, arrow-schema.ts):
/** per message: the schema and record batch of the header column alone and the end-of-stream marker (312), the vtables the first numeric column adds and the header text's padding to 8 (32) */
const FRAME = 344;
/** per numeric array: its Arrow list field and item field in the schema (80, besides the path), two field nodes and four buffers in the record batch (96), its list offsets (8) */
const COLUMN = 184;
const pad = (n: number, to: number) => Math.ceil(n / to) * to;

/** What a message holds: its JSON header's bytes beyond the envelope, and its numeric arrays by path. */
interface Content {
  json: number;
  arrays: [path: string, bytes: number][];
}

/** The envelope's JSON: protocol, version, kind, from, round (one digit), the run's 32 hex digits, and the payload's braces. */
const envelope = (kind: string, from: string) => 120 + kind.length + from.length;

/** Upper bound of a message's binary wire bytes: envelope and frame, the JSON beyond the envelope, and per array its placeholder ("key":{"$col":NNN},), column and values. */
function wire(kind: string, from: string, c: Content): number {
  let bytes = FRAME + envelope(kind, from) + c.json;
  for (const [path, n] of c.arrays) bytes += path.split('.').pop()!.length + 16 + COLUMN + pad(5 + path.length, 4) + pad(n, 8);
  return bytes;
}

/** A list of ids in JSON ("name":["c0",...],). */
const ids = (name: string, list: readonly string[]) => name.length + 5 + list.reduce((n, id) => n + id.length + 3, 0);
/** A list entry's id and braces ({"to":"c1",...},), its arrays counted apart. */
const entry = (key: string, id: string) => key.length + id.length + 9;
/** Small fields' JSON ("a":1,"b":"x",), from their values. */
const fields = (o: object) => JSON.stringify(o).length;

// the bench's setting (bench/secure-aggregation-federation.mjs), smaller: 10 clients of 20 rows of 3-D blobs, K = 5 diagonal
const N = 10;
const K = 5;
const D = 3;
const DEM = { nComponents: K, nFeatures: D, covarianceType: 'diag' as const, init: 'separated' as const, featureRange: [-20, 20] as [number, number], maxRounds: 1, tol: 0, seed: 1 };
const blobs = () => makeBlobs({ nClusters: 5, nFeatures: D, samplesPerCluster: 400, minDistance: 6, seed: 9 });
const IDS = Array.from({ length: N }, (_, c) => `c${c}`);

/** dem/model's content (the broadcast model: weights, means, variances, the summary's shift), its paths under `at`. */
function model(at: string): Content {
  return {
    json: fields({ model: { covarianceType: 'diag', nComponents: K, nFeatures: D } }),
    arrays: [[`${at}.model.weights`, 8 * K], [`${at}.model.means`, 8 * K * D], [`${at}.model.covariances`, 8 * K * D], [`${at}.summaryShift`, 8 * D]],
  };
}

/** dem/stats' content: rows, a log-likelihood (24 characters at most), nk, s1, s2 and the summary's absMax. */
const STATS: Content = {
  json: fields({ rows: 20, logLikelihood: -1.2345678901234567e-300, summary: {} }),
  arrays: [['payload.nk', 8 * K], ['payload.s1', 8 * K * D], ['payload.s2', 8 * K * D], ['payload.summary.absMax', 8 * D]],
};
/** Values the secure round sums: rows, logLikelihood, nk, s1, s2 (diagonal) and absMax (messages.ts' layout). */
const SUMMED = 2 + K + 2 * K * D + D;

/**
 * Upper bounds of each secure stage's message per client, by kind, from what
 * it carries: a round with `k` neighbours and this threshold, nobody dropped.
 */
async function secureBounds(k: number, threshold: number): Promise<Map<string, number>> {
  const curve = await detectCurve();
  const scheme = await detectSignatureScheme();
  const pk = publicKeyBytes(curve);
  const vk = verificationKeyBytes(scheme);
  // a client's k neighbours, each named by the longest id (the bound holds for any of them), as is the client
  const longest = `c${N - 1}`;
  const them = Array.from({ length: k }, () => longest);
  const list = (name: string, key: string, arrays: [string, number][]): Content => ({
    json: name.length + 5 + them.reduce((n, id) => n + entry(key, id), 0),
    arrays: them.flatMap((_, i) => arrays.map(([a, bytes]) => [`payload.${name}.${i}.${a}`, bytes] as [string, number])),
  });
  const join = (...cs: Content[]): Content => ({ json: cs.reduce((n, c) => n + c.json, 0), arrays: cs.flatMap((c) => c.arrays) });
  const request = model('payload.request.payload');
  const stages: (Content & { kind: string; from: string })[] = [
    // stage 1: the round's parameters, the real request inside (its own envelope), and the client's two public keys and verification key
    {
      kind: 'secure-aggregation/advertise',
      from: 'server',
      json: ids('clients', IDS) + fields({ neighbours: k, threshold, curve, signature: scheme, clip: DEFAULT_SECURE_CLIP, length: SUMMED }) + 'request'.length + 3 + envelope('dem/model', 'server') + request.json,
      arrays: [['payload.graphSeed', 32], ...request.arrays],
    },
    { kind: 'secure-aggregation/keys', from: longest, json: 0, arrays: [['payload.cPk', pk], ['payload.sPk', pk], ['payload.vk', vk]] },
    // stage 2: its neighbours' keys; one share ciphertext per neighbour and the commitment
    { kind: 'secure-aggregation/share', from: 'server', ...list('keys', 'id', [['cPk', pk], ['sPk', pk], ['vk', vk]]) },
    { kind: 'secure-aggregation/shares', from: longest, ...join(list('shares', 'to', [['share', SHARE_CIPHERTEXT_BYTES]]), { json: 0, arrays: [['payload.commitment', COMMITMENT_BYTES]] }) },
    // stage 3: the ciphertexts addressed to it; its statistics as masked u64 words (nobody refused)
    { kind: 'secure-aggregation/mask', from: 'server', ...list('shares', 'from', [['share', SHARE_CIPHERTEXT_BYTES]]) },
    { kind: 'secure-aggregation/masked', from: longest, json: ids('refused', []), arrays: [['payload.masked', 8 * SUMMED]] },
    // the consistency check: the survivor set; its signature of it
    { kind: 'secure-aggregation/consistency', from: 'server', json: ids('survivors', IDS), arrays: [] },
    { kind: 'secure-aggregation/signature', from: longest, json: 0, arrays: [['payload.signature', SIGNATURE_BYTES]] },
    // stage 4: the survivors (none dropped) and its neighbours' signatures; one b-share per surviving neighbour
    { kind: 'secure-aggregation/unmask', from: 'server', ...join({ json: ids('survivors', IDS) + ids('dropped', []), arrays: [] }, list('signatures', 'of', [['signature', SIGNATURE_BYTES]])) },
    { kind: 'secure-aggregation/unmasked', from: longest, ...list('shares', 'of', [['share', SHARE_BYTES]]) },
  ];
  return new Map(stages.map((c) => [c.kind, wire(c.kind, c.from, c)]));
}

interface Measured {
  result: FederationResult<{ dispose(): void }>;
  moved: number;
  messages: number;
  kinds: Map<string, number>;
  /** over MQTT: the payload bytes the server's connection published to each client's down topic and received on its up topic */
  wire?: Map<string, { up: number; down: number; messagesUp: number; messagesDown: number }>;
}

/**
 * The same run over the embedded broker: the clients join over MQTT, the
 * transport's exchanges are added up as in process, and the server's MQTT
 * connection is watched for the PUBLISH packets on the clients' topics.
 */
async function overMqtt(secure: boolean, roles: DemClient[]): Promise<Measured> {
  const federation = 'bytes';
  const topics = federationTopics(federation);
  const broker = await openFederation({ federation, clients: IDS.map((id) => ({ id, password: `pw-${id}` })), listen: { port: 0 } });
  const wire = new Map(IDS.map((id) => [id, { up: 0, down: 0, messagesUp: 0, messagesDown: 0 }]));
  const client = (broker.transport as unknown as { client: MqttClient }).client;
  const watch = (direction: 'up' | 'down') => (packet: { cmd: string; topic?: string; payload?: Uint8Array | string }) => {
    if (packet.cmd !== 'publish') return;
    const id = IDS.find((c) => packet.topic === (direction === 'up' ? topics.up(c) : topics.down(c)));
    if (id === undefined) return;
    const w = wire.get(id)!;
    const n = typeof packet.payload === 'string' ? Buffer.byteLength(packet.payload) : packet.payload!.length;
    if (direction === 'up') (w.up += n), (w.messagesUp += 1);
    else (w.down += n), (w.messagesDown += 1);
  };
  client.on('packetsend', watch('down'));
  client.on('packetreceive', watch('up'));
  const inner = broker.transport;
  const { transport, tally } = counting(inner, 'counted mqtt');
  const server = new DemServer(DEM);
  const joins = roles.map((c, i) => joinFederation({ url: broker.url, federation, client: c, password: `pw-${IDS[i]}` }));
  try {
    const result = await runFederation(server, transport, { minClients: N, joinTimeout: 15, roundTimeout: 15, run: inner.run, ...(secure ? { secureAggregation: {} } : {}) });
    for (const r of await Promise.all(joins)) expect(r.ok).toBe(true);
    return { result, ...tally, wire };
  } finally {
    server.dispose();
    for (const c of roles) c.dispose();
    await broker.close();
  }
}

/** What a counting transport moved: every message once, its bytes in all and by direction and kind ('up KIND', 'down KIND'). */
interface Tally {
  moved: number;
  messages: number;
  kinds: Map<string, number>;
}

/** `inner` whose exchanges also add up, in `tally`, every message they move, each once. */
function counting(inner: Transport & { run?: string }, name: string): { transport: Transport & { run?: string }; tally: Tally } {
  const tally: Tally = { moved: 0, messages: 0, kinds: new Map() };
  const add = (kind: string, bytes: number) => {
    tally.moved += bytes;
    tally.messages += 1;
    tally.kinds.set(kind, (tally.kinds.get(kind) ?? 0) + bytes);
  };
  const transport = {
    name,
    ...(inner.run === undefined ? {} : { run: inner.run }),
    available: (min: number, timeoutMs: number, excluded?: ReadonlySet<string>) => inner.available(min, timeoutMs, excluded),
    async exchange(round: number, sent: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
      const ex = await inner.exchange(round, sent, options);
      for (const [id, bytes] of ex.sent) add(`down ${sent.get(id)!.kind}`, bytes);
      for (const list of ex.received.values()) for (const r of list) add(`up ${(r instanceof Uint8Array ? decodeMessage(r) : r.message).kind}`, r instanceof Uint8Array ? r.length : r.bytes);
      return ex;
    },
    ...(inner.finish ? { finish: (outcome: { ok: boolean; reason?: string }) => inner.finish!(outcome) } : {}),
  };
  return { transport, tally };
}

/** A run of one round over a transport that also adds up every message it moves, each once. */
async function measured(secure: boolean, over: 'in-process' | 'mqtt' = 'in-process'): Promise<Measured> {
  const X = blobs().X;
  const roles = IDS.map((id, c) => new DemClient(id, X.selectRows(Array.from({ length: 20 }, (_, i) => c * 20 + i))));
  if (over === 'mqtt') return overMqtt(secure, roles);
  const { transport, tally } = counting(new InProcessTransport(roles), 'counted');
  const server = new DemServer(DEM);
  try {
    const result = await runFederation(server, transport, secure ? { secureAggregation: {} } : {});
    return { result, ...tally };
  } finally {
    server.dispose();
    for (const c of roles) c.dispose();
  }
}

/** The run's traffic is what crossed the transport, each message once, and per client and per round it adds up to the same. */
function expectCountedOnce(m: Measured): void {
  const { traffic, clientTraffic, history } = m.result;
  expect(traffic.bytesUp + traffic.bytesDown).toBe(m.moved);
  expect(traffic.messagesUp + traffic.messagesDown).toBe(m.messages);
  const perClient = [...clientTraffic.values()];
  expect(perClient.reduce((a, t) => a + t.bytesUp, 0)).toBe(traffic.bytesUp);
  expect(perClient.reduce((a, t) => a + t.bytesDown, 0)).toBe(traffic.bytesDown);
  expect(history.reduce((a, h) => a + h.bytesUp, 0)).toBe(traffic.bytesUp);
  expect(history.reduce((a, h) => a + h.bytesDown, 0)).toBe(traffic.bytesDown);
}

describe('bytes of one distributed EM round per client (10 clients, K = 5, d = 3)', () => {
  it('plain: the model down and the statistics up, within the bound of their content and framing', async () => {
    const m = await measured(false);
    expectCountedOnce(m);
    expect(m.messages).toBe(2 * N);
    const bound = wire('dem/model', 'server', model('payload')) + wire('dem/stats', `c${N - 1}`, STATS);
    const perClient = (m.result.traffic.bytesUp + m.result.traffic.bytesDown) / N;
    // measured 3,456 bytes, bound 3,527 (session 4's schemas by apache-arrow: 3,464; session 8's first hand-written ones: 3,792)
    expect(perClient).toBeLessThanOrEqual(bound);
    m.result.model.dispose();
  });

  it('secure: five stages of one message each way, within the bound of the keys, shares, signatures, masked words and framing', async () => {
    const m = await measured(true);
    expectCountedOnce(m);
    const round = m.result.history.find((h) => h.replies)!;
    const { neighbours: k, threshold, survivors } = round.secure!;
    expect(survivors).toBe(N);
    expect(m.messages).toBe(10 * N);
    expect(SHARE_CIPHERTEXT_BYTES).toBe(IV_BYTES + 2 * SHARE_BYTES + TAG_BYTES);
    const bounds = await secureBounds(k, threshold);
    // each kind within its bound (a message that grows is named), and the round per client within their sum
    expect(m.kinds.size).toBe(bounds.size);
    for (const [key, bytes] of m.kinds) expect(bytes / N, key).toBeLessThanOrEqual(bounds.get(key.split(' ')[1]!)!);
    const perClient = (m.result.traffic.bytesUp + m.result.traffic.bytesDown) / N;
    // measured 17,064 bytes, bound 17,420 (session 8 reported 62,056: the stages' bytes were 18,840, counted up to five times)
    expect(perClient).toBeLessThanOrEqual([...bounds.values()].reduce((a, b) => a + b, 0));
    m.result.model.dispose();
  });

  it('secure over the embedded MQTT broker: the per-client count is the in-process one, and the bytes the server published and received', async () => {
    const t0 = performance.now();
    const local = await measured(true);
    const t1 = performance.now();
    const mqtt = await measured(true, 'mqtt');
    const t2 = performance.now();
    expectCountedOnce(mqtt);
    const round = mqtt.result.history.find((h) => h.replies)!;
    expect(round.secure!.survivors).toBe(N);
    expect(mqtt.messages).toBe(10 * N);
    // the same content each way: keys, shares, signatures and masked words have fixed sizes, and the run
    // id (32 hex digits) and the client ids are as long in both, so every client's count is the same
    for (const id of IDS) expect(mqtt.result.clientTraffic.get(id), id).toEqual(local.result.clientTraffic.get(id));
    expect(mqtt.kinds).toEqual(local.kinds);
    // and it is what crossed the broker: the PUBLISH payloads on the client's down and up topics, each once
    for (const id of IDS) {
      const t = mqtt.result.clientTraffic.get(id)!;
      expect(mqtt.wire!.get(id), id).toEqual({ down: t.bytesDown, up: t.bytesUp, messagesDown: t.messagesDown, messagesUp: t.messagesUp });
    }
    const bounds = await secureBounds(round.secure!.neighbours, round.secure!.threshold);
    const perClient = (mqtt.result.traffic.bytesUp + mqtt.result.traffic.bytesDown) / N;
    expect(perClient).toBeLessThanOrEqual([...bounds.values()].reduce((a, b) => a + b, 0));
    // eslint-disable-next-line no-console
    console.log(`secure round per client: ${perClient} bytes over MQTT (in process ${(local.result.traffic.bytesUp + local.result.traffic.bytesDown) / N}); in process ${((t1 - t0) / 1000).toFixed(2)} s, over MQTT ${((t2 - t1) / 1000).toFixed(2)} s`);
    local.result.model.dispose();
    mqtt.result.model.dispose();
  }, 20_000);
});
