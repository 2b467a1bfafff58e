/**
 * scikit-learn's 8x8 digits (1797 rows of 64 pixel counts 0-16, 10 classes),
 * from Debian's python3-sklearn (scripts/setup.sh installs it): the CSV
 * sklearn.datasets.load_digits reads, gzipped, no header, the class last.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Matrix } from '../../ts/index.js';

export const DIGITS_CSV_GZ = '/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz';

/** The rows scaled to [0, 1] (pixel / 16), and their classes. */
export function loadDigits(): { X: Matrix; labels: Int32Array } {
  const lines = gunzipSync(readFileSync(DIGITS_CSV_GZ)).toString('utf8').trim().split('\n');
  const rows = lines.map((l) => l.split(',').map(Number));
  return { X: Matrix.fromRows(rows.map((r) => r.slice(0, 64).map((v) => v / 16))), labels: Int32Array.from(rows, (r) => r[64]!) };
}
