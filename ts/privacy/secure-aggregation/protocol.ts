/**
 * SecAgg+ (Bell et al. 2020; Bonawitz et al. 2017 with all pairs): the
 * client's and the server's state machines, transport-free. A round runs
 *
 *   1. advertise: each client sends two public keys, c (share encryption)
 *      and s (masks). The server sends each client its neighbours' keys.
 *   2. share keys: each client draws a self-mask seed b, Shamir-shares b and
 *      its s secret key among its neighbours (threshold t), encrypts each
 *      neighbour's pair of shares to it (AES-GCM under the c-key agreement),
 *      and commits to b (SHA-256). The server routes the ciphertexts.
 *   3. masked input: each client quantizes its vector (fixed-point.ts) and
 *      adds ChaCha20(b) and, for each linked neighbour v, +-ChaCha20(s_uv),
 *      s_uv its s-key agreement with v (+ when it comes first in the round's
 *      order of clients). The server sums what arrives.
 *   4. unmask: the server names the survivors (masked input in) and the
 *      dropped; each survivor returns its shares of the survivors' b and of
 *      the dropped clients' s keys. The server reconstructs them, removes the
 *      self masks and the masks between survivors and dropped clients (those
 *      between two survivors cancel), and reads the sum.
 *
 * A pair of neighbours is linked when each sent the other a share (both
 * sides and the server know which): only linked pairs mask. A client with
 * fewer than t linked neighbours could not be recovered and is dropped from
 * the round before anyone masks with it. The server never asks for both
 * secrets of one client, and a client answers only one unmask request.
 * What the server learns: the sum of the survivors' inputs, and who survived.
 */
import { keepClassName } from '../../class-name.js';
import { formatValue, InvalidDataError, InvalidMessageError, InvalidParameterError, SecureAggregationError } from '../../errors.js';
import { guardRead } from '../../read-guard.js';
import { isFloat64Array, LIMITS, readOptions } from '../../validate.js';
import { noiseProblem } from '../distributed-noise.js';
import { addSkellamNoise } from '../skellam.js';
import { fixedPoint as makeFixedPoint, dequantize, quantizationBound, quantize, sumWords, type FixedPoint } from './fixed-point.js';
import { degreeProblem, neighbourGraph } from './graph.js';
import {
  agree,
  commitment,
  CURVES,
  decryptShare,
  encryptShare,
  generateKeyPair,
  importPublicKey,
  importSecretKey,
  IV_BYTES,
  publicKeyBytes,
  shareAad,
  TAG_BYTES,
  type Curve,
  type KeyPair,
} from './keys.js';
import { applyMasks, type Mask } from './masks.js';
import { cryptoRandom, shamirCombine, shamirShareAt, shamirSplit, SHARE_BYTES, type RandomSource, type ShamirShare } from './shamir.js';
import { ConsistencyCheck, ServerConsistency, signerProblem, SignatureVerifier, type SignatureScheme } from './consistency.js';

export interface SecureAggregationParams {
  /** bound into key derivation and associated data */
  run: string;
  round: number;
  /** the round's participants, in order */
  clients: readonly string[];
  /** k (degree); clients.length - 1 = all pairs */
  neighbours: number;
  /** t <= k: shares needed to reconstruct one client's secrets */
  threshold: number;
  /** 32 public bytes from the server */
  graphSeed: Uint8Array;
  curve: Curve;
  /** values in the input vector */
  length: number;
  /** fixedPoint(clip, clients.length) */
  fixedPoint: FixedPoint;
  /** distributed DP: each client's Skellam share */
  noise?: { skellamMu: number };
  /**
   * The consistency check against a server that lies about dropouts
   * (Bonawitz et al. 2017, malicious variant; consistency.ts): each client
   * advertises a verification key of this scheme, signs the survivor set, and
   * unmasks only with t of its neighbours' signatures over the same set.
   * Absent: the four-stage protocol, which trusts the server's dropout lists.
   */
  signature?: SignatureScheme;
}

export interface AdvertisedKeys {
  cPk: Uint8Array;
  sPk: Uint8Array;
  /** the verification key of the consistency check (when params.signature) */
  vk?: Uint8Array;
}

/** Test-only settings of a client: `random` replaces crypto.getRandomValues for every draw of the client (keys, b, shares, IVs, the key of its noise share), so that a test can repeat a run byte for byte. Never set it outside tests. */
export interface SecureAggregationTesting {
  random?: RandomSource;
}

/** The clients gone at each stage (dropped, timed out or refused as invalid), and those excluded because a neighbour could not read their shares. */
export interface SecureAggregationDrops {
  advertise: string[];
  shares: string[];
  masked: string[];
  unmask: string[];
  /** survivors that did not sign the survivor set, or with fewer than threshold neighbours that did (their input is in the sum; they are not asked to unmask) */
  consistency: string[];
  /** survivors whose signature of the survivor set did not verify (excluded; their input is in the sum) */
  forged: string[];
  /** sent a share its neighbour could not decrypt or parse: its input is left out, its masks removed */
  excluded: string[];
  /** held a share that reconstruction found inconsistent with the others (ruled out; the secret came from other shares) */
  ruledOut: string[];
}

export interface SecureAggregationResult {
  /** the sum of the survivors' inputs, each entry within `bound` of the exact sum */
  sum: Float64Array;
  survivors: string[];
  /** quantizationBound(fixedPoint, survivors.length) */
  bound: number;
  dropped: SecureAggregationDrops;
}

/** Both secrets' shares travel in one plaintext: the s-key share, then the b share. */
const PLAINTEXT_BYTES = 2 * SHARE_BYTES;
/** Bytes of one share ciphertext: IV, the two shares, the tag. */
export const SHARE_CIPHERTEXT_BYTES = IV_BYTES + PLAINTEXT_BYTES + TAG_BYTES;
export const COMMITMENT_BYTES = 32;
const SEED_BYTES = 32;
/** Subsets of shares tried before a reconstruction is given up. */
const MAX_RECONSTRUCTION_TRIES = 256;
const MAX_ID_LENGTH = 1024;

interface Checked extends SecureAggregationParams {
  /** neighbour indices of each client */
  graph: number[][];
  index: Map<string, number>;
}

