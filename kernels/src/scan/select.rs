//! Selection (stream compaction) and partition in one pass: a device-wide scan of the
//! per-tile counts of kept elements ([`super::lookback`] over `u64`), then each warp
//! writes its segment's kept elements straight from its staging to their places in the
//! output.
//!
//! A warp stages its segment of the tile ([`tile::load`]: coalesced 16-byte loads) and
//! reads it *striped* ([`Stage::read_striped`]): in step `k` lane `l` takes element
//! `32 k + l`, so the 32 lanes of a step hold 32 consecutive elements. After the look-back
//! one `vote.ballot` per step says which of them are kept, and a kept element's place in
//! the output is the warp's base (the count kept before its segment) plus the count kept
//! in the earlier steps (warp-uniform) plus the kept lanes below it (`popc` of the ballot
//! under `%lanemask_lt`): consecutive kept lanes write consecutive addresses, so a step's
//! stores cover one contiguous stretch of the output, and every count inside a segment is
//! 32-bit (a position is a 32-bit offset from the warp's base, checked against the room
//! left in the output). Each kept element is stored once, from the register the step read
//! it into (a *direct scatter*); the staging is only read after [`tile::load`] has filled
//! it, so the steps need no warp barrier between them. The steps are unrolled by hand
//! (`for_each_step`), so that each step's index is a constant: a step reads the staging at
//! a constant offset from the lane's `xor` with a constant, and its bit of a mask is a
//! constant (LLVM had left the 64 steps a loop, most of whose instructions were 64-bit
//! index arithmetic). (Before, the warp compacted its kept elements in place at the front
//! of its staging, a step and a warp barrier at a time, and copied the compacted segment
//! out in a second loop; and before that, lane by lane over a run held in an array, which
//! kept the array in local memory: 64 bytes stored and reloaded per thread, 41 % of the
//! copy ceiling on an H100.)
//!
//! - *Select*: the kept elements, in input order, at `output[0..count]`.
//! - *Partition*: the kept elements as for select, and the others at the end of `output`
//!   in *reverse* input order (the first rejected element at `output[len - 1]`), so the
//!   whole output is a permutation of the input written in one pass without knowing the
//!   count in advance (the arrangement CUB's `DevicePartition::If` uses). The rejected
//!   elements are scattered like the kept ones (by a second ballot a step): consecutive
//!   rejected lanes of a step to consecutive positions downwards.
//!
//! An element is kept when a [`Predicate`] holds for it, or (the *flagged* form) when its
//! byte in a separate flags buffer is non-zero. The count is written to `selected[0]` by
//! the block of the last tile; counts are `u64`. Writes past `output_len` are dropped, so
//! an output buffer too small for what is kept is never overrun (the host compares the
//! count with the buffer and reports it).

use bytemuck::{Pod, Zeroable};

use core::mem::size_of;

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

/// The block size the host launches selections with by default (any multiple of 32 up to
/// 512 whose tile fits the shared memory the device gives a block works): the scan's,
/// [`super::device::BLOCK_THREADS`] = 128 threads, with runs of up to
/// [`super::device::RUN_BYTES`] = 256 bytes ([`run_bytes`]), so a tile of 4-byte or
/// larger elements is 32 KiB, as a scan's. A selection's block also keeps its tile staged
/// while warp 0 looks back, so what the scan measured applies: tiles of 32 KiB let 6
/// blocks share an SM (192 KiB of staging; 6 blocks of 4 warps fit the register file up
/// to 80 registers a thread) where 256 threads of 128-byte runs let 4 (62 to 64
/// registers: 4 blocks of 8 warps fill the register file). Measured on an H100
/// (2026-11-27, select-if at 2^28, direct scatter, before the steps were unrolled):
/// `f32` 867-869 us against 895 with 256 threads of 128-byte runs, `f64` 1433-1436
/// against 1675-1677; smaller inputs lose (2^16 `f32` 11.4 us against 7.4: fewer, longer
/// tiles), which the unrolled steps (`for_each_step`) took back (7.0-7.2 us).
pub const BLOCK_THREADS: u32 = super::device::BLOCK_THREADS;

