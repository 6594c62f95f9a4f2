//! Device-wide segmented reduce: one result per segment of an array, over any
//! [`Operator`] and any `Pod` element type.
//!
//! # Segments
//! Two forms, both described by a [`Segments`]:
//! - **fixed length** `L`: segment `s` is `input[s * L .. min((s + 1) * L, len)]`, so
//!   there are `ceil(len / L)` segments and the last one may be shorter;
//! - **offsets** (CSR, as CUB's `DeviceSegmentedReduce` takes them): `segments + 1`
//!   offsets of type `u64`, segment `s` is `input[offsets[s] .. offsets[s + 1]]`. An empty
//!   segment gets the operator's identity.
//!
//! Offsets are checked on the device as they are read, at no extra pass: a segment whose
//! end is below its begin, or past the input, is reduced as empty (nothing is read) and
//! recorded in the launch's error word ([`Segments::error_code`]), which the host turns
//! into a typed error after the launch. No element outside `input[..len]` and no offset
//! outside `offsets[..=segments]` is ever read.
//!
//! # Strategies
//! Chosen by the host: for the fixed form from the segment length (the thread strategy
//! when it reads warp rows), for offsets the balanced strategy or, for a long input, the
//! scan strategy (or by the caller); each one generic implementation, fixed at compile
//! time:
//!
//! | strategy | function | who reduces one segment |
//! | --- | --- | --- |
//! | thread | [`tile_per_segment`]`::<_, _, 1>` | one thread (many segments per thread over the grid); for the fixed form's short segments read in warp rows ([`reads_fixed_rows`], below) one lane, or an aligned tile of 2 to 32 lanes |
//! | tile of 4 or 16 lanes | [`tile_per_segment`]`::<_, _, 4>`, `::<_, _, 16>` | an aligned [`Tile`] of the warp, combined with the tile's shuffles (without the per-call presence check, which the launch shape proves) |
//! | warp | [`tile_per_segment`]`::<_, _, 32>` | a whole warp |
//! | block | [`block_per_segment`] | a whole block, combined with [`block::reduce`] |
//! | balanced | [`balanced_batches`], then [`balanced_chunks`] | by the segment's own length: its lane (tiny), a tile of 4 (short), a warp (medium), or chunks of it spread over every block and folded by a ticket protocol (long) |
//! | balanced, small input ([`is_small_input`]) | [`small_input_segments`] | a warp, or for a segment longer than [`small_input_block_elements`] a whole block, in one launch |
//! | scan (offsets only; [`crate::scan::segmented`]) | [`reduce_segments`](crate::scan::segmented::reduce_segments) | nobody in particular: warps read chunks of the input in windows, whatever the lengths, a segmented warp scan carries partials across lanes and windows, a look-back across chunks, and each segment is written by the lane that holds its end |
//!
//! Workers take segments `w`, `w + workers`, `w + 2 workers`, ... (grid-stride), so any
//! grid size covers any segment count. The balanced strategy is for offsets whose lengths
//! vary wildly (a power law with a few huge segments): the others give every segment the
//! same workers, so one huge segment is read by one tile, warp or block while the rest of
//! the grid idles; the balanced strategy looks at each length (its warps read 32
//! neighbouring offsets at once) and cuts segments longer than [`LONG_SEGMENT_BYTES`]
//! into chunks of [`chunk_bytes`] that all blocks share ([`LongSegments`] describes the
//! hand-off and its memory-ordering argument). A small input (up to 512 KiB of `f32`s
//! by default) takes one kernel instead, [`small_input_segments`], where what a call
//! waits for is latency, not bandwidth.
//!
//! # Which rank reads what, and the order of combination
//! Inside one segment, `r` ranks (lanes of the tile, threads of the block) share the
//! elements. For an operator that declares [`Operator::COMMUTATIVE`] and an element type
//! whose size divides 16 bytes (every built-in type), the segment is read as 16-byte
//! vectors with `ld.global.nc` (the read-only path, as in [`grid`]: the
//! input is not written during the launch):
//! - the *head*, the fewer than `16 / size` elements before the segment's first 16-byte
//!   boundary, and the *tail*, those after its last whole vector, one element per rank
//!   (rank `k` takes the `k`-th, `k + r`-th, ...);
//! - the aligned vectors between them: rank `k` takes vectors `k, k + r, k + 2r, ...`,
//!   [`LOADS_IN_FLIGHT`] (4) loads in flight per step, each folded into its own partial,
//!   so neighbouring ranks read neighbouring vectors (a 4-lane tile of `f32` covers 64
//!   contiguous bytes per load; a thread per segment of 4 aligned `f32` does one 16-byte
//!   load).
//!
//! The balanced strategy's tiny and short segments (at most [`SHORT_BYTES`]) are read as
//! their *window* instead: every aligned vector that overlaps the segment, whole, rank `k`
//! taking vectors `k, k + r, ...` and combining only the elements inside the segment
//! (`Segments::fold_window`: no head and tail loops, 32-bit offsets; the vectors that
//! would reach outside the input, at its two ends, element by element).
//!
//! # The fixed form's short segments: warp rows
//! A thread per segment that reads one short segment after another keeps few bytes in
//! flight. So the thread strategy's kernel first reduces the fixed form in *warp rows*
//! when the operator commutes, `T`'s size divides 16, a segment has `B` bytes, a power of
//! two from 4 to 512 ([`reads_fixed_rows`]: `f32` of length 1 to 128; `f64` of length 1
//! to 64) and the input and output are 16-byte aligned (every buffer is 256-byte aligned
//! on both backends), so that segment `s` starts at byte `s * B` and lies whole inside
//! one vector, or covers 2 to 32 whole ones:
//! - the input's whole 2 KiB rows of [`ROW_VECTORS`] vectors go to the warps of the grid
//!   in turn; lane `l` loads vectors `l, l + 32, l + 64, l + 96` of its warp's row (4
//!   loads in flight, each load of the warp 512 contiguous bytes);
//! - `B <= 16`: a vector holds `P = 16 / B` segments; the lane folds each in index order
//!   from its first element and writes the `P` results together (one 16-byte store for `f32`
//!   of length 1 or 64-bit elements of length 1, one 8-byte store for `P * size` = 8);
//! - `B` = 32 to 512: the aligned tile of `G = B / 16` (2 to 32) lanes that loaded a
//!   segment's vectors folds one each (from its first element), and the tile combines
//!   the 4 segments its lanes hold in one reduce-scatter butterfly of shuffles
//!   (`Segments::shared_rows`), after which ranks `0..min(G, 4)` write one result each
//!   (two for `G` = 2);
//! - the segments after the last whole row go through the ordinary loop of the thread
//!   strategy (with its own vector fold).
//!
//! Which segments the rows take depends only on the length, never on the grid, so this
//! order is as fixed as the others.
//!
//! Another commutative operator folds elements `k, k + r, k + 2r, ...` in rank `k`
//! (loads still coalesce); a non-commutative one folds the `k`-th of `r` contiguous
//! pieces in index order. The ranks' results are then combined in rank order. The order
//! depends only on the segment's length, its start address modulo 16 (buffers are
//! 256-byte aligned on both backends), the strategy, the block size and, for the fixed
//! form, whether the segment lies in a whole warp row, never on timing
//! or on the grid size: float results are the same bits on every run, and the same on
//! the GPU and on the emulator for the same strategy.

use core::mem::size_of;

use bytemuck::Pod;

use super::{block, grid};
use crate::arch::{self, L2Prefetch, NoPrefetch, Prefetch256B, WARP_SIZE};
use crate::atomic::{DeviceAtomicU32, DeviceAtomicU64, Relaxed};
use crate::barrier;
use crate::fence;
use crate::group::{Group, Tile, Warp};
use crate::op::Operator;
use crate::shared;
use crate::thread;

/// The block size the host launches every segmented-reduce kernel with but the block
/// strategy's (the tile strategies need a multiple of 32).
pub const BLOCK_THREADS: u32 = 256;

/// The block size of the block strategy ([`block_per_segment`], which works with any
/// size) and the most its sm_90 launch bounds allow; the host launches it with half as
/// many threads from a few hundred segments on (`warpsafe_host::segmented`'s
/// `MANY_SEGMENTS_BLOCK_THREADS`, measured there). Measured on an H100 (2026-11-27,
/// `segreduce-bench --patterns 65536`, `f32` sums, builds with 256, 512 and 1024 run one
/// after the other, twice): 512 threads took
/// 5.7 / 6.0 / 26.4 / 349.7 us at 2^16 / 2^20 / 2^24 / 2^28 elements against 8.3-8.5 /
/// 8.5-8.7 / 28.3-28.4 / 352.3 with 256 (a segment of 64 Ki elements is read by twice the
/// threads, with twice the loads in flight per block) and 5.1-5.3 / 5.7-6.0 / 27.4-27.6 /
/// 356.6-358.7 with 1024.
pub const SEGMENT_BLOCK_THREADS: u32 = 512;

/// Blocks per SM the block strategy's kernel is compiled for on sm_90: its launch bounds
/// (`.maxntid` [`SEGMENT_BLOCK_THREADS`], `.minnctapersm` 2), which let ptxas use up to 64
/// registers and keep both steps of a block fold's pair of loads (`Segments::fold_vectors`)
/// in flight (without bounds it kept 48 registers and put the first step's folds between
/// the loads). The sm_70 and sm_80 builds have no bounds: there ptxas spills the 8-byte
/// types' folds at 64 registers. Measured on an H100 (2026-11-28, `segreduce-bench --quick
/// --patterns 65536`, main and this build in one command): 348.2 us at 2^28 against 353.2
/// (CUB 347.1-347.6), 90.1 at 2^26 against 93.3 (CUB 90.6-90.8), 47.4 at 2^25 against 48.8,
/// 26.0 at 2^24 against 26.6; the pair of steps without the bounds 351.2-351.7 at 2^28 in
/// an earlier command.
pub const SEGMENT_BLOCKS_PER_SM: u32 = 2;

/// The error word's value when every segment was well formed.
pub const NO_ERROR: u64 = u64::MAX;

/// 16-byte loads each rank keeps in flight in a segment's vector fold, and each lane in a
/// warp row of the fixed form.
pub const LOADS_IN_FLIGHT: usize = 4;

/// 16-byte vectors in one warp row of the fixed form (`Segments::reduce_fixed_rows`):
/// [`LOADS_IN_FLIGHT`] per lane, 2 KiB.
pub const ROW_VECTORS: u64 = LOADS_IN_FLIGHT as u64 * WARP_SIZE as u64;

/// The longest segment, in bytes, that the fixed form reads in warp rows
/// ([`reads_fixed_rows`]): a whole warp's vectors, 4 segments a row, combined by the
/// warp's reduce-scatter butterfly (6 shuffles a row). Rows read the input in the
/// grid-stride order of the grid reductions, with 4 loads in flight per lane. Measured
/// on an H200 (2026-11-28, `segreduce-bench --quick`): `f32` of length 64 (256 bytes)
/// took 265 us at 2^28 against 510 with a 16-lane tile per segment (21.9 against 36.5 at
/// 2^24), length 32 (128 bytes) 285 against 299 with a 4-lane tile (the same at 2^24);
/// length 128 (512 bytes), with the butterfly, 258 against 285 us with a 16-lane tile
/// (19.5 against 21.7 at 2^24: 94 % of the read ceiling against 85 %,
/// `bench/results/2026-11-28-h200/segmented-rows-512-bytes.txt`; before the butterfly,
/// with 4 warp reductions a row, 512-byte rows had taken twice the tile's time). Past
/// 512 bytes a segment would span rows.
pub const ROW_SEGMENT_BYTES: u64 = 32 * grid::VECTOR_BYTES as u64;

/// Threads the thread strategy's launch needs so that every warp row of the fixed form
/// has its own warp while the grid is below a wave: 32 per whole row when
/// [`reads_fixed_rows`] holds for `segment_len`, else 0 (the host launches at least a
/// thread per segment anyway).
pub const fn fixed_row_threads<T>(len: u64, segment_len: u64) -> u64 {
    if reads_fixed_rows::<T>(segment_len) {
        len / (ROW_VECTORS * grid::elements_per_vector::<T>() as u64) * WARP_SIZE as u64
    } else {
        0
    }
}

