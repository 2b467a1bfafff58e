//! C ABI of fedmix-core for WebAssembly. Thin by design: it owns allocation,
//! turns `Result` into an i32 status (0 ok, else ErrorKind::code) with the message
//! readable through fm_last_error_*, and hands models out as opaque handles that
//! TypeScript frees. Running out of memory is a status too, never a trap (see
//! the reserve in heap.rs and fedmix_core::alloc). Inputs that a user shapes (initial parameters, imported
//! models) travel as (pointer, length) pairs and the core checks their shapes;
//! a null pointer means "not given". Data and output buffers are sized by the
//! shapes passed alongside them.

//!
//! One crate, several WebAssembly modules (scripts/build-wasm.sh builds it once
//! per cargo feature): `core` (mixtures, k-means, random numbers) owns the
//! heap; each other feature (`dem`: distributed and hierarchical EM, `svm`,
//! `nn`, `dirichlet` (with the generator's gamma, Dirichlet and categorical
//! draws), `fedgem`, `assignment`: linear sum assignment, the
//! Gaussian costs, PCA and the symmetric eigendecomposition; `float32`:
//! GaussianMixture's EM in single precision) is a module that shares
//! the core's memory and heap, loaded only when a program asks for it. Native
//! builds and tests take every feature into one library.

// a module of the split build uses only some of the helpers below
#![cfg_attr(not(all(feature = "core", feature = "dem", feature = "svm", feature = "nn", feature = "dirichlet", feature = "fedgem", feature = "assignment", feature = "float32")), allow(dead_code, unused_imports))]

use fedmix_core::{alloc as buffers, Data, Error, Result};
use std::slice;

/// One export of the C ABI (src/exports.rs): the `#[no_mangle]` function
/// `name`, in the modules of the build that have `feature` (every module for
/// `every`; the core for `lent`, the heap the feature modules import), which
/// calls the implementation of the same name in `module`. Its parameters and
/// result are declared here once: an implementation that differs does not compile.
macro_rules! export {
    (every fn $module:ident :: $name:ident ( $($p:ident : $t:ty),* $(,)? ) $(-> $r:ty)?) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($p: $t),*) $(-> $r)? {
            crate::$module::$name($($p),*)
        }
    };
    (lent fn $($rest:tt)*) => {
        export!("core" fn $($rest)*);
    };
    ($feature:literal fn $module:ident :: $name:ident ( $($p:ident : $t:ty),* $(,)? ) $(-> $r:ty)?) => {
        #[cfg(feature = $feature)]
        #[no_mangle]
        pub unsafe extern "C" fn $name($($p: $t),*) $(-> $r)? {
            crate::$module::$name($($p),*)
        }
    };
}

