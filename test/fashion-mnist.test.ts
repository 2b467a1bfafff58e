/**
 * Fashion-MNIST from Debian's dataset-fashion-mnist: both splits read once
 * from the installed files (node:zlib) and checked against Python reading the
 * same files (test/fixtures/fashion_mnist.json, from scripts/gen-fixtures.py:
 * label counts, byte sums, pixels scaled by torch as ToTensor() does); the
 * same split through the browser path (bytes or URLs, DecompressionStream);
 * subsets; and truncated or corrupt files, which are InvalidDataErrors that
 * name the file and what is wrong.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FASHION_MNIST_CLASSES, FASHION_MNIST_FILES, fashionMnist, init, InvalidDataError, InvalidParameterError, type FashionMnist } from '../ts/index.js';
import { FASHION_MNIST_DIR, loadFashionMnist } from '../ts/node.js';
import { wasm } from '../ts/wasm/loader.js';
import { fixture } from './helpers.js';
import { idxBytes, tinyFashionMnist } from './support/idx.js';

interface SplitReference {
  n: number;
  imagesHeader: string;
  labelsHeader: string;
  labelCounts: number[];
  firstLabels: number[];
  byteSum: number;
  mean: number;
  rowByteSums: { row: number; sum: number }[];
  pixels: { row: number; col: number; byte: number; value: number }[];
}
const REF = fixture<{ splits: Record<'train' | 'test', SplitReference>; scale: number[] }>('fashion_mnist.json');

const NAMES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];

/** The installed files' bytes, read once: gzip-compressed and decompressed. */
const gz = (file: string) => readFileSync(join(FASHION_MNIST_DIR, file));
let loaded: Record<'train' | 'test', FashionMnist>;
let raw: Record<'train' | 'test', { images: Uint8Array; labels: Uint8Array }>;
let scratch: string;