function checkParams(params: SecureAggregationParams): Checked {
  if (params === null || typeof params !== 'object') throw new InvalidParameterError(`secure aggregation params must be an object, got ${formatValue(params)}`);
  const read = readOptions(params, ['run', 'round', 'clients', 'neighbours', 'threshold', 'graphSeed', 'curve', 'length', 'fixedPoint', 'noise', 'signature'], 'params');
  const { run, round, neighbours, threshold, graphSeed, curve, length, signature } = read as SecureAggregationParams;
  const clients = Array.isArray(read.clients) ? [...read.clients] : read.clients;
  const fixedPoint = read.fixedPoint === undefined ? undefined : readOptions(read.fixedPoint, ['clip', 'contributors', 'scale'], 'params.fixedPoint');
  const noise = read.noise === undefined ? undefined : readOptions(read.noise, ['skellamMu'], 'params.noise');
  if (typeof run !== 'string' || run.length > MAX_ID_LENGTH) throw new InvalidParameterError(`run must be a string of at most ${MAX_ID_LENGTH} characters, got ${formatValue(run)}`);
  if (!(Number.isSafeInteger(round) && round >= 0)) throw new InvalidParameterError(`round must be an integer >= 0, got ${formatValue(round)}`);
  if (!Array.isArray(clients) || clients.length < 2 || clients.length > 65_535) throw new InvalidParameterError(`clients must be a list of 2 to 65,535 ids, got ${formatValue(clients)}`);
  const index = new Map<string, number>();
  for (const [i, id] of clients.entries()) {
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) throw new InvalidParameterError(`clients[${i}] must be a non-empty string of at most ${MAX_ID_LENGTH} characters, got ${formatValue(id)}`);
    if (index.has(id)) throw new InvalidParameterError(`client ${formatValue(id)} is listed twice`);
    index.set(id, i);
  }
  const problem = degreeProblem(clients.length, neighbours);
  if (problem) throw new InvalidParameterError(problem);
  if (!(Number.isInteger(threshold) && threshold >= 1 && threshold <= neighbours)) throw new InvalidParameterError(`threshold must be an integer in [1, ${neighbours}] (the neighbours), got ${formatValue(threshold)}`);
  if (!isBytes(graphSeed) || graphSeed.length !== 32) throw new InvalidParameterError(`graphSeed must be a Uint8Array of 32 bytes, got ${formatValue(graphSeed)}`);
  if (!CURVES.includes(curve)) throw new InvalidParameterError(`curve must be 'X25519' or 'P-256', got ${formatValue(curve)}`);
  if (!(Number.isInteger(length) && length >= 0 && length <= LIMITS.values)) throw new InvalidParameterError(`length must be an integer in [0, ${LIMITS.values}], got ${formatValue(length)}`);
  const problem2 = signerProblem(signature);
  if (problem2) throw new InvalidParameterError(problem2);
  if (fixedPoint === undefined) throw new InvalidParameterError('params.fixedPoint must be given: fixedPoint(clip, clients.length)');
  if (noise !== undefined && !(typeof noise.skellamMu === 'number' && noise.skellamMu > 0 && Number.isFinite(noise.skellamMu))) {
    throw new InvalidParameterError(`noise must be { skellamMu: a finite number > 0 }, got ${formatValue(noise)}`);
  }
  // the fixed point must be exactly what fixedPoint() gives: a hand-made scale could overflow;
  // with noise, a smaller power-of-two scale (distributedNoise()'s), its headroom for the noise checked
  let fp = makeFixedPoint(fixedPoint.clip as number, fixedPoint.contributors as number);
  if (noise) {
    const s = fixedPoint.scale;
    if (typeof s === 'number' && s >= 1 && s < fp.scale && Number.isInteger(Math.log2(s))) fp = Object.freeze({ clip: fp.clip, contributors: fp.contributors, scale: s });
    const problem = noiseProblem(fp, noise.skellamMu as number, length);
    if (problem) throw new InvalidParameterError(`fixedPoint leaves no room for the noise: ${problem}; take distributedNoise(...).fixedPoint`);
  }
  if (fp.scale !== fixedPoint.scale || fp.contributors < clients.length) {
    throw new InvalidParameterError(`fixedPoint must be fixedPoint(clip, n) for n >= ${clients.length} (the clients), got ${formatValue(fixedPoint)}`);
  }
  return {
    run,
    round,
    clients: [...clients],
    neighbours,
    threshold,
    graphSeed: graphSeed.slice(),
    curve,
    length,
    fixedPoint: fp,
    ...(noise ? { noise: { skellamMu: noise.skellamMu as number } } : {}),
    ...(signature ? { signature } : {}),
    graph: neighbourGraph(clients.length, neighbours, graphSeed),
    index,
  };
}

/** The pair in the round's order: both parties name it alike. */
function pairOf(p: Checked, a: string, b: string): { first: string; second: string } {
  return p.index.get(a)! < p.index.get(b)! ? { first: a, second: b } : { first: b, second: a };
}

/** The sign of the mask `self` adds for the pair with `other`: + when self comes first. */
function maskSign(p: Checked, self: string, other: string): 1 | -1 {
  return p.index.get(self)! < p.index.get(other)! ? 1 : -1;
}

function requireKeysMessage(p: Checked, keys: unknown, what: string, Err: typeof InvalidMessageError | typeof InvalidParameterError): AdvertisedKeys {
  const curve = p.curve;
  const bytes = publicKeyBytes(curve);
  if (keys === null || typeof keys !== 'object') throw new Err(`${what} must be { cPk, sPk }, got ${formatValue(keys)}`);
  const k = readOptions(keys as AdvertisedKeys, ['cPk', 'sPk', 'vk'], what) as AdvertisedKeys;
  if ( !isBytes(k.cPk) || !isBytes(k.sPk) || k.cPk.length !== bytes || k.sPk.length !== bytes) {
    throw new Err(`${what} must be { cPk, sPk }, two ${curve} public keys of ${bytes} bytes`);
  }
  const vk = SignatureVerifier.requireKey(p.signature, k.vk, what, Err);
  return { cPk: k.cPk.slice(), sPk: k.sPk.slice(), ...(vk ? { vk } : {}) };
}

function requireMap(value: unknown, what: string, Err: typeof InvalidMessageError | typeof InvalidParameterError): ReadonlyMap<unknown, unknown> {
  if (!(value instanceof Map)) throw new Err(`${what} must be a Map, got ${formatValue(value)}`);
  if (value.size > 65_535) throw new Err(`${what} holds ${value.size} entries, more than a round has clients`);
  return value;
}

