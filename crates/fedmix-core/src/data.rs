//! The column-major data view every algorithm takes, and its validation.

use crate::error::{Error, Result};
use crate::kernels::Cols;

/// n rows by d columns, column-major: feature j occupies values[j*n .. (j+1)*n].
#[derive(Clone, Copy)]
pub struct Data<'a> {
    pub values: &'a [f64],
    pub n: usize,
    pub d: usize,
}

impl<'a> Data<'a> {
    pub fn new(values: &'a [f64], n: usize, d: usize) -> Result<Self> {
        if values.len() != n * d {
            return Err(Error::data(format!("data has {} values but the shape {} x {} needs {}", values.len(), n, d, n * d)));
        }
        Ok(Data { values, n, d })
    }

    pub fn col(&self, j: usize) -> &'a [f64] {
        &self.values[j * self.n..(j + 1) * self.n]
    }

    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.values[j * self.n + i]
    }

    /// Column view of rows [i0, ...) for the kernels.
    pub fn cols_from(&self, i0: usize) -> Cols<'a> {
        Cols::new(self.values, self.n, i0)
    }

    /// Rejects empty data and any NaN or infinity, naming the first bad cell.
    pub fn require_finite(&self, what: &str) -> Result<()> {
        if self.n == 0 || self.d == 0 {
            return Err(Error::data(format!("{} is empty ({} rows x {} columns); pass at least one row and one column", what, self.n, self.d)));
        }
        for j in 0..self.d {
            let col = self.col(j);
            // sum of x*0 is NaN exactly when some x is NaN or infinite: one fast pass
            // (four independent sums, so the additions do not wait on each other)
            let mut probe = [0.0f64; 4];
            let mut chunks = col.chunks_exact(4);
            for c in &mut chunks {
                for k in 0..4 {
                    probe[k] += c[k] * 0.0;
                }
            }
            for &v in chunks.remainder() {
                probe[0] += v * 0.0;
            }
            let probe = (probe[0] + probe[1]) + (probe[2] + probe[3]);
            if probe != 0.0 || probe.is_nan() {
                let i = col.iter().position(|v| !v.is_finite()).unwrap_or(0);
                return Err(Error::data(format!(
                    "{} contains {} at row {}, column {}; remove or impute non-finite values before fitting",
                    what, crate::error::display(col[i]), i, j
                )));
            }
        }
        Ok(())
    }

    /// Number of distinct rows, counting only up to `limit` (enough to decide
    /// whether `limit` clusters can be told apart) so the common case is cheap.
    pub fn distinct_rows_up_to(&self, limit: usize) -> usize {
        let mut reps: Vec<usize> = Vec::with_capacity(limit);
        for i in 0..self.n {
            if !reps.iter().any(|&r| (0..self.d).all(|j| self.get(r, j) == self.get(i, j))) {
                reps.push(i);
                if reps.len() >= limit {
                    break;
                }
            }
        }
        reps.len()
    }

    /// Per feature, the variance that is indistinguishable from zero: the square of
    /// 16 ulps of the feature's largest magnitude. A covariance pivot at or below
    /// it is rounding noise of a collapsed component, not a real spread.
    pub fn variance_floor(&self) -> Vec<f64> {
        variance_floor_from_abs_max(&self.abs_max())
    }

    /// Per feature, the largest magnitude (0 for no rows).
    pub fn abs_max(&self) -> Vec<f64> {
        (0..self.d).map(|j| self.col(j).iter().fold(0.0f64, |a, v| a.max(v.abs()))).collect()
    }

    pub fn column_means(&self) -> Vec<f64> {
        (0..self.d).map(|j| crate::kernels::sum(self.col(j)) / self.n as f64).collect()
    }

    /// Population variances (ddof 0), as numpy's var.
    pub fn column_variances(&self) -> Vec<f64> {
        let means = self.column_means();
        (0..self.d).map(|j| crate::kernels::sq_dev(self.col(j), means[j]) / self.n as f64).collect()
    }
}

/// The variance floor (see Data::variance_floor) from per-feature largest
/// magnitudes, which add across parties by taking the maximum.
pub fn variance_floor_from_abs_max(abs_max: &[f64]) -> Vec<f64> {
    abs_max
        .iter()
        .map(|m| {
            let v = 16.0 * f64::EPSILON * m;
            v * v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_check_names_cell() {
        let v = [1.0, 2.0, 3.0, f64::INFINITY, 5.0, 6.0];
        let d = Data::new(&v, 3, 2).unwrap();
        let e = d.require_finite("X").unwrap_err();
        assert!(e.message.contains("row 0, column 1"), "{}", e.message);
        let v = [1.0, f64::NAN];
        assert!(Data::new(&v, 2, 1).unwrap().require_finite("X").is_err());
        assert!(Data::new(&[], 0, 3).unwrap().require_finite("X").is_err());
        assert!(Data::new(&[1.0], 2, 1).is_err());
    }

    #[test]
    fn distinct_rows() {
        let v = [1.0, 1.0, 2.0, 5.0, 5.0, 5.0];
        let d = Data::new(&v, 3, 2).unwrap();
        assert_eq!(d.distinct_rows_up_to(10), 2);
        assert_eq!(d.distinct_rows_up_to(1), 1);
    }
}