/// What is wrong with a segment, as recorded in the error word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadSegment {
    /// `offsets[s + 1] < offsets[s]`.
    NotMonotonic = 0,
    /// `offsets[s + 1]` is past the end of the input.
    PastInput = 1,
}

/// Dynamic shared memory, in bytes, that every segmented-reduce kernel over `T` needs:
/// the larger of the block strategy's two halves of [`block::LEADER_SCRATCH_LEN`]
/// ([`block_per_segment`]) and the small-input kernel's [`block::reduce`] scratch
/// ([`block::SCRATCH_LEN`]); the other kernels ignore it.
pub const fn shared_bytes<T>() -> usize {
    let halves = 2 * block::LEADER_SCRATCH_LEN;
    let elements = if halves > block::SCRATCH_LEN { halves } else { block::SCRATCH_LEN };
    elements * core::mem::size_of::<T>()
}

/// The segments of one launch: the input, and either a fixed length or offsets.
#[derive(Clone, Copy)]
pub struct Segments<T> {
    input: *const T,
    len: u64,
    /// Null for the fixed-length form.
    offsets: *const u64,
    segment_len: u64,
    count: u64,
    error: *mut u64,
}

impl<T: Pod> Segments<T> {
    /// The segments of `input[..len]`: of `segment_len` elements each (the last one
    /// shorter) when `offsets` is null, else `count` segments bounded by
    /// `offsets[..=count]`. Bad offsets are recorded in `*error` with
    /// [`Segments::error_code`] by an atomic minimum, so the lowest bad segment wins.
    ///
    /// # Safety
    /// - `input` is valid for reads of `len` elements, aligned, and not written during the
    ///   launch.
    /// - `offsets` is null, or valid for reads of `count + 1` aligned `u64`s not written
    ///   during the launch.
    /// - When `offsets` is null: `segment_len > 0` and `count == len.div_ceil(segment_len)`.
    /// - `error` is a valid, 8-byte aligned global `u64` accessed only atomically during
    ///   the launch.
    #[inline(always)]
    pub unsafe fn new(
        input: *const T,
        len: u64,
        offsets: *const u64,
        segment_len: u64,
        count: u64,
        error: *mut u64,
    ) -> Segments<T> {
        Segments { input, len, offsets, segment_len, count, error }
    }

    /// How many segments there are.
    #[inline(always)]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The error word's encoding of a bad segment: `2 * segment + kind`, so that the
    /// atomic minimum keeps the lowest segment.
    pub const fn error_code(segment: u64, kind: BadSegment) -> u64 {
        segment * 2 + kind as u64
    }

    /// The element range of segment `s` (`s < count`), empty for a bad one, which is
    /// recorded in the error word.
    #[inline(always)]
    fn bounds(&self, s: u64) -> (u64, u64) {
        if self.offsets.is_null() {
            let begin = s * self.segment_len;
            return (begin.min(self.len), begin.saturating_add(self.segment_len).min(self.len));
        }
        // SAFETY: s < count and `offsets` holds count + 1 elements (`new`'s contract).
        let (begin, end) =
            unsafe { (self.offsets.add(s as usize).read(), self.offsets.add(s as usize + 1).read()) };
        let bad = if end < begin {
            Some(BadSegment::NotMonotonic)
        } else if end > self.len {
            Some(BadSegment::PastInput)
        } else {
            None
        };
        match bad {
            None => (begin, end),
            Some(kind) => {
                // SAFETY: a valid global u64 accessed only atomically (`new`'s contract).
                let word = unsafe { DeviceAtomicU64::from_ptr(self.error) };
                word.min(Self::error_code(s, kind), Relaxed);
                (0, 0)
            }
        }
    }

    /// Rank `rank` of `ranks`' fold of `input[begin..end]` (see the module docs for the
    /// order).
    ///
    /// # Safety
    /// `begin <= end <= len`: a range that [`Segments::bounds`] returned.
    #[inline(always)]
    unsafe fn fold<Op: Operator<T>>(&self, begin: u64, end: u64, rank: u64, ranks: u64, op: Op) -> T {
        // SAFETY: forwarded from the caller.
        unsafe { self.fold_with::<Op, false, false>(begin, end, rank, ranks, op) }
    }

    /// Lane `lane` of a warp's fold of `input[begin..end]`: [`Segments::fold`] with 32
    /// ranks, whose last vector step loads as a whole one, and with `PAIRED` two steps'
    /// loads issued together while two whole ones remain ([`Segments::fold_vectors`]).
    ///
    /// The warp strategy pairs its steps, the balanced strategy's kernels do not.
    /// Measured on an H200 (2026-11-28, `segreduce-bench --quick`, fixed lengths, two
    /// builds in one command, loads without the L2 prefetch hint): the warp strategy at
    /// L = 8192 took 20.1 us at 2^24 against 23.1 (CUB 18.8), 243.3 against 249.1 at 2^28,
    /// L = 4096 243.0 against 245.6 at 2^28 and 19.3 against 20.1 at 2^24 (46 registers
    /// against 40: 5 blocks of 256 per SM instead of 6); paired in the batch kernel too,
    /// the power-law mix was 1-4 % slower at 2^24 and 2^25.
    ///
    /// # Safety
    /// As for [`Segments::fold`].
    #[inline(always)]
    unsafe fn fold_by_warp<Op: Operator<T>, const PAIRED: bool>(
        &self,
        begin: u64,
        end: u64,
        lane: u64,
        op: Op,
    ) -> T {
        // SAFETY: forwarded from the caller.
        unsafe { self.fold_with::<Op, true, PAIRED>(begin, end, lane, u64::from(WARP_SIZE), op) }
    }

    /// Rank `rank` of a block of `ranks` threads' fold of segment `s`: two steps' loads
    /// issued together while two whole steps remain (`PAIRED`: the same partials in the
    /// same order, so the same bits as [`Segments::fold`]).
    ///
    /// # Safety
    /// `s < count()`.
    #[inline(always)]
    unsafe fn fold_by_block<Op: Operator<T>>(&self, s: u64, rank: u64, ranks: u64, op: Op) -> T {
        let (begin, end) = self.bounds(s);
        // SAFETY: a range from `bounds`.
        unsafe { self.fold_with::<Op, false, true>(begin, end, rank, ranks, op) }
    }

    /// [`Segments::fold`], with the vector fold's steps as `WHOLE_LAST_STEP` and `PAIRED`
    /// say ([`Segments::fold_vectors`]).
    ///
    /// # Safety
    /// As for [`Segments::fold`].
    #[inline(always)]
    unsafe fn fold_with<Op: Operator<T>, const WHOLE_LAST_STEP: bool, const PAIRED: bool>(
        &self,
        begin: u64,
        end: u64,
        rank: u64,
        ranks: u64,
        op: Op,
    ) -> T {
        if grid::reads_vectors::<T, Op>(self.input) {
            // SAFETY: forwarded from the caller; the operator commutes and the element
            // size divides 16 (just checked).
            return unsafe { self.fold_vectors::<Op, WHOLE_LAST_STEP, PAIRED>(begin, end, rank, ranks, op) };
        }
        let mut acc = op.identity();
        let (mut i, stop, step) = if Op::COMMUTATIVE {
            (begin + rank, end, ranks)
        } else {
            let piece = (end - begin).div_ceil(ranks);
            let start = (begin + rank * piece).min(end);
            (start, (start + piece).min(end), 1)
        };
        while i < stop {
            // SAFETY: begin <= i < end <= len (caller), and `input` holds len readable
            // elements (`new`'s contract).
            acc = op.combine(acc, unsafe { self.input.add(i as usize).read() });
            i += step;
        }
        acc
    }

