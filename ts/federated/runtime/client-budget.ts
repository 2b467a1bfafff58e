/**
 * A client's own privacy ledger, so that no client has to trust the server's
 * accounting: before it answers a request that declares the privacy step its
 * reply's release spends (the envelope's `privacy`), the client host
 * (client-host.ts) asks the ledger, which composes the step with everything
 * the client has answered before (RDP, privacy/accountant.ts) and refuses,
 * spending nothing, when epsilon at the budget's delta would pass the
 * budget's epsilon. Otherwise the step is written to the ledger's store first
 * and the request answered after.
 *
 * What is accounted:
 * - a gaussian step at sampling rate 1 (no amplification by sampling: a
 *   client cannot check that the server sampled as it says), or at the
 *   declared rate with `trustSamplingRate`;
 * - a skellam step (distributed DP under secure aggregation: the client
 *   adds its own share of the noise) as declared: it has no sampling rate;
 * - a request without `privacy` is answered as before and spends nothing
 *   (with `requireDeclaredPrivacy`, one that expects a reply is refused).
 * A request is known by (run, round, kind): the same request sent again (a
 * broker outage, a reconnect, a restarted client) spends nothing the second
 * time. A request that names no run is accounted every time.
 *
 * Stores: in memory (the default), a file in Node (fedmix/node:
 * FileLedgerStore, digest-checked), IndexedDB in browsers
 * (IndexedDbLedgerStore). Every spend is one read-modify-write of the store,
 * so two writers of one store (two tabs) cannot both spend the last of it.
 */
import { keepClassName } from '../../class-name.js';
import { FedmixError, formatValue, InvalidParameterError, PrivacyBudgetError } from '../../errors.js';
import { epsilonFromRdp, RdpAccountant, rdpSampledGaussian, rdpSkellam, type MechanismSteps, type PrivacySpent, type SkellamSteps } from '../../privacy/accountant.js';
import { guardRead, readOptions } from '../../validate.js';
import { readPrivacyStep, type Message, type PrivacyStep } from '../messages/envelope.js';

export const LEDGER_FORMAT = 'fedmix.PrivacyLedger';
export const LEDGER_VERSION = 1;

/** How many accounted requests a ledger remembers for re-sent ones; an older one sent again is accounted again (never too little). */
const RECENT = 4096;

/** One accounted request: which it was, and the step it declared. */
export interface LedgerEntry {
  /** the request's run id (null: it named none) */
  run: string | null;
  round: number;
  kind: string;
  step: PrivacyStep;
}

/** A ledger as its store keeps it (JSON-safe). */
export interface SavedLedger {
  format: typeof LEDGER_FORMAT;
  version: typeof LEDGER_VERSION;
  /** requests accounted, ever: a writer compares it with its own count to tell a ledger that another writer changed */
  accounted: number;
  /** the steps composed (RdpAccountant.toJSON: the orders and each kind of step, with its count) */
  accountant: ReturnType<RdpAccountant['toJSON']>;
  /** the last accounted requests, oldest first (at most 4096), so that one sent again spends nothing */
  recent: LedgerEntry[];
}

/**
 * Where a ledger is kept. `update` runs one read-modify-write, atomically with
 * respect to other writers of the store: it reads the saved ledger (undefined
 * when there is none yet), calls `change` with it, and writes what `change`
 * returns (undefined: nothing to write). What `change` throws is thrown, with
 * nothing written. A store whose saved ledger was damaged or edited throws an
 * InvalidParameterError saying so, never starting afresh.
 */
export interface LedgerStore {
  /** what the store is, for messages (a path, a database's name) */
  readonly description: string;
  update(change: (saved: unknown) => SavedLedger | undefined): Promise<void>;
}

/** A ledger kept in memory (JSON text, as a file would hold it): lost with the process. */
export class MemoryLedgerStore implements LedgerStore {
  static {
    keepClassName(this, 'MemoryLedgerStore');
  }

  readonly description = 'a ledger in memory';
  private text: string | undefined;

