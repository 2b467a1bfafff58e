/**
 * `fedmix client --epsilon-budget E --delta D --ledger FILE`: the client's
 * own privacy budget (federated/runtime/client-budget.ts), kept in FILE. A
 * request whose declared privacy step would take the ledger past E is
 * refused: a line on stderr as it happens, a warning per refusal at the end
 * and exit status 3 (the run went on without this client's answer).
 */
import { InvalidParameterError } from '../errors.js';
import { FileLedgerStore } from '../federated/ledger-file.js';
import { ClientBudget } from '../federated/runtime/client-budget.js';
import type { OptionSpec, Options } from './args.js';
import { note, type CommandResult } from './io.js';

export const BUDGET_OPTIONS: Record<string, OptionSpec> = {
  'epsilon-budget': { type: 'number', help: "this client's privacy budget: it refuses any request whose declared privacy step would take its epsilon (at --delta, over every run of --ledger) past this; needs --delta and --ledger (docs/privacy.md)" },
  delta: { type: 'number', help: 'the delta of --epsilon-budget' },
  ledger: { type: 'string', help: "the file of this client's privacy ledger (created if missing; a damaged one is refused)" },
  'trust-sampling-rate': { type: 'flag', help: 'account a request at the sampling rate the server declares (default: at rate 1, since a client cannot check the server\'s sampling)' },
  'require-declared-privacy': { type: 'flag', help: 'refuse requests that declare no privacy step (default: answered, spending nothing)' },
};

/** The budget the command line gives (undefined without --epsilon-budget), its ledger read now. */
export async function clientBudget(o: Options, id: string): Promise<ClientBudget | undefined> {
  const given = ['epsilon-budget', 'delta', 'ledger'].filter((k) => o[k] !== undefined);
  if (given.length === 0) {
    if (o['trust-sampling-rate'] === true || o['require-declared-privacy'] === true) throw new InvalidParameterError('--trust-sampling-rate and --require-declared-privacy need a budget: --epsilon-budget, --delta and --ledger');
    return undefined;
  }
  if (given.length < 3) throw new InvalidParameterError(`a privacy budget needs --epsilon-budget, --delta and --ledger together (got only ${given.map((k) => `--${k}`).join(', ')})`);
  return ClientBudget.open({
    epsilon: o['epsilon-budget'] as number,
    delta: o.delta as number,
    store: new FileLedgerStore(o.ledger as string),
    trustSamplingRate: o['trust-sampling-rate'] === true,
    requireDeclaredPrivacy: o['require-declared-privacy'] === true,
    onRefusal: (r) => note(`fedmix client ${id}: ${r.reason}`),
  });
}

/** The command's result with this client's refusals for its budget as warnings (exit status 3) and in its JSON. */
export function budgetOutcome(outcome: CommandResult, budget: ClientBudget | undefined): CommandResult {
  if (budget === undefined) return outcome;
  const spent = budget.spent();
  const refusals = budget.refusals;
  const json = { ...(outcome.json as object), privacy: { epsilon: spent.epsilon, delta: spent.delta, budget: budget.epsilon, accounted: budget.accounted, refusals } };
  const text = `${outcome.text}; privacy spent: epsilon ${spent.epsilon.toPrecision(4)} of ${budget.epsilon} at delta ${spent.delta} over ${budget.accounted} requests${refusals.length ? `; ${refusals.length} refused for the budget` : ''}`;
  return { ...outcome, text, json, ...(refusals.length ? { excluded: refusals.map((r) => `round ${r.round}: ${r.reason}`) } : {}) };
}
