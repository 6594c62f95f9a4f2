//! Block-level reduce and scans, for any block size from 1 to 1024 threads.
//!
//! Threads are ranked by [`thread::linear_thread_idx`], the order in which the hardware
//! packs them into warps, so 2-D and 3-D blocks work too. The block's size need not be a
//! multiple of 32: the last warp may have from 1 to 32 lanes.
//!
//! # How
//! 1. Each warp reduces (or scans) its lanes with shuffles. A full warp uses the raw
//!    full-mask shuffles ([`super::warp::reduce_full`]): the block's shape proves that
//!    all 32 lanes exist, and the function's contract that they all arrive. The partial
//!    last warp uses the group layer's [`crate::group::Warp`], whose mask holds exactly
//!    the lanes that exist.
//! 2. One lane per warp writes the warp's total to `scratch[warp]`; a block barrier.
//! 3. Warp 0 combines (reduce) or scans (scans) the at most 32 warp totals with full-mask
//!    shuffles and writes the block's result (`scratch[64]`) or each warp's prefix
//!    (`scratch[32 + warp]`); a block barrier.
//! 4. Every thread reads its result.
//!
//! A block of at most 32 threads is one warp: steps 2 to 4 are skipped and no barrier
//! runs. Otherwise each call runs [`barrier::sync`] twice. [`reduce_to_leader`] stops
//! after step 3 (one barrier) and leaves the result in warp 0 only, for callers that need
//! it in one thread, such as the grid reductions.
//!
//! Operands are combined in rank order, so non-commutative operators work and float
//! results are the same bits from run to run for a given block size.
//!
//! # Scratch
//! The caller passes block-shared storage of [`SCRATCH_LEN`] elements, for example
//! `warpsafe::shared! { static SCRATCH: [f32; warpsafe::reduce::block::SCRATCH_LEN]; }`
//! and `SCRATCH.slice()`, or the [`crate::shared::dynamic`] window. Consecutive calls may
//! use the same scratch without a barrier between them: the warp totals (slots 0-31),
//! the warp prefixes (32-63) and the block result (64) are laid out so that a write of
//! one call can never meet a read of the previous one (each of those reads is ordered
//! before the next call's writes by one of the previous call's two barriers).

use bytemuck::Pod;

use super::warp;
use crate::arch::WARP_SIZE;
use crate::barrier;
use crate::op::Operator;
use crate::shared::SharedSlice;
use crate::thread;

/// Elements of block-shared scratch that [`reduce`], [`inclusive_scan`] and
/// [`exclusive_scan`] need: 32 warp totals, 32 warp prefixes and the block's result.
pub const SCRATCH_LEN: usize = 65;

/// Elements of block-shared scratch that [`reduce_to_leader`] needs: the 32 warp totals.
pub const LEADER_SCRATCH_LEN: usize = WARP_SIZE as usize;

/// Slot of the first warp prefix.
const PREFIXES: usize = 32;
/// Slot of the block's result.
const RESULT: usize = 64;

/// Where the caller stands in its block.
#[derive(Clone, Copy)]
struct Position {
    /// Threads in the block.
    threads: u32,
    /// The caller's warp.
    warp: u32,
    /// The caller's lane.
    lane: u32,
}

impl Position {
    #[inline(always)]
    fn here() -> Position {
        Position { threads: thread::block_threads(), warp: thread::warp_idx(), lane: thread::lane_id() }
    }

    /// Number of warps in the block.
    #[inline(always)]
    fn warps(self) -> u32 {
        self.threads.div_ceil(WARP_SIZE)
    }

    /// Whether all 32 lanes of the caller's warp exist.
    #[inline(always)]
    fn warp_is_full(self) -> bool {
        (self.warp + 1) * WARP_SIZE <= self.threads
    }

    /// The highest lane of the caller's warp that exists.
    #[inline(always)]
    fn last_lane(self) -> u32 {
        (self.threads - self.warp * WARP_SIZE).min(WARP_SIZE) - 1
    }
}

/// Reduces `value` over every thread of the block, in rank order, and returns the result
/// to every thread.
///
/// # Safety
/// - Every thread of the block calls this, at the same call site, and none has exited: a
///   block of more than 32 threads meets at two [`barrier::sync`]s inside.
/// - `scratch` is the same block-shared storage in every thread, has at least
///   [`SCRATCH_LEN`] elements (a shorter one makes the bounds check trap), and no other
///   code reads or writes it between the first thread's entry and the last thread's
///   return (earlier calls of this module's functions excepted, see the module docs).
#[inline(always)]
pub unsafe fn reduce<T: Pod, Op: Operator<T>>(scratch: SharedSlice<T>, value: T, op: Op) -> T {
    // SAFETY: forwarded from the caller; the second barrier below separates this use of
    // the warp-total slots from the next call's writes.
    let total = unsafe { reduce_to_leader(scratch, value, op) };
    let at = Position::here();
    if at.warps() == 1 {
        return total;
    }
    if at.warp == 0 && at.lane == 0 {
        // SAFETY: only this thread writes RESULT; its readers of the previous call
        // passed this call's first barrier before this.
        unsafe { scratch.write(RESULT, total) };
    }
    // SAFETY: every thread of the block gets here (contract; the branch above is uniform
    // over the block).
    unsafe { barrier::sync() };
    // SAFETY: written before the barrier; rewritten only after the next call's first one.
    unsafe { scratch.read(RESULT) }
}