  update(change: (saved: unknown) => SavedLedger | undefined): Promise<void> {
    if (typeof change !== 'function') return Promise.reject(new InvalidParameterError(`update takes a function from the saved ledger to the next, got ${formatValue(change)}`));
    try {
      const next = change(this.text === undefined ? undefined : JSON.parse(this.text));
      if (next !== undefined) this.text = JSON.stringify(next);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

/** An InvalidParameterError for a saved ledger that cannot be used. */
export function damagedLedger(where: string, why: string): InvalidParameterError {
  return new InvalidParameterError(`${where} is not a usable privacy ledger: ${why}; it was damaged or edited (restore it from a backup; starting a new ledger forgets what this client has spent)`);
}

/** A saved ledger (parsed JSON) read and checked; `where` names it in the error. */
export function readSavedLedger(saved: unknown, where: string): { ledger: SavedLedger; accountant: RdpAccountant } {
  if (saved === null || typeof saved !== 'object' || Array.isArray(saved)) throw damagedLedger(where, `it is ${formatValue(saved)}, not an object`);
  const s = saved as Partial<SavedLedger>;
  if (s.format !== LEDGER_FORMAT) throw damagedLedger(where, `its format is ${formatValue(s.format)}, not ${JSON.stringify(LEDGER_FORMAT)}`);
  if (s.version !== LEDGER_VERSION) throw damagedLedger(where, `its version is ${formatValue(s.version)}; this fedmix reads version ${LEDGER_VERSION}`);
  if (!Number.isSafeInteger(s.accounted) || (s.accounted as number) < 0) throw damagedLedger(where, `its count of accounted requests is ${formatValue(s.accounted)}`);
  let accountant: RdpAccountant;
  try {
    accountant = RdpAccountant.fromJSON(s.accountant);
  } catch (e) {
    if (e instanceof FedmixError && e.code !== 'WASM') throw damagedLedger(where, `its accountant: ${e.message}`);
    throw e;
  }
  const recent = s.recent;
  if (!Array.isArray(recent) || recent.length > RECENT) throw damagedLedger(where, `its recent requests must be an array of at most ${RECENT}`);
  const entries = recent.map((e: unknown, i): LedgerEntry => {
    const x = (e ?? {}) as Partial<LedgerEntry>;
    if (!(x.run === null || typeof x.run === 'string') || !Number.isSafeInteger(x.round) || typeof x.kind !== 'string') throw damagedLedger(where, `recent[${i}] is ${formatValue(e)}`);
    let step: PrivacyStep;
    try {
      step = readPrivacyStep(x.step);
    } catch (err) {
      throw damagedLedger(where, `recent[${i}]: ${(err as Error).message}`);
    }
    return { run: x.run, round: x.round as number, kind: x.kind, step };
  });
  if (entries.length > (s.accounted as number)) throw damagedLedger(where, `it remembers ${entries.length} requests but counts ${formatValue(s.accounted)}`);
  return { ledger: { format: LEDGER_FORMAT, version: LEDGER_VERSION, accounted: s.accounted as number, accountant: accountant.toJSON(), recent: entries }, accountant };
}

/** A client's refusal for its budget, as the ledger reports it. */
export interface BudgetRefusal {
  /** the request's run id, when it named one */
  run?: string;
  round: number;
  kind: string;
  /** why, as the refusal sent to the server says it */
  reason: string;
}

export interface ClientBudgetOptions {
  /** the most epsilon this client spends, over every run that uses this ledger */
  epsilon: number;
  /** the delta epsilon is reckoned at, in (0, 1) */
  delta: number;
  /** where the ledger is kept (default: in memory, for this process only) */
  store?: LedgerStore;
  /**
   * Account a gaussian step at the sampling rate it declares (default false:
   * at rate 1, since a client cannot check the server's sampling, and a
   * server that asks every client every round while declaring a small rate
   * would otherwise spend many times what the ledger counts).
   */
  trustSamplingRate?: boolean;
  /** Refuse a request that expects a reply but declares no privacy step (default false: answered, spending nothing). */
  requireDeclaredPrivacy?: boolean;
  /** told of each refusal for the budget (a logger) */
  onRefusal?: (refusal: BudgetRefusal) => void;
}

const same = (a: PrivacyStep, b: PrivacyStep) => JSON.stringify(readPrivacyStep(a)) === JSON.stringify(readPrivacyStep(b));
/** A step as a refusal names it: what was declared, and what was accounted where that differs. */
function describeStep(step: PrivacyStep, accounted: MechanismSteps | SkellamSteps): string {
  if (step.mechanism === 'skellam') return `Skellam noise mu ${shown(step.mu)} at sensitivities l1 ${shown(step.l1)}, l2 ${shown(step.l2)}`;
  const rate = (accounted as MechanismSteps).samplingRate;
  return `noise multiplier ${shown(step.noiseMultiplier)}, sampling rate ${shown(rate)}${rate !== step.samplingRate ? `, not the declared ${shown(step.samplingRate)}` : ''}`;
}

const shown = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(4)).toString() : String(x));

/**
 * A client's privacy budget and its ledger: give it to the client's host
 * (join's `budget`, InProcessOptions.budgets, `fedmix client
 * --epsilon-budget E --delta D --ledger FILE`).
 *
 * ```ts
 * const budget = await ClientBudget.open({ epsilon: 3, delta: 1e-5 });
 * budget.spent().epsilon; // 0
 * ```
 */
export class ClientBudget {
  static {
    keepClassName(this, 'ClientBudget');
  }

