/**
 * Helpers of in-process simulations (the runners that wire clients and a
 * server together). A real federation configures its dimension; a simulation
 * takes the one most clients' data have, so that a first client with the wrong
 * number of features is the one turned away, not everyone after it.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';

/** The most common number of columns among the clients' data (the smallest on ties). */
export function majorityDimension(clientData: MatrixLike[]): number | undefined {
  const counts = new Map<number, number>();
  for (const x of clientData) {
    try {
      const d = Matrix.from(x).nCols;
      counts.set(d, (counts.get(d) ?? 0) + 1);
    } catch {
      // unreadable data fails later, in its client, with its own error
    }
  }
  let best: number | undefined;
  for (const [d, n] of counts) if (best === undefined || n > counts.get(best)! || (n === counts.get(best)! && d < best)) best = d;
  return best;
}