/// The block size the host launches large selections with ([`large_tiles_from_bytes`])
/// where a multiprocessor holds three such tiles (an sm_90): the scan's
/// [`super::device::LARGE_BLOCK_THREADS`] = 256 threads, tiles of 64 KiB of 4-byte or
/// larger elements (opted in to more than 48 KiB of dynamic shared memory by the host),
/// for the same reason: half the look-backs per byte with as much staged per SM.
/// Measured on an H200 (2026-11-28, one command, CUB in the same run), µs at 2^24 / 2^28
/// against 128 threads: select-if `f64` 73.9 / 1029 against 76.1 / 1093, `f32` 45.5 / 566
/// against 45.7 / 580; select-flagged `f32` 51.3 / 607 against 51.5 / 639. (160 threads
/// had been 2–9 % slower than 128 for selections; 256 is not.)
pub const LARGE_BLOCK_THREADS: u32 = super::device::LARGE_BLOCK_THREADS;

/// The fewest input bytes a selection of `T` takes [`LARGE_BLOCK_THREADS`] for: 16 MiB of
/// 4-byte or larger elements; `None` for smaller ones, whose runs are shorter (at most
/// 64 elements), so their tiles are not large. Smaller inputs lose with fewer, longer tiles
/// (H200, 2026-11-28, µs with 256 threads against 128: select-if `f32` 7.1 against 6.6 at
/// 2^18, 8.2 against 8.1 at 2^20, 11.9 against 12.3 at 2^22; `f64` 5.7 against 4.9 at
/// 2^14, 23.9 against 24.5 at 2^22).
pub const fn large_tiles_from_bytes<T>() -> Option<usize> {
    if size_of::<T>() >= 4 {
        Some(16 << 20)
    } else {
        None
    }
}

/// Bytes of a thread's run in a selection of `T`: the scan's [`super::device::RUN_BYTES`]
/// = 256 (64 `f32`s, 32 `f64`s), but at most [`MAX_ITEMS`] = 64 elements (so 64 bytes of
/// `u8`, 128 of `u16`). The scatter holds one element at a time, so a longer run costs no
/// registers, and it halves the look-backs per byte again. (With the blocked compaction,
/// which held the run, 128-byte runs were slower: 2088 µs at 2^28 `f32`s against 1650 µs
/// with 64 on an H100; the striped in-place compaction then ran 128-byte runs, and the
/// direct scatter 256-byte ones.)
pub const fn run_bytes<T>() -> usize {
    let most = MAX_ITEMS * size_of::<T>();
    if most < super::device::RUN_BYTES {
        most
    } else {
        super::device::RUN_BYTES
    }
}

/// The most elements a thread's run may hold: 64, the bits of the kept mask (a `u64`, one
/// bit per striped step). Step `k` is elements `32 k .. 32 k + 32` of the segment: with
/// 64 elements per run that is half of run `k / 2`, whose vectors the staging rotates
/// within the run ([`Stage::read_striped`] finds each element wherever its vector sits).
/// The direct scatter only reads the staging, so a step need not be whole runs. (The
/// in-place compaction that came before needed it, and so at most 32 elements: it wrote
/// the slots below `32 k + 32` after step `k` and read later steps from above, and with 64
/// elements of `u8` per run a later step's rotated vectors could sit below that line and
/// be overwritten, which the emulator reported as a data race.)
pub const MAX_ITEMS: usize = u64::BITS as usize;

/// Elements each thread of a selection of `T` holds.
pub const fn items_per_thread<T>() -> usize {
    tile::items_per_thread::<T>(run_bytes::<T>())
}

/// Elements one tile of a selection of `T` covers with `threads` per block.
pub const fn tile_elements<T>(threads: u32) -> u64 {
    tile::tile_elements::<T>(run_bytes::<T>(), threads)
}