/// [`reduce`] with one barrier instead of two: the result is returned to the threads of
/// warp 0 only (the others get the operator's identity). The grid reductions use it: only
/// thread 0 publishes a block's partial.
///
/// # Safety
/// As for [`reduce`], except that `scratch` needs only [`LEADER_SCRATCH_LEN`] elements;
/// and a block barrier separates this call from the next use of `scratch` (warp 0 may
/// still be reading the warp totals when other warps return).
#[inline(always)]
pub unsafe fn reduce_to_leader<T: Pod, Op: Operator<T>>(scratch: SharedSlice<T>, value: T, op: Op) -> T {
    let at = Position::here();
    let warp_total = if at.warp_is_full() {
        // SAFETY: the warp is full (uniform over it) and all of the block's threads call
        // this (contract).
        unsafe { warp::reduce_full(value, op) }
    } else {
        warp::reduce(value, op)
    };
    if at.warps() == 1 {
        return warp_total;
    }
    if at.lane == 0 {
        // SAFETY: one writer per slot; earlier readers are behind a barrier (contract).
        unsafe { scratch.write(at.warp as usize, warp_total) };
    }
    // SAFETY: every thread of the block gets here (the branch above is uniform).
    unsafe { barrier::sync() };
    if at.warp != 0 {
        return op.identity();
    }
    let total = if at.lane < at.warps() {
        // SAFETY: written before the barrier; the next write comes after a barrier.
        unsafe { scratch.read(at.lane as usize) }
    } else {
        op.identity()
    };
    // SAFETY: the block has more than 32 threads, so warp 0 is full, all lanes here.
    unsafe { warp::reduce_full(total, op) }
}

/// Inclusive scan over the block in rank order: the thread of rank `r` gets `combine` of
/// ranks `0..=r`.
///
/// # Safety
/// As for [`reduce`].
#[inline(always)]
pub unsafe fn inclusive_scan<T: Pod, Op: Operator<T>>(scratch: SharedSlice<T>, value: T, op: Op) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { scan::<T, Op, true>(scratch, value, op) }
}

/// Exclusive scan over the block in rank order: the thread of rank `r` gets `combine` of
/// ranks `0..r`, rank 0 the identity.
///
/// # Safety
/// As for [`reduce`].
#[inline(always)]
pub unsafe fn exclusive_scan<T: Pod, Op: Operator<T>>(scratch: SharedSlice<T>, value: T, op: Op) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { scan::<T, Op, false>(scratch, value, op) }
}

/// The block scan; `INCLUSIVE` picks the kind.
///
/// # Safety
/// As for [`reduce`].
#[inline(always)]
unsafe fn scan<T: Pod, Op: Operator<T>, const INCLUSIVE: bool>(
    scratch: SharedSlice<T>,
    value: T,
    op: Op,
) -> T {
    let at = Position::here();
    let in_warp = match (at.warp_is_full(), INCLUSIVE) {
        // SAFETY: the warp is full and all of the block's threads call this (contract).
        (true, true) => unsafe { warp::inclusive_scan_full(value, op) },
        // SAFETY: as above.
        (true, false) => unsafe { warp::exclusive_scan_full(value, op) },
        (false, true) => warp::inclusive_scan(value, op),
        (false, false) => warp::exclusive_scan(value, op),
    };
    if at.warps() == 1 {
        return in_warp;
    }
    if at.lane == at.last_lane() {
        let warp_total = if INCLUSIVE { in_warp } else { op.combine(in_warp, value) };
        // SAFETY: one lane per warp writes its own slot; the previous call's reads of it
        // came before that call's second barrier.
        unsafe { scratch.write(at.warp as usize, warp_total) };
    }
    // SAFETY: every thread of the block gets here (the branch above is uniform).
    unsafe { barrier::sync() };
    if at.warp == 0 {
        let total = if at.lane < at.warps() {
            // SAFETY: written before the barrier.
            unsafe { scratch.read(at.lane as usize) }
        } else {
            op.identity()
        };
        // SAFETY: the block has more than 32 threads, so warp 0 is full, all lanes here.
        let prefix = unsafe { warp::exclusive_scan_full(total, op) };
        if at.lane < at.warps() {
            // SAFETY: lane `i` alone writes prefix slot `i`; the previous call's readers
            // passed this call's first barrier first.
            unsafe { scratch.write(PREFIXES + at.lane as usize, prefix) };
        }
    }
    // SAFETY: as for the first barrier.
    unsafe { barrier::sync() };
    // SAFETY: written before the barrier; rewritten only after the next call's first one.
    let prefix = unsafe { scratch.read(PREFIXES + at.warp as usize) };
    op.combine(prefix, in_warp)
}
