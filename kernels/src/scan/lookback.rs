//! The inter-block protocol of a single-pass device-wide scan: decoupled look-back
//! (Merrill & Garland, 2016), arranged so that float results do not depend on timing.
//!
//! # Tiles and tickets
//! The input is cut into tiles of equal length, one per block. A block takes its tile
//! number from an atomic ticket counter ([`take_tile`]) when it starts, not from its block
//! index, so every tile before it was taken by a block that is already running: a block
//! only ever waits for blocks that run, whatever order the GPU (or the emulator) starts
//! blocks in. The counter is incremented with `atom.inc` whose limit is the last tile, so
//! it is back at 0 when the launch ends: no reset between launches.
//!
//! # What a tile publishes
//! Each tile has a status slot ([`TileStatus`]). Tile `t` first publishes its *aggregate*
//! `A(t)`, the combination of its elements. Tiles are grouped in aligned *windows* of 32;
//! the last tile of a window also publishes, once it knows it, its *inclusive prefix*
//! `E(w)`: the combination of every element up to the end of window `w`.
//!
//! # The canonical order of combination
//! For an operator that is not exactly associative (a float sum) the look-back must not
//! combine in an order that depends on which predecessors happen to have finished, or the
//! result would change from run to run. Every prefix is therefore defined by one fixed
//! expression, whichever tile computes it:
//! - `P_w(j)`: the inclusive scan of the aggregates of window `w` at lane `j`, by the warp
//!   scan [`warp::inclusive_scan_full`] (a fixed tree of shuffles);
//! - `E(-1)` = the identity, `E(w) = E(w - 1) ⊕ P_w(31)`;
//! - the exclusive prefix of tile `t = 32 w + j` is `E(w - 1) ⊕ P_w(j - 1)` (or `E(w - 1)`
//!   for `j = 0`).
//!
//! # The look-back
//! Warp 0 of tile `t = 32 w + j` reads, in one round of loads, the aggregates of the
//! tiles before it in its own window (lane `l < j` reads tile `32 w + l`) and the status
//! of window `w - 1` (lane `l` reads tile `32 (w - 1) + l`), polling each slot until it is
//! published. If the window's last tile has published `E(w - 1)`, that is the base. If not,
//! every tile of that window has published its aggregate, so the warp computes
//! `P_{w-1}(31)` by the same scan, keeps it, and goes one window further back; when it
//! finds a published `E(k)` (or reaches the first window) it combines the kept window
//! totals forward in order: `E(w - 1) = (E(k) ⊕ P_{k+1}(31)) ⊕ ... ⊕ P_{w-1}(31)`, exactly
//! the canonical expression. At most 32 window totals are kept (one per lane); a tile that
//! would need more waits for the window end it reached to publish instead (it will: that
//! tile's block is running and depends only on earlier tiles).
//!
//! So for a given input, element type, operator and tile length the result is the same
//! bits on every run, on every GPU and on the emulator. Operators need not commute: every
//! combination keeps the earlier elements on the left.
//!
//! # Status words and memory order
//! [`TaggedStatus`] stores a value of `T` as [`words_per_tile`]`::<T>()` 64-bit words, each
//! holding 32 bits of the value in its low half and a *tag* in its high half:
//! `epoch << 1 | inclusive`. Each word is written by one `st.relaxed.gpu.b64` and read by
//! one `ld.relaxed.gpu.b64`; aligned 64-bit accesses are single-copy atomic, so a reader
//! sees a word's tag and value bits from the same store. A reader accepts a value only when
//! every word carries the current launch's epoch and the same status, and each (tile,
//! status) pair is published exactly once per launch, so all the words it accepts come
//! from one publication: the value is exactly the one published. Nothing but the status
//! words themselves is communicated through them, so no release or acquire fence is
//! needed (and none is paid on the critical path); every access to them is a
//! device-scope atomic, so the PTX memory model (and the emulator's race check) sees no
//! data race. Words left by earlier launches carry an older epoch and read as
//! unpublished, which is what lets the same scratch serve launch after launch without
//! being cleared; the host gives every launch a new epoch and zeroes the scratch before
//! the epochs wrap ([`MAX_EPOCH`]).
//!
//! Reentrancy: two launches in flight at once must not share status words or a counter.

