//! Block barriers (sm_70+): raw `unsafe fn`s over PTX's non-`.aligned` `barrier.sync` and
//! `barrier.red`. A safe wrapper that proves every thread arrives belongs to a group type.
//!
//! A barrier waits until the threads it names have all arrived, and orders memory: every
//! access a participating thread made before arriving is performed, relative to all
//! participating threads, before any of them continues. So data written to shared or
//! global memory before a barrier can be read by the other participants after it with
//! plain loads.
//!
//! Since Volta each thread arrives on its own, and the hardware counts threads, not
//! warps: a barrier in divergent code is fine as long as every thread gets there.
//! A thread that does not (it took a branch around the barrier, or returned early while
//! others wait) deadlocks the block; an exited thread no longer counts for the whole-block
//! forms. None of that can be checked by the compiler, hence `unsafe`; the CPU emulator
//! (`warpsafe::emu`, on the host) checks it when the kernel runs and reports a barrier
//! that some live thread never reaches, naming where that thread is instead.
//!
//! The `.aligned` forms (`bar.sync`, which CUDA's `__syncthreads` emits) additionally
//! promise that all threads of a warp execute the *same* barrier instruction. rustc's MIR
//! passes do not know LLVM's `convergent` and may duplicate a call into the two arms of a
//! branch; the promise would then be broken without a trace in the source. LLVM 22 has
//! non-aligned intrinsics for every form used here (`llvm.nvvm.barrier.cta.sync.all`,
//! `.sync.count`, `.red.popc.all`, `.red.and.all`, `.red.or.all`), so the aligned ones are
//! never used.
//!
//! | CUDA | warpsafe | PTX |
//! | --- | --- | --- |
//! | `__syncthreads()` | [`sync`] | `barrier.sync 0` |
//! | `__syncthreads_count(p)` | [`sync_count`] | `barrier.red.popc.u32 d, 0, p` |
//! | `__syncthreads_and(p)` | [`sync_and`] | `barrier.red.and.pred d, 0, p` |
//! | `__syncthreads_or(p)` | [`sync_or`] | `barrier.red.or.pred d, 0, p` |
//! | `asm("barrier.sync %0, %1;")` (named) | [`sync_named`] | `barrier.sync id, count` |
//!
//! Barrier 0 belongs to the whole-block functions; named barriers use ids 1 to 15.

use core::panic::Location;

use crate::arch;

/// The number of hardware barriers per block; named barriers use ids `1..BARRIERS`.
pub const BARRIERS: u32 = 16;

/// `barrier.sync 0` (CUDA's `__syncthreads`): waits for every thread of the block.
///
/// # Safety
/// Every thread of the block that has not exited calls this, the same number of times
/// (between two calls a thread must not wait at any other barrier that a thread still
/// waiting here would need); no other barrier function with id 0 runs at the same time.
/// Otherwise the block deadlocks.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync() {
    let _site = arch::site(c"barrier::sync", Location::caller());
    // SAFETY: forwarded from the caller.
    unsafe { arch::barrier_sync(0) }
}

/// `barrier.sync id, count`: a named barrier that completes once `count` threads of the
/// block have arrived at barrier `id`; lets a subset of the block (say two producer
/// warps and two consumer warps) synchronise without the rest.
///
/// # Safety
/// - `1 <= id < 16`; `count` is a non-zero multiple of 32 and at most the block's size
///   rounded up to a multiple of 32.
/// - Exactly `count` threads arrive at barrier `id` each time it is used, all passing the
///   same `count`, and the threads of one warp that arrive all belong to those `count`
///   (use whole warps). Too few threads deadlock; too many break the next use.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_named(id: u32, count: u32) {
    let _site = arch::site(c"barrier::sync_named", Location::caller());
    // SAFETY: forwarded from the caller.
    unsafe { arch::barrier_sync_count(id, count) }
}

/// `barrier.red.popc.u32 d, 0, p` (CUDA's `__syncthreads_count`): [`sync`], returning to
/// every thread the number of threads of the block whose `predicate` is true.
///
/// # Safety
/// As for [`sync`]; all threads of the block meet in this same function.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_count(predicate: bool) -> u32 {
    let _site = arch::site(c"barrier::sync_count", Location::caller());
    // SAFETY: forwarded from the caller.
    unsafe { arch::barrier_red_popc(0, predicate) }
}

/// `barrier.red.and.pred d, 0, p` (CUDA's `__syncthreads_and`): [`sync`], returning
/// whether `predicate` is true in every thread of the block.
///
/// # Safety
/// As for [`sync_count`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_and(predicate: bool) -> bool {
    let _site = arch::site(c"barrier::sync_and", Location::caller());
    // SAFETY: forwarded from the caller.
    unsafe { arch::barrier_red_and(0, predicate) }
}

/// `barrier.red.or.pred d, 0, p` (CUDA's `__syncthreads_or`): [`sync`], returning
/// whether `predicate` is true in any thread of the block.
///
/// # Safety
/// As for [`sync_count`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_or(predicate: bool) -> bool {
    let _site = arch::site(c"barrier::sync_or", Location::caller());
    // SAFETY: forwarded from the caller.
    unsafe { arch::barrier_red_or(0, predicate) }
}
