//! How a block moves its tile between global memory and its threads.
//!
//! Each thread owns `ITEMS` consecutive elements of the tile (a *blocked* arrangement:
//! thread `r` holds elements `r * ITEMS .. (r + 1) * ITEMS`), so its part of a scan is a
//! plain loop and only one value per thread takes part in the block-wide scan. Read
//! directly, blocked runs make every load instruction of a warp touch 32 runs 64 bytes
//! apart (an uncoalesced pattern: 16 cache lines per instruction). So each warp stages its
//! *segment* of the tile (32 runs) in its own region of shared memory:
//!
//! - global ↔ shared in *striped* order: lane `l` moves 16-byte vectors `l`, `l + 32`,
//!   `l + 64`, `l + 96` of the segment, so each instruction of the warp covers 512
//!   contiguous bytes; the loads are ordinary coherent `ld.v4` (not the read-only cache),
//!   because an in-place scan writes the elements it read;
//! - shared ↔ registers in blocked order: lane `l` moves its own four vectors;
//! - a `bar.warp.sync` between the two, since lanes exchange data.
//!
//! The vectors of a run sit in shared memory in a rotated order (vector `k` of lane `l`'s
//! run at position `k ^ ((l >> 1) & 3)` of the run), so that the 8 lanes of each phase of
//! a blocked 16-byte access hit 8 different groups of four banks: conflict-free both ways.
//!
//! Types whose size does not divide 16 and the tile that ends past the input move one
//! element at a time (striped, with a bound check), through the same staging.
//!
//! Because the staging holds the tile, a thread need not keep its items in registers
//! while the block looks back: it reads them again afterwards ([`Stage::read_run`]).

use core::mem::size_of;

use bytemuck::{Pod, Zeroable};

use crate::arch::{FULL_MASK, WARP_SIZE};
use crate::shared::{self, SharedSlice};
use crate::thread;
use crate::warp as raw;

/// Bytes each thread holds per tile.
const BYTES_PER_THREAD: usize = 64;

/// The width of one vector access.
const VECTOR_BYTES: usize = 16;

/// Vectors in one thread's run, when its type moves as vectors.
const VECTORS_PER_RUN: usize = BYTES_PER_THREAD / VECTOR_BYTES;

/// Elements of `T` each thread holds: 64 bytes' worth (16 `f32`s, 8 `f64`s, 64 `u8`s),
/// at least one.
pub const fn items_per_thread<T>() -> usize {
    let size = size_of::<T>();
    if size == 0 || size >= BYTES_PER_THREAD {
        1
    } else {
        BYTES_PER_THREAD / size
    }
}

/// Bytes of shared memory the staging of a tile of `T` takes with `threads` per block.
pub const fn staging_bytes<T>(threads: u32) -> usize {
    threads as usize * items_per_thread::<T>() * size_of::<T>()
}

/// Whether `T` moves as 16-byte vectors: its size divides 16, so a run is four vectors.
const fn moves_as_vectors<T>() -> bool {
    let size = size_of::<T>();
    size > 0 && VECTOR_BYTES.is_multiple_of(size) && items_per_thread::<T>() * size == BYTES_PER_THREAD
}

/// One 16-byte vector, aligned so that it moves with one `ld.v4`/`st.v4`.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(16))]
struct Vector([u32; 4]);

/// Where vector `k` of lane `lane`'s run sits in the segment's staging (module docs).
#[inline(always)]
fn vector_slot(lane: u32, k: usize) -> usize {
    lane as usize * VECTORS_PER_RUN + (k ^ ((lane as usize >> 1) & 3))
}

/// Where element `e` of the segment sits in its staging, counted in elements.
#[inline(always)]
fn element_slot<T>(e: usize) -> usize {
    if moves_as_vectors::<T>() {
        let per_vector = VECTOR_BYTES / size_of::<T>();
        let vector = e / per_vector;
        let (lane, k) = (vector / VECTORS_PER_RUN, vector % VECTORS_PER_RUN);
        vector_slot(lane as u32, k) * per_vector + e % per_vector
    } else {
        e
    }
}

/// The calling warp's staging region: its segment of the tile, in shared memory.
#[derive(Clone, Copy)]
pub struct Stage<T> {
    elements: SharedSlice<T>,
    vectors: SharedSlice<Vector>,
}