use core::mem::size_of;

use bytemuck::Pod;

use crate::arch::{FULL_MASK, WARP_SIZE};
use crate::atomic::{DeviceAtomicU32, DeviceAtomicU64, Relaxed};
use crate::barrier;
use crate::op::Operator;
use crate::reduce::warp;
use crate::shared::{self, SharedSlice};
use crate::thread;
use crate::warp as raw;

/// The largest epoch a launch may use: tags keep one bit for the status.
pub const MAX_EPOCH: u32 = u32::MAX >> 1;

/// Tiles per window: one per lane of the looking-back warp.
const WINDOW: u64 = WARP_SIZE as u64;

/// What a tile's status slot holds when read.
#[derive(Clone, Copy, Debug)]
pub enum Published<T> {
    /// Nothing of this launch yet.
    Nothing,
    /// The tile's aggregate.
    Aggregate(T),
    /// The inclusive prefix up to the end of the tile (published by the last tile of a
    /// window only).
    Inclusive(T),
}

/// Per-tile status slots: where tiles publish their aggregates and inclusive prefixes.
///
/// # Safety
/// An implementation guarantees that [`TileStatus::read`] of a tile returns
/// `Aggregate(v)` / `Inclusive(v)` only for a `v` that [`TileStatus::publish`] published
/// for that tile and status in the same launch, and that a published status is eventually
/// read. The look-back relies on nothing else: it passes no other memory between blocks.
/// ([`TaggedStatus`] is warpsafe's; the trait is public so that the emulator's tests can
/// plant broken protocols, such as a flag published before its value.)
pub unsafe trait TileStatus<T: Pod>: Copy {
    /// Publishes `value` as tile `tile`'s aggregate (`inclusive == false`) or inclusive
    /// prefix.
    ///
    /// # Safety
    /// `tile` is a tile of the launch; each (tile, status) is published once per launch,
    /// by one thread.
    unsafe fn publish(self, tile: u64, value: T, inclusive: bool);

    /// Reads tile `tile`'s status once, without waiting.
    ///
    /// # Safety
    /// `tile` is a tile of the launch.
    unsafe fn read(self, tile: u64) -> Published<T>;
}

/// 64-bit status words per tile that [`TaggedStatus`] uses for `T`: one per 32 bits of
/// `T` (at least one).
pub const fn words_per_tile<T>() -> usize {
    let words = size_of::<T>().div_ceil(4);
    if words == 0 {
        1
    } else {
        words
    }
}

/// warpsafe's status slots: every 32 bits of the value beside an epoch-and-status tag in
/// one 64-bit word (module docs).
#[derive(Clone, Copy, Debug)]
pub struct TaggedStatus {
    words: *mut u64,
    epoch: u32,
}

impl TaggedStatus {
    /// The slots at `words` for a launch with epoch `epoch`.
    ///
    /// # Safety
    /// - `words` holds [`words_per_tile`]`::<T>()` 8-byte aligned `u64`s of global memory
    ///   per tile of the launch, accessed only by this launch (atomically) while it runs;
    /// - `epoch` is in `1..=MAX_EPOCH` and no word holds a tag with this epoch written
    ///   before the launch (each launch a new epoch; zeroed words before the epochs wrap).
    #[inline(always)]
    pub unsafe fn new(words: *mut u64, epoch: u32) -> TaggedStatus {
        TaggedStatus { words, epoch }
    }

    /// The atomic view of word `w` of tile `tile`.
    #[inline(always)]
    fn word<T>(self, tile: u64, w: usize) -> &'static DeviceAtomicU64 {
        // SAFETY: `new`'s contract: the tile's words exist, are aligned, and are accessed
        // only atomically, by threads of this GPU, during the launch.
        unsafe { DeviceAtomicU64::from_ptr(self.words.add(tile as usize * words_per_tile::<T>() + w)) }
    }
}