/** Whether `v` is a Uint8Array, asked without running a Proxy's traps. */
const isBytes = (v: unknown): v is Uint8Array => ArrayBuffer.isView(v) && v instanceof Uint8Array;

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

function l2Norm(v: Float64Array): number {
  let sq = 0;
  for (let i = 0; i < v.length; i++) sq += v[i]! * v[i]!;
  return Math.sqrt(sq);
}

/**
 * The distributed-DP noise share added to the quantized vector when
 * params.noise is given: Sk(mu) per word, mod 2^64, fresh keys (keyed from a
 * test's random source only where a test set one: SecureAggregationTesting).
 */
function addDistributedNoise(vector: Uint8Array, noise: { skellamMu: number }, random: RandomSource): void {
  let seed: Uint8Array | undefined;
  if (random !== cryptoRandom) random((seed = new Uint8Array(32)));
  addSkellamNoise(vector, noise.skellamMu, seed ? { seed } : undefined);
}

type ClientStage = 'created' | 'shared' | 'masked' | 'signed' | 'vouched' | 'unmasked';

interface Held {
  s: Uint8Array;
  b: Uint8Array;
}

export class SecureAggregationClient {
  static {
    keepClassName(this, 'SecureAggregationClient');
  }

  private stage: ClientStage = 'created';
  private b: Uint8Array | undefined;
  /** per neighbour it sent a share to: the share-encryption key and the pairwise mask seed */
  private readonly pairs = new Map<string, { encryption: Uint8Array; mask: Uint8Array }>();
  /** the shares it holds, per neighbour whose ciphertext it read */
  private readonly held = new Map<string, Held>();
  private answered: { key: string; shares: Map<string, Uint8Array> } | undefined;

  private constructor(
    readonly self: string,
    private readonly params: Checked,
    private readonly neighbours: ReadonlySet<string>,
    private readonly cKeys: KeyPair,
    private readonly sKeys: KeyPair,
    private readonly random: RandomSource,
    /** the consistency check's side of this client (when params.signature) */
    private readonly consistency: ConsistencyCheck | undefined,
  ) {}

  /** A client of the round: its two key pairs drawn. `testing` is for tests only (see SecureAggregationTesting). */
  static async create(self: string, params: SecureAggregationParams, testing?: SecureAggregationTesting): Promise<SecureAggregationClient> {
    const p = guardRead('the params', () => checkParams(params));
    const i = typeof self === 'string' ? p.index.get(self) : undefined;
    if (i === undefined) throw new InvalidParameterError(`${formatValue(self)} is not one of the round's clients`);
    const random = readOptions(testing, ['random'], 'testing').random ?? cryptoRandom;
    if (typeof random !== 'function') throw new InvalidParameterError(`testing.random must be a function, got ${formatValue(random)}`);
    const cKeys = await generateKeyPair(p.curve, random);
    const sKeys = await generateKeyPair(p.curve, random);
    const consistency = p.signature ? await ConsistencyCheck.create(p.signature, random, { run: p.run, round: p.round, self, threshold: p.threshold }) : undefined;
    return new SecureAggregationClient(self, p, new Set(p.graph[i]!.map((j) => p.clients[j]!)), cKeys, sKeys, random, consistency);
  }

  /** Stage 1: the two public keys (and the verification key of the consistency check). */
  advertise(): AdvertisedKeys {
    const vk = this.consistency?.verificationKey();
    return { cPk: this.cKeys.publicKey.slice(), sPk: this.sKeys.publicKey.slice(), ...(vk ? { vk } : {}) };
  }

  /**
   * Stage 2: from its neighbours' keys, one ciphertext per neighbour (its
   * shares of this client's s key and self-mask seed) and the commitment to
   * that seed. A neighbour whose keys admit no agreement gets no share.
   */
  async shareKeys(keys: ReadonlyMap<string, AdvertisedKeys>): Promise<{ shares: Map<string, Uint8Array>; commitment: Uint8Array }> {
    if (this.stage !== 'created') throw new InvalidParameterError(`shareKeys() comes once, after create(); this client is past it (${this.stage})`);
    const p = this.params;
    const usable = guardRead(
      "the neighbours' keys",
      () => {
        const out: { id: string; keys: AdvertisedKeys }[] = [];
        for (const [id, k] of requireMap(keys, "the neighbours' keys", InvalidMessageError)) {
          if (typeof id !== 'string' || !this.neighbours.has(id)) throw new InvalidMessageError(`keys of ${formatValue(id)}, who is not a neighbour of ${this.self}`);
          out.push({ id, keys: requireKeysMessage(p, k, `the keys of ${id}`, InvalidMessageError) });
        }
        return out;
      },
      InvalidMessageError,
    );
    usable.sort((a, b) => p.index.get(a.id)! - p.index.get(b.id)!);
    for (const { id, keys: k } of usable) if (k.vk) this.consistency?.learn(id, k.vk);
    const derived = await Promise.all(
      usable.map(async ({ id, keys: k }) => {
        try {
          const pair = pairOf(p, this.self, id);
          const [cPeer, sPeer] = await Promise.all([importPublicKey(p.curve, k.cPk), importPublicKey(p.curve, k.sPk)]);
          const encryption = await agree(this.cKeys.privateKey, cPeer, { purpose: 'share-encryption', run: p.run, round: p.round, ...pair });
          const mask = await agree(this.sKeys.privateKey, sPeer, { purpose: 'mask', run: p.run, round: p.round, ...pair });
          return { id, encryption, mask };
        } catch (e) {
          if (e instanceof InvalidDataError) return undefined;
          throw e;
        }
      }),
    );
    const peers = derived.filter((d): d is { id: string; encryption: Uint8Array; mask: Uint8Array } => d !== undefined);
    if (peers.length < p.threshold) {
      throw new SecureAggregationError(`${this.self} has ${peers.length} neighbours with usable keys, fewer than the threshold ${p.threshold}: its secrets could not be recovered`);
    }
    const b = new Uint8Array(SEED_BYTES);
    this.random(b);
    const xs = peers.map((d) => p.index.get(d.id)! + 1);
    const sShares = shamirSplit(this.sKeys.secret, p.threshold, xs, this.random);
    const bShares = shamirSplit(b, p.threshold, xs, this.random);
    const shares = new Map<string, Uint8Array>();
    for (const [i, d] of peers.entries()) {
      const plaintext = new Uint8Array(PLAINTEXT_BYTES);
      plaintext.set(sShares[i]!.value);
      plaintext.set(bShares[i]!.value, SHARE_BYTES);
      shares.set(d.id, await encryptShare(d.encryption, plaintext, shareAad(p.run, p.round, this.self, d.id), this.random));
      this.pairs.set(d.id, { encryption: d.encryption, mask: d.mask });
    }
    this.b = b;
    this.stage = 'shared';
    return { shares, commitment: await commitment([p.run, String(p.round), this.self], b) };
  }

