/**
 * What every `--data FILE` of the CLI reads: CSV (streamed through Papa Parse,
 * so the file's text is never held whole, and its cells held as numbers, not
 * strings), Arrow IPC (file or stream format: .arrow, .feather v2, .arrows) or
 * Parquet (through parquet-wasm, imported only when a Parquet file is read).
 * The format is told by the file's first bytes, not its name. Every format
 * becomes the same CellTable, which the commands read as they read CSV; a file
 * with no data rows is refused here, naming it, for every command.
 */
import { closeSync, createReadStream, openSync, readFileSync, readSync } from 'node:fs';
import { Transform } from 'node:stream';
import Papa from 'papaparse';
import type { Table } from 'apache-arrow';
import { tableFromBytes, vectorToArray } from '../data/arrow.js';
import { loadArrow } from '../data/arrow-library.js';
import { CellTable, CellTableBuilder, csvDelimiter, papaConfig } from '../data/csv.js';
import { InvalidDataError } from '../errors.js';
import { MAX_VALUES } from '../validate.js';
import type { OptionSpec, Options } from './args.js';

/** Declared once; main.ts gives it to every command that has --data. */
export const delimiterOption: OptionSpec = { type: 'string', help: 'CSV: the field separator (default ","; "tab" for tabs); Arrow and Parquet files need none' };

/** A file the command cannot read (missing, a folder, no permission, a reader not installed): status 1, one line. */
export class UnreadableFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableFileError';
  }
}

export type DataFormat = 'csv' | 'arrow' | 'parquet';