  readonly epsilon: number;
  readonly delta: number;
  readonly store: LedgerStore;
  readonly trustSamplingRate: boolean;
  readonly requireDeclaredPrivacy: boolean;
  private readonly onRefusal: ((r: BudgetRefusal) => void) | undefined;
  /** the ledger as last read or written */
  private known: SavedLedger | undefined;
  private readonly refused: BudgetRefusal[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(o: ClientBudgetOptions & { store: LedgerStore }) {
    this.epsilon = o.epsilon;
    this.delta = o.delta;
    this.store = o.store;
    this.trustSamplingRate = o.trustSamplingRate === true;
    this.requireDeclaredPrivacy = o.requireDeclaredPrivacy === true;
    this.onRefusal = o.onRefusal;
  }

  /** A budget over the ledger in `store`, read now: a damaged or edited one is an InvalidParameterError here, before any request. */
  static async open(given: ClientBudgetOptions): Promise<ClientBudget> {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be { epsilon, delta, store?, ... }, got ${formatValue(given)}`);
    const o = readOptions(given, ['epsilon', 'delta', 'store', 'trustSamplingRate', 'requireDeclaredPrivacy', 'onRefusal']) as ClientBudgetOptions;
    if (!(typeof o.epsilon === 'number' && o.epsilon >= 0 && Number.isFinite(o.epsilon))) throw new InvalidParameterError(`epsilon (the budget) must be a finite number >= 0, got ${formatValue(o.epsilon)}`);
    if (!(typeof o.delta === 'number' && o.delta > 0 && o.delta < 1)) throw new InvalidParameterError(`delta must be a number in (0, 1), got ${formatValue(o.delta)}`);
    for (const k of ['trustSamplingRate', 'requireDeclaredPrivacy'] as const) {
      if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new InvalidParameterError(`${k} must be a boolean, got ${formatValue(o[k])}`);
    }
    if (o.onRefusal !== undefined && typeof o.onRefusal !== 'function') throw new InvalidParameterError(`onRefusal must be a function, got ${formatValue(o.onRefusal)}`);
    const store = o.store ?? new MemoryLedgerStore();
    if (!guardRead('store', () => store !== null && typeof store === 'object' && typeof store.update === 'function' && typeof store.description === 'string')) {
      throw new InvalidParameterError(`store must be a LedgerStore ({ description, update }), got ${formatValue(store)}`);
    }
    const budget = new ClientBudget({ ...o, store });
    await store.update((saved) => {
      budget.read(saved);
      return undefined;
    });
    return budget;
  }

  /** What this client has spent (as last read or written): epsilon at the budget's delta. */
  spent(): PrivacySpent {
    return RdpAccountant.fromJSON(this.ledger().accountant).epsilon(this.delta);
  }

  /** Requests accounted so far, over every run of this ledger. */
  get accounted(): number {
    return this.ledger().accounted;
  }

  /** Requests this client refused for its budget since the budget was opened. */
  get refusals(): readonly BudgetRefusal[] {
    return this.refused.slice();
  }

  /** Whether a request must go through account() before it is answered (it declares a step, or one is required of it). */
  concerns(request: Message, expectsReply: boolean): boolean {
    return request.privacy !== undefined || (this.requireDeclaredPrivacy && expectsReply);
  }

  /**
   * Accounts a checked request before its answer: resolves once the step it
   * declares is written to the store (or the same request was accounted
   * before); rejects with a PrivacyBudgetError, spending nothing, when it
   * cannot be answered within the budget. `client` names the client in the error.
   */
  account(request: Message, expectsReply: boolean, client: string): Promise<void> {
    const done = this.queue.then(() => this.accountNow(request, expectsReply, client));
    this.queue = done.catch(() => undefined);
    return done;
  }

  private async accountNow(request: Message, expectsReply: boolean, client: string): Promise<void> {
    const what = `round ${request.round}'s ${request.kind.slice(0, 80)} request`;
    const step = request.privacy;
    if (step === undefined) {
      if (this.requireDeclaredPrivacy && expectsReply) this.refuse(request, `${client}: refused ${what}: it declares no privacy step, and this client answers only requests whose privacy it can account (requireDeclaredPrivacy)`);
      return;
    }
    const accounted: MechanismSteps | SkellamSteps =
      step.mechanism === 'gaussian' ? { noiseMultiplier: step.noiseMultiplier, samplingRate: this.trustSamplingRate ? step.samplingRate : 1 } : { mechanism: 'skellam', mu: step.mu, l1: step.l1, l2: step.l2 };
    const run = request.run ?? null;
    let next: SavedLedger | undefined;
    await this.store.update((saved) => {
      const { ledger, accountant } = this.read(saved);
      // the same request sent again (a reconnect, a restart): accounted once
      if (run !== null && ledger.recent.some((e) => e.run === run && e.round === request.round && e.kind === request.kind && same(e.step, step))) return undefined;
      const once = 'mechanism' in accounted ? rdpSkellam(accounted, accountant.orders) : rdpSampledGaussian(accounted, accountant.orders);
      const total = accountant.rdp;
      for (let i = 0; i < total.length; i++) total[i] += once[i]!;
      const after = epsilonFromRdp(total, this.delta, accountant.orders).epsilon;
      if (!(after <= this.epsilon)) {
        const before = accountant.epsilon(this.delta).epsilon;
        this.refuse(
          request,
          `${client}: refused ${what} for its privacy budget: answering it (${describeStep(step, accounted)}) would bring its epsilon to ${shown(after)}, past its budget of ${shown(this.epsilon)} at delta ${shown(this.delta)}; it has spent ${shown(before)} over ${ledger.accounted} requests`,
        );
      }
      accountant.step(accounted);
      const recent = [...ledger.recent, { run, round: request.round, kind: request.kind, step }].slice(-RECENT);
      next = { format: LEDGER_FORMAT, version: LEDGER_VERSION, accounted: ledger.accounted + 1, accountant: accountant.toJSON(), recent };
      return next;
    });
    // known only once written: a write that failed spent nothing
    if (next !== undefined) this.known = next;
  }

  /** The ledger in `saved`, read and checked (its accountant fresh: stepping it changes nothing known until the write is done). */
  private read(saved: unknown): { ledger: SavedLedger; accountant: RdpAccountant } {
    if (saved === undefined) {
      const accountant = new RdpAccountant();
      this.known = { format: LEDGER_FORMAT, version: LEDGER_VERSION, accounted: 0, accountant: accountant.toJSON(), recent: [] };
      return { ledger: this.known, accountant };
    }
    const read = readSavedLedger(saved, this.store.description);
    this.known = read.ledger;
    return read;
  }

  private ledger(): SavedLedger {
    // open() read the store: known is always set after it
    return this.known!;
  }

  private refuse(request: Message, reason: string): never {
    const refusal: BudgetRefusal = { ...(request.run !== undefined ? { run: request.run } : {}), round: request.round, kind: request.kind, reason };
    this.refused.push(refusal);
    try {
      this.onRefusal?.(refusal);
    } catch {
      // a logger's failure is not the client's
    }
    throw new PrivacyBudgetError(reason);
  }
}
