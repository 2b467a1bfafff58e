/**
 * Fashion-MNIST (Xiao, Rasul, Vollgraf 2017): 70,000 28 x 28 grayscale
 * images of Zalando's articles in ten classes, 60,000 for training and
 * 10,000 for testing, in the IDX files the dataset ships (gzip-compressed).
 * The community-detection paper's dataset and the networks' real input.
 *
 * This module runs anywhere: `fashionMnist()` takes the four files' bytes or
 * URLs (fetched, and gunzipped with DecompressionStream). `loadFashionMnist()`
 * in fashion-mnist-node.ts (fedmix/node) reads them from a folder, by default
 * where Debian's `dataset-fashion-mnist` installs them. Both check every
 * header and length before trusting a byte, and end in `buildFashionMnist`.
 */
import { formatThrown, formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { Rng } from '../../random.js';
import { guardRead, MAX_VALUES, readOptions, readRecord, requireInteger, requireOneOf } from '../../validate.js';
import { apportion } from '../apportion.js';
import { Matrix } from '../matrix.js';

/** The ten classes, by label (the dataset's README). */
export const FASHION_MNIST_CLASSES: readonly string[] = Object.freeze([
  'T-shirt/top',
  'Trouser',
  'Pullover',
  'Dress',
  'Coat',
  'Sandal',
  'Shirt',
  'Sneaker',
  'Bag',
  'Ankle boot',
]);

export type FashionMnistSplit = 'train' | 'test';
export const FASHION_MNIST_SPLITS: readonly FashionMnistSplit[] = Object.freeze(['train', 'test'] as const);

/** The files of each split, as the dataset (and Debian's package) names them. */
export const FASHION_MNIST_FILES: Readonly<Record<FashionMnistSplit, Readonly<{ images: string; labels: string }>>> = Object.freeze({
  train: Object.freeze({ images: 'train-images-idx3-ubyte.gz', labels: 'train-labels-idx1-ubyte.gz' }),
  test: Object.freeze({ images: 't10k-images-idx3-ubyte.gz', labels: 't10k-labels-idx1-ubyte.gz' }),
});

/** Image side in pixels; a row of X holds SIDE * SIDE = 784 pixels, row by row. */
const SIDE = 28;
const PIXELS = SIDE * SIDE;

/**
 * Most bytes one file may decompress to: a header and as many images as one
 * Matrix can hold (LIMITS.values pixels). Past it, decompression stops.
 */
export const MAX_IDX_BYTES = 16 + Math.floor(MAX_VALUES / PIXELS) * PIXELS;

export interface FashionMnistOptions {
  /** 'train' (60,000 rows, the default) or 'test' (10,000) */
  split?: FashionMnistSplit;
  /** rows to return (default: all of the split) */
  n?: number;
  /**
   * 'first' (the default): the split's first n rows. 'stratified': n rows
   * drawn without replacement so that each class has its share of them
   * (largest remainders, so 1,000 of the 60,000 training rows are 100 per
   * class), returned in file order; drawn with the core's Rng (call
   * `await init()` first).
   */
  sample?: 'first' | 'stratified';
  /** seed of the stratified sample (without one, each call draws other rows) */
  seed?: number;
}

export interface FashionMnist {
  /** n x 784 pixels in [0, 1], each image row by row: byte / 255 in float32, as torchvision's ToTensor() gives them */
  X: Matrix;
  /** the class of each row, 0..9 (FASHION_MNIST_CLASSES[label] names it) */
  labels: Int32Array;
  /** the ten class names, by label */
  classNames: string[];
  /** which split the rows come from */
  split: FashionMnistSplit;
  /** the rows' positions in the split's files, ascending */
  indices: Int32Array;
}

/** The two files of a split: bytes (gzip-compressed or plain IDX), or where to fetch them. */
export type FashionMnistFile = ArrayBuffer | ArrayBufferView | string | URL;

/**
 * A folder to fetch the split's files from (a URL or a string URL, resolved
 * against the page in browsers), or the two files of the split.
 */
export type FashionMnistSource = string | URL | { images: FashionMnistFile; labels: FashionMnistFile };

/** The options, read once and checked before any file is read. */
export interface CheckedFashionMnistOptions {
  split: FashionMnistSplit;
  n: number | undefined;
  sample: 'first' | 'stratified';
  seed: number | undefined;
}

/**
 * The common options, read once (with the `extra` keys a loader adds, returned
 * as given) and checked before any file is read.
 */
export function readFashionMnistOptions(given: unknown, extra: readonly string[] = []): { options: CheckedFashionMnistOptions; extra: Record<string, unknown> } {
  const o = readOptions(given as Record<string, unknown> | undefined, ['split', 'n', 'sample', 'seed', ...extra]);
  const split = requireOneOf('split', o.split ?? 'train', FASHION_MNIST_SPLITS);
  const n = o.n === undefined ? undefined : requireInteger('n', o.n, 1, Math.floor(MAX_VALUES / PIXELS));
  const sample = requireOneOf('sample', o.sample ?? 'first', ['first', 'stratified'] as const);
  const seed = o.seed === undefined ? undefined : requireInteger('seed', o.seed, 0);
  return { options: { split, n, sample, seed }, extra: Object.fromEntries(extra.map((k) => [k, o[k]])) };
}

/**
 * A Fashion-MNIST split from its two files, in any JavaScript runtime.
 *
 * ```ts
 * await init();
 * // the folder that holds the four .gz files, served over HTTP
 * const { X, labels, classNames } = await fashionMnist('/data/fashion-mnist/', { split: 'test' });
 * // or the files' bytes (gzip-compressed or not), e.g. from a file input or IndexedDB
 * const train = await fashionMnist({ images: imagesBytes, labels: labelsBytes }, { n: 6000, sample: 'stratified', seed: 1 });
 * ```
 *
 * A file that is not what it should be (not gzip or IDX, truncated, a wrong
 * magic number or image size, images and labels that do not pair up, a
 * label outside 0..9) is an InvalidDataError naming the file and what is
 * wrong with it; so is a URL that cannot be fetched.
 */
export async function fashionMnist(source: FashionMnistSource, options?: FashionMnistOptions): Promise<FashionMnist> {
  const { options: o } = readFashionMnistOptions(options);
  const files = readSource(source, o.split);
  const [images, labels] = await Promise.all([fileBytes(files.images), fileBytes(files.labels)]);
  return buildFashionMnist({ bytes: images, name: files.images.name }, { bytes: labels, name: files.labels.name }, o);
}

interface SourceFile {
  /** how messages name the file: its URL, or the split's file name for bytes */
  name: string;
  /** bytes given (a private copy) or the URL to fetch */
  bytes?: Uint8Array;
  url?: URL;
}

/** A file's path or URL as messages show it: at most 200 characters. */
export function shownName(name: string): string {
  return name.length <= 200 ? name : `${name.slice(0, 199)}…`;
}

function readSource(source: unknown, split: FashionMnistSplit): { images: SourceFile; labels: SourceFile } {
  const names = FASHION_MNIST_FILES[split];
  if (typeof source === 'string' || isUrl(source)) {
    const base = folderUrl(source);
    return {
      images: { name: shownName(new URL(names.images, base).href), url: new URL(names.images, base) },
      labels: { name: shownName(new URL(names.labels, base).href), url: new URL(names.labels, base) },
    };
  }
  if (source === null || typeof source !== 'object') {
    throw new InvalidParameterError(`source must be a folder URL or { images, labels } (bytes or URLs), got ${formatValue(source)}`);
  }
  const s = readRecord(source as { images: unknown; labels: unknown }, ['images', 'labels'], 'source');
  return { images: readFile('source.images', s.images, names.images), labels: readFile('source.labels', s.labels, names.labels) };
}

function readFile(what: string, value: unknown, name: string): SourceFile {
  // instanceof runs a Proxy's getPrototypeOf trap, and slice() throws on a detached buffer
  if (guardRead(what, () => value instanceof ArrayBuffer)) return { name, bytes: new Uint8Array(guardRead(what, () => (value as ArrayBuffer).slice(0))) };
  if (ArrayBuffer.isView(value)) {
    // a real view (isView is false for a Proxy); the copy is ours, so the caller cannot change it under the parser
    const v = value as ArrayBufferView;
    if (!(v.buffer instanceof ArrayBuffer)) throw new InvalidParameterError(`${what} must be in an ArrayBuffer (copy a SharedArrayBuffer's bytes out first)`);
    return { name, bytes: new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice() };
  }
  if (typeof value === 'string' || isUrl(value)) {
    const url = resolveUrl(what, value);
    return { name: shownName(url.href), url };
  }
  throw new InvalidParameterError(`${what} must be the file's bytes (an ArrayBuffer or a Uint8Array) or its URL, got ${formatValue(value)}`);
}

function isUrl(x: unknown): x is URL {
  return typeof URL === 'function' && guardRead('source', () => x instanceof URL);
}

/** The page's URL in a browser, to resolve relative URLs against; undefined in Node. */
function pageUrl(): string | undefined {
  const href = (globalThis as { location?: { href?: unknown } }).location?.href;
  return typeof href === 'string' ? href : undefined;
}

function resolveUrl(what: string, value: string | URL): URL {
  const text = typeof value === 'string' ? value : guardRead(what, () => value.href);
  try {
    return new URL(text, pageUrl());
  } catch {
    throw new InvalidParameterError(`${what} is not a URL that can be fetched: ${formatValue(text)} (pass an absolute URL, or bytes)`);
  }
}

/** The folder's URL with a trailing slash, so that file names resolve inside it. */
function folderUrl(value: string | URL): URL {
  const url = resolveUrl('source', value);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

async function fileBytes(file: SourceFile): Promise<Uint8Array> {
  const raw = file.bytes ?? (await fetchBytes(file.url!, file.name));
  return isGzip(raw) ? gunzipWeb(raw, file.name) : raw;
}

async function fetchBytes(url: URL, name: string): Promise<Uint8Array> {
  if (typeof fetch !== 'function') throw new InvalidParameterError(`this platform has no fetch() to get ${name} with; pass the file's bytes instead`);
  let response: Response;
  try {
    response = await fetch(url);
  } catch (e) {
    // Node's fetch says "fetch failed" and puts the reason (a refused connection, an unknown host) in cause
    const reason = e instanceof Error ? (e as { cause?: unknown }).cause : undefined;
    const cause = reason !== undefined ? ` (${formatThrown(reason)})` : '';
    throw new InvalidDataError(`could not fetch ${name}: ${formatThrown(e)}${cause}`);
  }
  if (!response.ok) throw new InvalidDataError(`could not fetch ${name}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
  if (response.body === null) return new Uint8Array(0);
  return readStream(response.body, `${name} is`, (e) => `could not fetch ${name}: ${formatThrown(e)}`);
}

/** Whether the bytes start with gzip's magic number (1f 8b); an IDX file starts with two zero bytes. */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Gunzipped with the platform's DecompressionStream, stopping past MAX_IDX_BYTES. */
async function gunzipWeb(gz: Uint8Array, name: string): Promise<Uint8Array> {
  if (typeof DecompressionStream !== 'function' || typeof Blob !== 'function') {
    throw new InvalidParameterError(`this platform has no DecompressionStream to gunzip ${name} with; pass the decompressed IDX bytes instead`);
  }
  // gz is our own copy, in an ArrayBuffer (never a SharedArrayBuffer)
  const stream = new Blob([gz as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
  return readStream(stream, `${name} decompresses to`, (e) => `${name} is not a valid gzip file (${formatThrown(e)}): truncated or corrupt; get it again`);
}

/**
 * A stream's bytes, at most MAX_IDX_BYTES of them (`what` says whose, for the
 * message); what the stream throws becomes an InvalidDataError told by `broken`.
 */
async function readStream(stream: ReadableStream<Uint8Array>, what: string, broken: (e: unknown) => string): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_IDX_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw new InvalidDataError(`${what} more than ${MAX_IDX_BYTES} bytes, more than a Matrix of 784 columns can hold: not a Fashion-MNIST file`);
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof InvalidDataError) throw e;
    throw new InvalidDataError(broken(e));
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** A parsed IDX file of unsigned bytes: its dimensions and its data (a view into the file's bytes). */
interface Idx {
  dims: number[];
  data: Uint8Array;
}

const IDX_UBYTE = 0x08;

/**
 * The IDX format (LeCun and Cortes' MNIST page): two zero bytes, a type byte
 * (0x08: unsigned bytes), the number of dimensions, each dimension as a
 * big-endian 32-bit integer, then the values, row-major. Everything is
 * checked: the magic number (0x00000803 for images, 0x00000801 for labels),
 * the header's length and the data's length against the dimensions, exactly.
 */
function parseIdx(bytes: Uint8Array, name: string, kind: 'images' | 'labels'): Idx {
  const ndims = kind === 'images' ? 3 : 1;
  const magic = (IDX_UBYTE << 8) | ndims;
  const hex = (m: number) => `0x${(m >>> 0).toString(16).padStart(8, '0')}`;
  if (bytes.length < 4) throw new InvalidDataError(`${name} is truncated: ${bytes.length} byte(s), where an IDX header alone has ${4 + 4 * ndims}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const got = view.getUint32(0);
  if (got !== magic) {
    const swapped = got === ((IDX_UBYTE << 8) | (kind === 'images' ? 1 : 3));
    const other = kind === 'images' ? 'labels' : 'images';
    throw new InvalidDataError(
      `${name} has magic number ${hex(got)}, not ${hex(magic)} (an IDX file of unsigned bytes with ${ndims} dimension${ndims > 1 ? 's' : ''}, as Fashion-MNIST's ${kind})` +
        (swapped ? `: it is a file of ${other}; are the images and labels files swapped?` : ': not an IDX file of this kind, or corrupt'),
    );
  }
  const header = 4 + 4 * ndims;
  if (bytes.length < header) throw new InvalidDataError(`${name} is truncated: ${bytes.length} bytes, where its IDX header alone has ${header}`);
  const dims = Array.from({ length: ndims }, (_, k) => view.getUint32(4 + 4 * k));
  const count = dims[0]!;
  if (count === 0) throw new InvalidDataError(`${name} declares 0 ${kind}: an empty file of ${kind}`);
  if (kind === 'images' && (dims[1] !== SIDE || dims[2] !== SIDE)) {
    throw new InvalidDataError(`${name} holds ${dims[1]} x ${dims[2]} images; Fashion-MNIST's are ${SIDE} x ${SIDE}`);
  }
  const each = kind === 'images' ? PIXELS : 1;
  const expected = header + count * each;
  if (expected > MAX_IDX_BYTES) {
    throw new InvalidDataError(`${name} declares ${count} ${kind}, more than a Matrix can hold (${Math.floor(MAX_VALUES / PIXELS)} rows of 784 pixels)`);
  }
  if (bytes.length < expected) {
    throw new InvalidDataError(`${name} is truncated: its header declares ${count} ${kind} (${expected} bytes) but it holds ${bytes.length} bytes`);
  }
  if (bytes.length > expected) {
    throw new InvalidDataError(`${name} has ${bytes.length - expected} byte(s) after the ${count} ${kind} its header declares (${expected} bytes): corrupt, or not this file`);
  }
  return { dims, data: bytes.subarray(header) };
}

/** byte / 255 as torchvision's ToTensor() computes it (float32 division), for every byte. */
const SCALE = Float64Array.from({ length: 256 }, (_, b) => Math.fround(b / 255));

/** Rows per block of the transposition into column-major: a block's source rows (50 KB) stay in cache. */
const BLOCK = 64;

/**
 * The dataset from the two decompressed IDX files of a split (checked here),
 * its rows chosen as `options` say. Shared by fashionMnist() and
 * loadFashionMnist().
 */
export function buildFashionMnist(
  images: { bytes: Uint8Array; name: string },
  labels: { bytes: Uint8Array; name: string },
  options: CheckedFashionMnistOptions,
): FashionMnist {
  const img = parseIdx(images.bytes, images.name, 'images');
  const lab = parseIdx(labels.bytes, labels.name, 'labels');
  const rows = img.dims[0]!;
  if (lab.dims[0] !== rows) {
    throw new InvalidDataError(`${images.name} holds ${rows} images but ${labels.name} ${lab.dims[0]} labels: the files are not of the same split`);
  }
  for (let i = 0; i < rows; i++) {
    if (lab.data[i]! >= FASHION_MNIST_CLASSES.length) {
      throw new InvalidDataError(`${labels.name} has label ${lab.data[i]} at row ${i}; Fashion-MNIST's labels are 0..9: corrupt, or not this dataset`);
    }
  }
  const n = options.n ?? rows;
  if (n > rows) throw new InvalidParameterError(`n is ${n} but the ${options.split} split has ${rows} rows; pass n <= ${rows}`);
  const indices = options.sample === 'stratified' ? stratifiedRows(lab.data, n, options.seed) : Int32Array.from({ length: n }, (_, i) => i);
  const X = Matrix.zeros(n, PIXELS);
  const out = X.data;
  const src = img.data;
  for (let start = 0; start < n; start += BLOCK) {
    const end = Math.min(n, start + BLOCK);
    for (let j = 0; j < PIXELS; j++) {
      const col = j * n;
      for (let r = start; r < end; r++) out[col + r] = SCALE[src[indices[r]! * PIXELS + j]!]!;
    }
  }
  return {
    X,
    labels: Int32Array.from(indices, (i) => lab.data[i]!),
    classNames: [...FASHION_MNIST_CLASSES],
    split: options.split,
    indices,
  };
}

/** n of the rows, each class's share by largest remainders, drawn without replacement; ascending. */
function stratifiedRows(labels: Uint8Array, n: number, seed: number | undefined): Int32Array {
  const byClass: number[][] = FASHION_MNIST_CLASSES.map(() => []);
  labels.forEach((k, i) => byClass[k]!.push(i));
  const quotas = apportion(
    n,
    byClass.map((rows) => rows.length),
  );
  const out = new Int32Array(n);
  let at = 0;
  const rng = new Rng(seed);
  try {
    byClass.forEach((rows, k) => {
      for (const p of rng.choice(rows.length, quotas[k]!)) out[at++] = rows[p]!;
    });
  } finally {
    rng.dispose();
  }
  return out.sort();
}