/// Bytes of dynamic shared memory a selection of `T` needs with `threads` per block: the
/// look-back's (over `u64` counts), then the tile's staging.
pub const fn shared_bytes<T>(threads: u32) -> usize {
    lookback::prefix_bytes::<u64>() + tile::staging_bytes::<T>(run_bytes::<T>(), threads)
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
    // The kept mask has a bit per step.
    const { assert!(ITEMS <= MAX_ITEMS) };
    let (ticket, scratch) = lookback::scratch::<u64>();
    let stage = Stage::<T>::of_warp::<ITEMS>(lookback::prefix_bytes::<u64>());
    let tile_len = thread::block_threads() as u64 * ITEMS as u64;
    // An empty input has one (empty) tile, whose block writes the count 0.
    let tiles = len.div_ceil(tile_len).max(1);
    // SAFETY: forwarded from the caller: one block per tile, every thread here once.
    let tile = unsafe { lookback::take_tile(counter, tiles, ticket) };
    let segment = segment_start::<ITEMS>(tile);
    // Elements of the segment inside the input (at most 32 * ITEMS, so 32-bit).
    let in_segment = len.saturating_sub(segment).min(WARP_SIZE as u64 * ITEMS as u64) as u32;
    // Bit k: element 32 k + lane of the segment is kept (ITEMS <= MAX_ITEMS); a mask rather
    // than an array, so that little is held in registers during the look-back. The flags
    // are read before the tile is staged, so that both sets of loads are in flight at once.
    let flagged = form & FLAGGED != 0;
    let flag_mask = if flagged {
        kept_mask::<ITEMS>(in_segment, |e, _| {
            // SAFETY: e < in_segment (kept_mask clamps it), so segment + e < len; `flags`
            // holds `len` bytes, not written during the launch (flagged form).
            unsafe { flags.add((segment + e as u64) as usize).read() != 0 }
        })
    } else {
        0
    };
    // SAFETY: every lane of the (full) warp, the warp's stage; the input holds `len`
    // elements, not written during the launch.
    unsafe { tile::load::<T, ITEMS>(input, segment, len, T::zeroed(), stage) };
    let keep = if flagged {
        flag_mask
    } else {
        kept_mask::<ITEMS>(in_segment, |_, k| {
            // SAFETY: k < ITEMS; staged by `load` (which ends with a warp barrier).
            predicate.keep(unsafe { stage.read_striped::<ITEMS>(k) })
        })
    };
    let count = keep.count_ones() as u64;
    // SAFETY: forwarded from the caller; every thread of the block is here.
    let (rank, total) = unsafe { lookback::block_prefix(scratch, status, tile, count, Sum) };
    // Two instances, so that a selection's steps carry no test of the form.
    if form & PARTITION != 0 {
        // SAFETY: every lane of the full warp; the segment was staged by `load` (which
        // ended with a warp barrier) and nothing writes the staging since.
        unsafe { scatter::<T, ITEMS, true>(stage, segment, in_segment, len, keep, rank, output, output_len) };
    } else {
        // SAFETY: as above.
        unsafe {
            scatter::<T, ITEMS, false>(stage, segment, in_segment, len, keep, rank, output, output_len)
        };
    }
    if tile == tiles - 1 && thread::linear_thread_idx() == 0 {
        // SAFETY: one u64, written by this thread alone.
        unsafe { selected.write(total) };
    }
}

/// How many steps [`for_each_step`] writes out one after the other: all of a run's (at
/// most [`MAX_ITEMS`] = 64), so that every step index is a constant. (With 16, a loop of
/// 16 steps a turn: a third of the code, but 19 instructions a step of a selection's
/// scatter instead of 13, and 64 registers instead of 72, in ptxas's sm_90 code for
/// `f32`; slower on an H100, 2026-11-27: select-if `f32` at 2^28 774-775 us against
/// 726, 2^16 7.8-7.9 against 7.0-7.2.)
const STEP_GROUP: usize = 64;

/// Calls `step(k)` for each step `k` in `0..ITEMS`, in order, unrolled by hand: in groups
/// of [`STEP_GROUP`] calls written out one after the other, so that `k` is a constant plus
/// the group's start (a constant in all, with `ITEMS <= STEP_GROUP`) and what a step
/// computes from it folds: the place of a striped read ([`Stage::read_striped`]: one `xor`
/// of the lane with a constant, at a constant offset), the bit of a step in a mask. (LLVM
/// does not unroll a plain loop over 64 steps whole: it ran as a loop of two steps a turn,
/// and in ptxas's sm_90 code for `f32` a step of a selection's scatter took 46
/// instructions, most of them 64-bit index arithmetic; unrolled, 13. On an H100,
/// 2026-11-27, select-if at 2^28: `f32` 726 us against 868, `f64` 1345 against 1436;
/// flagged `f32` 804 against 925.)
#[inline(always)]
fn for_each_step<const ITEMS: usize>(mut step: impl FnMut(usize)) {
    const { assert!(STEP_GROUP <= 64, "the groups below write out at most 64 calls") };
    // step(base + j) for each j < count, each j a literal.
    macro_rules! group {
        ($base:expr, $count:expr; $($j:literal)*) => {{
            let (base, count): (usize, usize) = ($base, $count);
            $(if $j < count { step(base + $j) })*
        }};
    }
    for g in 0..ITEMS / STEP_GROUP {
        group!(g * STEP_GROUP, STEP_GROUP;
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
            61 62 63);
    }
    group!(ITEMS / STEP_GROUP * STEP_GROUP, ITEMS % STEP_GROUP;
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
        61 62 63);
}

