//! The device-wide scan kernel: one launch of persistent blocks, each scanning tile after
//! tile in ticket order, with decoupled look-back ([`super::lookback`]) between the tiles
//! and the loads of a block's next tile in flight while it looks back.
//!
//! # Per block
//! Take a first tile ([`lookback::take_tile`]) and start loading it into the first of two
//! stagings ([`tile::load_begin`]). Then, for each tile:
//! - finish its load ([`tile::load_end`]); thread 0 asks for the block's next ticket
//!   ([`lookback::request_tile`]); each thread folds its run of `ITEMS` elements in order;
//! - [`lookback::block_prefix_overlapped`] publishes the tile's aggregate and gets each
//!   thread's device-wide exclusive prefix. While warp 0 looks back (and the other warps
//!   wait for it), every warp reads the next ticket and, if it is a tile, starts loading
//!   its segment of that tile into the *other* staging: on sm_80+ these are `cp.async`
//!   copies, so the loads of the next tile are in flight during the look-back instead of
//!   the block sitting idle on its staged tile;
//! - read the run again from the staging, rescan it from the prefix and write it
//!   ([`tile::store`]);
//! - stop when the ticket is not a tile; otherwise the stagings swap roles.
//!
//! Each element is read once and written once, and the input may be the output (an
//! in-place scan): a warp reads its segment before it writes it, and no other warp
//! touches it. The tile length is that of the one-tile-per-block form (a function of the
//! element type and block size only) and every prefix is combined in the canonical order
//! of [`super::lookback`], so the results do not depend on the grid or on timing.
//!
//! # Tickets
//! Every block takes tickets from the counter until it gets one that is not a tile
//! (`>= tiles`), then exits: each of the `tiles` tiles is taken once, and each block takes
//! one ticket past them, `tiles + grid` tickets in all. The counter wraps at that count
//! (`atom.inc` with limit `tiles + grid - 1`), so it is 0 again when the launch ends.
//!
//! # Progress
//! A block holds at most two tiles: its *current* one and the *next* it is loading, which
//! it took after the current. Consider the smallest tile whose look-back has not
//! finished. It is some block's current tile (a block holding it as its next has a
//! smaller current tile, unfinished too), so that block is running its look-back, which
//! waits only for the aggregates of smaller tiles; those have all finished their
//! look-back and so published their aggregates. So it finishes, and by induction every
//! tile does. A tile is taken only by a running block, so this holds whatever the number
//! of resident blocks; the host launches at most one wave of them (as many as fit on the
//! device at once), so that none waits for a multiprocessor while holding no tile.
//!
//! # Shared memory
//! The look-back's ([`lookback::prefix_bytes`]), then [`STAGES`] stagings of a tile each:
//! 64 KiB and some with 256 threads and 128-byte runs, more than the 48 KiB a kernel gets
//! without opting in (the host opts in).

use core::mem::{size_of, swap};

use bytemuck::Pod;

use super::lookback::{self, TileStatus};
use super::tile::{self, Stage};
use crate::arch::WARP_SIZE;
use crate::op::Operator;
use crate::thread;

/// The block size the host launches scans and selections with (any multiple of 32 up to
/// 512 works).
pub const BLOCK_THREADS: u32 = 256;

/// Bytes of a thread's run in a scan: 128 (32 `f32`s). Half the look-backs per byte of
/// 64-byte runs, at 64 registers instead of 48; measured on an H100 for f32 sums at 2^28
/// elements: 933 µs, against 1135 µs with 64-byte runs (in an earlier build of the same
/// staging, one tile per block).
pub const RUN_BYTES: usize = 128;

/// Tile stagings a scan block has: the tile it scans and the next one, loading.
pub const STAGES: usize = 2;

/// Elements each thread of a scan over `T` holds.
pub const fn items_per_thread<T>() -> usize {
    tile::items_per_thread::<T>(RUN_BYTES)
}

/// Elements one tile of a scan over `T` covers with `threads` per block.
pub const fn tile_elements<T>(threads: u32) -> u64 {
    tile::tile_elements::<T>(RUN_BYTES, threads)
}

/// Bytes of dynamic shared memory a scan over `T` needs with `threads` per block: the
/// look-back's, then [`STAGES`] tile stagings.
pub const fn shared_bytes<T>(threads: u32) -> usize {
    lookback::prefix_bytes::<T>() + STAGES * tile::staging_bytes::<T>(RUN_BYTES, threads)
}

/// Where the calling warp's segment of tile `tile` starts, for tiles of `ITEMS` per thread.
#[inline(always)]
pub(super) fn segment_start<const ITEMS: usize>(tile: u64) -> u64 {
    let tile_len = thread::block_threads() as u64 * ITEMS as u64;
    tile * tile_len + thread::warp_idx() as u64 * (WARP_SIZE as u64 * ITEMS as u64)
}

