/**
 * The one round loop of every federation, in stages, each a function below:
 *   sample     the clients that are there (the transport says), not excluded,
 *              sampled when the policy asks; minClients before the first round
 *   configure  the server's requests, checked against its protocol
 *   exchange   one exchange through the transport, its traffic counted
 *   judge      every reply judged (size, envelope, sender, round, kind,
 *              schema, the server's own check); nothing touches server state
 *   policy     failures (timeouts, dropouts, refusals, invalid replies)
 *              excluded or failing the run; minReplies, maxExcludedShare
 *   aggregate  the server's aggregate, again without a reply that breaks it
 *   account    the round into the history; the run's hooks (RunHooks):
 *              onRound, onCheckpoint, stopWhen
 * Rounds, bytes and timings are counted here, for every algorithm alike.
 *
 * The loop is written once, as a generator that yields its waits (for
 * clients, for an exchange, for a checkpoint hook); `runFederation` drives it
 * over any transport, `runFederationSync` over an in-process transport of
 * synchronous clients (the one-call functions such as distributedEM stay
 * synchronous).
 */
import { ContributionError, FederationError, FedmixError, formatValue, InvalidMessageError, InvalidParameterError, InvalidDataError, NumericalError, NotFittedError, PrivacyBudgetError, type FedmixErrorCode } from '../../errors.js';
import { LIMITS, guardRead, isArray, optionKeys, readArray, readOptions, readRecord, requireInteger } from '../../validate.js';
import { Rng, type RngState } from '../../random.js';
import type { ResumePoint } from './checkpoint.js';
import { resumePointOf } from './resume-point.js';
import { BinaryInProcess, decodeMessage } from '../messages/codec.js';
import { checkEnvelope, freshRunId, isRunId, withRun, type Message } from '../messages/envelope.js';
import { InProcessTransport } from '../transport/in-process.js';
import type { Exchange, ExchangeOptions, Interruption, Received, SyncTransport, Transport } from '../transport/transport.js';
import { REFUSAL, refusalReason } from './client-host.js';
import { MissedRounds, type MissedRoundsState } from './missed-rounds.js';
import { resolvePolicy, type FederationPolicy, type ResolvedPolicy } from './policy.js';
import { roundStep, RunLedger, type RoundPrivacy, type RunPrivacy } from './privacy-ledger.js';
import type { RdpAccountantJSON } from '../../privacy/accountant.js';
import type { PrivacyStep } from '../messages/envelope.js';
import { checkServerRole, sealedContext, totalUsers, usersIn, type ClientRole, type ExcludedClient, type Failure, type RoundContext, type ServerRole } from './roles.js';
import type { SecurePlan, SecureRoundRecord } from '../secure-aggregation/round.js';
import type { AdditiveLayout } from '../secure-aggregation/layout.js';

/**
 * The secure round (SecAgg+'s state machines, keys, Shamir, fixed point, Skellam noise), loaded when a
 * run under policy secureAggregation first needs it: a program whose runs never ask for it does not
 * carry it (test/package-size.test.ts counts it as a lazy chunk).
 */
type SecureRoundModule = typeof import('../secure-aggregation/round.js');
const loadSecureRound = (): Promise<SecureRoundModule> => import('../secure-aggregation/round.js');

export interface Traffic {
  /** communication rounds: rounds whose requests expect replies (a result sent back ends no round) */
  rounds: number;
  bytesUp: number;
  bytesDown: number;
  messagesUp: number;
  messagesDown: number;
  /**
   * users the accepted replies stood for, where some client of the run stands
   * for a group of users (ClientRole.users: it answers for all of them in one
   * message, so messagesUp counts groups); absent when every client is one user
   */
  users?: number;
}

export interface ClientTraffic {
  bytesUp: number;
  bytesDown: number;
  messagesUp: number;
  messagesDown: number;
}

/** One round as the runtime saw it. */
export interface RoundRecord {
  round: number;
  /** the kind of the round's requests */
  kind: string;
  /** false for a round of notifications (the result sent back) */
  replies: boolean;
  asked: number;
  accepted: number;
  /** users the accepted replies stood for (as `accepted` when every client is one user) */
  users: number;
  failures: Failure[];
  bytesUp: number;
  bytesDown: number;
  /** milliseconds: the server's configure, the exchange (clients' work and transport), judging the replies, the server's aggregate */
  ms: { configure: number; exchange: number; accept: number; aggregate: number };
  /** what the server's aggregate reported for the round */
  metrics?: unknown;
  /** outages of the transport the round rode out: each repeated the round (see Exchange.interruptions) */
  interruptions?: Interruption[];
  /** clients that left the quorum in this round: they missed maxMissedRounds rounds in a row */
  sidelined?: string[];
  /** clients back in the quorum: they answered again (late) or came back after being away */
  reinstated?: string[];
  /**
   * replies of another run (a dead run's, delivered again by a broker or a
   * reconnecting client), dropped without being judged: how many (absent: none)
   */
  otherRun?: number;
  /**
   * the privacy step the round's requests declared (the noise of its
   * release) and, with the policy's privacy accounting, the epsilon the run
   * has spent after this round (RDP composed over the rounds) at delta, with
   * the order that gives it (absent: no step and no accounting)
   */
  privacy?: RoundPrivacy;
  /** a secure round (policy secureAggregation): its parameters, survivors, clients dropped per stage, the quantization bound */
  secure?: SecureRoundRecord;
}

export interface FederationResult<R = unknown> {
  /** what the server produced (its result()) */
  model: R;
  /** the run's id: every request carried it, and only replies carrying it counted (a resumed run keeps its checkpoint's) */
  run: string;
  /** communication rounds */
  rounds: number;
  traffic: Traffic;
  /** by client id */
  clientTraffic: Map<string, ClientTraffic>;
  /** clients the policy took out, with the round and the reason (those given as excludedBefore first, round 0) */
  excluded: ExcludedClient[];
  /** every failure, excluded or not (timeouts and dropouts only cost a round) */
  failures: Failure[];
  history: RoundRecord[];
  /** wall time of the whole run */
  seconds: number;
  /** set when a stopWhen hook, or the privacy budget, ended the run before the server was done: after which round, and why */
  stoppedEarly?: { round: number; reason: string };
  /** with the policy's privacy accounting: epsilon spent over the run at delta, the order, the budget and the steps composed */
  privacy?: RunPrivacy;
}

/**
 * A round as the per-round hooks see it: its record (as `history` keeps it)
 * with the clients it excluded and the run's time so far.
 */
export interface RoundReport extends RoundRecord {
  /** the clients excluded in this round (by the policy, or because their contribution broke the aggregate), with the reasons */
  excluded: ExcludedClient[];
  /** seconds since the run started */
  elapsed: number;
}

/**
 * What a checkpoint needs, after each complete round: the server role between
 * rounds (its state is the model so far) and everything the runtime counts,
 * so that a run restored from it goes on as this one would. Copies: a hook
 * may keep them.
 */
