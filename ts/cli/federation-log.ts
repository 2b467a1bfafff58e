/**
 * What `fedmix server` and `fedmix client` log: the run's start (its id, a
 * resume), and per round, as text or (with
 * --log-format json) as one JSON object per line, with the fields
 * docs/operations.md lists. A round of notifications (the result sent back,
 * which needs no reply) ends the round before it: the server logs it as
 * "after round N", and so does the client that receives it, so that both
 * name the same round.
 */
import type { RoundRecord, RoundReport } from '../federated/runtime/run.js';
import type { Protocol } from '../federated/runtime/roles.js';
import { SECURE_PREFIX } from '../federated/secure-aggregation/messages.js';
import type { SecureNoiseRecord } from '../federated/secure-aggregation/noise.js';
import type { OptionSpec } from './args.js';

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const logFormatOption: OptionSpec = {
  type: 'string',
  default: 'text',
  choices: LOG_FORMATS,
  help: 'the per-round log: text, or json (one object per line: docs/operations.md lists the fields)',
};

/** A number JSON can hold (NaN and infinities as null). */
const finite = (x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? null : x);

/** A round's metrics as JSON: typed arrays as arrays, non-finite numbers as null. */
function metricsJson(metrics: unknown): unknown {
  if (metrics === undefined) return undefined;
  return JSON.parse(
    JSON.stringify(metrics, (_k, v: unknown) => {
      if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>);
      if (v instanceof Map) return Object.fromEntries(v);
      return finite(v);
    }) ?? 'null',
  );
}

/** The server's record of a round as one JSON line's object. */
export function roundObject(r: RoundReport): Record<string, unknown> {
  return {
    event: 'round',
    round: r.round,
    kind: r.kind,
    notification: !r.replies,
    asked: r.asked,
    accepted: r.accepted,
    users: r.users,
    ...(r.secure ? { secure: r.secure } : {}),
    failures: r.failures.map((f) => ({ client: f.client, kind: f.kind, reason: f.reason, excluded: f.excluded })),
    excluded: r.excluded.map((e) => ({ client: e.client, reason: e.reason })),
    bytesUp: r.bytesUp,
    bytesDown: r.bytesDown,
    ms: r.ms,
    elapsed: r.elapsed,
    metrics: metricsJson(r.metrics),
    ...(r.otherRun ? { otherRun: r.otherRun } : {}),
    ...(r.interruptions?.length ? { interruptions: r.interruptions } : {}),
    ...(r.sidelined?.length ? { sidelined: r.sidelined } : {}),
    ...(r.reinstated?.length ? { reinstated: r.reinstated } : {}),
    ...(r.privacy ? { privacy: { ...r.privacy, ...(r.privacy.epsilon === undefined ? {} : { epsilon: finite(r.privacy.epsilon) }) } } : {}),
  };
}

/** What a round's line says about privacy: the epsilon spent so far at delta (with accounting), else the step declared ('' when neither). */
function privacyText(r: RoundRecord): string {
  const p = r.privacy;
  if (!p) return '';
  if (p.epsilon !== undefined) return `; epsilon ${Number.isFinite(p.epsilon) ? Number(p.epsilon.toPrecision(4)) : p.epsilon} spent (delta ${p.delta}${p.order === undefined ? '' : `, order ${p.order}`})`;
  const s = p.step;
  if (s?.mechanism === 'gaussian') return `; noise multiplier ${s.noiseMultiplier}, sampling rate ${Number(s.samplingRate.toPrecision(4))} (not accounted: no privacy.delta)`;
  return s ? `; ${s.mechanism} noise (not accounted: no privacy.delta)` : '';
}

/** A few of the round's metrics for the text log: a loss, a log-likelihood, the clipped count, a secure sum's quantization ridges, when the algorithm reports them. */
function metricsText(metrics: unknown): string {
  if (metrics === null || typeof metrics !== 'object') return '';
  const m = metrics as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of ['loss', 'logLikelihood', 'meanLogLikelihood', 'accuracy']) {
    const x = m[key];
    if (typeof x === 'number' && Number.isFinite(x)) parts.push(`${key} ${Number(x.toPrecision(6))}`);
  }
  if (typeof m.clipped === 'number') parts.push(`${m.clipped} clipped`);
  // a secure sum's quantization: ridges added to components' covariances, components whose count summed to 0
  if (Array.isArray(m.quantizationRidge) && m.quantizationRidge.length) {
    parts.push(`quantization ridge ${(m.quantizationRidge as { component: number; ridge: number }[]).map((r) => `${Number(r.ridge.toPrecision(3))} on component ${r.component}`).join(', ')}`);
  }
  if (Array.isArray(m.quantizationEmpty) && m.quantizationEmpty.length) parts.push(`component${m.quantizationEmpty.length === 1 ? '' : 's'} ${m.quantizationEmpty.join(', ')} summed to no rows (taken as empty)`);
  return parts.length ? `; ${parts.join(', ')}` : '';
}

