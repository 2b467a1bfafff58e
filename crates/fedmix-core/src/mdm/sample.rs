//! New clients from a mixture of Dirichlet-multinomials: a component k ~ tau,
//! a size n ~ pi_k, proportions p ~ Dirichlet(alpha_k) and the histogram
//! c ~ Multinomial(n, p) (the generative story of eqs 1-3).

use super::Mdm;
use crate::alloc;
use crate::distributions::{Categorical, Dirichlet, Multinomial};
use crate::error::{Error, Result};
use crate::rng::Rng;

/// m clients into `counts` (m x C, row-major), `sizes` (m) and `components` (m).
pub fn sample(model: &Mdm, m: usize, rng: &mut Rng, counts: &mut [f64], sizes: &mut [f64], components: &mut [u32]) -> Result<()> {
    let (k, c) = (model.k, model.c);
    if m.checked_mul(c).map_or(true, |v| v != counts.len()) || sizes.len() != m || components.len() != m {
        return Err(Error::param("sample: output buffers do not match m clients of C categories"));
    }
    let component = Categorical::new(&model.tau)?;
    let (mut size, mut dirichlet) = (alloc::with_capacity(k)?, alloc::with_capacity(k)?);
    for q in 0..k {
        size.push(Categorical::new(model.pi_row(q))?);
        dirichlet.push(Dirichlet::new(model.alpha_row(q))?);
    }
    let mut p = alloc::zeros(c)?;
    let mut h = alloc::filled(0u64, c)?;
    for i in 0..m {
        let q = component.sample(rng);
        let n = size[q].sample(rng) as u64 + 1;
        dirichlet[q].sample_into(rng, &mut p);
        Multinomial::new(n, &p)?.sample_into(rng, &mut h);
        for (dst, &x) in counts[i * c..(i + 1) * c].iter_mut().zip(&h) {
            *dst = x as f64;
        }
        sizes[i] = n as f64;
        components[i] = q as u32;
    }
    Ok(())
}