export interface RunCheckpoint {
  /** the run's id: a run resumed from this checkpoint keeps it */
  run: string;
  /** the last complete communication round */
  round: number;
  /** the server role, between rounds (not to be used while the run goes on, other than to read or save its state) */
  server: ServerRole;
  /** the policy the run follows, resolved */
  policy: ResolvedPolicy;
  /** clients excluded so far (those given as excludedBefore first) */
  excluded: ExcludedClient[];
  /** every failure so far */
  failures: Failure[];
  /** every client the run has seen, and those excluded before it: the count maxExcludedShare is a share of */
  seen: string[];
  /** every client some round found available */
  known: string[];
  /** the clients excluded before the run (RunOptions.excludedBefore) */
  before: string[];
  /** users the accepted replies stood for, over the run */
  users: number;
  /** whether some client stood for a group of users */
  grouped: boolean;
  /** the client sampler's state (with sampling: fraction below 1) */
  sampler?: RngState;
  /** by client, the rounds it missed: a late reply for one of them is dropped as stale, not held against it */
  missed: Map<string, number[]>;
  /** the client sampler's draws so far, [available, asked] each: replayed from sampleSeed they restore it (empty without sampling) */
  sampleDraws: [number, number][];
  /** rounds missed in a row by client, and the clients out of the quorum (maxMissedRounds): a resumed run goes on with them */
  quorum: MissedRoundsState;
  traffic: Traffic;
  clientTraffic: Map<string, ClientTraffic>;
  history: RoundRecord[];
  /** seconds since the run started */
  elapsed: number;
  /** with the policy's privacy accounting: the run's accountant (the steps composed so far) */
  accountant?: RdpAccountantJSON;
}

/**
 * The run's hooks (each optional, each a function). After every complete
 * round, in this order: onRound, onCheckpoint, stopWhen; after a round of
 * notifications (the result sent back) only onRound. An error a hook throws
 * ends the run with that error, as the server's own would.
 */
export interface RunHooks {
  /** called after every round, with its record, its exclusions and the time so far */
  onRound?: (report: RoundReport) => void;
  /**
   * called after every complete round with what a checkpoint needs;
   * runFederation waits for a promise it returns before the next round
   * (runFederationSync cannot: a promise there is an InvalidParameterError)
   */
  onCheckpoint?: (checkpoint: RunCheckpoint) => void | Promise<void>;
  /**
   * early stopping: called after every complete round while the server is
   * not done; true, or a reason (a non-empty string), ends the run there. The
   * server's result() is then what the run produced, the result's
   * `stoppedEarly` says after which round and why, and no result is sent
   * back to the clients (over a network, the transport tells them the run
   * ended, with that reason).
   */
  stopWhen?: (report: RoundReport) => boolean | string | undefined | void;
}

export interface RunOptions extends FederationPolicy, RunHooks {
  /**
   * clients left out before the first round, with their reasons (a
   * simulation's clients whose creation failed, round 0): never asked, listed
   * first in the result's `excluded` and counted by maxExcludedShare
   */
  excludedBefore?: readonly ExcludedClient[];
  /**
   * a saved checkpoint (saveCheckpoint's output, or its text) to resume
   * from: the run starts at the round after it, with its counters, history,
   * exclusions and client sampler, and the server role must be the one
   * restored from it (restoreServer). The policy is the saved one, but for
   * the policy options given here; fraction and sampleSeed cannot change.
   */
  resume?: unknown;
  /**
   * the run's id, stamped on every request (a reply counts only when it
   * carries it): default the checkpoint's when resumed, else the transport's
   * (an MqttTransport announces one in its status messages), else a fresh
   * one of 128 random bits. A resumed run cannot change it.
   */
  run?: string;
}

/** The hooks' names (the compiler checks the list is complete). */
export const HOOK_KEYS = optionKeys<RunHooks>()({ onRound: true, onCheckpoint: true, stopWhen: true });

/** Every option of RunOptions, for readOptions (the compiler checks it is complete). */
export const RUN_KEYS = optionKeys<RunOptions>()({ onRound: true, onCheckpoint: true, stopWhen: true, excludedBefore: true, resume: true, run: true, onInvalid: true, minClients: true, minReplies: true, fraction: true, sampleSeed: true, roundTimeout: true, joinTimeout: true, maxMessageBytes: true, maxExcludedShare: true, maxMissedRounds: true, privacy: true, secureAggregation: true });

/** The hooks of `given`, checked: each one given must be a function. */
export function readRunHooks(given: RunHooks | undefined, name = 'hooks'): RunHooks {
  return checkHooks(readOptions(given, HOOK_KEYS, name) as RunHooks);
}

function checkHooks<H extends RunHooks>(hooks: H): H {
  for (const k of HOOK_KEYS) {
    if (hooks[k] !== undefined && typeof hooks[k] !== 'function') throw new InvalidParameterError(`${k} must be a function, got ${formatValue(hooks[k])}`);
  }
  return hooks;
}

/** The failure policy among a run's options: all but the hooks and excludedBefore. */
export function runPolicy(options: RunOptions): FederationPolicy {
  const { onRound: _r, onCheckpoint: _c, stopWhen: _s, excludedBefore: _b, resume: _from, run: _id, ...policy } = options;
  return policy;
}

type Effect =
  | { op: 'available'; min: number; timeoutMs: number; excluded: ReadonlySet<string> }
  | { op: 'exchange'; round: number; messages: ReadonlyMap<string, Message>; options: ExchangeOptions }
  | { op: 'checkpoint'; checkpoint: RunCheckpoint }
  | { op: 'await'; promise: Promise<unknown> };

const ERRORS: Partial<Record<FedmixErrorCode, new (m: string) => FedmixError>> = {
  INVALID_DATA: InvalidDataError,
  INVALID_PARAMETER: InvalidParameterError,
  INVALID_MESSAGE: InvalidMessageError,
  NUMERICAL: NumericalError,
  NOT_FITTED: NotFittedError,
  FEDERATION: FederationError,
  PRIVACY_BUDGET: PrivacyBudgetError,
};

/** Starts a reason with the client's id, once. */
function named(id: string, reason: string): string {
  return reason.startsWith(`${id}:`) || reason.startsWith(`${id} `) ? reason : `${id}: ${reason}`;
}

