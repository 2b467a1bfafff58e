/**
 * A run's checkpoint as JSON, and the way back: what a server saves after a
 * complete round so that a run can resume after a crash or a restart.
 *
 *   saveRunCheckpoint(algorithm, checkpoint)  the RunCheckpoint an onCheckpoint
 *       hook is given (the runtime's counters, the policy, the history, the
 *       client sampler's state) with the server role's own state, which the
 *       algorithm's descriptor saves (AlgorithmDescriptor.state), as JSON-safe data
 *   restoreRunServer(algorithm, options, saved)  the server role rebuilt from it
 *   readRunCheckpoint(saved)  the runtime's part, checked: what RunOptions.resume
 *       gives the round loop (run.ts), which then starts at the next round
 *
 * Every field of a saved checkpoint is checked (valibot) before anything is
 * built from it: a checkpoint cut short, of another algorithm, with NaN or
 * with shapes that do not fit is an InvalidParameterError naming the field.
 */
import * as v from 'valibot';
import { formatValue, InvalidParameterError } from '../../errors.js';
import type { RngState } from '../../random.js';
import { RdpAccountant, type RdpAccountantJSON } from '../../privacy/accountant.js';
import { isRunId } from '../messages/envelope.js';
import { guardRead } from '../../validate.js';
import { parseSaved, savedCount, savedNumber, savedPairs, savedRng } from '../registry/artifact.js';
import type { AnyAlgorithm } from '../registry/registry.js';
import type { MissedRoundsState } from './missed-rounds.js';
import type { ResolvedPolicy } from './policy.js';
import { rememberResumePoint } from './resume-point.js';
import { checkServerRole, type ServerRole } from './roles.js';
import type { RoundRecord, RunCheckpoint } from './run.js';

/** The format name and version a saved checkpoint carries. */
export const CHECKPOINT_FORMAT = 'fedmix.RunCheckpoint';
export const CHECKPOINT_VERSION = 1;

/** A run's checkpoint as JSON-safe data (JSON.stringify keeps all of it; saveRunCheckpoint makes it). */
export interface SavedRunCheckpoint {
  format: typeof CHECKPOINT_FORMAT;
  version: typeof CHECKPOINT_VERSION;
  /** the algorithm whose server state `server` is */
  algorithm: string;
  /** the run's id (a resumed run keeps it; absent in checkpoints saved before runs had ids: the resumed run gets a fresh one) */
  run?: string;
  round: number;
  /**
   * the resolved policy; undefined fields as null (privacy: absent without
   * accounting; secureAggregation: null without it, absent in checkpoints
   * saved before it was read back)
   */
  policy: Record<Exclude<keyof ResolvedPolicy, 'privacy' | 'secureAggregation'>, number | string | null> & {
    privacy?: { delta: number; epsilonBudget: number | null };
    secureAggregation?: NonNullable<ResolvedPolicy['secureAggregation']> | null;
  };
  /** with the policy's privacy accounting: the run's accountant, its steps so far (composed again when read) */
  accountant?: RdpAccountantJSON;
  excluded: RunCheckpoint['excluded'];
  failures: RunCheckpoint['failures'];
  seen: string[];
  known: string[];
  before: string[];
  missed: [string, number[]][];
  sampleDraws: [number, number][];
  /** rounds missed in a row and the clients out of the quorum (absent in checkpoints saved before they were kept: they start again from zero) */
  quorum?: MissedRoundsState;
  sampler: RngState | null;
  traffic: RunCheckpoint['traffic'];
  users: number;
  grouped: boolean;
  clientTraffic: [string, RunCheckpoint['clientTraffic'] extends Map<string, infer T> ? T : never][];
  /** the rounds' records; each round's metrics as JSON makes them (a NaN is null) */
  history: RoundRecord[];
  elapsed: number;
  /** the server role's state, as its algorithm's descriptor saved it */
  server: unknown;
}

/** A checkpoint read back: the runtime's part of RunCheckpoint (no server role) and the saved server state. */
export interface ResumePoint extends Omit<RunCheckpoint, 'server' | 'run' | 'quorum'> {
  /** the missed-round counts (undefined for a checkpoint saved before they were kept) */
  quorum?: MissedRoundsState;
  algorithm: string;
  /** the run's id (undefined for a checkpoint saved before runs had ids) */
  run?: string;
  /** the server role's state, as its descriptor saved it (state.restore reads it) */
  serverState: unknown;
}

