//! Grid-wide reductions of a whole array in one of three strategies, and the grid barrier
//! the cooperative one is built on.
//!
//! # Strategies
//! Every strategy first reduces each block's share of the input to one *partial* per
//! block ([`block_partial`]); they differ in how the partials meet:
//!
//! | strategy | launches | how the partials meet |
//! | --- | --- | --- |
//! | [`two_pass`] | 2 (1 when the grid has one block) | written to `partials[block]`; a second launch of the same kernel with one block reduces them into the output |
//! | [`last_block`] | 1 | published with an epoch tag; each block then takes a ticket with an atomic, and the block that takes the last ticket reduces all partials |
//! | [`cooperative`] | 1, cooperative | written to `partials[block]`; all blocks wait at a [`GridBarrier`], then block 0 reduces the partials |
//!
//! No strategy depends on the order in which blocks run or finish, and none uses a float
//! atomic: the partials are always combined in block order by one block, so for a given
//! input, length, grid size and block size the result is the same bits on every run.
//!
//! # Which thread reads what
//! For an operator with [`Operator::COMMUTATIVE`] and an element type whose size divides
//! 16 bytes (every built-in type), the input is read as 16-byte vectors:
//! - a *head* of fewer than `16 / size` elements before the first 16-byte boundary is
//!   read one element per thread by the grid's first threads;
//! - the vectors after it are cut into *tiles* of [`VECTORS_PER_THREAD`] vectors per
//!   thread; block `b` takes tiles `b`, `b + grid`, `b + 2 grid`, ... (so at any moment
//!   the grid streams through one window of memory), and in each tile thread `t` loads
//!   vectors `t`, `t + block`, `t + 2 block`, `t + 3 block`, all four issued before any is
//!   used: four 16-byte loads per thread in flight, consecutive threads on consecutive
//!   vectors. The last tile, if the vectors end inside it, is read by the block whose
//!   turn it is, with a bound check per vector;
//! - the last elements after the last whole vector (fewer than `16 / size`) go one per
//!   thread to the grid's first threads.
//!
//! Each thread keeps one accumulator per vector of a tile and combines them at the end;
//! the block then combines its threads in rank order. The host sizes the grid so that
//! every block takes the same number of tiles (within one).
//!
//! The vectors of the input are loaded with `ld.global.nc.v4.b32` (through the read-only
//! data cache, CUDA C++'s `__ldg`), which is right because the kernels take the input as
//! a read-only [`Slice`]: nothing writes it during the launch. Partials written during
//! the same launch by other blocks are read with coherent loads after the
//! synchronisation that orders them.
//!
//! Any other operator or element type (and an input address that cannot reach a 16-byte
//! boundary in whole elements) is read in index order: block `b` takes the `b`-th of
//! `grid` contiguous ranges, thread `t` of the block the `t`-th contiguous piece of it,
//! and the block reduction combines the threads' results in rank order, so operators
//! need not be commutative.
//!
//! # Kernel parameters
//! The entry points that [`crate::reduce_kernels!`] declares, which the host's
//! `Reducer` launches, take the input as a [`Slice`] (its length travels with it; inputs
//! of more than 2^31 elements work), and must be launched with [`shared_bytes`]`::<T>()`
//! bytes of dynamic shared memory (the block reduction's scratch).

use core::mem::size_of;

use bytemuck::Pod;

use super::block;
use crate::arch::{self, L2Prefetch, NoPrefetch};
use crate::atomic::{DeviceAtomicU32, DeviceAtomicU64, Relaxed};
use crate::barrier;
use crate::fence;
use crate::global::Slice;
use crate::op::Operator;
use crate::shared::{self, SharedSlice};
use crate::thread;

/// The block size the host launches the grid reductions with (they work with any block
/// size up to 1024).
pub const BLOCK_THREADS: u32 = 256;

/// 16-byte vectors each thread loads per tile: the loads each thread has in flight.
pub const VECTORS_PER_THREAD: usize = 4;

/// The width of one vectorized load.
pub const VECTOR_BYTES: usize = 16;

/// Dynamic shared memory, in bytes, that every grid-reduction kernel over `T` needs.
pub const fn shared_bytes<T>() -> usize {
    block::SCRATCH_LEN * size_of::<T>()
}