  /**
   * Stage 3: reads the shares routed to it (one per linked neighbour) and
   * returns its input quantized and masked. `refused`: the neighbours whose
   * ciphertext failed to decrypt or parse (the server excludes them).
   */
  async maskedInput(received: ReadonlyMap<string, Uint8Array>, input: Float64Array): Promise<{ masked: Uint8Array; refused: string[] }> {
    if (this.stage !== 'shared') throw new InvalidParameterError(`maskedInput() comes once, after shareKeys(); this client is at ${this.stage}`);
    const p = this.params;
    if (!isFloat64Array(input) || input.length !== p.length) throw new InvalidParameterError(`the input must be a Float64Array of ${p.length} values, got ${formatValue(input)}`);
    const given = guardRead(
      'the shares received',
      () => {
        const out = new Map<string, Uint8Array | undefined>();
        for (const [id, ct] of requireMap(received, 'the shares received', InvalidMessageError)) {
          if (typeof id !== 'string' || !this.pairs.has(id)) throw new InvalidMessageError(`a share from ${formatValue(id)}, to whom ${this.self} sent none`);
          out.set(id, isBytes(ct) ? ct.slice() : undefined);
        }
        return out;
      },
      InvalidMessageError,
    );
    const linked = [...given.keys()];
    if (linked.length < p.threshold) throw new SecureAggregationError(`${this.self} has ${linked.length} linked neighbours, fewer than the threshold ${p.threshold}`);
    const refused: string[] = [];
    for (const id of linked) {
      const held = await this.open(id, given.get(id));
      if (held) this.held.set(id, held);
      else refused.push(id);
    }
    // the noise is calibrated to one contribution of L2 norm at most clip (distributed-noise.ts): a longer one is refused, its norm not named
    if (p.noise && !(l2Norm(input) <= p.fixedPoint.clip)) {
      throw new InvalidDataError(`the input's L2 norm exceeds clip ${p.fixedPoint.clip}, the bound its distributed noise is calibrated to: clip it before aggregating, or raise clip`);
    }
    // quantize before anything is spent: a refused input leaves the client where it was
    const vector = quantize(input, p.fixedPoint);
    if (p.noise) addDistributedNoise(vector, p.noise, this.random);
    const masks: Mask[] = [{ seed: this.b!, sign: 1 }];
    for (const id of linked) masks.push({ seed: this.pairs.get(id)!.mask, sign: maskSign(p, this.self, id) });
    applyMasks(vector, masks);
    this.stage = 'masked';
    return { masked: vector, refused: refused.sort((a, b) => p.index.get(a)! - p.index.get(b)!) };
  }

  /** The two shares in a neighbour's ciphertext, or undefined when it is not authentic or not two field elements' worth. */
  private async open(from: string, ciphertext: unknown): Promise<Held | undefined> {
    if (!isBytes(ciphertext) || ciphertext.length !== SHARE_CIPHERTEXT_BYTES) return undefined;
    const p = this.params;
    let plain: Uint8Array;
    try {
      plain = await decryptShare(this.pairs.get(from)!.encryption, ciphertext, shareAad(p.run, p.round, from, this.self));
    } catch (e) {
      if (e instanceof InvalidDataError) return undefined;
      throw e;
    }
    if (plain.length !== PLAINTEXT_BYTES) return undefined;
    const view = new DataView(plain.buffer, plain.byteOffset, plain.byteLength);
    // every word a field element (< 2^61 - 1)
    for (let w = 0; w < PLAINTEXT_BYTES / 8; w++) {
      const hi = view.getUint32(8 * w + 4, true);
      const lo = view.getUint32(8 * w, true);
      if (hi > 0x1fffffff || (hi === 0x1fffffff && lo === 0xffffffff)) return undefined;
    }
    return { s: plain.slice(0, SHARE_BYTES), b: plain.slice(SHARE_BYTES) };
  }

  /** A list of the round's clients, each once (an InvalidMessageError otherwise). */
  private readClients(list: readonly string[], what: string): Set<string> {
    const p = this.params;
    return guardRead(
      what,
      () => {
        if (!Array.isArray(list) || list.length > p.clients.length) throw new InvalidMessageError(`${what} must be a list of the round's clients, got ${formatValue(list)}`);
        const set = new Set<string>();
        for (const id of list) {
          if (typeof id !== 'string' || !p.index.has(id) || set.has(id)) throw new InvalidMessageError(`${what} must list the round's clients once each; ${formatValue(id)} is not one or is repeated`);
          set.add(id);
        }
        return set;
      },
      InvalidMessageError,
    );
  }

  /** The paper's checks of a survivor set: this client in it, at least threshold members. */
  private requireSurvivorSet(alive: ReadonlySet<string>): void {
    if (!alive.has(this.self)) throw new SecureAggregationError(`the survivors named do not include ${this.self}, which is asked to answer as one`);
    if (alive.size < this.params.threshold) throw new SecureAggregationError(`${alive.size} survivors are fewer than the threshold ${this.params.threshold}`);
  }

  /**
   * Consistency check (with params.signature), after maskedInput(): the
   * client's signature of the survivor set the server names - one set only:
   * the same set again gives the same signature, another is refused.
   */
  async signSurvivors(survivors: readonly string[]): Promise<Uint8Array> {
    if (!this.consistency) throw new InvalidParameterError('this round has no consistency check (params.signature is not set)');
    if (this.stage !== 'masked' && this.stage !== 'signed') throw new InvalidParameterError(`signSurvivors() comes after maskedInput(); this client is at ${this.stage}`);
    const alive = this.readClients(survivors, 'survivors');
    this.requireSurvivorSet(alive);
    const signature = await this.consistency.sign([...alive].sort((a, b) => this.params.index.get(a)! - this.params.index.get(b)!));
    this.stage = 'signed';
    return signature;
  }