/** The server's line for a round (`missedRounds`: the quorum's limit, named when a client leaves it). */
export function roundLine(r: RoundReport, format: LogFormat, missedRounds: number): string {
  if (format === 'json') return JSON.stringify(roundObject(r));
  if (!r.replies) return `after round ${r.round}: ${r.kind} sent to ${r.asked} client${r.asked === 1 ? '' : 's'} (no reply needed)${livenessNote(r, missedRounds)}${otherRunNote(r)}`;
  const failures = r.failures.length ? `; ${r.failures.map((f) => `${f.client} ${f.kind}${f.excluded ? ', excluded' : ''}`).join('; ')}` : '';
  if (r.secure) return `round ${r.round} (${r.kind}, secure aggregation): sum of ${r.secure.survivors}/${r.asked} clients (threshold ${r.secure.threshold}, ${r.secure.neighbours} neighbours, dropped ${Object.entries(r.secure.dropped).map(([s, n]) => `${n} at ${s}`).join(', ')}${r.secure.excluded ? `, ${r.secure.excluded} excluded for unreadable shares` : ''}${r.secure.ruledOut ? `, ${r.secure.ruledOut} ruled out for wrong shares` : ''}; error at most ${r.secure.bound.toExponential(2)}${secureNoiseText(r.secure.noise)})${failures}${livenessNote(r, missedRounds)}${otherRunNote(r)}${metricsText(r.metrics)}${privacyText(r)}`;
  return `round ${r.round} (${r.kind}): ${r.accepted}/${r.asked} accepted${failures}${livenessNote(r, missedRounds)}${otherRunNote(r)}${metricsText(r.metrics)}${privacyText(r)}`;
}

/** What a round's record says about outages and the quorum ('' when nothing). */
function livenessNote(r: RoundRecord, missedRounds: number): string {
  const parts = [
    ...(r.interruptions ?? []).map((i) => `repeated: ${i.reason} for ${i.seconds.toFixed(1)} s, ${i.resent} request${i.resent === 1 ? '' : 's'} sent again`),
    ...(r.sidelined?.length ? [`${r.sidelined.join(', ')} left the quorum (${missedRounds} missed rounds in a row)`] : []),
    ...(r.reinstated?.length ? [`${r.reinstated.join(', ')} back in the quorum`] : []),
  ];
  return parts.length ? `; ${parts.join('; ')}` : '';
}

/** What a round's line adds when it dropped replies of another run. */
function otherRunNote(r: RoundRecord): string {
  return r.otherRun ? `; ${r.otherRun} repl${r.otherRun === 1 ? 'y' : 'ies'} of another run dropped` : '';
}

/** The line a server logs when its run starts: its id, and whether it resumes (after which round, from where). */
export function startLine(run: { id: string; resumedAfter?: number; state?: string }): string {
  if (run.resumedAfter !== undefined) return `fedmix server: resuming run ${run.id} after round ${run.resumedAfter}${run.state ? ` (state: ${run.state})` : ''}`;
  return `fedmix server: run ${run.id}${run.state ? `, saved after every round to ${run.state}` : ''}`;
}

/**
 * The client's line for a request it handled. `round` is the request's; a
 * notification is sent as the round after the last one and ends it, so the
 * client names the round the server names.
 */
export function requestLine(id: string, protocol: Protocol, kind: string, round: number, format: LogFormat): string {
  // a secure round's stages (answered by the client host, not in the role's protocol) are requests of their round
  const notification = !kind.startsWith(SECURE_PREFIX) && protocol.exchanges.get(kind)?.reply === undefined;
  const r = notification ? round - 1 : round;
  if (format === 'json') return JSON.stringify({ event: 'request', client: id, kind, round: r, notification });
  return notification ? `received ${kind} after round ${r}` : `answered ${kind} of round ${r}`;
}

/** The client's last line, as JSON: how the run ended. */
export function endObject(id: string, r: { ok: boolean; reason?: string; answered: number }, out?: string): Record<string, unknown> {
  return { event: 'end', client: id, ok: r.ok, ...(r.reason !== undefined ? { reason: r.reason } : {}), answered: r.answered, ...(out ? { out } : {}) };
}

/** A noised secure round's shares and the noise of its released sum (distributed DP). */
function secureNoiseText(noise: SecureNoiseRecord | undefined): string {
  if (!noise) return '';
  return `; Skellam noise: mu ${noise.skellamMu.toPrecision(4)} per client, standard deviation ${noise.stddev.toPrecision(4)} per value (noise multiplier ${noise.noiseMultiplier})`;
}
