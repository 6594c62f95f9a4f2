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

use super::lookback::{self, TileStatus};
use super::tile;
use crate::op::Sum;
use crate::thread;

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

/// `form` bit: keep by the flags buffer (non-zero byte) instead of the predicate.
pub const FLAGGED: u32 = 1;
/// `form` bit: partition (write the rejected elements too) instead of select.
pub const PARTITION: u32 = 2;

/// Selects or partitions `input[..len]` into `output[..output_len]` (module docs), by
/// `predicate` or, with [`FLAGGED`] in `form`, by `flags[..len]`; writes the count of kept
/// elements to `selected[0]`. `ITEMS` must be [`tile::items_per_thread`]`::<T>()`.
///
/// # Safety
/// - Launched as [`super::device::scan`] is for `len` elements of `T` (one block when
///   `len` is 0), with
///   [`lookback::shared_bytes`]`::<u64>()` bytes of dynamic shared memory.
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
    let tile_len = thread::block_threads() as u64 * ITEMS as u64;
    // An empty input has one (empty) tile, whose block writes the count 0.
    let tiles = len.div_ceil(tile_len).max(1);
    // SAFETY: forwarded from the caller: one block per tile, every thread here once.
    let tile = unsafe { lookback::take_tile(counter, tiles, ticket) };
    let first = tile * tile_len + thread::linear_thread_idx() as u64 * ITEMS as u64;
    // SAFETY: the input holds `len` elements, not written during the launch.
    let items: [T; ITEMS] = unsafe { tile::load(input, first, len, T::zeroed()) };
    let mut keep = [false; ITEMS];
    if form & FLAGGED != 0 {
        // SAFETY: flagged: `flags` holds `len` bytes, not written during the launch.
        let bytes: [u8; ITEMS] = unsafe { tile::load(flags, first, len, 0) };
        for (k, byte) in keep.iter_mut().zip(&bytes) {
            *k = *byte != 0;
        }
    } else {
        for (k, item) in keep.iter_mut().zip(&items) {
            *k = predicate.keep(*item);
        }
    }
    let mut count = 0u64;
    for (i, k) in keep.iter_mut().enumerate() {
        *k &= first + (i as u64) < len;
        count += *k as u64;
    }
    // SAFETY: forwarded from the caller; every thread of the block is here.
    let (mut rank, total) = unsafe { lookback::block_prefix(scratch, status, tile, count, Sum) };
    let partition = form & PARTITION != 0;
    // Two short loops (where each item goes, then the stores) rather than one long one,
    // and every array walked by reference (an array moved into an iterator lands in local
    // memory): both unroll, and the items stay in registers.
    let mut at = [u64::MAX; ITEMS];
    for (i, (slot, &kept)) in at.iter_mut().zip(&keep).enumerate() {
        let index = first + i as u64;
        if kept {
            *slot = rank;
        } else if partition && index < len {
            // `index - rank` elements before this one were rejected; they fill the output
            // from its end.
            *slot = len - 1 - (index - rank);
        }
        rank += kept as u64;
    }
    for (item, &at) in items.iter().zip(&at) {
        if at < output_len {
            // SAFETY: at < output_len; each position is written by the one element whose
            // rank (or rejected rank) it is.
            unsafe { output.add(at as usize).write(*item) };
        }
    }
    if tile == tiles - 1 && thread::linear_thread_idx() == 0 {
        // SAFETY: one u64, written by this thread alone.
        unsafe { selected.write(total) };
    }
}