/// The steps whose element of lane `lane` lies inside the input: bit `k` set when element
/// `32 k + lane` of the segment is below `in_segment` (its elements inside the input, at
/// most `32 * MAX_ITEMS`).
#[inline(always)]
fn inside_mask(in_segment: u32, lane: u32) -> u64 {
    // 32 k + lane < in_segment exactly for k < ceil((in_segment - lane) / 32).
    let steps = in_segment.saturating_sub(lane).div_ceil(WARP_SIZE);
    if steps >= u64::BITS {
        u64::MAX
    } else {
        (1u64 << steps) - 1
    }
}

/// The calling lane's kept mask: bit `k` is `kept(e, k)` for element `e = 32 k + lane` of
/// the warp's segment when `e < in_segment` (inside the input), 0 past it. `kept` is asked
/// at every step ([`for_each_step`]), with `e` clamped to the last element inside (the
/// answer then masked off, by [`inside_mask`] once at the end), so the steps have no branch
/// between them and their loads (of flags) are issued together, also in the segment that
/// ends inside the input (with a branch per step, its flag loads waited for each other:
/// 13.6 µs for 2^10 flagged `f32`s on an H100).
#[inline(always)]
fn kept_mask<const ITEMS: usize>(in_segment: u32, mut kept: impl FnMut(u32, usize) -> bool) -> u64 {
    let Some(last) = in_segment.checked_sub(1) else {
        return 0;
    };
    let lane = thread::lane_id();
    let mut mask = 0u64;
    for_each_step::<ITEMS>(|k| {
        let e = k as u32 * WARP_SIZE + lane;
        mask |= (kept(e.min(last), k) as u64) << k;
    });
    mask & inside_mask(in_segment, lane)
}

/// Bit `k` of `mask`, tested in the 32-bit half that holds it (with a constant `k`, one
/// `and` with a constant).
#[inline(always)]
fn step_bit(mask: u64, k: usize) -> bool {
    let half = if k < 32 { mask as u32 } else { (mask >> 32) as u32 };
    half >> (k % 32) & 1 == 1
}

/// Of the positions `base + r` of `output[..output_len]`, how many (up to `u32::MAX`)
/// exist: `r < room(output_len, base)` exactly when `base + r < output_len` (for the
/// 32-bit `r` of a segment, below `32 * MAX_ITEMS`).
#[inline(always)]
fn room(output_len: u64, base: u64) -> u32 {
    output_len.saturating_sub(base).min(u32::MAX as u64) as u32
}

