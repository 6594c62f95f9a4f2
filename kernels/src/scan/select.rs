//! Selection (stream compaction) and partition in one pass: a device-wide scan of the
//! per-tile counts of kept elements ([`super::lookback`] over `u64`), then each warp
//! writes its kept elements at their rank.
//!
//! A warp stages its segment of the tile ([`tile::load`]: coalesced 16-byte loads) and
//! then reads it *striped*: in step `i` lane `l` takes element `32 i + l`, so the 32 lanes
//! of a step hold 32 consecutive elements. One `vote.ballot` per step says which of them
//! are kept; a kept element's rank is the warp's base (from the look-back) plus the kept
//! elements of the earlier steps plus the kept lanes below it in its step (`popc` of the
//! ballot under `%lanemask_lt`). So the kept elements of a step are written by
//! consecutive lanes to consecutive addresses: coalesced stores with no compaction pass
//! through shared memory, and no bank conflicts (the striped reads of the staging hit 32
//! consecutive banks). The ballots of the steps wait in shared memory (one word per step
//! per warp) while the block looks back.
//!
//! - *Select*: the kept elements, in input order, at `output[0..count]`.
//! - *Partition*: the kept elements as for select, and the others at the end of `output`
//!   in *reverse* input order (the first rejected element at `output[len - 1]`), so the
//!   whole output is a permutation of the input written in one pass without knowing the
//!   count in advance (the arrangement CUB's `DevicePartition::If` uses).
//!
//! An element is kept when a [`Predicate`] holds for it, or (the *flagged* form) when its
//! byte in a separate flags buffer is non-zero. The count is written to `selected[0]` by
//! the block of the last tile; counts are `u64`. Writes past `output_len` are dropped, so
//! an output buffer too small for what is kept is never overrun (the host compares the
//! count with the buffer and reports it).

use bytemuck::{Pod, Zeroable};

use super::device::segment_start;
use super::lookback::{self, TileStatus};
use super::tile::{self, Stage};
use crate::arch::{FULL_MASK, WARP_SIZE};
use crate::op::Sum;
use crate::shared;
use crate::thread;
use crate::warp as raw;

/// Decides which elements a selection keeps. Any `Copy` type can be one; a predicate
/// passed to a kernel as a parameter (as [`crate::select_kernels!`] does) must also be
/// `bytemuck::Pod`, which lets it carry values such as a threshold.
pub trait Predicate<T>: Copy {
    /// Whether `value` is kept.
    fn keep(self, value: T) -> bool;
}

/// Keeps the elements below the bound: `value < self.0` (a NaN is never kept, and no
/// element is kept for a NaN bound).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(transparent)]
pub struct LessThan<T>(pub T);

/// Keeps the elements above the bound: `value > self.0` (NaNs as for [`LessThan`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(transparent)]
pub struct GreaterThan<T>(pub T);

// SAFETY: `repr(transparent)` over a `Pod` field: the same layout, no padding, every bit
// pattern valid, zero included.
unsafe impl<T: Pod> Zeroable for LessThan<T> {}
// SAFETY: as above.
unsafe impl<T: Pod> Pod for LessThan<T> {}
// SAFETY: as above.
unsafe impl<T: Pod> Zeroable for GreaterThan<T> {}
// SAFETY: as above.
unsafe impl<T: Pod> Pod for GreaterThan<T> {}

impl<T: PartialOrd + Copy> Predicate<T> for LessThan<T> {
    #[inline(always)]
    fn keep(self, value: T) -> bool {
        value < self.0
    }
}

impl<T: PartialOrd + Copy> Predicate<T> for GreaterThan<T> {
    #[inline(always)]
    fn keep(self, value: T) -> bool {
        value > self.0
    }
}

/// Bytes of a thread's run in a selection: 64 (16 `f32`s; a warp's segment is 2 KiB, 16
/// striped steps).
pub const RUN_BYTES: usize = 64;

/// Elements each thread of a selection of `T` holds.
pub const fn items_per_thread<T>() -> usize {
    tile::items_per_thread::<T>(RUN_BYTES)
}

/// Elements one tile of a selection of `T` covers with `threads` per block.
pub const fn tile_elements<T>(threads: u32) -> u64 {
    tile::tile_elements::<T>(RUN_BYTES, threads)
}

/// Bytes of dynamic shared memory a selection of `T` needs with `threads` per block: the
/// look-back's (over `u64` counts), the tile's staging, then one ballot word per striped
/// step of each warp.
pub const fn shared_bytes<T>(threads: u32) -> usize {
    ballots_offset::<T>(threads) + (threads / WARP_SIZE) as usize * items_per_thread::<T>() * 4
}

/// Where the warps' ballot words start in the dynamic shared memory.
const fn ballots_offset<T>(threads: u32) -> usize {
    lookback::prefix_bytes::<u64>() + tile::staging_bytes::<T>(RUN_BYTES, threads)
}

/// `form` bit: keep by the flags buffer (non-zero byte) instead of the predicate.
pub const FLAGGED: u32 = 1;
/// `form` bit: partition (write the rejected elements too) instead of select.
pub const PARTITION: u32 = 2;

