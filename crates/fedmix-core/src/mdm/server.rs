//! The server side of MDM inference: parameters from the cohort's summed
//! statistics only. Each function checks the sums, applies the paper's
//! formula and, where that formula would leave the parameter space, a guard;
//! the returned `flags` say which guards acted (bits below).
//!
//! Sums with Gaussian noise added (central differential privacy) can be
//! negative or inconsistent; every sum is first clamped at 0 (flag CLAMPED),
//! which does nothing to exact sums.

use super::client::{InitStats, RoundStats};
use super::{check_shape, Mdm, ALPHA_MAX, ALPHA_MIN};
use crate::alloc;
use crate::error::{show, Error, Result};

/// A component had no clients (initialization) and took the pooled statistics of all of them.
pub const EMPTY_COMPONENT: u32 = 1;
/// Eq 9's moments of category 1 were degenerate and another category, or a bound, gave alpha_0.
pub const DEGENERATE_MOMENTS: u32 = 2;
/// Some alpha would have fallen below ALPHA_MIN (a class no client of the component holds).
pub const ALPHA_FLOORED: u32 = 4;
/// Some alpha would have risen above ALPHA_MAX.
pub const ALPHA_CAPPED: u32 = 8;
/// A component got no responsibility mass this round: its pi (and alpha) were kept.
pub const COMPONENT_KEPT: u32 = 16;
/// Some (noisy) sum was negative and was clamped at 0.
pub const CLAMPED: u32 = 32;
/// With noise, some u_kj was <= 0 and alpha_kj was kept instead of floored.
pub const ALPHA_KEPT: u32 = 64;

/// Bounds on the initial concentration alpha_0 of eq 9 when the moments
/// cannot give it: zero variance (every client of the component has the same
/// normalized histogram: alpha_0 -> infinity) gives the upper bound, and
/// second moments equal to the first (clients holding a single class each:
/// alpha_0 -> 0) the lower one; finite estimates are clamped to the same range.
/// Algorithm 2 then moves alpha_0 to where the likelihood puts it.
pub const INIT_CONCENTRATION_MIN: f64 = 1e-2;
pub const INIT_CONCENTRATION_MAX: f64 = 1e4;

/// A variance below this fraction of the second moment is rounding, not spread.
const ZERO_VARIANCE: f64 = 1e-12;

