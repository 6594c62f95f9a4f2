//! How a block moves its tile between global memory and its threads.
//!
//! Each thread owns `ITEMS` consecutive elements of the tile (a *blocked* arrangement:
//! thread `r` holds elements `r * ITEMS .. (r + 1) * ITEMS`), so its part of a scan is a
//! plain loop and only one value per thread takes part in the block-wide scan. Read
//! directly, blocked runs make every load instruction of a warp touch 32 runs of 64 or 128
//! bytes (an uncoalesced pattern: 16 or more cache lines per instruction). So each warp
//! stages its *segment* of the tile (32 runs) in its own region of shared memory:
//!
//! - global ↔ shared in *striped* order: lane `l` moves 16-byte vectors `l`, `l + 32`,
//!   `l + 64`, ... of the segment, so each instruction of the warp covers 512 contiguous
//!   bytes; stores are `st.global.v4.b32`. Loads go through the coherent path (never the
//!   read-only cache: an in-place scan writes the elements it read): on sm_80+ and the
//!   emulator as `cp.async.cg.shared.global` of 16 bytes each, global to shared with no
//!   register in between, all of a lane's in flight before one `cp.async.wait_all`; on
//!   sm_70 as `ld.global.v4.b32` into registers, up to 8 of a lane's issued before they
//!   are stored to shared memory (4 registers per vector in flight);
//! - shared ↔ registers in blocked order: lane `l` moves its own run's vectors;
//! - a `bar.warp.sync` between the two, since lanes exchange data.
//!
//! The vectors of a run sit in shared memory in a rotated order (`vector_slot`: with
//! four vectors per run, vector `k` of lane `l`'s run at position `k ^ ((l >> 1) & 3)`),
//! so that the 8 lanes of each phase of a blocked 16-byte access hit 8 different groups of
//! four banks: conflict-free both ways.
//!
//! Types whose size does not divide 16 move one element at a time (striped, with a bound
//! check), through the same staging; so does, in the tile that ends past the input, the
//! one vector of a lane that crosses the end (the vectors before it move whole, those
//! after it are filled).
//!
//! Because the staging holds the tile, a thread never holds its whole run in registers:
//! it reads it a vector at a time when it needs it ([`Stage::visit_run`],
//! [`Stage::update_run`]), before and after the block looks back.

use core::mem::size_of;

use bytemuck::{Pod, Zeroable};

use crate::arch::{self, FULL_MASK, WARP_SIZE};
use crate::shared::{self, SharedSlice};
use crate::thread;
use crate::warp as raw;

/// The width of one vector access.
pub(crate) const VECTOR_BYTES: usize = 16;

/// Elements of `T` in one [`Vector`] (`T`'s size divides 16).
pub(crate) const fn vector_elements<T>() -> usize {
    VECTOR_BYTES / size_of::<T>()
}

/// The most vectors a run may hold (256 bytes).
const MAX_VECTORS_PER_RUN: usize = 16;

/// The most vectors a lane holds in registers at once when a segment moves through
/// registers (32 registers): a longer run moves in batches of this many.
const VECTORS_IN_REGISTERS: usize = 8;

/// Elements of `T` in a run of `run_bytes` bytes (at least one): with 64 bytes, 16 `f32`s
/// or 8 `f64`s.
pub const fn items_per_thread<T>(run_bytes: usize) -> usize {
    let size = size_of::<T>();
    if size == 0 || size >= run_bytes {
        1
    } else {
        run_bytes / size
    }
}

/// Elements of `T` one tile covers with `threads` per block and runs of `run_bytes`.
pub const fn tile_elements<T>(run_bytes: usize, threads: u32) -> u64 {
    threads as u64 * items_per_thread::<T>(run_bytes) as u64
}

/// Bytes of shared memory the staging of a tile of `T` takes with `threads` per block and
/// runs of `run_bytes`.
pub const fn staging_bytes<T>(run_bytes: usize, threads: u32) -> usize {
    tile_elements::<T>(run_bytes, threads) as usize * size_of::<T>()
}