  /**
   * Consistency check, after signSurvivors(): the neighbours' signatures the
   * server forwarded. Any that does not verify over the set this client
   * signed, or fewer than threshold of them, is refused (a
   * SecureAggregationError): this client then never unmasks.
   */
  async acceptSignatures(signatures: ReadonlyMap<string, Uint8Array>): Promise<void> {
    if (!this.consistency) throw new InvalidParameterError('this round has no consistency check (params.signature is not set)');
    if (this.stage !== 'signed') throw new InvalidParameterError(`acceptSignatures() comes once, after signSurvivors(); this client is at ${this.stage}`);
    await this.consistency.check(signatures);
    this.stage = 'vouched';
  }

  /**
   * Stage 4: for each neighbour whose shares it holds, its b share when the
   * neighbour survived, its s-key share when it dropped. Refused (a
   * SecureAggregationError) when the lists overlap, when this client is not
   * among the survivors or fewer than the threshold survived, when a second
   * request differs from the first (the answer to two different requests
   * could unmask a client), and, with the consistency check, before t
   * neighbours' signatures were verified or when the survivors are not the
   * set it signed.
   */
  unmask(survivors: readonly string[], dropped: readonly string[]): Map<string, Uint8Array> {
    const ready = this.consistency ? 'vouched' : 'masked';
    if (this.stage !== ready && this.stage !== 'unmasked') {
      if (this.consistency && (this.stage === 'masked' || this.stage === 'signed')) this.consistency.requireVouched(new Set());
      throw new InvalidParameterError(`unmask() comes after maskedInput(); this client is at ${this.stage}`);
    }
    const alive = this.readClients(survivors, 'survivors');
    const gone = this.readClients(dropped, 'dropped');
    for (const id of alive) if (gone.has(id)) throw new SecureAggregationError(`the server named ${id} both a survivor and dropped: answering would reveal its input`);
    const key = JSON.stringify([[...alive].sort(), [...gone].sort()]);
    if (this.answered) {
      if (this.answered.key !== key) throw new SecureAggregationError('a second unmask request that differs from the first: refused, the two answers together could unmask a client');
      return new Map([...this.answered.shares].map(([id, v]) => [id, v.slice()]));
    }
    this.requireSurvivorSet(alive);
    this.consistency?.requireVouched(alive);
    const out = new Map<string, Uint8Array>();
    // for each neighbour one share, never both: b when it survived, s when it is named dropped
    for (const [id, held] of this.held) {
      if (alive.has(id)) out.set(id, held.b.slice());
      else if (gone.has(id)) out.set(id, held.s.slice());
    }
    this.answered = { key, shares: new Map([...out].map(([id, v]) => [id, v.slice()])) };
    this.stage = 'unmasked';
    return out;
  }
}

type ServerStage = 'advertise' | 'shares' | 'masked' | 'consistency' | 'unmask' | 'done';

export class SecureAggregationServer {
  static {
    keepClassName(this, 'SecureAggregationServer');
  }

  private readonly p: Checked;
  private stage: ServerStage = 'advertise';
  /** clients still in the round */
  private readonly live: Set<string>;
  private readonly drops: SecureAggregationDrops = { advertise: [], shares: [], masked: [], unmask: [], consistency: [], forged: [], excluded: [], ruledOut: [] };
  /** the consistency check's signatures (when params.signature) */
  private readonly check: ServerConsistency | undefined;
  private readonly keys = new Map<string, AdvertisedKeys>();
  private readonly sharesFrom = new Map<string, Map<string, Uint8Array>>();
  private readonly commitments = new Map<string, Uint8Array>();
  private readonly links = new Map<string, Set<string>>();
  private readonly masked = new Map<string, Uint8Array>();
  private readonly refusals = new Map<string, string[]>();
  private request: { survivors: string[]; dropped: string[] } | undefined;
  private readonly answers = new Map<string, Map<string, Uint8Array>>();
  private advertisedView: Map<string, Map<string, AdvertisedKeys>> | undefined;
  private routedView: Map<string, Map<string, Uint8Array>> | undefined;

  constructor(params: SecureAggregationParams) {
    this.p = guardRead('the params', () => checkParams(params));
    this.live = new Set(this.p.clients);
    this.check = this.p.signature ? new ServerConsistency(this.p.signature, this.p.run, this.p.round, this.p.threshold) : undefined;
  }

  private neighboursOf(id: string): string[] {
    return this.p.graph[this.p.index.get(id)!]!.map((j) => this.p.clients[j]!);
  }

  private requireStage(stage: ServerStage, what: string): void {
    if (this.stage !== stage) throw new InvalidMessageError(`${what} arrived at the ${this.stage} stage, not at ${stage}`, `${what} out of stage`);
  }

  private requireLive(from: unknown, what: string): string {
    if (typeof from !== 'string' || !this.live.has(from)) throw new InvalidMessageError(`${what} from ${formatValue(from)}, who is not in the round`, `${what} from a client not in the round`);
    return from;
  }

  private ordered(ids: Iterable<string>): string[] {
    return [...ids].sort((a, b) => this.p.index.get(a)! - this.p.index.get(b)!);
  }

  private remove(id: string, stage: keyof SecureAggregationDrops): void {
    if (!this.live.delete(id)) return;
    this.drops[stage].push(id);
  }

  private requireEnough(count: number, what: string, isolated = 0): void {
    if (count < this.p.threshold) {
      const also = isolated > 0 ? ` (${isolated} more were dropped for having fewer than ${this.p.threshold} neighbours left to hold their shares)` : '';
      throw new SecureAggregationError(`${what}: ${count} clients are left${also}, fewer than the threshold ${this.p.threshold}; the round's sum cannot be released`);
    }
  }

  /**
   * Drops, repeatedly, every client with fewer than `threshold` partners in
   * `partners` (its shares could not be recovered), recording it at `stage`.
   */
  private pruneIsolated(partners: (id: string) => string[], stage: keyof SecureAggregationDrops): number {
    const before = this.live.size;
    for (let changed = true; changed; ) {
      changed = false;
      for (const id of this.ordered(this.live)) {
        if (partners(id).filter((v) => this.live.has(v)).length < this.p.threshold) {
          this.remove(id, stage);
          changed = true;
        }
      }
    }
    return before - this.live.size;
  }

  /** Stage 1: a client's public keys. */
  acceptAdvertise(from: string, keys: AdvertisedKeys): void {
    guardRead(`keys from ${typeof from === 'string' ? from : 'a client'}`, () => this.acceptAdvertiseRead(from, keys), InvalidMessageError);
  }