// SAFETY: a value is accepted only when all its words carry the same tag of this epoch;
// each tag is written once per tile and launch, by single-copy-atomic 64-bit stores (see
// the module docs). No ordering of other memory is promised.
unsafe impl<T: Pod> TileStatus<T> for TaggedStatus {
    #[inline(always)]
    unsafe fn publish(self, tile: u64, value: T, inclusive: bool) {
        let tag = ((self.epoch << 1) | inclusive as u32) as u64;
        let bytes = bytemuck::bytes_of(&value);
        for w in 0..words_per_tile::<T>() {
            let mut word = [0u8; 4];
            let (start, end) = ((4 * w).min(bytes.len()), (4 * w + 4).min(bytes.len()));
            word[..end - start].copy_from_slice(&bytes[start..end]);
            self.word::<T>(tile, w).store(tag << 32 | u32::from_ne_bytes(word) as u64, Relaxed);
        }
    }

    #[inline(always)]
    unsafe fn read(self, tile: u64) -> Published<T> {
        let mut value = T::zeroed();
        let bytes = bytemuck::bytes_of_mut(&mut value);
        let mut first_tag = 0;
        let mut same = true;
        for w in 0..words_per_tile::<T>() {
            let word = self.word::<T>(tile, w).load(Relaxed);
            let tag = (word >> 32) as u32;
            if w == 0 {
                first_tag = tag;
            }
            same &= tag == first_tag;
            let (start, end) = ((4 * w).min(bytes.len()), (4 * w + 4).min(bytes.len()));
            bytes[start..end].copy_from_slice(&(word as u32).to_ne_bytes()[..end - start]);
        }
        match (same && first_tag >> 1 == self.epoch, first_tag & 1 == 1) {
            (false, _) => Published::Nothing,
            (true, false) => Published::Aggregate(value),
            (true, true) => Published::Inclusive(value),
        }
    }
}

/// Takes the calling block's tile number from the ticket counter and gives it to every
/// thread of the block: `atom.inc` with limit `tiles - 1` by thread 0, then a barrier.
///
/// # Safety
/// - Every thread of the block calls this once, first thing (it contains a block barrier),
///   and the launch has exactly `tiles` blocks, `1 <= tiles <= 2^32`.
/// - `counter` is a valid, 4-byte aligned global `u32` holding 0 when the launch starts,
///   used by no other launch while this one runs.
/// - `ticket` is one element of block-shared memory nothing else uses during the launch.
#[inline(always)]
pub unsafe fn take_tile(counter: *mut u32, tiles: u64, ticket: SharedSlice<u32>) -> u64 {
    if thread::linear_thread_idx() == 0 {
        // SAFETY: the counter is valid and accessed only atomically by this GPU (contract).
        let counter = unsafe { DeviceAtomicU32::from_ptr(counter) };
        let tile = counter.fetch_inc((tiles - 1) as u32, Relaxed);
        // SAFETY: thread 0 alone writes it; the others read it after the barrier.
        unsafe { ticket.write(0, tile) };
    }
    // SAFETY: every thread of the block calls this (contract).
    unsafe { barrier::sync() };
    // SAFETY: written before the barrier, never again.
    unsafe { ticket.read(0) as u64 }
}

/// Elements of `T` the block-shared scratch of [`block_prefix`] holds: 32 warp slots and
/// the tile's end.
pub const SCRATCH_LEN: usize = 33;

/// Slot of the tile's inclusive end in the scratch.
const TILE_END: usize = 32;

/// Bytes of dynamic shared memory a scan over `T` needs: the ticket, then the scratch
/// of [`block_prefix`] at byte 16.
pub const fn shared_bytes<T>() -> usize {
    16 + SCRATCH_LEN * size_of::<T>()
}

/// The ticket slot and the prefix scratch, carved from the launch's dynamic shared
/// memory (which must be at least [`shared_bytes`]`::<T>()`: a smaller window traps).
#[inline(always)]
#[track_caller]
pub fn scratch<T: Pod>() -> (SharedSlice<u32>, SharedSlice<T>) {
    (shared::dynamic_part::<u32>(0, 1), shared::dynamic_part::<T>(16, SCRATCH_LEN))
}

