//! The heap of the core module: the allocator every module of the split build
//! uses (feature modules import it, see borrowed.rs), the reserve of memory
//! kept for every call, and the last error message. One heap for all modules
//! means a handle made by one module can be read and freed by another, and
//! fm_heap_in_use counts everything.

use fedmix_core::Error;
use std::alloc::{dealloc, GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
pub const RESERVE: usize = 4 << 20;
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
pub(crate) fn hold_reserve() -> bool {
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
pub extern "C" fn fm_heap_in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

thread_local! {
    static LAST_ERROR: RefCell<String> = RefCell::new(String::new());
}

/// Keeps `message` as the last error (TypeScript reads it through fm_last_error_*).
pub(crate) fn set_error(message: String) {
    LAST_ERROR.with(|s| *s.borrow_mut() = message);
}

pub extern "C" fn fm_last_error_ptr() -> *const u8 {
    LAST_ERROR.with(|s| s.borrow().as_ptr())
}

pub extern "C" fn fm_last_error_len() -> usize {
    LAST_ERROR.with(|s| s.borrow().len())
}

/// Frees the last error message once TypeScript has read it.
pub extern "C" fn fm_clear_error() {
    LAST_ERROR.with(|s| *s.borrow_mut() = String::new());
}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1), 16).ok()
}

/// 16-byte aligned block of `bytes` bytes, or null when memory cannot grow
/// (the reserve is not drawn on: see RESERVE).
pub extern "C" fn fm_alloc(bytes: usize) -> *mut u8 {
    match layout(bytes) {
        Some(l) => unsafe { ALLOCATOR.take(l, false) },
        None => std::ptr::null_mut(),
    }
}

/// # Safety
/// `ptr` must come from fm_alloc with the same `bytes`, and be freed once.
pub unsafe extern "C" fn fm_free(ptr: *mut u8, bytes: usize) {
    if !ptr.is_null() {
        if let Some(l) = layout(bytes) {
            dealloc(ptr, l);
        }
    }
}

/// The heap, for the feature modules' global allocator (borrowed.rs): a
/// request of `size` bytes aligned to `align`, counted and drawing on the
/// reserve as the core's own requests do; null when memory cannot serve it.
///
/// # Safety
/// `align` is a power of two and `size`, rounded up to it, does not overflow.
pub unsafe extern "C" fn fm_heap_alloc(size: usize, align: usize) -> *mut u8 {
    ALLOCATOR.alloc(Layout::from_size_align_unchecked(size, align))
}

/// # Safety
/// `ptr` came from fm_heap_alloc or fm_heap_realloc with this size and alignment.
pub unsafe extern "C" fn fm_heap_dealloc(ptr: *mut u8, size: usize, align: usize) {
    ALLOCATOR.dealloc(ptr, Layout::from_size_align_unchecked(size, align))
}

/// # Safety
/// As fm_heap_dealloc, and `new_size` rounded up to `align` does not overflow.
pub unsafe extern "C" fn fm_heap_realloc(ptr: *mut u8, size: usize, align: usize, new_size: usize) -> *mut u8 {
    ALLOCATOR.realloc(ptr, Layout::from_size_align_unchecked(size, align), new_size)
}

/// Takes the reserve for a feature module's call (1), or says memory cannot hold it (0).
pub extern "C" fn fm_heap_hold_reserve() -> i32 {
    hold_reserve() as i32
}

/// Takes over a feature module's error message: `len` bytes of UTF-8 at `ptr`
/// in a block of `capacity` bytes from this heap, which it now frees.
///
/// # Safety
/// The three are a String's parts, given up by its owner.
pub unsafe extern "C" fn fm_heap_set_error(ptr: *mut u8, len: usize, capacity: usize) {
    set_error(String::from_raw_parts(ptr, len, capacity));
}
