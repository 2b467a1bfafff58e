/**
 * The server role of federated MDM inference. It sees only aggregates: it
 * samples each round's cohort, broadcasts what the cohort needs, and turns the
 * aggregate of the cohort's statistics into parameters with the core
 * (fm_mdm_initialize for Algorithm 1, fm_mdm_update for Algorithm 2).
 *
 * One code path for the full-batch iteration of Theorem 3.1 (cohort = every
 * client, each round then never lowers the likelihood) and for cohorts (the
 * paper's stochastic version): `cohort` decides.
 *
 * On the federation runtime, the aggregator stands between: accept() hands
 * each reply to it (checked and added to the round's sums, or refused), and
 * aggregate() takes only what it releases.
 */
import { formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { DirichletMultinomialMixture, type DirichletMultinomialMixtureJSON } from '../../models/dirichlet-multinomial-mixture.js';
import { Rng, type RngState } from '../../random.js';
import { stateMismatch } from '../registry/artifact.js';
import { guardRead } from '../../validate.js';
import { MDM_INITIALIZE_OPTIONS, MDM_UPDATE_OPTIONS } from '../../wasm/abi.generated.js';
import { withScope } from '../../wasm/memory.js';
import { withPrivacy, type Message } from '../messages/envelope.js';
import { checkContext, totalUsers, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { MdmAggregator } from './aggregator.js';
import { AGGREGATE, INIT_REQUEST, MDM_PROTOCOL, MODEL, near, paramsOf, readAggregate, sensitivity, type Shape } from './messages.js';
import { aggregatorOptions, cohortTooSmall, MIN_EXACT_CLIENTS, serverOptions, type MdmOptions, type MdmPrivacy, type MdmServerOptions, type ResolvedMdmServerOptions } from './options.js';

export type { MdmOptions, MdmPrivacy, MdmServerOptions } from './options.js';

/** One Algorithm 2 round as the server saw it. */
export interface MdmRound {
  round: number;
  /** clients whose statistics were summed */
  clients: number;
  /** mean ln q(c, n) of the cohort's supported clients under the broadcast model (undefined with privacy: not collected) */
  meanLogLikelihood?: number;
  /** cohort clients whose size the broadcast model gave probability 0 */
  unsupported?: number;
  /** guards the update applied (see GUARDS) */
  guards: string[];
}

/** Names of the core's guard flags (crates/fedmix-core/src/mdm/server.rs), bit by bit. */
export const GUARDS = ['empty-component', 'degenerate-moments', 'alpha-floored', 'alpha-capped', 'component-kept', 'clamped', 'alpha-kept'] as const;

function guardNames(flags: number): string[] {
  return GUARDS.filter((_, b) => (flags & (1 << b)) !== 0);
}

type Phase = 'init' | 'em' | 'done';

export class MdmServer implements ServerRole<true, DirichletMultinomialMixture> {
  readonly protocol = MDM_PROTOCOL;
  /** Distributed noise cannot apply: the sums' identities are checked (docs/privacy.md); MDM's own privacy option adds central noise. */
  readonly secureNoise = "its summed statistics must satisfy identities the server checks (p's rows summing to e's users, omega to the users): noise breaks them; MDM's differential privacy is its own privacy option (central noise on the aggregate)";
  readonly nComponents: number;
  readonly nCategories: number;
  readonly maxCount: number;
  private readonly rounds: number;
  private readonly cohort: number | undefined;
  private readonly initCohort: number | undefined;
  private readonly privacy: MdmPrivacy | undefined;
  private readonly onRound: MdmOptions['onRound'];
  private readonly rng: Rng;
  private readonly aggregator: MdmAggregator;
  private readonly ownsAggregator: boolean;
  private phase: Phase;
  private emRoundCount = 0;
  private current: DirichletMultinomialMixture | undefined;
  private readonly historyRounds: MdmRound[] = [];
  private initGuardNames: string[] = [];

  /**
   * `aggregator`: the secure aggregator between the clients and this server
   * (default: one adding the noise `privacy` asks for, seeded by noiseSeed).
   */
  /** Options checked here (serverOptions), unless they are what its check returned. */
  constructor(options: MdmServerOptions | ResolvedMdmServerOptions, aggregator?: MdmAggregator) {
    const o = serverOptions.check(options);
    this.nComponents = o.nComponents;
    this.nCategories = o.nCategories;
    this.maxCount = o.maxCount;
    this.rounds = o.rounds;
    this.cohort = o.cohort;
    this.initCohort = o.initCohort;
    this.privacy = o.privacy;
    this.onRound = o.onRound;
    if (aggregator !== undefined && !guardRead('aggregator', () => aggregator instanceof MdmAggregator)) throw new InvalidParameterError(`aggregator must be an MdmAggregator, got ${formatValue(aggregator)}`);
    this.rng = new Rng(o.seed);
    this.ownsAggregator = aggregator === undefined;
    this.aggregator =
      aggregator ?? new MdmAggregator(aggregatorOptions.trust({ noiseMultiplier: this.privacy?.noiseMultiplier ?? 0, seed: o.noiseSeed, exactEvaluation: false, minExactClients: MIN_EXACT_CLIENTS }));
    if (o.init) {
      this.current = o.init;
      this.phase = this.rounds === 0 ? 'done' : 'em';
      this.onRound?.(0, o.init);
    } else {
      this.phase = 'init';
    }
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /** Exclusion reasons carry a client's values only when the aggregator releases exact sums. */
  get detailedReasons(): boolean {
    return this.aggregator.detailedReasons;
  }

  /** The current model; undefined before Algorithm 1 has run. */
  get model(): DirichletMultinomialMixture | undefined {
    return this.current;
  }

  /** Algorithm 2's rounds so far, with what the server saw in each. */
  get history(): MdmRound[] {
    return this.historyRounds.map((r) => ({ ...r, guards: [...r.guards] }));
  }

  /** Guards the initialization applied. */
  get initGuards(): string[] {
    return [...this.initGuardNames];
  }

  private shape(): Shape {
    return { k: this.nComponents, c: this.nCategories, nMax: this.maxCount };
  }

  /**
   * The round's cohort: `size` of the available clients drawn without
   * replacement (all of them, in order, when size covers them). Sizes count
   * users: a client standing for a group of users (ctx.users) is asked as a
   * whole, so a cohort smaller than all the users needs one user per client.
   */
  private sampleCohort(ctx: RoundContext, name: 'cohort' | 'initCohort', wanted: number | undefined): string[] {
    const available = ctx.clients;
    if (ctx.users !== undefined && ctx.users.size > 0) {
      const users = totalUsers(ctx, available);
      const size = Math.min(wanted ?? users, users);
      if (size < this.nComponents) throw new InvalidParameterError(cohortTooSmall(this.nComponents, name, size, size === users));
      if (size < users) {
        throw new InvalidParameterError(
          `${name} = ${size} of the ${users} users cannot be drawn: clients standing for groups of users answer for all of them; omit ${name} (every user every round) or give one client per user`,
        );
      }
      return [...available];
    }
    const n = available.length;
    const k = this.nComponents;
    const size = Math.min(wanted ?? n, n);
    if (size < k) throw new InvalidParameterError(cohortTooSmall(k, name, size, size === n));
    if (size >= n) return [...available];
    return Array.from(this.rng.choice(n, size), (i) => available[i]!);
  }

  configure(context: RoundContext): Map<string, Message> {
    const ctx = checkContext(context);
    const out = new Map<string, Message>();
    let request: Message;
    let cohort: string[];
    if (this.phase === 'init') {
      // the EM cohort's size is checked too, before any client is asked
      if (this.rounds > 0) this.checkCohort(totalUsers(ctx, ctx.clients), 'cohort', this.cohort);
      cohort = this.sampleCohort(ctx, 'initCohort', this.initCohort ?? this.cohort);
      request = INIT_REQUEST.create('server', ctx.round, { nComponents: this.nComponents, nCategories: this.nCategories, maxCount: this.maxCount });
    } else if (this.phase === 'em') {
      cohort = this.sampleCohort(ctx, 'cohort', this.cohort);
      request = MODEL.create('server', ctx.round, { model: paramsOf(this.current!), logLikelihood: this.privacy === undefined, clip: this.privacy?.clip });
    } else {
      return out;
    }
    if (this.privacy && this.privacy.noiseMultiplier > 0) {
      // the aggregator's noise on this round's sums, declared for the run's accountant and the clients' ledgers:
      // a client is in the round with probability (the runtime's sampling) x (this cohort's share of the clients offered)
      const samplingRate = Math.min(1, (ctx.samplingRate ?? 1) * (cohort.length / ctx.clients.length));
      request = withPrivacy(request, { mechanism: 'gaussian', noiseMultiplier: this.privacy.noiseMultiplier, samplingRate });
    }
    this.aggregator.begin(request);
    for (const id of cohort) out.set(id, request);
    return out;
  }

  private checkCohort(n: number, name: 'cohort' | 'initCohort', wanted: number | undefined): void {
    const size = Math.min(wanted ?? n, n);
    if (size < this.nComponents) throw new InvalidParameterError(cohortTooSmall(this.nComponents, name, size, size === n));
  }

  /** One client's contribution, checked and added by the aggregator; refused with the reason otherwise. */
  accept(reply: Message, _request?: Message, ctx?: RoundContext): true {
    this.aggregator.add(reply, ctx?.quantization);
    return true;
  }

  /**
   * Ends the round with what the aggregator releases: checks it (the noise
   * the guarantee rests on is the noise that was added) and updates the model
   * from the sums. On an error the model stays as it was.
   */
  aggregate(context: RoundContext): MdmRound | undefined {
    const ctx = checkContext(context);
    const m = AGGREGATE.read(this.aggregator.release());
    if (m.round !== ctx.round) throw new InvalidMessageError(`the aggregate is for round ${m.round}, not ${ctx.round}`);
    const of = this.phase === 'init' ? 'init' : 'round';
    const agg = readAggregate(m.payload, `aggregate of round ${ctx.round}`, of, this.shape(), 0, ctx.quantization);
    const expected = this.privacy ? this.privacy.noiseMultiplier * sensitivity(of, this.privacy.clip) : 0;
    if (!near(agg.noiseStddev, expected, 1e-12)) {
      throw new InvalidMessageError(
        `the aggregate of round ${ctx.round} has noise of standard deviation ${agg.noiseStddev}, but this server's privacy options give ${expected} ` +
          `(noise multiplier ${this.privacy?.noiseMultiplier ?? 0} x sensitivity); give the aggregator the server's noiseMultiplier`,
      );
    }
    const { k, c, nMax } = this.shape();
    const noisy = agg.noiseStddev > 0;
    const s = agg.sums;
    const { tau, alpha, pi, flags } = withScope((sc) => {
      const [tau, alpha, pi, flags] = [sc.f64(k), sc.f64(k * c), sc.f64(k * nMax), sc.f64(1)];
      if (of === 'init') {
        sc.check(sc.w.fm_mdm_initialize(sc.struct(MDM_INITIALIZE_OPTIONS, { k, c, nMax, clients: agg.clients, noisy: noisy ? 1 : 0 }), sc.f64From(s.e!), sc.f64From(s.p!), sc.f64From(s.q!), tau, alpha, pi, flags));
      } else {
        sc.check(
          sc.w.fm_mdm_update(
            sc.struct(MDM_UPDATE_OPTIONS, { k, c, nMax, clients: agg.clients, noisy: noisy ? 1 : 0 }),
            ...this.current!.pointers(sc), sc.f64From(s.omega!), sc.f64From(s.e!), sc.f64From(s.u!), sc.f64From(s.v!), tau, alpha, pi, flags,
          ),
        );
      }
      return { tau: sc.readF64(tau, k), alpha: sc.readF64(alpha, k * c), pi: sc.readF64(pi, k * nMax), flags: sc.readF64(flags, 1)[0]! };
    });
    const rows = (v: Float64Array, w: number) => Array.from({ length: k }, (_, r) => v.subarray(r * w, (r + 1) * w));
    const next = new DirichletMultinomialMixture({ tau, alpha: rows(alpha, c), pi: rows(pi, nMax) });
    if (of === 'init') {
      this.initGuardNames = guardNames(flags);
      this.current = next;
      this.phase = this.rounds === 0 ? 'done' : 'em';
      this.onRound?.(0, next);
      return undefined;
    }
    const entry: MdmRound = { round: this.emRoundCount + 1, clients: agg.clients, guards: guardNames(flags) };
    if (s.logLikelihood) {
      const unsupported = s.unsupported![0]!;
      entry.unsupported = unsupported;
      entry.meanLogLikelihood = agg.clients > unsupported ? s.logLikelihood[0]! / (agg.clients - unsupported) : undefined;
    }
    this.historyRounds.push(entry);
    this.current = next;
    this.emRoundCount += 1;
    if (this.emRoundCount >= this.rounds) this.phase = 'done';
    this.onRound?.(this.emRoundCount, next);
    return entry;
  }

  /**
   * The state between rounds, as JSON-safe data (the descriptor's state.save):
   * phase, counters, model, history and the cohort generator. The
   * aggregator's noise generator is not saved: its state would let whoever
   * reads the checkpoint reconstruct the noise and subtract it, so a resumed
   * run with privacy draws fresh noise (and differs from the uninterrupted
   * run by that noise alone).
   * @internal
   */
  saveState(): MdmState {
    return { phase: this.phase, emRounds: this.emRoundCount, model: this.current ? this.current.toJSON() : null, history: this.history, initGuards: [...this.initGuardNames], rng: this.rng.getState() };
  }

  /** A saved state (its schema checked it) put into this new server role. @internal */
  restoreState(state: { phase: Phase; emRounds: number; model: DirichletMultinomialMixture | null; history: MdmRound[]; initGuards: string[]; rng: RngState }): void {
    const bad = (field: string, why: string) => stateMismatch('mdm', field, why);
    const m = state.model;
    if (m && (m.nComponents !== this.nComponents || m.nCategories !== this.nCategories || m.maxCount !== this.maxCount)) {
      throw bad('model', `K = ${m.nComponents}, C = ${m.nCategories}, N = ${m.maxCount}; the server's options give K = ${this.nComponents}, C = ${this.nCategories}, N = ${this.maxCount}`);
    }
    if (!m && state.phase !== 'init') throw bad('model', `a server in phase ${state.phase} has a model`);
    if (state.emRounds > this.rounds || state.history.length !== state.emRounds) throw bad('emRounds', `${state.emRounds} rounds (of ${this.rounds}) with ${state.history.length} rounds of history`);
    this.rng.setState(state.rng);
    this.phase = state.phase;
    this.emRoundCount = state.emRounds;
    this.current = m ?? undefined;
    this.historyRounds.splice(0, this.historyRounds.length, ...state.history);
    this.initGuardNames = [...state.initGuards];
  }

  /** The fitted model. */
  result(): DirichletMultinomialMixture {
    if (!this.current) throw new InvalidParameterError('the server has no model yet; run the initialization first');
    return this.current;
  }

  /** Frees the server's generator (and its aggregator's, when it made it). */
  dispose(): void {
    if (!this.rng.disposed) this.rng.dispose();
    if (this.ownsAggregator) this.aggregator.dispose();
  }
}

/** An MDM server's state between rounds (saveState), as JSON-safe data. */
export interface MdmState {
  phase: Phase;
  emRounds: number;
  model: DirichletMultinomialMixtureJSON | null;
  history: MdmRound[];
  initGuards: string[];
  rng: RngState;
}
