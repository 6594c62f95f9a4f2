//! Segmented reduce over CSR offsets as a scan of the input: every element is read once,
//! in windows, whatever the segments' lengths, and a look-back between warps carries the
//! partial of a segment that crosses chunks. The strategy for offsets whose lengths vary
//! wildly (a power law with a few huge segments), in one launch.
//!
//! # Windows
//! The input is cut into *chunks* of [`chunk_windows`] windows, one warp's work each; a
//! window is 32 lanes × [`LANE_VECTORS`] 16-byte vectors, lane `l` holding
//! elements `l * E .. (l + 1) * E` of it (`E` = [`lane_elements`], 8 for `f32`). For each
//! window a warp:
//! 1. marks the segment starts that fall in it as bits of a per-lane mask in shared
//!    memory (each lane holds one start, read 32 at a time from the offsets, and sets its
//!    bit with a block-scope atomic `or`);
//! 2. folds its lane's elements in order, starting afresh at each marked element;
//! 3. carries the partial of the segment open at each lane's end across lanes with one
//!    segmented warp scan (5 shuffles; a lane takes from below only up to the nearest
//!    lane that holds a start, found from a ballot), and into the next window;
//! 4. writes the running values to shared memory, and each segment that ends in the
//!    window is written by the lane that holds its offsets: the running value at its last
//!    element, after the partial open at that lane's first element if the segment began
//!    in an earlier lane.
//!
//! A lane copies its vectors of the next window into a ring in shared memory with
//! `cp.async` while it folds the current one (sm_80+; on sm_70 the copy goes through
//! registers when issued), so no register holds a load in flight, and each lane reads
//! only the ring vectors it copied itself: its own `cp.async.wait_group` orders them.
//!
//! # Across chunks
//! Every warp of the grid takes chunk numbers from a self-resetting ticket counter (`atom.inc`
//! whose limit is the number of tickets the launch takes, so it is back at 0 at the end)
//! until one is past the last chunk, so a warp only ever waits for chunks that running warps
//! took. It finds the segment that holds its chunk's first element by a 32-way search over
//! the offsets (each round one ballot over 32 offsets), folds its windows, and publishes
//! the chunk's carry: the partial of the segment open at the chunk's end, and whether a
//! segment started in the chunk. Publication is one epoch-tagged status word per 32 bits
//! (as [`TaggedStatus`](super::lookback::TaggedStatus) stores them: each word is written
//! once per launch by one single-copy-atomic store and read by relaxed loads that accept
//! only the launch's epoch, so nothing but the words themselves is communicated, and no
//! fence is needed).
//!
//! Only a chunk that starts inside a segment which ends in it needs what came before: the
//! partials of that segment in the chunks since the one where it started (the nearest
//! chunk before with a start). The warp reads its predecessors' carries 32 at a time, in
//! aligned groups of 32 chunks from its own backwards, until a group holds a start; in a
//! group it waits only until the chunks published from the newest one down reach a start
//! (that start is then the group's last whatever the older chunks hold, so the result does
//! not depend on which had finished), or until all are published. It combines each group's
//! partials from the start on with a warp scan in chunk order and the groups from left to
//! right. A warp waits only for chunks that are running or done; the others never look
//! back.
//!
//! # Order of combination
//! Inside a lane in index order; across lanes by the fixed tree of the segmented warp
//! scan; across windows left to right; across chunks by the look-back's expression, fixed
//! by the chunk where the segment starts and the one where it ends (the groups' warp scans,
//! combined right-nested: `G_first ⊕ (G_next ⊕ (... ⊕ G_last))`, then the partial in the
//! last chunk). Which tree a segment gets depends only on its bounds, the element type and
//! the chunk length, a function of the input's length ([`chunk_windows`]): float results
//! are the same bits on every run, on the GPU and on the emulator. Operators need not
//! commute: earlier elements always stay on the left.
//!
//! # Bad offsets
//! Offsets are trusted only as far as memory safety needs: every offset index read is
//! below `segments + 1`, every shared index is inside the warp's window, and segment `s`
//! is written only by the window that holds its end (`offsets[s + 1]` in
//! `(base, base + W]`, or `0` for the first window), so at most once, whatever the
//! offsets hold. A segment whose end is below its start or past the input is written as
//! the identity. Each warp counts the segments it wrote with a valid start and end and
//! adds the count to a word: the offsets are valid exactly when that count equals the
//! segment count (each write is for a distinct segment, and a count that covers every
//! segment means every segment's offsets were checked). The host compares them; with bad
//! offsets the other results are not promised, so the host runs the balanced strategy
//! again to report the lowest bad segment.

