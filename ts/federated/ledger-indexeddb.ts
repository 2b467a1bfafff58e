/**
 * A client's privacy ledger in IndexedDB (browsers, and their Web Workers):
 * one record per ledger, keyed by its name, in the object store "ledgers" of
 * one database (default "fedmix-privacy"). Every spend is one readwrite
 * transaction that reads the record, composes the step and writes it back,
 * so that two tabs of one origin spending from one ledger are serialized by
 * the browser and cannot both spend the last of it. A record that is not a
 * ledger (edited in the developer tools) is refused with an
 * InvalidParameterError, never taken for an empty one.
 */
import { keepClassName } from '../class-name.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import type { LedgerStore, SavedLedger } from './runtime/client-budget.js';

const OBJECT_STORE = 'ledgers';

/** The IndexedDB this platform has, or an InvalidParameterError saying there is none. */
function indexedDb(): IDBFactory {
  const idb = (globalThis as { indexedDB?: IDBFactory }).indexedDB;
  if (idb === undefined) throw new InvalidParameterError('this platform has no IndexedDB: keep the ledger in a file (fedmix/node FileLedgerStore) or give a LedgerStore of your own');
  return idb;
}

export class IndexedDbLedgerStore implements LedgerStore {
  static {
    keepClassName(this, 'IndexedDbLedgerStore');
  }

  readonly description: string;
  private db: Promise<IDBDatabase> | undefined;

  /** The ledger `name` (e.g. the client's id and federation) in the database `database`. */
  constructor(
    readonly name: string,
    readonly database = 'fedmix-privacy',
  ) {
    if (typeof name !== 'string' || name.length === 0) throw new InvalidParameterError(`a ledger needs a name (a non-empty string), got ${formatValue(name)}`);
    if (typeof database !== 'string' || database.length === 0) throw new InvalidParameterError(`database must be a non-empty string, got ${formatValue(database)}`);
    this.description = `the IndexedDB ledger ${JSON.stringify(name)} (database ${JSON.stringify(database)})`;
  }

  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDb().open(this.database, 1);
      request.onupgradeneeded = () => {
        if (!request.result.objectStoreNames.contains(OBJECT_STORE)) request.result.createObjectStore(OBJECT_STORE);
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(new InvalidParameterError(`${this.description} could not be opened: ${request.error?.message ?? 'unknown error'}`));
      request.onblocked = () => reject(new InvalidParameterError(`${this.description} could not be opened: another page holds an older version of the database open`));
    }).catch((e: unknown) => {
      this.db = undefined;
      throw e;
    });
    return this.db;
  }

  async update(change: (saved: unknown) => SavedLedger | undefined): Promise<void> {
    if (typeof change !== 'function') throw new InvalidParameterError(`update takes a function from the saved ledger to the next, got ${formatValue(change)}`);
    const db = await this.open();
    await new Promise<void>((resolve, reject) => {
      let failed: unknown;
      const tx = db.transaction(OBJECT_STORE, 'readwrite');
      const store = tx.objectStore(OBJECT_STORE);
      const read = store.get(this.name);
      read.onsuccess = () => {
        try {
          // composed within the transaction (no await between the read and the write): nothing else spends meanwhile
          const next = change(read.result === undefined ? undefined : read.result);
          if (next !== undefined) store.put(JSON.parse(JSON.stringify(next)), this.name);
        } catch (e) {
          failed = e;
          tx.abort();
        }
      };
      tx.oncomplete = () => resolve();
      tx.onabort = () => reject(failed ?? new InvalidParameterError(`${this.description}: the transaction was aborted (${tx.error?.message ?? 'no reason given'}); nothing was spent`));
    });
  }

  /** Closes the database connection (a later update opens it again). */
  async close(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    if (db) (await db).close();
  }
}