    /// Rank `rank` of `ranks`' fold of `input[begin..end]` read as 16-byte vectors (see
    /// the module docs): the head before the segment's first 16-byte boundary and the
    /// tail after its last whole vector one element per rank, the vectors between them
    /// `rank, rank + ranks, ...`, [`LOADS_IN_FLIGHT`] loads in flight per rank, each
    /// folded into its own partial (the `u`-th load of a step into partial `u`), the
    /// partials combined in order at the end.
    ///
    /// With `WHOLE_LAST_STEP` (a warp's fold, [`Segments::fold_by_warp`]) the last, partial
    /// step loads as a whole one, its loads past the segment's last vector reading that
    /// vector again and left unfolded, so that ptxas issues them together: as four loads,
    /// each under its own condition and folded right after, the balanced strategy's batch
    /// kernel issued three together and the fourth after the first one's fold, one more
    /// round trip to memory for a medium segment (SASS, sm_90, 64 registers either way).
    /// Measured on an H200 (2026-11-27, `segreduce-bench --quick`, two rounds
    /// interleaved, in three commands): the power-law mix 605.5-611.9 us at 2^28 against
    /// 614.0-619.6, 60.2-61.2 at 2^24 against 61.7-63.6. Tiles of 4 and 16 lanes keep
    /// the conditional loads (for them, fixed lengths of 32 and 128 `f32`s whose steps are
    /// all partial, the whole-step form was 3 % slower at 2^28), and so do blocks (the
    /// block strategy at L = 65536 was 2.5 % slower at 2^24 with both forms compiled in).
    /// The same vectors are folded into the same partials in the same order either way.
    ///
    /// With `PAIRED` (a block's fold, `reduce_by_block`, and the warp strategy's,
    /// [`Segments::fold_by_warp`]) the steps go two at a
    /// time while two whole ones remain: both steps' loads are issued before the first
    /// is folded, 2 x [`LOADS_IN_FLIGHT`] per rank, load `u` into partial `u %
    /// LOADS_IN_FLIGHT`, which is the order of two single steps (the same bits). In the
    /// block kernel ptxas keeps the eight loads together only under its launch bounds
    /// ([`SEGMENT_BLOCKS_PER_SM`]): a block of 512 threads with 4 loads in flight each
    /// keeps 64 KiB in flight per SM at 2 blocks per SM, with 8 twice that, which is what
    /// a CUDA C++ kernel of the same shape needed to reach CUB's time at L = 65536. The
    /// warp kernel has no bounds; paired, it takes 46 registers instead of 40 and is
    /// faster (measured at [`Segments::fold_by_warp`]).
    ///
    /// # Safety
    /// As for [`Segments::fold`]; `Op` commutes, `T`'s size divides 16 and the input's
    /// distance to the next 16-byte boundary is a multiple of it
    /// ([`grid::reads_vectors`]).
    #[inline(always)]
    unsafe fn fold_vectors<Op: Operator<T>, const WHOLE_LAST_STEP: bool, const PAIRED: bool>(
        &self,
        begin: u64,
        end: u64,
        rank: u64,
        ranks: u64,
        op: Op,
    ) -> T {
        let per_vector = grid::elements_per_vector::<T>() as u64;
        let start = self.input as u64 + begin * size_of::<T>() as u64;
        let first = begin + grid::head_elements::<T>(start, end - begin);
        let vectors = (end - first) / per_vector;
        let tail = first + vectors * per_vector;
        let mut acc = op.identity();
        let mut i = begin + rank;
        while i < first {
            // SAFETY: begin <= i < first <= end <= len (caller).
            acc = op.combine(acc, unsafe { self.input.add(i as usize).read() });
            i += ranks;
        }
        let mut i = tail + rank;
        while i < end {
            // SAFETY: tail <= i < end <= len (caller).
            acc = op.combine(acc, unsafe { self.input.add(i as usize).read() });
            i += ranks;
        }
        // SAFETY: first <= end <= len, so the pointer stays inside (or one past) the
        // input; it is 16-byte aligned by the choice of the head.
        let base = unsafe { self.input.add(first as usize) }.cast::<grid::Vector>();
        let mut partials = [op.identity(); LOADS_IN_FLIGHT];
        let mut v = rank;
        while PAIRED && v + (2 * LOADS_IN_FLIGHT as u64 - 1) * ranks < vectors {
            let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); 2 * LOADS_IN_FLIGHT];
            for (u, slot) in loaded.iter_mut().enumerate() {
                // SAFETY: v + u * ranks <= v + 7 * ranks < vectors: inside the segment, as
                // below.
                *slot =
                    unsafe { grid::load_vector::<T, NoPrefetch>(base.add((v + u as u64 * ranks) as usize)) };
            }
            for (u, vector) in loaded.iter().enumerate() {
                let partial = &mut partials[u % LOADS_IN_FLIGHT];
                *partial = grid::fold_vector(*partial, vector, op);
            }
            v += 2 * LOADS_IN_FLIGHT as u64 * ranks;
        }
        while v + (LOADS_IN_FLIGHT as u64 - 1) * ranks < vectors {
            let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); LOADS_IN_FLIGHT];
            for (u, slot) in loaded.iter_mut().enumerate() {
                // SAFETY: v + u * ranks <= v + 3 * ranks < vectors: the vector lies inside
                // the segment, in global memory that nothing writes during the launch
                // (`new`'s contract).
                *slot =
                    unsafe { grid::load_vector::<T, NoPrefetch>(base.add((v + u as u64 * ranks) as usize)) };
            }
            for (partial, vector) in partials.iter_mut().zip(&loaded) {
                *partial = grid::fold_vector(*partial, vector, op);
            }
            v += LOADS_IN_FLIGHT as u64 * ranks;
        }
        if WHOLE_LAST_STEP && v < vectors {
            // The last, partial step in the shape of a whole one, so that its loads issue
            // together: every load reads a vector of the segment (past the last one, the
            // last one again), and only those below `vectors` are folded.
            let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); LOADS_IN_FLIGHT];
            for (u, slot) in loaded.iter_mut().enumerate() {
                let index = (v + u as u64 * ranks).min(vectors - 1);
                // SAFETY: index < vectors, as above.
                *slot = unsafe { grid::load_vector::<T, NoPrefetch>(base.add(index as usize)) };
            }
            for (u, (partial, vector)) in partials.iter_mut().zip(&loaded).enumerate() {
                if v + (u as u64) * ranks < vectors {
                    *partial = grid::fold_vector(*partial, vector, op);
                }
            }
        } else {
            for (u, partial) in partials.iter_mut().enumerate() {
                let index = v + u as u64 * ranks;
                if index < vectors {
                    // SAFETY: index < vectors, as above.
                    *partial = grid::fold_vector(
                        *partial,
                        &unsafe { grid::load_vector::<T, NoPrefetch>(base.add(index as usize)) },
                        op,
                    );
                }
            }
        }
        partials.into_iter().fold(acc, |acc, partial| op.combine(acc, partial))
    }

    /// Rank `rank` of `RANKS`' fold of a segment of at most `(SLOTS * RANKS - 1) * 16`
    /// bytes: [`Segments::fold_window`] when the input is read as vectors
    /// ([`grid::reads_vectors`]), else [`Segments::fold`].
    ///
    /// # Safety
    /// As for [`Segments::fold`]; `rank < RANKS`, and the segment has at most
    /// `(SLOTS * RANKS - 1) * 16` bytes.
    #[inline(always)]
    unsafe fn fold_short<Op: Operator<T>, const RANKS: u32, const SLOTS: usize>(
        &self,
        begin: u64,
        end: u64,
        rank: u32,
        op: Op,
    ) -> T {
        if grid::reads_vectors::<T, Op>(self.input) {
            // SAFETY: forwarded from the caller; the operator commutes and the element
            // size divides 16 (just checked).
            unsafe { self.fold_window::<Op, RANKS, SLOTS>(begin, end, rank, op) }
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { self.fold(begin, end, rank as u64, RANKS as u64, op) }
        }
    }

    /// Rank `rank` of `RANKS`' fold of a short segment read as its *window*: the 16-byte
    /// aligned vectors that overlap it. Rank `r` takes the window's vectors `r, r + RANKS,
    /// ...` (at most `SLOTS`), [`WINDOW_LOADS`] at a time (both loads issued, then both
    /// folded), and combines, vector by vector and in index order, the elements that lie
    /// in the segment; the window's other elements (of the neighbouring segments) are
    /// loaded but skipped. Offsets inside the window are 32-bit and no loop runs over
    /// elements, so a short segment costs a small, fixed number of instructions: the head
    /// / vectors / tail loops of [`Segments::fold_vectors`], in 64-bit arithmetic, had cost
    /// the balanced strategy about 260 warp instructions per round of 8 short segments and
    /// about 110 per batch for its tiny ones (Nsight Compute on an H100, 2026-11-27,
    /// power-law mix of `f32` at 2^24: 824 warp instructions per batch of 32 segments
    /// before, 640 after; the mix at 2^28 910 -> 759 us). A window that reaches outside the
    /// input (only at the input's two ends) is read element by element, only the
    /// segment's elements, in the same order of combination.
    ///
    /// # Safety
    /// As for [`Segments::fold_short`]; `Op` commutes, `T`'s size divides 16 and the
    /// input's distance to the next 16-byte boundary is a multiple of it
    /// ([`grid::reads_vectors`]).
    #[inline(always)]
    unsafe fn fold_window<Op: Operator<T>, const RANKS: u32, const SLOTS: usize>(
        &self,
        begin: u64,
        end: u64,
        rank: u32,
        op: Op,
    ) -> T {
        let size = size_of::<T>();
        let vector_bytes = grid::VECTOR_BYTES as u64;
        let input = self.input as u64;
        let start = input + begin * size as u64;
        let window = start & !(vector_bytes - 1);
        // The segment's bytes are `lo..hi` of the window (hi at most 16 * SLOTS * RANKS).
        let lo = (start - window) as u32;
        let hi = lo + ((end - begin) * size as u64) as u32;
        let inside = window >= input
            && window + u64::from(hi).div_ceil(vector_bytes) * vector_bytes <= input + self.len * size as u64;
        let at = |slot: usize| (rank + RANKS * slot as u32) * grid::VECTOR_BYTES as u32;
        let mut acc = op.identity();
        if !inside {
            // The window reaches outside the input: the segment's elements one by one, in
            // the order of the vector path below.
            for slot in 0..SLOTS {
                let at = at(slot);
                for k in 0..grid::VECTOR_BYTES / size {
                    let offset = at + (k * size) as u32;
                    if offset.wrapping_sub(lo) < hi - lo {
                        let index = begin + u64::from((offset - lo) / size as u32);
                        // SAFETY: begin <= index < end <= len (caller): an element of the
                        // segment.
                        acc = op.combine(acc, unsafe { self.input.add(index as usize).read() });
                    }
                }
            }
            return acc;
        }
        // WINDOW_LOADS slots at a time: with all SLOTS loaded before the first fold the
        // balanced strategy's batch kernel for `f32` took 77 registers instead of 64 (3
        // blocks per SM instead of 4) and was slower (H100, 2026-11-27: 870 us against 759
        // for the power-law mix at 2^28).
        let mut first = 0;
        while first < SLOTS && at(first) < hi {
            let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); WINDOW_LOADS];
            for (u, vector) in loaded.iter_mut().enumerate() {
                let at = at(first + u);
                if first + u < SLOTS && at < hi {
                    // SAFETY: the vector at `window + at` lies inside the input (`inside`:
                    // it is one of the window's first ceil(hi / 16) vectors), 16-byte
                    // aligned (the window is), in global memory that nothing writes during
                    // the launch (`new`'s contract).
                    *vector = unsafe {
                        grid::load_vector::<T, Prefetch256B>(
                            self.input.cast::<u8>().add((window - input + u64::from(at)) as usize).cast(),
                        )
                    };
                }
            }
            for (u, vector) in loaded.iter().enumerate() {
                let at = at(first + u);
                for k in 0..grid::VECTOR_BYTES / size {
                    let offset = at + (k * size) as u32;
                    if first + u < SLOTS && offset.wrapping_sub(lo) < hi - lo {
                        acc = op.combine(acc, vector.element(k));
                    }
                }
            }
            first += WINDOW_LOADS;
        }
        acc
    }

    /// The fixed form's warp rows (module docs): when [`reads_fixed_rows`] holds for the
    /// segment length, `Op` commutes and `input` and `out` are 16-byte aligned, warp `w`
    /// of the grid reduces the input's whole rows `w, w + warps, ...` of
    /// [`ROW_VECTORS`] vectors, every segment inside them, and writes their results.
    /// Returns how many leading segments those rows hold (0 when this does not apply):
    /// the rest is for [`tile_per_segment`]'s loop.
    ///
    /// # Safety
    /// The launch is one-dimensional with a block size that is a multiple of 32, and every
    /// lane of the caller's warp calls this together; `out` is valid for writes of
    /// `count()` elements that nothing else accesses during the launch.
    #[inline(always)]
    unsafe fn reduce_fixed_rows<Op: Operator<T>>(&self, out: *mut T, op: Op) -> u64 {
        let bytes = grid::VECTOR_BYTES as u64;
        let aligned = (self.input as u64).is_multiple_of(bytes) && (out as u64).is_multiple_of(bytes);
        if !(self.offsets.is_null() && Op::COMMUTATIVE && aligned && reads_fixed_rows::<T>(self.segment_len))
        {
            return 0;
        }
        let rows = self.len / (ROW_VECTORS * grid::elements_per_vector::<T>() as u64);
        let segment_bytes = self.segment_len * size_of::<T>() as u64;
        // SAFETY: forwarded from the caller; the segments are 4 to 512 bytes, a power of
        // two (`reads_fixed_rows`), the input and output 16-byte aligned (just checked). The
        // guards on the element size are always true for such a segment (it holds at
        // least one element); they only spare the compiler impossible instantiations.
        unsafe {
            match segment_bytes {
                4 if size_of::<T>() <= 4 => self.packed_rows::<Op, 4>(rows, out, op),
                8 if size_of::<T>() <= 8 => self.packed_rows::<Op, 2>(rows, out, op),
                16 => self.packed_rows::<Op, 1>(rows, out, op),
                32 => self.shared_rows::<Op, 2>(rows, out, op),
                64 => self.shared_rows::<Op, 4>(rows, out, op),
                128 => self.shared_rows::<Op, 8>(rows, out, op),
                256 => self.shared_rows::<Op, 16>(rows, out, op),
                _ => self.shared_rows::<Op, 32>(rows, out, op),
            }
        }
        // A power of two: a shift, not a 64-bit division.
        (rows * ROW_VECTORS * bytes) >> segment_bytes.trailing_zeros()
    }

    /// The calling lane's [`LOADS_IN_FLIGHT`] vectors of warp row `row`: vectors
    /// `row * ROW_VECTORS + lane + 32 u`, so that each load of the warp reads 512
    /// contiguous bytes, asking the L2 cache for what `P` says. Returns the index of the
    /// first one and the vectors.
    ///
    /// # Safety
    /// The input is 16-byte aligned and `row` is one of its whole rows: `(row + 1) *
    /// ROW_VECTORS` 16-byte vectors lie inside `input[..len]`.
    #[inline(always)]
    unsafe fn load_row<P: L2Prefetch>(&self, row: u64) -> (u64, [grid::Vector; LOADS_IN_FLIGHT]) {
        let warp = WARP_SIZE as u64;
        let first = row * ROW_VECTORS + thread::global_index_x() % warp;
        let base = self.input.cast::<grid::Vector>();
        let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); LOADS_IN_FLIGHT];
        for (u, slot) in loaded.iter_mut().enumerate() {
            // SAFETY: first + 32 u < (row + 1) * ROW_VECTORS: a vector inside the input
            // (caller), global memory that nothing writes during the launch (`new`'s
            // contract).
            *slot = unsafe { grid::load_vector::<T, P>(base.add((first + u as u64 * warp) as usize)) };
        }
        (first, loaded)
    }

    /// Warp rows of segments of `16 / P` bytes, `P` to a vector: each lane folds the `P`
    /// segments of each of its vectors, each in index order from its first element, and writes
    /// the `P` results with one store ([`store_results`]).
    ///
    /// # Safety
    /// As for [`Segments::reduce_fixed_rows`], whose conditions hold, with segments of `16
    /// / P` bytes and `rows` the input's whole rows.
    #[inline(always)]
    unsafe fn packed_rows<Op: Operator<T>, const P: usize>(&self, rows: u64, out: *mut T, op: Op) {
        let per_segment = grid::elements_per_vector::<T>() / P;
        let warps = thread::grid_threads_x() / WARP_SIZE as u64;
        let mut row = thread::global_index_x() / WARP_SIZE as u64;
        while row < rows {
            // SAFETY: row < rows (caller).
            let (first, loaded) = unsafe { self.load_row::<Prefetch256B>(row) };
            for (u, vector) in loaded.iter().enumerate() {
                // Each segment from its first element (no identity, as `grid::vector_total`).
                let results: [T; P] = core::array::from_fn(|j| {
                    (j * per_segment + 1..(j + 1) * per_segment)
                        .fold(vector.element(j * per_segment), |acc, k| op.combine(acc, vector.element(k)))
                });
                let v = first + (u * WARP_SIZE as usize) as u64;
                // SAFETY: vector v holds segments v P .. (v + 1) P, all below count (the
                // rows are whole); out is 16-byte aligned (caller), so out + v P is
                // aligned to the P * size <= 16 bytes of the results; only this lane
                // writes them.
                unsafe { store_results(out.add(v as usize * P), results) };
            }
            row += warps;
        }
    }

    /// Warp rows of segments of `16 G` bytes. Each lane folds its [`LOADS_IN_FLIGHT`]
    /// vectors (one of each of 4 segments, whose other vectors the lane's aligned [`Tile`]
    /// of `G` lanes holds), then the tile combines them by a *reduce-scatter butterfly*:
    /// at distance 1 each lane keeps half of its segments and hands the partner the other
    /// half, at distance 2 half again, until a lane holds one segment (two for `G` = 2);
    /// the steps at the remaining distances (4, 8 and 16, for `G` = 8 to 32) exchange that
    /// one partial. So `G` = 8 takes 2 + 1 + 1 shuffles a row instead of 4 reductions of 3
    /// (found with Nsight Compute on the H200: the short-scoreboard wait on the shuffles
    /// was the largest stall of the rows, 9.0 of 23.9 cycles between a warp's
    /// instructions at `f32` length 32). Every combination puts the lower rank's partial
    /// on the left, so each segment gets a fixed tree in rank (that is, index) order. The
    /// lanes of ranks `0..min(G, 4)` hold the tile's results and write them.
    ///
    /// # Safety
    /// As for [`Segments::reduce_fixed_rows`], whose conditions hold, with segments of `16
    /// G` bytes and `rows` the input's whole rows.
    #[inline(always)]
    unsafe fn shared_rows<Op: Operator<T>, const G: u32>(&self, rows: u64, out: *mut T, op: Op) {
        let tile: Tile<G> = Warp::this().tiles::<G>();
        // SAFETY: the block size is a multiple of 32 (caller), so the tile has its G lanes;
        // `row` and `rows` are the same in every lane of a warp (the warp's lanes have
        // consecutive global indices, a multiple of 32 apart from the next warp's), so all
        // of them run the same iterations and reach each shuffle together.
        let tile = unsafe { tile.assume_present() };
        let rank = tile.thread_rank();
        let warps = thread::grid_threads_x() / WARP_SIZE as u64;
        let mut row = thread::global_index_x() / WARP_SIZE as u64;
        while row < rows {
            // SAFETY: row < rows (caller).
            let (first, loaded) = unsafe { self.load_row::<NoPrefetch>(row) };
            let mut partials: [T; LOADS_IN_FLIGHT] =
                core::array::from_fn(|u| grid::vector_total(&loaded[u], op));
            // partials[..held] are those of vectors `u = lowest ..`, folded over the ranks
            // that differ from the caller's in the bits below `distance`.
            let (mut held, mut lowest, mut distance) = (LOADS_IN_FLIGHT, 0, 1);
            while distance < G {
                let upper = rank & distance != 0;
                if held > 1 {
                    let half = held / 2;
                    for j in 0..half {
                        let (kept, given) = if upper {
                            (partials[half + j], partials[j])
                        } else {
                            (partials[j], partials[half + j])
                        };
                        let received = tile.shfl_xor(given, distance);
                        partials[j] =
                            if upper { op.combine(received, kept) } else { op.combine(kept, received) };
                    }
                    if upper {
                        lowest += half;
                    }
                    held = half;
                } else {
                    let received = tile.shfl_xor(partials[0], distance);
                    partials[0] = if upper {
                        op.combine(received, partials[0])
                    } else {
                        op.combine(partials[0], received)
                    };
                }
                distance *= 2;
            }
            if rank < LOADS_IN_FLIGHT as u32 {
                for (j, &total) in partials[..held].iter().enumerate() {
                    let v = first + ((lowest + j) * WARP_SIZE as usize) as u64;
                    // SAFETY: vector v lies in segment v / G, below count (the rows are
                    // whole); the lanes of ranks below min(G, 4) hold distinct vectors
                    // `lowest + j` of the tile (the butterfly's halves), so only this lane
                    // writes out[v / G].
                    unsafe { out.add((v / G as u64) as usize).write(total) };
                }
            }
            row += warps;
        }
    }
}