use core::mem::size_of;

use bytemuck::{Pod, Zeroable};

use crate::arch::{self, FULL_MASK, WARP_SIZE};
use crate::atomic::{Atomic, Block, DeviceAtomicU32, DeviceAtomicU64, Relaxed};
use crate::op::Operator;
use crate::reduce::{grid, warp};
use crate::scan::tile::{vector_elements, Vector, VECTOR_BYTES};
use crate::shared::{self, SharedSlice};
use crate::thread;
use crate::warp as raw;

/// Threads per block of the kernel.
pub const BLOCK_THREADS: u32 = 256;

/// Warps per block, each with its own chunks and shared memory.
pub const WARPS: usize = BLOCK_THREADS as usize / WARP_SIZE as usize;

/// 16-byte vectors per lane in a window (32 bytes a lane, 1 KiB a window). Measured with
/// a CUDA C++ probe of this design on an H100 (2026-11-28,
/// `bench/results/2026-11-28-h100/segmented-window-scan-probe.txt`): 4 vectors spilled at
/// 5 blocks per SM and ran slower.
pub const LANE_VECTORS: usize = 2;

/// Blocks per SM the kernel is compiled for (launch bounds on sm_80 and sm_90: 80
/// registers a thread, no spills, as the PTX tests require). Measured on an H100
/// (2026-11-28, `segreduce-bench --quick --strategy balanced,scan`, power-law mix of `f32`):
/// with 5 (48 registers, 92-108 bytes of spills) 742 / 284 / 103 us at 2^28 / 2^26 / 2^24
/// elements, with 4 (64 registers, 20-28 bytes of spills) 571 / 227 / 94; 3 in
/// `bench/results/2026-11-28-h100/segmented-scan-3-blocks.txt`. (The CUDA C++ probe kept
/// 5 blocks in 48 registers without spills.)
pub const BLOCKS_PER_SM: u32 = 3;

/// Windows in a warp's ring in shared memory: the one folded and the next one in flight
/// (deeper rings left less L1 for the offsets and ran slower in the probe).
const RING: usize = 2;

/// Windows per warp chunk, a function of the input's length only (so the order of
/// combination is too):
/// - while [`WAVE_CHUNKS`] chunks of at most 128 windows cover the input (up to 384 MiB,
///   about 2^26.6 `f32`s), the input is cut into that many chunks (at least
///   [`MIN_CHUNK_WINDOWS`] windows each), so that every chunk runs at once on an H100:
///   the call lasts as long as its slowest chunk, not two;
/// - a longer input gets chunks of [`MAX_CHUNK_WINDOWS`] windows, many per warp, which
///   even out chunks of different speeds.
///
/// Measured on an H100 (2026-11-28, `segreduce-bench --strategy scan --patterns
/// power-law`, `f32`, the same command as the rule before it, chunks of 16 to 64 windows
/// by powers of two): 80.7 / 115.8 / 181.5 / 316 / 546 us at 2^24 / 2^25 / 2^26 / 2^27 /
/// 2^28 elements against 92.9 / 139.0 / 202.7 / 314.5 / 546.4
/// (`bench/results/2026-11-28-h100/segmented-scan-chunks-lookback.txt`).
pub const fn chunk_windows<T>(len: u64) -> u64 {
    let per_chunk = len.div_ceil(window_elements::<T>()).div_ceil(WAVE_CHUNKS);
    if per_chunk > 2 * MAX_CHUNK_WINDOWS {
        MAX_CHUNK_WINDOWS
    } else if per_chunk < MIN_CHUNK_WINDOWS {
        MIN_CHUNK_WINDOWS
    } else {
        per_chunk
    }
}