/// Whether runs of `ITEMS` elements of `T` move as 16-byte vectors: `T`'s size divides
/// 16 and a run is a whole number of vectors, a power of two of them (the rotation of
/// [`vector_slot`] permutes a run's vectors only then), at most [`MAX_VECTORS_PER_RUN`].
const fn moves_as_vectors<T, const ITEMS: usize>() -> bool {
    let size = size_of::<T>();
    size > 0
        && VECTOR_BYTES.is_multiple_of(size)
        && (ITEMS * size).is_multiple_of(VECTOR_BYTES)
        && (ITEMS * size / VECTOR_BYTES).is_power_of_two()
        && ITEMS * size <= MAX_VECTORS_PER_RUN * VECTOR_BYTES
}

/// Vectors in a run of `ITEMS` elements of `T` (0 when they do not move as vectors).
const fn vectors_per_run<T, const ITEMS: usize>() -> usize {
    if moves_as_vectors::<T, ITEMS>() {
        ITEMS * size_of::<T>() / VECTOR_BYTES
    } else {
        0
    }
}

/// One 16-byte vector, aligned so that it moves with one `ld.v4`/`st.v4`.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(16))]
pub(crate) struct Vector(pub(crate) [u32; 4]);

impl Vector {
    /// Element `k` of the vector read as `T`s (`T`'s size divides 16).
    #[inline(always)]
    pub(crate) fn element<T: Pod>(&self, k: usize) -> T {
        let size = size_of::<T>();
        bytemuck::pod_read_unaligned(&bytemuck::bytes_of(self)[k * size..(k + 1) * size])
    }

    /// Sets element `k` of the vector read as `T`s.
    #[inline(always)]
    pub(crate) fn set_element<T: Pod>(&mut self, k: usize, value: T) {
        let size = size_of::<T>();
        bytemuck::bytes_of_mut(self)[k * size..(k + 1) * size].copy_from_slice(bytemuck::bytes_of(&value));
    }
}

/// Where vector `k` of lane `lane`'s run of `vectors` vectors sits in the segment's
/// staging (module docs): the run's vectors rotated by the lane's position among the 8
/// lanes of a phase, counted in runs per 128 bytes, so that those 8 lanes reading their
/// `k`-th vectors hit 8 different groups of four banks.
#[inline(always)]
fn vector_slot(vectors: usize, lane: u32, k: usize) -> usize {
    lane as usize * vectors + (k ^ rotation(vectors, lane as usize))
}

