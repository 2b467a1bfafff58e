//! Fallible allocation for the buffers whose size follows the input: rows,
//! responsibilities (n x k), covariances (k x d x d), clients, table cells.
//! WebAssembly memory ends at 4 GiB, and an allocation std cannot serve aborts
//! the instance (a trap that invalidates every model); these return an
//! ErrorKind::Allocation error naming the bytes asked instead. Buffers of one
//! feature vector or of a constant size stay infallible (fedmix-wasm keeps a
//! reserve of memory for them).

use crate::error::{Error, Result};
use std::mem::size_of;

/// An empty vector with room for exactly `len` items.
pub fn with_capacity<T>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::allocation(len as f64 * size_of::<T>() as f64))?;
    Ok(v)
}

/// `len` copies of `value`.
pub fn filled<T: Clone>(value: T, len: usize) -> Result<Vec<T>> {
    let mut v = with_capacity(len)?;
    v.resize(len, value);
    Ok(v)
}

/// `len` zeros.
pub fn zeros(len: usize) -> Result<Vec<f64>> {
    filled(0.0, len)
}

/// A copy of `s`.
pub fn copy<T: Clone>(s: &[T]) -> Result<Vec<T>> {
    let mut v = with_capacity(s.len())?;
    v.extend_from_slice(s);
    Ok(v)
}

/// The items of `it`, allocated once for its upper bound (exact for maps of
/// ranges and slices; filters reserve their source's length).
pub fn collect<T>(it: impl Iterator<Item = T>) -> Result<Vec<T>> {
    let (lo, hi) = it.size_hint();
    let mut v = with_capacity(hi.unwrap_or(lo))?;
    v.extend(it);
    Ok(v)
}

/// Appends `item`, growing the vector (by doubling) fallibly: for vectors whose
/// final length is not known in advance.
pub fn push<T>(v: &mut Vec<T>, item: T) -> Result<()> {
    if v.len() == v.capacity() {
        let more = v.capacity().max(4);
        v.try_reserve(more).map_err(|_| Error::allocation((v.len() + more) as f64 * size_of::<T>() as f64))?;
    }
    v.push(item);
    Ok(())
}

/// a x b items as one count, or the allocation error for a product the
/// address space cannot hold (`size` bytes each).
pub fn cells(a: usize, b: usize, size: usize) -> Result<usize> {
    a.checked_mul(b).filter(|c| c.checked_mul(size).map_or(false, |bytes| bytes <= isize::MAX as usize)).ok_or_else(|| Error::allocation(a as f64 * b as f64 * size as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn requests_beyond_the_address_space_are_errors_with_their_size() {
        let e = zeros(usize::MAX / 4).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Allocation);
        // 2^64 / 4 x 8 bytes
        assert_eq!(e.message, "could not allocate 36893488147419103000 bytes");
        assert_eq!(with_capacity::<u32>(usize::MAX).unwrap_err().kind, ErrorKind::Allocation);
        assert_eq!(cells(usize::MAX / 2, 3, 8).unwrap_err().message, "could not allocate 221360928884514620000 bytes");
        assert_eq!(cells(1 << 20, 3, 8).unwrap(), 3 << 20);
        // sizes of real requests are exact
        assert_eq!(Error::allocation(80_000_000.0).message, "could not allocate 80000000 bytes");
    }

    #[test]
    fn buffers_hold_what_they_are_asked() {
        assert_eq!(filled(7u32, 3).unwrap(), vec![7, 7, 7]);
        assert_eq!(zeros(2).unwrap(), vec![0.0, 0.0]);
        assert_eq!(copy(&[1.0, 2.0]).unwrap(), vec![1.0, 2.0]);
        let v = collect((0..10).filter(|i| i % 3 == 0)).unwrap();
        assert_eq!(v, vec![0, 3, 6, 9]);
        let v = collect((0..5).map(|i| i * 2)).unwrap();
        assert_eq!((v.len(), v.capacity()), (5, 5));
        let mut v = Vec::new();
        for i in 0..100 {
            push(&mut v, i).unwrap();
        }
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }
}