/// Selects or partitions `input[..len]` into `output[..output_len]` (module docs), by
/// `predicate` or, with [`FLAGGED`] in `form`, by `flags[..len]`; writes the count of kept
/// elements to `selected[0]`. `ITEMS` must be [`items_per_thread`]`::<T>()`.
///
/// # Safety
/// - Launched as [`super::device::scan`] is for `len` elements of `T` (one block when
///   `len` is 0), with [`shared_bytes`]`::<T>(threads)` bytes of dynamic shared memory.
/// - `input` is valid for reads of `len` elements (and `flags` of `len` bytes when
///   `form` has [`FLAGGED`]), `output` for writes of `output_len` elements, `selected` of
///   one `u64`, all aligned; `output` overlaps neither `input` nor `flags`; nothing else
///   accesses them during the launch.
/// - `status` (over `u64`) and `counter` as for [`super::device::scan`].
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the kernel's parameter list, one to one
pub unsafe fn select<T: Pod, P: Predicate<T>, S: TileStatus<u64>, const ITEMS: usize>(
    input: *const T,
    flags: *const u8,
    len: u64,
    output: *mut T,
    output_len: u64,
    selected: *mut u64,
    status: S,
    counter: *mut u32,
    form: u32,
    predicate: P,
) {
    let (ticket, scratch) = lookback::scratch::<u64>();
    let stage = Stage::<T>::of_warp::<ITEMS>(lookback::prefix_bytes::<u64>());
    let threads = thread::block_threads();
    let ballots = shared::dynamic_part::<u32>(
        ballots_offset::<T>(threads) + thread::warp_idx() as usize * ITEMS * 4,
        ITEMS,
    );
    let tile_len = threads as u64 * ITEMS as u64;
    // An empty input has one (empty) tile, whose block writes the count 0.
    let tiles = len.div_ceil(tile_len).max(1);
    // SAFETY: forwarded from the caller: one block per tile, every thread here once.
    let tile = unsafe { lookback::take_tile(counter, tiles, ticket) };
    let segment = segment_start::<ITEMS>(tile);
    // SAFETY: every lane of the (full) warp, the warp's stage; the input holds `len`
    // elements, not written during the launch.
    unsafe { tile::load::<T, ITEMS>(input, segment, len, T::zeroed(), stage) };
    let lane = thread::lane_id();
    let flagged = form & FLAGGED != 0;
    // Step i: which of elements segment + 32 i .. + 32 are kept (bit l: element 32 i + l).
    let mut count = 0u64;
    for i in 0..ITEMS {
        let e = i * WARP_SIZE as usize + lane as usize;
        let index = segment + e as u64;
        let keep = index < len
            && if flagged {
                // SAFETY: flagged: `flags` holds `len` bytes, not written during the launch.
                unsafe { flags.add(index as usize).read() != 0 }
            } else {
                // SAFETY: e < 32 * ITEMS; staged by `load` (which ends with a warp barrier).
                predicate.keep(unsafe { stage.read_element::<ITEMS>(e) })
            };
        // SAFETY: the whole warp is here (a full warp, every lane runs every step).
        let ballot = unsafe { raw::ballot_sync(FULL_MASK, keep) };
        if lane == i as u32 % WARP_SIZE {
            // SAFETY: word i < ITEMS of this warp's ballots, written by this lane alone;
            // read after the block barriers of the look-back.
            unsafe { ballots.write_unchecked(i, ballot) };
        }
        count += ballot.count_ones() as u64;
    }
    // Only the warp's last lane brings the warp's count, so every lane's exclusive prefix
    // is the count kept before the warp's segment.
    let mine = if lane == WARP_SIZE - 1 { count } else { 0 };
    // SAFETY: forwarded from the caller; every thread of the block is here.
    let (warp_base, total) = unsafe { lookback::block_prefix(scratch, status, tile, mine, Sum) };
    let partition = form & PARTITION != 0;
    // Rejected elements before the segment (a partition writes them from the end).
    let rejected_before = segment - warp_base;
    let below = raw::lanemask_lt();
    let (mut kept, mut rejected) = (0u64, 0u64);
    for i in 0..ITEMS {
        let e = i * WARP_SIZE as usize + lane as usize;
        // SAFETY: written before the look-back's block barriers, never rewritten.
        let ballot = unsafe { ballots.read_unchecked(i) };
        let step_first = segment + (i * WARP_SIZE as usize) as u64;
        let in_input = len.saturating_sub(step_first);
        let valid = if in_input >= WARP_SIZE as u64 { FULL_MASK } else { (1u32 << in_input) - 1 };
        let keep = ballot >> lane & 1 == 1;
        let at = if keep {
            Some(warp_base + kept + (ballot & below).count_ones() as u64)
        } else if partition && valid >> lane & 1 == 1 {
            Some(len - 1 - (rejected_before + rejected + (!ballot & valid & below).count_ones() as u64))
        } else {
            None
        };
        if let Some(at) = at.filter(|&at| at < output_len) {
            // SAFETY: `at` < output_len; each position is the rank of one element of the
            // input, written once; the element was staged by `load`.
            unsafe { output.add(at as usize).write(stage.read_element::<ITEMS>(e)) };
        }
        kept += ballot.count_ones() as u64;
        rejected += (!ballot & valid).count_ones() as u64;
    }
    if tile == tiles - 1 && thread::linear_thread_idx() == 0 {
        // SAFETY: one u64, written by this thread alone.
        unsafe { selected.write(total) };
    }
}
