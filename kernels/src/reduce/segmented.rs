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
//! Chosen by the host from the average segment length, or the thread strategy for the
//! fixed form when it reads warp rows (or by the caller), each one generic
//! implementation, fixed at compile time:
//!
//! | strategy | function | who reduces one segment |
//! | --- | --- | --- |
//! | thread | [`tile_per_segment`]`::<_, _, 1>` | one thread (many segments per thread over the grid); for the fixed form's short segments read in warp rows ([`reads_fixed_rows`], below) one lane, or an aligned tile of 2 or 4 lanes |
//! | tile of 4 or 16 lanes | [`tile_per_segment`]`::<_, _, 4>`, `::<_, _, 16>` | an aligned [`Tile`] of the warp, combined with the tile's shuffles (without the per-call presence check, which the launch shape proves) |
//! | warp | [`tile_per_segment`]`::<_, _, 32>` | a whole warp |
//! | block | [`block_per_segment`] | a whole block, combined with [`block::reduce`] |
//! | balanced | [`balanced_batches`], then [`balanced_chunks`] | by the segment's own length: its lane (tiny), a tile of 4 (short), a warp (medium), or chunks of it spread over every block and folded by a ticket protocol (long) |
//! | merge path (offsets only) | [`merge_starts`], [`merge_tiles`], then [`merge_fixup`] | whichever threads its elements fall to in equal tiles of the merge of elements and segment ends (below) |
//!
//! Workers take segments `w`, `w + workers`, `w + 2 workers`, ... (grid-stride), so any
//! grid size covers any segment count. The balanced strategy is for offsets whose lengths
//! vary wildly (a power law with a few huge segments): the others give every segment the
//! same workers, so one huge segment is read by one tile, warp or block while the rest of
//! the grid idles; the balanced strategy looks at each length (its warps read 32
//! neighbouring offsets at once) and cuts segments longer than [`LONG_SEGMENT_BYTES`]
//! into chunks of [`CHUNK_BYTES`] that all blocks share ([`LongSegments`] describes the
//! hand-off and its memory-ordering argument).
//!
//! # The merge-path strategy
//! Merrill and Garland's merge-based decomposition of CSR, for offsets. Think of the merge
//! of two sorted lists, the element indices `0 .. n` (relative to `base = offsets[0]`,
//! `n = offsets[S] - base`) and the `S` segment ends `offsets[1 ..= S] - base`. Merge item
//! `d` at coordinate `(i, j)` (`i + j = d`: `i` elements and `j` ends consumed so far) is
//! *close segment `j`* when `offsets[j + 1] <= base + i` (every element below the end was
//! consumed: ties close first), else *consume element `i`*, which belongs to segment `j`.
//! Empty segments are consecutive closes. The merge has `n + S` items, cut into tiles of
//! `D = BLOCK_THREADS * ITEMS` ([`merge_tile_items`]); the work of a tile is `D` items
//! whatever the lengths: a huge segment is many tiles of elements, a flood of empty ones
//! many tiles of closes.
//!
//! - [`merge_starts`]: one thread per tile boundary finds the tile's start `(i, j)` on its
//!   diagonal `d = t D` by a binary search over the offsets in global memory (the largest
//!   `j` with `offsets[j] <= base + d - j`, in `max(0, d - n) ..= min(d, S)`).
//! - [`merge_tiles`]: a block per tile stages the tile's offsets (at most `D + 1`) and
//!   elements (16-byte vectors) in shared memory; each thread searches its own start on
//!   diagonal `rank * ITEMS` of the tile in shared memory and walks its `ITEMS` items
//!   twice. Pass 1: the partial of the segment open at its end and whether it closed one.
//!   A block-wide exclusive *segmented* scan of those pairs (the `Carry` operator `a ⊕ b =
//!   b` if `b` closed one, else `(a.partial ⊕ b.partial, a.closed)`, with
//!   [`block::exclusive_scan`], in rank order) gives each thread the partial of the
//!   segment open at its start. Pass 2 continues it and writes each closed segment's
//!   result to `out[j]`, except the tile's first closed segment when it began in an
//!   earlier tile: that partial goes to `heads[t]`. The partial of the segment open at the
//!   tile's end goes to `tails[t]`.
//! - [`merge_fixup`]: for each tile `t` whose first closed segment `s` began in an earlier
//!   tile `k`, `out[s] = tails[k] ⊕ tails[k + 1] ⊕ ... ⊕ tails[t - 1] ⊕ heads[t]`, folded
//!   by a block in a fixed order (a segment of `N / 16` elements spans thousands of tiles).
//!
//! *Order.* Inside a tile, a segment's elements are folded by consecutive threads, each
//! over consecutive items; the segmented scan combines threads in rank order, so a
//! segment's partial in a tile is its elements in index order. Across tiles, `tails[k]`
//! holds the segment's first elements, `tails[k + 1 .. t]` the following whole tiles and
//! `heads[t]` its last ones, combined left to right: operators need not commute. The tile
//! and thread split depends only on the offsets and `D` (a function of `T`), never on
//! the grid or timing, so float results are the same bits on every run, seed,
//! resident-block count and backend.
//!
//! *Memory order.* Each launch reads only what an earlier launch on the same stream wrote
//! (the starts, then the heads and tails) with plain loads and stores: the kernel
//! boundary orders every write of one launch before every read of the next, so no fence
//! or atomic is needed. Inside [`merge_tiles`] the staging is written before a block
//! barrier and read after it, and rewritten for the next tile only after another.
//!
//! *Sizes.* `ITEMS` ([`merge_items`]): 12 for 4-byte types, 8 for 8-byte ones. A tile of
//! `f32` is 3072 items, about 11 KiB of elements for the power-law mix (13 elements per
//! segment: 93 % elements) plus its offsets, staged with 3 or 4 16-byte loads in flight
//! per thread; with 37.5 KB of shared memory and 74 registers (`ptxas -v`, sm_90) an H100 holds 3
//! such blocks per SM, about 34 KiB of loads in flight per SM or 4.5 MB over 132 SMs, above the
//! ~2.5 MB that 3.3 TB/s needs at ~0.75 µs of latency. The cost per item is a few shared
//! loads and one combine in each pass, independent of segment lengths.
//!
//! *Bad offsets.* Then the merge order means nothing, but every index is clamped: `base`
//! and `n` to the input, a coordinate's `i` to `0 ..= n` and `j` to `0 ..= S`, every walk
//! to `ITEMS` steps inside its tile's bounds, every search to its range. Each tile checks
//! the pairs `offsets[k], offsets[k + 1]` of the segments it closes (together the tiles
//! check every segment), and a tile whose starts do not grow by at most a tile (only bad
//! offsets do that) records an error and does nothing else. Bad offsets are recorded in
//! the error word (the lowest bad pair a tile sees); the host's waiting call then reruns
//! the call with the balanced strategy, which reduces the good segments, gives the bad
//! ones the identity and names the lowest bad one.
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
//! # The fixed form's short segments: warp rows
//! A thread per segment that reads one short segment after another keeps few bytes in
//! flight. So the thread strategy's kernel first reduces the fixed form in *warp rows*
//! when the operator commutes, `T`'s size divides 16, a segment has `B` = 4, 8, 16, 32 or
//! 64 bytes ([`reads_fixed_rows`]: `f32` of length 1, 2, 4, 8, 16; `f64` of length 1, 2,
//! 4, 8) and the input and output are 16-byte aligned (every buffer is 256-byte aligned
//! on both backends), so that segment `s` starts at byte `s * B` and lies whole inside
//! one vector, or covers 2 or 4 whole ones:
//! - the input's whole 2 KiB rows of [`ROW_VECTORS`] vectors go to the warps of the grid
//!   in turn; lane `l` loads vectors `l, l + 32, l + 64, l + 96` of its warp's row (4
//!   loads in flight, each load of the warp 512 contiguous bytes);
//! - `B <= 16`: a vector holds `P = 16 / B` segments; the lane folds each in index order
//!   from the identity and writes the `P` results together (one 16-byte store for `f32`
//!   of length 1 or 64-bit elements of length 1, one 8-byte store for `P * size` = 8);
//! - `B` = 32 or 64: the aligned tile of `G = B / 16` (2 or 4) lanes that loaded a
//!   segment's vectors folds one each, combines them with the tile's shuffle reduce, and
//!   its rank 0 writes the result;
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
use crate::arch::{self, WARP_SIZE};
use crate::atomic::{DeviceAtomicU32, DeviceAtomicU64, Relaxed};
use crate::barrier;
use crate::fence;
use crate::group::{Group, Tile, Warp};
use crate::op::Operator;
use crate::shared;
use crate::thread;