/// Whether the fixed form with segments of `segment_len` elements of `T` is reduced in
/// warp rows of 16-byte vectors (`Segments::reduce_fixed_rows`, for a commutative
/// operator): when `T`'s size divides 16 and a segment has a power of two of bytes from 4
/// to [`ROW_SEGMENT_BYTES`], so that (from a 16-byte aligned input) each segment lies
/// whole inside one vector or covers 2 to 32 whole vectors. For such lengths the host's
/// `Auto` picks the thread strategy, whose kernel contains the rows.
pub const fn reads_fixed_rows<T>(segment_len: u64) -> bool {
    if grid::elements_per_vector::<T>() == 0 {
        return false;
    }
    match segment_len.checked_mul(size_of::<T>() as u64) {
        Some(bytes) => bytes.is_power_of_two() && bytes >= 4 && bytes <= ROW_SEGMENT_BYTES,
        None => false,
    }
}

/// Writes `results` to `dst[..P]`: with one 16-byte store when they fill 16 bytes, one
/// 8-byte store when they fill 8, else one store each.
///
/// # Safety
/// `dst` is global memory valid for writes of `P` elements that nothing else accesses
/// during the launch, aligned to `P * size_of::<T>()` bytes when that is 8 or 16.
#[inline(always)]
unsafe fn store_results<T: Pod, const P: usize>(dst: *mut T, results: [T; P]) {
    let bytes: &[u8] = bytemuck::cast_slice(&results);
    match bytes.len() {
        // SAFETY: 16 writable bytes, 16-byte aligned global memory (caller).
        16 => unsafe { arch::store_global_16(dst.cast(), bytemuck::pod_read_unaligned(bytes)) },
        // SAFETY: 8 writable bytes, 8-byte aligned (caller).
        8 => unsafe { dst.cast::<u64>().write(bytemuck::pod_read_unaligned(bytes)) },
        _ => {
            for (j, &result) in results.iter().enumerate() {
                // SAFETY: j < P elements, writable (caller).
                unsafe { dst.add(j).write(result) };
            }
        }
    }
}

/// Segmented reduce with an aligned tile of `LANES` lanes per segment (1: a thread, 32:
/// a warp): tile `w` of the grid reduces segments `w`, `w + tiles`, ... and its rank-0
/// lane writes `out[s]`.
///
/// # Safety
/// - The launch is one-dimensional with a block size that is a multiple of 32, and every
///   thread runs this once.
/// - `segments` is as [`Segments::new`] requires; `out` is valid for writes of
///   `segments.count()` elements that nothing else accesses during the launch.
#[inline(always)]
pub unsafe fn tile_per_segment<T: Pod, Op: Operator<T>, const LANES: u32>(
    segments: Segments<T>,
    out: *mut T,
    op: Op,
) {
    let tile: Tile<LANES> = Warp::this().tiles::<LANES>();
    let rank = tile.thread_rank() as u64;
    // SAFETY: the block size is a multiple of 32 (contract), so the tile has all its
    // LANES lanes, and none returns before the loop ends. Every lane of a tile has the
    // same `s`, so the same trip count: all of them reach each `reduce` below together
    // (the folds' lane-dependent loops end before it, where the lanes reconverge). The
    // emulator still checks this.
    let tile = unsafe { tile.assume_present() };
    let tiles = thread::grid_threads_x() / LANES as u64;
    // The thread strategy reduces the fixed form's short segments in warp rows first, if
    // it can; the loop below takes the segments after those rows (or all of them).
    // SAFETY: forwarded from the caller; every lane of the warp calls this here.
    let rows_cover = if LANES == 1 { unsafe { segments.reduce_fixed_rows(out, op) } } else { 0 };
    let mut s = rows_cover + thread::global_index_x() / LANES as u64;
    while s < segments.count() {
        let (begin, end) = segments.bounds(s);
        let mine = if LANES == WARP_SIZE {
            // SAFETY: a range from `bounds`.
            unsafe { segments.fold_by_warp::<Op, true>(begin, end, rank, op) }
        } else {
            // SAFETY: a range from `bounds`.
            unsafe { segments.fold(begin, end, rank, LANES as u64, op) }
        };
        let total = if LANES == 1 { mine } else { tile.reduce(mine, op) };
        if rank == 0 {
            // SAFETY: s < count, and only this tile's rank 0 writes out[s].
            unsafe { out.add(s as usize).write(total) };
        }
        s += tiles;
    }
}

/// Segmented reduce with a block per segment: block `b` reduces segments `b`,
/// `b + blocks`, ... with [`block::reduce`] and its thread 0 writes `out[s]`. Launched
/// with [`shared_bytes`]`::<T>()` bytes of dynamic shared memory.
///
/// # Safety
/// - The launch is one-dimensional, has that dynamic shared memory, nothing else uses it,
///   and every thread runs this once.
/// - `segments` and `out` as for [`tile_per_segment`].
#[inline(always)]
pub unsafe fn block_per_segment<T: Pod, Op: Operator<T>>(segments: Segments<T>, out: *mut T, op: Op) {
    let rank = thread::linear_thread_idx() as u64;
    let ranks = thread::block_threads() as u64;
    let blocks = thread::grid_blocks() as u64;
    let half = block::LEADER_SCRATCH_LEN;
    let mut s = thread::linear_block_idx() as u64;
    let mut odd = false;
    // Uniform over the block: every thread reaches each block reduction.
    while s < segments.count() {
        // One barrier a segment: `reduce_to_leader` leaves the result in warp 0, whose
        // other warps go on to the next segment's loads while warp 0 combines the warp
        // totals. Those lie in the first half of the scratch for one segment and in the
        // second half for the next, so that the next segment's writes never meet this
        // one's reads, and the segment after it, which writes this half again, comes
        // after the next one's barrier, which warp 0 reaches only once it has read these.
        // Measured on an H200 (2026-11-28, `segreduce-bench --strategy auto,block`, two
        // rounds in two commands, against two barriers a segment): L = 16384 `f32` at 2^24
        // 20.4-20.9 against 22.0-22.7 us, 243 against 256-260 at 2^28; L = 4096 at 2^28
        // 387 against 435; L = 65536 at 2^28 0.3 % slower, 240.3-240.8 against 239.6-240.3
        // (`bench/results/2026-11-28-h200/segmented-block-one-barrier.txt`). An earlier
        // try (cebeeb2) had been 1.5-12 % slower at L = 65536, before this kernel's paired
        // loads under launch bounds.
        let scratch = shared::dynamic_part::<T>(if odd { half * size_of::<T>() } else { 0 }, half);
        // SAFETY: s < count.
        let mine = unsafe { segments.fold_by_block(s, rank, ranks, op) };
        // SAFETY: every thread of the block, with a half of the launch's dynamic shared
        // memory (`shared_bytes`), which only this reduction uses, and which the previous
        // call did not use while the one before it is behind the previous call's barrier.
        let total = unsafe { block::reduce_to_leader(scratch, mine, op) };
        if rank == 0 {
            // SAFETY: s < count, and only this block's thread 0 writes out[s]; it is in
            // warp 0, which holds the result.
            unsafe { out.add(s as usize).write(total) };
        }
        odd = !odd;
        s += blocks;
    }
}

