//! The device-wide scan kernel: one launch, one tile per block, decoupled look-back
//! ([`super::lookback`]) between the tiles.
//!
//! Per block: take a tile ([`lookback::take_tile`]); each warp stages its segment and
//! each thread gets its run of `ITEMS` elements ([`tile::load`]); fold the run in order;
//! get the thread's device-wide exclusive prefix from [`lookback::block_prefix`] (which
//! publishes the tile's aggregate and looks back); read the run again from the staging,
//! rescan it from that prefix and write it ([`tile::store`]).
//!
//! Each element is read once and written once, and the input may be the output (an
//! in-place scan): a warp reads its segment before it writes it, and no other warp
//! touches it.

use core::mem::size_of;

use bytemuck::Pod;

use super::lookback::{self, TileStatus};
use super::tile::{self, Stage};
use crate::arch::WARP_SIZE;
use crate::op::Operator;
use crate::thread;

/// The block size the host launches scans with by default (any multiple of 32 up to 512
/// whose tile fits the shared memory the device gives a block works): 128 threads of
/// 256-byte runs, a tile of 32 KiB, which needs no opt-in to more than 48 KiB of dynamic
/// shared memory on any GPU.
///
/// What limits a large scan is how many tiles each SM holds while their blocks wait for
/// the look-back (a block keeps its tile staged in shared memory until it knows its
/// prefix). Tiles of 128 threads with 256-byte runs let 6 blocks share an SM's 228 KiB
/// (192 KiB of tiles; up to 85 registers, and the kernels use 66 to 76 on sm_90, let 6
/// blocks of 4 warps fit the register file too), where 256 threads of 128-byte runs held
/// 4 blocks (128 KiB; 64 registers). Measured on an H100, 2026-11-26, sums at 2^28:
/// `f32` 884 µs against 932, `f64` 1705 against 1804;
/// 160 threads (5 blocks of 40 KiB): 911 and 1690; 96: 899 and 1773; 64: 913 and 1829.
/// Small inputs lose a little (2^16 `f32`: 5.80 µs against 5.36): a thread folds twice
/// as many elements.
pub const BLOCK_THREADS: u32 = 128;

/// The block size the host launches large scans with ([`large_tiles_from_bytes`]) where a
/// multiprocessor holds three such tiles (an sm_90's 228 KiB of shared memory): 256
/// threads of 256-byte runs, a tile of 64 KiB, for which the kernel opts in to more than
/// 48 KiB of dynamic shared memory (the host does it before the launch). Three blocks of
/// 64 KiB stage as much per SM as six of 32 KiB (192 KiB) with half the look-backs per
/// byte, and 256 threads at up to 85 registers still fit three blocks in the register
/// file. Measured on an H200 (2026-11-28, one command, CUB in the same run): `f64`
/// inclusive sums at 2^24 / 2^26 / 2^28 90.3 / 325.9 / 1257.8 µs against 92.5 / 337.1 /
/// 1317.0 with 128 threads (192: 91.4 / 329.8 / 1278.3).
pub const LARGE_BLOCK_THREADS: u32 = 256;

/// The fewest input bytes a scan of `T` takes [`LARGE_BLOCK_THREADS`] for: 128 MiB of
/// 8-byte or larger elements, 256 MiB of smaller ones. Fewer, longer tiles lose on
/// smaller inputs, where too few tiles run at once (H200, 2026-11-28, µs with 256 threads
/// against 128: `f64` sums 7.2 against 5.3 at 2^12, 32.3 against 31.5 at 2^22, 52.5
/// against 51.5 at 2^23, 90.7 against 93.2 at 2^24, 167.5 against 172.7 at 2^25; `f32`
/// sums 52.8 against 51.6 at 2^24, the same at 2^26, 637 against 658 at 2^28).
pub const fn large_tiles_from_bytes<T>() -> usize {
    if size_of::<T>() >= 8 {
        128 << 20
    } else {
        256 << 20
    }
}

/// Bytes of a thread's run in a scan: 256 (64 `f32`s), staged with `cp.async` on sm_80+
/// (no register holds a vector on its way to shared memory, so a run's length costs no
/// registers). Earlier measurements on an H100 for `f32` sums at 2^28: 64-byte runs
/// 1135 µs, 128-byte runs 933 µs (fewer look-backs per byte), 256-byte runs with blocks
/// of 128 threads 884 µs ([`BLOCK_THREADS`]).
pub const RUN_BYTES: usize = 256;

