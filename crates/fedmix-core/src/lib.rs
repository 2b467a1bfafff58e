//! fedmix-core: the numeric core of fedmix as pure functions over column-major
//! slices. No WASM, no globals; fedmix-wasm exports it through a C ABI.
// The relaxed-SIMD build reaches LLVM's fused multiply-add intrinsics (kernels/relaxed.rs):
// nightly features, which scripts/build-wasm.sh unlocks for that build alone.
#![cfg_attr(fedmix_relaxed, feature(link_llvm_intrinsics, simd_ffi, repr_simd))]

pub mod alloc;
pub mod assignment;
pub mod data;
pub mod dirichlet_multinomial;
pub mod distributions;
pub mod error;
pub mod gaussian_costs;
pub mod gmm;
pub mod hem;
pub mod kernels;
pub mod fedgem;
pub mod kdtree;
pub mod kmeans;
pub mod linalg;
pub mod mdm;
pub mod nn;
pub mod pca;
pub mod privacy;
pub mod rng;
pub mod secure_aggregation;
pub mod special;
pub mod svm;
#[cfg(test)]
mod testing;

pub use data::Data;
pub use error::{Error, ErrorKind, Result};
pub use rng::Rng;