/// Input elements one tile covers for `T`, given `threads` per block (the grid size the
/// host picks for a length follows from it). 0 when `T` is not read as vectors.
pub const fn tile_elements<T>(threads: u32) -> u64 {
    (threads as usize * VECTORS_PER_THREAD * elements_per_vector::<T>()) as u64
}

/// Elements of `T` in one 16-byte vector, or 0 when `T`'s size does not divide 16.
pub(super) const fn elements_per_vector<T>() -> usize {
    let size = size_of::<T>();
    if size == 0 || size > VECTOR_BYTES || !VECTOR_BYTES.is_multiple_of(size) {
        0
    } else {
        VECTOR_BYTES / size
    }
}

/// Elements of `T` from `address` to the next 16-byte boundary (0 when it is one), at most
/// `len`: the head that a vector fold reads one element at a time before its first
/// aligned vector.
#[inline(always)]
pub(super) fn head_elements<T>(address: u64, len: u64) -> u64 {
    let bytes = VECTOR_BYTES as u64;
    ((bytes - address % bytes) % bytes / size_of::<T>() as u64).min(len)
}

/// One 16-byte vector of input, aligned so that it loads with one `ld.v4.b32`.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct Vector(pub(super) [u8; VECTOR_BYTES]);

impl Vector {
    /// Element `k` of the vector read as `T`s (`T`'s size divides 16).
    #[inline(always)]
    pub(super) fn element<T: Pod>(&self, k: usize) -> T {
        let size = size_of::<T>();
        bytemuck::pod_read_unaligned(&self.0[k * size..(k + 1) * size])
    }
}

/// Where the calling thread stands in the grid, in linear terms.
#[derive(Clone, Copy)]
struct Share {
    /// The block's rank in the grid.
    block: u64,
    /// Blocks in the grid.
    blocks: u64,
    /// The thread's rank in its block.
    thread: u64,
    /// Threads per block.
    threads: u64,
}

impl Share {
    /// The calling thread's place in the whole grid.
    #[inline(always)]
    fn grid() -> Share {
        let (b, g) = (thread::block_idx(), thread::grid_dim());
        let (gx, gy) = (g.x as u64, g.y as u64);
        Share {
            block: b.x as u64 + b.y as u64 * gx + b.z as u64 * gx * gy,
            blocks: gx * gy * g.z as u64,
            thread: thread::linear_thread_idx() as u64,
            threads: thread::block_threads() as u64,
        }
    }

    /// The calling thread's place when its block works alone.
    #[inline(always)]
    fn block_alone() -> Share {
        Share { block: 0, blocks: 1, ..Share::grid() }
    }
}

/// Loads one 16-byte vector through the read-only cache, as two 64-bit words for 64-bit
/// elements (which then need no repacking: fewer registers) and four 32-bit words
/// otherwise, asking the L2 cache for what `P` says.
///
/// # Safety
/// As for [`arch::load_global_nc_16`].
#[inline(always)]
pub(super) unsafe fn load_vector<T, P: L2Prefetch>(ptr: *const Vector) -> Vector {
    if size_of::<T>() == 8 {
        // SAFETY: forwarded from the caller.
        Vector(bytemuck::cast(unsafe { arch::load_global_nc_16_b64::<P>(ptr.cast()) }))
    } else {
        // SAFETY: forwarded from the caller.
        Vector(bytemuck::cast(unsafe { arch::load_global_nc_16::<P>(ptr.cast()) }))
    }
}

/// Combines the elements of one vector from element `first` on into `acc`, in index
/// order (`first` is a constant at every call, so the loop unrolls).
#[inline(always)]
fn fold_vector_from<T: Pod, Op: Operator<T>>(acc: T, vector: &Vector, first: usize, op: Op) -> T {
    let mut acc = acc;
    let mut k = first;
    while k < VECTOR_BYTES / size_of::<T>() {
        acc = op.combine(acc, vector.element(k));
        k += 1;
    }
    acc
}

/// Combines the elements of one vector into `acc`, in index order.
#[inline(always)]
pub(super) fn fold_vector<T: Pod, Op: Operator<T>>(acc: T, vector: &Vector, op: Op) -> T {
    fold_vector_from(acc, vector, 0, op)
}

