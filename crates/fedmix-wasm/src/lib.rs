//! C ABI of fedmix-core for WebAssembly. Thin by design: it owns allocation,
//! turns `Result` into an i32 status (0 ok, else ErrorKind::code) with the message
//! readable through fm_last_error_*, and hands models out as opaque handles that
//! TypeScript frees. Inputs that a user shapes (initial parameters, imported
//! models) travel as (pointer, length) pairs and the core checks their shapes;
//! a null pointer means "not given". Data and output buffers are sized by the
//! shapes passed alongside them.

use fedmix_core::{Data, Result};
use std::alloc::{alloc, dealloc, GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::slice;
use std::sync::atomic::{AtomicUsize, Ordering};

mod assignment;
mod constants;
mod dem;
mod dirichlet_multinomial;
mod fedgem;
mod gmm;
mod kernels;
mod kmeans;
mod mdm;
mod pca;
mod rng;
mod special;

/// The system allocator, counting bytes in use so tests can prove that every
/// call, failed ones included, gives back all it took.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            IN_USE.fetch_add(l.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        IN_USE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, l, new_size);
        if !q.is_null() {
            IN_USE.fetch_sub(l.size(), Ordering::Relaxed);
            IN_USE.fetch_add(new_size, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes currently allocated on the Rust heap (models, buffers, the error text).
#[no_mangle]
pub extern "C" fn fm_heap_in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

/// Bumped whenever an export changes meaning; the loader checks it.
const ABI_VERSION: i32 = 10;

thread_local! {
    static LAST_ERROR: RefCell<String> = RefCell::new(String::new());
}

/// The status of a call that succeeded; a failed one returns ErrorKind::code.
const OK: i32 = 0;

fn status(r: Result<()>) -> i32 {
    match r {
        Ok(()) => OK,
        Err(e) => {
            let code = e.kind.code();
            LAST_ERROR.with(|s| *s.borrow_mut() = e.message);
            code
        }
    }
}

#[no_mangle]
pub extern "C" fn fm_abi_version() -> i32 {
    ABI_VERSION
}

#[no_mangle]
pub extern "C" fn fm_simd() -> i32 {
    fedmix_core::kernels::SIMD as i32
}

#[no_mangle]
pub extern "C" fn fm_last_error_ptr() -> *const u8 {
    LAST_ERROR.with(|s| s.borrow().as_ptr())
}

#[no_mangle]
pub extern "C" fn fm_last_error_len() -> usize {
    LAST_ERROR.with(|s| s.borrow().len())
}

/// Frees the last error message once TypeScript has read it.
#[no_mangle]
pub extern "C" fn fm_clear_error() {
    LAST_ERROR.with(|s| *s.borrow_mut() = String::new());
}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1), 16).ok()
}

/// 16-byte aligned block of `bytes` bytes, or null when memory cannot grow.
#[no_mangle]
pub extern "C" fn fm_alloc(bytes: usize) -> *mut u8 {
    match layout(bytes) {
        Some(l) => unsafe { alloc(l) },
        None => std::ptr::null_mut(),
    }
}

/// # Safety
/// `ptr` must come from fm_alloc with the same `bytes`, and be freed once.
#[no_mangle]
pub unsafe extern "C" fn fm_free(ptr: *mut u8, bytes: usize) {
    if !ptr.is_null() {
        if let Some(l) = layout(bytes) {
            dealloc(ptr, l);
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

unsafe fn optional(ptr: *const f64, len: usize) -> Option<Vec<f64>> {
    if ptr.is_null() {
        None
    } else {
        Some(f64s(ptr, len).to_vec())
    }
}

unsafe fn data<'a>(ptr: *const f64, n: usize, d: usize) -> Result<Data<'a>> {
    Data::new(f64s(ptr, n * d), n, d)
}

fn seed(lo: u32, hi: u32) -> u64 {
    (hi as u64) << 32 | lo as u64
}