/// The chunks of an input of up to 384 MiB: about the warps an H100 holds at once (132
/// SMs, 3 blocks of 8 warps each: 3168).
pub const WAVE_CHUNKS: u64 = 3072;

/// The fewest windows in a warp's chunk.
pub const MIN_CHUNK_WINDOWS: u64 = 16;

/// The windows of a chunk of an input longer than [`WAVE_CHUNKS`] chunks of twice this
/// many windows.
pub const MAX_CHUNK_WINDOWS: u64 = 64;

/// Whether the kernel can read `T`: its size divides 16 (every built-in type), so a
/// vector holds whole elements.
pub const fn reads_windows<T>() -> bool {
    size_of::<T>() > 0 && VECTOR_BYTES.is_multiple_of(size_of::<T>())
}

/// Elements of `T` a lane holds in one window (at most 32: one mask bit each).
pub const fn lane_elements<T>() -> usize {
    LANE_VECTORS * VECTOR_BYTES / size_of::<T>()
}

/// Elements of `T` in one window.
pub const fn window_elements<T>() -> u64 {
    WARP_SIZE as u64 * lane_elements::<T>() as u64
}

/// Chunks over an input of `len` elements (at least one, whose first window writes the
/// segments that end at 0).
pub const fn chunks<T>(len: u64) -> u64 {
    let chunks = len.div_ceil(chunk_windows::<T>(len) * window_elements::<T>());
    if chunks == 0 {
        1
    } else {
        chunks
    }
}

/// The 64-bit status words of a launch over `chunks` chunks of `T`: one per 32 bits of a
/// chunk's carry.
pub const fn status_words<T>(chunks: u64) -> u64 {
    chunks * grid::slot_words::<Carry<T>>() as u64
}

/// One warp's bytes of dynamic shared memory: the ring, the running values, the partials
/// open at each lane's start and the lanes' start masks.
const fn warp_bytes<T>() -> usize {
    RING * WINDOW_BYTES + WINDOW_BYTES + WARP_SIZE as usize * (size_of::<T>() + 4)
}

const WINDOW_BYTES: usize = WARP_SIZE as usize * LANE_VECTORS * VECTOR_BYTES;

/// Dynamic shared memory, in bytes, of a launch over `T`: each warp's (16-byte aligned).
pub const fn shared_bytes<T>() -> usize {
    WARPS * warp_bytes::<T>().next_multiple_of(16)
}

/// What a chunk passes to the look-back: the partial of the
/// segment open at its end, and whether a segment started in it.
///
/// The flag is a `T` too (its first byte nonzero: a start), so that the pair has `T`'s
/// alignment and no padding, and moves with naturally aligned accesses. (A packed pair of
/// `T` and a `u32` read back with a wrong low byte on an H100, 2026-11-28: its byte-wise
/// shared-memory accesses are avoided rather than explained.)
#[derive(Clone, Copy)]
#[repr(C)]
struct Carry<T> {
    /// The partial of the segment open at the end.
    value: T,
    head: T,
}

impl<T: Pod> Carry<T> {
    /// `value`, with `head` saying whether a segment started in the run.
    #[inline(always)]
    fn new(value: T, head: bool) -> Carry<T> {
        let bytes = [head as u8; VECTOR_BYTES];
        Carry { value, head: bytemuck::pod_read_unaligned(&bytes[..size_of::<T>()]) }
    }

    /// Whether a segment started in the run.
    #[inline(always)]
    fn head(self) -> bool {
        bytemuck::bytes_of(&self.head).first().is_some_and(|&b| b != 0)
    }
}

// SAFETY: `repr(C)` of two fields of the same `Pod` type: no padding between or after
// them (the second starts at `size_of::<T>()`, a multiple of its alignment), and every bit
// pattern is valid, the zero one too.
unsafe impl<T: Pod> Zeroable for Carry<T> {}
// SAFETY: as above; `T: Pod` makes it `Copy + 'static`.
unsafe impl<T: Pod> Pod for Carry<T> {}

/// A lane's part of a window: [`LANE_VECTORS`] vectors.
type Lane = [Vector; LANE_VECTORS];