/// The block-wide, device-wide prefix: every thread of the block working on tile `tile`
/// passes the combination of its elements (`total`, threads in rank order = element
/// order), and gets back the combination of every element of the input before its own
/// (`.0`) and of every element up to the end of the tile (`.1`). Publishes the tile's
/// status on the way (module docs).
///
/// # Safety
/// - Every thread of the block calls this once, the block has a multiple of 32 threads,
///   at most 1024 (so warp 0 is full), and `scratch` is as [`scratch`] returns it, used by
///   nothing else.
/// - `status` and `tile` are as [`TileStatus`] requires; every tile before `tile` is taken
///   by a block of this launch that calls this too.
#[inline(always)]
pub unsafe fn block_prefix<T: Pod, Op: Operator<T>, S: TileStatus<T>>(
    scratch: SharedSlice<T>,
    status: S,
    tile: u64,
    total: T,
    op: Op,
) -> (T, T) {
    let lane = thread::lane_id();
    let warp_index = thread::warp_idx() as usize;
    let warps = thread::block_threads() / WARP_SIZE;
    // SAFETY: every warp is full and all its lanes are here (contract).
    let inclusive = unsafe { warp::inclusive_scan_full(total, op) };
    // SAFETY: as above.
    let below = unsafe { raw::shfl_up_sync(FULL_MASK, inclusive, 1, WARP_SIZE) };
    let exclusive = if lane == 0 { op.identity() } else { below };
    if lane == WARP_SIZE - 1 {
        // SAFETY: one writer per slot; read after the barrier below.
        unsafe { scratch.write(warp_index, inclusive) };
    }
    // SAFETY: every thread of the block gets here (contract).
    unsafe { barrier::sync() };
    if warp_index == 0 {
        let warp_total = if lane < warps {
            // SAFETY: written before the barrier.
            unsafe { scratch.read(lane as usize) }
        } else {
            op.identity()
        };
        // SAFETY: warp 0 is full and all of it is here.
        let warps_inclusive = unsafe { warp::inclusive_scan_full(warp_total, op) };
        // SAFETY: as above.
        let aggregate = unsafe { raw::shfl_idx_sync(FULL_MASK, warps_inclusive, WARP_SIZE - 1, WARP_SIZE) };
        // SAFETY: as above.
        let below = unsafe { raw::shfl_up_sync(FULL_MASK, warps_inclusive, 1, WARP_SIZE) };
        let warps_exclusive = if lane == 0 { op.identity() } else { below };
        // SAFETY: forwarded from the caller; all of warp 0 is here.
        let (tile_prefix, tile_end) = unsafe { look_back(status, tile, aggregate, op) };
        if lane < warps {
            // SAFETY: lane `l` alone rewrites slot `l`, which only it read above; the
            // other warps read it after the barrier below.
            unsafe { scratch.write(lane as usize, op.combine(tile_prefix, warps_exclusive)) };
        }
        if lane == 0 {
            // SAFETY: one writer; read after the barrier below.
            unsafe { scratch.write(TILE_END, tile_end) };
        }
    }
    // SAFETY: every thread of the block gets here (contract).
    unsafe { barrier::sync() };
    // SAFETY: written before the barrier, never again.
    let (warp_prefix, tile_end) = unsafe { (scratch.read(warp_index), scratch.read(TILE_END)) };
    (op.combine(warp_prefix, exclusive), tile_end)
}

