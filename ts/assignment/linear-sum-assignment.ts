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
 *
 * A cost written straight into WASM memory (AssignmentCost) is solved without
 * the copy a Float64Array takes (32 MB at 2048 x 2048), and can be solved
 * again after changing some entries.
 */
import { keepClassName } from '../class-name.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { guardRead, isArray, isDetached, isFloat64Array, LIMITS, readOptions, requireBoolean, requireInteger, requireLength } from '../validate.js';
import { instance } from '../wasm/loader.js';
import { allocate, OwnedHandle, requireWasmMemory, withScope, type HandleLabel } from '../wasm/memory.js';

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

const COST_LABEL: HandleLabel = { what: 'this assignment cost', renew: 'make a new AssignmentCost', redo: 'make it and write its entries again' };

/** Every AssignmentCost this module made: a brand that a Proxy cannot fake. */
const madeCosts = new WeakSet<object>();

/**
 * A rows x columns cost matrix held in WASM memory, for linearSumAssignment
 * to solve in place: write its entries through `values`, solve, change some,
 * solve again. It starts all zeros; dispose() frees it.
 */
export class AssignmentCost {
  static {
    keepClassName(this, 'AssignmentCost');
  }
  readonly nRows: number;
  readonly nCols: number;
  /** @internal */
  readonly owned: OwnedHandle;

  constructor(nRows: number, nCols: number) {
    this.nRows = requireInteger('nRows', nRows, 0, LIMITS.values);
    this.nCols = requireInteger('nCols', nCols, 0, LIMITS.values);
    const n = this.nRows * this.nCols;
    if (n > LIMITS.values) {
      throw new InvalidParameterError(`a ${this.nRows} x ${this.nCols} cost matrix has ${n} entries; at most ${LIMITS.values} fit in one WASM allocation`);
    }
    const bytes = Math.max(n, 1) * 8;
    requireWasmMemory(`a ${this.nRows} x ${this.nCols} assignment cost`, bytes);
    const w = instance().exports;
    const ptr = allocate(w, bytes);
    new Float64Array(w.memory.buffer, ptr, n).fill(0); // fm_alloc may hand back a freed block's contents
    this.owned = new OwnedHandle(ptr, (ww, p) => ww.fm_free(p, bytes), COST_LABEL);
    madeCosts.add(this);
  }

  /**
   * The entries, row-major, as a view of WASM memory: writes go straight to
   * the matrix. Take the view again after any fedmix call, which may grow WASM
   * memory and so detach views taken before (a detached view has length 0).
   */
  get values(): Float64Array {
    return new Float64Array(instance().exports.memory.buffer, this.owned.ptr, this.nRows * this.nCols);
  }

  get disposed(): boolean {
    return this.owned.disposed;
  }

  /** Frees the matrix; solving it afterwards is a NotFittedError. */
  dispose(): void {
    this.owned.dispose();
  }
}

/**
 * The optimal assignment for `cost`: a number[][] (one array per row, all of
 * the same length), a row-major Float64Array with `options.shape`, or an
 * AssignmentCost already in WASM memory (not copied; any `options.shape` must
 * match it).
 */
export function linearSumAssignment(cost: number[][] | Float64Array | AssignmentCost, options: LinearSumAssignmentOptions = {}): LinearSumAssignment {
  const o = readOptions(options, ['maximize', 'shape']);
  const maximize = requireBoolean('maximize', o.maximize ?? false);
  if (isAssignmentCost(cost)) return solveResident(cost, maximize, o.shape);
  const [nr, nc] = costShape(cost, o.shape);
  if (nr * nc > LIMITS.values) {
    throw new InvalidDataError(`a ${nr} x ${nc} cost matrix has ${nr * nc} entries; at most ${LIMITS.values} fit in one WASM allocation`);
  }
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
    if (isFloat64Array(cost)) {
      view.set(cost);
    } else {
      // straight into WASM memory, no intermediate copy; NaN and infinities
      // are the core's to judge (it names the cell)
      guardRead(
        'cost',
        () => {
          for (let i = 0; i < nr; i++) {
            const row = cost[i]!;
            for (let j = 0; j < nc; j++) {
              const x = row[j];
              if (typeof x !== 'number') {
                throw new InvalidDataError(`cost[${i}][${j}] is ${formatValue(x)}, not a number; every entry must be a number (+Infinity marks a forbidden pair)`);
              }
              view[i * nc + j] = x;
            }
          }
        },
        InvalidDataError,
      );
      // the caller's getters or Proxy traps ran above: had one grown WASM memory
      // (a fedmix call), the writes went to a detached view and the core would read garbage
      if (isDetached(view)) throw new InvalidDataError('cost grew WASM memory while it was read (a getter or Proxy trap calling fedmix); pass plain numbers');
    }
    s.check(s.w.fm_linear_sum_assignment(costPtr, nr, nc, maximize ? 1 : 0, rows, cols, total));
    return {
      rowInd: new Int32Array(s.readU32(rows, k)),
      colInd: new Int32Array(s.readU32(cols, k)),
      cost: s.readF64(total, 1)[0]!,
    };
  });
}

function isAssignmentCost(cost: unknown): cost is AssignmentCost {
  return cost !== null && typeof cost === 'object' && madeCosts.has(cost);
}

function solveResident(cost: AssignmentCost, maximize: boolean, shape: unknown): LinearSumAssignment {
  const { nRows: nr, nCols: nc } = cost;
  const costPtr = cost.owned.ptr; // a NotFittedError once disposed, a WasmError after init({ fresh: true })
  if (shape !== undefined) {
    const given = checkShape(shape);
    if (given[0] !== nr || given[1] !== nc) throw new InvalidDataError(`cost is ${nr} x ${nc} but options.shape says [${given[0]}, ${given[1]}]`);
  }
  // the core's working copy, when it transposes or negates the matrix
  if (nr > nc || maximize) requireWasmMemory(`a ${nr} x ${nc} assignment`, 8 * nr * nc);
  const k = Math.min(nr, nc);
  return withScope((s) => {
    const rows = s.u32(k);
    const cols = s.u32(k);
    const total = s.f64(1);
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
  if (isFloat64Array(cost)) {
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
  if (!isArray('cost', cost, InvalidDataError)) {
    throw new InvalidDataError(`cost must be a number[][] (one array per row) or a row-major Float64Array with options.shape, got ${formatValue(cost)}`);
  }
  const nr = requireLength('cost', cost, LIMITS.values, InvalidDataError);
  let nc = 0;
  for (let i = 0; i < nr; i++) {
    const row: unknown = guardRead(`cost[${i}]`, () => (cost as unknown[])[i], InvalidDataError);
    if (!isArray(`cost[${i}]`, row, InvalidDataError) && !ArrayBuffer.isView(row)) {
      throw new InvalidDataError(`cost[${i}] is ${formatValue(row)}, not an array; cost must be a number[][] with one array per row`);
    }
    const len = requireLength(`cost[${i}]`, row, LIMITS.values, InvalidDataError);
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
  const pair = guardRead('shape', () => (Array.isArray(shape) && shape.length === 2 ? [shape[0], shape[1]] : undefined));
  if (!pair || !pair.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= LIMITS.values)) {
    throw new InvalidParameterError(`shape must be [rows, columns], two non-negative integers, got ${formatValue(shape)}`);
  }
  return [pair[0] as number, pair[1] as number];
}