/** The format of a file from its first bytes: "PAR1" opens Parquet, "ARROW1" an Arrow IPC file, 0xFFFFFFFF an IPC stream. */
export function sniffFormat(path: string): DataFormat {
  let fd: number | undefined;
  const head = new Uint8Array(8);
  let n: number;
  try {
    fd = openSync(path, 'r');
    n = readSync(fd, head, 0, 8, 0);
  } catch (e) {
    throw unreadable(path, e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const text = String.fromCharCode(...head.subarray(0, n));
  if (text.startsWith('PAR1')) return 'parquet';
  if (text.startsWith('ARROW1')) return 'arrow';
  if (n >= 4 && head[0] === 0xff && head[1] === 0xff && head[2] === 0xff && head[3] === 0xff) return 'arrow';
  if (text.startsWith('FEA1')) throw new InvalidDataError(`${path} is a Feather version 1 file; fedmix reads Feather version 2 (Arrow IPC): write it again with a current Arrow`);
  return 'csv';
}

const WHY: Record<string, string> = { ENOENT: 'no such file or directory', EISDIR: 'a folder, not a file', ENOTDIR: 'a path through something that is not a folder', EACCES: 'permission denied', EPERM: 'permission denied' };

/** A file system error as one line naming the file (`path`, or the one the error names); undefined for any other error. */
export function fileError(e: unknown, path?: string): UnreadableFileError | undefined {
  const err = e as { code?: unknown; path?: unknown; message?: unknown } | null;
  const code = err?.code;
  const file = path ?? (typeof err?.path === 'string' ? err.path : undefined);
  if (!(e instanceof Error) || typeof code !== 'string' || !/^E[A-Z]+$/.test(code) || file === undefined) return undefined;
  return new UnreadableFileError(`${file}: ${WHY[code] ?? e.message.split('\n')[0]}`);
}

function unreadable(path: string, e: unknown): unknown {
  return fileError(e, path) ?? e;
}

/**
 * The text of a stream in pieces that end at a line end: Papa Parse parses the
 * unfinished last line of a piece again with each piece that follows, which
 * for a line of megabytes (7 MB at 1,000,000 columns) and Node's 64 KiB pieces
 * cost 110 parses of the line. A piece without a line end is held (kept as
 * pieces, joined once) until one comes. A line end inside a quoted field may
 * still end a piece: Papa Parse then carries that line over, as before.
 */
export function lineChunks(): Transform {
  let held: string[] = [];
  return new Transform({
    decodeStrings: false,
    readableObjectMode: true,
    transform(chunk: string, _encoding, done) {
      const end = Math.max(chunk.lastIndexOf('\n'), chunk.lastIndexOf('\r')) + 1;
      if (end === 0) held.push(chunk);
      else {
        held.push(chunk.slice(0, end));
        this.push(held.join(''));
        held = end < chunk.length ? [chunk.slice(end)] : [];
      }
      done();
    },
    flush(done) {
      if (held.length) this.push(held.join(''));
      done();
    },
  });
}

/** A CSV file streamed through Papa Parse into a CellTable. */
export function readCsvFile(path: string, delimiter = ','): Promise<CellTable> {
  const builder = new CellTableBuilder();
  return new Promise((resolve, reject) => {
    const stream = createReadStream(path, { encoding: 'utf8' });
    stream.on('error', (e) => reject(unreadable(path, e)));
    const lines = stream.pipe(lineChunks());
    Papa.parse<string[]>(lines as unknown as File, {
      ...papaConfig(delimiter),
      step: builder.step,
      complete: () => {
        stream.destroy();
        lines.destroy();
        const failure = builder.failure;
        if (failure !== undefined) reject(failure instanceof InvalidDataError ? new InvalidDataError(`${path}: ${failure.message}`) : failure);
        else {
          try {
            resolve(builder.finish());
          } catch (e) {
            reject(e instanceof InvalidDataError ? new InvalidDataError(`${path}: ${e.message}`) : e);
          }
        }
      },
      error: (e: Error) => reject(unreadable(path, e)),
    });
  });
}

/** parquet-wasm, imported when the first Parquet file is read (its 2 MB of WebAssembly otherwise never load). */
async function parquetToIpc(path: string, bytes: Uint8Array): Promise<Uint8Array> {
  let pq: typeof import('parquet-wasm');
  try {
    pq = await import('parquet-wasm');
  } catch {
    throw new UnreadableFileError(`${path}: reading Parquet needs the parquet-wasm package (npm install parquet-wasm)`);
  }
  try {
    return pq.readParquet(bytes).intoIPCStream();
  } catch (e) {
    throw new InvalidDataError(`${path} could not be read as Parquet (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** An Arrow table's cells: numbers as they are, strings and dictionary values as CSV cells are read. */
function arrowCells(table: Table, path: string): CellTable {
  const names = table.schema.fields.map((f) => f.name);
  const columns = names.map((name, j) => vectorToArray(`${path}, column "${name}"`, table.getChildAt(j)!, MAX_VALUES));
  const cells = new CellTable(names);
  const row = new Array<unknown>(names.length);
  for (let i = 0; i < table.numRows; i++) {
    for (let j = 0; j < row.length; j++) row[j] = columns[j]![i];
    cells.addValues(row);
  }
  return cells;
}

/** The table of `--data FILE` (CSV with --delimiter, Arrow IPC or Parquet), with at least one data row. */
export async function readDataFile(path: string, o: Options = {}): Promise<CellTable> {
  const delimiter = csvDelimiter(o.delimiter);
  const format = sniffFormat(path);
  const table = format === 'csv' ? await readCsvFile(path, delimiter) : arrowCells(tableFromBytes(await arrowBytes(path, format), path), path);
  // no command has anything to do without rows, and each would say so in its own, less direct, words
  return table.requireRows(path);
}

/** An Arrow or Parquet file's bytes as Arrow IPC. */
async function arrowBytes(path: string, format: 'arrow' | 'parquet'): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw unreadable(path, e);
  }
  // apache-arrow reads the IPC bytes: loaded here, only for an Arrow or Parquet file
  await loadArrow();
  return format === 'parquet' ? parquetToIpc(path, bytes) : bytes;
}