/// Combines the `16 / size` elements of one vector in index order, starting from the
/// first (no identity: for `f32` sums one add fewer than `fold_vector` from the identity,
/// an add of `+0.0` the compiler may not drop).
#[inline(always)]
pub(super) fn vector_total<T: Pod, Op: Operator<T>>(vector: &Vector, op: Op) -> T {
    fold_vector_from(vector.element(0), vector, 1, op)
}

/// The calling thread's fold of its share of `input[..len]` read as vectors (see the
/// module docs), for a commutative `op`. No 64-bit division: a block walks its tiles with
/// a compare, and the one tile that ends past the input (if any) is the next one of the
/// block whose turn it is, which reads it with a bound check per vector.
///
/// # Safety
/// `input` is valid for reads of `len` elements and aligned for `T`; `(16 - input % 16)
/// % 16` is a multiple of `size_of::<T>()`, which divides 16; the input is global memory
/// that nothing writes during the launch (its vectors are read through the non-coherent
/// cache).
#[inline(always)]
unsafe fn fold_vectors<T: Pod, Op: Operator<T>>(input: *const T, len: u64, share: Share, op: Op) -> T {
    let per_vector = elements_per_vector::<T>() as u64;
    let head = head_elements::<T>(input as u64, len);
    let vectors = (len - head) / per_vector;
    let tail_start = head + vectors * per_vector;
    let global = share.block * share.threads + share.thread;
    let grid_threads = share.blocks * share.threads;

    // The head and the tail have fewer than 16 elements: one per thread, looping only in
    // grids of fewer threads than that.
    let mut acc = op.identity();
    let mut index = global;
    while index < head {
        // SAFETY: index < head <= len.
        acc = op.combine(acc, unsafe { input.add(index as usize).read() });
        index += grid_threads;
    }

    // SAFETY: head <= len, so the pointer stays inside (or one past) the input; it is
    // 16-byte aligned by the choice of head.
    let vector_base = unsafe { input.add(head as usize) }.cast::<Vector>();
    let threads = share.threads as usize;
    let tile = share.threads * VECTORS_PER_THREAD as u64;
    let step = share.blocks * tile;
    let mut first = share.block * tile;
    let mut lanes = [op.identity(); VECTORS_PER_THREAD];
    while first + tile <= vectors {
        let mut loaded = [Vector([0; VECTOR_BYTES]); VECTORS_PER_THREAD];
        for (u, slot) in loaded.iter_mut().enumerate() {
            // SAFETY: the tile [first, first + tile) lies inside the input's vectors, and
            // so does its vector first + u * threads + thread: 16-byte aligned global
            // memory that nothing writes during the launch.
            *slot = unsafe {
                load_vector::<T, NoPrefetch>(
                    vector_base.add(first as usize + u * threads + share.thread as usize),
                )
            };
        }
        for (lane, vector) in lanes.iter_mut().zip(&loaded) {
            *lane = fold_vector(*lane, vector, op);
        }
        first += step;
    }
    if first < vectors {
        for (u, lane) in lanes.iter_mut().enumerate() {
            let index = first + (u * threads) as u64 + share.thread;
            if index < vectors {
                // SAFETY: index < vectors: as above.
                let vector = unsafe { load_vector::<T, NoPrefetch>(vector_base.add(index as usize)) };
                *lane = fold_vector(*lane, &vector, op);
            }
        }
    }
    let mut index = tail_start + global;
    while index < len {
        // SAFETY: index < len.
        acc = op.combine(acc, unsafe { input.add(index as usize).read() });
        index += grid_threads;
    }
    for lane in lanes {
        acc = op.combine(acc, lane);
    }
    acc
}

/// The calling thread's contiguous piece `start..end` of `0..len` in index order: block
/// `b` takes the `b`-th of `blocks` contiguous ranges, thread `t` the `t`-th contiguous
/// piece of its block's range.
#[inline(always)]
fn piece(len: u64, share: Share) -> (u64, u64) {
    let per_block = len.div_ceil(share.blocks);
    let block_start = (share.block * per_block).min(len);
    let block_end = (block_start + per_block).min(len);
    let per_thread = (block_end - block_start).div_ceil(share.threads);
    let start = (block_start + share.thread * per_thread).min(block_end);
    (start, (start + per_thread).min(block_end))
}