  private acceptAdvertiseRead(from: string, keys: AdvertisedKeys): void {
    this.requireStage('advertise', 'keys');
    const id = this.requireLive(from, 'keys');
    if (this.keys.has(id)) throw new InvalidMessageError(`${id} advertised its keys twice`, 'keys advertised twice');
    this.keys.set(id, requireKeysMessage(this.p, keys, `the keys of ${id}`, InvalidMessageError));
  }

  /**
   * Ends stage 1: for each client still in, its neighbours' keys. A client
   * that advertised nothing is dropped; so is one left with fewer than
   * threshold neighbours. Fewer than threshold clients: SecureAggregationError.
   */
  advertised(): Map<string, Map<string, AdvertisedKeys>> {
    if (this.advertisedView) return this.copyAdvertised();
    this.requireStage('advertise', 'the end of advertising');
    for (const id of this.ordered(this.live)) if (!this.keys.has(id)) this.remove(id, 'advertise');
    const isolated = this.pruneIsolated((id) => this.neighboursOf(id), 'advertise');
    this.stage = 'shares';
    this.requireEnough(this.live.size, 'after the keys were advertised', isolated);
    const view = new Map<string, Map<string, AdvertisedKeys>>();
    for (const id of this.ordered(this.live)) {
      view.set(id, new Map(this.neighboursOf(id).filter((v) => this.live.has(v)).map((v) => [v, this.keys.get(v)!])));
    }
    this.advertisedView = view;
    return this.copyAdvertised();
  }

  private copyAdvertised(): Map<string, Map<string, AdvertisedKeys>> {
    return new Map([...this.advertisedView!].map(([id, m]) => [id, new Map([...m].map(([v, k]) => [v, { cPk: k.cPk.slice(), sPk: k.sPk.slice(), ...(k.vk ? { vk: k.vk.slice() } : {}) }]))]));
  }

  /** Stage 2: a client's ciphertexts (one per neighbour it shares with) and its commitment. */
  acceptShares(from: string, shares: ReadonlyMap<string, Uint8Array>, commitment: Uint8Array): void {
    guardRead(`shares from ${typeof from === 'string' ? from : 'a client'}`, () => this.acceptSharesRead(from, shares, commitment), InvalidMessageError);
  }

  private acceptSharesRead(from: string, shares: ReadonlyMap<string, Uint8Array>, commitment: Uint8Array): void {
    this.requireStage('shares', 'shares');
    const id = this.requireLive(from, 'shares');
    if (this.sharesFrom.has(id)) throw new InvalidMessageError(`${id} sent its shares twice`, 'shares sent twice');
    const given = requireMap(shares, `the shares of ${id}`, InvalidMessageError);
    const allowed = new Set(this.advertisedView!.get(id)!.keys());
    const copy = new Map<string, Uint8Array>();
    for (const [to, ct] of given) {
      if (typeof to !== 'string' || !allowed.has(to)) throw new InvalidMessageError(`${id} addressed a share to ${formatValue(to)}, not one of its neighbours in the round`, 'a share addressed to a client that is not a neighbour');
      if (!isBytes(ct) || ct.length !== SHARE_CIPHERTEXT_BYTES) throw new InvalidMessageError(`${id}'s share for ${to} must be ${SHARE_CIPHERTEXT_BYTES} bytes`, 'a share ciphertext of the wrong size');
      copy.set(to, ct.slice());
    }
    if (!isBytes(commitment) || commitment.length !== COMMITMENT_BYTES) throw new InvalidMessageError(`${id}'s commitment must be ${COMMITMENT_BYTES} bytes`, 'a commitment of the wrong size');
    this.sharesFrom.set(id, copy);
    this.commitments.set(id, commitment.slice());
  }

  /**
   * Ends stage 2: for each client still in, the ciphertexts addressed to it
   * by its linked neighbours. A client that sent none is dropped; so is one
   * with fewer than threshold linked neighbours.
   */
  routed(): Map<string, Map<string, Uint8Array>> {
    if (this.routedView) return this.copyRouted();
    this.requireStage('shares', 'the end of share distribution');
    for (const id of this.ordered(this.live)) if (!this.sharesFrom.has(id)) this.remove(id, 'shares');
    const linkedTo = (id: string): string[] => [...this.sharesFrom.get(id)!.keys()].filter((v) => this.live.has(v) && this.sharesFrom.get(v)?.has(id));
    const isolated = this.pruneIsolated(linkedTo, 'shares');
    this.stage = 'masked';
    this.requireEnough(this.live.size, 'after the shares were distributed', isolated);
    const view = new Map<string, Map<string, Uint8Array>>();
    for (const id of this.ordered(this.live)) {
      const partners = this.ordered(linkedTo(id));
      this.links.set(id, new Set(partners));
      view.set(id, new Map(partners.map((v) => [v, this.sharesFrom.get(v)!.get(id)!])));
    }
    this.routedView = view;
    return this.copyRouted();
  }

  private copyRouted(): Map<string, Map<string, Uint8Array>> {
    return new Map([...this.routedView!].map(([id, m]) => [id, new Map([...m].map(([v, c]) => [v, c.slice()]))]));
  }

  /** Stage 3: a client's masked input and the neighbours whose shares it refused. */
  acceptMasked(from: string, masked: Uint8Array, refused: readonly string[]): void {
    guardRead(`a masked input from ${typeof from === 'string' ? from : 'a client'}`, () => this.acceptMaskedRead(from, masked, refused), InvalidMessageError);
  }

  private acceptMaskedRead(from: string, masked: Uint8Array, refused: readonly string[]): void {
    this.requireStage('masked', 'a masked input');
    const id = this.requireLive(from, 'a masked input');
    if (this.masked.has(id)) throw new InvalidMessageError(`${id} sent its masked input twice`, 'masked input sent twice');
    if (!isBytes(masked) || masked.length !== 8 * this.p.length) {
      throw new InvalidMessageError(`${id}'s masked input must be ${8 * this.p.length} bytes (${this.p.length} u64 words), got ${formatValue(masked)}`, 'a masked input of the wrong size');
    }
    const partners = this.links.get(id)!;
    if (!Array.isArray(refused) || refused.length > partners.size) throw new InvalidMessageError(`${id}'s refusals must be a list of its linked neighbours`, 'refusals that are not a list of neighbours');
    const seen = new Set<string>();
    for (const v of refused) {
      if (typeof v !== 'string' || !partners.has(v) || seen.has(v)) throw new InvalidMessageError(`${id} refused ${formatValue(v)}, not a linked neighbour (or twice)`, 'a refusal of a client that is not a linked neighbour');
      seen.add(v);
    }
    this.masked.set(id, masked.slice());
    this.refusals.set(id, [...seen]);
  }

