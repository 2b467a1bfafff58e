/**
 * Fashion-MNIST from a folder (Node: fedmix/node): by default where Debian's
 * `dataset-fashion-mnist` installs it, gunzipped with node:zlib. The checks
 * and the choice of rows are fashion-mnist.ts's.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { formatThrown, formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { buildFashionMnist, FASHION_MNIST_FILES, isGzip, MAX_IDX_BYTES, readFashionMnistOptions, shownName, type FashionMnist, type FashionMnistOptions } from './fashion-mnist.js';

/** Where Debian's package puts the four files. */
export const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';
/** The Debian package that installs them there. */
export const FASHION_MNIST_PACKAGE = 'dataset-fashion-mnist';

export interface LoadFashionMnistOptions extends FashionMnistOptions {
  /**
   * The folder that holds the split's files, gzip-compressed
   * (train-images-idx3-ubyte.gz, ...) or not (train-images-idx3-ubyte, as
   * torchvision leaves them in FashionMNIST/raw). Default FASHION_MNIST_DIR.
   */
  dir?: string;
}

const gunzipAsync = promisify(gunzip);

/**
 * A Fashion-MNIST split read from a folder (Node).
 *
 * ```ts
 * import { init } from 'fedmix';
 * import { loadFashionMnist } from 'fedmix/node';
 * await init();
 * const { X, labels, classNames } = await loadFashionMnist();               // 60,000 x 784, Debian's files
 * const test = await loadFashionMnist({ split: 'test', n: 1000, sample: 'stratified', seed: 1 });
 * ```
 *
 * A missing file is an InvalidDataError that says to install Debian's
 * `dataset-fashion-mnist` (or to pass `dir`); a file that is not what it
 * should be is one naming the file and what is wrong with it.
 */
export async function loadFashionMnist(options?: LoadFashionMnistOptions): Promise<FashionMnist> {
  const { options: o, extra } = readFashionMnistOptions(options, ['dir']);
  const dir = extra.dir ?? FASHION_MNIST_DIR;
  if (typeof dir !== 'string' || dir === '' || dir.includes('\0')) {
    throw new InvalidParameterError(`dir must be the path of a folder, got ${formatValue(dir)}`);
  }
  const names = FASHION_MNIST_FILES[o.split];
  const [images, labels] = await Promise.all([readIdxFile(dir, names.images), readIdxFile(dir, names.labels)]);
  return buildFashionMnist(images, labels, o);
}

/** The decompressed bytes of `name` (or of it without .gz) in `dir`, and the path read. */
async function readIdxFile(dir: string, name: string): Promise<{ bytes: Uint8Array; name: string }> {
  const plain = name.replace(/\.gz$/, '');
  for (const candidate of [name, plain]) {
    const fullPath = join(dir, candidate);
    const path = shownName(fullPath);
    let size: number;
    try {
      const s = await stat(fullPath);
      if (!s.isFile()) continue;
      size = s.size;
    } catch (e) {
      if ((e as { code?: unknown }).code === 'ENOENT' || (e as { code?: unknown }).code === 'ENOTDIR') continue;
      throw new InvalidDataError(`could not read ${path}: ${formatThrown(e)}`);
    }
    if (size > MAX_IDX_BYTES) throw new InvalidDataError(`${path} has ${size} bytes, more than a Fashion-MNIST file can (${MAX_IDX_BYTES}): not this dataset`);
    let bytes: Uint8Array;
    try {
      bytes = await readFile(fullPath);
    } catch (e) {
      throw new InvalidDataError(`could not read ${path}: ${formatThrown(e)}`);
    }
    return { bytes: isGzip(bytes) ? await gunzipFile(bytes, path) : bytes, name: path };
  }
  const install =
    dir === FASHION_MNIST_DIR
      ? `Debian's package ${FASHION_MNIST_PACKAGE} installs the files there: apt-get install ${FASHION_MNIST_PACKAGE}, or pass { dir } where they are`
      : `pass { dir } as the folder that holds the Fashion-MNIST files, or install Debian's package ${FASHION_MNIST_PACKAGE} (apt-get install ${FASHION_MNIST_PACKAGE}) and leave dir out`;
  throw new InvalidDataError(`Fashion-MNIST is not in ${shownName(dir)}: no ${name} (nor ${plain}) there; ${install}`);
}

async function gunzipFile(gz: Uint8Array, path: string): Promise<Uint8Array> {
  try {
    return await gunzipAsync(gz, { maxOutputLength: MAX_IDX_BYTES });
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new InvalidDataError(`${path} decompresses to more than ${MAX_IDX_BYTES} bytes, more than a Matrix of 784 columns can hold: not a Fashion-MNIST file`);
    }
    throw new InvalidDataError(`${path} is not a valid gzip file (${formatThrown(e)}): truncated or corrupt; reinstall ${FASHION_MNIST_PACKAGE} or get the file again`);
  }
}
