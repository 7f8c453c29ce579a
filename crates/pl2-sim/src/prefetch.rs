//! Software prefetch: a hint that asks the CPU to start loading a cache line the
//! simulation will read soon.
//!
//! Large runs keep hundreds of thousands of frames alive, far more than the last-level
//! cache holds, and each frame is touched again only after many other events; so most
//! touches would wait for DRAM. Where the next touch is known in advance (the frame
//! behind the one a queue or link just released, the state the next event works on), a
//! prefetch issued then overlaps that wait with other work. A prefetch never changes
//! what the program computes.

/// Asks the CPU to bring the cache line holding `*r` into all cache levels.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_addr((r as *const T).cast::<u8>());
}

/// Prefetches every cache line `*r` spans (for records larger than a line).
#[inline(always)]
pub fn prefetch_all<T>(r: &T) {
    let base = (r as *const T).cast::<u8>();
    let mut off = 0;
    while off < std::mem::size_of::<T>() {
        prefetch_addr(base.wrapping_add(off));
        off += 64;
    }
}

/// The one place with `unsafe`: the prefetch instruction. A no-op on other targets.
#[inline(always)]
fn prefetch_addr(addr: *const u8) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` is only a hint: it does not access memory architecturally
    // and never faults, whatever the address.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(addr.cast::<i8>());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = addr;
}