/// Segment `s` reduced by the calling block, as [`block_per_segment`] does for each of
/// its segments (rank `rank` of `ranks` folds its share, then [`block::reduce`] in rank
/// order), its thread 0 writing `out[s]`.
///
/// # Safety
/// Every thread of the block calls this with the same `s < segments.count()`, its own
/// `rank` (`thread::linear_thread_idx`) and `ranks` the block's size; `scratch` is as
/// for [`block::reduce`] (the barriers inside it separate one call from the next); no
/// other block or thread writes `out[s]` during the launch.
#[inline(always)]
unsafe fn reduce_by_block<T: Pod, Op: Operator<T>>(
    segments: Segments<T>,
    s: u64,
    out: *mut T,
    scratch: shared::SharedSlice<T>,
    rank: u64,
    ranks: u64,
    op: Op,
) {
    // SAFETY: s < count (caller).
    let mine = unsafe { segments.fold_by_block(s, rank, ranks, op) };
    // SAFETY: every thread of the block, with `scratch` (caller).
    let total = unsafe { block::reduce(scratch, mine, op) };
    if rank == 0 {
        // SAFETY: s < count, and only this block's thread 0 writes out[s] (caller).
        unsafe { out.add(s as usize).write(total) };
    }
}

/// The balanced strategy's kernel for small inputs ([`is_small_input`]): one launch
/// in which warp `i` of block `b` reduces segments `i * blocks + b`, that plus `warps`,
/// plus `2 warps`, ... (each as [`tile_per_segment`]`::<_, _, 32>` does; neighbouring
/// segments go to different blocks), except those longer than `long_elements`
/// ([`small_input_block_elements`] of the input's length), which it passes over. After
/// its warps' segments, the whole block reduces the ones they passed over, each as
/// [`block_per_segment`] does. Nothing of that happens unless a warp of the block passed
/// one over (one barrier with an `or`); otherwise the block walks its warps' segments
/// again, round by round (each warp looks at the segment it had in that round), each
/// warp's answer goes to shared memory, and the block reduces the marked ones, in warp
/// order, with `reduce_by_block`.
///
/// Why: at a few hundred KiB a call lasts a few microseconds, and what bounds it is the
/// longest chain of dependent round trips to memory that one worker makes, not
/// bandwidth. The batch kernel's warps each take 32 segments and read their medium ones
/// one after another (a warp reads 2 KiB a step), and the chunk kernel adds a second
/// launch (about 2 us); a warp per segment spreads the segments over the whole GPU, and
/// a long segment goes to a block (16 KiB a step). The host launches a block per segment
/// while they are fewer than a wave of blocks, so that long segments in a row are
/// different blocks' (with a warp per segment and few segments, 8 of 16 384 `f32`s at
/// 2^17 were one block's: 15.6-15.8 us).
///
/// Measured on an H100 (2026-11-27, power-law mix of `f32`, `segreduce-bench`, the batch
/// kernel and chunk launch in the same command): 3.5-4.4 / 3.7-4.1 / 3.9 / 4.5 / 7.1-7.2 /
/// 9.0 us at 2^10 / 2^12 / 2^14 / 2^15 / 2^16 / 2^17 elements against 4.8-4.9 / 5.7-5.8
/// / 8.0-8.8 / 9.1-9.3 / 10.1-10.4 / 12.2-12.4, CUB 5.4 / 4.5 / 4.9 / 5.2 / 8.1 / 12.3.
/// Fixed lengths with the balanced strategy forced: 1 024 elements at 2^16 3.9 us
/// against 28.6-28.9, 8 segments of 16 384 at 2^17 5.2 against 9.3-9.7; the worst case,
/// one segment of 2^17 elements (512 KiB for one block), 10.5-10.8 against 9.3-9.7.
///
/// # Safety
/// - As for [`tile_per_segment`] (a one-dimensional launch of a block size that is a
///   multiple of 32, every thread runs this once, `segments` and `out` valid).
/// - The launch has [`small_input_shared_bytes`]`::<T>()` bytes of dynamic shared memory,
///   which nothing else uses. (Of `long`, only `long_elements` is read.)
#[inline(always)]
pub unsafe fn small_input_segments<T: Pod, Op: Operator<T>>(
    segments: Segments<T>,
    out: *mut T,
    long: LongSegments<T>,
    op: Op,
) {
    // SAFETY: the block size is a multiple of 32 (contract), so the warp has all its
    // lanes, and none returns before the loop ends; every lane of a warp has the same
    // `s`, so all of them reach each `reduce` together.
    let warp = unsafe { Warp::this().assume_present() };
    let lane = u64::from(warp.thread_rank());
    let warps = thread::grid_threads_x() / u64::from(WARP_SIZE);
    // Warp `i` of block `b` starts at segment `i * blocks + b`, so that neighbouring
    // segments (several long ones in a row) go to different blocks.
    let (blocks, block) = (thread::grid_blocks() as u64, thread::linear_block_idx() as u64);
    let mut s = u64::from(thread::warp_idx()) * blocks + block;
    // Whether this warp passed a long segment over.
    let mut passed_long = false;
    while s < segments.count() {
        let (begin, end) = segments.bounds(s);
        if end - begin > long.long_elements {
            passed_long = true;
        } else {
            // SAFETY: a range from `bounds`.
            let total = warp.reduce(unsafe { segments.fold_by_warp::<Op, false>(begin, end, lane, op) }, op);
            if lane == 0 {
                // SAFETY: s < count, and only this warp's lane 0 writes out[s].
                unsafe { out.add(s as usize).write(total) };
            }
        }
        s += warps;
    }
    // SAFETY: every thread of the block gets here once (no lane returns early).
    if !unsafe { barrier::sync_or(passed_long) } {
        return;
    }
    let scratch = shared::dynamic_part::<T>(0, block::SCRATCH_LEN);
    let marks = shared::dynamic_part::<u32>(marks_offset::<T>(), WARP_SIZE as usize);
    let rank = thread::linear_thread_idx() as u64;
    let ranks = thread::block_threads() as u64;
    let block_warps = ranks / u64::from(WARP_SIZE);
    // The segment of the block's warp 0 in each round, from `block` in the first: uniform
    // over the block, so every thread reaches each barrier and block reduction.
    let mut round = block;
    while round < segments.count() {
        // This warp's segment of the round, as in the loop above.
        let s = round + u64::from(thread::warp_idx()) * blocks;
        let long_segment = s < segments.count() && {
            let (begin, end) = segments.bounds(s);
            end - begin > long.long_elements
        };
        if lane == 0 {
            // SAFETY: warp_idx < 32 (at most 1 024 threads a block); only this lane writes
            // it, and a barrier separates it from the previous round's reads.
            unsafe { marks.write(thread::warp_idx() as usize, u32::from(long_segment)) };
        }
        // SAFETY: every thread of the block (the loop is uniform); orders the marks'
        // writes before their reads.
        if unsafe { barrier::sync_or(long_segment) } {
            for i in 0..block_warps {
                // SAFETY: i < warps of the block <= 32, written before the barrier above.
                if unsafe { marks.read(i as usize) } != 0 {
                    // SAFETY: every thread of the block, with the same segment (below the
                    // count: its warp measured it), the scratch only block reductions use;
                    // its warp passed it over, and no other block's warps hold it.
                    unsafe { reduce_by_block(segments, round + i * blocks, out, scratch, rank, ranks, op) };
                }
            }
            // SAFETY: every thread of the block (`sync_or`'s result is uniform): the reads
            // above end before the next round writes the marks.
            unsafe { barrier::sync() };
        }
        round += warps;
    }
}

/// Segments of at most this many bytes are tiny for [`balanced_batches`]: the lane that
/// measured one reduces it alone (its window of at most 3 vectors), as the thread
/// strategy does. Every lane works on its own tiny segment at once, while the short ones
/// wait their turn for one of the warp's 8 tiles, so a larger limit takes rounds of
/// tiles away. Measured on an H100 (2026-11-27, power-law mix of `f32`, twice each): 16,
/// 32 and 64 bytes took 735-737, 702-707 and 713-716 us at 2^28 and 12.1-12.3, 10.8-11.3
/// and 11.1-11.4 us at 2^16.
pub const TINY_BYTES: u64 = 32;

/// Longer segments of at most this many bytes are short for [`balanced_batches`]: a tile of
/// [`SHORT_LANES`] lanes reduces each (up to 16 vectors: 4 per lane).
pub const SHORT_BYTES: u64 = 256;

/// Lanes of the tile that reduces one short segment in [`balanced_batches`].
pub const SHORT_LANES: u32 = 4;

/// Loads a rank of a segment window (`Segments::fold_window`) issues before it folds them
/// (the batch kernel's registers: see there).
const WINDOW_LOADS: usize = 2;

/// Vector slots per rank of a segment window (`Segments::fold_window`) for segments of at
/// most `bytes` bytes read by `ranks` ranks: the window has at most `ceil((bytes + 15) /
/// 16)` vectors (2 for a tiny segment, 17 for a short one), shared out round-robin.
const fn window_slots(bytes: u64, ranks: u32) -> usize {
    let vectors = (bytes as usize + 2 * grid::VECTOR_BYTES - 2) / grid::VECTOR_BYTES;
    vectors.div_ceil(ranks as usize)
}

/// The host's default for [`LongSegments`]' `long_elements`, in bytes: segments longer than
/// this go to [`balanced_chunks`]; up to it a warp reduces one (up to 64 vectors per lane,
/// 16 rounds of [`LOADS_IN_FLIGHT`] loads, while the grid's other warps work on their own
/// batches). Measured on an H100 (2026-11-26, power-law mix of `f32`, 128 KiB chunks,
/// `segreduce-bench --long-bytes`): 4, 8, 16 and 32 KiB took 1131, 996, 942 and 914 µs at
/// 2^28 elements and 92.2, 83.0, 89.1 and 78.7 µs at 2^24 (19.1, 18.9, 18.9 and 19.9 at
/// 2^20): a segment of a few chunks is cheaper for a warp than for the chunk kernel's
/// ticket protocol.
pub const LONG_SEGMENT_BYTES: u64 = 32 << 10;

/// The host's default for [`LongSegments`]' `chunk_elements`, in bytes, for an input of
/// `input_bytes`: the input over [`CHUNKS_PER_INPUT`], rounded down to a power of two,
/// from [`MIN_CHUNK_BYTES`] to [`MAX_CHUNK_BYTES`]. A block of [`balanced_chunks`] reads
/// a chunk [`LOADS_IN_FLIGHT`] vectors per thread at a time, then waits for a ticket (a
/// fence and an atomic, about two round trips to memory) before its next chunk, so a
/// larger chunk pays that wait over more bytes, and a smaller one spreads a smaller input
/// over more blocks. Measured on an H100 (2026-11-26, power-law mix of `f32`,
/// `segreduce-bench --chunk-bytes`): 16, 32, 64 and 128 KiB took 1291, 1082, 1014 and
/// 995 µs at 2^28 elements, 97.5, 90.4, 89.5 and 86.5 µs at 2^24, and 17.9, 17.7, 18.5
/// and 18.7 µs at 2^20. A function of the input's length alone, never of the GPU, so that
/// results stay the same bits on every backend.
pub const fn chunk_bytes(input_bytes: u64) -> u64 {
    let share = input_bytes / CHUNKS_PER_INPUT;
    if share <= MIN_CHUNK_BYTES {
        MIN_CHUNK_BYTES
    } else if share >= MAX_CHUNK_BYTES {
        MAX_CHUNK_BYTES
    } else {
        1 << share.ilog2()
    }
}

/// The smallest default chunk: 4 vectors per thread of a block of [`BLOCK_THREADS`], one
/// round of loads.
pub const MIN_CHUNK_BYTES: u64 = 16 << 10;

/// The largest default chunk (32 vectors per thread: 8 rounds of loads).
pub const MAX_CHUNK_BYTES: u64 = 128 << 10;

/// [`chunk_bytes`] aims at this many chunks per input (a few per resident block of a
/// large GPU: an H100 holds 396 blocks of the chunk kernel).
pub const CHUNKS_PER_INPUT: u64 = 512;

/// Bits of the packed counter (see [`LongSegments`]) below the descriptor count: the
/// chunk count.
pub const CHUNK_BITS: u32 = 40;

/// `u64` words per long-segment descriptor: segment, begin, end, first chunk.
pub const DESCRIPTOR_WORDS: usize = 4;

/// Inputs of up to this many times `long_elements` elements may be small for the
/// balanced strategy ([`is_small_input`]).
pub const SMALL_INPUT_LONG_SEGMENTS: u64 = 16;

/// Inputs of up to this many bytes may be small for the balanced strategy
/// ([`is_small_input`]): 16 times the default [`LONG_SEGMENT_BYTES`].
pub const SMALL_INPUT_BYTES: u64 = SMALL_INPUT_LONG_SEGMENTS * LONG_SEGMENT_BYTES;

