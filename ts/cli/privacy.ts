/**
 * `fedmix privacy`: what a run of the sampled Gaussian mechanism spends,
 * epsilon at delta, by the RDP accountant (ts/privacy/accountant.ts). The
 * numbers a DP-SGD or DP-FedAvg user checks before training: Opacus' and
 * dp_accounting's question, "what epsilon do sigma, q and T give?".
 */
import { InvalidParameterError } from '../errors.js';
import { privacyEpsilon, DEFAULT_RDP_ORDERS } from '../privacy/accountant.js';
import type { OptionSpec, Options } from './args.js';
import type { Command } from './command.js';
import type { CommandResult } from './io.js';

const options: Record<string, OptionSpec> = {
  'noise-multiplier': { type: 'number', help: 'the noise standard deviation over the sensitivity (clipping bound): sigma (required)' },
  'sampling-rate': { type: 'number', help: 'the probability that a record or client is in a step: q in [0, 1] (required)' },
  steps: { type: 'int', help: 'the number of steps (rounds) (required)' },
  delta: { type: 'number', default: 1e-5, help: 'delta of (epsilon, delta)' },
};

export const privacyCommand: Command = {
  summary: 'epsilon at delta for steps of the sampled Gaussian mechanism (the RDP accountant, as Opacus)',
  options,
  async run(o: Options): Promise<CommandResult> {
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