fn require_finite(name: &str, v: &[f64]) -> Result<()> {
    if let Some((i, x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(Error::data(format!("the aggregated {}[{}] is {}; sums must be finite", name, i, show(*x))));
    }
    Ok(())
}

fn clamped(v: &[f64], flags: &mut u32) -> Result<Vec<f64>> {
    alloc::collect(v.iter().map(|&x| {
        if x < 0.0 {
            *flags |= CLAMPED;
            0.0
        } else {
            x
        }
    }))
}

fn require_clients(clients: f64, k: usize, what: &str) -> Result<()> {
    if !(clients >= 1.0) {
        return Err(Error::data(format!("the {} cohort is empty: no client contributed; sample a cohort of at least K = {} clients", what, k)));
    }
    if clients < k as f64 {
        return Err(Error::param(format!(
            "K = {} components is larger than the {} cohort of {} client{}; lower K or sample at least {} clients",
            k,
            what,
            show(clients),
            if clients == 1.0 { "" } else { "s" },
            k
        )));
    }
    Ok(())
}

/// Algorithm 1, server side: tau = 1/K (eq 5), pi_k = E_k / m_k (eq 6) and
/// alpha_k by moment matching (eqs 8-9) from the cohort's sums.
///
/// Guards:
/// - a component no client chose (m_k = 0; possible by chance) takes the
///   pooled E, P and Q of the whole cohort (EMPTY_COMPONENT);
/// - eq 9 reads alpha_0 = (P1 - Q1) / (Q1 - P1^2) off category 1 (any category
///   gives an estimate, eq 23); when category 1 is degenerate for component k
///   (never seen, P1 = 0; zero variance; or Q1 = P1, all its clients holding
///   it entirely or not at all), the category with the largest mean among the
///   non-degenerate ones is used instead, and when there is none alpha_0 is
///   set to a bound (see INIT_CONCENTRATION_MIN/MAX) (DEGENERATE_MOMENTS);
/// - a class never seen in component k gives alpha_kj = 0; it is raised to
///   ALPHA_MIN (ALPHA_FLOORED).
///
/// Errors: an empty cohort, fewer clients than components, and (exact sums
/// only) a cohort of single-class clients only, for which the
/// Dirichlet-multinomial has no maximum-likelihood estimate (alpha -> 0).
pub fn initialize(agg: &InitStats, noisy: bool) -> Result<(Mdm, u32)> {
    let (k, c, n_max) = (agg.k, agg.c, agg.n_max);
    check_shape(k, c, n_max)?;
    if agg.e.len() != k * n_max || agg.p.len() != k * c || agg.q.len() != k * c {
        return Err(Error::param("initialization sums do not match K, C and N"));
    }
    require_finite("E", &agg.e)?;
    require_finite("P", &agg.p)?;
    require_finite("Q", &agg.q)?;
    require_clients(agg.clients, k, "initialization")?;
    let mut flags = 0;
    let e = clamped(&agg.e, &mut flags)?;
    let p = clamped(&agg.p, &mut flags)?;
    let q = clamped(&agg.q, &mut flags)?;
    let pool = |v: &[f64], w: usize| alloc::collect((0..w).map(|j| (0..k).map(|r| v[r * w + j]).sum()));
    let (e_all, p_all, q_all) = (pool(&e, n_max)?, pool(&p, c)?, pool(&q, c)?);
    let m_all: f64 = e_all.iter().sum();
    if !(m_all > 0.0) {
        return Err(Error::data("the initialization sums hold no client (E sums to 0); sample a larger cohort or add less noise"));
    }
    if !noisy {
        // sum_j p_j^2 = 1 exactly when a client holds a single class
        let spread = 1.0 - q_all.iter().sum::<f64>() / m_all;
        if spread <= 1e-12 {
            return Err(Error::data(
                "every client in the initialization cohort holds a single class (all its counts in one category): the Dirichlet-multinomial \
                 has no maximum-likelihood estimate on such data (alpha -> 0). Include clients with two or more classes (a larger cohort), \
                 or model which class a client holds with a categorical distribution instead",
            ));
        }
    }
    let mut alpha = alloc::zeros(k * c)?;
    let mut pi = alloc::zeros(k * n_max)?;
    for r in 0..k {
        let own = &e[r * n_max..(r + 1) * n_max];
        let m_r: f64 = own.iter().sum();
        // exact counts are whole numbers: below one half means no client
        let (er, pr, qr, m) = if m_r >= 0.5 {
            (own, &p[r * c..(r + 1) * c], &q[r * c..(r + 1) * c], m_r)
        } else {
            flags |= EMPTY_COMPONENT;
            (&e_all[..], &p_all[..], &q_all[..], m_all)
        };
        for (dst, &x) in pi[r * n_max..(r + 1) * n_max].iter_mut().zip(er) {
            *dst = x / m;
        }
        let (mean, second) = moments(pr, qr, m)?;
        let a0 = concentration(&mean, &second, &mut flags);
        for j in 0..c {
            let a = a0 * mean[j];
            alpha[r * c + j] = if a < ALPHA_MIN {
                flags |= ALPHA_FLOORED;
                ALPHA_MIN
            } else {
                a
            };
        }
    }
    let tau = alloc::filled(1.0 / k as f64, k)?;
    Ok((Mdm::new(k, c, n_max, tau, alpha, normalized_rows(pi, n_max))?, flags))
}

/// The component's mean normalized histogram (P / m, renormalized to sum to 1)
/// and mean squares (Q / m, clamped into [mean^2, mean], where exact sums lie).
fn moments(p: &[f64], q: &[f64], m: f64) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut mean = alloc::collect(p.iter().map(|&x| (x / m).min(1.0)))?;
    let total: f64 = mean.iter().sum();
    if total > 0.0 {
        mean.iter_mut().for_each(|x| *x /= total);
    } else {
        let c = mean.len() as f64;
        mean.iter_mut().for_each(|x| *x = 1.0 / c);
    }
    let second = alloc::collect(mean.iter().zip(q).map(|(&pm, &qs)| (qs / m).max(pm * pm).min(pm)))?;
    Ok((mean, second))
}

/// alpha_0 by eq 9 (category 1), else by the guard described at `initialize`.
fn concentration(mean: &[f64], second: &[f64], flags: &mut u32) -> f64 {
    let estimate = |j: usize| -> Option<f64> {
        let (pm, qs) = (mean[j], second[j]);
        let var = qs - pm * pm;
        let num = pm - qs;
        if pm > 0.0 && var > ZERO_VARIANCE * qs && num > ZERO_VARIANCE * pm {
            Some(num / var)
        } else {
            None
        }
    };
    let a0 = match estimate(0) {
        Some(a) => a,
        None => {
            *flags |= DEGENERATE_MOMENTS;
            let best = (0..mean.len()).filter(|&j| estimate(j).is_some()).max_by(|&a, &b| mean[a].total_cmp(&mean[b]));
            match best {
                Some(j) => estimate(j).unwrap(),
                None => {
                    // no spread anywhere: identical histograms (some class
                    // partly held) or single-class clients (none is)
                    let partly_held = mean.iter().zip(second).any(|(&pm, &qs)| pm - qs > ZERO_VARIANCE * pm);
                    if partly_held {
                        INIT_CONCENTRATION_MAX
                    } else {
                        INIT_CONCENTRATION_MIN
                    }
                }
            }
        }
    };
    if !(a0 >= INIT_CONCENTRATION_MIN && a0 <= INIT_CONCENTRATION_MAX) {
        *flags |= DEGENERATE_MOMENTS;
        return a0.max(INIT_CONCENTRATION_MIN).min(INIT_CONCENTRATION_MAX);
    }
    a0
}

