/**
 * The Dirichlet-multinomial log-pmf (equation 1 of Scott & Cahill's MDM paper)
 * for a batch of count vectors against a batch of Dirichlet parameter vectors,
 * computed in WASM through log rising factorials, so it stays accurate for large
 * parameters and small counts.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { InvalidDataError } from '../errors.js';
import { LIMITS, readOptions, requireBoolean } from '../validate.js';
import { withScope } from '../wasm/memory.js';

/** Rows of a MatrixLike as one row-major Float64Array. */
function rowMajor(m: Matrix): Float64Array {
  const out = new Float64Array(m.nRows * m.nCols);
  for (let j = 0; j < m.nCols; j++) {
    const col = m.column(j);
    for (let i = 0; i < m.nRows; i++) out[i * m.nCols + j] = col[i]!;
  }
  return out;
}

/**
 * log p(c | n, alpha) for every count vector (a row of `counts`: m x C) under every
 * parameter vector (a row of `alphas`: K x C); n is each row's sum. Returns an
 * m x K Matrix. `coefficient: false` leaves out ln(n! / prod c_j!), which does not
 * depend on alpha.
 */
export function dirichletMultinomialLogPmf(counts: MatrixLike, alphas: MatrixLike, options: { coefficient?: boolean } = {}): Matrix {
  const c = Matrix.from(counts);
  const a = Matrix.from(alphas);
  const coefficient = requireBoolean('coefficient', readOptions(options, ['coefficient']).coefficient ?? true);
  if (c.nRows * a.nRows > LIMITS.values) throw new InvalidDataError(`${c.nRows} count vectors x ${a.nRows} parameter vectors is ${c.nRows * a.nRows} results; at most ${LIMITS.values}`);
  if (c.nCols !== a.nCols) {
    throw new InvalidDataError(`counts have ${c.nCols} categories but alphas have ${a.nCols}; they must match`);
  }
  if (c.nCols === 0 || a.nRows === 0) throw new InvalidDataError('counts and alphas need at least one category and one parameter vector');
  const [m, k, cats] = [c.nRows, a.nRows, c.nCols];
  const out = withScope((s) => {
    const o = s.f64(m * k);
    s.check(s.w.fm_dm_log_pmf(s.f64From(rowMajor(c)), m, cats, s.f64From(rowMajor(a)), k, coefficient ? 1 : 0, o));
    return s.readF64(o, m * k);
  });
  // m x k row-major -> column-major Matrix
  const res = Matrix.zeros(m, k);
  for (let i = 0; i < m; i++) for (let q = 0; q < k; q++) res.data[q * m + i] = out[i * k + q]!;
  return res;
}