/// Elements each thread of a scan over `T` holds.
pub const fn items_per_thread<T>() -> usize {
    tile::items_per_thread::<T>(RUN_BYTES)
}

/// Elements one tile of a scan over `T` covers with `threads` per block.
pub const fn tile_elements<T>(threads: u32) -> u64 {
    tile::tile_elements::<T>(RUN_BYTES, threads)
}

/// Bytes of dynamic shared memory a scan over `T` needs with `threads` per block: the
/// look-back's, then the tile's staging.
pub const fn shared_bytes<T>(threads: u32) -> usize {
    lookback::prefix_bytes::<T>() + tile::staging_bytes::<T>(RUN_BYTES, threads)
}

/// Where the calling warp's segment of tile `tile` starts, for tiles of `ITEMS` per thread.
#[inline(always)]
pub(super) fn segment_start<const ITEMS: usize>(tile: u64) -> u64 {
    let tile_len = thread::block_threads() as u64 * ITEMS as u64;
    tile * tile_len + thread::warp_idx() as u64 * (WARP_SIZE as u64 * ITEMS as u64)
}

/// Inclusive (`exclusive == false`) or exclusive scan of `input[..len]` into
/// `output[..len]` with `op`, in element order; for the exclusive scan `output[0]` is the
/// identity. `ITEMS` must be [`items_per_thread`]`::<T>()` (the host sizes the grid by
/// it).
///
/// # Safety
/// - Launched with `ceil(len / (threads * ITEMS))` blocks (at least 1, at most 2^32) of a
///   multiple of 32 threads, at most 512, and [`shared_bytes`]`::<T>(threads)` bytes of
///   dynamic shared memory; every thread runs this once.
/// - `input` is valid for reads and `output` for writes of `len` elements, aligned for
///   `T`; they are the same buffer or do not overlap; nothing else accesses them during
///   the launch.
/// - `status` is as [`TileStatus`] and [`lookback::TaggedStatus::new`] require, for that
///   many tiles; `counter` as for [`lookback::take_tile`].
#[inline(always)]
pub unsafe fn scan<T: Pod, Op: Operator<T>, S: TileStatus<T>, const ITEMS: usize>(
    input: *const T,
    output: *mut T,
    len: u64,
    status: S,
    counter: *mut u32,
    exclusive: bool,
    op: Op,
) {
    let (ticket, scratch) = lookback::scratch::<T>();
    let stage = Stage::<T>::of_warp::<ITEMS>(lookback::prefix_bytes::<T>());
    let tile_len = thread::block_threads() as u64 * ITEMS as u64;
    // SAFETY: forwarded from the caller: one block per tile, every thread here once.
    let tile = unsafe { lookback::take_tile(counter, len.div_ceil(tile_len), ticket) };
    let first = segment_start::<ITEMS>(tile);
    // SAFETY: every lane of the (full) warp, the warp's stage; the input holds `len`
    // elements and only this warp touches this segment.
    unsafe { tile::load::<T, ITEMS>(input, first, len, op.identity(), stage) };
    let mut total = op.identity();
    // SAFETY: the lane's own run, staged by `load` (which ends with a warp barrier).
    unsafe { stage.visit_run::<ITEMS>(|x| total = op.combine(total, x)) };
    // SAFETY: forwarded from the caller; every thread of the block is here.
    let (mut running, _) = unsafe { lookback::block_prefix(scratch, status, tile, total, op) };
    // The run again, from the staging (it was not held in registers during the look-back),
    // rescanned in place from the thread's prefix.
    // SAFETY: the lane's own run; other lanes read it only after `store`'s warp barrier.
    unsafe {
        stage.update_run::<ITEMS>(|x| {
            let next = op.combine(running, x);
            let out = if exclusive { running } else { next };
            running = next;
            out
        })
    };
    // SAFETY: every lane of the warp, its stage; the output holds `len` elements, only this
    // warp touches this segment, and the warp has finished reading it.
    unsafe { tile::store::<T, ITEMS>(output, first, len, stage) };
}