/// Inputs of at most this many segments may be small for the balanced strategy
/// ([`is_small_input`]).
pub const SMALL_INPUT_SEGMENTS: u64 = 16 << 10;

/// Whether the host reduces `segments` segments over `len` elements of `T` with the
/// balanced strategy's kernel for small inputs ([`small_input_segments`], one launch)
/// rather than with the batch kernel and [`balanced_chunks`]: at most
/// [`SMALL_INPUT_BYTES`] (512 KiB: 2^17 `f32`s) and [`SMALL_INPUT_LONG_SEGMENTS`]` *
/// long_elements` elements, and at most [`SMALL_INPUT_SEGMENTS`] segments. The first two
/// bound the worst case, one segment of the whole input, which one block reads there
/// (at 2^17 `f32`s 10.5-10.8 us on an H100, against 9.3-9.7 in chunks); the third keeps
/// a warp per segment to a few rounds of the grid (an H100 holds 4 224 warps of that
/// kernel), past which the batch kernel's 32 segments a warp are faster. A function of
/// the lengths alone, never of the GPU, so that every segment's order of combination is
/// the same on every backend.
pub const fn is_small_input<T>(len: u64, segments: u64, long_elements: u64) -> bool {
    len <= SMALL_INPUT_LONG_SEGMENTS.saturating_mul(long_elements)
        && len.saturating_mul(element_bytes::<T>()) <= SMALL_INPUT_BYTES
        && segments <= SMALL_INPUT_SEGMENTS
}

/// `T`'s size in bytes, 1 for a zero-sized type (a divisor and a factor for the byte
/// limits above; `usize::max` is not usable in a `const fn`).
const fn element_bytes<T>() -> u64 {
    let size = size_of::<T>() as u64;
    if size == 0 {
        1
    } else {
        size
    }
}

/// Segments longer than this many elements of `T`, in a small input of `len` elements,
/// are reduced by their block in [`small_input_segments`]: a 32nd of the input, at least
/// [`SMALL_INPUT_WARP_BYTES`]. Few enough that the block's turn at them stays short (at
/// most 32 of them over the input), long enough that a warp's read of the others (at
/// most 4 steps of 2 KiB, or a 32nd of the input) is not what the call waits for.
pub const fn small_input_block_elements<T>(len: u64) -> u64 {
    let floor = SMALL_INPUT_WARP_BYTES / element_bytes::<T>();
    let share = len / 32;
    if share > floor {
        share
    } else {
        floor
    }
}

/// The longest segment, in bytes, that [`small_input_segments`] always leaves to a warp
/// (4 of a warp's steps of [`LOADS_IN_FLIGHT`] 16-byte loads a lane).
pub const SMALL_INPUT_WARP_BYTES: u64 = 8 << 10;

/// Dynamic shared memory, in bytes, of [`small_input_segments`] over `T`: the scratch of
/// [`block::reduce`], then one mark per warp of the block (at most 32).
pub const fn small_input_shared_bytes<T>() -> usize {
    marks_offset::<T>() + WARP_SIZE as usize * size_of::<u32>()
}

/// Where the marks of [`small_input_segments`] start in its dynamic shared memory.
const fn marks_offset<T>() -> usize {
    shared_bytes::<T>().next_multiple_of(size_of::<u32>())
}

/// The scratch the balanced strategy ([`balanced_batches`] then [`balanced_chunks`])
/// hands long segments over in, with its limits. The host owns it, allocates it zeroed,
/// and never writes it afterwards: the chunk launch returns the tickets to 0 and clears
/// the counter that the previous launch pair used (see below).
///
/// - `counter`, the *packed counter* of this launch pair (the host owns two and switches
///   to the other after each call that runs [`balanced_chunks`]):
///   `(descriptors << CHUNK_BITS) | chunks`, the long
///   segments handed off so far and their chunks. A segment of `n` elements takes
///   descriptor `old >> CHUNK_BITS` and chunks `old & (2^CHUNK_BITS - 1) ..` plus
///   `ceil(n / chunk_elements)` with one 64-bit `atom.add` of `(1 << CHUNK_BITS) |
///   chunks` that returns `old`. Descriptors therefore come in index order with growing
///   first chunks, the chunks of descriptor `d` right after those of `d - 1`.
/// - `spare_counter`: the other one, which the previous such call used and the next uses.
/// - `descriptors`: [`DESCRIPTOR_WORDS`] words per descriptor: segment, begin, end, first
///   chunk; `tickets`: one `u32` per descriptor; `partials`: one `T` per chunk.
///
/// # Hand-off and memory order
/// 1. [`balanced_batches`] reserves and writes descriptors with plain stores; the kernel
///    boundary orders them (and the counter's additions) before [`balanced_chunks`],
///    launched after it on the same stream.
/// 2. In [`balanced_chunks`] the block that reduces chunk `c` of descriptor `d` writes
///    `partials[c]` (a plain store by thread 0), then `fence.acq_rel.gpu` (release: the
///    partial is visible at device scope before the ticket), then takes a ticket with one
///    `atom.inc` on `tickets[d]` limited to `chunks(d) - 1`. The tickets of `d` form one
///    chain of read-modify-writes, so the block that draws `chunks(d) - 1`, the last,
///    reads from every other block's increment; its thread 0 then runs `fence.acq_rel.gpu`
///    (acquire), and a block barrier hands that on to the rest of the block: every
///    partial of `d` happens before the last block's reads of them, which fold them in
///    chunk order and write `out[segment]`. This is the scheme of [`grid::GridBarrier`],
///    with a ticket in place of the barrier's wait.
/// 3. `atom.inc` stores 0 when it hands out the last ticket, so every ticket is 0 again
///    when the launch ends (every chunk of a descriptor takes exactly one).
/// 4. Thread 0 of block 0 of [`balanced_chunks`], after its chunks, stores 0 into
///    `spare_counter`, which the previous call with a chunk launch used (or which is
///    still zeroed, for a new scratch): that call's kernels have ended (they come before
///    this pair in stream order, or the caller of the host's `_on` calls orders them),
///    nothing of this pair touches that word, and the next call, which uses it, finds it
///    at 0 (the kernel boundary orders the store before it). A call without a chunk
///    launch (an input of at most `long_elements` elements, or a small one, which
///    [`small_input_segments`] reduces without touching the scratch) hands nothing off,
///    so its counter stays 0 and the next call uses it again. So no launch clears the scratch
///    and no block waits for the others to clear its own counter: the chunk kernel's
///    blocks end when their chunks are done. (Until 2026-11-27 they met at a grid-wide
///    ticket first, whose last block cleared the counter. Measured on an H100 that day,
///    power-law mix of `f32`, `segreduce-bench`: a call took 9.8-10.1 us at 2^16 against
///    10.7-11.1 with the ticket, and 701 us at 2^28 against 703-707; Nsight Compute, the
///    chunk kernel at 2^28: 184 us against 187. Clearing the spare counter in
///    [`balanced_batches`] instead made that kernel 13 % slower, with the same registers.)
///
/// # Limits
/// A reservation needs room: a descriptor index below `descriptor_capacity` and its
/// chunks ending at or below `chunk_capacity`. With offsets that are valid segment by
/// segment, long segments do not overlap, so `len / long_elements + 1` descriptors and
/// `len / chunk_elements + descriptors` chunks are always enough. Bad offsets can make
/// valid segments overlap (`[0, 100, 0, 100]`: segments 0 and 2): a reservation without
/// room writes an empty descriptor (when its index is below the capacity) and the warp of
/// [`balanced_batches`] reduces its segment itself, so nothing is written out of bounds.
/// The owning lane first loads the counter and reserves only when that value has room:
/// after the counter is full, at most one reservation per thread of the grid is still in
/// flight, so it never holds more than `descriptor_capacity + threads` descriptors or
/// `chunk_capacity + threads * ceil(len / chunk_elements)` chunks; the host checks that
/// these fit the counter's fields (no carry, no wrap).
#[derive(Clone, Copy)]
pub struct LongSegments<T> {
    counter: *mut u64,
    descriptors: *mut u64,
    tickets: *mut u32,
    partials: *mut T,
    descriptor_capacity: u64,
    chunk_capacity: u64,
    long_elements: u64,
    chunk_elements: u64,
    spare_counter: *mut u64,
}

impl<T: Pod> LongSegments<T> {
    /// The scratch and limits of one balanced launch pair (see the type's docs).
    ///
    /// # Safety
    /// - `counter` and `spare_counter` are two different global `u64`s, `descriptors`
    ///   `descriptor_capacity * DESCRIPTOR_WORDS` `u64`s, `tickets` `descriptor_capacity`
    ///   `u32`s and `partials` `chunk_capacity` `T`s, all valid, aligned and used by no
    ///   other concurrent launch;
    ///   the counters and `tickets` are accessed only atomically during a launch.
    /// - When [`balanced_batches`] starts, `counter` and `tickets` are 0 and no other
    ///   launch uses `spare_counter` (a zeroed allocation, then only these two kernels,
    ///   one launch pair after the other, [`balanced_chunks`] run after every
    ///   [`balanced_batches`] that handed off a segment, and the counters swapped after
    ///   every call that ran [`balanced_chunks`]).
    /// - `long_elements >= 1`, `chunk_elements >= 1`; `chunk_capacity < 2^32`;
    ///   `descriptor_capacity + threads < 2^(64 - CHUNK_BITS)` and `chunk_capacity +
    ///   threads * ceil(len / chunk_elements) < 2^CHUNK_BITS` for the `threads` of the
    ///   batch launch.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub unsafe fn new(
        counter: *mut u64,
        descriptors: *mut u64,
        tickets: *mut u32,
        partials: *mut T,
        descriptor_capacity: u64,
        chunk_capacity: u64,
        long_elements: u64,
        chunk_elements: u64,
        spare_counter: *mut u64,
    ) -> LongSegments<T> {
        LongSegments {
            counter,
            descriptors,
            tickets,
            partials,
            descriptor_capacity,
            chunk_capacity,
            long_elements,
            chunk_elements,
            spare_counter,
        }
    }

    /// The packed counter of this launch pair.
    #[inline(always)]
    fn counter(&self) -> &DeviceAtomicU64 {
        // SAFETY: a valid global u64 accessed only atomically during the launch (`new`).
        unsafe { DeviceAtomicU64::from_ptr(self.counter) }
    }

    /// Clears the previous call's packed counter for the next call (see the type's docs);
    /// one thread of [`balanced_chunks`] calls this.
    #[inline(always)]
    fn clear_spare_counter(&self) {
        // SAFETY: a valid global u64 that no other launch uses during this one (`new`);
        // nothing else in this launch pair accesses it.
        let spare = unsafe { DeviceAtomicU64::from_ptr(self.spare_counter) };
        spare.store(0, Relaxed);
    }

    /// Whether the packed counter `counter` leaves room for one more descriptor of
    /// `chunks` chunks.
    #[inline(always)]
    fn has_room(&self, counter: u64, chunks: u64) -> bool {
        counter >> CHUNK_BITS < self.descriptor_capacity
            && (counter & ((1 << CHUNK_BITS) - 1)) + chunks <= self.chunk_capacity
    }

    /// Hands the long segment `s = begin..end` (validated) off to [`balanced_chunks`]:
    /// reserves a descriptor and its chunks and writes the descriptor. `false` when the
    /// scratch has no room (see the type's docs): the caller reduces the segment itself.
    ///
    /// # Safety
    /// `begin < end`, a range from [`Segments::bounds`]; the calling thread has no other
    /// reservation in flight (it is one call).
    #[inline(always)]
    unsafe fn hand_off(&self, s: u64, begin: u64, end: u64) -> bool {
        let chunks = (end - begin).div_ceil(self.chunk_elements);
        if !self.has_room(self.counter().load(Relaxed), chunks) {
            return false;
        }
        let old = self.counter().fetch_add((1 << CHUNK_BITS) | chunks, Relaxed);
        let descriptor = old >> CHUNK_BITS;
        if descriptor >= self.descriptor_capacity {
            return false;
        }
        let room = self.has_room(old, chunks);
        let (begin, end) = if room { (begin, end) } else { (0, 0) };
        // SAFETY: descriptor < descriptor_capacity, whose words `descriptors` holds (`new`);
        // the counter gave this index to this thread alone, and nothing else accesses the
        // descriptors during this launch. (Four stores rather than a loop over an array,
        // which the compiler would keep in local memory.)
        unsafe {
            let words = self.descriptors.add(descriptor as usize * DESCRIPTOR_WORDS);
            words.write(s);
            words.add(1).write(begin);
            words.add(2).write(end);
            words.add(3).write(old & ((1 << CHUNK_BITS) - 1));
        }
        room
    }

    /// Descriptor `d`'s word `k` (segment, begin, end, first chunk for `k` = 0 to 3).
    ///
    /// # Safety
    /// `d` is below the descriptor count of the packed counter and below
    /// `descriptor_capacity`, written by the batch launch before this one; `k <
    /// DESCRIPTOR_WORDS`.
    #[inline(always)]
    unsafe fn descriptor_word(&self, d: u64, k: usize) -> u64 {
        // SAFETY: forwarded from the caller; written by the previous launch, which the
        // kernel boundary orders before this read.
        unsafe { self.descriptors.add(d as usize * DESCRIPTOR_WORDS + k).read() }
    }

    /// The descriptor of chunk `chunk`, its words (segment, begin, end, first chunk): the
    /// largest `d` in `from..to` whose first chunk is at most `chunk` (first chunks grow
    /// with the index). The calling warp searches together, 32 candidates a round: while
    /// more than 32 remain, lane `l` reads the first chunk of candidate `low + l * stride`
    /// (`stride` = a 32nd of the range, rounded up) and a ballot keeps the highest stride
    /// that starts at or below `chunk`; then lane `l` reads all of descriptor `low + l` and
    /// the winner's words are shuffled to every lane. Each round waits for one read, and
    /// the block loads nothing meanwhile: 2 000 descriptors take 3 dependent reads where a
    /// binary search took 12 with the descriptor's own read. Measured on an H100
    /// (2026-11-27, power-law mix of `f32` at 2^28, about 2 000 descriptors, 3 100 chunks):
    /// the chunk kernel took 172 us against 184 with the binary search (Nsight Compute),
    /// the whole call 671-677 us against 680-683.
    ///
    /// # Safety
    /// `from < to`, every descriptor of `from..to` readable as for
    /// [`LongSegments::descriptor_word`], and descriptor `from`'s first chunk is at most
    /// `chunk`. `warp` has all 32 lanes, and every one calls this together with the same
    /// arguments.
    #[inline(always)]
    unsafe fn find_descriptor(
        &self,
        warp: &Warp,
        chunk: u64,
        from: u64,
        to: u64,
    ) -> (u64, [u64; DESCRIPTOR_WORDS]) {
        let lane = u64::from(warp.thread_rank());
        let (mut low, mut high) = (from, to);
        while high - low > u64::from(WARP_SIZE) {
            let stride = (high - low).div_ceil(u64::from(WARP_SIZE));
            let candidate = low + lane * stride;
            // SAFETY: from <= low <= candidate < high <= to (caller).
            let below = candidate < high && unsafe { self.descriptor_word(candidate, 3) } <= chunk;
            // Lane 0's candidate is `low`, at or below `chunk` (the caller's promise for
            // `from`, kept by every round), and the set lanes are a run from lane 0.
            let last = 31 - warp.ballot(below).leading_zeros();
            low += u64::from(last) * stride;
            high = high.min(low + stride);
        }
        let candidate = low + lane;
        let mut words = [0; DESCRIPTOR_WORDS];
        if candidate < high {
            for (k, word) in words.iter_mut().enumerate() {
                // SAFETY: from <= candidate < high <= to (caller); k < DESCRIPTOR_WORDS.
                *word = unsafe { self.descriptor_word(candidate, k) };
            }
        }
        let last = 31 - warp.ballot(candidate < high && words[3] <= chunk).leading_zeros();
        (low + u64::from(last), words.map(|word| warp.shfl(word, last)))
    }
}