/// Inclusive (`exclusive == false`) or exclusive scan of `input[..len]` into
/// `output[..len]` with `op`, in element order; for the exclusive scan `output[0]` is the
/// identity. `ITEMS` must be [`items_per_thread`]`::<T>()` (the host sizes the tiles by
/// it).
///
/// # Safety
/// - Launched with at least 1 block of a multiple of 32 threads, at most 512, and
///   [`shared_bytes`]`::<T>(threads)` bytes of dynamic shared memory, where
///   `tiles = max(1, ceil(len / (threads * ITEMS)))` and `tiles + blocks <= 2^32`; every
///   thread runs this once.
/// - `input` is valid for reads and `output` for writes of `len` elements, aligned for
///   `T`; they are the same buffer or do not overlap; nothing else accesses them during
///   the launch.
/// - `status` is as [`TileStatus`] and [`lookback::TaggedStatus::new`] require, for
///   `tiles` tiles; `counter` as for [`lookback::take_tile`].
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
    let (tickets, _) = lookback::scratch::<T>();
    let tile_len = thread::block_threads() as u64 * ITEMS as u64;
    let tiles = len.div_ceil(tile_len).max(1);
    // Tickets module docs: each tile once, and one past the tiles per block.
    let ticket_count = tiles + thread::grid_blocks() as u64;
    // SAFETY: every thread of the block is here; the launch takes `ticket_count` tickets
    // (module docs).
    let mut tile = unsafe { lookback::take_tile(counter, ticket_count, tickets) };
    if tile >= tiles {
        return;
    }
    let mut staging = lookback::prefix_bytes::<T>();
    let mut next_staging = staging + tile_len as usize * size_of::<T>();
    // SAFETY: every lane of the (full) warp, the warp's stage, unused yet; the input holds
    // `len` elements and only this warp touches this segment.
    unsafe {
        tile::load_begin::<T, ITEMS>(
            input,
            segment_start::<ITEMS>(tile),
            len,
            Stage::of_warp::<ITEMS>(staging),
        )
    };
    while tile < tiles {
        // SAFETY: forwarded from the caller; `tile` is this block's, loading into
        // `staging`, and `next_staging` holds no tile being read.
        tile = unsafe {
            scan_tile::<T, Op, S, ITEMS>(
                input,
                output,
                len,
                status,
                counter,
                exclusive,
                op,
                tile,
                ticket_count,
                [staging, next_staging],
            )
        };
        swap(&mut staging, &mut next_staging);
    }
}

/// [`scan`]'s work on one tile: `tile`, whose load into the staging at byte `stagings[0]`
/// of the dynamic shared memory has begun. Starts loading the block's next tile into the
/// staging at byte `stagings[1]` during the look-back, and returns it (`>= tiles` when
/// there is none).
///
/// Not inlined, so that the compiler computes each lane's addresses (16 vector slots and
/// offsets per run, 64-bit) where it uses them, tile after tile: inlined into the loop
/// over tiles, it hoisted them out of the loop and kept them all live across it (155
/// registers for an `f32` sum on sm_90 instead of about 60).
///
/// # Safety
/// As for [`scan`], called by every thread of the block, in turn for each of its tiles;
/// `ticket_count` is the launch's ticket count (module docs); the stagings are the two
/// (`staging_bytes`) after the look-back's scratch, the second holding no tile still read.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn scan_tile<T: Pod, Op: Operator<T>, S: TileStatus<T>, const ITEMS: usize>(
    input: *const T,
    output: *mut T,
    len: u64,
    status: S,
    counter: *mut u32,
    exclusive: bool,
    op: Op,
    tile: u64,
    ticket_count: u64,
    stagings: [usize; 2],
) -> u64 {
    let (tickets, scratch) = lookback::scratch::<T>();
    let tiles = len.div_ceil(thread::block_threads() as u64 * ITEMS as u64).max(1);
    let stage = Stage::<T>::of_warp::<ITEMS>(stagings[0]);
    let next_stage = Stage::<T>::of_warp::<ITEMS>(stagings[1]);
    let first = segment_start::<ITEMS>(tile);
    // SAFETY: completes the load begun into `stage` with the same arguments.
    unsafe { tile::load_end::<T, ITEMS>(input, first, len, op.identity(), stage) };
    // SAFETY: every thread of the block is here; every thread read the last requested
    // ticket in the previous tile's `block_prefix_overlapped`, whose closing barrier they
    // have all passed.
    unsafe { lookback::request_tile(counter, ticket_count, tickets) };
    let mut total = op.identity();
    // SAFETY: the lane's own run, staged by `load_end` (which ends with a warp barrier).
    unsafe { stage.visit_run::<ITEMS>(|x| total = op.combine(total, x)) };
    let mut next = tiles;
    let load_next = || {
        // SAFETY: requested above, read after the block barrier that
        // `block_prefix_overlapped` passes before calling this.
        next = unsafe { lookback::requested_tile(tickets) };
        if next < tiles {
            // SAFETY: every lane of the warp (the closure runs in every thread); `next_stage`
            // is the warp's, and its last tile was read out (stored) before the block
            // barriers of this tile's prefix; only this warp touches segment `next`, which no
            // block writes before this one has scanned it.
            unsafe { tile::load_begin::<T, ITEMS>(input, segment_start::<ITEMS>(next), len, next_stage) };
        }
    };
    // SAFETY: every thread of the block is here; every tile before `tile` was taken by a
    // running block of this launch (tickets are taken in order), which scans it;
    // `load_next` has no block barrier and leaves the look-back's scratch alone.
    let (mut running, _) =
        unsafe { lookback::block_prefix_overlapped(scratch, status, tile, total, op, load_next) };
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
    next
}