beforeAll(async () => {
  await init();
  const [train, testSplit] = await Promise.all([loadFashionMnist(), loadFashionMnist({ split: 'test' })]);
  loaded = { train, test: testSplit };
  raw = {
    train: { images: gunzipSync(gz(FASHION_MNIST_FILES.train.images)), labels: gunzipSync(gz(FASHION_MNIST_FILES.train.labels)) },
    test: { images: gunzipSync(gz(FASHION_MNIST_FILES.test.images)), labels: gunzipSync(gz(FASHION_MNIST_FILES.test.labels)) },
  };
  scratch = mkdtempSync(join(tmpdir(), 'fedmix-fashion-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** Rows r of a (all columns) equal rows rows[r] of b, exactly. */
function sameRows(a: FashionMnist, b: FashionMnist, rows: ArrayLike<number>): void {
  expect(a.X.nRows).toBe(rows.length);
  expect(a.X.nCols).toBe(784);
  let differ = 0;
  for (let j = 0; j < 784; j++) {
    const ca = j * a.X.nRows;
    const cb = j * b.X.nRows;
    for (let r = 0; r < rows.length; r++) if (a.X.data[ca + r] !== b.X.data[cb + rows[r]!]) differ++;
  }
  expect(differ).toBe(0);
  expect(Array.from(a.labels)).toEqual(Array.from(rows, (i) => b.labels[i]));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('the installed files, against Python reading them', () => {
  test.each(['train', 'test'] as const)('%s split: shape, labels, byte sums and pixels', (split) => {
    const ref = REF.splits[split];
    const { X, labels, classNames, indices } = loaded[split];
    expect(ref.n).toBe(split === 'train' ? 60000 : 10000);
    expect([X.nRows, X.nCols]).toEqual([ref.n, 784]);
    expect(labels).toBeInstanceOf(Int32Array);
    expect(labels.length).toBe(ref.n);
    expect(classNames).toEqual(NAMES);
    expect(FASHION_MNIST_CLASSES).toEqual(NAMES);
    expect(Array.from(indices.subarray(0, 3))).toEqual([0, 1, 2]);
    expect(indices[ref.n - 1]).toBe(ref.n - 1);
    const counts = new Array<number>(10).fill(0);
    for (const k of labels) counts[k]!++;
    expect(counts).toEqual(ref.labelCounts);
    expect(counts).toEqual(new Array(10).fill(ref.n / 10));
    expect(Array.from(labels.subarray(0, 20))).toEqual(ref.firstLabels);
    // every value one of byte / 255 in float32; the bytes add up as numpy's do
    let min = Infinity;
    let max = -Infinity;
    let bytes = 0;
    let sum = 0;
    for (const v of X.data) {
      if (v < min) min = v;
      if (v > max) max = v;
      bytes += Math.round(v * 255);
      sum += v;
    }
    expect([min, max]).toEqual([0, 1]);
    expect(bytes).toBe(ref.byteSum);
    expect(Math.abs(sum / X.data.length - ref.mean)).toBeLessThan(1e-9); // a plain sum of 47 million values against torch's pairwise one
    for (const { row, sum: rowSum } of ref.rowByteSums) {
      let s = 0;
      for (let j = 0; j < 784; j++) s += Math.round(X.data[j * X.nRows + row]! * 255);
      expect(s, `row ${row}`).toBe(rowSum);
    }
    expect(ref.pixels.filter((p) => p.byte > 0).length).toBeGreaterThan(5);
    for (const p of ref.pixels) expect(X.data[p.col * X.nRows + p.row], `pixel (${p.row}, ${p.col})`).toBe(p.value);
  });

  test('the IDX headers are what Python read', () => {
    for (const split of ['train', 'test'] as const) {
      const hex = (b: Uint8Array, n: number) => Buffer.from(b.subarray(0, n)).toString('hex');
      expect(hex(raw[split].images, 16)).toBe(REF.splits[split].imagesHeader);
      expect(hex(raw[split].labels, 8)).toBe(REF.splits[split].labelsHeader);
    }
  });

  test("every byte scales to torch's float32 byte / 255", async () => {
    const pixels = Uint8Array.from({ length: 784 }, (_, j) => j % 256);
    const { X } = await fashionMnist({ images: idxBytes(0x803, [1, 28, 28], pixels), labels: idxBytes(0x801, [1], [3]) });
    expect(Array.from(X.data.subarray(0, 256))).toEqual(REF.scale);
  });
});

describe('the browser path: bytes and URLs, DecompressionStream', () => {
  test('the gzip bytes of the test split give what node:zlib gave, through DecompressionStream', async () => {
    const Native = globalThis.DecompressionStream;
    let made = 0;
    globalThis.DecompressionStream = class extends Native {
      constructor(format: CompressionFormat) {
        super(format);
        made++;
      }
    };
    try {
      const images = gz(FASHION_MNIST_FILES.test.images);
      const labels = gz(FASHION_MNIST_FILES.test.labels);
      // a Uint8Array that does not start its buffer, and an ArrayBuffer
      const padded = new Uint8Array(images.length + 3);
      padded.set(images, 3);
      const labelsBuffer = labels.buffer.slice(labels.byteOffset, labels.byteOffset + labels.byteLength);
      const got = await fashionMnist({ images: padded.subarray(3), labels: labelsBuffer }, { split: 'test' });
      expect(made).toBe(2);
      sameRows(got, loaded.test, range(10000));
      expect(got.classNames).toEqual(NAMES);
    } finally {
      globalThis.DecompressionStream = Native;
    }
  });

  test('decompressed IDX bytes are read as they are', async () => {
    const got = await fashionMnist(raw.test, { split: 'test', n: 300 });
    sameRows(got, loaded.test, range(300));
  });

  describe('URLs', () => {
    let server: Server;
    let base: string;
    const served: string[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        const name = (req.url ?? '').split('/').pop()!;
        served.push(req.url ?? '');
        if (!Object.values(FASHION_MNIST_FILES).some((f) => f.images === name || f.labels === name)) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(gz(name));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/data/fashion-mnist`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test("a folder's URL (the split's file names resolve inside it), or each file's", async () => {
      const fromFolder = await fashionMnist(base, { split: 'test', n: 200 });
      sameRows(fromFolder, loaded.test, range(200));
      expect(served).toEqual(expect.arrayContaining(['/data/fashion-mnist/t10k-images-idx3-ubyte.gz', '/data/fashion-mnist/t10k-labels-idx1-ubyte.gz']));
      const fromFiles = await fashionMnist({ images: new URL(`${base}/t10k-images-idx3-ubyte.gz`), labels: `${base}/t10k-labels-idx1-ubyte.gz` }, { split: 'test', n: 50 });
      sameRows(fromFiles, loaded.test, range(50));
    });

    test('a URL that cannot be fetched is an InvalidDataError naming it', async () => {
      await expect(fashionMnist({ images: `${base}/t10k-images-idx3-ubyte.gz`, labels: `${base}/missing.gz` })).rejects.toThrow(InvalidDataError);
      await expect(fashionMnist({ images: `${base}/t10k-images-idx3-ubyte.gz`, labels: `${base}/missing.gz` })).rejects.toThrow(/could not fetch http:\/\/127\.0\.0\.1:\d+\/data\/fashion-mnist\/missing\.gz: HTTP 404/);
      // a port nobody listens on: the connection is refused, and the message says so
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(fashionMnist(`http://127.0.0.1:${port}/nothing/`)).rejects.toThrow(/could not fetch http:\/\/127\.0\.0\.1:\d+\/nothing\/train-(images|labels).*: fetch failed \(.*ECONNREFUSED/);
      await expect(fashionMnist('not a url')).rejects.toThrow(InvalidParameterError);
    });
  });
});

describe('subsets', () => {
  test('the first n rows', async () => {
    sameRows(await loadFashionMnist({ split: 'test', n: 1234 }), loaded.test, range(1234));
    sameRows(await fashionMnist(raw.test, { split: 'test', n: 10000 }), loaded.test, range(10000));
  });

  test('a seeded stratified sample: each class its share, rows in file order, the same for the same seed', async () => {
    const heap = wasm().fm_heap_in_use();
    const a = await fashionMnist(raw.train, { n: 1000, sample: 'stratified', seed: 1 });
    const b = await fashionMnist(raw.train, { n: 1000, sample: 'stratified', seed: 1 });
    const c = await fashionMnist(raw.train, { n: 1000, sample: 'stratified', seed: 2 });
    expect(wasm().fm_heap_in_use()).toBe(heap);
    expect(a.split).toBe('train');
    const counts = new Array<number>(10).fill(0);
    for (const k of a.labels) counts[k]!++;
    expect(counts).toEqual(new Array(10).fill(100));
    for (let r = 1; r < 1000; r++) expect(a.indices[r]!).toBeGreaterThan(a.indices[r - 1]!);
    sameRows(a, loaded.train, a.indices);
    expect(Array.from(b.indices)).toEqual(Array.from(a.indices));
    sameRows(b, loaded.train, a.indices);
    expect(Array.from(c.indices)).not.toEqual(Array.from(a.indices));
    // not just the first rows of each class
    expect(a.indices[999]!).toBeGreaterThan(50000);
  });

  test('uneven shares go to the classes by largest remainder, lowest class first', async () => {
    const seven = await fashionMnist(raw.test, { split: 'test', n: 7, sample: 'stratified', seed: 3 });
    expect(Array.from(seven.labels).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    sameRows(seven, loaded.test, seven.indices);
    const every = await loadFashionMnist({ split: 'test', sample: 'stratified', seed: 3 });
    expect(Array.from(every.indices)).toEqual(range(10000));
  });
});

describe('truncated or corrupt files: an InvalidDataError naming the file and the problem', () => {
  const tiny = tinyFashionMnist(5);
  const cut = (b: Uint8Array, n: number) => b.subarray(0, b.length - n);
  const flip = (b: Uint8Array, at: number) => {
    const c = b.slice();
    c[at]! ^= 0xff;
    return c;
  };
  const labels10 = idxBytes(0x801, [5], [0, 1, 10, 3, 4]);
  /** [what, images, labels, the message] */
  const CASES: [string, Uint8Array, Uint8Array, RegExp][] = [
    ['swapped files', tiny.labels, tiny.images, /images-idx3-ubyte.* has magic number 0x00000801, not 0x00000803 .*are the images and labels files swapped\?/],
    ['a magic number of another type', idxBytes(0xd03, [5, 28, 28], new Uint8Array(5 * 784 * 4)), tiny.labels, /images-idx3-ubyte.* has magic number 0x00000d03, not 0x00000803.*not an IDX file of this kind/],
    ['not an IDX file', new TextEncoder().encode('<html>not found</html>'), tiny.labels, /images-idx3-ubyte.* has magic number 0x3c68746d/],
    ['images of another size', idxBytes(0x803, [5, 32, 32], new Uint8Array(5 * 1024)), tiny.labels, /images-idx3-ubyte.* holds 32 x 32 images; Fashion-MNIST's are 28 x 28/],
    ['a truncated header', tiny.images.subarray(0, 3), tiny.labels, /images-idx3-ubyte.* is truncated: 3 byte\(s\), where an IDX header alone has 16/],
    ['a header cut short', tiny.images.subarray(0, 10), tiny.labels, /images-idx3-ubyte.* is truncated: 10 bytes, where its IDX header alone has 16/],
    ['truncated images', cut(tiny.images, 100), tiny.labels, /images-idx3-ubyte.* is truncated: its header declares 5 images \(3936 bytes\) but it holds 3836 bytes/],
    ['truncated labels', tiny.images, cut(tiny.labels, 1), /labels-idx1-ubyte.* is truncated: its header declares 5 labels \(13 bytes\) but it holds 12 bytes/],
    ['bytes after the data', tiny.images, new Uint8Array([...tiny.labels, 0, 0]), /labels-idx1-ubyte.* has 2 byte\(s\) after the 5 labels its header declares/],
    ['images and labels of different splits', tiny.images, tinyFashionMnist(6).labels, /images-idx3-ubyte.* holds 5 images but .*labels-idx1-ubyte.* 6 labels: the files are not of the same split/],
    ['a label outside 0..9', tiny.images, labels10, /labels-idx1-ubyte.* has label 10 at row 2; Fashion-MNIST's labels are 0..9/],
    ['no images', idxBytes(0x803, [0, 28, 28], []), idxBytes(0x801, [0], []), /images-idx3-ubyte.* declares 0 images/],
    ['more images than a Matrix holds', idxBytes(0x803, [400_000, 28, 28], []), tiny.labels, /declares 400000 images, more than a Matrix can hold/],
    ['a truncated gzip file', cut(gzipSync(tiny.images), 20), tiny.labels, /images-idx3-ubyte.* is not a valid gzip file \(.*\): truncated or corrupt/],
    ['a corrupt gzip file', flip(gzipSync(tiny.images), 30), tiny.labels, /images-idx3-ubyte.* is not a valid gzip file/],
    ['a gzip header and nothing else', gzipSync(tiny.images).subarray(0, 2), tiny.labels, /images-idx3-ubyte.* is not a valid gzip file/],
  ];

  test('the files themselves load (the cases below spoil one thing each)', async () => {
    const ok = await fashionMnist({ images: gzipSync(tiny.images), labels: tiny.labels });
    expect([ok.X.nRows, Array.from(ok.labels)]).toEqual([5, [0, 1, 2, 3, 4]]);
    expect(ok.X.data[1 * 5 + 2]).toBe(Math.fround(15 / 255)); // row 2, pixel 1: (2 * 7 + 1) % 256
  });

  test.each(CASES)('from bytes: %s', async (_, images, labels, message) => {
    const error = await fashionMnist({ images, labels }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidDataError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/train-(images|labels)-idx\d-ubyte\.gz/);
  });

  test.each(CASES)('from a folder: %s', async (what, images, labels, message) => {
    const dir = mkdtempSync(join(scratch, 'case-'));
    // the same bytes gzipped (a spoiled gzip file as it is), under the dataset's file names
    const asGz = (b: Uint8Array) => (b[0] === 0x1f && b[1] === 0x8b ? b : gzipSync(b));
    writeFileSync(join(dir, 'train-images-idx3-ubyte.gz'), asGz(images));
    writeFileSync(join(dir, 'train-labels-idx1-ubyte.gz'), asGz(labels));
    const error = await loadFashionMnist({ dir }).catch((e: unknown) => e);
    expect(error, what).toBeInstanceOf(InvalidDataError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(dir);
  });

  test('a real file cut short or damaged', async () => {
    const labels = gz(FASHION_MNIST_FILES.test.labels);
    const images = gz(FASHION_MNIST_FILES.test.images);
    await expect(fashionMnist({ images, labels: labels.subarray(0, labels.length >> 1) }, { split: 'test' })).rejects.toThrow(/t10k-labels-idx1-ubyte\.gz is not a valid gzip file/);
    await expect(fashionMnist({ images: flip(images, images.length >> 1), labels }, { split: 'test' })).rejects.toThrow(/t10k-images-idx3-ubyte\.gz is not a valid gzip file/);
    const dir = mkdtempSync(join(scratch, 'cut-'));
    writeFileSync(join(dir, 't10k-images-idx3-ubyte'), raw.test.images.subarray(0, 5000));
    writeFileSync(join(dir, 't10k-labels-idx1-ubyte'), raw.test.labels);
    await expect(loadFashionMnist({ dir, split: 'test' })).rejects.toThrow(/t10k-images-idx3-ubyte is truncated: its header declares 10000 images \(7840016 bytes\) but it holds 5000 bytes/);
  });

  test('uncompressed files in a folder, as torchvision leaves them, load', async () => {
    const dir = mkdtempSync(join(scratch, 'raw-'));
    writeFileSync(join(dir, 't10k-images-idx3-ubyte'), raw.test.images);
    writeFileSync(join(dir, 't10k-labels-idx1-ubyte.gz'), gz(FASHION_MNIST_FILES.test.labels));
    sameRows(await loadFashionMnist({ dir, split: 'test', n: 100 }), loaded.test, range(100));
  });

  test('a folder without the files says to install dataset-fashion-mnist', async () => {
    const dir = join(scratch, 'nothing-here');
    const error = await loadFashionMnist({ dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidDataError);
    expect((error as Error).message).toContain(`Fashion-MNIST is not in ${dir}: no train-`);
    expect((error as Error).message).toContain("Debian's package dataset-fashion-mnist (apt-get install dataset-fashion-mnist)");
  });
});

describe('options', () => {
  test.each([
    [{ split: 'validation' }, /split must be one of 'train', 'test'/],
    [{ n: 0 }, /n must be an integer in \[1, /],
    [{ n: 2.5 }, /n must be an integer/],
    [{ n: 10001, split: 'test' }, /n is 10001 but the test split has 10000 rows/],
    [{ sample: 'random' }, /sample must be one of 'first', 'stratified'/],
    [{ sample: 'stratified', seed: -1 }, /seed must be an integer >= 0/],
    [{ dir: 5 }, /dir must be the path of a folder/],
    ['test', /options must be an object/],
  ])('%o', async (options, message) => {
    const error = await loadFashionMnist(options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as Error).message).toMatch(message);
  });

  test('sources', async () => {
    await expect(fashionMnist(null as never)).rejects.toThrow(/source must be a folder URL or \{ images, labels \}/);
    await expect(fashionMnist({ images: 5, labels: raw.test.labels } as never)).rejects.toThrow(/source.images must be the file's bytes \(an ArrayBuffer or a Uint8Array\) or its URL/);
    await expect(fashionMnist({ images: raw.test.images } as never)).rejects.toThrow(InvalidParameterError);
  });
});
