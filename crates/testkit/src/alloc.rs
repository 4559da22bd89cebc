//! Counting a thread's allocations, for the tests that prove a hot loop
//! never allocates. The test binary installs the probe and runs the loop
//! inside [`count_allocations`]: only the calling thread, and only while
//! it runs `f`, is counted.
//!
//! ```
//! #[global_allocator]
//! static GLOBAL: rtshield_testkit::AllocProbe = rtshield_testkit::AllocProbe;
//!
//! let (n, _) = rtshield_testkit::count_allocations(|| 1 + 1);
//! assert_eq!(n, 0);
//! let (n, v) = rtshield_testkit::count_allocations(|| vec![0u8; 64]);
//! assert!(n >= 1 && v.len() == 64);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// `Some(n)`: this thread is watched and made n allocations so far.
    /// const-initialised: reading it never allocates.
    static WATCH: Cell<Option<u64>> = const { Cell::new(None) };
}

/// A global allocator that forwards to the system allocator and counts
/// each allocation, reallocation and deallocation of a watched thread.
pub struct AllocProbe;

impl AllocProbe {
    fn seen() {
        WATCH.with(|w| {
            if let Some(n) = w.get() {
                w.set(Some(n + 1));
            }
        });
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the count is a
// thread-local `Cell` that never allocates.
unsafe impl GlobalAlloc for AllocProbe {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        AllocProbe::seen();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        AllocProbe::seen();
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        AllocProbe::seen();
        unsafe { System.realloc(p, l, n) }
    }
}

/// Run `f` on the calling thread with its allocations counted: (how many,
/// what `f` returned). Counts nothing unless the binary's global allocator
/// is [`AllocProbe`].
pub fn count_allocations<T>(f: impl FnOnce() -> T) -> (u64, T) {
    WATCH.with(|w| w.set(Some(0)));
    let out = f();
    let n = WATCH.with(|w| w.take()).unwrap_or(0);
    (n, out)
}
