//! Linear sum assignment (scipy's linear_sum_assignment).

use super::{f64s, status, u32s_mut};
use fedmix_core::{assignment, Error};

/// Linear sum assignment of the nr x nc row-major `cost` (scipy semantics;
/// `maximize` 0 or 1). Writes min(nr, nc) row indices (ascending) and their
/// columns, and the total cost of those cells to `out_cost`.
///
/// # Safety
/// `cost` covers nr * nc values, `out_rows` and `out_cols` min(nr, nc) each,
/// `out_cost` one.
pub unsafe extern "C" fn fm_linear_sum_assignment(
    cost: *const f64,
    nr: usize,
    nc: usize,
    maximize: i32,
    out_rows: *mut u32,
    out_cols: *mut u32,
    out_cost: *mut f64,
) -> i32 {
    status(|| {
        let n = nr.checked_mul(nc).ok_or_else(|| Error::data(format!("a {} x {} cost matrix is too large", nr, nc)))?;
        let a = assignment::linear_sum_assignment(f64s(cost, n), nr, nc, maximize != 0)?;
        let k = a.rows.len();
        for (o, &r) in u32s_mut(out_rows, k).iter_mut().zip(&a.rows) {
            *o = r as u32;
        }
        for (o, &c) in u32s_mut(out_cols, k).iter_mut().zip(&a.cols) {
            *o = c as u32;
        }
        *out_cost = a.cost;
        Ok(())
    })
}
