/** Small IDX files (the format of Fashion-MNIST's files), for the loader's tests and the hostile-API recipes. */

/** An IDX file: magic number, big-endian dimensions, then the bytes. */
export function idxBytes(magic: number, dims: readonly number[], data: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(4 + 4 * dims.length + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, magic);
  dims.forEach((d, k) => view.setUint32(4 + 4 * k, d));
  out.set(data, 4 + 4 * dims.length);
  return out;
}

/**
 * n 28 x 28 images and their labels as IDX files (not compressed): image i's
 * pixel j is (i * 7 + j) % 256, its label i % 10.
 */
export function tinyFashionMnist(n: number): { images: Uint8Array; labels: Uint8Array } {
  const pixels = Uint8Array.from({ length: n * 784 }, (_, p) => (Math.floor(p / 784) * 7 + (p % 784)) % 256);
  return {
    images: idxBytes(0x803, [n, 28, 28], pixels),
    labels: idxBytes(0x801, [n], Uint8Array.from({ length: n }, (_, i) => i % 10)),
  };
}