/** The descriptor's state part, or an InvalidParameterError saying the algorithm's runs cannot be saved or resumed. */
function stateOf(algorithm: AnyAlgorithm): NonNullable<AnyAlgorithm['state']> {
  const state = algorithm.state;
  if (!state) throw new InvalidParameterError(`algorithm ${algorithm.name} declares no server state (its descriptor has no \`state\` part), so its runs cannot be checkpointed or resumed`);
  return state;
}

/** A value as JSON makes it (NaN and infinities become null, typed arrays objects): what a saved round's metrics are. */
function asJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = guardRead('the round metrics', () => JSON.stringify(value));
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * The checkpoint an onCheckpoint hook is given, with the server role's own
 * state (`algorithm`'s descriptor saves it), as JSON-safe data: JSON.stringify
 * and JSON.parse give back what restoreRunServer and RunOptions.resume read.
 */
export function saveRunCheckpoint(algorithm: AnyAlgorithm, checkpoint: RunCheckpoint): SavedRunCheckpoint {
  const state = stateOf(algorithm);
  if (checkpoint === null || typeof checkpoint !== 'object') throw new InvalidParameterError(`a checkpoint must be what onCheckpoint is given, got ${formatValue(checkpoint)}`);
  // read under guard: a Proxy or a getter that throws is an InvalidParameterError
  return guardRead('the checkpoint', () => savedCheckpoint(algorithm, state, checkpoint));
}

function savedCheckpoint(algorithm: AnyAlgorithm, state: NonNullable<AnyAlgorithm['state']>, c: RunCheckpoint): SavedRunCheckpoint {
  checkServerRole(c.server);
  const server = state.save(c.server);
  const { privacy, secureAggregation, ...plain } = c.policy;
  const policy = Object.fromEntries(Object.entries(plain).map(([k, x]) => [k, x ?? null])) as unknown as SavedRunCheckpoint['policy'];
  if (privacy) policy.privacy = { delta: privacy.delta, epsilonBudget: privacy.epsilonBudget ?? null };
  policy.secureAggregation = secureAggregation ? { ...secureAggregation } : null;
  return {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    algorithm: algorithm.name,
    ...(c.run === undefined ? {} : { run: c.run }),
    round: c.round,
    policy,
    excluded: c.excluded.map((e) => ({ ...e })),
    failures: c.failures.map((f) => ({ ...f })),
    seen: [...c.seen],
    known: [...c.known],
    before: [...c.before],
    missed: [...c.missed].map(([id, rounds]) => [id, [...rounds]]),
    sampleDraws: c.sampleDraws.map(([n, k]) => [n, k]),
    quorum: { streaks: c.quorum.streaks.map(([id, n]) => [id, n]), out: c.quorum.out.map(([id, away]) => [id, away]) },
    sampler: c.sampler ? { words: [...c.sampler.words], spare: c.sampler.spare } : null,
    traffic: { ...c.traffic },
    users: c.users,
    grouped: c.grouped,
    clientTraffic: [...c.clientTraffic].map(([id, t]) => [id, { ...t }]),
    history: c.history.map((r) => {
      const { metrics, ...rest } = r;
      const saved: RoundRecord = { ...rest, failures: r.failures.map((f) => ({ ...f })), ms: { ...r.ms }, ...(r.secure ? { secure: { ...r.secure, dropped: { ...r.secure.dropped }, ...(r.secure.noise ? { noise: { ...r.secure.noise } } : {}) } } : {}) };
      const m = asJson(metrics);
      if (m !== undefined) saved.metrics = m;
      return saved;
    }),
    elapsed: c.elapsed,
    ...(c.accountant ? { accountant: { ...c.accountant, orders: [...c.accountant.orders], history: c.accountant.history.map((h) => ({ ...h })) } } : {}),
    server,
  };
}

const clientId = () => v.string();
const failure = () => v.object({ client: v.string(), round: savedCount(), kind: v.picklist(['timeout', 'dropout', 'invalid', 'refused']), reason: v.string(), excluded: v.boolean() });
const traffic = () => v.object({ bytesUp: savedCount(), bytesDown: savedCount(), messagesUp: savedCount(), messagesDown: savedCount() });
const nullable = <S extends v.GenericSchema>(s: S) => v.pipe(v.nullable(s), v.transform((x) => x ?? undefined));
const positive = () => v.pipe(savedNumber(), v.gtValue(0));

/** policy.secureAggregation as resolvePolicy leaves it (resolvePolicy checks it again when the run resumes). */
const securePolicy = () =>
  v.object({
    threshold: v.optional(v.pipe(savedCount(), v.minValue(1), v.maxValue(65_535))),
    neighbours: v.optional(v.pipe(savedCount(), v.minValue(1), v.maxValue(65_534))),
    clip: v.pipe(positive(), v.maxValue(2 ** 52)),
    noiseMultiplier: v.optional(positive()),
  });

/**
 * A secure round's record (SecureRoundRecord): what the run's history says
 * of it, so a tampered one cannot be reported as the run's. Its counts fit
 * together: the survivors and the threshold are among the clients asked, the
 * threshold among a client's neighbours.
 */
const secureRecord = () =>
  v.pipe(
    v.object({
      clients: v.pipe(savedCount(), v.minValue(1)),
      neighbours: savedCount(),
      threshold: v.pipe(savedCount(), v.minValue(1)),
      clip: positive(),
      survivors: savedCount(),
      dropped: v.object({ advertise: savedCount(), share: savedCount(), mask: savedCount(), consistency: savedCount(), unmask: savedCount() }),
      excluded: savedCount(),
      forged: savedCount(),
      ruledOut: savedCount(),
      bound: v.pipe(savedNumber(), v.minValue(0)),
      noise: v.optional(v.object({ noiseMultiplier: positive(), skellamMu: positive(), scale: positive(), stddev: positive(), guaranteed: positive() })),
    }),
    v.check((s) => s.survivors <= s.clients, 'its survivors cannot outnumber the clients asked'),
    v.check((s) => s.threshold <= s.neighbours && s.neighbours < s.clients, 'its threshold must be at most its neighbours, and they fewer than the clients asked'),
  );

const SAVED = v.object({
  format: v.literal(CHECKPOINT_FORMAT),
  version: v.literal(CHECKPOINT_VERSION),
  algorithm: v.string(),
  run: v.optional(v.pipe(v.string(), v.check((x: string) => isRunId(x), 'a run id is 8 to 64 letters, digits, - or _'))),
  round: v.pipe(savedCount(), v.minValue(1)),
  policy: v.object({
    onInvalid: v.picklist(['exclude', 'fail']),
    minClients: v.pipe(savedCount(), v.minValue(1)),
    minReplies: savedCount(),
    fraction: v.pipe(savedNumber(), v.gtValue(0), v.maxValue(1)),
    sampleSeed: nullable(savedCount()),
    roundTimeoutMs: nullable(v.pipe(savedNumber(), v.minValue(0))),
    joinTimeoutMs: v.pipe(savedNumber(), v.minValue(0)),
    maxMessageBytes: v.pipe(savedCount(), v.minValue(1024)),
    maxExcludedShare: v.pipe(savedNumber(), v.minValue(0), v.maxValue(1)),
    // absent in checkpoints saved before it was read back: the run's own (or the default) then applies
    maxMissedRounds: v.optional(savedCount()),
    privacy: v.optional(v.object({ delta: v.pipe(savedNumber(), v.gtValue(0), v.ltValue(1)), epsilonBudget: nullable(v.pipe(savedNumber(), v.gtValue(0))) })),
    // absent in checkpoints saved before it was read back (a resumed run then takes secure aggregation as given)
    secureAggregation: v.optional(nullable(securePolicy())),
  }),
  excluded: v.array(v.object({ client: v.string(), round: savedCount(), reason: v.string() })),
  failures: v.array(failure()),
  seen: v.array(clientId()),
  known: v.array(clientId()),
  before: v.array(clientId()),
  missed: savedPairs(v.array(v.pipe(savedCount(), v.minValue(1)))),
  sampleDraws: v.array(v.pipe(v.tuple([savedCount(), savedCount()]), v.check(([n, k]) => k <= n, 'a draw takes at most the clients there are'), v.transform(([n, k]): [number, number] => [n, k]))),
  quorum: v.optional(v.object({ streaks: v.array(v.tuple([clientId(), savedCount()])), out: v.array(v.tuple([clientId(), v.boolean()])) })),
  sampler: v.nullable(savedRng()),
  traffic: v.object({ ...traffic().entries, rounds: savedCount(), users: v.optional(savedCount()) }),
  users: savedCount(),
  grouped: v.boolean(),
  clientTraffic: savedPairs(traffic()),
  history: v.array(
    v.object({
      round: savedCount(),
      kind: v.string(),
      replies: v.boolean(),
      asked: savedCount(),
      accepted: savedCount(),
      users: savedCount(),
      failures: v.array(failure()),
      bytesUp: savedCount(),
      bytesDown: savedCount(),
      ms: v.object({ configure: savedNumber(), exchange: savedNumber(), accept: savedNumber(), aggregate: savedNumber() }),
      metrics: v.optional(v.unknown()),
      otherRun: v.optional(v.pipe(savedCount(), v.minValue(1))),
      // what the round's record said of outages and of the quorum, kept for the history a resumed run reports
      interruptions: v.optional(v.array(v.object({ reason: v.string(), seconds: v.pipe(savedNumber(), v.minValue(0)), resent: savedCount() }))),
      sidelined: v.optional(v.array(clientId())),
      reinstated: v.optional(v.array(clientId())),
      privacy: v.optional(v.record(v.string(), v.unknown())),
      secure: v.optional(secureRecord()),
    }),
  ),
  // the steps composed again (RdpAccountant.fromJSON checks them), so a tampered total cannot be loaded
  accountant: v.optional(v.pipe(v.unknown(), v.transform((a) => RdpAccountant.fromJSON(a).toJSON()))),
  elapsed: v.pipe(savedNumber(), v.minValue(0)),
  server: v.unknown(),
});

/**
 * A saved checkpoint (saveRunCheckpoint's output, or its text) read back and
 * checked: where a resumed run starts from (RunOptions.resume).
 */
export function readRunCheckpoint(saved: unknown): ResumePoint {
  const s = guardRead('the checkpoint', () => parseSaved('run', SAVED, saved, 'checkpoint'));
  const rounds = s.round;
  if (s.history.filter((r) => r.replies).length !== s.traffic.rounds || s.traffic.rounds !== rounds) {
    throw new InvalidParameterError(`a saved run checkpoint is not valid: it is after round ${rounds} but its history and traffic count ${s.traffic.rounds} rounds`);
  }
  if ((s.policy.fraction < 1) !== (s.sampler !== null)) throw new InvalidParameterError('a saved run checkpoint is not valid: sampler: a run samples its clients (fraction below 1) exactly when it has a sampler');
  if ((s.policy.privacy !== undefined) !== (s.accountant !== undefined)) throw new InvalidParameterError('a saved run checkpoint is not valid: accountant: a run accounts its privacy (policy.privacy) exactly when it has an accountant');
  const { format: _f, version: _v, server, policy, ...rest } = s;
  return { ...rest, policy: policy as ResolvedPolicy, sampler: s.sampler ?? undefined, serverState: server };
}

/**
 * The server role of a saved checkpoint, rebuilt by `algorithm`'s descriptor
 * (state.restore) from its server options (`rawOptions`, checked by the
 * descriptor as makeServer checks them): it continues exactly as the saved
 * one would. Run it with RunOptions.resume set to the same checkpoint.
 */
export function restoreRunServer(algorithm: AnyAlgorithm, rawOptions: unknown, saved: unknown): ServerRole {
  const state = stateOf(algorithm);
  const point = readRunCheckpoint(saved);
  if (point.algorithm !== algorithm.name) throw new InvalidParameterError(`this checkpoint is of a ${formatValue(point.algorithm)} run, not ${algorithm.name}`);
  const options: unknown = algorithm.server.options(rawOptions);
  const server = state.restore(options, point.serverState);
  checkServerRole(server);
  rememberResumePoint(server, point);
  return server;
}