/// The calling thread's fold, in index order, of its contiguous piece of `input[..len]`
/// (see the module docs).
///
/// # Safety
/// `input` is valid for reads of `len` elements and aligned for `T`, and no thread writes
/// those elements during the call.
#[inline(always)]
unsafe fn fold_in_order<T: Pod, Op: Operator<T>>(input: *const T, len: u64, share: Share, op: Op) -> T {
    let (start, end) = piece(len, share);
    let mut acc = op.identity();
    for i in start..end {
        // SAFETY: i < end <= len.
        acc = op.combine(acc, unsafe { input.add(i as usize).read() });
    }
    acc
}

/// Whether `input` can be read as 16-byte vectors of `T` by [`fold_vectors`] with
/// operator `Op`.
#[inline(always)]
pub(super) fn reads_vectors<T, Op: Operator<T>>(input: *const T) -> bool {
    let per_vector = elements_per_vector::<T>();
    let to_boundary = (VECTOR_BYTES - input as usize % VECTOR_BYTES) % VECTOR_BYTES;
    Op::COMMUTATIVE && per_vector > 0 && to_boundary.is_multiple_of(size_of::<T>())
}

/// The calling block's partial: the reduction of its share of `input[..len]` (module
/// docs), returned to the threads of warp 0 ([`block::reduce_to_leader`]).
///
/// # Safety
/// - Every thread of the block calls this (it contains a block barrier), and a block
///   barrier separates it from the next use of `scratch`.
/// - `input` is valid for reads of `len` elements, aligned for `T`, and not written
///   during the launch.
/// - `scratch` is as for [`block::reduce`].
#[inline(always)]
pub unsafe fn block_partial<T: Pod, Op: Operator<T>>(
    scratch: SharedSlice<T>,
    input: *const T,
    len: u64,
    op: Op,
) -> T {
    let share = Share::grid();
    let mine = if reads_vectors::<T, Op>(input) {
        // SAFETY: forwarded from the caller; the alignment condition was just checked.
        unsafe { fold_vectors(input, len, share, op) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { fold_in_order(input, len, share, op) }
    };
    // SAFETY: forwarded from the caller.
    unsafe { block::reduce_to_leader(scratch, mine, op) }
}

/// Reduces `partials[..count]` in index order with the calling block alone; the result
/// is valid in warp 0.
///
/// # Safety
/// As for [`block_partial`], with `partials` in place of the input; writes to the
/// partials by other blocks are ordered before this call.
#[inline(always)]
unsafe fn reduce_partials<T: Pod, Op: Operator<T>>(
    scratch: SharedSlice<T>,
    partials: *const T,
    count: u64,
    op: Op,
) -> T {
    // SAFETY: forwarded from the caller.
    let mine = unsafe { fold_in_order(partials, count, Share::block_alone(), op) };
    // SAFETY: forwarded from the caller.
    unsafe { block::reduce_to_leader(scratch, mine, op) }
}

/// The block-shared scratch of the grid reductions: the launch's dynamic shared memory.
#[inline(always)]
fn scratch<T: Pod>() -> SharedSlice<T> {
    shared::dynamic::<T>()
}

/// Whether the caller is thread 0 of its block.
#[inline(always)]
fn is_block_leader() -> bool {
    thread::linear_thread_idx() == 0
}

/// Two-pass strategy, one kernel for both passes: block `b` writes the reduction of its
/// share of `input[..len]` to `partials[b]`. The host launches it over the input with `G`
/// blocks, then over `partials[..G]` with one block writing into the output (one launch
/// only when `G` is 1). The kernel boundary between the passes orders the partials'
/// writes before their reads. Deterministic for a fixed `G` and block size.
///
/// # Safety
/// - Launched with [`shared_bytes`]`::<T>()` bytes of dynamic shared memory, and every
///   thread of every block runs this exactly once.
/// - `partials` has one writable element per block of the grid, not overlapping the
///   input.
#[inline(always)]
pub unsafe fn two_pass<T: Pod, Op: Operator<T>>(input: Slice<T>, partials: *mut T, op: Op) {
    // SAFETY: forwarded from the caller; a Slice's elements are readable and not written
    // during the launch; nothing uses the scratch afterwards.
    let partial = unsafe { block_partial(scratch(), input.as_ptr(), input.len() as u64, op) };
    if is_block_leader() {
        // SAFETY: one slot per block; only this block's leader writes it.
        unsafe { partials.add(Share::grid().block as usize).write(partial) };
    }
}

/// 64-bit slots per block that [`last_block`] publishes a partial of `T` in: one per
/// 32-bit word of `T` (at least one).
pub const fn slot_words<T>() -> usize {
    let words = size_of::<T>().div_ceil(4);
    if words == 0 {
        1
    } else {
        words
    }
}

/// Publishes `value` as block `block`'s partial: word `w` of its bytes goes to
/// `slots[block * slot_words + w]` as `(epoch << 32) | word`, each with one
/// `st.relaxed.gpu.b64`, which is single-copy atomic: a reader sees the word and its
/// epoch together or not at all. (The look-back of `crate::scan` keeps its status slots
/// in the same epoch-tagged words, through this function and [`read_slots`].)
///
/// # Safety
/// `slots` holds `slot_words::<T>()` `u64`s for block `block`, 8-byte aligned in global
/// memory, accessed only atomically during the launch.
#[inline(always)]
pub(crate) unsafe fn publish<T: Pod>(slots: *mut u64, block: u64, value: T, epoch: u32) {
    let bytes = bytemuck::bytes_of(&value);
    for w in 0..slot_words::<T>() {
        let mut word = [0u8; 4];
        let start = (4 * w).min(bytes.len());
        let end = (4 * w + 4).min(bytes.len());
        word[..end - start].copy_from_slice(&bytes[start..end]);
        let tagged = (epoch as u64) << 32 | u32::from_ne_bytes(word) as u64;
        // SAFETY: the caller's contract: a valid, aligned slot accessed only atomically by
        // threads of this GPU.
        let slot = unsafe { DeviceAtomicU64::from_ptr(slots.add(block as usize * slot_words::<T>() + w)) };
        slot.store(tagged, Relaxed);
    }
}

/// Reads block `block`'s partial from the slots [`publish`] writes, once: the value, and
/// whether every word carried `epoch` (else the value is not this launch's yet). No
/// waiting, so the loads of several calls are in flight together.
///
/// # Safety
/// As for [`publish`].
#[inline(always)]
pub(crate) unsafe fn read_slots<T: Pod>(slots: *mut u64, block: u64, epoch: u32) -> (T, bool) {
    let mut value = T::zeroed();
    let mut current = true;
    let bytes = bytemuck::bytes_of_mut(&mut value);
    for w in 0..slot_words::<T>() {
        // SAFETY: the caller's contract.
        let slot = unsafe { DeviceAtomicU64::from_ptr(slots.add(block as usize * slot_words::<T>() + w)) };
        let tagged = slot.load(Relaxed);
        current &= (tagged >> 32) as u32 == epoch;
        let start = (4 * w).min(bytes.len());
        let end = (4 * w + 4).min(bytes.len());
        bytes[start..end].copy_from_slice(&(tagged as u32).to_ne_bytes()[..end - start]);
    }
    (value, current)
}

/// Reads block `block`'s partial, polling its slots until every word carries `epoch`
/// (a word of this launch, never one left by an earlier launch).
///
/// # Safety
/// As for [`publish`]; block `block` publishes its partial with `epoch` in this launch.
#[inline(always)]
unsafe fn collect<T: Pod>(slots: *mut u64, block: u64, epoch: u32) -> T {
    loop {
        // SAFETY: forwarded from the caller.
        let (value, current) = unsafe { read_slots(slots, block, epoch) };
        if current {
            return value;
        }
    }
}

/// Partials the last block's threads read per round, their loads in flight together.
const COLLECT_BATCH: u64 = 4;

/// Single-pass "last block" strategy.
///
/// Each block publishes its partial in its slots: each 32-bit word of it beside the
/// launch's `epoch`, in one `st.relaxed.gpu.b64` per word. Then its thread 0 takes a
/// ticket with one `atom.inc` on `counter`. The block whose ticket is `grid - 1` arrived
/// last, whatever the order in which blocks ran; it learns so through
/// [`barrier::sync_or`], reads every block's partial in block order (`ld.relaxed.gpu.b64`
/// per word, accepting only words tagged with this launch's epoch and polling until each
/// has arrived: the acquire side of the hand-off), reduces them and writes `out[0]`.
///
/// Why tags instead of a release fence before the ticket and an acquire after it: the
/// fence makes every block wait for its partial's store to reach L2 before it may take a
/// ticket, one more L2 round trip on the critical path of a single-launch reduction
/// (0.3 to 0.6 µs of a 4 to 5 µs reduction of 2^16 to 2^20 floats on an H100). A tagged
/// 64-bit word is published by one single-copy-atomic store, so the reader can check
/// each partial itself: no ordering between the partial and the ticket is needed, only
/// that the last block waits for the tags, which by then are at most in flight.
///
/// `atom.inc` with limit `grid - 1` stores 0 when it hands out the last ticket, so the
/// counter is back at 0 for the next launch without a separate reset. Deterministic for
/// a fixed grid and block size.
///
/// # Safety
/// - As for [`two_pass`] (without `partials`), and `out` has one writable element.
/// - `slots` holds [`slot_words`]`::<T>()` 8-byte aligned `u64`s per block of the grid,
///   used by no other concurrent launch, none of which holds a word tagged with `epoch`
///   from an earlier launch (the host gives every launch a new epoch and zeroes the slots
///   before the epochs wrap; 0 is never an epoch).
/// - `counter` is a valid, 4-byte aligned global `u32` holding 0 when the launch starts,
///   used by no other concurrent launch; the grid has fewer than 2^32 blocks.
#[inline(always)]
pub unsafe fn last_block<T: Pod, Op: Operator<T>>(
    input: Slice<T>,
    slots: *mut u64,
    counter: *mut u32,
    epoch: u32,
    out: *mut T,
    op: Op,
) {
    let share = Share::grid();
    // SAFETY: forwarded from the caller (a Slice is readable and not written during the
    // launch); the barrier of `sync_or` below separates this use of the scratch from the
    // next.
    let partial = unsafe { block_partial(scratch(), input.as_ptr(), input.len() as u64, op) };
    let mut last = false;
    if is_block_leader() {
        // SAFETY: this block's slots, accessed only atomically (contract).
        unsafe { publish(slots, share.block, partial, epoch) };
        // SAFETY: a valid global u32 accessed only atomically during the launch
        // (contract), by threads of this GPU.
        let counter = unsafe { DeviceAtomicU32::from_ptr(counter) };
        let final_ticket = (share.blocks - 1) as u32;
        last = counter.fetch_inc(final_ticket, Relaxed) == final_ticket;
    }
    // SAFETY: every thread of the block reaches this barrier once.
    if !unsafe { barrier::sync_or(last) } {
        return;
    }
    let (start, end) = piece(share.blocks, Share::block_alone());
    let mut mine = op.identity();
    let mut first = start;
    while first < end {
        // Read up to COLLECT_BATCH partials at once; poll only those not yet arrived.
        // (Constant-count index loops: they unroll, and the batch stays in registers.)
        let mut batch = [(op.identity(), true); COLLECT_BATCH as usize];
        #[allow(clippy::needless_range_loop)]
        for k in 0..COLLECT_BATCH as usize {
            if first + (k as u64) < end {
                // SAFETY: every block of the grid publishes its partial in this launch.
                batch[k] = unsafe { read_slots::<T>(slots, first + k as u64, epoch) };
            }
        }
        #[allow(clippy::needless_range_loop)]
        for k in 0..COLLECT_BATCH as usize {
            let block = first + k as u64;
            if block < end {
                let (value, current) = batch[k];
                // SAFETY: as above.
                let value = if current { value } else { unsafe { collect::<T>(slots, block, epoch) } };
                mine = op.combine(mine, value);
            }
        }
        first += COLLECT_BATCH;
    }
    // SAFETY: every thread of this block gets here; the scratch was last used before the
    // barrier of `sync_or`.
    let total = unsafe { block::reduce_to_leader(scratch(), mine, op) };
    if is_block_leader() {
        // SAFETY: `out` has one writable element.
        unsafe { out.write(total) };
    }
}

/// Cooperative strategy: every block writes its partial to `partials[block]`, the whole
/// grid meets at a [`GridBarrier`] on `barrier`, then block 0 reduces `partials[..grid]`
/// in block order and writes `out[0]`. Launched with `cuLaunchCooperativeKernel` and at
/// most as many blocks as can be resident at once (the occupancy limit), since every
/// block waits for all others. Deterministic for a fixed grid and block size.
///
/// # Safety
/// - As for [`two_pass`], and `out` has one writable element.
/// - A cooperative launch (all blocks resident at once).
/// - `barrier` is as for [`GridBarrier::from_ptr`].
#[inline(always)]
pub unsafe fn cooperative<T: Pod, Op: Operator<T>>(
    input: Slice<T>,
    partials: *mut T,
    barrier: *mut u32,
    out: *mut T,
    op: Op,
) {
    let share = Share::grid();
    // SAFETY: forwarded from the caller (a Slice is readable and not written during the
    // launch); the grid barrier's block barriers separate this use of the scratch from the
    // next.
    let partial = unsafe { block_partial(scratch(), input.as_ptr(), input.len() as u64, op) };
    if is_block_leader() {
        // SAFETY: one slot per block, written by its leader only.
        unsafe { partials.add(share.block as usize).write(partial) };
    }
    // SAFETY: forwarded from the caller: a valid barrier word, a cooperative launch, and
    // every thread of the grid calls `sync` once.
    unsafe { GridBarrier::from_ptr(barrier).sync() };
    if share.block == 0 {
        // SAFETY: every partial was written before the grid barrier, which orders them
        // before these reads.
        let total = unsafe { reduce_partials(scratch(), partials.cast_const(), share.blocks, op) };
        if is_block_leader() {
            // SAFETY: `out` has one writable element.
            unsafe { out.write(total) };
        }
    }
}

/// The bit of the barrier word that flips once per completed [`GridBarrier::sync`].
const GENERATION: u32 = 1 << 31;

/// A barrier for every thread of a grid, built from a block barrier, device-scope fences
/// and one device-scope atomic word.
///
/// Thread 0 of each block adds to the word: block 0 adds `2^31 - (blocks - 1)`, every
/// other block 1. The additions sum to exactly `2^31`, so the word's top bit flips when,
/// and only when, the last block has arrived, and its low 31 bits are back where they
/// started: the word needs no reset between uses or launches, as long as its low 31 bits
/// are 0 before the first (a zeroed allocation). Until all blocks have arrived the low
/// bits stay below `2^31`, so the top bit cannot flip early. Each thread 0 then polls the
/// word until the top bit differs from the value its own addition saw.
///
/// Ordering: a block barrier first (the block's writes happen before thread 0 arrives),
/// `fence.acq_rel.gpu` before the addition (publishes them at device scope), and again
/// after the poll (acquires every other block's), then a block barrier (the rest of the
/// block after thread 0). This is the scheme of CUDA's `grid.sync()`.
pub struct GridBarrier<'a> {
    word: &'a DeviceAtomicU32,
}

