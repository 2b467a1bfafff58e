/**
 * Whole shares of a total in proportion to weights: the one largest-remainder
 * rule of the package (partition quotas, distributed EM's subset quotas,
 * stratified samples of a dataset).
 */

/**
 * `total` split into whole counts in proportion to `weights` (>= 0, summing
 * to more than 0): each gets floor(total w / sum w), and what is left goes one
 * at a time to the largest fractional parts, the lowest index first on ties
 * (Hamilton's method). The counts sum to `total`; a weight of 0 gets 0, and
 * no count exceeds ceil(total w / sum w).
 */
export function apportion(total: number, weights: ArrayLike<number>): number[] {
  let sum = 0;
  for (let g = 0; g < weights.length; g++) sum += weights[g]!;
  const exact = Array.from(weights, (w) => (total * w) / sum);
  const counts = exact.map(Math.floor);
  let left = total - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((_, g) => g).sort((a, b) => exact[b]! - counts[b]! - (exact[a]! - counts[a]!) || a - b);
  for (const g of order) {
    if (!(left > 0)) break;
    counts[g]!++;
    left--;
  }
  return counts;
}