/// Warp 0's part: publishes `aggregate` as tile `tile`'s, finds the tile's exclusive
/// prefix by looking back (module docs), publishes the window's inclusive prefix if the
/// tile ends a window, and returns (exclusive prefix, inclusive end of the tile) to every
/// lane.
///
/// # Safety
/// As for [`block_prefix`]; called by all 32 lanes of warp 0.
#[inline(always)]
unsafe fn look_back<T: Pod, Op: Operator<T>, S: TileStatus<T>>(
    status: S,
    tile: u64,
    aggregate: T,
    op: Op,
) -> (T, T) {
    let lane = thread::lane_id();
    let (window, position) = (tile / WINDOW, (tile % WINDOW) as u32);
    if lane == 0 {
        // SAFETY: this tile's aggregate, published once, by one thread.
        unsafe { status.publish(tile, aggregate, false) };
    }
    // One round of loads: the aggregates before this tile in its window (lanes below
    // `position`) and the previous window's statuses (every lane), polled until published.
    let mut own = op.identity();
    let mut earlier = Published::Inclusive(op.identity());
    let mut pending_own = lane < position;
    let mut pending_earlier = window > 0;
    while pending_own || pending_earlier {
        if pending_own {
            // SAFETY: an earlier tile of the launch.
            match unsafe { status.read(window * WINDOW + lane as u64) } {
                Published::Nothing => {}
                Published::Aggregate(v) | Published::Inclusive(v) => {
                    own = v;
                    pending_own = false;
                }
            }
        }
        if pending_earlier {
            // SAFETY: an earlier tile of the launch.
            earlier = unsafe { status.read((window - 1) * WINDOW + lane as u64) };
            pending_earlier = matches!(earlier, Published::Nothing);
        }
    }
    let own = if lane == position { aggregate } else { own };
    // SAFETY: all 32 lanes of warp 0 are here.
    let own_scan = unsafe { warp::inclusive_scan_full(own, op) };
    // SAFETY: as above.
    let before_me = unsafe { raw::shfl_idx_sync(FULL_MASK, own_scan, position.saturating_sub(1), WARP_SIZE) };
    // SAFETY: as above.
    let through_me = unsafe { raw::shfl_idx_sync(FULL_MASK, own_scan, position, WARP_SIZE) };
    // SAFETY: forwarded from the caller; all 32 lanes are here.
    let base = if window == 0 { op.identity() } else { unsafe { window_base(status, window, earlier, op) } };
    let prefix = if position == 0 { base } else { op.combine(base, before_me) };
    let end = op.combine(base, through_me);
    if position == WARP_SIZE - 1 && lane == 0 {
        // SAFETY: published once (the window's last tile), by one thread.
        unsafe { status.publish(tile, end, true) };
    }
    (prefix, end)
}

/// `E(window - 1)`, given what this lane read of window `window - 1` (module docs).
///
/// # Safety
/// As for [`look_back`]; `window > 0`; `first` is this lane's published status of tile
/// `(window - 1) * 32 + lane`.
#[inline(always)]
unsafe fn window_base<T: Pod, Op: Operator<T>, S: TileStatus<T>>(
    status: S,
    window: u64,
    first: Published<T>,
    op: Op,
) -> T {
    let lane = thread::lane_id();
    // Window totals passed on the way back, newest in lane 0.
    let mut kept = op.identity();
    let mut count = 0u32;
    let mut current = window - 1;
    let mut seen = first;
    let base = loop {
        // The window's last tile holds E(current) once it has published it.
        let (last_value, last_is_end) = match seen {
            Published::Inclusive(v) => (v, true),
            Published::Aggregate(v) => (v, false),
            Published::Nothing => (op.identity(), false),
        };
        // SAFETY: all 32 lanes are here.
        let end_found =
            unsafe { raw::shfl_idx_sync(FULL_MASK, last_is_end as u32, WARP_SIZE - 1, WARP_SIZE) };
        if end_found != 0 {
            // SAFETY: as above.
            break unsafe { raw::shfl_idx_sync(FULL_MASK, last_value, WARP_SIZE - 1, WARP_SIZE) };
        }
        if count < WARP_SIZE {
            // Every tile of the window has published its aggregate: its total by the
            // canonical scan.
            // SAFETY: as above.
            let scan = unsafe { warp::inclusive_scan_full(last_value, op) };
            // SAFETY: as above.
            let total = unsafe { raw::shfl_idx_sync(FULL_MASK, scan, WARP_SIZE - 1, WARP_SIZE) };
            if lane == count {
                kept = total;
            }
            count += 1;
            if current == 0 {
                break op.identity();
            }
            current -= 1;
            seen = Published::Nothing;
            while matches!(seen, Published::Nothing) {
                // SAFETY: an earlier tile of the launch.
                seen = unsafe { status.read(current * WINDOW + lane as u64) };
            }
        } else {
            // No room for another window total: wait for this window's end instead.
            let last = current * WINDOW + WINDOW - 1;
            seen = loop {
                // SAFETY: an earlier tile of the launch.
                if let Published::Inclusive(v) = unsafe { status.read(last) } {
                    break Published::Inclusive(v);
                }
            };
        }
    };
    // Combine the kept window totals forward: oldest (lane count - 1) first.
    let mut base = base;
    let mut k = count;
    while k > 0 {
        k -= 1;
        // SAFETY: all 32 lanes are here (the loop count is uniform).
        base = op.combine(base, unsafe { raw::shfl_idx_sync(FULL_MASK, kept, k, WARP_SIZE) });
    }
    base
}