/// Where vector `k` of lane `lane` sits among a window's running values: rotated by the
/// lane's place among the 4 lanes of a 128-byte phase, so that the 8 lanes of a phase of
/// 16-byte stores hit 8 different groups of 4 banks.
#[inline(always)]
fn value_slot(lane: u32, k: usize) -> usize {
    let rotation = (lane as usize / (8 / LANE_VECTORS)) % LANE_VECTORS;
    lane as usize * LANE_VECTORS + (k ^ rotation)
}

/// The calling warp's shared memory.
#[derive(Clone, Copy)]
struct WarpShared<T> {
    /// [`RING`] windows of vectors, lane `l`'s at `l * LANE_VECTORS ..` of each.
    ring: SharedSlice<Vector>,
    /// The running values of the folded window ([`value_slot`]).
    values: SharedSlice<Vector>,
    /// The same memory as elements of `T`.
    value_elements: SharedSlice<T>,
    /// The partial of the segment open at each lane's first element.
    opened: SharedSlice<T>,
    /// Each lane's segment starts, one bit per element.
    masks: SharedSlice<u32>,
}

impl<T: Pod> WarpShared<T> {
    #[inline(always)]
    #[track_caller]
    fn of_warp() -> WarpShared<T> {
        let lanes = WARP_SIZE as usize;
        let start = thread::warp_idx() as usize * warp_bytes::<T>().next_multiple_of(16);
        let vectors = lanes * LANE_VECTORS;
        let values = start + RING * WINDOW_BYTES;
        let opened = values + WINDOW_BYTES;
        WarpShared {
            ring: shared::dynamic_part(start, RING * vectors),
            values: shared::dynamic_part(values, vectors),
            value_elements: shared::dynamic_part(values, WINDOW_BYTES / size_of::<T>()),
            opened: shared::dynamic_part(opened, lanes),
            masks: shared::dynamic_part(opened + lanes * size_of::<T>(), lanes),
        }
    }
}

/// The launch's read-only view of the segments.
#[derive(Clone, Copy)]
struct Input<T> {
    input: *const T,
    len: u64,
    offsets: *const u64,
    segments: u64,
}

impl<T: Pod> Input<T> {
    /// `offsets[i]`.
    ///
    /// # Safety
    /// `i <= segments`.
    #[inline(always)]
    unsafe fn offset(self, i: u64) -> u64 {
        // SAFETY: `offsets` holds `segments + 1` elements (the kernel's contract).
        unsafe { self.offsets.add(i as usize).read() }
    }

    /// Starts copying the calling lane's vectors of the window at `base` into ring slot
    /// `slot`: whole vectors inside the input by `cp.async` (sm_80+; through registers on
    /// sm_70), the one that crosses the input's end element by element, and vectors past
    /// it as the identity (so nothing undefined is ever folded).
    ///
    /// # Safety
    /// The ring slot's lane vectors are not read until this lane's next
    /// [`wait_for_window`]; the input is 16-byte aligned (device buffers are).
    #[inline(always)]
    unsafe fn copy_window<Op: Operator<T>>(self, ring: SharedSlice<Vector>, slot: usize, base: u64, op: Op) {
        let lane = thread::lane_id() as usize;
        let per_vector = vector_elements::<T>() as u64;
        for k in 0..LANE_VECTORS {
            let first = base + (lane * LANE_VECTORS + k) as u64 * per_vector;
            let to = slot * WINDOW_BYTES / VECTOR_BYTES + lane * LANE_VECTORS + k;
            if first + per_vector <= self.len {
                // SAFETY: the slot is in this warp's ring (to < RING * 32 * LANE_VECTORS),
                // 16-byte aligned, read only by this lane after its wait (contract); the
                // source is a whole vector inside `input[..len]`, 16-byte aligned (an
                // aligned base and a multiple of 16 bytes), never written in the launch.
                unsafe { copy_vector(ring.as_mut_ptr().add(to), self.input.add(first as usize).cast()) };
            } else {
                let mut vector = Vector([0; 4]);
                for j in 0..per_vector as usize {
                    let i = first + j as u64;
                    let value = if i < self.len {
                        // SAFETY: i < len.
                        unsafe { self.input.add(i as usize).read() }
                    } else {
                        op.identity()
                    };
                    vector.set_element(j, value);
                }
                // SAFETY: in the ring (above), this lane's own slot.
                unsafe { ring.write_unchecked(to, vector) };
            }
        }
        arch::copy_async_commit();
    }
}