/// The rotation of run `run`'s `vectors` vectors ([`vector_slot`]): vector `k` of the run
/// sits at `k ^ rotation` of it (`vectors` a power of two, so this permutes the run).
#[inline(always)]
fn rotation(vectors: usize, run: usize) -> usize {
    let lanes_per_row = if vectors >= 8 { 1 } else { 8 / vectors };
    (run / lanes_per_row) % vectors
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
                WARP_SIZE as usize * vectors_per_run::<T, ITEMS>(),
            ),
        }
    }

    /// Element `32 * step + lane` of the warp's segment (a *striped* read: the lanes of a
    /// step read 32 consecutive elements, which lie in 32 consecutive banks whatever the
    /// rotation of the vectors, since a run's vectors stay inside the run).
    ///
    /// The index arithmetic is 32-bit (an index inside a segment is below `32 * ITEMS`,
    /// which the staging in shared memory bounds), and with a constant `step` (an unrolled
    /// loop) all of it but one `xor` with the lane folds into constants: the element sits
    /// at `run * ITEMS + (within ^ rotation * per_vector)` of the staging, for `run` and
    /// `within` the element's run and place in it, since runs and vectors hold powers of
    /// two of elements (a run moves as vectors only then).
    ///
    /// # Safety
    /// `step < ITEMS`; the segment was staged by [`load`] (or written by the warp's lanes)
    /// before a `bar.warp.sync` that precedes this, and not rewritten since.
    #[inline(always)]
    pub unsafe fn read_striped<const ITEMS: usize>(&self, step: usize) -> T {
        // Below 32 * ITEMS (contract: step < ITEMS), the staging's length.
        let e = step as u32 * WARP_SIZE + thread::lane_id();
        let vectors = vectors_per_run::<T, ITEMS>();
        // (The run's first element, the place in the run.)
        let (first, within) = if vectors > 0 {
            let per_vector = vector_elements::<T>() as u32;
            let (run, within) = (e / ITEMS as u32, e % ITEMS as u32);
            // Vector `within / per_vector` of the run is at `(within / per_vector) ^
            // rotation`; both powers of two, so that is `within ^ rotation * per_vector`
            // in elements, the element's place in its vector kept.
            let rotation = rotation(vectors, run as usize) as u32;
            (run * ITEMS as u32, within ^ (rotation * per_vector))
        } else {
            (0, e)
        };
        // SAFETY: first + within < 32 * ITEMS, the slot of element e of the segment (the
        // rotation permutes the run's vectors); ordered after its writer by the caller's
        // warp barrier. (Two additions, so that a constant `first` folds into the
        // address.)
        unsafe { self.elements.read_unchecked(first as usize + within as usize) }
    }

    /// Passes the calling lane's run, in order, to `visit`, one 16-byte vector at a time
    /// (so only a few elements are in registers at once).
    ///
    /// # Safety
    /// Called by the lanes of a full warp after a `bar.warp.sync` that follows the writes
    /// of the run, and before any other lane rewrites it.
    #[inline(always)]
    pub unsafe fn visit_run<const ITEMS: usize>(&self, mut visit: impl FnMut(T)) {
        // SAFETY: forwarded; the run is rewritten with the same values.
        unsafe {
            self.access_run::<ITEMS, false>(|x| {
                visit(x);
                x
            })
        }
    }

    /// Replaces each element of the calling lane's run, in order, by `update` of it.
    ///
    /// # Safety
    /// As for [`Stage::visit_run`]; no other lane reads this lane's run until a
    /// `bar.warp.sync` after this.
    #[inline(always)]
    pub unsafe fn update_run<const ITEMS: usize>(&self, update: impl FnMut(T) -> T) {
        // SAFETY: forwarded.
        unsafe { self.access_run::<ITEMS, true>(update) }
    }

    /// The run, a vector (or an element) at a time; writes the results back when `WRITE`.
    ///
    /// # Safety
    /// As for [`Stage::update_run`] when `WRITE`, else [`Stage::visit_run`].
    #[inline(always)]
    unsafe fn access_run<const ITEMS: usize, const WRITE: bool>(&self, mut update: impl FnMut(T) -> T) {
        let lane = thread::lane_id();
        let vectors = vectors_per_run::<T, ITEMS>();
        if vectors > 0 {
            for k in 0..vectors {
                let slot = vector_slot(vectors, lane, k);
                // SAFETY: the lane's own slot, in bounds (32 runs of `vectors` vectors);
                // ordered after its writer by the caller's warp barrier.
                let mut vector = unsafe { self.vectors.read_unchecked(slot) };
                for i in 0..vector_elements::<T>() {
                    let new = update(vector.element(i));
                    if WRITE {
                        vector.set_element(i, new);
                    }
                }
                if WRITE {
                    // SAFETY: as above; no other lane touches this slot (contract).
                    unsafe { self.vectors.write_unchecked(slot, vector) };
                }
            }
        } else {
            for i in 0..ITEMS {
                let index = lane as usize * ITEMS + i;
                // SAFETY: as above, element by element.
                let new = update(unsafe { self.elements.read_unchecked(index) });
                if WRITE {
                    // SAFETY: as above.
                    unsafe { self.elements.write_unchecked(index, new) };
                }
            }
        }
    }
}

