//! Selection (stream compaction) and partition in one pass: a device-wide scan of the
//! per-tile counts of kept elements ([`super::lookback`] over `u64`), then each thread
//! writes its kept elements at their rank.
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

/// Bytes of a thread's run in a selection: 64 (16 `f32`s). A selection holds its run in
/// registers while it compacts it, so longer runs cost more registers than they save
/// look-backs (measured on an H100 before the compaction: 2088 µs at 2^28 `f32`s with
/// 128-byte runs against 1650 µs with 64).
pub const RUN_BYTES: usize = 64;

// The kept-items mask is a `u64`: one bit per item of a run.
const _: () = assert!(items_per_thread::<u8>() <= 64);

/// Elements each thread of a selection of `T` holds.
pub const fn items_per_thread<T>() -> usize {
    tile::items_per_thread::<T>(RUN_BYTES)
}

/// Elements one tile of a selection of `T` covers with `threads` per block.
pub const fn tile_elements<T>(threads: u32) -> u64 {
    tile::tile_elements::<T>(RUN_BYTES, threads)
}

/// Bytes of dynamic shared memory a selection of `T` needs with `threads` per block: the
/// look-back's (over `u64` counts), then the tile's staging.
pub const fn shared_bytes<T>(threads: u32) -> usize {
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
    let tile_len = thread::block_threads() as u64 * ITEMS as u64;
    // An empty input has one (empty) tile, whose block writes the count 0.
    let tiles = len.div_ceil(tile_len).max(1);
    // SAFETY: forwarded from the caller: one block per tile, every thread here once.
    let tile = unsafe { lookback::take_tile(counter, tiles, ticket) };
    // SAFETY: every lane of the (full) warp, the warp's stage; the input holds `len`
    // elements, not written during the launch.
    unsafe { tile::load::<T, ITEMS>(input, segment_start::<ITEMS>(tile), len, T::zeroed(), stage) };
    let first = tile * tile_len + thread::linear_thread_idx() as u64 * ITEMS as u64;
    // Bit i: item i is kept (ITEMS <= 64 with 64-byte runs); a mask rather than an array,
    // so that little is held in registers during the look-back.
    let mut keep = 0u64;
    if form & FLAGGED != 0 {
        // SAFETY: flagged: `flags` holds `len` bytes, not written during the launch.
        let bytes: [u8; ITEMS] = unsafe { tile::load_run(flags, first, len, 0) };
        for (i, byte) in bytes.iter().enumerate() {
            keep |= ((*byte != 0) as u64) << i;
        }
    } else {
        let mut i = 0;
        let mark = |item: T| {
            keep |= (predicate.keep(item) as u64) << i;
            i += 1;
        };
        // SAFETY: the lane's own run, staged by `load` (which ends with a warp barrier).
        unsafe { stage.visit_run::<ITEMS>(mark) };
    }
    // Nothing past the input.
    let in_input = len.saturating_sub(first).min(ITEMS as u64);
    if in_input < 64 {
        keep &= (1u64 << in_input) - 1;
    }
    let count = keep.count_ones() as u64;
    // SAFETY: forwarded from the caller; every thread of the block is here.
    let (rank, total) = unsafe { lookback::block_prefix(scratch, status, tile, count, Sum) };
    // Write through the staging, compacted per warp, so that the stores to the output are
    // contiguous (scattered per-thread stores ran at half of CUB's speed on an H100).
    // SAFETY: every lane of the full warp; the runs were staged by `load` and not rewritten.
    unsafe {
        compact_and_write::<T, ITEMS>(
            stage,
            first,
            len,
            keep,
            rank,
            count,
            output,
            output_len,
            form & PARTITION != 0,
        )
    };
    if tile == tiles - 1 && thread::linear_thread_idx() == 0 {
        // SAFETY: one u64, written by this thread alone.
        unsafe { selected.write(total) };
    }
}

/// Writes a warp's kept elements (and, for a partition, its rejected ones) to the output:
/// each lane takes its run into registers, the warp compacts the kept elements (then the
/// rejected) into its staging in order, and writes them out in contiguous stretches:
/// `output[warp_base ..]` for the kept, `output[.. len - rejected_before]` downwards for
/// the rejected. Writes at or past `output_len` are dropped.
///
/// `keep` marks the lane's kept items, `rank` is the count of kept elements before its
/// run, `count` its own.
///
/// # Safety
/// Called by every lane of a full warp after the look-back, on the warp's staging that
/// holds its runs; `output` is valid for writes of `output_len` elements, and only this
/// warp writes the positions of its segment's elements.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the state of one run, passed once
unsafe fn compact_and_write<T: Pod, const ITEMS: usize>(
    stage: Stage<T>,
    first: u64,
    len: u64,
    keep: u64,
    rank: u64,
    count: u64,
    output: *mut T,
    output_len: u64,
    partition: bool,
) {
    let lane = thread::lane_id();
    let mut items = [T::zeroed(); ITEMS];
    let mut i = 0;
    // SAFETY: the lane's own run, staged and not rewritten.
    unsafe {
        stage.visit_run::<ITEMS>(|item| {
            items[i] = item;
            i += 1;
        })
    };
    // Every lane has its run before any slot is rewritten.
    // SAFETY: the whole warp is here (contract).
    unsafe { raw::sync_warp(FULL_MASK) };
    // SAFETY: as above (full-warp shuffles).
    let (warp_base, warp_first) = unsafe {
        (
            raw::shfl_idx_sync(FULL_MASK, rank, 0, WARP_SIZE),
            raw::shfl_idx_sync(FULL_MASK, first, 0, WARP_SIZE),
        )
    };
    // SAFETY: as above.
    let warp_kept =
        unsafe { raw::shfl_idx_sync(FULL_MASK, rank + count, WARP_SIZE - 1, WARP_SIZE) } - warp_base;
    // Elements of the segment inside the input, and rejected ones before the segment.
    let in_segment = len.saturating_sub(warp_first).min(WARP_SIZE as u64 * ITEMS as u64);
    let warp_rejected = in_segment - warp_kept;
    let rejected_before = warp_first - warp_base;
    let mut kept_before = 0u64;
    for (i, item) in items.iter().enumerate() {
        let index = first + i as u64;
        let kept = keep >> i & 1 == 1;
        if index < len && (kept || partition) {
            let slot = if kept {
                rank - warp_base + kept_before
            } else {
                // Rejected elements before this one, counted from the segment's start.
                warp_kept + (index - rank - kept_before) - rejected_before
            };
            // SAFETY: slot < in_segment <= 32 * ITEMS; each slot is the rank of one element
            // of the segment; read after the warp barrier below.
            unsafe { stage.write_slot(slot as usize, *item) };
        }
        kept_before += kept as u64;
    }
    // SAFETY: the whole warp is here.
    unsafe { raw::sync_warp(FULL_MASK) };
    let mut j = lane as u64;
    while j < warp_kept {
        let at = warp_base + j;
        if at < output_len {
            // SAFETY: written before the barrier; `at` < output_len, this warp's position.
            unsafe { output.add(at as usize).write(stage.read_slot(j as usize)) };
        }
        j += WARP_SIZE as u64;
    }
    if partition {
        let mut j = lane as u64;
        while j < warp_rejected {
            let at = len - 1 - (rejected_before + j);
            if at < output_len {
                // SAFETY: as above; the rejected fill the output from its end.
                unsafe { output.add(at as usize).write(stage.read_slot((warp_kept + j) as usize)) };
            }
            j += WARP_SIZE as u64;
        }
    }
}
