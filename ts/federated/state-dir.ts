/**
 * A server's state directory (`fedmix server --state DIR`, serve()'s
 * `state`): the run's checkpoint after every complete round, so that a server
 * restarted with the same directory after a crash or a SIGKILL resumes after
 * the last complete round, with the same run id (Node).
 *
 * One file, DIR/server-state.json, rewritten atomically (atomic-write.ts):
 *   format, version   'fedmix.ServerState', 1
 *   algorithm, federation, clients, options   what the run is: a server
 *       started on this directory with anything else is refused, naming it
 *   run               the run's id
 *   started           when the run started (ISO 8601)
 *   checkpoint        the last complete round's (saveCheckpoint), or null before the first
 *   finished          null while the run goes on; then when it ended, after how many rounds
 *   digest            SHA-256 of the rest, so that a file damaged or edited is refused
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatValue, InvalidParameterError } from '../errors.js';
import { writeFileAtomic } from '../atomic-write.js';
import type { SavedRunCheckpoint } from './runtime/checkpoint.js';
import { isRunId } from './messages/envelope.js';

export const STATE_FILE = 'server-state.json';
const FORMAT = 'fedmix.ServerState';
const VERSION = 1;

/** What a run is: a state directory belongs to one. */
export interface RunIdentity {
  algorithm: string;
  federation: string;
  /** the client ids allowed, in order (the order of sums and of per-client seeds) */
  clients: readonly string[];
  /** the server role's options as given */
  options: unknown;
}

interface StateFile {
  format: typeof FORMAT;
  version: typeof VERSION;
  algorithm: string;
  federation: string;
  clients: string[];
  options: unknown;
  run: string;
  started: string;
  checkpoint: SavedRunCheckpoint | null;
  finished: { at: string; rounds: number; stoppedEarly?: string } | null;
}

/** JSON with object keys sorted: two option objects that say the same compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]])) : ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v,
  );
}

/** SHA-256 of `text`, as hex: what a state file (and a client's ledger file, ledger-file.ts) carries to be refused when damaged or edited. */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The first option whose value differs (dotted path), for the refusal's message. */
function firstDifference(a: unknown, b: unknown, path = 'options'): string {
  if (canonical(a) === canonical(b)) return '';
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  const show = (x: unknown) => (x === undefined ? 'not set' : canonical(x).slice(0, 120));
  return `${path} is ${show(a)} there and ${show(b)} here`;
}