/// Loads the calling warp's segment `first .. first + 32 * ITEMS` of `data[..len]`
/// (elements past `len` are `fill`) into its staging, ending with a warp barrier: then each
/// lane may read its run ([`Stage::visit_run`]).
///
/// On sm_80+ (and the emulator) the vectors of a whole segment move with `cp.async`,
/// global to shared with no register between; on sm_70 through registers, 8 vectors at
/// a time. Measured on an H100 (2026-11-26): a selection is faster with it (`f64`
/// select-if at 2^28: 1699 µs against 1868); a scan's 256-byte runs would need 64
/// registers for its vectors in flight through registers (with 128-byte runs in blocks
/// of 256 threads `cp.async` had made scans slower: 66 registers instead of 64, 3 blocks
/// per SM instead of 4; `super::device::BLOCK_THREADS` has the numbers since).
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
) {
    let lane = thread::lane_id() as usize;
    let vectors = vectors_per_run::<T, ITEMS>();
    let whole = first + (WARP_SIZE as usize * ITEMS) as u64 <= len;
    if vectors > 0 {
        let per_vector = vector_elements::<T>();
        let aligned = (data as usize).is_multiple_of(VECTOR_BYTES);
        let slot = |g: usize| vector_slot(vectors, (g / vectors) as u32, g % vectors);
        // Vector g lies wholly inside `data[..len]` (always, in a whole segment).
        let inside = |g: usize| whole || first + ((g + 1) * per_vector) as u64 <= len;
        let async_copy = cfg!(any(target_feature = "sm_80", not(target_arch = "nvptx64")));
        if aligned && async_copy {
            // sm_80+ (and the emulator): each vector inside the input straight from global
            // to shared memory with `cp.async`, no register holding it; all in flight
            // together, then one wait before the warp barrier below makes them visible to
            // the other lanes.
            #[cfg(any(target_feature = "sm_80", not(target_arch = "nvptx64")))]
            {
                let copy = |g: usize| {
                    // SAFETY: the destination is slot(g) of the warp's staging: in bounds
                    // (32 runs of `vectors` vectors), 16-byte aligned (the staging is, and
                    // slots are 16 bytes), written by this lane only and read by others
                    // after the wait and the warp barrier below. The source is vector g of
                    // the segment, inside `data[..len]` (callers below), 16-byte aligned
                    // (the base is, and a segment is a whole number of vectors); only this
                    // warp touches the segment, and nothing writes it during the call.
                    unsafe {
                        arch::copy_async_16(
                            stage.vectors.as_mut_ptr().add(slot(g)).cast(),
                            data.add(first as usize + g * per_vector).cast(),
                        )
                    }
                };
                // A whole segment in one unrolled sequence; a partial one vector by vector.
                if whole {
                    for v in 0..vectors {
                        copy(v * WARP_SIZE as usize + lane);
                    }
                } else {
                    for v in 0..vectors {
                        let g = v * WARP_SIZE as usize + lane;
                        if inside(g) {
                            copy(g);
                        }
                    }
                }
                arch::copy_async_wait_all();
            }
        } else if aligned {
            // sm_70: through registers, in batches of up to 8 vectors: a batch's loads
            // first (in flight together), then its stores to shared memory. (Short loop
            // bodies with constant bounds: unrolled, the array in registers.)
            let mut loaded = [[0u32; 4]; VECTORS_IN_REGISTERS];
            for batch in (0..vectors).step_by(VECTORS_IN_REGISTERS) {
                let count = (vectors - batch).min(VECTORS_IN_REGISTERS);
                #[allow(clippy::needless_range_loop)]
                for v in 0..count {
                    let g = (batch + v) * WARP_SIZE as usize + lane;
                    if inside(g) {
                        // SAFETY: vector g of the segment: inside `data[..len]`, 16-byte
                        // aligned (the base is, and a segment is a whole number of
                        // vectors); only this warp touches the segment.
                        loaded[v] =
                            unsafe { arch::load_global_16(data.add(first as usize + g * per_vector).cast()) };
                    }
                }
                #[allow(clippy::needless_range_loop)]
                for v in 0..count {
                    let g = (batch + v) * WARP_SIZE as usize + lane;
                    if inside(g) {
                        // SAFETY: in bounds (32 runs of `vectors` vectors); each slot is
                        // written by one lane, and read after the warp barrier below.
                        unsafe { stage.vectors.write_unchecked(slot(g), Vector(loaded[v])) };
                    }
                }
            }
        }
        if !(whole && aligned) {
            // The vectors not moved above (the one that crosses the end of the input, those
            // past it, or all of a misaligned segment): element by element, `fill` past
            // the end.
            for v in 0..vectors {
                let g = v * WARP_SIZE as usize + lane;
                if aligned && inside(g) {
                    continue;
                }
                let mut vector = Vector([0; 4]);
                for k in 0..per_vector {
                    let index = first + (g * per_vector + k) as u64;
                    // SAFETY: index < len.
                    let value = if index < len { unsafe { data.add(index as usize).read() } } else { fill };
                    vector.set_element(k, value);
                }
                // SAFETY: in bounds (32 runs of `vectors` vectors); one writer per slot,
                // read after the warp barrier below.
                unsafe { stage.vectors.write_unchecked(slot(g), vector) };
            }
        }
    } else {
        for i in 0..ITEMS {
            let e = i * WARP_SIZE as usize + lane;
            let index = first + e as u64;
            // SAFETY: index < len.
            let value = if index < len { unsafe { data.add(index as usize).read() } } else { fill };
            // SAFETY: in bounds (one slot per element of the segment); one writer per
            // slot, read after the warp barrier below.
            unsafe { stage.elements.write_unchecked(e, value) };
        }
    }
    // SAFETY: the whole warp is here (contract).
    unsafe { raw::sync_warp(FULL_MASK) };
}

