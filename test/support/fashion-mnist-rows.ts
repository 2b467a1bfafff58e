/**
 * Rows of Fashion-MNIST by index, read from Debian's dataset-fashion-mnist
 * files, for tests and benchmarks that need real 784-feature rows. Pixels are
 * byte / 255 in float32 (torchvision's ToTensor, and scripts/gen-fixtures.py).
 * A private stand-in until the library's own loader (ts/data/datasets/
 * fashion-mnist.ts, on another branch) reaches main.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Matrix } from '../../ts/index.js';

export const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';
const FILES = { train: 'train-images-idx3-ubyte.gz', test: 't10k-images-idx3-ubyte.gz' } as const;
const LABELS = { train: 'train-labels-idx1-ubyte.gz', test: 't10k-labels-idx1-ubyte.gz' } as const;
const PIXELS = 784;

const images = new Map<string, Uint8Array>();

function file(name: string, magic: number): Uint8Array {
  let bytes = images.get(name);
  if (!bytes) {
    bytes = new Uint8Array(gunzipSync(readFileSync(`${FASHION_MNIST_DIR}/${name}`)));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(0) !== magic) throw new Error(`${name}: not an IDX file of the expected kind`);
    images.set(name, bytes);
  }
  return bytes;
}

/** The rows at `indices` of a split's images, as an n x 784 Matrix. */
export function fashionMnistRows(split: 'train' | 'test', indices: ArrayLike<number>): Matrix {
  const bytes = file(FILES[split], 0x00000803);
  const total = new DataView(bytes.buffer, bytes.byteOffset).getUint32(4);
  const n = indices.length;
  const m = Matrix.zeros(n, PIXELS);
  for (let r = 0; r < n; r++) {
    const i = indices[r]!;
    if (!(i >= 0 && i < total)) throw new Error(`row ${i} is not in the ${split} split (${total} rows)`);
    const base = 16 + i * PIXELS;
    for (let j = 0; j < PIXELS; j++) m.data[j * n + r] = Math.fround(bytes[base + j]! / 255);
  }
  return m;
}

/** Every label of a split (0..9). */
export function fashionMnistLabels(split: 'train' | 'test'): Uint8Array {
  return file(LABELS[split], 0x00000801).subarray(8);
}
