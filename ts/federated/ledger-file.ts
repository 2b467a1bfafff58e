/**
 * A client's privacy ledger in a file (Node): the JSON of SavedLedger with a
 * SHA-256 digest of the rest, as a server's state file has one
 * (state-dir.ts), rewritten atomically (atomic-write.ts) on every spend. A
 * file cut short, damaged or edited is refused with an InvalidParameterError
 * naming it, never taken for an empty ledger; a missing file is a new one.
 * One client process per file: the ledger's spends are serialized within a
 * process, not across processes.
 */
import { readFile } from 'node:fs/promises';
import { formatValue, InvalidParameterError } from '../errors.js';
import { writeFileAtomic } from '../atomic-write.js';
import { damagedLedger, type LedgerStore, type SavedLedger } from './runtime/client-budget.js';
import { keepClassName } from '../class-name.js';
import { digestOf } from './state-dir.js';

export class FileLedgerStore implements LedgerStore {
  static {
    keepClassName(this, 'FileLedgerStore');
  }

  readonly description: string;

  constructor(readonly path: string) {
    if (typeof path !== 'string' || path.length === 0) throw new InvalidParameterError(`a ledger file must be a path, got ${formatValue(path)}`);
    this.description = path;
  }

  async update(change: (saved: unknown) => SavedLedger | undefined): Promise<void> {
    if (typeof change !== 'function') throw new InvalidParameterError(`update takes a function from the saved ledger to the next, got ${formatValue(change)}`);
    let text: string | undefined;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'ENOENT') throw e;
    }
    const next = change(text === undefined ? undefined : this.read(text));
    if (next === undefined) return;
    const body = JSON.stringify(next);
    await writeFileAtomic(this.path, `${body.slice(0, -1)},"digest":${JSON.stringify(digestOf(body))}}\n`, { mode: 0o600 });
  }

  /** The file's ledger, its digest checked (the rest is read by the ledger itself). */
  private read(text: string): unknown {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw damagedLedger(this.path, text.length === 0 ? 'it is empty' : 'it is not JSON (cut short?)');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw damagedLedger(this.path, `it is ${formatValue(parsed)}, not an object`);
    const { digest, ...rest } = parsed as { digest?: unknown };
    if (typeof digest !== 'string' || digest !== digestOf(JSON.stringify(rest))) throw damagedLedger(this.path, 'its digest does not match its content');
    return rest;
  }
}