impl GridBarrier<'_> {
    /// The barrier on the `u32` at `word`.
    ///
    /// # Safety
    /// `word` is a valid, 4-byte aligned global `u32` whose low 31 bits are 0 before its
    /// first barrier, accessed only through `GridBarrier`s of this grid while it runs.
    #[inline(always)]
    pub unsafe fn from_ptr(word: *mut u32) -> Self {
        // SAFETY: forwarded from the caller.
        GridBarrier { word: unsafe { DeviceAtomicU32::from_ptr(word) } }
    }

    /// Waits until every thread of the grid has called `sync`.
    ///
    /// # Safety
    /// - Every thread of every block of the grid calls `sync` on this word, the same
    ///   number of times, and none has exited.
    /// - All blocks of the grid are resident at once (a cooperative launch within the
    ///   occupancy limit); otherwise blocks that wait keep the others from starting, a
    ///   deadlock. The CPU emulator checks this one: a `sync` in a launch that is not
    ///   cooperative ends it with `ErrorKind::NotCooperative` (the GPU has no register
    ///   that tells a cooperative launch, so there it is the caller's to keep).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn sync(&self) {
        arch::requires_cooperative_launch(core::panic::Location::caller());
        // SAFETY: every thread of the block calls this (contract).
        unsafe { barrier::sync() };
        if is_block_leader() {
            let share = Share::grid();
            let arrival = if share.block == 0 { GENERATION - (share.blocks as u32 - 1) } else { 1 };
            fence::device();
            let before = self.word.fetch_add(arrival, Relaxed);
            while (self.word.load(Relaxed) ^ before) & GENERATION == 0 {}
            fence::device();
        }
        // SAFETY: as for the first barrier.
        unsafe { barrier::sync() };
    }
}