impl<T: Pod> Stage<T> {
    /// The calling warp's region of the staging that starts at byte `offset` of the
    /// launch's dynamic shared memory (16-byte aligned; a window too small traps).
    #[inline(always)]
    #[track_caller]
    pub fn of_warp<const ITEMS: usize>(offset: usize) -> Stage<T> {
        let segment = WARP_SIZE as usize * ITEMS;
        let start = offset + thread::warp_idx() as usize * segment * size_of::<T>();
        Stage {
            elements: shared::dynamic_part::<T>(start, segment),
            vectors: shared::dynamic_part::<Vector>(
                start,
                if moves_as_vectors::<T>() { segment * size_of::<T>() / VECTOR_BYTES } else { 0 },
            ),
        }
    }

    /// The calling lane's run, read from the staging.
    ///
    /// # Safety
    /// Called by the lanes of a full warp after a `bar.warp.sync` that follows the writes
    /// of the run, and before any other lane rewrites it.
    #[inline(always)]
    pub unsafe fn read_run<const ITEMS: usize>(&self) -> [T; ITEMS] {
        let lane = thread::lane_id();
        let mut items = [T::zeroed(); ITEMS];
        if moves_as_vectors::<T>() {
            let per_vector = VECTOR_BYTES / size_of::<T>();
            for k in 0..VECTORS_PER_RUN {
                // SAFETY: the lane's own slot, in bounds (32 runs of four vectors); ordered
                // after its writer by the caller's warp barrier.
                let vector = unsafe { self.vectors.read_unchecked(vector_slot(lane, k)) };
                let bytes = bytemuck::bytes_of(&vector);
                for (i, item) in items[k * per_vector..(k + 1) * per_vector].iter_mut().enumerate() {
                    *item = bytemuck::pod_read_unaligned(&bytes[i * size_of::<T>()..(i + 1) * size_of::<T>()]);
                }
            }
        } else {
            for (i, item) in items.iter_mut().enumerate() {
                // SAFETY: as above, element by element.
                *item = unsafe { self.elements.read_unchecked(lane as usize * ITEMS + i) };
            }
        }
        items
    }

    /// Writes the calling lane's run to the staging.
    ///
    /// # Safety
    /// Called by the lanes of a full warp; no other lane reads or writes this lane's run
    /// until a `bar.warp.sync` after this.
    #[inline(always)]
    pub unsafe fn write_run<const ITEMS: usize>(&self, items: &[T; ITEMS]) {
        let lane = thread::lane_id();
        if moves_as_vectors::<T>() {
            let per_vector = VECTOR_BYTES / size_of::<T>();
            for k in 0..VECTORS_PER_RUN {
                let mut vector = Vector([0; 4]);
                let bytes = bytemuck::bytes_of_mut(&mut vector);
                for (i, item) in items[k * per_vector..(k + 1) * per_vector].iter().enumerate() {
                    bytes[i * size_of::<T>()..(i + 1) * size_of::<T>()].copy_from_slice(bytemuck::bytes_of(item));
                }
                // SAFETY: the lane's own slot, in bounds (contract).
                unsafe { self.vectors.write_unchecked(vector_slot(lane, k), vector) };
            }
        } else {
            for (i, item) in items.iter().enumerate() {
                // SAFETY: as above.
                unsafe { self.elements.write_unchecked(lane as usize * ITEMS + i, *item) };
            }
        }
    }
}

/// Loads the calling warp's segment `first .. first + 32 * ITEMS` of `data[..len]`
/// (elements past `len` are `fill`) into its staging, and returns the calling lane's run.
///
/// # Safety
/// - Called by every lane of a full warp, each with the same `first`; the stage is the
///   warp's ([`Stage::of_warp`]) and nothing else uses it during the call.
/// - `data` is valid for reads of `len` elements, aligned for `T`, and no other thread
///   writes the segment during the call.
#[inline(always)]
pub unsafe fn load<T: Pod, const ITEMS: usize>(
    data: *const T,
    first: u64,
    len: u64,
    fill: T,
    stage: Stage<T>,
) -> [T; ITEMS] {
    let lane = thread::lane_id() as usize;
    let segment = WARP_SIZE as usize * ITEMS;
    let whole = first + segment as u64 <= len;
    if whole && moves_as_vectors::<T>() && (data as usize).is_multiple_of(VECTOR_BYTES) {
        // SAFETY: the segment lies inside the data (whole).
        let vectors = unsafe { data.add(first as usize) }.cast::<Vector>();
        let mut loaded = [Vector([0; 4]); VECTORS_PER_RUN];
        for (v, vector) in loaded.iter_mut().enumerate() {
            // SAFETY: vector v * 32 + lane of the segment: in bounds, 16-byte aligned (the
            // base is, and a segment is a whole number of vectors).
            *vector = unsafe { vectors.add(v * WARP_SIZE as usize + lane).read() };
        }
        for (v, vector) in loaded.iter().enumerate() {
            let g = v * WARP_SIZE as usize + lane;
            // SAFETY: in bounds; each slot is written by one lane, and read after the
            // warp barrier below.
            unsafe { stage.vectors.write_unchecked(vector_slot((g / VECTORS_PER_RUN) as u32, g % VECTORS_PER_RUN), *vector) };
        }
    } else {
        for i in 0..ITEMS {
            let e = i * WARP_SIZE as usize + lane;
            let index = first + e as u64;
            // SAFETY: index < len.
            let value = if index < len { unsafe { data.add(index as usize).read() } } else { fill };
            // SAFETY: in bounds (e < 32 * ITEMS); one writer per slot, read after the
            // warp barrier below.
            unsafe { stage.elements.write_unchecked(element_slot::<T>(e), value) };
        }
    }
    // SAFETY: the whole warp is here (contract).
    unsafe { raw::sync_warp(FULL_MASK) };
    // SAFETY: after the warp barrier; nothing rewrites the runs during this call.
    unsafe { stage.read_run::<ITEMS>() }
}