/// Writes the calling warp's staged segment (every lane's run, as [`Stage::update_run`]
/// left it) to `first .. first + 32 * ITEMS` of `data`, dropping elements at or past
/// `len`.
///
/// # Safety
/// - Called by every lane of a full warp, each with the same `first`, after it has
///   finished with its run; `stage` is the warp's.
/// - `data` is valid for writes of `len` elements, aligned for `T`, and no other thread
///   accesses the segment during the call.
#[inline(always)]
pub unsafe fn store<T: Pod, const ITEMS: usize>(data: *mut T, first: u64, len: u64, stage: Stage<T>) {
    let lane = thread::lane_id() as usize;
    // Every lane's run is written before any lane reads another's.
    // SAFETY: the whole warp is here (contract).
    unsafe { raw::sync_warp(FULL_MASK) };
    let vectors = vectors_per_run::<T, ITEMS>();
    if vectors > 0 {
        let per_vector = vector_elements::<T>();
        let whole = first + (WARP_SIZE as usize * ITEMS) as u64 <= len;
        let aligned = (data as usize).is_multiple_of(VECTOR_BYTES);
        // Vector g lies wholly inside `data[..len]` (always, in a whole segment).
        let inside = |g: usize| whole || first + ((g + 1) * per_vector) as u64 <= len;
        let slot = |g: usize| vector_slot(vectors, (g / vectors) as u32, g % vectors);
        if whole && aligned {
            // In batches of up to 8 vectors: a batch's reads from shared memory, then its
            // stores. (Constant bounds: unrolled, the array in registers.)
            let mut staged = [[0u32; 4]; VECTORS_IN_REGISTERS];
            for batch in (0..vectors).step_by(VECTORS_IN_REGISTERS) {
                let count = (vectors - batch).min(VECTORS_IN_REGISTERS);
                #[allow(clippy::needless_range_loop)]
                for v in 0..count {
                    // SAFETY: written before the warp barrier; in bounds.
                    staged[v] = unsafe {
                        stage.vectors.read_unchecked(slot((batch + v) * WARP_SIZE as usize + lane))
                    }
                    .0;
                }
                #[allow(clippy::needless_range_loop)]
                for v in 0..count {
                    let g = (batch + v) * WARP_SIZE as usize + lane;
                    // SAFETY: vector g of the segment: in bounds and aligned, as in `load`;
                    // only this warp touches the segment.
                    unsafe {
                        arch::store_global_16(data.add(first as usize + g * per_vector).cast(), staged[v])
                    };
                }
            }
        } else {
            for v in 0..vectors {
                let g = v * WARP_SIZE as usize + lane;
                // SAFETY: written before the warp barrier; in bounds.
                let vector = unsafe { stage.vectors.read_unchecked(slot(g)) };
                if aligned && inside(g) {
                    // SAFETY: vector g of the segment: inside `data[..len]` and aligned, as
                    // in `load`; only this warp touches the segment.
                    unsafe {
                        arch::store_global_16(data.add(first as usize + g * per_vector).cast(), vector.0)
                    };
                } else {
                    // The vector that crosses the end of the input (or a misaligned
                    // segment's): element by element, dropping those past the end.
                    for k in 0..per_vector {
                        let index = first + (g * per_vector + k) as u64;
                        if index < len {
                            // SAFETY: index < len.
                            unsafe { data.add(index as usize).write(vector.element(k)) };
                        }
                    }
                }
            }
        }
    } else {
        for i in 0..ITEMS {
            let e = i * WARP_SIZE as usize + lane;
            let index = first + e as u64;
            if index < len {
                // SAFETY: written before the warp barrier; in bounds.
                let value = unsafe { stage.elements.read_unchecked(e) };
                // SAFETY: index < len.
                unsafe { data.add(index as usize).write(value) };
            }
        }
    }
}
