//! Warp-level reduce and scans.
//!
//! Two layers, as in the rest of warpsafe:
//!
//! - **Safe**: [`reduce`], [`inclusive_scan`] and [`exclusive_scan`] work over the caller's
//!   [`Warp`] (every lane of it that exists in the block, so the last warp of a block of,
//!   say, 100 threads has 4 lanes). They are the group layer's collectives
//!   ([`Group::reduce`], ...), with its run-time check that every lane of the warp is
//!   present.
//! - **Raw**: [`reduce_full`], [`inclusive_scan_full`] and [`exclusive_scan_full`] name all
//!   32 lanes with a constant mask and skip the presence check (one `activemask`, a compare
//!   and a branch per call). They are for code that proves by other means that the whole
//!   warp arrives, as the block and grid reductions do from the block's shape.
//!
//! All of them combine in lane (rank) order: `combine(a, b)` always has the lower lanes'
//! values in `a`, so a non-commutative operator gets the ordered result, and the order of
//! the combinations is fixed, so float results are reproducible bit for bit.

use bytemuck::Pod;

use crate::arch::{FULL_MASK, WARP_SIZE};
use crate::group::{Coalesced, Group, Warp};
use crate::op::Operator;
use crate::thread;
use crate::warp as raw;

/// Reduces `value` over the caller's warp in lane order; every lane gets the result.
/// Every lane of the warp that exists must call it together (checked at run time, see
/// [`crate::group`]).
#[inline(always)]
#[track_caller]
pub fn reduce<T: Pod, Op: Operator<T>>(value: T, op: Op) -> T {
    Warp::this().reduce(value, op)
}

/// Inclusive scan over the caller's warp in lane order: lane `i` gets `combine` of lanes
/// `0..=i`. Checked like [`reduce`].
#[inline(always)]
#[track_caller]
pub fn inclusive_scan<T: Pod, Op: Operator<T>>(value: T, op: Op) -> T {
    Warp::this().inclusive_scan(value, op)
}

/// Exclusive scan over the caller's warp in lane order: lane `i` gets `combine` of lanes
/// `0..i`, lane 0 the identity. Checked like [`reduce`].
#[inline(always)]
#[track_caller]
pub fn exclusive_scan<T: Pod, Op: Operator<T>>(value: T, op: Op) -> T {
    Warp::this().exclusive_scan(value, op)
}

/// Reduces `value` over the lanes converged with the caller at this call (a
/// [`Coalesced`] group, CUDA's `coalesced_threads()`), for use inside a lane-dependent
/// branch: the lanes that took the branch together reduce their values. Returns the
/// result (the same in each of those lanes) and the mask of the lanes it covers. Lanes
/// that the scheduler runs through the branch separately get separate results, each
/// over its own mask; use [`Warp::reduce_where`] from converged code to get one result
/// for all the lanes of a predicate.
#[inline(always)]
#[track_caller]
pub fn reduce_converged<T: Pod, Op: Operator<T>>(value: T, op: Op) -> (T, u32) {
    let group = Coalesced::active();
    (group.reduce(value, op), group.mask())
}

/// Reduces `value` over all 32 lanes with no presence check; every lane gets the same
/// bits. It is [`raw::reduce_sync`] over the full mask: `redux.sync` for 32-bit integer
/// operators on sm_80+, else five `shfl.sync.bfly` steps (distances 1, 2, 4, 8, 16), after
/// the step of distance `d` each lane holding the combination of its aligned run of `2d`
/// lanes, lower lanes first.
///
/// # Safety
/// All 32 lanes of the caller's warp exist (the block's thread count reaches the end of
/// this warp) and all of them reach this same call; none has exited or is waiting on
/// another path. A call outside any lane-dependent branch, in a warp that is full, keeps
/// this.
#[inline(always)]
pub unsafe fn reduce_full<T: Pod, Op: Operator<T>>(value: T, op: Op) -> T {
    // SAFETY: the caller guarantees that all 32 lanes arrive, so FULL_MASK is exact.
    unsafe { raw::reduce_sync(FULL_MASK, value, op) }
}

/// Inclusive scan over all 32 lanes (Hillis-Steele with `shfl.sync.up`, five steps) with
/// no presence check: lane `i` gets `combine` of lanes `0..=i`.
///
/// # Safety
/// As for [`reduce_full`].
#[inline(always)]
pub unsafe fn inclusive_scan_full<T: Pod, Op: Operator<T>>(value: T, op: Op) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { segmented_inclusive_scan_full(value, 0, op) }
}

/// Segmented inclusive scan over all 32 lanes with no presence check: lane `i` gets
/// `combine` of lanes `start..=i`, where `start` (at most `i`) is the calling lane's
/// segment start, the nearest lane at or below it that starts afresh (the same tree as
/// [`inclusive_scan_full`], whose segment starts at lane 0, with the steps that would
/// reach below `start` left out).
///
/// # Safety
/// As for [`reduce_full`]; every lane's `start` is at most its lane index and is the
/// `start` of every lane between it and the calling lane.
#[inline(always)]
pub unsafe fn segmented_inclusive_scan_full<T: Pod, Op: Operator<T>>(value: T, start: u32, op: Op) -> T {
    let lane = thread::lane_id();
    let mut acc = value;
    let mut distance = 1;
    while distance < WARP_SIZE {
        // SAFETY: as in `reduce_full`; lanes below `distance` get their own value back.
        let below = unsafe { raw::shfl_up_sync(FULL_MASK, acc, distance, WARP_SIZE) };
        if lane >= start + distance {
            acc = op.combine(below, acc);
        }
        distance *= 2;
    }
    acc
}

/// Exclusive scan over all 32 lanes with no presence check: lane `i` gets `combine` of
/// lanes `0..i`, lane 0 the identity.
///
/// # Safety
/// As for [`reduce_full`].
#[inline(always)]
pub unsafe fn exclusive_scan_full<T: Pod, Op: Operator<T>>(value: T, op: Op) -> T {
    // SAFETY: forwarded from the caller.
    let inclusive = unsafe { inclusive_scan_full(value, op) };
    // SAFETY: as in `reduce_full`.
    let below = unsafe { raw::shfl_up_sync(FULL_MASK, inclusive, 1, WARP_SIZE) };
    if thread::lane_id() == 0 {
        op.identity()
    } else {
        below
    }
}