/// One 16-byte copy from global to shared memory: `cp.async` on sm_80+ and the emulator,
/// a load and a store on sm_70.
///
/// # Safety
/// As for `arch::copy_async_16`.
#[inline(always)]
unsafe fn copy_vector(to: *mut Vector, from: *const [u32; 4]) {
    #[cfg(any(target_feature = "sm_80", not(target_arch = "nvptx64")))]
    // SAFETY: the caller's contract.
    unsafe {
        arch::copy_async_16(to.cast(), from)
    }
    #[cfg(not(any(target_feature = "sm_80", not(target_arch = "nvptx64"))))]
    // SAFETY: the caller's contract: a valid global vector and this lane's shared slot.
    unsafe {
        arch::shared_write(to, Vector(arch::load_global_nc_16::<arch::NoPrefetch>(from)))
    }
}

/// Waits until this lane's copies of every window but the newest one it started have
/// landed (`cp.async.wait_group 1`).
#[inline(always)]
fn wait_for_window() {
    arch::copy_async_wait_group::<{ RING as u32 - 1 }>();
}

/// What a warp's chunk leaves for after the look-back.
struct Chunk<T> {
    /// The chunk's carry (the same in every lane).
    carry: Carry<T>,
    /// In the lane that holds it: the segment open at the chunk's start, which ends in
    /// the chunk, and its partial inside the chunk.
    open: Option<(u64, T)>,
}

/// Segmented reduce of the input by windows (module docs): every warp takes chunks until
/// none is left; `written` gets the number of segments written with valid offsets.
///
/// # Safety
/// - A one-dimensional launch of [`BLOCK_THREADS`] threads a block, every thread runs
///   this once, with [`shared_bytes`]`::<T>()` bytes of dynamic shared memory that
///   nothing else uses, and at most `2^32 - chunks` warps in all.
/// - `input` is valid for reads of `len` elements, 16-byte aligned, not written during
///   the launch; `offsets` for reads of `segments + 1` `u64`s, not written; `segments >
///   0`; `out` for writes of `segments` elements that nothing else accesses; `written` a
///   valid 8-byte aligned `u64` accessed only atomically during the launch.
/// - `counter` is a valid 4-byte aligned `u32` holding 0 at the start; `status` holds
///   [`status_words`]`::<T>(`[`chunks`]`::<T>(len))` 8-byte aligned `u64`s; both are used
///   by no other launch meanwhile and accessed only atomically; `epoch` is not 0 and no
///   status word holds it from before the launch.
/// - `T`'s size divides 16 ([`reads_windows`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce_segments<T: Pod, Op: Operator<T>>(
    input: *const T,
    len: u64,
    offsets: *const u64,
    segments: u64,
    out: *mut T,
    written: *mut u64,
    counter: *mut u32,
    status: *mut u64,
    epoch: u32,
    op: Op,
) {
    if !reads_windows::<T>() {
        // The host never launches it for such a type (contract).
        return;
    }
    let view = Input { input, len, offsets, segments };
    let chunk = chunk_windows::<T>(len) * window_elements::<T>();
    let chunks = chunks::<T>(len);
    // Every warp takes chunks until its ticket is past the last one: `chunks + warps`
    // tickets in all, at most 2^32 (contract).
    let takes = chunks + thread::grid_blocks() as u64 * (thread::block_threads() / WARP_SIZE) as u64;
    let warp = WarpShared::<T>::of_warp();
    let lane = thread::lane_id();
    let mut count = 0u64;
    loop {
        let mut ticket = 0;
        if lane == 0 {
            // SAFETY: a valid counter accessed only atomically by this GPU (contract).
            ticket = unsafe { DeviceAtomicU32::from_ptr(counter) }.fetch_inc((takes - 1) as u32, Relaxed);
        }
        // SAFETY: the whole warp is here.
        let chunk_index = unsafe { raw::shfl_idx_sync(FULL_MASK, ticket, 0, WARP_SIZE) } as u64;
        if chunk_index >= chunks {
            break;
        }
        // SAFETY: forwarded from the contract; the whole warp is here.
        let folded = unsafe { fold_chunk(view, warp, chunk_index * chunk, chunk, out, &mut count, op) };
        if lane == 0 {
            // SAFETY: this chunk's words (contract), published once, by one thread.
            unsafe { grid::publish(status, chunk_index, folded.carry, epoch) };
        }
        // SAFETY: the whole warp is here.
        if unsafe { raw::any_sync(FULL_MASK, folded.open.is_some()) } {
            // SAFETY: the whole warp is here; every chunk before this one was taken by a
            // running warp, which publishes it.
            let before = unsafe { open_partial(status, chunk_index, epoch, op) };
            if let Some((s, partial)) = folded.open {
                // SAFETY: s < segments, and this lane alone writes it (module docs).
                unsafe { out.add(s as usize).write(op.combine(before, partial)) };
            }
        }
    }
    if count > 0 {
        // SAFETY: a valid global u64 accessed only atomically (contract).
        unsafe { DeviceAtomicU64::from_ptr(written) }.add(count, Relaxed);
    }
}