  /**
   * Ends stage 3: the survivors (masked input in, shares not refused by a
   * neighbour) and the dropped (shared keys, then dropped or excluded).
   */
  unmaskRequest(): { survivors: string[]; dropped: string[] } {
    if (this.request) return { survivors: [...this.request.survivors], dropped: [...this.request.dropped] };
    this.requireStage('masked', 'the end of masked input');
    for (const id of this.ordered(this.live)) if (!this.masked.has(id)) this.remove(id, 'masked');
    const excluded = new Set<string>();
    for (const id of this.live) for (const v of this.refusals.get(id)!) excluded.add(v);
    for (const v of this.ordered(excluded)) this.remove(v, 'excluded');
    // with the consistency check, the survivor set goes out first to be signed (signatures()), then the unmask request
    this.stage = this.check ? 'consistency' : 'unmask';
    const survivors = this.ordered(this.live);
    this.requireEnough(survivors.length, 'after the masked inputs');
    // a survivor's self-mask seed is rebuilt from t shares held by the other survivors: t + 1 of them at least
    if (survivors.length < this.p.threshold + 1) {
      throw new SecureAggregationError(`after the masked inputs: ${survivors.length} clients are left; each one's self-mask needs ${this.p.threshold} shares from the others, so at least ${this.p.threshold + 1} must survive; the round's sum cannot be released`);
    }
    const alive = new Set(survivors);
    // every client that shared keys and is not a survivor, whenever it left: survivors may have masked with it
    this.request = { survivors, dropped: this.ordered(this.links.keys()).filter((id) => !alive.has(id)) };
    return { survivors: [...survivors], dropped: [...this.request.dropped] };
  }

  /** Consistency check (params.signature): a survivor's signature of the survivor set of unmaskRequest(). */
  acceptSignature(from: string, signature: Uint8Array): void {
    guardRead(`a signature from ${typeof from === 'string' ? from : 'a client'}`, () => {
      if (!this.check) throw new InvalidMessageError('a signature, but this round has no consistency check', 'a signature without a consistency check');
      this.requireStage('consistency', 'a signature');
      this.check.accept(this.requireLive(from, 'a signature'), signature);
    }, InvalidMessageError);
  }

  /**
   * Ends the consistency check: for each survivor asked to unmask, its
   * neighbours' signatures of the survivor set (verified here too, so that an
   * honest server never forwards one that fails). A survivor that did not
   * sign, or has fewer than threshold neighbours that did, is not asked to
   * unmask (its input stays in the sum); one whose signature does not verify
   * is recorded in `forged`. Fewer than threshold asked: SecureAggregationError.
   */
  async signatures(): Promise<Map<string, Map<string, Uint8Array>>> {
    if (!this.check) throw new InvalidParameterError('this round has no consistency check (params.signature is not set)');
    this.requireStage('consistency', 'the end of the consistency check');
    this.stage = 'unmask';
    const { survivors } = this.request!;
    for (const id of survivors) if (this.live.has(id) && !this.check.has(id)) this.remove(id, 'consistency');
    const known = (id: string): string[] => [...this.advertisedView!.get(id)!.keys()];
    const { forged, unvouched, forwarded } = await this.check.close(survivors, survivors.filter((id) => this.live.has(id)), (id) => this.keys.get(id)!.vk!, known);
    for (const id of forged) this.remove(id, 'forged');
    for (const id of unvouched) this.remove(id, 'consistency');
    this.requireEnough(forwarded.size, 'after the consistency check');
    return new Map(this.ordered(forwarded.keys()).map((id) => [id, forwarded.get(id)!]));
  }

  /** Stage 4: a survivor's shares: b shares of survivors, s-key shares of dropped clients. */
  acceptUnmask(from: string, shares: ReadonlyMap<string, Uint8Array>): void {
    guardRead(`unmask shares from ${typeof from === 'string' ? from : 'a client'}`, () => this.acceptUnmaskRead(from, shares), InvalidMessageError);
  }

  private acceptUnmaskRead(from: string, shares: ReadonlyMap<string, Uint8Array>): void {
    this.requireStage('unmask', 'unmask shares');
    const id = this.requireLive(from, 'unmask shares');
    if (this.answers.has(id)) throw new InvalidMessageError(`${id} sent its unmask shares twice`, 'unmask shares sent twice');
    const given = requireMap(shares, `the unmask shares of ${id}`, InvalidMessageError);
    const partners = this.links.get(id)!;
    const copy = new Map<string, Uint8Array>();
    for (const [owner, share] of given) {
      if (typeof owner !== 'string' || !partners.has(owner)) throw new InvalidMessageError(`${id} sent a share of ${formatValue(owner)}, not a linked neighbour`, 'an unmask share of a client that is not a linked neighbour');
      if (!isBytes(share) || share.length !== SHARE_BYTES) throw new InvalidMessageError(`${id}'s share of ${owner} must be ${SHARE_BYTES} bytes`, 'an unmask share of the wrong size');
      copy.set(owner, share.slice());
    }
    this.answers.set(id, copy);
  }