/// Declares the kernels the host's `Reducer` (three grid-reduction strategies) and its
/// cross-device all-reduce (an element-wise fold) launch for one element type and
/// operator, with these parameter lists (in this order):
///
/// - `two_pass(input: Slice<T>, partials: *mut T)`: [`two_pass`];
/// - `last_block(input: Slice<T>, slots: *mut u64, counter: *mut u32, epoch: u32, out: *mut T)`:
///   [`last_block`];
/// - `cooperative(input: Slice<T>, partials: *mut T, barrier: *mut u32, out: *mut T)`:
///   [`cooperative`];
/// - `fold_copies(copies: Slice<T>, count: u32, out: DisjointSlice<T>)`:
///   [`crate::reduce::copies::fold_copies`], a safe kernel.
///
/// The first three must be launched with [`shared_bytes`]`::<T>()` bytes of dynamic
/// shared memory.
///
/// ```
/// /// Keeps the larger magnitude (ties: the first); associative, with identity 0.
/// #[derive(Clone, Copy, Default)]
/// pub struct AbsMax;
/// impl warpsafe::op::Operator<i32> for AbsMax {
///     fn identity(self) -> i32 {
///         0
///     }
///     fn combine(self, a: i32, b: i32) -> i32 {
///         if b.unsigned_abs() > a.unsigned_abs() { b } else { a }
///     }
/// }
/// warpsafe::reduce_kernels! {
///     i32, AbsMax => absmax_two_pass, absmax_last_block, absmax_cooperative, absmax_fold_copies;
/// }
/// // Four kernels, each a `static` handle on the host (the `Reducer` of warpsafe-host
/// // launches them through its `Reduction` trait).
/// assert_eq!(absmax_last_block.param_count(), 5);
/// assert_eq!(absmax_fold_copies.param_count(), 3);
/// ```
#[macro_export]
macro_rules! reduce_kernels {
    ($($t:ty, $op:expr => $two_pass:ident, $last_block:ident, $cooperative:ident, $fold_copies:ident;)*) => {$(
        $crate::kernel! {
            #[doc = concat!("Two-pass grid reduction of `", stringify!($t), "` with `", stringify!($op), "`: ")]
            #[doc = "`warpsafe::reduce::grid::two_pass`."]
            ///
            /// # Safety
            /// The contract of `warpsafe::reduce::grid::two_pass`.
            pub unsafe fn $two_pass(input: $crate::global::Slice<$t>, partials: *mut $t) {
                // SAFETY: forwarded from the launch contract.
                unsafe { $crate::reduce::grid::two_pass(input, partials, $op) }
            }

            #[doc = concat!("Single-pass last-block grid reduction of `", stringify!($t), "` with `")]
            #[doc = concat!(stringify!($op), "`: `warpsafe::reduce::grid::last_block`.")]
            ///
            /// # Safety
            /// The contract of `warpsafe::reduce::grid::last_block`.
            pub unsafe fn $last_block(
                input: $crate::global::Slice<$t>,
                slots: *mut u64,
                counter: *mut u32,
                epoch: u32,
                out: *mut $t,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe { $crate::reduce::grid::last_block(input, slots, counter, epoch, out, $op) }
            }

            #[doc = concat!("Cooperative grid reduction of `", stringify!($t), "` with `", stringify!($op), "`: ")]
            #[doc = "`warpsafe::reduce::grid::cooperative`."]
            ///
            /// # Safety
            /// The contract of `warpsafe::reduce::grid::cooperative`.
            pub unsafe fn $cooperative(
                input: $crate::global::Slice<$t>,
                partials: *mut $t,
                barrier: *mut u32,
                out: *mut $t,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe { $crate::reduce::grid::cooperative(input, partials, barrier, out, $op) }
            }

            #[doc = concat!("Element-wise fold of `count` copies of `", stringify!($t), "` with `")]
            #[doc = concat!(stringify!($op), "`: `warpsafe::reduce::copies::fold_copies`.")]
            pub fn $fold_copies(
                copies: $crate::global::Slice<$t>,
                count: u32,
                out: $crate::global::DisjointSlice<$t>,
            ) {
                $crate::reduce::copies::fold_copies(copies, count, out, $op)
            }
        }
    )*};
}