/// The option structs of the C ABI (src/exports.rs): the scalar arguments of
/// an export that would take more than 8, which TypeScript writes into WASM
/// memory with the writer scripts/gen-wasm-abi.mjs generates. Their fields are
/// u32, i32, f32 and f64 only, so that #[repr(C)] lays them out as the
/// generator does (each field at the next multiple of its size), on wasm32 and
/// natively alike; the test below holds the two together.
macro_rules! option_structs {
    ($( $(#[$meta:meta])* $feature:literal struct $name:ident { $($field:ident : $t:ty),* $(,)? } )*) => {
        $(
            $(#[$meta])*
            // in every build whatever its module: a type costs no code, and an export of another module may share it (GmmFitOptions: fm_gmm_fit in the core, fm_gmm_initial in 'dem')
            #[repr(C)]
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            pub struct $name { $(pub $field: $t),* }
        )*

        #[cfg(test)]
        #[test]
        fn option_structs_have_the_generated_layout() {
            $(
                #[cfg(feature = $feature)]
                {
                    let value = std::mem::MaybeUninit::<$name>::uninit();
                    let base = value.as_ptr() as usize;
                    let mut at = 0usize;
                    let mut align = 1usize;
                    $(
                        let size = std::mem::size_of::<$t>();
                        assert!(matches!(stringify!($t), "u32" | "i32" | "f32" | "f64"), "{}.{}: {}", stringify!($name), stringify!($field), stringify!($t));
                        at = (at + size - 1) / size * size;
                        align = align.max(size);
                        // the field's address, without reading it
                        let field = unsafe { std::ptr::addr_of!((*value.as_ptr()).$field) } as usize;
                        assert_eq!(field - base, at, "{}.{}", stringify!($name), stringify!($field));
                        at += size;
                    )*
                    assert_eq!(std::mem::size_of::<$name>(), (at + align - 1) / align * align, "{}", stringify!($name));
                }
            )*
        }
    };
}

mod codes;
mod exports;
pub use exports::*;
#[cfg(feature = "core")]
mod heap;
#[cfg(feature = "core")]
use heap::{hold_reserve, set_error};
#[cfg(not(feature = "core"))]
mod borrowed;
#[cfg(not(feature = "core"))]
use borrowed::{hold_reserve, set_error};

#[cfg(feature = "core")]
mod constants;
#[cfg(feature = "core")]
mod gmm;
#[cfg(any(feature = "core", feature = "dem", feature = "float32"))]
mod gmm_handle;
#[cfg(feature = "core")]
mod kernels;
#[cfg(any(feature = "core", feature = "dem"))]
mod kmeans;
#[cfg(any(feature = "core", feature = "assignment"))]
mod linalg;
#[cfg(feature = "assignment")]
mod pca;
#[cfg(any(feature = "core", feature = "dirichlet"))]
mod rng;

#[cfg(feature = "dem")]
mod dem;
#[cfg(feature = "dem")]
mod gmm_shards;
#[cfg(feature = "dem")]
mod hem;
#[cfg(feature = "dem")]
mod kmeans_shards;

#[cfg(feature = "svm")]
mod ocsvm;

#[cfg(feature = "nn")]
mod nn;

#[cfg(feature = "dirichlet")]
mod dirichlet_multinomial;
#[cfg(feature = "dirichlet")]
mod mdm;
#[cfg(feature = "dirichlet")]
mod special;
#[cfg(feature = "dirichlet")]
mod secure_aggregation;

#[cfg(feature = "fedgem")]
mod fedgem;

#[cfg(feature = "float32")]
mod float32;

#[cfg(feature = "assignment")]
mod assignment;
#[cfg(feature = "assignment")]
mod gaussian_costs;

/// Bumped whenever an export changes meaning; the loader checks it.
const ABI_VERSION: i32 = 16;

/// The status of a call that succeeded; a failed one returns ErrorKind::code.
const OK: i32 = 0;

/// The error of a call refused for want of the reserve. Its message is
/// allocated fallibly (memory is short): without room, it is empty and
/// TypeScript's own account of the memory says it all.
fn exhausted() -> Error {
    // RESERVE, spelled out: formatting would allocate
    let text = "found fewer than 4 MiB free, the headroom every call keeps for its small buffers";
    let mut message = String::new();
    if message.try_reserve_exact(text.len()).is_ok() {
        message.push_str(text);
    }
    Error { kind: fedmix_core::ErrorKind::Allocation, message }
}

/// Runs the body of an export: first takes the memory reserve (or refuses to
/// start), then turns its Result into the status.
fn status(call: impl FnOnce() -> Result<()>) -> i32 {
    let r = if hold_reserve() { call() } else { Err(exhausted()) };
    match r {
        Ok(()) => OK,
        Err(e) => {
            let code = e.kind.code();
            set_error(e.message);
            code
        }
    }
}

unsafe fn f64s<'a>(ptr: *const f64, len: usize) -> &'a [f64] {
    if len == 0 {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

unsafe fn f64s_mut<'a>(ptr: *mut f64, len: usize) -> &'a mut [f64] {
    if len == 0 {
        &mut []
    } else {
        slice::from_raw_parts_mut(ptr, len)
    }
}

unsafe fn u32s_mut<'a>(ptr: *mut u32, len: usize) -> &'a mut [u32] {
    if len == 0 {
        &mut []
    } else {
        slice::from_raw_parts_mut(ptr, len)
    }
}

unsafe fn u32s<'a>(ptr: *const u32, len: usize) -> &'a [u32] {
    if len == 0 {
        &[]
    } else {
        slice::from_raw_parts(ptr, len)
    }
}

/// A copy of the `len` values at `ptr`, or None for a null pointer (not given).
unsafe fn optional(ptr: *const f64, len: usize) -> Result<Option<Vec<f64>>> {
    if ptr.is_null() {
        Ok(None)
    } else {
        buffers::copy(f64s(ptr, len)).map(Some)
    }
}

unsafe fn data<'a>(ptr: *const f64, n: usize, d: usize) -> Result<Data<'a>> {
    Data::new(f64s(ptr, n * d), n, d)
}

fn seed(lo: u32, hi: u32) -> u64 {
    (hi as u64) << 32 | lo as u64
}