/// Writes a warp's kept elements (and, for a partition, its rejected ones) straight from
/// its staged segment to the output (module docs). Step by step ([`for_each_step`]:
/// unrolled, each step index a constant), the warp reads 32 consecutive elements of its
/// segment ([`Stage::read_striped`]), ranks the kept ones by one ballot and stores each
/// at `output[warp_base + kept_before + popc(kept_lanes & lanemask_lt)]`: consecutive
/// kept lanes to consecutive positions. A partition's rejected elements go the same way
/// (a second ballot), consecutive lanes to consecutive positions downwards from `len - 1 -
/// rejected_before`. Inside the segment positions are 32-bit offsets from a base
/// pointer, compared with the room left in the output ([`room`]): writes at or past
/// `output_len` are dropped.
///
/// `keep` marks the lane's kept elements (bit `k`: element `32 k + lane`; none at or past
/// `in_segment`), `rank` is the count of kept elements before the lane's (lane 0's: before
/// the warp's segment); `in_segment` is the count of the segment's elements inside the
/// input. `PARTITION`: also write the rejected ones (a compile-time choice, so that a
/// selection's steps carry no test of it).
///
/// No warp barrier between the steps: the staging is only read here (its writes, by
/// [`tile::load`], are ordered before every read by the barrier `load` ends with), each
/// output position is written by one lane once, and no lane reads the output. The block
/// does not reuse the staging after this (the kernel ends), so none is needed after the
/// steps either; a caller that reused it would need a `bar.warp.sync` first.
///
/// # Safety
/// Called by every lane of a full warp after the look-back, on the warp's staging that
/// holds its segment from `segment` (staged by [`tile::load`] and not written since);
/// `output` is valid for writes of `output_len` elements, and only this warp writes the
/// positions of its segment's elements.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the state of one segment, passed once
unsafe fn scatter<T: Pod, const ITEMS: usize, const PARTITION: bool>(
    stage: Stage<T>,
    segment: u64,
    in_segment: u32,
    len: u64,
    keep: u64,
    rank: u64,
    output: *mut T,
    output_len: u64,
) {
    // A segment wholly past the input writes nothing (warp-uniform: every lane leaves).
    let Some(last) = in_segment.checked_sub(1) else {
        return;
    };
    // SAFETY: the whole warp is here (contract: full-warp shuffles).
    let warp_base = unsafe { raw::shfl_idx_sync(FULL_MASK, rank, 0, WARP_SIZE) };
    let below = raw::lanemask_lt();
    // The segment's kept elements: the r-th at output[warp_base + r].
    let kept_out = output.wrapping_add(warp_base as usize);
    let kept_room = room(output_len, warp_base);
    // A partition's rejected ones, the q-th (in input order) at output[len - 1 -
    // rejected_outside - q] = output[low + last - q], for rejected_outside those before the
    // segment (segment - warp_base); low = len - rejected_outside - in_segment is at least
    // warp_base (in_segment <= len - segment), so no underflow.
    let low = len - in_segment as u64 - (segment - warp_base);
    let rejected_out = output.wrapping_add(low as usize);
    let rejected_room = room(output_len, low);
    let reject = if PARTITION { inside_mask(in_segment, thread::lane_id()) & !keep } else { 0 };
    let (mut kept_before, mut rejected_before) = (0u32, 0u32);
    for_each_step::<ITEMS>(|k| {
        // SAFETY: k < ITEMS; staged by `load`, whose warp barrier precedes this, and not
        // written since.
        let item = unsafe { stage.read_striped::<ITEMS>(k) };
        let kept = step_bit(keep, k);
        // SAFETY: the whole warp is here (contract).
        let kept_lanes = unsafe { raw::ballot_sync(FULL_MASK, kept) };
        // The lane's place among the segment's kept elements (used if kept).
        let r = kept_before + (kept_lanes & below).count_ones();
        kept_before += kept_lanes.count_ones();
        // Where the lane's element goes, and whether it is written there: worked out with
        // no branch, so that the step ends in one predicated store and the ballots of the
        // steps follow each other in converged code.
        let (mut at, mut write) = (kept_out.wrapping_add(r as usize), kept & (r < kept_room));
        if PARTITION {
            let rejected = step_bit(reject, k);
            // SAFETY: as above.
            let rejected_lanes = unsafe { raw::ballot_sync(FULL_MASK, rejected) };
            // The lane's place among the segment's rejected elements counted from the
            // last (used if rejected; it wraps only in a lane that is not: fewer than
            // in_segment elements of the segment are rejected before a rejected one).
            let d = last.wrapping_sub(rejected_before + (rejected_lanes & below).count_ones());
            rejected_before += rejected_lanes.count_ones();
            if rejected {
                (at, write) = (rejected_out.wrapping_add(d as usize), d < rejected_room);
            }
        }
        if write {
            // SAFETY: `at` is output + warp_base + r with warp_base + r < output_len (kept),
            // or output + low + d with low + d < output_len (rejected), so inside `output`
            // (reached by wrapping arithmetic, a valid pointer in bounds); the position of
            // this element, written by this lane alone, once.
            unsafe { at.write(item) };
        }
    });
}