/// The partial, before chunk `chunk`, of the segment open at its start: the look-back of
/// the module docs, returned to every lane.
///
/// # Safety
/// All 32 lanes call this together; `status` and `epoch` as for [`reduce_segments`];
/// `chunk > 0`, and every chunk before it was taken by a warp of the launch that publishes
/// it.
#[inline(always)]
unsafe fn open_partial<T: Pod, Op: Operator<T>>(status: *mut u64, chunk: u64, epoch: u32, op: Op) -> T {
    let lane = thread::lane_id();
    let lanes = WARP_SIZE as u64;
    let mut after = op.identity();
    let mut end = chunk;
    loop {
        let group = (end - 1) / lanes;
        let index = group * lanes + lane as u64;
        // Lanes past the newest predecessor hold nothing: published, no start.
        let mut published = index >= end;
        let mut carry = Carry::new(op.identity(), false);
        // Wait only until the published chunks from the newest one down reach a start
        // (that start is then the group's last, as if every chunk had been waited for),
        // or until the whole group is published.
        let from = loop {
            if !published {
                // SAFETY: index < end <= chunk: a chunk of the launch (contract).
                let (read, current) = unsafe { grid::read_slots::<Carry<T>>(status, index, epoch) };
                if current {
                    carry = read;
                    published = true;
                }
            }
            // SAFETY: the whole warp is here (the loop's exits are warp-uniform).
            let done = unsafe { raw::ballot_sync(FULL_MASK, published) };
            // SAFETY: as above.
            let heads = unsafe { raw::ballot_sync(FULL_MASK, published && carry.head()) };
            // Lanes `run..32` are published.
            let run = WARP_SIZE - done.leading_ones();
            let heads_in_run = if run == WARP_SIZE { 0 } else { heads & (FULL_MASK << run) };
            if heads_in_run != 0 {
                break Some(31 - heads_in_run.leading_zeros());
            }
            if done == FULL_MASK {
                break None;
            }
        };
        // The segment started in the group's last chunk with a start (else in an earlier
        // group, or, for bad offsets, before chunk 0: from the group's start on).
        let value = if lane >= from.unwrap_or(0) { carry.value } else { op.identity() };
        // SAFETY: the whole warp is here.
        let scanned = unsafe { warp::inclusive_scan_full(value, op) };
        // SAFETY: as above.
        let total = unsafe { raw::shfl_idx_sync(FULL_MASK, scanned, WARP_SIZE - 1, WARP_SIZE) };
        after = op.combine(total, after);
        if from.is_some() || group == 0 {
            return after;
        }
        end = group * lanes;
    }
}