/// The balanced strategy's first kernel, for segments of any mix of lengths: each warp of
/// the grid takes batches of 32 consecutive segments (batch `w`, `w + warps`, ...), lane
/// `l` validates and measures segment `first + l` (neighbouring lanes read neighbouring
/// offsets), and the warp sorts its batch by length:
/// - *tiny* (at most [`TINY_BYTES`]): lane `l` reduces it alone;
/// - *short* (at most [`SHORT_BYTES`]): the warp's 8 aligned tiles of [`SHORT_LANES`] take
///   the batch's short segments 8 at a time, in lane order (each tile's begin and end
///   shuffled from the owning lane), each reduced with the tile's shuffles;
/// - *medium* (up to `long_elements`): the whole warp reduces them one after another, in
///   lane order of the ballot of medium lanes;
/// - *long*: the owning lane hands it off to [`balanced_chunks`] (see [`LongSegments`]);
///   nothing is written for it here.
///
/// Tiny and short segments are read as their *window* of aligned vectors
/// (`Segments::fold_window`, for a commutative operator over a type whose size divides
/// 16; `Segments::fold` otherwise), medium ones with `Segments::fold`, so a segment's
/// order of combination depends only on its class (its length), its address and the
/// constants, never on the batch or the grid: results are the same bits on every run and
/// on every backend.
///
/// # Safety
/// - As for [`tile_per_segment`] (a block size that is a multiple of 32, every thread runs
///   this once, `segments` and `out` valid).
/// - `long` is as [`LongSegments::new`] requires, for this launch's thread count; when a
///   segment may be longer than its `long_elements`, [`balanced_chunks`] runs after this
///   launch on the same stream with the same arguments.
#[inline(always)]
pub unsafe fn balanced_batches<T: Pod, Op: Operator<T>>(
    segments: Segments<T>,
    out: *mut T,
    long: LongSegments<T>,
    op: Op,
) {
    // SAFETY: the block size is a multiple of 32 (contract), so the warp and its tiles
    // have all their lanes, and none returns before the loop ends. The batch loop and the
    // two class loops below run on warp-uniform values (the batch's first segment and
    // ballots), so every lane reaches each collective together; the lane-dependent folds
    // and the hand-off end before them, where the lanes reconverge. The emulator still
    // checks this.
    let (warp, tile) =
        unsafe { (Warp::this().assume_present(), Warp::this().tiles::<SHORT_LANES>().assume_present()) };
    let lane = thread::lane_id();
    let tile_rank = tile.thread_rank() as u64;
    let tile_index = lane / SHORT_LANES;
    let tiny_elements = TINY_BYTES / size_of::<T>().max(1) as u64;
    let short_elements = SHORT_BYTES / size_of::<T>().max(1) as u64;
    let step = thread::grid_threads_x() / 32 * 32;
    let mut first = thread::global_index_x() / 32 * 32;
    while first < segments.count() {
        let s = first + lane as u64;
        let present = s < segments.count();
        let (begin, end) = if present { segments.bounds(s) } else { (0, 0) };
        let length = end - begin;
        // SAFETY: a non-empty range from `bounds`; this thread's only reservation.
        let handed_off = present && length > long.long_elements && unsafe { long.hand_off(s, begin, end) };
        let kept = present && !handed_off;
        if kept && length <= tiny_elements {
            // SAFETY: a range from `bounds` of at most TINY_BYTES bytes, so of at most
            // (slots - 1) * 16 (`window_slots`).
            let total =
                unsafe { segments.fold_short::<Op, 1, { window_slots(TINY_BYTES, 1) }>(begin, end, 0, op) };
            // SAFETY: s < count; only this lane writes out[s].
            unsafe { out.add(s as usize).write(total) };
        }
        let short = kept && length > tiny_elements && length <= short_elements;
        let mut waiting = warp.ballot(short);
        while waiting != 0 {
            let owner = nth_lane(waiting, tile_index);
            let source = owner.unwrap_or(lane);
            let (b, e) = (warp.shfl(begin, source), warp.shfl(end, source));
            let (b, e) = if owner.is_some() { (b, e) } else { (0, 0) };
            // SAFETY: a range from `bounds` (the owner's, of at most SHORT_BYTES bytes, so of
            // at most (slots * SHORT_LANES - 1) * 16: `window_slots`) or the empty one;
            // tile_rank < SHORT_LANES.
            let mine = unsafe {
                segments.fold_short::<Op, SHORT_LANES, { window_slots(SHORT_BYTES, SHORT_LANES) }>(
                    b,
                    e,
                    tile_rank as u32,
                    op,
                )
            };
            let total = tile.reduce(mine, op);
            if let (Some(owner), 0) = (owner, tile_rank) {
                // SAFETY: the owner's segment is below the count; only this tile writes it.
                unsafe { out.add((first + owner as u64) as usize).write(total) };
            }
            for _ in 0..32 / SHORT_LANES {
                waiting &= waiting.wrapping_sub(1);
            }
        }
        let mut waiting = warp.ballot(kept && length > short_elements);
        while waiting != 0 {
            let owner = waiting.trailing_zeros();
            let (b, e) = (warp.shfl(begin, owner), warp.shfl(end, owner));
            // SAFETY: the owner's range from `bounds`.
            let total = warp.reduce(unsafe { segments.fold_by_warp::<Op, false>(b, e, lane as u64, op) }, op);
            if lane == 0 {
                // SAFETY: the owner's segment is below the count; only this warp writes it.
                unsafe { out.add((first + owner as u64) as usize).write(total) };
            }
            waiting &= waiting - 1;
        }
        first += step;
    }
}

/// The lane of the `n`-th set bit of `lanes` (counting from 0 at the lowest), if any.
#[inline(always)]
fn nth_lane(lanes: u32, n: u32) -> Option<u32> {
    let mut rest = lanes;
    for _ in 0..n {
        rest &= rest.wrapping_sub(1);
    }
    (rest != 0).then_some(rest.trailing_zeros())
}

/// The balanced strategy's second kernel: the chunks of the long segments that
/// [`balanced_batches`] handed off. Block `b` takes chunks `b`, `b + blocks`, ...; for
/// chunk `c` each of its warps finds the chunk's descriptor (a search 32 candidates a
/// round over the descriptors from the one of its previous chunk,
/// `LongSegments::find_descriptor`: the same in every warp), folds the chunk's `chunk_elements`
/// with `Segments::fold` and the block's threads, and hands the partial on with the
/// ticket protocol of [`LongSegments`]: the block with a descriptor's last ticket folds
/// its partials in chunk order (so operators need not commute) and writes the segment's
/// result; block 0 then clears the spare counter for the next call (item 4 of
/// [`LongSegments`]). Launched with [`shared_bytes`]`::<T>()` bytes of dynamic shared
/// memory.
///
/// A segment's order of combination depends only on its length, its address,
/// `chunk_elements` and the block size.
///
/// # Safety
/// - A one-dimensional launch of fewer than 2^32 blocks of a multiple of 32 threads (the
///   descriptor search takes 32 candidates a round from whole warps) with that dynamic
///   shared memory, which nothing else uses; every thread runs this once.
/// - Launched after [`balanced_batches`] on the same stream, with the same `segments`,
///   `out` and `long`.
#[inline(always)]
pub unsafe fn balanced_chunks<T: Pod, Op: Operator<T>>(
    segments: Segments<T>,
    out: *mut T,
    long: LongSegments<T>,
    op: Op,
) {
    let scratch = shared::dynamic::<T>();
    let rank = thread::linear_thread_idx() as u64;
    let ranks = thread::block_threads() as u64;
    let blocks = thread::grid_blocks() as u64;
    let reserved = long.counter().load(Relaxed);
    let descriptors = (reserved >> CHUNK_BITS).min(long.descriptor_capacity);
    let chunks = (reserved & ((1 << CHUNK_BITS) - 1)).min(long.chunk_capacity);
    let warp = Warp::this();
    let mut descriptor = 0;
    let mut c = thread::linear_block_idx() as u64;
    // Uniform over the block: every thread reaches each barrier below, and every lane of
    // a warp each collective of the search.
    while c < chunks {
        // SAFETY: descriptor < descriptors: 0 (< descriptors, since a chunk exists), or the
        // previous chunk's, whose first chunk is at most that chunk, below this one; the
        // whole warp calls this with the same, block-uniform, arguments.
        let (found, [s, begin, end, first]) =
            unsafe { long.find_descriptor(&warp, c, descriptor, descriptors) };
        descriptor = found;
        let count = (end - begin).div_ceil(long.chunk_elements);
        // Chunks past `count` belong to a reservation that found no room (empty descriptor).
        if c - first < count {
            let start = begin + (c - first) * long.chunk_elements;
            let stop = (start + long.chunk_elements).min(end);
            // SAFETY: start..stop lies inside a range that `bounds` returned.
            let mine = unsafe { segments.fold(start, stop, rank, ranks, op) };
            // SAFETY: every thread of the block calls this; the barrier of `sync_or` below
            // separates it from the next use of the scratch.
            let partial = unsafe { block::reduce_to_leader(scratch, mine, op) };
            let mut last = false;
            if rank == 0 {
                // SAFETY: c < chunk_capacity; only this block writes partials[c] in this
                // launch, and its readers come after the ticket protocol.
                unsafe { long.partials.add(c as usize).write(partial) };
                fence::device();
                // SAFETY: descriptor < descriptor_capacity: a valid global u32 accessed only
                // atomically during the launch (`LongSegments::new`).
                let ticket = unsafe { DeviceAtomicU32::from_ptr(long.tickets.add(descriptor as usize)) };
                let final_ticket = (count - 1) as u32;
                last = ticket.fetch_inc(final_ticket, Relaxed) == final_ticket;
                if last {
                    fence::device();
                }
            }
            // SAFETY: every thread of the block reaches this barrier once per chunk.
            if unsafe { barrier::sync_or(last) } {
                // SAFETY: every partial of this descriptor happens before this read (the
                // ticket protocol); first + count <= chunk_capacity.
                let total = unsafe { fold_partials(scratch, long.partials, first, count, op) };
                if rank == 0 {
                    // SAFETY: s < count of segments (it came from `hand_off`); only the
                    // block with the last ticket writes out[s].
                    unsafe { out.add(s as usize).write(total) };
                }
            }
        }
        c += blocks;
    }
    if rank == 0 && thread::linear_block_idx() == 0 {
        long.clear_spare_counter();
    }
}

