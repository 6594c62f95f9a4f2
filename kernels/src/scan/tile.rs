//! How a block's threads read and write their tile: each thread owns `ITEMS`
//! consecutive elements (a *blocked* arrangement: thread `r` of the block holds elements
//! `r * ITEMS .. (r + 1) * ITEMS` of the tile), so its part of a scan is a plain loop in
//! registers and only one value per thread takes part in the block-wide scan.
//!
//! A thread's run of `ITEMS * size_of::<T>()` bytes (64 by default, [`items_per_thread`])
//! is moved as 16-byte vectors when the run is a whole number of them and the buffer is
//! 16-byte aligned; the loads are ordinary coherent `ld.v4`, not the read-only cache,
//! because an in-place scan writes the elements it read. Elements past the end of the
//! input (the last tile) are read one at a time with a bound check.

use core::mem::size_of;

use bytemuck::Pod;

/// Bytes each thread loads per tile.
const BYTES_PER_THREAD: usize = 64;

/// The width of one vector access.
const VECTOR_BYTES: usize = 16;

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

/// One 16-byte vector, aligned so that it moves with one `ld.v4`/`st.v4`.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Vector([u8; VECTOR_BYTES]);

/// Whether a run of `ITEMS` elements of `T` at `address` moves as whole vectors.
#[inline(always)]
fn moves_as_vectors<T, const ITEMS: usize>(address: usize) -> bool {
    let size = size_of::<T>();
    size > 0
        && VECTOR_BYTES.is_multiple_of(size)
        && (ITEMS * size).is_multiple_of(VECTOR_BYTES)
        && address.is_multiple_of(VECTOR_BYTES)
}

/// The calling thread's `ITEMS` elements `first .. first + ITEMS` of `data[..len]`;
/// those at or past `len` are `fill`.
///
/// # Safety
/// `data` is valid for reads of `len` elements, aligned for `T`, and not written by
/// another thread during the call.
#[inline(always)]
pub unsafe fn load<T: Pod, const ITEMS: usize>(data: *const T, first: u64, len: u64, fill: T) -> [T; ITEMS] {
    let mut items = [fill; ITEMS];
    if first + ITEMS as u64 <= len && moves_as_vectors::<T, ITEMS>(data as usize) {
        let per_vector = VECTOR_BYTES / size_of::<T>();
        // SAFETY: first + ITEMS <= len.
        let run = unsafe { data.add(first as usize) }.cast::<Vector>();
        for v in 0..ITEMS / per_vector {
            // SAFETY: vector `v` lies inside the run; the run starts 16-byte aligned (the
            // base is, and ITEMS * size is a multiple of 16).
            let vector = unsafe { run.add(v).read() };
            for k in 0..per_vector {
                let size = size_of::<T>();
                items[v * per_vector + k] = bytemuck::pod_read_unaligned(&vector.0[k * size..(k + 1) * size]);
            }
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

/// Writes the calling thread's `items` to `data[first .. first + ITEMS]`, dropping those
/// at or past `len`.
///
/// # Safety
/// `data` is valid for writes of `len` elements, aligned for `T`, and no other thread
/// accesses `first .. first + ITEMS` during the call.
#[inline(always)]
pub unsafe fn store<T: Pod, const ITEMS: usize>(data: *mut T, first: u64, len: u64, items: &[T; ITEMS]) {
    if first + ITEMS as u64 <= len && moves_as_vectors::<T, ITEMS>(data as usize) {
        let per_vector = VECTOR_BYTES / size_of::<T>();
        // SAFETY: first + ITEMS <= len.
        let run = unsafe { data.add(first as usize) }.cast::<Vector>();
        for v in 0..ITEMS / per_vector {
            let mut vector = Vector([0; VECTOR_BYTES]);
            for k in 0..per_vector {
                let size = size_of::<T>();
                vector.0[k * size..(k + 1) * size]
                    .copy_from_slice(bytemuck::bytes_of(&items[v * per_vector + k]));
            }
            // SAFETY: as for `load`.
            unsafe { run.add(v).write(vector) };
        }
    } else {
        for (i, item) in items.iter().enumerate() {
            let index = first + i as u64;
            if index < len {
                // SAFETY: index < len.
                unsafe { data.add(index as usize).write(*item) };
            }
        }
    }
}
