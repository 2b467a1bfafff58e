/**
 * `fedmix privacy`: what a run of the sampled Gaussian mechanism spends,
 * epsilon at delta, by the RDP accountant (ts/privacy/accountant.ts). The
 * numbers a DP-SGD or DP-FedAvg user checks before training: Opacus' and
 * dp_accounting's question, "what epsilon do sigma, q and T give?". With
 * `--mechanism skellam`, steps of the Skellam mechanism (distributed DP under
 * secure aggregation): Sk(mu) noise on integer vectors of sensitivities l1, l2.
 */
import { InvalidParameterError } from '../errors.js';
import { privacyEpsilon, DEFAULT_RDP_ORDERS } from '../privacy/accountant.js';
import type { OptionSpec, Options } from './args.js';
import type { Command } from './command.js';
import type { CommandResult } from './io.js';

const options: Record<string, OptionSpec> = {
  mechanism: { type: 'string', default: 'gaussian', choices: ['gaussian', 'skellam'], help: 'gaussian: the sampled Gaussian mechanism; skellam: Skellam noise shares (distributed DP)' },
  'noise-multiplier': { type: 'number', help: 'the noise standard deviation over the sensitivity (clipping bound): sigma (required)' },
  'sampling-rate': { type: 'number', help: 'the probability that a record or client is in a step: q in [0, 1] (required)' },
  steps: { type: 'int', help: 'the number of steps (rounds) (required)' },
  mu: { type: 'number', help: 'skellam: the total Poisson mean of the released noise, Sk(mu) of variance 2 mu per coordinate (required)' },
  l1: { type: 'number', help: 'skellam: the L1 sensitivity in the noise\'s integer units (required)' },
  l2: { type: 'number', help: 'skellam: the L2 sensitivity in the noise\'s integer units (required)' },
  delta: { type: 'number', default: 1e-5, help: 'delta of (epsilon, delta)' },
};

export const privacyCommand: Command = {
  summary: 'epsilon at delta for steps of the sampled Gaussian or the Skellam mechanism (the RDP accountant, as Opacus)',
  options,
  async run(o: Options): Promise<CommandResult> {
    if (o.mechanism === 'skellam') return skellam(o);
    for (const flag of ['mu', 'l1', 'l2'] as const) if (o[flag] !== undefined) throw new InvalidParameterError(`--${flag} is for --mechanism skellam`);
    const given = { noiseMultiplier: o['noise-multiplier'], samplingRate: o['sampling-rate'], steps: o.steps, delta: o.delta };
    for (const [flag, value] of [['--noise-multiplier', given.noiseMultiplier], ['--sampling-rate', given.samplingRate], ['--steps', given.steps]] as const) {
      if (value === undefined) throw new InvalidParameterError(`${flag} is required`);
    }
    const spent = privacyEpsilon(given as { noiseMultiplier: number; samplingRate: number; steps: number; delta: number });
    const text =
      `epsilon ${format(spent.epsilon)} at delta ${given.delta} after ${given.steps} steps of noise multiplier ${given.noiseMultiplier} at sampling rate ${given.samplingRate}` +
      ` (RDP, best order ${spent.order ?? 'none'} of ${DEFAULT_RDP_ORDERS.length})`;
    return { text, json: { epsilon: spent.epsilon, delta: spent.delta, order: spent.order ?? null, noiseMultiplier: given.noiseMultiplier, samplingRate: given.samplingRate, steps: given.steps, accountant: 'rdp' } };
  },
};

const format = (x: number) => (Number.isFinite(x) ? x.toPrecision(6) : String(x));

/** `--mechanism skellam`: steps of Sk(mu) noise on integer vectors of sensitivities (l1, l2), no subsampling. */
function skellam(o: Options): CommandResult {
  for (const flag of ['noise-multiplier', 'sampling-rate'] as const) if (o[flag] !== undefined) throw new InvalidParameterError(`--${flag} is for --mechanism gaussian; the Skellam mechanism takes --mu, --l1 and --l2`);
  const given = { mechanism: 'skellam' as const, mu: o.mu, l1: o.l1, l2: o.l2, steps: o.steps, delta: o.delta };
  for (const [flag, value] of [['--mu', given.mu], ['--l1', given.l1], ['--l2', given.l2], ['--steps', given.steps]] as const) {
    if (value === undefined) throw new InvalidParameterError(`${flag} is required`);
  }
  const spent = privacyEpsilon(given as { mechanism: 'skellam'; mu: number; l1: number; l2: number; steps: number; delta: number });
  const text =
    `epsilon ${format(spent.epsilon)} at delta ${given.delta} after ${given.steps} steps of Skellam noise mu ${given.mu} at sensitivities l1 ${given.l1}, l2 ${given.l2}` +
    ` (RDP, best order ${spent.order ?? 'none'} of ${DEFAULT_RDP_ORDERS.length})`;
  return { text, json: { epsilon: spent.epsilon, delta: spent.delta, order: spent.order ?? null, mechanism: 'skellam', mu: given.mu, l1: given.l1, l2: given.l2, steps: given.steps, accountant: 'rdp' } };
}