/// `partials[first .. first + count]` folded in index order by the calling block (thread
/// `t` the `t`-th contiguous piece, then [`block::reduce`] in rank order), returned to
/// every thread.
///
/// # Safety
/// Every thread of the block calls this; the partials are readable and their writes
/// happen before this call; `scratch` is as for [`block::reduce`].
#[inline(always)]
unsafe fn fold_partials<T: Pod, Op: Operator<T>>(
    scratch: shared::SharedSlice<T>,
    partials: *const T,
    first: u64,
    count: u64,
    op: Op,
) -> T {
    let rank = thread::linear_thread_idx() as u64;
    let piece = count.div_ceil(thread::block_threads() as u64);
    let start = (rank * piece).min(count);
    let stop = (start + piece).min(count);
    let mut acc = op.identity();
    for k in start..stop {
        // SAFETY: k < count: a partial of the caller's range.
        acc = op.combine(acc, unsafe { partials.add((first + k) as usize).read() });
    }
    // SAFETY: forwarded from the caller.
    unsafe { block::reduce(scratch, acc, op) }
}

/// Declares the segmented-reduce kernels the host's `SegmentedReducer` launches for one
/// element type and operator: one per strategy (thread, tile of 4, tile of 16, warp,
/// block), then the balanced strategy's three (batches, chunks, and its kernel for small
/// inputs). The first five take
///
/// `(input: *const T, len: u64, offsets: *const u64, segment_len: u64, segments: u64,
/// out: *mut T, error: *mut u64)`: the [`Segments`] of [`Segments::new`] (fixed length
/// when `offsets` is null) reduced into `out[..segments]` by [`tile_per_segment`] or
/// [`block_per_segment`]; the balanced two take the same seven, then `(counter: *mut u64,
/// descriptors: *mut u64, tickets: *mut u32, partials: *mut T, descriptor_capacity: u64,
/// chunk_capacity: u64, long_elements: u64, chunk_elements: u64, spare_counter: *mut
/// u64)`: the [`LongSegments`] of [`LongSegments::new`], for [`balanced_batches`],
/// [`balanced_chunks`] and [`small_input_segments`]. The host launches the block kernel
/// with blocks of at most [`SEGMENT_BLOCK_THREADS`] (512, or 256 for many segments), the
/// others with [`BLOCK_THREADS`]; the block and chunk kernels with
/// [`shared_bytes`]`::<T>()` bytes of dynamic shared memory, the
/// one for small inputs with [`small_input_shared_bytes`]`::<T>()`. The block kernel's
/// sm_90 build carries launch bounds ([`SEGMENT_BLOCKS_PER_SM`]): the GPU refuses it a
/// block of more than [`SEGMENT_BLOCK_THREADS`] threads.
///
/// Last, the scan strategy's kernel ([`crate::scan::segmented`], for offsets), which takes
/// `(input: *const T, len: u64, offsets: *const u64, segments: u64, out: *mut T, written:
/// *mut u64, counter: *mut u32, status: *mut u64, epoch: u32)` for
/// [`crate::scan::segmented::reduce_segments`], launched with blocks of
/// [`crate::scan::segmented::BLOCK_THREADS`] and
/// [`crate::scan::segmented::shared_bytes`]`::<T>()` bytes of dynamic shared memory; its
/// sm_80 and sm_90 builds carry launch bounds
/// ([`crate::scan::segmented::BLOCKS_PER_SM`]).
///
/// ```
/// /// Concatenation of digits: `a ⊕ b = a * 10 + b`, which does not commute.
/// #[derive(Clone, Copy, Default)]
/// pub struct Digits;
/// impl warpsafe::op::Operator<u64> for Digits {
///     fn identity(self) -> u64 {
///         0
///     }
///     fn combine(self, a: u64, b: u64) -> u64 {
///         a.wrapping_mul(10).wrapping_add(b)
///     }
/// }
/// warpsafe::segmented_reduce_kernels! {
///     u64, Digits => digits_thread, digits_tile4, digits_tile16, digits_warp, digits_block,
///         digits_batches, digits_chunks, digits_small, digits_scan;
/// }
/// assert_eq!(digits_warp.param_count(), 7);
/// assert_eq!(digits_chunks.param_count(), 16);
/// assert_eq!(digits_small.param_count(), 16);
/// assert_eq!(digits_scan.param_count(), 9);
/// ```
#[macro_export]
macro_rules! segmented_reduce_kernels {
    ($($t:ty, $op:expr => $thread:ident, $tile4:ident, $tile16:ident, $warp:ident, $block:ident, $batches:ident, $chunks:ident, $small:ident, $scan:ident;)*) => {$(
        $crate::kernel! {
            #[doc = concat!("Segmented reduce of `", stringify!($t), "` with `", stringify!($op), "` over offsets, ")]
            #[doc = "by a scan of the input in windows: `warpsafe::scan::segmented::reduce_segments` "]
            #[doc = "(parameters: `warpsafe::segmented_reduce_kernels!`)."]
            ///
            /// # Safety
            /// The contract of `warpsafe::scan::segmented::reduce_segments`.
            pub unsafe fn $scan(
                input: *const $t,
                len: u64,
                offsets: *const u64,
                segments: u64,
                out: *mut $t,
                written: *mut u64,
                counter: *mut u32,
                status: *mut u64,
                epoch: u32,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    $crate::scan::segmented::reduce_segments(
                        input, len, offsets, segments, out, written, counter, status, epoch, $op,
                    )
                }
            }
        }
        #[cfg(target_feature = "sm_80")]
        $crate::__warpsafe_launch_bounds!(
            $scan,
            $crate::scan::segmented::BLOCK_THREADS,
            $crate::scan::segmented::BLOCKS_PER_SM
        );
        $crate::segmented_reduce_kernels!(@balanced $t, $op, $batches, balanced_batches, "the batches of 32 segments");
        $crate::segmented_reduce_kernels!(@balanced $t, $op, $chunks, balanced_chunks, "the chunks of long segments");
        $crate::segmented_reduce_kernels!(@balanced $t, $op, $small, small_input_segments, "a small input in one launch");
        $crate::segmented_reduce_kernels!(@tile $t, $op, $thread, 1);
        $crate::segmented_reduce_kernels!(@tile $t, $op, $tile4, 4);
        $crate::segmented_reduce_kernels!(@tile $t, $op, $tile16, 16);
        $crate::segmented_reduce_kernels!(@tile $t, $op, $warp, 32);
        $crate::kernel! {
            #[doc = concat!("Segmented reduce of `", stringify!($t), "` with `", stringify!($op), "`, a block per segment: ")]
            #[doc = "`warpsafe::reduce::segmented::block_per_segment` (parameters: `warpsafe::segmented_reduce_kernels!`)."]
            ///
            /// # Safety
            /// The contracts of `warpsafe::reduce::segmented::Segments::new` and
            /// `warpsafe::reduce::segmented::block_per_segment`.
            pub unsafe fn $block(
                input: *const $t,
                len: u64,
                offsets: *const u64,
                segment_len: u64,
                segments: u64,
                out: *mut $t,
                error: *mut u64,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    let segments =
                        $crate::reduce::segmented::Segments::new(input, len, offsets, segment_len, segments, error);
                    $crate::reduce::segmented::block_per_segment(segments, out, $op)
                }
            }
        }
        // sm_90 only: for sm_70 and sm_80 ptxas spills 8-byte types' folds at 64 registers.
        #[cfg(target_feature = "sm_90")]
        $crate::__warpsafe_launch_bounds!(
            $block,
            $crate::reduce::segmented::SEGMENT_BLOCK_THREADS,
            $crate::reduce::segmented::SEGMENT_BLOCKS_PER_SM
        );
    )*};
    (@balanced $t:ty, $op:expr, $name:ident, $function:ident, $what:literal) => {
        $crate::kernel! {
            #[doc = concat!("Segmented reduce of `", stringify!($t), "` with `", stringify!($op), "`, balanced strategy, ")]
            #[doc = concat!($what, ": `warpsafe::reduce::segmented::", stringify!($function), "` ")]
            #[doc = "(parameters: `warpsafe::segmented_reduce_kernels!`)."]
            ///
            /// # Safety
            /// The contracts of `warpsafe::reduce::segmented::Segments::new`,
            /// `warpsafe::reduce::segmented::LongSegments::new` and
            #[doc = concat!("`warpsafe::reduce::segmented::", stringify!($function), "`.")]
            pub unsafe fn $name(
                input: *const $t,
                len: u64,
                offsets: *const u64,
                segment_len: u64,
                segments: u64,
                out: *mut $t,
                error: *mut u64,
                counter: *mut u64,
                descriptors: *mut u64,
                tickets: *mut u32,
                partials: *mut $t,
                descriptor_capacity: u64,
                chunk_capacity: u64,
                long_elements: u64,
                chunk_elements: u64,
                spare_counter: *mut u64,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    let segments =
                        $crate::reduce::segmented::Segments::new(input, len, offsets, segment_len, segments, error);
                    let long = $crate::reduce::segmented::LongSegments::new(
                        counter,
                        descriptors,
                        tickets,
                        partials,
                        descriptor_capacity,
                        chunk_capacity,
                        long_elements,
                        chunk_elements,
                        spare_counter,
                    );
                    $crate::reduce::segmented::$function(segments, out, long, $op)
                }
            }
        }
    };
    (@tile $t:ty, $op:expr, $name:ident, $lanes:literal) => {
        $crate::kernel! {
            #[doc = concat!("Segmented reduce of `", stringify!($t), "` with `", stringify!($op), "`, ")]
            #[doc = concat!(stringify!($lanes), " lane(s) per segment: `warpsafe::reduce::segmented::tile_per_segment` ")]
            #[doc = "(parameters: `warpsafe::segmented_reduce_kernels!`)."]
            ///
            /// # Safety
            /// The contracts of `warpsafe::reduce::segmented::Segments::new` and
            /// `warpsafe::reduce::segmented::tile_per_segment`.
            pub unsafe fn $name(
                input: *const $t,
                len: u64,
                offsets: *const u64,
                segment_len: u64,
                segments: u64,
                out: *mut $t,
                error: *mut u64,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    let segments =
                        $crate::reduce::segmented::Segments::new(input, len, offsets, segment_len, segments, error);
                    $crate::reduce::segmented::tile_per_segment::<_, _, $lanes>(segments, out, $op)
                }
            }
        }
    };
}