/// Rows divided by their sums again, so that rounding never leaves a row
/// summing to 1 +- more than the model's tolerance.
fn normalized_rows(mut v: Vec<f64>, w: usize) -> Vec<f64> {
    for row in v.chunks_mut(w) {
        let s: f64 = row.iter().sum();
        row.iter_mut().for_each(|x| *x /= s);
    }
    v
}

/// Algorithm 2, server side: the update of eqs 17-19 from the cohort's sums.
///
/// tau = omega / sum(omega) (eq 17: without noise sum(omega) = |S|, and this
/// form stays a probability vector with noise); pi_k = E_k / sum(E_k) (eq 18:
/// without noise sum(E_k) = omega_k); alpha_k = alpha_k . u_k / v_k (eq 19).
///
/// Guards: a component with no mass this round (sum(E_k) = 0 or v_k = 0, e.g.
/// tau_k = 0, or omega underflowing for every client) keeps its pi_k and
/// alpha_k (COMPONENT_KEPT); every alpha is kept within [ALPHA_MIN, ALPHA_MAX]
/// (ALPHA_FLOORED, ALPHA_CAPPED). With `noisy` sums, a u_kj <= 0 keeps
/// alpha_kj (ALPHA_KEPT): it is noise, not evidence that no client holds the
/// class, and flooring would undo the rounds it took to recover from the
/// floor. Errors: an empty cohort, or sums that are not finite.
pub fn update(model: &Mdm, agg: &RoundStats, noisy: bool) -> Result<(Mdm, u32)> {
    let (k, c, n_max) = (model.k, model.c, model.n_max);
    if (agg.k, agg.c, agg.n_max) != (k, c, n_max)
        || agg.omega.len() != k
        || agg.e.len() != k * n_max
        || agg.u.len() != k * c
        || agg.v.len() != k
    {
        return Err(Error::param(format!("round sums do not match the model's K = {}, C = {}, N = {}", k, c, n_max)));
    }
    require_finite("omega", &agg.omega)?;
    require_finite("E", &agg.e)?;
    require_finite("u", &agg.u)?;
    require_finite("v", &agg.v)?;
    if !(agg.clients >= 1.0) {
        return Err(Error::data("the round's cohort is empty: no client contributed statistics; sample at least one client per round"));
    }
    let mut flags = 0;
    let omega = clamped(&agg.omega, &mut flags)?;
    let e = clamped(&agg.e, &mut flags)?;
    let u = clamped(&agg.u, &mut flags)?;
    let v = clamped(&agg.v, &mut flags)?;
    let total: f64 = omega.iter().sum();
    if !(total > 0.0) {
        // only noise can do this: nothing to learn from the round
        return Ok((model.try_clone()?, flags | COMPONENT_KEPT));
    }
    let tau = alloc::collect(omega.iter().map(|&w| w / total))?;
    let mut pi = alloc::copy(&model.pi)?;
    let mut alpha = alloc::copy(&model.alpha)?;
    for r in 0..k {
        let er = &e[r * n_max..(r + 1) * n_max];
        let mass: f64 = er.iter().sum();
        if mass > 0.0 {
            for (dst, &x) in pi[r * n_max..(r + 1) * n_max].iter_mut().zip(er) {
                *dst = x / mass;
            }
        } else {
            flags |= COMPONENT_KEPT;
        }
        if v[r] > 0.0 && omega[r] > 0.0 {
            for j in 0..c {
                if noisy && !(agg.u[r * c + j] > 0.0) {
                    flags |= ALPHA_KEPT;
                    continue;
                }
                let a = alpha[r * c + j] * u[r * c + j] / v[r];
                alpha[r * c + j] = if !(a >= ALPHA_MIN) {
                    flags |= ALPHA_FLOORED;
                    ALPHA_MIN
                } else if a > ALPHA_MAX {
                    flags |= ALPHA_CAPPED;
                    ALPHA_MAX
                } else {
                    a
                };
            }
        } else {
            flags |= COMPONENT_KEPT;
        }
    }
    Ok((Mdm::new(k, c, n_max, normalized_rows(tau, k), alpha, normalized_rows(pi, n_max))?, flags))
}
