//! C ABI of fedmix-core for WebAssembly. Thin by design: it owns allocation,
//! turns `Result` into an i32 status (0 ok, else ErrorKind::code) with the message
//! readable through fm_last_error_*, and hands models out as opaque handles that
//! TypeScript frees. Running out of memory is a status too, never a trap (see
//! the reserve below and fedmix_core::alloc). Inputs that a user shapes (initial parameters, imported
//! models) travel as (pointer, length) pairs and the core checks their shapes;
//! a null pointer means "not given". Data and output buffers are sized by the
//! shapes passed alongside them.

use fedmix_core::{alloc as buffers, Data, Error, Result};
use std::alloc::{dealloc, GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::slice;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

mod assignment;
mod constants;
mod dem;
mod dirichlet_multinomial;
mod fedgem;
mod gaussian_costs;
mod gmm;
mod hem;
mod kernels;
mod kmeans;
mod mdm;
mod nn;
mod ocsvm;
mod pca;
mod rng;
mod special;

/// The system allocator, counting bytes in use so tests can prove that every
/// call, failed ones included, gives back all it took, and keeping a reserve.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// Memory kept free for the small allocations the core makes without checking
/// (a feature vector, an error message, a handle's box): large buffers are
/// fallible (fedmix_core::alloc), but a small allocation that finds no memory
/// would abort the instance. When one fails, the reserve is given back and the
/// allocation retried, so the call ends normally or with a status. Every call
/// that returns a status first takes the reserve again, and refuses to start
/// (an allocation error) when memory cannot hold it. Not counted as in use.
/// TypeScript's buffers (fm_alloc) never draw on it: a failed one is a typed
/// error already, and the reserve stays for the calls.
pub(crate) const RESERVE: usize = 4 << 20;
/// Requests up to this size may draw on the reserve; larger ones are the core's
/// fallible buffers and are refused while the reserve is spent, so that they
/// cannot take the memory the small ones were promised.
const SMALL: usize = 1 << 20;

static RESERVE_PTR: AtomicUsize = AtomicUsize::new(0);
/// The reserve was given up to a failed allocation and not yet taken back.
static RESERVE_SPENT: AtomicBool = AtomicBool::new(false);

fn reserve_layout() -> Layout {
    Layout::from_size_align(RESERVE, 16).expect("a valid layout")
}

/// Whether the reserve is held, taking it if it is not and memory allows.
fn hold_reserve() -> bool {
    if RESERVE_PTR.load(Ordering::Relaxed) != 0 {
        return true;
    }
    let p = unsafe { System.alloc(reserve_layout()) };
    if p.is_null() {
        return false;
    }
    RESERVE_PTR.store(p as usize, Ordering::Relaxed);
    RESERVE_SPENT.store(false, Ordering::Relaxed);
    true
}

/// Gives the reserve back for a small request that failed; false when there is none.
fn spend_reserve(size: usize) -> bool {
    let p = RESERVE_PTR.swap(0, Ordering::Relaxed);
    if p == 0 || size > SMALL {
        RESERVE_PTR.store(p, Ordering::Relaxed);
        return false;
    }
    unsafe { System.dealloc(p as *mut u8, reserve_layout()) };
    RESERVE_SPENT.store(true, Ordering::Relaxed);
    true
}

/// Whether a request must be refused: a large one while the reserve is spent.
fn refused(size: usize) -> bool {
    size > SMALL && RESERVE_SPENT.load(Ordering::Relaxed)
}

impl Counting {
    /// An allocation, counted; `may_spend`: whether it may draw on the reserve.
    unsafe fn take(&self, l: Layout, may_spend: bool) -> *mut u8 {
        if refused(l.size()) {
            return std::ptr::null_mut();
        }
        let mut p = System.alloc(l);
        if p.is_null() && may_spend && spend_reserve(l.size()) {
            p = System.alloc(l);
        }
        if !p.is_null() {
            IN_USE.fetch_add(l.size(), Ordering::Relaxed);
        }
        p
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        self.take(l, true)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        IN_USE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        if new_size > l.size() && refused(new_size) {
            return std::ptr::null_mut();
        }
        let mut q = System.realloc(p, l, new_size);
        if q.is_null() && spend_reserve(new_size) {
            q = System.realloc(p, l, new_size);
        }
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
const ABI_VERSION: i32 = 13;

thread_local! {
    static LAST_ERROR: RefCell<String> = RefCell::new(String::new());
}

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

/// 16-byte aligned block of `bytes` bytes, or null when memory cannot grow
/// (the reserve is not drawn on: see RESERVE).
#[no_mangle]
pub extern "C" fn fm_alloc(bytes: usize) -> *mut u8 {
    match layout(bytes) {
        Some(l) => unsafe { ALLOCATOR.take(l, false) },
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
