//! The seeded generator of the TypeScript Rng class: a handle whose stream
//! continues from call to call. Every draw validates its parameters before it
//! consumes anything, so a failed call leaves the stream where it was. Matrices
//! come out n x k column-major, as the Matrix class holds them.

use super::{buffers, f64s, f64s_mut, seed, status, u32s_mut};
use fedmix_core::distributions::{Categorical, Dirichlet, Gamma, Multinomial, MAX_TRIALS};
use fedmix_core::{Error, Result, Rng};
use fedmix_core::error::display;

/// A new generator from the seed; freed with fm_rng_free.
pub extern "C" fn fm_rng_new(seed_lo: u32, seed_hi: u32) -> *mut Rng {
    Box::into_raw(Box::new(Rng::new(seed(seed_lo, seed_hi))))
}

/// # Safety
/// `h` is a live generator; it is dead afterwards.
pub unsafe extern "C" fn fm_rng_free(h: *mut Rng) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

/// Numbers in a generator's saved state: its four 64-bit words as 32-bit
/// halves (low half first), 1 or 0 for whether it holds a spare normal, and
/// that normal (0 when none).
const STATE_LEN: usize = 10;

/// The generator's state as STATE_LEN numbers (see STATE_LEN).
///
/// # Safety
/// Live handle; `out` covers STATE_LEN values.
pub unsafe extern "C" fn fm_rng_get_state(h: *const Rng, out: *mut f64) {
    let (s, spare) = (*h).state();
    let o = f64s_mut(out, STATE_LEN);
    for (i, w) in s.iter().enumerate() {
        o[2 * i] = (*w & 0xffff_ffff) as f64;
        o[2 * i + 1] = (*w >> 32) as f64;
    }
    o[8] = if spare.is_some() { 1.0 } else { 0.0 };
    o[9] = spare.unwrap_or(0.0);
}

/// Sets the generator to a state fm_rng_get_state gave; a value that no
/// generator can be in is refused, and the generator is then unchanged.
///
/// # Safety
/// Live handle; `state` covers STATE_LEN values.
pub unsafe extern "C" fn fm_rng_set_state(h: *mut Rng, state: *const f64) -> i32 {
    status(|| {
        let v = f64s(state, STATE_LEN);
        let mut s = [0u64; 4];
        for (i, w) in s.iter_mut().enumerate() {
            let (lo, hi) = (v[2 * i], v[2 * i + 1]);
            let half = |x: f64| x.is_finite() && x >= 0.0 && x < 4_294_967_296.0 && x.fract() == 0.0;
            if !half(lo) || !half(hi) {
                return Err(Error::param(format!("a generator's state word {} must be two 32-bit halves, got {} and {}", i, display(lo), display(hi))));
            }
            *w = (hi as u64) << 32 | lo as u64;
        }
        let spare = if v[8] == 1.0 {
            Some(v[9])
        } else if v[8] == 0.0 && v[9] == 0.0 {
            None
        } else {
            return Err(Error::param("a generator's spare-normal flag must be 0 (with 0) or 1"));
        };
        *h = Rng::from_state(s, spare)?;
        Ok(())
    })
}

/// n uniforms in [0, 1).
///
/// # Safety
/// Live handle; `out` covers n values.
pub unsafe extern "C" fn fm_rng_uniform(h: *mut Rng, n: usize, out: *mut f64) {
    let r = &mut *h;
    for o in f64s_mut(out, n) {
        *o = r.next_f64();
    }
}

/// n standard normals.
///
/// # Safety
/// Live handle; `out` covers n values.
pub unsafe extern "C" fn fm_rng_normal(h: *mut Rng, n: usize, out: *mut f64) {
    let r = &mut *h;
    for o in f64s_mut(out, n) {
        *o = r.normal();
    }
}

/// n draws of Gamma(shape, scale).
///
/// # Safety
/// Live handle; `out` covers n values.
pub unsafe extern "C" fn fm_rng_gamma(h: *mut Rng, shape: f64, scale: f64, n: usize, out: *mut f64) -> i32 {
    let r = &mut *h;
    status(|| {
        let g = Gamma::new(shape, scale)?;
        for o in f64s_mut(out, n) {
            *o = g.sample(r);
        }
        Ok(())
    })
}