  /**
   * Ends stage 4: the sum of the survivors' inputs. Every survivor's self
   * mask and every mask between a survivor and a dropped client is removed
   * with secrets reconstructed from valid shares (checked against the
   * commitment, or the advertised public key); a SecureAggregationError when
   * one cannot be, or fewer than threshold survivors answered.
   */
  async result(): Promise<SecureAggregationResult> {
    this.requireStage('unmask', 'the end of unmasking');
    this.stage = 'done';
    const p = this.p;
    const { survivors, dropped } = this.request!;
    for (const id of survivors) if (this.live.has(id) && !this.answers.has(id)) this.remove(id, 'unmask');
    const responders = survivors.filter((id) => this.answers.has(id) && this.live.has(id));
    this.requireEnough(responders.length, 'after unmasking');
    const sharesOf = (owner: string): { holder: string; share: ShamirShare }[] =>
      responders.filter((h) => this.answers.get(h)!.has(owner)).map((h) => ({ holder: h, share: { x: p.index.get(h)! + 1, value: this.answers.get(h)!.get(owner)! } }));
    const ruledOut = new Set<string>();
    const masks: Mask[] = [];
    for (const u of survivors) {
      const expected = this.commitments.get(u)!;
      const { secret, bad } = await reconstruct(u, 'self-mask seed', sharesOf(u), p.threshold, async (b) => equalBytes(await commitment([p.run, String(p.round), u], b), expected));
      bad.forEach((h) => ruledOut.add(h));
      masks.push({ seed: secret, sign: -1 });
    }
    const alive = new Set(survivors);
    for (const v of dropped) {
      const partners = [...this.links.get(v) ?? []].filter((u) => alive.has(u));
      if (partners.length === 0) continue;
      let key: KeyPair | undefined;
      const sPk = this.keys.get(v)!.sPk;
      const { bad } = await reconstruct(v, 'mask key', sharesOf(v), p.threshold, async (sk) => {
        try {
          const kp = await importSecretKey(p.curve, sk);
          if (!equalBytes(kp.publicKey, sPk)) return false;
          key = kp;
          return true;
        } catch (e) {
          if (e instanceof InvalidDataError) return false;
          throw e;
        }
      });
      bad.forEach((h) => ruledOut.add(h));
      for (const u of partners) {
        const peer = await importPublicKey(p.curve, this.keys.get(u)!.sPk);
        const seed = await agree(key!.privateKey, peer, { purpose: 'mask', run: p.run, round: p.round, ...pairOf(p, u, v) });
        masks.push({ seed, sign: maskSign(p, u, v) === 1 ? -1 : 1 });
      }
    }
    const total = sumWords(survivors.map((id) => this.masked.get(id)!), 8 * p.length);
    applyMasks(total, masks);
    this.drops.ruledOut = this.ordered(ruledOut);
    return {
      sum: dequantize(total, p.fixedPoint),
      survivors: [...survivors],
      bound: quantizationBound(p.fixedPoint, survivors.length),
      dropped: this.dropsCopy(),
    };
  }

  /** A client gone at the current stage (timeout, dropout, or a message refused as invalid). */
  drop(id: string): void {
    if (typeof id !== 'string' || !this.p.index.has(id)) throw new InvalidParameterError(`${formatValue(id)} is not one of the round's clients`);
    if (!this.live.has(id)) return;
    switch (this.stage) {
      case 'advertise':
        this.keys.delete(id);
        this.remove(id, 'advertise');
        return;
      case 'shares':
        this.sharesFrom.delete(id);
        this.commitments.delete(id);
        this.remove(id, 'shares');
        return;
      case 'masked':
        this.masked.delete(id);
        this.refusals.delete(id);
        this.remove(id, 'masked');
        return;
      case 'consistency':
        // a survivor that will not sign: its input stays in the sum, it is not asked to unmask
        this.check!.forget(id);
        this.remove(id, 'consistency');
        return;
      case 'unmask':
        // a survivor that will not answer: its input stays in the sum
        this.answers.delete(id);
        this.remove(id, 'unmask');
        return;
      case 'done':
        return;
    }
  }

  /** The clients gone so far, per stage. */
  dropped(): SecureAggregationDrops {
    return this.dropsCopy();
  }

  private dropsCopy(): SecureAggregationDrops {
    const d = this.drops;
    return { advertise: [...d.advertise], shares: [...d.shares], masked: [...d.masked], unmask: [...d.unmask], consistency: [...d.consistency], forged: [...d.forged], excluded: [...d.excluded], ruledOut: [...d.ruledOut] };
  }
}

/** The next subset of t indices of 0..r-1 in lexicographic order, or false after the last. */
function nextSubset(pick: number[], r: number): boolean {
  const t = pick.length;
  let i = t - 1;
  while (i >= 0 && pick[i] === r - t + i) i--;
  if (i < 0) return false;
  pick[i]!++;
  for (let j = i + 1; j < t; j++) pick[j] = pick[j - 1]! + 1;
  return true;
}

function binomialAtMost(r: number, t: number, cap: number): number {
  let c = 1;
  for (let i = 0; i < t; i++) {
    c = (c * (r - i)) / (i + 1);
    if (c > cap) return cap + 1;
  }
  return Math.round(c);
}

/**
 * A secret from `shares`, checked by `check`: the first `threshold` shares,
 * then other subsets (all of them when there are at most 256, else 256 drawn
 * at random) until one passes. The holders whose shares do not lie on the
 * polynomial found are returned as `bad`. None passing: a SecureAggregationError.
 */
async function reconstruct(
  owner: string,
  what: string,
  shares: { holder: string; share: ShamirShare }[],
  threshold: number,
  check: (secret: Uint8Array) => Promise<boolean>,
): Promise<{ secret: Uint8Array; bad: string[] }> {
  const r = shares.length;
  if (r < threshold) throw new SecureAggregationError(`${owner}'s ${what} needs ${threshold} shares; ${r} arrived`);
  const exhaustive = binomialAtMost(r, threshold, MAX_RECONSTRUCTION_TRIES) <= MAX_RECONSTRUCTION_TRIES;
  let pick = Array.from({ length: threshold }, (_, i) => i);
  for (let tries = 0; tries < MAX_RECONSTRUCTION_TRIES; tries++) {
    if (tries > 0) {
      if (exhaustive) {
        if (!nextSubset(pick, r)) break;
      } else pick = randomSubset(r, threshold);
    }
    const subset = pick.map((i) => shares[i]!.share);
    let secret: Uint8Array;
    try {
      secret = shamirCombine(subset, threshold);
    } catch (e) {
      if (e instanceof InvalidDataError) continue;
      throw e;
    }
    if (!(await check(secret))) continue;
    const chosen = new Set(pick);
    const bad = shares.filter((s, i) => !chosen.has(i) && !equalBytes(shamirShareAt(subset, threshold, s.share.x), s.share.value)).map((s) => s.holder);
    return { secret, bad };
  }
  throw new SecureAggregationError(`could not reconstruct ${owner}'s ${what}: no ${threshold} of the ${r} shares that arrived pass its check (too many wrong shares)`);
}

function randomSubset(r: number, t: number): number[] {
  const all = Array.from({ length: r }, (_, i) => i);
  const bytes = new Uint32Array(t);
  globalThis.crypto.getRandomValues(bytes);
  for (let i = 0; i < t; i++) {
    const j = i + (bytes[i]! % (r - i));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, t).sort((a, b) => a - b);
}