/// The block size the host launches every segmented-reduce kernel with (the tile
/// strategies need a multiple of 32; the block strategy works with any size).
pub const BLOCK_THREADS: u32 = 256;

/// The error word's value when every segment was well formed.
pub const NO_ERROR: u64 = u64::MAX;

/// 16-byte loads each rank keeps in flight in a segment's vector fold, and each lane in a
/// warp row of the fixed form.
pub const LOADS_IN_FLIGHT: usize = 4;

/// 16-byte vectors in one warp row of the fixed form (`Segments::reduce_fixed_rows`):
/// [`LOADS_IN_FLIGHT`] per lane, 2 KiB.
pub const ROW_VECTORS: u64 = LOADS_IN_FLIGHT as u64 * WARP_SIZE as u64;

/// What is wrong with a segment, as recorded in the error word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadSegment {
    /// `offsets[s + 1] < offsets[s]`.
    NotMonotonic = 0,
    /// `offsets[s + 1]` is past the end of the input.
    PastInput = 1,
}

/// Dynamic shared memory, in bytes, that every segmented-reduce kernel over `T` needs
/// (the block strategy's [`block::reduce`] scratch; the others ignore it).
pub const fn shared_bytes<T>() -> usize {
    block::SCRATCH_LEN * core::mem::size_of::<T>()
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
        if grid::reads_vectors::<T, Op>(self.input) {
            // SAFETY: forwarded from the caller; the operator commutes and the element
            // size divides 16 (just checked).
            return unsafe { self.fold_vectors(begin, end, rank, ranks, op) };
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
    /// # Safety
    /// As for [`Segments::fold`]; `Op` commutes, `T`'s size divides 16 and the input's
    /// distance to the next 16-byte boundary is a multiple of it
    /// ([`grid::reads_vectors`]).
    #[inline(always)]
    unsafe fn fold_vectors<Op: Operator<T>>(&self, begin: u64, end: u64, rank: u64, ranks: u64, op: Op) -> T {
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
        while v + (LOADS_IN_FLIGHT as u64 - 1) * ranks < vectors {
            let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); LOADS_IN_FLIGHT];
            for (u, slot) in loaded.iter_mut().enumerate() {
                // SAFETY: v + u * ranks <= v + 3 * ranks < vectors: the vector lies inside
                // the segment, in global memory that nothing writes during the launch
                // (`new`'s contract).
                *slot = unsafe { grid::load_vector::<T>(base.add((v + u as u64 * ranks) as usize)) };
            }
            for (partial, vector) in partials.iter_mut().zip(&loaded) {
                *partial = grid::fold_vector(*partial, vector, op);
            }
            v += LOADS_IN_FLIGHT as u64 * ranks;
        }
        for (u, partial) in partials.iter_mut().enumerate() {
            let index = v + u as u64 * ranks;
            if index < vectors {
                // SAFETY: index < vectors, as above.
                *partial = grid::fold_vector(
                    *partial,
                    &unsafe { grid::load_vector::<T>(base.add(index as usize)) },
                    op,
                );
            }
        }
        partials.into_iter().fold(acc, |acc, partial| op.combine(acc, partial))
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
        // SAFETY: forwarded from the caller; the segments are 4, 8, 16, 32 or 64 bytes
        // (`reads_fixed_rows`), the input and output 16-byte aligned (just checked). The
        // guards on the element size are always true for such a segment (it holds at
        // least one element); they only spare the compiler impossible instantiations.
        unsafe {
            match segment_bytes {
                4 if size_of::<T>() <= 4 => self.packed_rows::<Op, 4>(rows, out, op),
                8 if size_of::<T>() <= 8 => self.packed_rows::<Op, 2>(rows, out, op),
                16 => self.packed_rows::<Op, 1>(rows, out, op),
                32 => self.shared_rows::<Op, 2>(rows, out, op),
                _ => self.shared_rows::<Op, 4>(rows, out, op),
            }
        }
        // A power of two: a shift, not a 64-bit division.
        (rows * ROW_VECTORS * bytes) >> segment_bytes.trailing_zeros()
    }

    /// The calling lane's [`LOADS_IN_FLIGHT`] vectors of warp row `row`: vectors
    /// `row * ROW_VECTORS + lane + 32 u`, so that each load of the warp reads 512
    /// contiguous bytes. Returns the index of the first one and the vectors.
    ///
    /// # Safety
    /// The input is 16-byte aligned and `row` is one of its whole rows: `(row + 1) *
    /// ROW_VECTORS` 16-byte vectors lie inside `input[..len]`.
    #[inline(always)]
    unsafe fn load_row(&self, row: u64) -> (u64, [grid::Vector; LOADS_IN_FLIGHT]) {
        let warp = WARP_SIZE as u64;
        let first = row * ROW_VECTORS + thread::global_index_x() % warp;
        let base = self.input.cast::<grid::Vector>();
        let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); LOADS_IN_FLIGHT];
        for (u, slot) in loaded.iter_mut().enumerate() {
            // SAFETY: first + 32 u < (row + 1) * ROW_VECTORS: a vector inside the input
            // (caller), global memory that nothing writes during the launch (`new`'s
            // contract).
            *slot = unsafe { grid::load_vector::<T>(base.add((first + u as u64 * warp) as usize)) };
        }
        (first, loaded)
    }

    /// Warp rows of segments of `16 / P` bytes, `P` to a vector: each lane folds the `P`
    /// segments of each of its vectors, each in index order from the identity, and writes
    /// the `P` results with one store ([`store_results`]).
    ///
    /// # Safety
    /// As for [`Segments::reduce_fixed_rows`], whose conditions hold, with segments of `16
    /// / P` bytes and `rows` the input's whole rows.
    #[inline(always)]
    unsafe fn packed_rows<Op: Operator<T>, const P: usize>(&self, rows: u64, out: *mut T, op: Op) {
        let size = size_of::<T>();
        let per_segment = grid::elements_per_vector::<T>() / P;
        let warps = thread::grid_threads_x() / WARP_SIZE as u64;
        let mut row = thread::global_index_x() / WARP_SIZE as u64;
        while row < rows {
            // SAFETY: row < rows (caller).
            let (first, loaded) = unsafe { self.load_row(row) };
            for (u, vector) in loaded.iter().enumerate() {
                let results: [T; P] = core::array::from_fn(|j| {
                    (j * per_segment..(j + 1) * per_segment).fold(op.identity(), |acc, k| {
                        op.combine(acc, bytemuck::pod_read_unaligned(&vector.0[k * size..(k + 1) * size]))
                    })
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

    /// Warp rows of segments of `16 G` bytes: the aligned [`Tile`] of `G` lanes that read
    /// a segment's `G` vectors folds one each and combines them with the tile's shuffle
    /// reduce (fixed order), and its rank 0 writes the result.
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
        // of them run the same iterations and reach each `reduce` together.
        let tile = unsafe { tile.assume_present() };
        let warps = thread::grid_threads_x() / WARP_SIZE as u64;
        let mut row = thread::global_index_x() / WARP_SIZE as u64;
        while row < rows {
            // SAFETY: row < rows (caller).
            let (first, loaded) = unsafe { self.load_row(row) };
            for (u, vector) in loaded.iter().enumerate() {
                let total = tile.reduce(grid::fold_vector(op.identity(), vector, op), op);
                let v = first + (u * WARP_SIZE as usize) as u64;
                if tile.thread_rank() == 0 {
                    // SAFETY: the tile's vectors v .. v + G (v a multiple of G at rank 0)
                    // are segment v / G, below count (the rows are whole); only this lane
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
/// operator): when `T`'s size divides 16 and a segment has 4, 8, 16, 32 or 64 bytes, so
/// that (from a 16-byte aligned input) each segment lies whole inside one vector or
/// covers 2 or 4 whole vectors. For such lengths the host's `Auto` picks the thread
/// strategy, whose kernel contains the rows.
pub const fn reads_fixed_rows<T>(segment_len: u64) -> bool {
    if grid::elements_per_vector::<T>() == 0 {
        return false;
    }
    match segment_len.checked_mul(size_of::<T>() as u64) {
        Some(bytes) => bytes.is_power_of_two() && bytes >= 4 && bytes <= 64,
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
        // SAFETY: a range from `bounds`.
        let mine = unsafe { segments.fold(begin, end, rank, LANES as u64, op) };
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
    let scratch = shared::dynamic::<T>();
    let rank = thread::linear_thread_idx() as u64;
    let ranks = thread::block_threads() as u64;
    let blocks = thread::grid_blocks() as u64;
    let mut s = thread::linear_block_idx() as u64;
    // Uniform over the block: every thread reaches each block::reduce.
    while s < segments.count() {
        let (begin, end) = segments.bounds(s);
        // SAFETY: a range from `bounds`.
        let mine = unsafe { segments.fold(begin, end, rank, ranks, op) };
        // SAFETY: every thread of the block calls this (the loop is uniform over the
        // block), with the launch's dynamic shared memory, which only block::reduce uses;
        // its own barriers separate one call from the next.
        let total = unsafe { block::reduce(scratch, mine, op) };
        if rank == 0 {
            // SAFETY: s < count, and only this block's thread 0 writes out[s].
            unsafe { out.add(s as usize).write(total) };
        }
        s += blocks;
    }
}

/// Segments of at most this many bytes (one vector's) are tiny for [`balanced_batches`]:
/// the lane that measured one reduces it alone, as the thread strategy does.
pub const TINY_BYTES: u64 = 16;

/// Longer segments of at most this many bytes are short for [`balanced_batches`]: a tile of
/// [`SHORT_LANES`] lanes reduces each (up to 16 vectors: 4 per lane).
pub const SHORT_BYTES: u64 = 256;

/// Lanes of the tile that reduces one short segment in [`balanced_batches`].
pub const SHORT_LANES: u32 = 4;

/// The host's default for [`LongSegments`]' `long_elements`, in bytes: segments longer than
/// this go to [`balanced_chunks`]; up to it a warp reduces one (at most 16 vectors per
/// lane, so a warp is done after a few round trips to memory).
pub const LONG_SEGMENT_BYTES: u64 = 8 << 10;

/// The host's default for [`LongSegments`]' `chunk_elements`, in bytes: the share of a long
/// segment one block of [`balanced_chunks`] reads (4 vectors per thread of a block of
/// [`BLOCK_THREADS`]), small enough that the three `len / 16` segments of a power-law mix
/// of 2^24 `f32`s give every resident block of an H100 a chunk, large enough that the
/// per-chunk ticket costs little.
pub const CHUNK_BYTES: u64 = 16 << 10;

/// Bits of the packed counter (see [`LongSegments`]) below the descriptor count: the
/// chunk count.
pub const CHUNK_BITS: u32 = 40;

/// `u64` words per long-segment descriptor: segment, begin, end, first chunk.
pub const DESCRIPTOR_WORDS: usize = 4;

/// The scratch the balanced strategy ([`balanced_batches`] then [`balanced_chunks`])
/// hands long segments over in, with its limits. The host owns it, allocates it zeroed,
/// and never writes it afterwards: the kernels leave it as they found it (see below).
///
/// - `control[0]`, the *packed counter*: `(descriptors << CHUNK_BITS) | chunks`, the long
///   segments handed off so far and their chunks. A segment of `n` elements takes
///   descriptor `old >> CHUNK_BITS` and chunks `old & (2^CHUNK_BITS - 1) ..` plus
///   `ceil(n / chunk_elements)` with one 64-bit `atom.add` of `(1 << CHUNK_BITS) |
///   chunks` that returns `old`. Descriptors therefore come in index order with growing
///   first chunks, the chunks of descriptor `d` right after those of `d - 1`.
/// - `control[1]` (its low 32 bits): the chunk kernel's *grid ticket*.
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
/// 4. At its end every block of [`balanced_chunks`] meets at a block barrier (its threads'
///    reads of the packed counter happen before it), then its thread 0 runs
///    `fence.acq_rel.gpu` and takes a grid ticket (`atom.inc` limited to `blocks - 1`,
///    back to 0 after the last). The block that draws the last ticket runs the fence again
///    and stores 0 into the packed counter: every block's read of the counter happens
///    before that store, so none can see it, and the next launch finds the counter at 0
///    with no clearing launch.
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
    control: *mut u64,
    descriptors: *mut u64,
    tickets: *mut u32,
    partials: *mut T,
    descriptor_capacity: u64,
    chunk_capacity: u64,
    long_elements: u64,
    chunk_elements: u64,
}

impl<T: Pod> LongSegments<T> {
    /// The scratch and limits of one balanced launch pair (see the type's docs).
    ///
    /// # Safety
    /// - `control` holds 2 global `u64`s, `descriptors` `descriptor_capacity *
    ///   DESCRIPTOR_WORDS` `u64`s, `tickets` `descriptor_capacity` `u32`s and `partials`
    ///   `chunk_capacity` `T`s, all valid, aligned and used by no other concurrent launch;
    ///   `control` and `tickets` are accessed only atomically during a launch.
    /// - When [`balanced_batches`] starts, `control` and `tickets` are 0 (a zeroed
    ///   allocation, then only these two kernels, [`balanced_chunks`] run after every
    ///   [`balanced_batches`] that handed off a segment).
    /// - `long_elements >= 1`, `chunk_elements >= 1`; `chunk_capacity < 2^32`;
    ///   `descriptor_capacity + threads < 2^(64 - CHUNK_BITS)` and `chunk_capacity +
    ///   threads * ceil(len / chunk_elements) < 2^CHUNK_BITS` for the `threads` of the
    ///   batch launch.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub unsafe fn new(
        control: *mut u64,
        descriptors: *mut u64,
        tickets: *mut u32,
        partials: *mut T,
        descriptor_capacity: u64,
        chunk_capacity: u64,
        long_elements: u64,
        chunk_elements: u64,
    ) -> LongSegments<T> {
        LongSegments {
            control,
            descriptors,
            tickets,
            partials,
            descriptor_capacity,
            chunk_capacity,
            long_elements,
            chunk_elements,
        }
    }

    /// The packed counter.
    #[inline(always)]
    fn counter(&self) -> &DeviceAtomicU64 {
        // SAFETY: a valid global u64 accessed only atomically during the launch (`new`).
        unsafe { DeviceAtomicU64::from_ptr(self.control) }
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

    /// Descriptor `d`'s words: segment, begin, end, first chunk.
    ///
    /// # Safety
    /// `d` is below the descriptor count of the packed counter and below
    /// `descriptor_capacity`, written by the batch launch before this one.
    #[inline(always)]
    unsafe fn descriptor(&self, d: u64) -> [u64; DESCRIPTOR_WORDS] {
        let mut words = [0; DESCRIPTOR_WORDS];
        for (k, word) in words.iter_mut().enumerate() {
            // SAFETY: forwarded from the caller; written by the previous launch, which the
            // kernel boundary orders before this read.
            *word = unsafe { self.descriptors.add(d as usize * DESCRIPTOR_WORDS + k).read() };
        }
        words
    }

    /// The descriptor of chunk `chunk`: the largest `d` in `from..to` whose first chunk is
    /// at most `chunk` (binary search: first chunks grow with the index).
    ///
    /// # Safety
    /// `from < to`, every descriptor of `from..to` readable as for
    /// [`LongSegments::descriptor`], and descriptor `from`'s first chunk is at most `chunk`.
    #[inline(always)]
    unsafe fn descriptor_of(&self, chunk: u64, from: u64, to: u64) -> u64 {
        let (mut low, mut high) = (from, to);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            // SAFETY: from <= middle < to (caller).
            let first = unsafe { self.descriptors.add(middle as usize * DESCRIPTOR_WORDS + 3).read() };
            if first <= chunk {
                low = middle;
            } else {
                high = middle;
            }
        }
        low
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
/// Every class folds with `Segments::fold`, so a segment's order of combination depends
/// only on its class (its length), its address and the constants, never on the batch or
/// the grid: results are the same bits on every run and on every backend.
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
            // SAFETY: a range from `bounds`.
            let total = unsafe { segments.fold(begin, end, 0, 1, op) };
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
            // SAFETY: a range from `bounds` (the owner's) or the empty one.
            let total = tile.reduce(unsafe { segments.fold(b, e, tile_rank, SHORT_LANES as u64, op) }, op);
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
            let total = warp.reduce(unsafe { segments.fold(b, e, lane as u64, 32, op) }, op);
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
/// chunk `c` it finds its descriptor (a binary search over the descriptors from the one
/// of its previous chunk, the same in every thread), folds the chunk's `chunk_elements`
/// with `Segments::fold` and the block's threads, and hands the partial on with the
/// ticket protocol of [`LongSegments`]: the block with a descriptor's last ticket folds
/// its partials in chunk order (so operators need not commute) and writes the segment's
/// result. Then the grid ticket, and the last block resets the packed counter. Launched
/// with [`shared_bytes`]`::<T>()` bytes of dynamic shared memory.
///
/// A segment's order of combination depends only on its length, its address,
/// `chunk_elements` and the block size.
///
/// # Safety
/// - A one-dimensional launch of fewer than 2^32 blocks with that dynamic shared memory,
///   which nothing else uses; every thread runs this once.
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
    let mut descriptor = 0;
    let mut c = thread::linear_block_idx() as u64;
    // Uniform over the block: every thread reaches each barrier below.
    while c < chunks {
        // SAFETY: descriptor < descriptors: 0 (< descriptors, since a chunk exists), or the
        // previous chunk's, whose first chunk is at most that chunk, below this one.
        descriptor = unsafe { long.descriptor_of(c, descriptor, descriptors) };
        // SAFETY: as above.
        let [s, begin, end, first] = unsafe { long.descriptor(descriptor) };
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
    // SAFETY: every thread of the block gets here once; every thread's read of the
    // packed counter comes before it.
    unsafe { barrier::sync() };
    if rank == 0 {
        fence::device();
        // SAFETY: the second control word's low half: a valid, aligned global u32 accessed
        // only atomically during the launch (`LongSegments::new`).
        let grid_ticket = unsafe { DeviceAtomicU32::from_ptr(long.control.add(1).cast::<u32>()) };
        let final_ticket = (blocks - 1) as u32;
        if grid_ticket.fetch_inc(final_ticket, Relaxed) == final_ticket {
            fence::device();
            long.counter().store(0, Relaxed);
        }
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

// ---------------------------------------------------------------------------------------
// The merge-path strategy
// ---------------------------------------------------------------------------------------

/// Merge items per thread of the merge-path strategy's tiles over `T` ([`merge_tiles`]):
/// 12 for elements of up to 4 bytes, 8 up to 8 bytes, 4 up to 16, else 2 (module docs,
/// "The merge-path strategy", for the reasoning).
pub const fn merge_items<T>() -> usize {
    let size = size_of::<T>();
    if size <= 4 {
        12
    } else if size <= 8 {
        8
    } else if size <= 16 {
        4
    } else {
        2
    }
}

/// Merge items of one tile of the merge-path strategy over `T`: [`BLOCK_THREADS`] times
/// [`merge_items`] (3072 for `f32`, 2048 for `f64`).
pub const fn merge_tile_items<T>() -> u64 {
    BLOCK_THREADS as u64 * merge_items::<T>() as u64
}

/// `bytes` rounded up to a multiple of 16.
const fn round_up_16(bytes: usize) -> usize {
    bytes.div_ceil(16) * 16
}

/// Offsets one tile of [`merge_tiles`] stages: at most a tile's items plus one.
const fn merge_offset_slots<T>() -> usize {
    merge_tile_items::<T>() as usize + 1
}

/// Element slots of one tile's staging: a tile's items plus room for the part of the
/// first and last 16-byte vector outside the tile.
const fn merge_element_slots<T>() -> usize {
    merge_tile_items::<T>() as usize + 2 * grid::VECTOR_BYTES
}

/// Byte offset of the staged elements in [`merge_tiles`]' dynamic shared memory.
const fn merge_elements_at<T>() -> usize {
    round_up_16(merge_offset_slots::<T>() * size_of::<u64>())
}

/// Byte offset of the segmented scan's scratch in [`merge_tiles`]' dynamic shared memory.
const fn merge_scratch_at<T>() -> usize {
    merge_elements_at::<T>() + round_up_16(merge_element_slots::<T>() * size_of::<T>())
}

/// Dynamic shared memory, in bytes, of [`merge_tiles`] over `T`: the tile's offsets, its
/// elements and the scratch of the block's segmented scan (37.5 KB for `f32`, 33.8 KB for
/// `f64`). [`merge_starts`] needs none, [`merge_fixup`] [`shared_bytes`]`::<T>()`.
pub const fn merge_shared_bytes<T>() -> usize {
    merge_scratch_at::<T>() + block::SCRATCH_LEN * size_of::<Carry<T>>()
}

/// What a thread hands to the next ones in [`merge_tiles`]' segmented scan: the partial of
/// the segment open at its end and whether it closed any segment. Packed, so that it has
/// no padding for any `T` (it moves through shuffles word by word, and through shared
/// memory by value).
#[derive(Clone, Copy)]
#[repr(C, packed)]
struct Carry<T> {
    partial: T,
    closed: u32,
}

// SAFETY: `repr(C, packed)` over two `Pod` fields: no padding, every bit pattern valid,
// zero included.
unsafe impl<T: Pod> bytemuck::Zeroable for Carry<T> {}
// SAFETY: as above (`T: Pod` is `Copy + 'static`).
unsafe impl<T: Pod> Pod for Carry<T> {}

/// The segmented scan's operator over [`Carry`]: `a ⊕ b` is `b` when `b` closed a segment
/// (what came before `b`'s last close belongs to closed segments), else `a`'s partial
/// combined with `b`'s, closed when `a` closed. Associative whenever `Op` is, and it keeps
/// `Op`'s operand order.
#[derive(Clone, Copy)]
struct CarryOp<Op>(Op);

impl<T: Pod, Op: Operator<T>> Operator<Carry<T>> for CarryOp<Op> {
    #[inline(always)]
    fn identity(self) -> Carry<T> {
        Carry { partial: self.0.identity(), closed: 0 }
    }

    #[inline(always)]
    fn combine(self, a: Carry<T>, b: Carry<T>) -> Carry<T> {
        if b.closed != 0 {
            b
        } else {
            Carry { partial: self.0.combine(a.partial, b.partial), closed: a.closed }
        }
    }
}

/// The merge-path strategy's scratch, owned by the host: `starts[t]` for `t` in
/// `0..=tiles` (tile `t`'s start coordinate: the segment ends consumed before merge item
/// `t * D`, written by [`merge_starts`]), and per tile `heads[t]` and `tails[t]` (written
/// by [`merge_tiles`], read by [`merge_fixup`]; module docs).
#[derive(Clone, Copy)]
pub struct MergeTiles<T> {
    starts: *mut u64,
    heads: *mut T,
    tails: *mut T,
    tiles: u64,
}

impl<T: Pod> MergeTiles<T> {
    /// The scratch of one merge-path launch triple.
    ///
    /// # Safety
    /// `starts` holds `tiles + 1` `u64`s, `heads` and `tails` `tiles` `T`s each, all valid,
    /// aligned global memory that no other concurrent launch uses; `tiles` is at least
    /// `ceil((len + segments) / merge_tile_items::<T>())` for the launch's `Segments`
    /// (offsets form).
    #[inline(always)]
    pub unsafe fn new(starts: *mut u64, heads: *mut T, tails: *mut T, tiles: u64) -> MergeTiles<T> {
        MergeTiles { starts, heads, tails, tiles }
    }

    /// Tile `t`'s start coordinate (segment ends consumed before it).
    ///
    /// # Safety
    /// `t <= tiles`, written by [`merge_starts`] in an earlier launch on the same stream.
    #[inline(always)]
    unsafe fn start(&self, t: u64) -> u64 {
        // SAFETY: forwarded from the caller (`new`'s contract for the allocation).
        unsafe { self.starts.add(t as usize).read() }
    }
}

impl<T: Pod> Segments<T> {
    /// The merge's extent for the offsets form: `(base, n)`, the first offset and the
    /// elements the merge consumes, both clamped to the input (valid offsets: `offsets[0]`
    /// and `offsets[count] - offsets[0]`). With bad offsets the merge has no meaning, but
    /// every coordinate derived from these stays inside the input and the offsets.
    #[inline(always)]
    fn merge_extent(&self) -> (u64, u64) {
        // SAFETY: the offsets form: `offsets` holds count + 1 elements (`new`'s contract).
        let (first, last) = unsafe { (self.offsets.read(), self.offsets.add(self.count as usize).read()) };
        let base = first.min(self.len);
        (base, last.min(self.len).saturating_sub(base))
    }

    /// Records bad segment `s` in the error word (atomic minimum).
    #[inline(always)]
    fn record(&self, s: u64, kind: BadSegment) {
        // SAFETY: a valid global u64 accessed only atomically (`new`'s contract).
        let word = unsafe { DeviceAtomicU64::from_ptr(self.error) };
        word.min(Self::error_code(s, kind), Relaxed);
    }
}

/// The merge-path strategy's first kernel: thread `t` of the grid (for `t <= tiles`)
/// finds tile `t`'s start on diagonal `d = min(t D, n + segments)` of the merge (module
/// docs) by a binary search over the offsets in global memory: the number `j` of segment
/// ends among the first `d` merge items, the largest `j` in `max(0, d - n) ..= min(d,
/// segments)` with `offsets[j] <= base + (d - j)` (end `j - 1` comes before element `d -
/// j`), found as the first `j` where that fails. Writes `starts[t] = j`.
///
/// # Safety
/// - A one-dimensional launch with `ITEMS == merge_items::<T>()`.
/// - `segments` is the offsets form of [`Segments::new`] with at least one segment;
///   `merge` as [`MergeTiles::new`] requires.
#[inline(always)]
pub unsafe fn merge_starts<T: Pod, const ITEMS: usize>(segments: Segments<T>, merge: MergeTiles<T>) {
    let t = thread::global_index_x();
    if t > merge.tiles {
        return;
    }
    let (base, n) = segments.merge_extent();
    let d = t.saturating_mul(BLOCK_THREADS as u64 * ITEMS as u64).min(n.saturating_add(segments.count));
    let (mut low, mut high) = (d.saturating_sub(n), d.min(segments.count));
    // Each step halves high - low: at most 64 steps, whatever the offsets.
    while low < high {
        let pivot = low + (high - low) / 2;
        // SAFETY: pivot < high <= count, so pivot + 1 <= count: inside the offsets.
        let end = unsafe { segments.offsets.add(pivot as usize + 1).read() };
        // pivot >= d - n, so d - pivot - 1 < n and the sum stays below base + n <= len.
        if end <= base + (d - pivot - 1) {
            low = pivot + 1;
        } else {
            high = pivot;
        }
    }
    // SAFETY: t <= tiles; only this thread writes starts[t].
    unsafe { merge.starts.add(t as usize).write(low) };
}

/// The merge-path strategy's second kernel: block `b` takes tiles `b`, `b + blocks`, ...
/// (one tile per block when the grid has `tiles` blocks). For tile `t` of merge items
/// `d0 .. d1` (`D = BLOCK_THREADS * ITEMS`), from `(i0, j0)` to `(i1, j1)`:
/// 1. stages `offsets[j0 ..= j1]` and the elements `base + i0 .. base + i1` (whole
///    16-byte vectors with `ld.global.nc` when `T`'s size divides 16, the vectors at the
///    edges as far as they lie in the input) in shared memory, and checks each segment
///    `j0 .. j1` it closes (decreasing, or past the input: the error word);
/// 2. each thread finds its start on diagonal `rank * ITEMS` of the tile by a binary
///    search in shared memory, walks its `ITEMS` items (pass 1: the partial of the segment
///    open at its end, and whether it closed one);
/// 3. a block-wide exclusive segmented scan of those pairs ([`block::exclusive_scan`] with
///    the [`Carry`] operator, rank order) gives each thread its carry-in;
/// 4. pass 2 walks again from the carry-in and writes each closed segment's result to
///    `out[j]`, except segment `j0` when it began before the tile (`offsets[j0] < base +
///    i0`): its partial goes to `heads[t]`; the last thread writes the partial of the
///    segment open at the tile's end to `tails[t]`.
///
/// Launched with [`merge_shared_bytes`]`::<T>()` bytes of dynamic shared memory.
///
/// # Safety
/// - A one-dimensional launch of blocks of [`BLOCK_THREADS`] threads with that dynamic
///   shared memory, which nothing else uses; every thread runs this once;
///   `ITEMS == merge_items::<T>()`.
/// - `segments` is the offsets form of [`Segments::new`] with at least one segment; `out`
///   is valid for writes of `segments.count()` elements that nothing else accesses
///   during the launch; `merge` as [`MergeTiles::new`] requires, its starts written by
///   [`merge_starts`] earlier on the same stream.
#[inline(always)]
pub unsafe fn merge_tiles<T: Pod, Op: Operator<T>, const ITEMS: usize>(
    segments: Segments<T>,
    out: *mut T,
    merge: MergeTiles<T>,
    op: Op,
) {
    let tile_items = BLOCK_THREADS as u64 * ITEMS as u64;
    let offsets = shared::dynamic_part::<u64>(0, merge_offset_slots::<T>());
    let elements = shared::dynamic_part::<T>(merge_elements_at::<T>(), merge_element_slots::<T>());
    let per_vector = grid::elements_per_vector::<T>() as u64;
    let vector_slots = merge_element_slots::<T>() * size_of::<T>() / grid::VECTOR_BYTES;
    let vectors = shared::dynamic_part::<grid::Vector>(merge_elements_at::<T>(), vector_slots);
    let scratch = shared::dynamic_part::<Carry<T>>(merge_scratch_at::<T>(), block::SCRATCH_LEN);
    let by_vectors = per_vector > 0 && (segments.input as u64).is_multiple_of(grid::VECTOR_BYTES as u64);
    let rank = thread::linear_thread_idx() as u64;
    let ranks = thread::block_threads() as u64;
    let (base, n) = segments.merge_extent();
    let count = segments.count;
    let total = n.saturating_add(count);
    let blocks = thread::grid_blocks() as u64;
    let mut t = thread::linear_block_idx() as u64;
    // Uniform over the block: every value the loop branches on is the same in every thread.
    while t < merge.tiles {
        let d0 = t.saturating_mul(tile_items).min(total);
        let d1 = d0.saturating_add(tile_items).min(total);
        if d0 == d1 {
            // Past the merge's end (the host sizes the grid for offsets over the whole
            // input): no item, nothing to write, and no fix-up reads this tile's slots.
            t += blocks;
            continue;
        }
        // SAFETY: t < tiles, so t + 1 <= tiles; written by `merge_starts` (contract).
        let (j0, j1) = unsafe { (merge.start(t), merge.start(t + 1)) };
        // With valid offsets the starts grow by at most a tile: anything else means bad
        // offsets (their check is then this tile's whole work).
        if !(j0 <= j1 && j0 <= d0 && j1 <= d1 && j1 <= count && d0 - j0 <= d1 - j1 && d1 - j1 <= n) {
            if rank == 0 {
                segments.record(j0.min(count - 1), BadSegment::NotMonotonic);
            }
            t += blocks;
            continue;
        }
        let (i0, i1) = (d0 - j0, d1 - j1);
        // 1. Stage offsets[j0 ..= j1] (j1 - j0 <= d1 - d0 <= D: inside the staging).
        let mut k = rank;
        while k <= j1 - j0 {
            // SAFETY: j0 + k <= j1 <= count: inside the offsets. Slot k < D + 1; one writer
            // per slot, read after the barrier below.
            unsafe { offsets.write_unchecked(k as usize, segments.offsets.add((j0 + k) as usize).read()) };
            k += ranks;
        }
        // The elements base + i0 .. base + i1 (inside the input: base + n <= len), placed
        // at their distance from `first`, a 16-byte boundary when read as vectors.
        let (from, to) = (base + i0, base + i1);
        let first = if by_vectors { from / per_vector * per_vector } else { from };
        if by_vectors {
            // SAFETY: the input is 16-byte aligned and T's size divides 16 (`by_vectors`);
            // to <= len; every thread calls this.
            unsafe { stage_vectors::<T>(segments.input, segments.len, first, to, vectors, elements) };
        } else {
            let mut g = from + rank;
            while g < to {
                // SAFETY: g < to <= len; slot g - first < D <= the staging's slots; one
                // writer per slot, read after the barrier below.
                unsafe {
                    elements.write_unchecked((g - first) as usize, segments.input.add(g as usize).read())
                };
                g += ranks;
            }
        }
        // SAFETY: every thread of the block gets here (uniform loop).
        unsafe { barrier::sync() };
        // Check each segment this tile closes (j0 .. j1): together the tiles check every one.
        let mut k = rank;
        while k < j1 - j0 {
            // SAFETY: k + 1 <= j1 - j0: staged slots, written before the barrier.
            let (begin, end) =
                unsafe { (offsets.read_unchecked(k as usize), offsets.read_unchecked(k as usize + 1)) };
            if end < begin {
                segments.record(j0 + k, BadSegment::NotMonotonic);
            } else if end > segments.len {
                segments.record(j0 + k, BadSegment::PastInput);
            }
            k += ranks;
        }
        // 2. This thread's start on its diagonal, by a binary search in shared memory.
        let (a, b) = (i1 - i0, j1 - j0);
        let diagonal = (rank * ITEMS as u64).min(d1 - d0);
        let (mut low, mut high) = (diagonal.saturating_sub(a), diagonal.min(b));
        while low < high {
            let pivot = low + (high - low) / 2;
            // SAFETY: pivot + 1 <= b: a staged slot.
            let end = unsafe { offsets.read_unchecked(pivot as usize + 1) };
            if end <= from + (diagonal - pivot - 1) {
                low = pivot + 1;
            } else {
                high = pivot;
            }
        }
        let start = (i0 + diagonal - low, j0 + low);
        let tile = StagedTile { offsets, elements, base, first, i1, j0, j1 };
        // Pass 1.
        let mut mine = Carry { partial: op.identity(), closed: 0 };
        // SAFETY: the staging was written before the barrier above; `start` lies on the
        // tile's merge path (or, for bad offsets, inside its bounds).
        unsafe {
            tile.walk::<ITEMS>(start, |x, _| match x {
                Some(x) => mine.partial = op.combine(mine.partial, x),
                None => mine = Carry { partial: op.identity(), closed: 1 },
            })
        };
        // 3. The carry-in: the partial of the segment open at this thread's start.
        // SAFETY: every thread of the block calls this (uniform loop), with its own
        // scratch window, which only these scans use.
        let carry = unsafe { block::exclusive_scan(scratch, mine, CarryOp(op)) };
        // 4. Pass 2.
        // SAFETY: slot 0 is staged (written before the barrier).
        let head = unsafe { offsets.read_unchecked(0) } < from;
        let mut acc = carry.partial;
        let pass_2 = |x: Option<T>, j: u64| match x {
            Some(x) => acc = op.combine(acc, x),
            None => {
                // SAFETY: j < j1 <= count: out[j] is in bounds and closed by this thread
                // alone; heads[t] (t < tiles) is written only by the thread that closes j0.
                unsafe {
                    if j == j0 && head {
                        merge.heads.add(t as usize).write(acc)
                    } else {
                        out.add(j as usize).write(acc)
                    }
                };
                acc = op.identity();
            }
        };
        // SAFETY: as for pass 1.
        unsafe { tile.walk::<ITEMS>(start, pass_2) };
        if rank == ranks - 1 {
            // SAFETY: t < tiles; only this thread writes tails[t].
            unsafe { merge.tails.add(t as usize).write(acc) };
        }
        // The staging is rewritten by the next tile only after every thread's pass 2.
        // SAFETY: every thread of the block gets here.
        unsafe { barrier::sync() };
        t += blocks;
    }
}

/// One tile of [`merge_tiles`] as staged in shared memory: `offsets[k]` is
/// `offsets[j0 + k]` for `k <= j1 - j0`, `elements[g - first]` is `input[g]` for the
/// tile's elements `g` in `base + i0 .. base + i1`.
#[derive(Clone, Copy)]
struct StagedTile<T> {
    offsets: shared::SharedSlice<u64>,
    elements: shared::SharedSlice<T>,
    base: u64,
    first: u64,
    i1: u64,
    j0: u64,
    j1: u64,
}

impl<T: Pod> StagedTile<T> {
    /// Walks `ITEMS` merge items from `(i, j)`, never past the tile's end `(i1, j1)`:
    /// `visit(Some(x), j)` for element `x` (of segment `j`), `visit(None, j)` for the close
    /// of segment `j`. An end is consumed once every element below it was (ties close
    /// first), so empty segments are consecutive closes.
    ///
    /// # Safety
    /// The staging was written before a barrier that precedes this and is not rewritten
    /// during it; `j0 <= j <= j1`, `i <= i1` and `base + i >= first`... as [`merge_tiles`]
    /// computes them.
    #[inline(always)]
    unsafe fn walk<const ITEMS: usize>(
        &self,
        (mut i, mut j): (u64, u64),
        mut visit: impl FnMut(Option<T>, u64),
    ) {
        for _ in 0..ITEMS {
            // SAFETY: j < j1, so j + 1 - j0 <= j1 - j0: a staged slot.
            if j < self.j1
                && (i >= self.i1
                    || unsafe { self.offsets.read_unchecked((j + 1 - self.j0) as usize) } <= self.base + i)
            {
                visit(None, j);
                j += 1;
            } else if i < self.i1 {
                // SAFETY: first <= base + i < base + i1: a staged element.
                visit(
                    Some(unsafe { self.elements.read_unchecked((self.base + i - self.first) as usize) }),
                    j,
                );
                i += 1;
            }
        }
    }
}

/// The most 16-byte loads a thread of [`merge_tiles`] keeps in flight while staging.
const MAX_STAGE_STEPS: usize = 8;

/// 16-byte loads per thread that stage one tile of `T`: its vectors over the threads, plus
/// one for the vector cut at each edge (at most 5 for every type that moves as vectors).
const fn stage_steps<T>() -> usize {
    if grid::elements_per_vector::<T>() == 0 {
        return 0;
    }
    (merge_tile_items::<T>() as usize * size_of::<T>() / grid::VECTOR_BYTES).div_ceil(BLOCK_THREADS as usize)
        + 1
}

/// Stages the input's elements `first .. to` into `vectors` (vector `v` of the input at
/// slot `v - first / per_vector`, the same memory as `elements`, element `g` at slot `g -
/// first`): each thread moves vectors `rank, rank + threads, ...`, all of them in flight
/// together. On sm_80+ (and the emulator) as `cp.async` of 16 bytes, global to shared
/// memory with no register in between, then one `cp.async.wait_all` (a tile's vectors in
/// registers would take 16 to 20 of them per thread, measured in `ptxas -v`: 91 registers
/// for `f32` against 64); before sm_80 through registers, every load before any store.
/// The vector that reaches past the input (at most one) is copied element by element up
/// to `len`.
///
/// # Safety
/// `input` is 16-byte aligned, valid for reads of `len` elements not written during the
/// launch; `T`'s size divides 16; `first` is a multiple of the elements per vector,
/// `first <= to <= len`, and `to - first` is at most the staging's element slots less 16
/// bytes' worth; `vectors` and `elements` view the same staging; every thread of the
/// block calls this, and none reads the staging before a block barrier after this.
#[inline(always)]
unsafe fn stage_vectors<T: Pod>(
    input: *const T,
    len: u64,
    first: u64,
    to: u64,
    vectors: shared::SharedSlice<grid::Vector>,
    elements: shared::SharedSlice<T>,
) {
    // The register path's array holds every step (checked for every target).
    const { assert!(stage_steps::<T>() <= MAX_STAGE_STEPS) };
    let per_vector = grid::elements_per_vector::<T>() as u64;
    let rank = thread::linear_thread_idx() as u64;
    let ranks = thread::block_threads() as u64;
    let count = (to - first).div_ceil(per_vector);
    let base = first / per_vector;
    let whole = |v: u64| v < count && (base + v + 1) * per_vector <= len;
    #[cfg(any(target_feature = "sm_80", not(target_arch = "nvptx64")))]
    for u in 0..stage_steps::<T>() {
        let v = rank + u as u64 * ranks;
        if whole(v) {
            // SAFETY: the destination is slot v < count of the staging (caller): shared
            // memory, 16-byte aligned, written by this thread alone and read by others
            // after the wait below and the caller's barrier. The source is vector base + v
            // of the input, inside it (`whole`) and 16-byte aligned (the input is); nothing
            // writes it during the launch.
            unsafe {
                arch::copy_async_16(
                    vectors.as_mut_ptr().add(v as usize).cast(),
                    input.add(((base + v) * per_vector) as usize).cast(),
                )
            };
        }
    }
    #[cfg(not(any(target_feature = "sm_80", not(target_arch = "nvptx64"))))]
    {
        // Constant bounds: unrolled, the vectors in registers.
        let mut loaded = [grid::Vector([0; grid::VECTOR_BYTES]); MAX_STAGE_STEPS];
        #[allow(clippy::needless_range_loop)]
        for u in 0..stage_steps::<T>() {
            let v = rank + u as u64 * ranks;
            if whole(v) {
                // SAFETY: the vector lies inside the input (`whole`), 16-byte aligned (the
                // input is); nothing writes it during the launch.
                loaded[u] =
                    unsafe { grid::load_vector::<T>(input.add(((base + v) * per_vector) as usize).cast()) };
            }
        }
        #[allow(clippy::needless_range_loop)]
        for u in 0..stage_steps::<T>() {
            let v = rank + u as u64 * ranks;
            if whole(v) {
                // SAFETY: v < count <= the staging's vector slots (caller); one writer per
                // slot, read after the caller's barrier.
                unsafe { vectors.write_unchecked(v as usize, loaded[u]) };
            }
        }
    }
    for u in 0..stage_steps::<T>() {
        let v = rank + u as u64 * ranks;
        if v < count && !whole(v) {
            let index = (base + v) * per_vector;
            for k in 0..per_vector.min(len - index) {
                // SAFETY: index + k < len; slot index + k - first = v * per_vector + k,
                // inside the staging (caller), not a slot of any copy in flight; one
                // writer per slot, read after the caller's barrier.
                unsafe {
                    elements.write_unchecked(
                        (v * per_vector + k) as usize,
                        input.add((index + k) as usize).read(),
                    )
                };
            }
        }
    }
    #[cfg(any(target_feature = "sm_80", not(target_arch = "nvptx64")))]
    arch::copy_async_wait_all();
}

/// The merge-path strategy's third kernel, the fix-up: block `b` takes tiles `b`, `b +
/// blocks`, ... For tile `t >= 1` that closes its first segment `s = starts[t]` and where
/// `s` began before it (`offsets[s] < base + i0`), it finds the tile `k` where `s` began
/// (`k + 1` is the first tile whose start is `s`, a binary search over the starts), folds
/// `tails[k] ⊕ ... ⊕ tails[t - 1]` in tile order with the block ([`fold_partials`]: thread
/// `r` the `r`-th contiguous piece, then [`block::reduce`] in rank order), and writes
/// `out[s] = that ⊕ heads[t]`. Other tiles do nothing. Launched with
/// [`shared_bytes`]`::<T>()` bytes of dynamic shared memory.
///
/// # Safety
/// - A one-dimensional launch with that dynamic shared memory, which nothing else uses;
///   every thread runs this once; `ITEMS == merge_items::<T>()`.
/// - `segments`, `out` and `merge` as for [`merge_tiles`], which ran on the same stream
///   before this launch.
#[inline(always)]
pub unsafe fn merge_fixup<T: Pod, Op: Operator<T>, const ITEMS: usize>(
    segments: Segments<T>,
    out: *mut T,
    merge: MergeTiles<T>,
    op: Op,
) {
    let scratch = shared::dynamic::<T>();
    let tile_items = BLOCK_THREADS as u64 * ITEMS as u64;
    let (base, n) = segments.merge_extent();
    let total = n.saturating_add(segments.count);
    let blocks = thread::grid_blocks() as u64;
    let mut t = thread::linear_block_idx() as u64;
    // Uniform over the block: every thread reads the same values.
    while t < merge.tiles {
        let d0 = t.saturating_mul(tile_items).min(total);
        // SAFETY: t + 1 <= tiles: written by `merge_starts`.
        let (s, next) = unsafe { (merge.start(t), merge.start(t + 1)) };
        let closes = t >= 1 && s < next && s < segments.count && s <= d0;
        // SAFETY: s < count: inside the offsets.
        if closes && unsafe { segments.offsets.add(s as usize).read() } < base + (d0 - s) {
            // The first tile u in 1..=t whose start is s (starts grow with valid offsets;
            // with bad ones this still ends in 1..=t).
            let (mut low, mut high) = (1, t);
            while low < high {
                let middle = low + (high - low) / 2;
                // SAFETY: middle < t <= tiles.
                if unsafe { merge.start(middle) } >= s {
                    high = middle;
                } else {
                    low = middle + 1;
                }
            }
            let k = low - 1;
            // SAFETY: every thread of the block calls this (uniform branch); the tails
            // k .. t lie below tiles and were written by `merge_tiles`, ordered before
            // this launch by the stream; the scratch is this launch's dynamic window,
            // which only `block::reduce` uses.
            let folded = unsafe { fold_partials(scratch, merge.tails, k, t - k, op) };
            if thread::linear_thread_idx() == 0 {
                // SAFETY: t < tiles; heads[t] was written by `merge_tiles` (the same
                // condition); s < count and only this block writes out[s].
                unsafe { out.add(s as usize).write(op.combine(folded, merge.heads.add(t as usize).read())) };
            }
        }
        t += blocks;
    }
}

/// Declares the segmented-reduce kernels the host's `SegmentedReducer` launches for one
/// element type and operator: one per strategy (thread, tile of 4, tile of 16, warp,
/// block), then the balanced strategy's two (batches, chunks). The first five take
///
/// `(input: *const T, len: u64, offsets: *const u64, segment_len: u64, segments: u64,
/// out: *mut T, error: *mut u64)`: the [`Segments`] of [`Segments::new`] (fixed length
/// when `offsets` is null) reduced into `out[..segments]` by [`tile_per_segment`] or
/// [`block_per_segment`]; the balanced two take the same seven, then `(control: *mut u64,
/// descriptors: *mut u64, tickets: *mut u32, partials: *mut T, descriptor_capacity: u64,
/// chunk_capacity: u64, long_elements: u64, chunk_elements: u64)`: the [`LongSegments`]
/// of [`LongSegments::new`], for [`balanced_batches`] and [`balanced_chunks`]. All are
/// launched with blocks of [`BLOCK_THREADS`] and [`shared_bytes`]`::<T>()` bytes of
/// dynamic shared memory.
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
///         digits_batches, digits_chunks, digits_merge_starts, digits_merge_tiles, digits_merge_fixup;
/// }
/// assert_eq!(digits_warp.param_count(), 7);
/// assert_eq!(digits_chunks.param_count(), 15);
/// assert_eq!(digits_merge_tiles.param_count(), 11);
/// ```
#[macro_export]
macro_rules! segmented_reduce_kernels {
    ($($t:ty, $op:expr => $thread:ident, $tile4:ident, $tile16:ident, $warp:ident, $block:ident, $batches:ident, $chunks:ident,
        $merge_starts:ident, $merge_tiles:ident, $merge_fixup:ident;)*) => {$(
        $crate::segmented_reduce_kernels!(@merge $t, $op, $merge_starts, $merge_tiles, $merge_fixup);
        $crate::segmented_reduce_kernels!(@balanced $t, $op, $batches, balanced_batches, "the batches of 32 segments");
        $crate::segmented_reduce_kernels!(@balanced $t, $op, $chunks, balanced_chunks, "the chunks of long segments");
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
    )*};
    (@merge $t:ty, $op:expr, $starts:ident, $tiles:ident, $fixup:ident) => {
        $crate::kernel! {
            #[doc = concat!("Segmented reduce of `", stringify!($t), "` with `", stringify!($op), "`, merge-path strategy, ")]
            #[doc = "the tiles' start coordinates: `warpsafe::reduce::segmented::merge_starts` "]
            #[doc = "(parameters: `warpsafe::segmented_reduce_kernels!`)."]
            ///
            /// # Safety
            /// The contracts of `warpsafe::reduce::segmented::Segments::new`,
            /// `warpsafe::reduce::segmented::MergeTiles::new` and
            /// `warpsafe::reduce::segmented::merge_starts`.
            pub unsafe fn $starts(
                input: *const $t,
                len: u64,
                offsets: *const u64,
                segment_len: u64,
                segments: u64,
                out: *mut $t,
                error: *mut u64,
                starts: *mut u64,
                heads: *mut $t,
                tails: *mut $t,
                tiles: u64,
            ) {
                let _ = out;
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    let segments =
                        $crate::reduce::segmented::Segments::new(input, len, offsets, segment_len, segments, error);
                    let merge = $crate::reduce::segmented::MergeTiles::new(starts, heads, tails, tiles);
                    $crate::reduce::segmented::merge_starts::<$t, { $crate::reduce::segmented::merge_items::<$t>() }>(
                        segments, merge,
                    )
                }
            }
        }
        $crate::segmented_reduce_kernels!(@merge_pass $t, $op, $tiles, merge_tiles, "the tiles");
        $crate::segmented_reduce_kernels!(@merge_pass $t, $op, $fixup, merge_fixup, "the fix-up of segments that span tiles");
    };
    (@merge_pass $t:ty, $op:expr, $name:ident, $function:ident, $what:literal) => {
        $crate::kernel! {
            #[doc = concat!("Segmented reduce of `", stringify!($t), "` with `", stringify!($op), "`, merge-path strategy, ")]
            #[doc = concat!($what, ": `warpsafe::reduce::segmented::", stringify!($function), "` ")]
            #[doc = "(parameters: `warpsafe::segmented_reduce_kernels!`)."]
            ///
            /// # Safety
            /// The contracts of `warpsafe::reduce::segmented::Segments::new`,
            /// `warpsafe::reduce::segmented::MergeTiles::new` and
            #[doc = concat!("`warpsafe::reduce::segmented::", stringify!($function), "`.")]
            pub unsafe fn $name(
                input: *const $t,
                len: u64,
                offsets: *const u64,
                segment_len: u64,
                segments: u64,
                out: *mut $t,
                error: *mut u64,
                starts: *mut u64,
                heads: *mut $t,
                tails: *mut $t,
                tiles: u64,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    let segments =
                        $crate::reduce::segmented::Segments::new(input, len, offsets, segment_len, segments, error);
                    let merge = $crate::reduce::segmented::MergeTiles::new(starts, heads, tails, tiles);
                    $crate::reduce::segmented::$function::<_, _, { $crate::reduce::segmented::merge_items::<$t>() }>(
                        segments, out, merge, $op,
                    )
                }
            }
        }
    };
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
                control: *mut u64,
                descriptors: *mut u64,
                tickets: *mut u32,
                partials: *mut $t,
                descriptor_capacity: u64,
                chunk_capacity: u64,
                long_elements: u64,
                chunk_elements: u64,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    let segments =
                        $crate::reduce::segmented::Segments::new(input, len, offsets, segment_len, segments, error);
                    let long = $crate::reduce::segmented::LongSegments::new(
                        control,
                        descriptors,
                        tickets,
                        partials,
                        descriptor_capacity,
                        chunk_capacity,
                        long_elements,
                        chunk_elements,
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