/// One warp's chunk `[begin, begin + chunk)` (cut at the input's end): writes every
/// segment that ends in it but the one open at its start, and returns the carry and that
/// one's partial.
///
/// # Safety
/// All 32 lanes call this together; the arguments as for [`reduce_segments`].
#[inline(always)]
unsafe fn fold_chunk<T: Pod, Op: Operator<T>>(
    view: Input<T>,
    warp: WarpShared<T>,
    begin: u64,
    chunk: u64,
    out: *mut T,
    count: &mut u64,
    op: Op,
) -> Chunk<T> {
    let lane = thread::lane_id();
    let width = window_elements::<T>();
    let per_lane = lane_elements::<T>();
    let segments = view.segments;
    let end = (begin + chunk).min(view.len);
    // The first window holds the segments that end at 0 even in an empty input.
    let windows = if end > begin { (end - begin).div_ceil(width) } else { (begin == 0) as u64 };
    if windows == 0 {
        return Chunk { carry: Carry::new(op.identity(), false), open: None };
    }
    // SAFETY: slot 0 of this warp's ring, read after the wait below.
    unsafe { view.copy_window(warp.ring, 0, begin, op) };
    // The last segment that starts at or before `begin` (0 if none): a 32-way search,
    // each round one ballot over 32 offsets of [lo, hi).
    let (mut lo, mut hi) = (0u64, segments);
    while hi - lo > 1 {
        let step = (hi - lo).div_ceil(WARP_SIZE as u64);
        let probe = lo + step * (lane as u64 + 1);
        // SAFETY: probe < hi <= segments.
        let below = probe < hi && unsafe { view.offset(probe) } <= begin;
        // SAFETY: the whole warp is here.
        let taken = unsafe { raw::ballot_sync(FULL_MASK, below) }.count_ones() as u64;
        hi = hi.min(lo + step * (taken + 1));
        lo += step * taken;
    }
    let first = lo;
    // SAFETY: first < segments.
    let open_start = unsafe { view.offset(first) } < begin;
    // The next segment whose start is to be marked, and the next to be written.
    let mut heads = first + open_start as u64;
    let mut next_out = if begin == 0 { 0 } else { first };
    let read_start = |s: u64| {
        if s < segments {
            // SAFETY: s < segments.
            unsafe { view.offset(s) }
        } else {
            u64::MAX
        }
    };
    let mut starts = read_start(heads + lane as u64);
    let mut carry = op.identity();
    let mut any_head = false;
    let mut open = None;
    for window in 0..windows {
        let base = begin + window * width;
        let slot = (window % RING as u64) as usize;
        if window + 1 < windows {
            // SAFETY: the other slot, whose window was folded and read before the warp
            // barriers of the last window.
            unsafe { view.copy_window(warp.ring, (slot + 1) % RING, base + width, op) };
        } else {
            arch::copy_async_commit();
        }
        wait_for_window();
        // 1. The starts in this window become mask bits.
        // SAFETY: lane `lane`'s own mask; the others touch it only after the barrier.
        unsafe { warp.masks.write_unchecked(lane as usize, 0) };
        // SAFETY: the whole warp is here.
        unsafe { raw::sync_warp(FULL_MASK) };
        let mut start = starts;
        loop {
            let s = heads + lane as u64;
            let inside = s < segments && start >= base && start < base + width;
            if inside {
                let at = (start - base) as usize;
                // SAFETY: at / per_lane < 32: a mask of this warp's, in shared memory,
                // accessed only atomically until the barrier below.
                let mask =
                    unsafe { Atomic::<u32, Block>::from_ptr(warp.masks.as_mut_ptr().add(at / per_lane)) };
                mask.or(1 << (at % per_lane), Relaxed);
            }
            // SAFETY: the whole warp is here.
            let marked = unsafe { raw::ballot_sync(FULL_MASK, inside) };
            heads += marked.count_ones() as u64;
            if marked != FULL_MASK {
                break;
            }
            start = read_start(heads + lane as u64);
        }
        starts = read_start(heads + lane as u64);
        // SAFETY: the whole warp is here.
        unsafe { raw::sync_warp(FULL_MASK) };
        // SAFETY: written before the barrier; this lane's own.
        let mask = unsafe { warp.masks.read_unchecked(lane as usize) };
        // 2. The lane's fold, afresh at each start.
        let mut run: Lane = [Vector([0; 4]); LANE_VECTORS];
        for (k, vector) in run.iter_mut().enumerate() {
            let at = slot * WINDOW_BYTES / VECTOR_BYTES + lane as usize * LANE_VECTORS + k;
            // SAFETY: this lane's own copy, landed (the wait above).
            *vector = unsafe { warp.ring.read_unchecked(at) };
        }
        let mut acc = op.identity();
        for j in 0..per_lane {
            let e = run[j / vector_elements::<T>()].element::<T>(j % vector_elements::<T>());
            acc = if j == 0 || (mask >> j) & 1 != 0 { e } else { op.combine(acc, e) };
            run[j / vector_elements::<T>()].set_element(j % vector_elements::<T>(), acc);
        }
        // 3. The segmented warp scan of the lanes' last partials.
        // SAFETY: the whole warp is here.
        let starting = unsafe { raw::ballot_sync(FULL_MASK, mask != 0) };
        any_head |= starting != 0;
        let partial = if lane == 0 && mask == 0 { op.combine(carry, acc) } else { acc };
        // The nearest lane at or below this one that starts afresh (lane 0 always does:
        // the carry is already in it).
        let nearest = 31 - ((starting | 1) & (FULL_MASK >> (31 - lane))).leading_zeros();
        // SAFETY: the whole warp is here; `nearest` is the segment start of every lane
        // from it to this one.
        let scanned = unsafe { warp::segmented_inclusive_scan_full(partial, nearest, op) };
        // SAFETY: the whole warp is here.
        let below = unsafe { raw::shfl_up_sync(FULL_MASK, scanned, 1, WARP_SIZE) };
        // SAFETY: this lane's own slot; read by others after the barrier below, rewritten
        // only after the next window's barriers.
        unsafe { warp.opened.write_unchecked(lane as usize, if lane == 0 { carry } else { below }) };
        // SAFETY: the whole warp is here.
        carry = unsafe { raw::shfl_idx_sync(FULL_MASK, scanned, WARP_SIZE - 1, WARP_SIZE) };
        // 4. Running values to shared memory; each segment ending here written.
        for (k, vector) in run.iter().enumerate() {
            // SAFETY: this lane's own slots (value_slot permutes its vectors).
            unsafe { warp.values.write_unchecked(value_slot(lane, k), *vector) };
        }
        // SAFETY: the whole warp is here.
        unsafe { raw::sync_warp(FULL_MASK) };
        loop {
            let s = next_out + lane as u64;
            // SAFETY: s + 1 <= segments.
            let segment_end = if s < segments { unsafe { view.offset(s + 1) } } else { u64::MAX };
            // This window holds the end (module docs: so each segment has one writer).
            let owned = s < segments
                && segment_end <= base + width
                && (segment_end > base || (segment_end == 0 && base == 0));
            if owned {
                // SAFETY: s < segments.
                let segment_start = unsafe { view.offset(s) };
                let valid = segment_start <= segment_end && segment_end <= view.len;
                let mut result = op.identity();
                if valid && segment_start < segment_end {
                    // Below `width`: base < segment_end <= base + width.
                    let last = (segment_end - 1 - base) as usize;
                    let (owner, within) = (last / per_lane, last % per_lane);
                    let per_vector = vector_elements::<T>();
                    let at = value_slot(owner as u32, within / per_vector) * per_vector + within % per_vector;
                    // SAFETY: at < 32 * per_lane, the window's elements (owner < 32, and
                    // value_slot permutes the lane's vectors); written before the barrier
                    // above.
                    result = unsafe { warp.value_elements.read_unchecked(at) };
                    if segment_start < base + (owner * per_lane) as u64 {
                        // SAFETY: owner < 32; written before the barrier above.
                        result = op.combine(unsafe { warp.opened.read_unchecked(owner) }, result);
                    }
                }
                *count += valid as u64;
                if valid && open_start && s == first {
                    open = Some((s, result));
                } else {
                    // SAFETY: s < segments; this window holds its end, so no other lane,
                    // warp or window writes it.
                    unsafe { out.add(s as usize).write(result) };
                }
            }
            // SAFETY: the whole warp is here.
            let ended = unsafe { raw::ballot_sync(FULL_MASK, owned) };
            next_out += ended.count_ones() as u64;
            if ended != FULL_MASK {
                break;
            }
        }
    }
    Chunk { carry: Carry::new(carry, any_head), open }
}