function sameBytes(a: Received, b: Received): boolean {
  // one reply delivered twice (in process, a reply is an object handed over, not bytes: BinaryInProcess)
  if (a === b) return true;
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** "n clients", or "n users (in m clients)" where some client stands for several users. */
function whoCount(users: number, clients: number, noun = 'client'): string {
  return users === clients ? `${users} ${noun}${users === 1 ? '' : 's'}` : `${users} users (in ${clients} ${noun}${clients === 1 ? '' : 's'})`;
}

/** A run's state across its rounds: what the stages below read and update. */
interface RunState<A, R> {
  /** the run's id (RunOptions.run) */
  readonly id: string;
  readonly server: ServerRole<A, R>;
  readonly policy: ResolvedPolicy;
  readonly options: RunOptions;
  /** the users a client declared it stands for */
  readonly usersOf: (id: string) => number;
  /** whether reasons may quote what clients sent (ServerRole.detailedReasons) */
  readonly detailed: boolean;
  readonly started: number;
  readonly traffic: Traffic;
  readonly clientTraffic: Map<string, ClientTraffic>;
  readonly excluded: ExcludedClient[];
  /** the excluded clients' ids: never asked again */
  readonly out: Set<string>;
  /** clients excluded before the run: counted with the clients it sees */
  readonly before: Set<string>;
  readonly failures: Failure[];
  readonly history: RoundRecord[];
  /** rounds each client missed (a late reply for one of them is stale, not a fault) */
  readonly missed: Map<string, Set<number>>;
  /** every client some round found available */
  readonly known: Set<string>;
  /** clients out of the quorum for missing rounds in a row (maxMissedRounds), and those back, for the next record */
  readonly quorum: MissedRounds;
  readonly reinstated: string[];
  readonly sampler: Rng | undefined;
  readonly sampleDraws: [number, number][];
  /** the last communication round */
  round: number;
  /** the round this run started after (0, or the checkpoint's when resumed) */
  readonly startRound: number;
  /** users the accepted replies stood for, over the run */
  userReplies: number;
  /** whether some client stood for a group of users */
  grouped: boolean;
  stoppedEarly?: { round: number; reason: string };
  /** the privacy accounting (with the policy's privacy) */
  readonly ledger: RunLedger | undefined;
}

function startRun<A, R>(id: string, server: ServerRole<A, R>, policy: ResolvedPolicy, options: RunOptions, usersOf: (id: string) => number, from?: ResumePoint): RunState<A, R> {
  if (from) return resumeRun(id, server, policy, options, usersOf, from);
  const excluded: ExcludedClient[] = (options.excludedBefore ?? []).map((e) => ({ ...e, reason: named(e.client, e.reason) }));
  const out = new Set(excluded.map((e) => e.client));
  return {
    id,
    server,
    policy,
    options,
    usersOf,
    detailed: server.detailedReasons !== false,
    started: performance.now(),
    traffic: { rounds: 0, bytesUp: 0, bytesDown: 0, messagesUp: 0, messagesDown: 0 },
    clientTraffic: new Map(),
    excluded,
    out,
    before: new Set(out),
    failures: [],
    history: [],
    missed: new Map(),
    known: new Set(),
    quorum: new MissedRounds(policy.maxMissedRounds),
    reinstated: [],
    sampler: policy.fraction < 1 ? new Rng(policy.sampleSeed) : undefined,
    sampleDraws: [],
    round: 0,
    startRound: 0,
    userReplies: 0,
    grouped: false,
    ledger: policy.privacy ? new RunLedger(policy.privacy) : undefined,
  };
}

/** A run's state from a checkpoint (readRunCheckpoint checked it), copied: the run goes on from the round after. */
function resumeRun<A, R>(id: string, server: ServerRole<A, R>, policy: ResolvedPolicy, options: RunOptions, usersOf: (id: string) => number, from: ResumePoint): RunState<A, R> {
  let sampler: Rng | undefined;
  if (from.sampler) {
    sampler = new Rng(0);
    try {
      sampler.setState(from.sampler);
    } catch (e) {
      sampler.dispose();
      throw e;
    }
  }
  const excluded = from.excluded.map((e) => ({ ...e }));
  return {
    id,
    server,
    policy,
    options,
    usersOf,
    detailed: server.detailedReasons !== false,
    started: performance.now() - from.elapsed * 1000,
    traffic: { ...from.traffic },
    clientTraffic: new Map([...from.clientTraffic].map(([id, t]) => [id, { ...t }])),
    excluded,
    out: new Set(excluded.map((e) => e.client)),
    before: new Set(from.before),
    failures: from.failures.map((f) => ({ ...f })),
    history: from.history.map((r) => ({ ...r })),
    missed: new Map([...from.missed].map(([id, rounds]) => [id, new Set(rounds)])),
    known: new Set(from.known),
    // absent from a checkpoint saved before it kept them: the counts start again
    quorum: new MissedRounds(policy.maxMissedRounds, from.quorum),
    reinstated: [],
    sampler,
    sampleDraws: from.sampleDraws.map(([n, k]) => [n, k]),
    round: from.round,
    startRound: from.round,
    userReplies: from.users,
    grouped: from.grouped,
    // the same ledger goes on: the steps composed before the checkpoint, composed again
    ledger: policy.privacy ? new RunLedger(policy.privacy, from.accountant) : undefined,
  };
}

/** A round planned: its context, the server's messages and the record the later stages fill in. */
interface PlannedRound {
  ctx: RoundContext;
  /** the server's requests, as it made them (what its accept() is given back) */
  requests: ReadonlyMap<string, Message>;
  /** the same requests stamped with the run's id: what the transport sends */
  wire: ReadonlyMap<string, Message>;
  record: RoundRecord;
  /** the privacy step its requests declare */
  step: PrivacyStep | undefined;
}

/** One round's replies judged: the accepted ones, the failures, and (policy 'fail') the first fault, where judging stopped. */
interface JudgedReplies<A> {
  accepted: Map<string, A>;
  /** the users each accepted reply stood for, where not one */
  replyUsers: Map<string, number>;
  failures: Failure[];
  /** clients that left the quorum this round (maxMissedRounds) */
  sidelined: string[];
  fault?: { client: string; reason: string; error?: FedmixError };
  /** replies of another run, dropped unjudged */
  otherRun: number;
}

/**
 * The loop: a round at a time until the server is done (or a hook stops it),
 * each round through the stages below. It yields its waits (for clients, for
 * an exchange, for a checkpoint hook) to the driver.
 */
function* federation<A, R>(id: string, server: ServerRole<A, R>, policy: ResolvedPolicy, options: RunOptions, usersOf: (id: string) => number, from?: ResumePoint): Generator<Effect, FederationResult<R>, unknown> {
  const run = startRun(id, server, policy, options, usersOf, from);
  try {
    while (!server.done) {
      // the run (or its resumption) starts once minClients are there (waiting up to joinTimeout); later rounds take who is there
      const first = run.round === run.startRound;
      const available = (yield { op: 'available', min: first ? policy.minClients : 0, timeoutMs: first ? policy.joinTimeoutMs : 0, excluded: run.out }) as readonly string[];
      const sampled = sample(run, available);
      const planned = configure(run, sealedContext(policy.secureAggregation ? { ...sampled, secureAggregation: true } : sampled));
      if (!planned) break;
      const { requests, wire, record } = planned;
      let { ctx } = planned;
      const module = record.replies && policy.secureAggregation && requests.size > 0 ? ((yield { op: 'await', promise: loadSecureRound() }) as SecureRoundModule) : undefined;
      const layout = module?.secureLayoutOf(policy, server, requests, ctx.round);
      // a secure round's shape, and its distributed noise: the Skellam step its real request declares is the round's step
      const secure = layout ? module!.planSecureRound(policy, server, requests, layout, ctx.round) : undefined;
      const step = secure?.noise ? secure.noise.calibration.step : planned.step;
      // the budget is checked before the requests go out: a round past it is never sent, its noise never spent
      const overBudget = step && record.replies && run.ledger ? run.ledger.stopBefore(step, ctx.round, run.round) : undefined;
      if (overBudget !== undefined) {
        run.stoppedEarly = { round: run.round, reason: overBudget };
        break;
      }
      // the round's release is spent once its requests went out and the replies came in (a secure round: once its sum is released)
      const spend = () => {
        if (run.ledger) record.privacy = step ? (run.ledger.spend(step), run.ledger.record(step)) : run.ledger.record(undefined);
        else if (step) record.privacy = { step };
      };
      let t0 = performance.now();
      let judged: JudgedReplies<A>;
      const excludedBefore = run.excluded.length;
      if (layout && secure) {
        // a secure round: four exchanges, and the server accepts one summed reply
        run.round = ctx.round;
        run.traffic.rounds += 1;
        judged = yield* secureJudged(run, planned, layout, secure, module!);
        spend();
        record.ms.exchange = performance.now() - t0;
        ctx = sealedContext({ ...ctx, quantization: record.secure!.bound, ...(record.secure!.noise ? { noise: record.secure!.noise.stddev } : {}) });
      } else {
        const ex = (yield { op: 'exchange', round: ctx.round, messages: wire, options: { replies: record.replies, timeoutMs: policy.roundTimeoutMs } }) as Exchange;
        record.ms.exchange = performance.now() - t0;
        if (ex.interruptions?.length) record.interruptions = ex.interruptions.map((i) => ({ ...i }));
        countTraffic(run, record, ex);
        if (!record.replies) {
          // notifications end the last round rather than start one
          record.round = run.round;
          run.history.push(record);
          options.onRound?.(report(run, record, run.excluded.length));
          continue;
        }
        run.round = ctx.round;
        run.traffic.rounds += 1;
        spend();
        t0 = performance.now();
        judged = judgeReplies(run, ctx, requests, ex);
        record.ms.accept = performance.now() - t0;
      }
      if (judged.sidelined.length) record.sidelined = judged.sidelined;
      if (run.reinstated.length) record.reinstated = run.reinstated.splice(0);
      if (judged.otherRun > 0) record.otherRun = judged.otherRun;
      applyPolicy(run, record, judged);
      t0 = performance.now();
      record.metrics = aggregateWithRetry(run, ctx, record, judged);
      record.ms.aggregate = performance.now() - t0;
      const done = account(run, record, excludedBefore);
      options.onRound?.(done);
      if (options.onCheckpoint) yield { op: 'checkpoint', checkpoint: checkpoint(run) };
      const reason = server.done ? undefined : stopReason(options.stopWhen?.(done), run.round);
      if (reason !== undefined) {
        run.stoppedEarly = { round: run.round, reason };
        break;
      }
    }
    const model = server.result();
    if (run.grouped) run.traffic.users = run.userReplies;
    const { traffic, clientTraffic, excluded, failures, history } = run;
    const result: FederationResult<R> = { model, run: run.id, rounds: traffic.rounds, traffic, clientTraffic, excluded, failures, history, seconds: (performance.now() - run.started) / 1000 };
    if (run.stoppedEarly) result.stoppedEarly = run.stoppedEarly;
    if (run.ledger) result.privacy = run.ledger.total();
    return result;
  } finally {
    run.sampler?.dispose();
  }
}

/**
 * Stage 1, sample: the round's clients. The available ones not excluded;
 * before the first round at least minClients of them (counted in users) and
 * no more exclusions than maxExcludedShare allows; a sample of them when the
 * policy's fraction is below 1 (at least minReplies, drawn with sampleSeed).
 */
function sample<A, R>(run: RunState<A, R>, available: readonly string[]): RoundContext {
  const { policy } = run;
  const first = run.round === run.startRound;
  for (const id of available) run.known.add(id);
  run.reinstated.push(...run.quorum.seen(available));
  const present = available.filter((id) => !run.out.has(id));
  // what each client declared it stands for; minClients and minReplies count users
  const groups = new Map<string, number>();
  for (const id of present) {
    const n = run.usersOf(id);
    if (n !== 1) groups.set(id, n);
  }
  run.grouped ||= groups.size > 0;
  const round = run.round + 1;
  const ctx = (clients: readonly string[]): RoundContext => (groups.size === 0 ? { round, clients, available: present } : { round, clients, available: present, users: groups });
  if (first) {
    const users = totalUsers(ctx(present), present);
    if (users < policy.minClients) throw new FederationError(`round ${round}: ${whoCount(users, present.length)} available, fewer than the ${policy.minClients} required (minClients)`);
    checkExcludedShare(run, `before round ${round}`);
  }
  // clients out of the quorum are not asked, unless the rest could not make the round
  let pool = present;
  if (run.quorum.size > 0) {
    const quorum = present.filter((id) => !run.quorum.has(id));
    if (totalUsers(ctx(quorum), quorum) >= Math.max(1, policy.minReplies)) pool = quorum;
  }
  if (!run.sampler || pool.length <= 1) return ctx(pool);
  const k = Math.min(pool.length, Math.max(policy.minReplies, Math.ceil(policy.fraction * pool.length)));
  run.sampleDraws.push([pool.length, k]);
  const picked = Array.from(run.sampler.choice(pool.length, k)).sort((a, b) => a - b);
  const sampled = ctx(picked.map((i) => pool[i]!));
  // each client of the pool was drawn with probability k / n (what a privacy step's samplingRate declares)
  return k < pool.length ? { ...sampled, samplingRate: k / pool.length } : sampled;
}

/**
 * Stage 2, configure: the server's messages for the round, checked against
 * its protocol (declared kinds; requests and notifications never mixed;
 * requests only to the round's clients). Undefined when the server asks
 * nobody because it is done.
 */
function configure<A, R>(run: RunState<A, R>, ctx: RoundContext): PlannedRound | undefined {
  const { server } = run;
  const t0 = performance.now();
  const requests = server.configure(ctx);
  const ms = { configure: performance.now() - t0, exchange: 0, accept: 0, aggregate: 0 };
  if (requests.size === 0) {
    if (server.done) return undefined;
    throw new FederationError(`round ${ctx.round}: the server asked no client and is not done`);
  }
  const kinds = new Set([...requests.values()].map((m) => m.kind));
  const exchanges = [...kinds].map((k) => server.protocol.exchanges.get(k));
  if (exchanges.some((e) => e === undefined)) throw new InvalidParameterError(`round ${ctx.round}: the server sent a kind its protocol does not declare (${[...kinds].join(', ')})`);
  const replies = exchanges.some((e) => e!.reply !== undefined);
  if (replies && exchanges.some((e) => e!.reply === undefined)) throw new InvalidParameterError(`round ${ctx.round}: requests and notifications cannot share a round`);
  const allowed = new Set(replies ? ctx.clients : ctx.available);
  for (const id of requests.keys()) if (!allowed.has(id)) throw new InvalidParameterError(`round ${ctx.round}: the server asked ${id}, which is not among this round's clients`);
  const record: RoundRecord = { round: ctx.round, kind: [...kinds].join(','), replies, asked: requests.size, accepted: 0, users: 0, failures: [], bytesUp: 0, bytesDown: 0, ms };
  // one stamped copy per message: a request shared by many clients (a broadcast) stays shared
  const stamped = new Map<Message, Message>();
  const wire = new Map<string, Message>();
  for (const [id, m] of requests) {
    let w = stamped.get(m);
    if (!w) stamped.set(m, (w = withRun(m, run.id)));
    wire.set(id, w);
  }
  // the share of the clients that could be asked that were: the least sampling rate a step may declare
  const asked = replies && ctx.clients.length > 0 ? (requests.size / ctx.clients.length) * (ctx.samplingRate ?? 1) : 0;
  return { ctx, requests, wire, record, step: roundStep(requests, asked, ctx.round) };
}

/**
 * Stage 3 (after the exchange), accounting of the traffic: bytes and messages,
 * per client, for the round and for the run; an unknown sender's are ignored.
 * Called once per exchange: a secure round's stages are exchanges of one
 * record, so the run takes this exchange's bytes, not the record's running
 * total (which would count each earlier stage again).
 */
function countTraffic<A, R>(run: RunState<A, R>, record: RoundRecord, ex: Exchange): void {
  const { traffic } = run;
  const count = (id: string): ClientTraffic => {
    let t = run.clientTraffic.get(id);
    if (!t) run.clientTraffic.set(id, (t = { bytesUp: 0, bytesDown: 0, messagesUp: 0, messagesDown: 0 }));
    return t;
  };
  let down = 0;
  for (const [id, bytes] of ex.sent) {
    const t = count(id);
    t.bytesDown += bytes;
    t.messagesDown += 1;
    down += bytes;
  }
  record.bytesDown += down;
  traffic.bytesDown += down;
  traffic.messagesDown += ex.sent.size;
  let up = 0;
  for (const [id, list] of ex.received) {
    if (!run.known.has(id)) continue;
    const t = count(id);
    for (const r of list) {
      const n = r instanceof Uint8Array ? r.length : r.bytes;
      t.bytesUp += n;
      t.messagesUp += 1;
      up += n;
      traffic.messagesUp += 1;
    }
  }
  record.bytesUp += up;
  traffic.bytesUp += up;
}

/** Replies read already (the run filter reads them before they are judged): read once. */
const readReplies = new WeakMap<object, { message: Message } | { error: unknown }>();

/** A reply's message: decoded from its bytes (or, in process, as its bytes would be: BinaryInProcess), or (in process, encoding 'none') the object with the envelope checks its bytes would get. */
function readReceived(r: Received, maxBytes: number): Message {
  let read = readReplies.get(r);
  if (!read) {
    try {
      read = { message: r instanceof Uint8Array ? decodeMessage(r, { maxBytes }) : r instanceof BinaryInProcess ? r.decode(maxBytes) : checkEnvelope(r.message) };
    } catch (error) {
      read = { error };
    }
    readReplies.set(r, read);
  }
  if ('error' in read) throw read.error;
  return read.message;
}

/** Whether a reply says it belongs to another run (one that names no run, or cannot be read, is judged). */
function ofAnotherRun(r: Received, run: string, maxBytes: number): boolean {
  try {
    const m = readReceived(r, maxBytes);
    return m.run !== undefined && m.run !== run;
  } catch {
    return false;
  }
}

/** One reply's verdict: what the server's accept() made of it, or why it fails. */
function judgeReply<A, R>(run: RunState<A, R>, ctx: RoundContext, id: string, r: Received, request: Message): { value: A; users: number } | { kind: 'refused' | 'invalid'; reason: string; error: FedmixError } {
  const { server, detailed } = run;
  const round = ctx.round;
  // what the reason may say about the client's reply (see ServerRole.detailedReasons)
  let stage = 'its reply is not a valid message';
  try {
    const m = readReceived(r, run.policy.maxMessageBytes);
    if (m.from !== id) throw new InvalidMessageError(`its reply claims to come from ${JSON.stringify(m.from)}`);
    if (m.kind === REFUSAL.kind) {
      const refusal = REFUSAL.read(m);
      // a client that could not read the request does not know its round: 0
      if (refusal.round !== round && refusal.round !== 0) throw new InvalidMessageError(`its refusal is for round ${refusal.round}, not ${round}`);
      const E = ERRORS[refusal.payload.code] ?? InvalidMessageError;
      return { kind: 'refused', reason: refusalReason(refusal.payload, detailed), error: new E(refusal.payload.reason) };
    }
    if (m.round !== round) throw new InvalidMessageError(`its reply is for round ${m.round}, not ${round}`);
    const expected = server.protocol.exchanges.get(request.kind)!.reply!;
    if (m.kind !== expected.kind) throw new InvalidMessageError(`expected a ${expected.kind} message, got ${m.kind}`);
    // a reply for several users: only of an additive kind, never for more users than the client declared
    const claimed = m.users ?? 1;
    if (claimed > 1 && !server.protocol.additive?.has(m.kind)) {
      throw new InvalidMessageError(`its ${m.kind} reply stands for ${claimed} users, but ${m.kind} replies are not sums over users: one reply is one user`, 'its reply claims users its kind cannot carry');
    }
    const declared = usersIn(ctx, id);
    if (claimed > declared) throw new InvalidMessageError(`its reply stands for ${claimed} users, more than the ${declared} it declared`, 'its reply claims more users than it declared');
    const checked = expected.read(m);
    stage = 'its reply failed a check';
    return { value: server.accept(checked, request, ctx), users: claimed };
  } catch (caught) {
    // a trap or any other error is a bug, not the client's fault
    if (!(caught instanceof FedmixError) || caught.code === 'WASM' || caught.code === 'FEDERATION') throw caught;
    const check = caught instanceof InvalidMessageError ? caught.check : undefined;
    return { kind: 'invalid', reason: detailed ? caught.message : check ?? stage, error: caught };
  }
}

/**
 * Stage 3-4 of a secure round (secure-aggregation/round.ts): its four
 * exchanges, each counted, then the one summed reply through the server's
 * accept(), as judgeReplies would give it (the stages' failures with it).
 */
function* secureJudged<A, R>(run: RunState<A, R>, planned: PlannedRound, layout: AdditiveLayout, plan: SecurePlan, module: SecureRoundModule): Generator<Effect, JudgedReplies<A>, unknown> {
  const { ctx, requests, record } = planned;
  const outcome = yield* module.secureRound({
    run: run.id, policy: run.policy, server: run.server as ServerRole, ctx, requests, layout, plan, detailed: run.detailed,
    read: (r) => readReceived(r, run.policy.maxMessageBytes),
    count: (ex) => {
      if (ex.interruptions?.length) (record.interruptions ??= []).push(...ex.interruptions.map((i) => ({ ...i })));
      countTraffic(run, record, ex);
    },
    missed: (id) => {
      let rounds = run.missed.get(id);
      if (!rounds) run.missed.set(id, (rounds = new Set()));
      rounds.add(ctx.round);
    },
  });
  record.secure = outcome.record;
  const t0 = performance.now();
  const judged: JudgedReplies<A> = { accepted: new Map(), replyUsers: new Map(), failures: outcome.failures, sidelined: [], otherRun: 0 };
  const from = outcome.reply.from;
  // the sum is the survivors' together: a check it fails is no one client's fault, so it ends the run
  const noise = outcome.record.noise ? { noise: outcome.record.noise.stddev } : {};
  judged.accepted.set(from, run.server.accept(layout.reply.read(outcome.reply), outcome.request, sealedContext({ ...ctx, quantization: outcome.record.bound, ...noise })));
  if (outcome.users !== 1) judged.replyUsers.set(from, outcome.users);
  record.ms.accept = performance.now() - t0;
  return judged;
}

/**
 * Stage 4, judge the replies: every asked client's reply through judgeReply
 * (nothing reaches the server's state before aggregate), a missing one as
 * its timeout or dropout, two different replies as a fault, a message from a
 * client not asked as a fault (a late copy of a round it missed is dropped).
 * Under the 'fail' policy judging stops at the first fault, which the policy
 * stage throws.
 */
function judgeReplies<A, R>(run: RunState<A, R>, ctx: RoundContext, requests: ReadonlyMap<string, Message>, ex: Exchange): JudgedReplies<A> {
  const round = ctx.round;
  const judged: JudgedReplies<A> = { accepted: new Map(), replyUsers: new Map(), failures: [], sidelined: [], otherRun: 0 };
  const stopAtFault = run.policy.onInvalid === 'fail';
  /** records a failure; false once judging must stop (a fault under 'fail') */
  const fail = (client: string, kind: Failure['kind'], reason: string, exclude: boolean, error?: FedmixError): boolean => {
    if (exclude && stopAtFault) {
      judged.fault = { client, reason, error };
      return false;
    }
    judged.failures.push({ client, round, kind, reason: named(client, reason), excluded: exclude });
    return true;
  };
  try {
    for (const [id, request] of requests) {
      const list = current(run, id, ex.received.get(id) ?? [], judged);
      if (list.length === 0) {
        const why = ex.missing.get(id) ?? { kind: 'timeout' as const, reason: `did not answer round ${round}` };
        let rounds = run.missed.get(id);
        if (!rounds) run.missed.set(id, (rounds = new Set()));
        rounds.add(round);
        fail(id, why.kind, why.reason, false);
        if (run.quorum.missed(id)) judged.sidelined.push(id);
        continue;
      }
      if (run.quorum.answered(id)) run.reinstated.push(id);
      // QoS 1 may deliver a reply twice: an identical copy is no fault, a different second reply is
      // (checked before the reply is judged, so that what accept() makes of it is always used)
      if (list.slice(1).some((r) => !sameBytes(r, list[0]!))) {
        if (!fail(id, 'invalid', `sent more than one reply in round ${round}`, true)) return judged;
        continue;
      }
      const verdict = judgeReply(run, ctx, id, list[0]!, request);
      if ('value' in verdict) {
        judged.accepted.set(id, verdict.value);
        if (verdict.users !== 1) judged.replyUsers.set(id, verdict.users);
      } else if (!fail(id, verdict.kind, verdict.reason, true, verdict.error)) return judged;
    }
    // messages from clients not asked: stale replies after a timeout are dropped, anything else is a fault of a known client
    for (const [id, list] of ex.received) {
      if (requests.has(id) || !run.known.has(id) || run.out.has(id)) continue;
      // a reply of a client out of the quorum (late, for a round it missed): it is there again
      if (list.length > 0 && run.quorum.has(id) && run.quorum.late(id)) run.reinstated.push(id);
      if (current(run, id, list, judged).length > 0 && !fail(id, 'invalid', `sent a message in round ${round} without being asked`, true)) return judged;
    }
  } catch (e) {
    // a bug: what was accepted is not used
    discardAll(run.server, judged.accepted);
    throw e;
  }
  return judged;
}

/**
 * A client's messages of this run (a reply of another run is dropped and
 * counted in `judged`, never held against the client: a broker delivered a
 * dead run's reply), without late copies of rounds it missed (it was slow,
 * not faulty: they are dropped).
 */
function current<A, R>(run: RunState<A, R>, id: string, given: readonly Received[], judged: JudgedReplies<A>): Received[] {
  const list = given.filter((r) => !ofAnotherRun(r, run.id, run.policy.maxMessageBytes));
  judged.otherRun += given.length - list.length;
  const late = run.missed.get(id);
  if (!late) return list;
  return list.filter((r) => {
    try {
      const m = readReceived(r, run.policy.maxMessageBytes);
      return !(m.from === id && late.has(m.round));
    } catch {
      return true;
    }
  });
}

/**
 * Stage 5, apply the policy to the judged round: under 'fail' the first
 * fault's own error (or an InvalidMessageError) ends the run; otherwise the
 * faulty clients are excluded, and the run fails with a FederationError when
 * fewer than minReplies usable replies (in users) remain or more than
 * maxExcludedShare of its clients are excluded. Whenever it throws, the
 * accepted replies are discarded.
 */
function applyPolicy<A, R>(run: RunState<A, R>, record: RoundRecord, judged: JudgedReplies<A>): void {
  const { policy } = run;
  try {
    if (judged.fault) {
      // the client's own kind of error, where it said which (a refusal) or the check that failed
      const { client, reason, error } = judged.fault;
      const E = error ? (error.constructor as new (m: string) => FedmixError) : InvalidMessageError;
      throw new E(named(client, reason));
    }
    // a client with a failure has no accepted reply: the two were decided together
    for (const f of judged.failures) if (f.excluded) exclude(run, f);
    run.failures.push(...judged.failures);
    record.failures = judged.failures;
    countAccepted(record, judged);
    if (record.users < policy.minReplies) {
      // the first few reasons (often the same one many times); the rest are in the round's record
      const why = reasons(judged.failures.map((f) => f.reason), 5);
      throw new FederationError(`round ${record.round}: ${usable(record.users, judged.accepted.size)} of ${record.asked}, fewer than the ${policy.minReplies} required${why ? ` (${why})` : ''}`);
    }
    checkExcludedShare(run, `round ${record.round}`);
  } catch (e) {
    discardAll(run.server, judged.accepted);
    throw e;
  }
}

/**
 * Stage 6, aggregate with retry: the server's aggregate of the round. A
 * ContributionError takes that client's reply out, the client is excluded as
 * an invalid reply would be (the policy's rules apply again: 'fail',
 * minReplies, maxExcludedShare), and the others are aggregated again.
 * Whatever else aggregate throws, the accepted values are discarded and the
 * error goes on. Returns the round's metrics (what aggregate returned).
 */
function aggregateWithRetry<A, R>(run: RunState<A, R>, ctx: RoundContext, record: RoundRecord, judged: JudgedReplies<A>): unknown {
  const { server, policy } = run;
  const { accepted } = judged;
  for (;;) {
    try {
      return server.aggregate(ctx, accepted, record.failures);
    } catch (e) {
      if (!(e instanceof ContributionError) || !accepted.has(e.client)) {
        discardAll(server, accepted);
        throw e;
      }
      server.discard?.(accepted.get(e.client)!);
      accepted.delete(e.client);
      try {
        // the contribution that broke the aggregate: its client fails as an invalid reply would
        const reason = run.detailed ? e.message : e.check ?? 'its contribution made the aggregate fail';
        if (policy.onInvalid === 'fail') throw new InvalidMessageError(named(e.client, reason));
        const f: Failure = { client: e.client, round: ctx.round, kind: 'invalid', reason: named(e.client, reason), excluded: true };
        record.failures.push(f);
        exclude(run, f);
        run.failures.push(f);
        countAccepted(record, judged);
        if (record.users < policy.minReplies) {
          throw new FederationError(`round ${ctx.round}: ${usable(record.users, accepted.size)} of ${record.asked} once ${e.client}'s contribution was taken out, fewer than the ${policy.minReplies} required`);
        }
        checkExcludedShare(run, `round ${ctx.round}`);
      } catch (stop) {
        discardAll(server, accepted);
        throw stop;
      }
    }
  }
}

/** Stage 7, account: the round goes into the history and the run's count of users; what the per-round hooks are given. */
function account<A, R>(run: RunState<A, R>, record: RoundRecord, excludedBefore: number): RoundReport {
  run.userReplies += record.users;
  run.history.push(record);
  return report(run, record, excludedBefore);
}

/** The round's report for the hooks: its record, the exclusions after the first `excludedBefore`, the time so far. */
function report<A, R>(run: RunState<A, R>, record: RoundRecord, excludedBefore: number): RoundReport {
  return { ...record, excluded: run.excluded.slice(excludedBefore), elapsed: (performance.now() - run.started) / 1000 };
}

/** What a checkpoint after the last complete round needs, copied. */
function checkpoint<A, R>(run: RunState<A, R>): RunCheckpoint {
  const seen = [...run.known];
  for (const id of run.before) if (!run.known.has(id)) seen.push(id);
  return {
    run: run.id,
    round: run.round,
    server: run.server as ServerRole,
    policy: { ...run.policy },
    excluded: run.excluded.map((e) => ({ ...e })),
    failures: run.failures.map((f) => ({ ...f })),
    seen,
    known: [...run.known],
    before: [...run.before],
    users: run.userReplies,
    grouped: run.grouped,
    missed: new Map([...run.missed].map(([id, rounds]) => [id, [...rounds]])),
    sampleDraws: run.sampleDraws.map(([n, k]) => [n, k]),
    quorum: run.quorum.state(),
    ...(run.sampler ? { sampler: run.sampler.getState() } : {}),
    traffic: { ...run.traffic },
    clientTraffic: new Map([...run.clientTraffic].map(([id, t]) => [id, { ...t }])),
    history: run.history.slice(),
    elapsed: (performance.now() - run.started) / 1000,
    ...(run.ledger ? { accountant: run.ledger.toJSON() } : {}),
  };
}

/** What stopWhen returned as a reason to stop (undefined: go on), checked. */
function stopReason(answer: unknown, round: number): string | undefined {
  if (answer === undefined || answer === false || answer === '') return undefined;
  if (answer === true) return `stopWhen returned true after round ${round}`;
  if (typeof answer === 'string') return answer;
  throw new InvalidParameterError(`stopWhen must return true or a reason (a string) to stop, or false or undefined to go on; got ${formatValue(answer)}`);
}

/** Takes a failed client out of the rest of the run (once). */
function exclude<A, R>(run: RunState<A, R>, f: Failure): void {
  if (run.out.has(f.client)) return;
  run.out.add(f.client);
  run.excluded.push({ client: f.client, round: f.round, reason: f.reason });
}

/** The round's accepted replies and the users they stood for, into its record. */
function countAccepted<A>(record: RoundRecord, judged: JudgedReplies<A>): void {
  record.accepted = judged.accepted.size;
  let n = 0;
  for (const id of judged.accepted.keys()) n += judged.replyUsers.get(id) ?? 1;
  record.users = n;
}

/** Fails the run once more than maxExcludedShare of its clients are excluded, naming the reasons. */
function checkExcludedShare<A, R>(run: RunState<A, R>, when: string): void {
  const { excluded, policy } = run;
  let total = run.known.size;
  for (const id of run.before) if (!run.known.has(id)) total += 1;
  if (excluded.length === 0 || excluded.length <= policy.maxExcludedShare * total) return;
  throw new FederationError(
    `${when}: ${excluded.length} of the run's ${total} clients are excluded, more than maxExcludedShare (${policy.maxExcludedShare}) allows: ${reasons(excluded.map((e) => e.reason), 10)}`,
  );
}

function discardAll<A>(server: ServerRole<A, unknown>, accepted: ReadonlyMap<string, A>): void {
  for (const value of accepted.values()) server.discard?.(value);
}

/** The first `n` reasons, joined, and how many more there are. */
function reasons(all: readonly string[], n: number): string {
  return all.slice(0, n).join('; ') + (all.length > n ? `; and ${all.length - n} more` : '');
}

/** "n usable replies", or "n users in m usable replies" where replies stood for several users. */
function usable(users: number, replies: number): string {
  const r = `usable repl${replies === 1 ? 'y' : 'ies'}`;
  return users === replies ? `${replies} ${r}` : `${users} users in ${replies} ${r}`;
}

/** The users each client of a transport declared (1 where the transport cannot say). */
function declaredBy(transport: Transport): (id: string) => number {
  const users = guardRead('the transport', () => transport.users);
  if (typeof users !== 'function') return () => 1;
  return (id) => {
    const n = users.call(transport, id);
    return Number.isSafeInteger(n) && n >= 1 ? n : 1;
  };
}

/** The run's options, read once; the hooks must be functions when given. */
function readRunOptions(given: RunOptions | undefined): RunOptions {
  const options = readOptions(given, RUN_KEYS) as RunOptions;
  checkHooks(options);
  if (options.excludedBefore !== undefined) {
    options.excludedBefore = readArray('excludedBefore', options.excludedBefore, LIMITS.clients).map((given, i) => {
      const e = readRecord(given as ExcludedClient, ['client', 'round', 'reason'], `excludedBefore[${i}]`);
      if (typeof e.client !== 'string' || typeof e.reason !== 'string') throw new InvalidParameterError(`excludedBefore[${i}] must be { client, round, reason } with a string client id and reason`);
      return { client: e.client, round: requireInteger(`excludedBefore[${i}].round`, e.round, 0), reason: e.reason };
    });
  }
  return options;
}

/**
 * The run's policy and, when it resumes, the checkpoint it starts from: the
 * saved policy with the policy options given over it, where the client
 * sampling (fraction, sampleSeed) must stay as saved.
 */
function runStart(server: ServerRole, options: RunOptions, transport: Transport): { id: string; policy: ResolvedPolicy; from?: ResumePoint } {
  if (options.resume === undefined) return { id: runIdOf(options, undefined, transport), policy: resolvePolicy(runPolicy(options)) };
  // checked when restoreServer read it; the server role restored from it holds it
  const from = resumePointOf(server, options.resume);
  const p = from.policy;
  const saved: FederationPolicy = {
    onInvalid: p.onInvalid, minClients: p.minClients, minReplies: p.minReplies, fraction: p.fraction, sampleSeed: p.sampleSeed, maxMessageBytes: p.maxMessageBytes, maxExcludedShare: p.maxExcludedShare,
    joinTimeout: p.joinTimeoutMs / 1000, ...(p.roundTimeoutMs === undefined ? {} : { roundTimeout: p.roundTimeoutMs / 1000 }),
    ...(p.maxMissedRounds === undefined ? {} : { maxMissedRounds: p.maxMissedRounds }),
    ...(p.privacy === undefined ? {} : { privacy: { delta: p.privacy.delta, ...(p.privacy.epsilonBudget === undefined ? {} : { epsilonBudget: p.privacy.epsilonBudget }) } }),
    ...(p.secureAggregation === undefined ? {} : { secureAggregation: { ...p.secureAggregation } }),
  };
  const given = Object.fromEntries(Object.entries(runPolicy(options)).filter(([, x]) => x !== undefined));
  const policy = resolvePolicy({ ...saved, ...given });
  // the ledger goes on at the delta it was kept at (the budget may change); a run saved without one cannot start one halfway
  if (policy.privacy && !p.privacy) throw new InvalidParameterError('the run was saved without privacy accounting; a resumed run cannot start accounting halfway (its earlier rounds would go uncounted)');
  if (policy.privacy && p.privacy && policy.privacy.delta !== p.privacy.delta) {
    throw new InvalidParameterError(`the run was saved accounting privacy at delta ${p.privacy.delta}; a resumed run keeps its ledger at that delta (got ${formatValue(policy.privacy.delta)})`);
  }
  // its clients were told that the server sees only sums: a resumed run keeps that promise (settings may change)
  if (p.secureAggregation && !policy.secureAggregation) throw new InvalidParameterError('the run was saved with secure aggregation; a resumed run keeps it (its clients were told the server sees only sums), so secureAggregation cannot be false');
  for (const k of ['fraction', 'sampleSeed'] as const) {
    if (policy[k] !== p[k]) throw new InvalidParameterError(`the run was saved with ${k} ${formatValue(p[k])}; a resumed run samples its clients as the saved one did, so ${k} cannot change (got ${formatValue(policy[k])})`);
  }
  return { id: runIdOf(options, from, transport), policy, from };
}

/**
 * The run's id: a resumed run's is its checkpoint's (RunOptions.run, when
 * given, must be the same), else RunOptions.run, else the one the transport
 * announces, else a fresh one.
 */
function runIdOf(options: RunOptions, from: ResumePoint | undefined, transport: Transport): string {
  const given = options.run;
  if (given !== undefined && !isRunId(given)) throw new InvalidParameterError(`run must be a run id (8 to 64 letters, digits, - or _), got ${formatValue(given)}`);
  if (from?.run !== undefined) {
    if (given !== undefined && given !== from.run) throw new InvalidParameterError(`the run was saved as run ${from.run}; a resumed run keeps its id, so run cannot be ${given}`);
    return from.run;
  }
  if (given !== undefined) return given;
  const announced = guardRead('the transport', () => (transport as { run?: unknown }).run);
  return isRunId(announced) ? announced : freshRunId();
}

function isTransport(x: unknown): x is Transport {
  return guardRead('the transport', () => x !== null && typeof x === 'object' && !Array.isArray(x) && typeof (x as Transport).exchange === 'function' && typeof (x as Transport).available === 'function');
}

/**
 * Runs `server` with `clients` (client roles, run in process) or over a
 * transport until the server is done. Throws a FederationError when the policy
 * cannot be met, a client's error under onInvalid 'fail', or the server's own
 * error; the server is not disposed (its owner does that).
 */
export async function runFederation<A, R>(server: ServerRole<A, R>, clients: readonly ClientRole[] | Transport, given: RunOptions = {}): Promise<FederationResult<R>> {
  checkServerRole(server);
  const options = readRunOptions(given);
  const transport: Transport = isTransport(clients) ? clients : new InProcessTransport(clients);
  const { id, policy, from } = runStart(server, options, transport);
  const loop = federation(id, server, policy, options, declaredBy(transport), from);
  let ok = false;
  let reason: string | undefined;
  try {
    let step = loop.next();
    while (!step.done) {
      const e = step.value;
      let answer: unknown;
      try {
        if (e.op === 'available') answer = await transport.available(e.min, e.timeoutMs, e.excluded);
        else if (e.op === 'exchange') answer = await transport.exchange(e.round, e.messages, e.options);
        else if (e.op === 'await') answer = await e.promise;
        else await options.onCheckpoint!(e.checkpoint);
      } catch (err) {
        step = loop.throw(err);
        continue;
      }
      step = loop.next(answer);
    }
    ok = true;
    const stopped = step.value.stoppedEarly;
    if (stopped) reason = `stopped early after round ${stopped.round}: ${stopped.reason}`;
    return step.value;
  } catch (e) {
    reason = e instanceof Error ? e.message : String(e);
    throw e;
  } finally {
    await transport.finish?.({ ok, reason });
  }
}

/** A checkpoint hook called where nothing can wait for it: a promise it returns is an error (its rejection is not left unhandled). */
function checkpointSync(hook: NonNullable<RunHooks['onCheckpoint']>, checkpoint: RunCheckpoint): void {
  const answer: unknown = hook(checkpoint);
  if (answer !== null && typeof answer === 'object' && typeof (answer as Promise<void>).then === 'function') {
    (answer as Promise<void>).then(undefined, () => undefined);
    throw new InvalidParameterError('onCheckpoint returned a promise, which runFederationSync (and the one-call functions) cannot wait for; save synchronously there, or run the federation with runFederation');
  }
}

/** runFederation without yielding: in process, for clients that answer synchronously. */
export function runFederationSync<A, R>(server: ServerRole<A, R>, clients: readonly ClientRole[] | SyncTransport, given: RunOptions = {}): FederationResult<R> {
  checkServerRole(server);
  const options = readRunOptions(given);
  const transport = isArray('clients', clients) ? new InProcessTransport(clients as readonly ClientRole[]) : (clients as SyncTransport);
  if (!isTransport(transport) || !guardRead('the transport', () => typeof transport.exchangeSync === 'function')) throw new InvalidParameterError('runFederationSync needs client roles or an in-process transport; use runFederation for other transports');
  const { id, policy, from } = runStart(server, options, transport);
  // its clients' key agreement and share encryption are WebCrypto's, which only answers asynchronously
  if (policy.secureAggregation) throw new InvalidParameterError('secure aggregation runs only under runFederation (async): its key agreement and share encryption are asynchronous (WebCrypto)');
  const loop = federation(id, server, policy, options, declaredBy(transport), from);
  let step = loop.next();
  while (!step.done) {
    const e = step.value;
    let answer: unknown;
    try {
      if (e.op === 'available') answer = transport.availableSync();
      else if (e.op === 'exchange') answer = transport.exchangeSync(e.round, e.messages, e.options);
      else if (e.op === 'await') throw new InvalidParameterError('this run awaits asynchronous work (secure aggregation); use runFederation');
      else checkpointSync(options.onCheckpoint!, e.checkpoint);
    } catch (err) {
      step = loop.throw(err);
      continue;
    }
    step = loop.next(answer);
  }
  return step.value;
}
