//! The heap of a feature module (a module of the split build other than the
//! core, scripts/build-wasm.sh): it has no allocator, reserve or error state of
//! its own but uses the core module's, imported (the loader, ts/wasm/loader.ts,
//! passes the core's exports), so that every module allocates from one heap.

use std::alloc::{GlobalAlloc, Layout};
use std::mem::ManuallyDrop;

#[link(wasm_import_module = "core")]
extern "C" {
    fn fm_heap_alloc(size: usize, align: usize) -> *mut u8;
    fn fm_heap_dealloc(ptr: *mut u8, size: usize, align: usize);
    fn fm_heap_realloc(ptr: *mut u8, size: usize, align: usize, new_size: usize) -> *mut u8;
    fn fm_heap_hold_reserve() -> i32;
    fn fm_heap_set_error(ptr: *mut u8, len: usize, capacity: usize);
}

struct Borrowed;

unsafe impl GlobalAlloc for Borrowed {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        fm_heap_alloc(l.size(), l.align())
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        fm_heap_dealloc(p, l.size(), l.align())
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        fm_heap_realloc(p, l.size(), l.align(), new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Borrowed = Borrowed;

/// Whether the core's reserve is held (see heap.rs).
pub(crate) fn hold_reserve() -> bool {
    unsafe { fm_heap_hold_reserve() != 0 }
}

/// Hands `message` to the core, which keeps it as the last error.
pub(crate) fn set_error(message: String) {
    let mut m = ManuallyDrop::new(message);
    unsafe { fm_heap_set_error(m.as_mut_ptr(), m.len(), m.capacity()) }
}