/// Writes every lane's `items` (its run) to the calling warp's segment
/// `first .. first + 32 * ITEMS` of `data`, dropping elements at or past `len`.
///
/// # Safety
/// - As for [`load`]; every lane passes its own run.
/// - `data` is valid for writes of `len` elements, aligned for `T`, and no other thread
///   accesses the segment during the call.
#[inline(always)]
pub unsafe fn store<T: Pod, const ITEMS: usize>(
    data: *mut T,
    first: u64,
    len: u64,
    items: &[T; ITEMS],
    stage: Stage<T>,
) {
    let lane = thread::lane_id() as usize;
    // SAFETY: the lane's own run; read by other lanes only after the barrier below.
    unsafe { stage.write_run(items) };
    // SAFETY: the whole warp is here (contract).
    unsafe { raw::sync_warp(FULL_MASK) };
    let segment = WARP_SIZE as usize * ITEMS;
    let whole = first + segment as u64 <= len;
    if whole && moves_as_vectors::<T>() && (data as usize).is_multiple_of(VECTOR_BYTES) {
        // SAFETY: the segment lies inside the data (whole).
        let vectors = unsafe { data.add(first as usize) }.cast::<Vector>();
        for v in 0..VECTORS_PER_RUN {
            let g = v * WARP_SIZE as usize + lane;
            // SAFETY: written before the warp barrier; in bounds.
            let vector = unsafe { stage.vectors.read_unchecked(vector_slot((g / VECTORS_PER_RUN) as u32, g % VECTORS_PER_RUN)) };
            // SAFETY: vector g of the segment: in bounds and aligned, as for `load`.
            unsafe { vectors.add(g).write(vector) };
        }
    } else {
        for i in 0..ITEMS {
            let e = i * WARP_SIZE as usize + lane;
            let index = first + e as u64;
            if index < len {
                // SAFETY: written before the warp barrier; in bounds.
                let value = unsafe { stage.elements.read_unchecked(element_slot::<T>(e)) };
                // SAFETY: index < len.
                unsafe { data.add(index as usize).write(value) };
            }
        }
    }
}

/// The calling thread's `ITEMS` elements `first .. first + ITEMS` of `data[..len]` read
/// straight from global memory (no staging), those at or past `len` being `fill`: for
/// small side inputs such as flags, whose runs are 16 bytes or less.
///
/// # Safety
/// `data` is valid for reads of `len` elements, aligned for `T`, and not written by
/// another thread during the call.
#[inline(always)]
pub unsafe fn load_run<T: Pod, const ITEMS: usize>(data: *const T, first: u64, len: u64, fill: T) -> [T; ITEMS] {
    let mut items = [fill; ITEMS];
    let run_bytes = ITEMS * size_of::<T>();
    if first + ITEMS as u64 <= len && run_bytes == VECTOR_BYTES && (data as usize).is_multiple_of(VECTOR_BYTES) {
        // SAFETY: first + ITEMS <= len, and the run is one aligned vector (the base is
        // aligned and every run is 16 bytes).
        let vector = unsafe { data.add(first as usize).cast::<Vector>().read() };
        let bytes = bytemuck::bytes_of(&vector);
        for (i, item) in items.iter_mut().enumerate() {
            *item = bytemuck::pod_read_unaligned(&bytes[i * size_of::<T>()..(i + 1) * size_of::<T>()]);
        }
    } else {
        for (i, item) in items.iter_mut().enumerate() {
            let index = first + i as u64;
            if index < len {
                // SAFETY: index < len.
                *item = unsafe { data.add(index as usize).read() };
            }
        }
    }
    items
}
