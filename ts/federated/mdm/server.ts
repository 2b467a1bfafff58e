/**
 * The server role of federated MDM inference. It sees only aggregates: it
 * samples each round's cohort, broadcasts what the cohort needs, and turns the
 * aggregate of the cohort's statistics into parameters with the core
 * (fm_mdm_initialize for Algorithm 1, fm_mdm_update for Algorithm 2).
 *
 * One code path for the full-batch iteration of Theorem 3.1 (cohort = every
 * client, each round then never lowers the likelihood) and for cohorts (the
 * paper's stochastic version): `cohort` decides.
 */
import { InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import { Rng } from '../../random.js';
import { requireInteger, requireNumber } from '../../validate.js';
import { withScope } from '../../wasm/memory.js';
import { decodeMessage, message, type Message } from '../message.js';
import type { ExcludedClient } from '../transport.js';
import { MDM_KINDS, MDM_MAX_CELLS, near, paramsOf, readAggregate, sensitivity, type ModelBroadcast, type Shape } from './messages.js';

/** Noise for central differential privacy: see `sensitivity` in messages.ts and the README. */
export interface MdmPrivacy {
  /** standard deviation of the noise on each summed entry, in units of one client's L2 sensitivity */
  noiseMultiplier: number;
  /** bound on each client's (u, v) L2 norm in Algorithm 2 (clients scale theirs down to it) */
  clip: number;
}

export interface MdmOptions {
  /** K (default 1) */
  nComponents?: number;
  /** Algorithm 2's rounds T (default 100) */
  rounds?: number;
  /** clients per round (default: every client, the full-batch iteration) */
  cohort?: number;
  /** Algorithm 1's cohort S_0 (default: `cohort`) */
  initCohort?: number;
  /** initial parameters instead of Algorithm 1 (same K, C, N) */
  init?: DirichletMultinomialMixture;
  /** Gaussian noise on the aggregates (central DP); without it, exact sums */
  privacy?: MdmPrivacy;
  /** seed of the cohort draws */
  seed?: number;
  /** a client whose contribution fails validation: excluded with its reason (default), or the run throws */
  onInvalidClient?: 'exclude' | 'throw';
  /** called with the initial model (round 0) and after every round */
  onRound?: (round: number, model: DirichletMultinomialMixture) => void;
}

export interface MdmServerOptions extends MdmOptions {
  /** C, the categories of every client's histogram */
  nCategories: number;
  /** N, the largest client size the model covers */
  maxCount: number;
}

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

export class MdmServer {
  readonly nComponents: number;
  readonly nCategories: number;
  readonly maxCount: number;
  private readonly rounds: number;
  private readonly cohortSize: number;
  private readonly initCohortSize: number;
  private readonly privacy: MdmPrivacy | undefined;
  private readonly onInvalidClient: 'exclude' | 'throw';
  private readonly onRound: MdmOptions['onRound'];
  private readonly rng: Rng;
  private active: string[];
  private phase: Phase;
  private round = 0;
  private emRoundCount = 0;
  private current: DirichletMultinomialMixture | undefined;
  private pending: Map<string, Message> | undefined;
  private readonly historyRounds: MdmRound[] = [];
  private readonly excludedClients: ExcludedClient[] = [];
  private initGuardNames: string[] = [];

  constructor(clientIds: readonly string[], options: MdmServerOptions) {
    if (!Array.isArray(clientIds) || clientIds.length === 0) throw new InvalidParameterError('MDM inference needs at least one client');
    if (new Set(clientIds).size !== clientIds.length || clientIds.some((c) => typeof c !== 'string' || c.length === 0)) {
      throw new InvalidParameterError('client ids must be distinct non-empty strings');
    }
    const o = options ?? ({} as MdmServerOptions);
    this.nComponents = requireInteger('nComponents', o.nComponents ?? o.init?.nComponents ?? 1, 1);
    this.nCategories = requireInteger('nCategories', o.nCategories, 2);
    this.maxCount = requireInteger('maxCount', o.maxCount, 1);
    this.rounds = requireInteger('rounds', o.rounds ?? 100, 0);
    const m = clientIds.length;
    this.cohortSize = Math.min(requireInteger('cohort', o.cohort ?? m, 1), m);
    this.initCohortSize = Math.min(requireInteger('initCohort', o.initCohort ?? o.cohort ?? m, 1), m);
    const k = this.nComponents;
    if (k * Math.max(this.nCategories, this.maxCount) > MDM_MAX_CELLS) {
      throw new InvalidParameterError(
        `K = ${k} components of C = ${this.nCategories} categories and N = ${this.maxCount} sizes exceed the limit of ${MDM_MAX_CELLS} cells (K x C and K x N each) that clients accept; lower K or N`,
      );
    }
    for (const [name, size] of [['cohort', this.cohortSize], ['initCohort', this.initCohortSize]] as const) {
      if (size < k) {
        throw new InvalidParameterError(
          `K = ${k} components is larger than the ${name} of ${size} client${size === 1 ? '' : 's'}${size === m ? ` (all there are)` : ''}; lower K or use a larger ${name}`,
        );
      }
    }
    if (o.privacy !== undefined) {
      if (o.privacy === null || typeof o.privacy !== 'object') throw new InvalidParameterError('privacy must be { noiseMultiplier, clip }');
      requireNumber('privacy.noiseMultiplier', o.privacy.noiseMultiplier, 0);
      if (!(o.privacy.clip > 0) || !Number.isFinite(o.privacy.clip)) throw new InvalidParameterError(`privacy.clip must be a finite number > 0, got ${String(o.privacy.clip)}`);
      this.privacy = { noiseMultiplier: o.privacy.noiseMultiplier, clip: o.privacy.clip };
    }
    if (o.init !== undefined) {
      if (!(o.init instanceof DirichletMultinomialMixture)) throw new InvalidParameterError('init must be a DirichletMultinomialMixture');
      if (o.init.nComponents !== k || o.init.nCategories !== this.nCategories || o.init.maxCount !== this.maxCount) {
        throw new InvalidParameterError(
          `init has K = ${o.init.nComponents}, C = ${o.init.nCategories}, N = ${o.init.maxCount}; this run has K = ${k}, C = ${this.nCategories}, N = ${this.maxCount}`,
        );
      }
    }
    this.onInvalidClient = o.onInvalidClient ?? 'exclude';
    if (this.onInvalidClient !== 'exclude' && this.onInvalidClient !== 'throw') throw new InvalidParameterError(`onInvalidClient must be 'exclude' or 'throw', got ${JSON.stringify(o.onInvalidClient)}`);
    if (o.onRound !== undefined && typeof o.onRound !== 'function') throw new InvalidParameterError('onRound must be a function');
    this.onRound = o.onRound;
    if (o.seed !== undefined) requireInteger('seed', o.seed, 0);
    this.active = [...clientIds];
    this.rng = new Rng(o.seed);
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

  get excluded(): ExcludedClient[] {
    return this.excludedClients.map((e) => ({ ...e }));
  }

  /** Clients still taking part. */
  get clients(): string[] {
    return [...this.active];
  }

  /** Communication rounds so far (Algorithm 1's included). */
  get communicationRounds(): number {
    return this.round;
  }

  private shape(): Shape {
    return { k: this.nComponents, c: this.nCategories, nMax: this.maxCount };
  }

  /** `size` clients drawn without replacement from those taking part (all of them, in order, when size covers them). */
  private sampleCohort(size: number): string[] {
    const n = this.active.length;
    if (n < this.nComponents) {
      throw new InvalidParameterError(
        `only ${n} client${n === 1 ? '' : 's'} remain${n === 1 ? 's' : ''} (the others were excluded), fewer than K = ${this.nComponents}; see excluded for why`,
      );
    }
    if (size >= n) return [...this.active];
    return Array.from(this.rng.choice(n, size), (i) => this.active[i]!);
  }

  /** The messages of the next round, one per cohort client (empty when done). Each call starts a round; receive() ends it. */
  requests(): Map<string, Message> {
    const out = new Map<string, Message>();
    if (this.phase === 'done') return out;
    if (this.pending) throw new InvalidParameterError(`round ${this.round} is still waiting for its aggregate; call receive() first`);
    this.round += 1;
    const r = this.round;
    if (this.phase === 'init') {
      const payload = { nComponents: this.nComponents, nCategories: this.nCategories, maxCount: this.maxCount };
      for (const id of this.sampleCohort(this.initCohortSize)) out.set(id, message(MDM_KINDS.initRequest, 'server', r, payload));
    } else {
      const payload: ModelBroadcast = { model: paramsOf(this.current!), logLikelihood: this.privacy === undefined };
      if (this.privacy) payload.clip = this.privacy.clip;
      for (const id of this.sampleCohort(this.cohortSize)) out.set(id, message(MDM_KINDS.model, 'server', r, payload));
    }
    this.pending = out;
    return new Map(out);
  }

  /**
   * Ends the round with the aggregator's message (wire text): checks it, drops
   * the clients it refused (or throws, with onInvalidClient 'throw', leaving the
   * model as it was) and updates the model from the sums.
   */
  receive(aggregateText: string): void {
    if (!this.pending) throw new InvalidParameterError('no round is waiting for an aggregate; call requests() first');
    this.pending = undefined;
    const m = decodeMessage(aggregateText, MDM_KINDS.aggregate);
    if (m.round !== this.round) throw new InvalidMessageError(`the aggregate is for round ${m.round}, not ${this.round}`);
    const of = this.phase === 'init' ? 'init' : 'round';
    const agg = readAggregate(m.payload, `aggregate of round ${this.round}`, of, this.shape());
    // the noise the guarantee rests on is the noise that was added
    const expected = this.privacy ? this.privacy.noiseMultiplier * sensitivity(of, this.privacy.clip) : 0;
    if (!near(agg.noiseStddev, expected, 1e-12)) {
      throw new InvalidMessageError(
        `the aggregate of round ${this.round} has noise of standard deviation ${agg.noiseStddev}, but this server's privacy options give ${expected} ` +
          `(noise multiplier ${this.privacy?.noiseMultiplier ?? 0} x sensitivity); give the aggregator the server's noiseMultiplier`,
      );
    }
    if (agg.excluded.length > 0 && this.onInvalidClient === 'throw') throw new InvalidMessageError(agg.excluded[0]!.reason);
    for (const e of agg.excluded) {
      this.excludedClients.push({ client: e.client, round: e.round, reason: e.reason });
      this.active = this.active.filter((c) => c !== e.client);
    }
    if (agg.clients === 0) {
      this.phase = 'done';
      const why = agg.excluded.map((e) => e.reason).join('; ');
      throw new InvalidMessageError(`the cohort of round ${this.round} is empty: no client's statistics could be used${why ? ` (${why})` : ''}`);
    }
    const { k, c, nMax } = this.shape();
    const noisy = agg.noiseStddev > 0;
    const s = agg.sums;
    const { tau, alpha, pi, flags } = withScope((sc) => {
      const [tau, alpha, pi, flags] = [sc.f64(k), sc.f64(k * c), sc.f64(k * nMax), sc.f64(1)];
      if (of === 'init') {
        sc.check(sc.w.fm_mdm_initialize(k, c, nMax, sc.f64From(s.e!), sc.f64From(s.p!), sc.f64From(s.q!), agg.clients, noisy ? 1 : 0, tau, alpha, pi, flags));
      } else {
        sc.check(
          sc.w.fm_mdm_update(
            k, c, nMax, ...this.current!.pointers(sc), sc.f64From(s.omega!), sc.f64From(s.e!), sc.f64From(s.u!), sc.f64From(s.v!), agg.clients,
            noisy ? 1 : 0, tau, alpha, pi, flags,
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
      return;
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
  }

  /** Frees the server's generator. */
  dispose(): void {
    if (!this.rng.disposed) this.rng.dispose();
  }
}