fn cells(n: usize, k: usize) -> Result<usize> {
    n.checked_mul(k).ok_or_else(|| Error::param(format!("{} draws of {} values do not fit in memory; draw fewer", n, k)))
}

/// n draws of Dirichlet(alpha), alpha of length k: an n x k matrix.
///
/// # Safety
/// Live handle; `alpha` covers k values, `out` n * k.
pub unsafe extern "C" fn fm_rng_dirichlet(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64) -> i32 {
    dirichlet_draws(h, alpha, k, n, out, Dirichlet::sample_into)
}

/// n draws into the column-major n x k `out`, each by `draw`.
unsafe fn dirichlet_draws(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64, draw: fn(&Dirichlet, &mut Rng, &mut [f64])) -> i32 {
    let r = &mut *h;
    status(|| {
        let dir = Dirichlet::new(f64s(alpha, k))?;
        let out = f64s_mut(out, cells(n, k)?);
        let mut x = buffers::zeros(k)?;
        for i in 0..n {
            draw(&dir, r, &mut x);
            for (j, &v) in x.iter().enumerate() {
                out[j * n + i] = v;
            }
        }
        Ok(())
    })
}

/// n draws of Dirichlet(alpha) as natural logs of the components (finite even
/// where the component underflows to 0): an n x k matrix.
///
/// # Safety
/// Live handle; `alpha` covers k values, `out` n * k.
pub unsafe extern "C" fn fm_rng_log_dirichlet(h: *mut Rng, alpha: *const f64, k: usize, n: usize, out: *mut f64) -> i32 {
    dirichlet_draws(h, alpha, k, n, out, Dirichlet::ln_sample_into)
}

/// n histograms of Multinomial(trials, probs), probs of length k: an n x k
/// matrix of counts. `trials` travels as an f64 (exact up to 2^53).
///
/// # Safety
/// Live handle; `probs` covers k values, `out` n * k.
pub unsafe extern "C" fn fm_rng_multinomial(h: *mut Rng, trials: f64, probs: *const f64, k: usize, n: usize, out: *mut f64) -> i32 {
    let r = &mut *h;
    status(|| {
        if !(trials >= 0.0 && trials <= MAX_TRIALS as f64 && trials.fract() == 0.0) {
            return Err(Error::param(format!("trials must be an integer in [0, 2^53], got {}", fedmix_core::error::show(trials))));
        }
        let m = Multinomial::new(trials as u64, f64s(probs, k))?;
        let out = f64s_mut(out, cells(n, k)?);
        let mut counts = buffers::filled(0u64, k)?;
        for i in 0..n {
            m.sample_into(r, &mut counts);
            for (j, &c) in counts.iter().enumerate() {
                out[j * n + i] = c as f64;
            }
        }
        Ok(())
    })
}

/// n categories drawn with probabilities `probs` (k values).
///
/// # Safety
/// Live handle; `probs` covers k values, `out` n.
pub unsafe extern "C" fn fm_rng_categorical(h: *mut Rng, probs: *const f64, k: usize, n: usize, out: *mut u32) -> i32 {
    let r = &mut *h;
    status(|| {
        let cat = Categorical::new(f64s(probs, k))?;
        for o in u32s_mut(out, n) {
            *o = cat.sample(r) as u32;
        }
        Ok(())
    })
}

/// k distinct indices of 0..n, in the order drawn.
///
/// # Safety
/// Live handle; `out` covers k values.
pub unsafe extern "C" fn fm_rng_choice(h: *mut Rng, n: usize, k: usize, out: *mut u32) -> i32 {
    let r = &mut *h;
    status(|| {
        let v = r.sample_without_replacement(n, k)?;
        for (o, i) in u32s_mut(out, k).iter_mut().zip(v) {
            *o = i as u32;
        }
        Ok(())
    })
}

/// A uniformly random permutation of 0..n, shuffled in `out` itself.
///
/// # Safety
/// Live handle; `out` covers n values.
pub unsafe extern "C" fn fm_rng_permutation(h: *mut Rng, n: usize, out: *mut u32) {
    let out = u32s_mut(out, n);
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as u32;
    }
    (*h).shuffle(out);
}
