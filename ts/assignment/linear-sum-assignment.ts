/**
 * The linear sum assignment problem with scipy.optimize.linear_sum_assignment's
 * semantics (scipy 1.10): choose min(rows, columns) cells of a cost matrix, at
 * most one per row and per column, of least total cost (greatest with
 * `maximize`). Rectangular matrices are allowed either way round. The solver is
 * the Rust core's shortest augmenting path method (crates/fedmix-core/src/assignment.rs).
 *
 * Entries: +Infinity marks a forbidden pair (-Infinity with `maximize`, as
 * scipy negates the matrix). NaN and the other infinity are rejected with an
 * InvalidDataError naming the cell; so is a matrix whose forbidden pairs leave
 * no complete assignment (scipy's "cost matrix is infeasible"). An empty
 * matrix (0 rows or 0 columns) gives an empty assignment, as in scipy.
 */
import { InvalidDataError, InvalidParameterError } from '../errors.js';
import { requireWasmMemory, withScope } from '../wasm/memory.js';

export interface LinearSumAssignmentOptions {
  /** find the assignment of greatest total instead of least (default false) */
  maximize?: boolean;
  /**
   * [rows, columns] of a row-major Float64Array cost (required for one); with
   * number[][] it is optional and must agree with the arrays.
   */
  shape?: [number, number];
}

export interface LinearSumAssignment {
  /** the assigned rows, ascending (min(rows, columns) of them) */
  rowInd: Int32Array;
  /** colInd[k] is the column assigned to row rowInd[k] */
  colInd: Int32Array;
  /** sum of the chosen entries of the cost matrix (0 when it is empty) */
  cost: number;
}

/**
 * The optimal assignment for `cost`: a number[][] (one array per row, all of
 * the same length) or a row-major Float64Array with `options.shape`.
 */
export function linearSumAssignment(cost: number[][] | Float64Array, options: LinearSumAssignmentOptions = {}): LinearSumAssignment {
  if (options === null || typeof options !== 'object') {
    throw new InvalidParameterError(`options must be an object like { maximize: true }, got ${String(options)}`);
  }
  const maximize = options.maximize ?? false;
  if (typeof maximize !== 'boolean') {
    throw new InvalidParameterError(`maximize must be true or false, got ${String(maximize)}`);
  }
  const [nr, nc] = costShape(cost, options.shape);
  // the matrix, and the core's working copy when it transposes or negates it
  requireWasmMemory(`a ${nr} x ${nc} assignment`, 8 * nr * nc * (nr > nc || maximize ? 2 : 1));
  const k = Math.min(nr, nc);
  return withScope((s) => {
    // Every buffer first: allocating can grow memory, which detaches views.
    const costPtr = s.f64(nr * nc);
    const rows = s.u32(k);
    const cols = s.u32(k);
    const total = s.f64(1);
    const view = new Float64Array(s.w.memory.buffer, costPtr, nr * nc);
    if (cost instanceof Float64Array) {
      view.set(cost);
    } else {
      // straight into WASM memory, no intermediate copy; NaN and infinities
      // are the core's to judge (it names the cell)
      for (let i = 0; i < nr; i++) {
        const row = cost[i]!;
        for (let j = 0; j < nc; j++) {
          const x = row[j];
          if (typeof x !== 'number') {
            throw new InvalidDataError(`cost[${i}][${j}] is ${describe(x)}, not a number; every entry must be a number (+Infinity marks a forbidden pair)`);
          }
          view[i * nc + j] = x;
        }
      }
    }
    s.check(s.w.fm_linear_sum_assignment(costPtr, nr, nc, maximize ? 1 : 0, rows, cols, total));
    return {
      rowInd: new Int32Array(s.readU32(rows, k)),
      colInd: new Int32Array(s.readU32(cols, k)),
      cost: s.readF64(total, 1)[0]!,
    };
  });
}

/** [rows, columns] of the cost matrix, after checking that it is one. */
function costShape(cost: unknown, shape: unknown): [number, number] {
  const given = shape === undefined ? undefined : checkShape(shape);
  if (cost instanceof Float64Array) {
    if (!given) {
      throw new InvalidParameterError(
        `a Float64Array cost is row-major and needs options.shape = [rows, columns] (it has ${cost.length} values)`,
      );
    }
    if (given[0] * given[1] !== cost.length) {
      throw new InvalidDataError(`cost has ${cost.length} values but shape [${given[0]}, ${given[1]}] needs ${given[0] * given[1]}`);
    }
    return given;
  }
  if (!Array.isArray(cost)) {
    throw new InvalidDataError(`cost must be a number[][] (one array per row) or a row-major Float64Array with options.shape, got ${describe(cost)}`);
  }
  const nr = cost.length;
  let nc = 0;
  for (let i = 0; i < nr; i++) {
    const row: unknown = cost[i];
    if (!Array.isArray(row) && !ArrayBuffer.isView(row)) {
      throw new InvalidDataError(`cost[${i}] is ${describe(row)}, not an array; cost must be a number[][] with one array per row`);
    }
    const len = (row as ArrayLike<number>).length;
    if (i === 0) nc = len;
    else if (len !== nc) {
      throw new InvalidDataError(`row ${i} of cost has ${len} values but row 0 has ${nc}; the cost matrix must be rectangular`);
    }
  }
  if (given && (given[0] !== nr || (nr > 0 && given[1] !== nc))) {
    throw new InvalidDataError(`cost is ${nr} x ${nc} but options.shape says [${given[0]}, ${given[1]}]`);
  }
  // [] has no rows to tell its width; a given shape can (scipy's np.zeros((0, n)))
  return [nr, nr === 0 && given ? given[1] : nc];
}

function checkShape(shape: unknown): [number, number] {
  const ok =
    Array.isArray(shape) &&
    shape.length === 2 &&
    shape.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 31 - 1);
  if (!ok) {
    throw new InvalidParameterError(`shape must be [rows, columns], two non-negative integers, got ${JSON.stringify(shape) ?? String(shape)}`);
  }
  return [shape[0] as number, shape[1] as number];
}

function describe(x: unknown): string {
  if (typeof x === 'string') return JSON.stringify(x);
  if (x === null || x === undefined) return String(x);
  if (Array.isArray(x)) return 'an array';
  return typeof x === 'object' ? 'an object' : `${typeof x} ${String(x)}`;
}