/** The state file's text read back and checked: an InvalidParameterError naming what is wrong. */
function readState(path: string, text: string): StateFile {
  const bad = (why: string) => new InvalidParameterError(`${path} is not a usable server state: ${why}; it was damaged or edited (restore it from a backup, or start the run again in an empty directory)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad(text.length === 0 ? 'it is empty' : 'it is not JSON (cut short?)');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad(`it is ${formatValue(parsed)}, not an object`);
  const { digest, ...rest } = parsed as StateFile & { digest?: unknown };
  if (rest.format !== FORMAT) throw bad(`its format is ${formatValue(rest.format)}, not ${JSON.stringify(FORMAT)}`);
  if (rest.version !== VERSION) throw bad(`its version is ${formatValue(rest.version)}; this fedmix reads version ${VERSION}`);
  if (typeof digest !== 'string' || digest !== digestOf(JSON.stringify(rest))) throw bad('its digest does not match its content');
  if (typeof rest.algorithm !== 'string' || typeof rest.federation !== 'string' || !Array.isArray(rest.clients) || rest.clients.some((c) => typeof c !== 'string')) throw bad('its algorithm, federation or clients are missing');
  if (!isRunId(rest.run)) throw bad(`its run id is ${formatValue(rest.run)}`);
  if (rest.checkpoint !== null && (typeof rest.checkpoint !== 'object' || Array.isArray(rest.checkpoint))) throw bad('its checkpoint is not an object');
  if (rest.finished !== null && (typeof rest.finished !== 'object' || typeof rest.finished.at !== 'string' || !Number.isSafeInteger(rest.finished.rounds))) throw bad('its "finished" is malformed');
  return rest;
}

/**
 * A server's state directory, opened for a run: the checkpoint to resume
 * from (when the directory holds one of this run), and where to save the
 * next ones.
 */
/**
 * A crash drill for operators and tests: with FEDMIX_CRASH_AFTER_CHECKPOINT=N
 * in its environment, a server kills itself (SIGKILL, as the kernel's OOM
 * killer or a power cut would end it) as soon as the checkpoint of round N is
 * durable, before anything else happens: the one moment an outside kill
 * cannot be timed to in a run of a single round.
 */
function crashDrill(round: number): void {
  const at = process.env.FEDMIX_CRASH_AFTER_CHECKPOINT;
  if (at !== undefined && Number(at) === round) process.kill(process.pid, 'SIGKILL');
}

export class StateDirectory {
  private constructor(
    /** the state file */
    readonly path: string,
    private state: StateFile,
  ) {}

  /** the run's id: the saved run's when resuming, else a fresh one */
  get run(): string {
    return this.state.run;
  }

  /** the checkpoint to resume from (undefined: the run starts at round 1) */
  get checkpoint(): SavedRunCheckpoint | undefined {
    return this.state.checkpoint ?? undefined;
  }

  /**
   * Opens (creating it when missing) the state directory of a run: an
   * InvalidParameterError when it holds the state of another run (another
   * algorithm, federation, client list or server options: named), of a run
   * that has finished, or a state file that was damaged or edited.
   */
  static open(dir: string, identity: RunIdentity): StateDirectory {
    if (typeof dir !== 'string' || dir.length === 0) throw new InvalidParameterError(`state must be a directory (a path), got ${formatValue(dir)}`);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, STATE_FILE);
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'ENOENT') throw e;
    }
    const options = JSON.parse(canonical(identity.options ?? {})) as unknown;
    const fresh = (): StateFile => ({
      format: FORMAT, version: VERSION, algorithm: identity.algorithm, federation: identity.federation, clients: [...identity.clients], options,
      run: randomBytes(16).toString('hex'), started: new Date().toISOString(), checkpoint: null, finished: null,
    });
    // nothing is written before the first complete round: a server that fails to start leaves the directory as it was
    if (text === undefined) return new StateDirectory(path, fresh());
    const saved = readState(path, text);
    const other = (what: string) => new InvalidParameterError(`${path} holds the state of another run (${what}); give this run another --state directory, or remove that one to start over`);
    if (saved.algorithm !== identity.algorithm) throw other(`algorithm ${saved.algorithm}, not ${identity.algorithm}`);
    if (saved.federation !== identity.federation) throw other(`federation ${JSON.stringify(saved.federation)}, not ${JSON.stringify(identity.federation)}`);
    if (saved.clients.join('\n') !== identity.clients.join('\n')) throw other(`clients ${saved.clients.join(', ')}, not ${identity.clients.join(', ')}`);
    const difference = firstDifference(saved.options, options);
    if (difference) throw other(difference);
    if (saved.finished) {
      throw new InvalidParameterError(
        `${path}: run ${saved.run} finished at ${saved.finished.at} after ${saved.finished.rounds} rounds${saved.finished.stoppedEarly ? ` (stopped early: ${saved.finished.stoppedEarly})` : ''}; there is nothing to resume. Give a new run another --state directory, or remove this one`,
      );
    }
    if (saved.checkpoint !== null && saved.checkpoint.algorithm !== identity.algorithm) throw other(`a checkpoint of ${formatValue(saved.checkpoint.algorithm)}`);
    // killed before its first complete round: nothing to resume, a new run (with a new id) starts
    return new StateDirectory(path, saved.checkpoint === null ? fresh() : saved);
  }

  /** Saves the checkpoint of the last complete round (atomically: the previous one stays until this one is whole). */
  async save(checkpoint: SavedRunCheckpoint): Promise<void> {
    this.state = { ...this.state, checkpoint };
    await this.write();
    crashDrill(checkpoint.round);
  }

  /** Marks the run finished (after the last checkpoint's round; `stoppedEarly`: why it stopped before the server was done): the directory then refuses to start it again. */
  async finish(stoppedEarly?: string): Promise<void> {
    const rounds = this.state.checkpoint?.round ?? 0;
    this.state = { ...this.state, finished: { at: new Date().toISOString(), rounds, ...(stoppedEarly ? { stoppedEarly } : {}) } };
    await this.write();
  }

  private async write(): Promise<void> {
    const body = JSON.stringify(this.state);
    const text = `${body.slice(0, -1)},"digest":${JSON.stringify(digestOf(body))}}\n`;
    await writeFileAtomic(this.path, text, { mode: 0o600 });
  }
}
