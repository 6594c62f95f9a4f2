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
//! Tiles are grouped in aligned *windows* of 32. Every window `w` has 34 status slots
//! ([`TileStatus`], [`Slot`], laid out by [`Slot::position`]), each written by exactly one tile:
//! - `A(t)`, the *aggregate* of tile `t` (the combination of its elements), published by
//!   tile `t` as soon as it is reduced;
//! - the window's *total* `T(w)`, published by its last tile once it has read the other 31
//!   aggregates (before its own look-back);
//! - the window's *base* `E(w - 1)` (the combination of every element before the window),
//!   published by its first tile once its look-back has found it.
//!
//! # The canonical order of combination
//! For an operator that is not exactly associative (a float sum) the look-back must not
//! combine in an order that depends on which predecessors happen to have finished, or the
//! result would change from run to run. Every prefix is therefore defined by one fixed
//! expression, whichever tile computes it:
//! - `P_w(j)`: the inclusive scan of the aggregates of window `w` at lane `j`, by the warp
//!   scan [`warp::inclusive_scan_full`] (a fixed tree of shuffles; lane `j`'s result
//!   depends only on lanes `0..=j`), and `T(w) = P_w(31)`;
//! - `E(-1)` = the identity, `E(w) = E(w - 1) ⊕ T(w)`;
//! - the exclusive prefix of tile `t = 32 w + j` is `E(w - 1) ⊕ P_w(j - 1)` (or `E(w - 1)`
//!   for `j = 0`).
//!
//! # The look-back
//! Warp 0 of tile `t = 32 w + j` issues one round of loads, all in flight together: the
//! aggregates of the tiles before it in its window (lane `l < j`), the aggregates of
//! window `w - 1` (lane `l`), the bases of windows `w - l` and the totals of windows
//! `w - 1 - l` (lane `l`: 32 windows, 1024 tiles, within one round trip). It polls only
//! for aggregates, which every running block publishes early, and computes `P_w(j)`. Then:
//! - if its window's base is published (its first tile has finished), that is `E(w - 1)`;
//! - otherwise it takes `T(w - 1)` (published, or the scan of window `w - 1`'s aggregates:
//!   the same bits), finds the newest window `w - l` whose base is published with every
//!   total between it and `w - 1` published too, and folds left to right:
//!   `E(w - 1) = ((E(w - l - 1) ⊕ T(w - l)) ⊕ ...) ⊕ T(w - 1)`, exactly the canonical
//!   expression;
//! - if there is none yet, it reads the bases and totals again (some tile of every earlier
//!   window is running and depends only on earlier tiles, so they arrive).
//!
//! For a given input, element type, operator and tile length the result is the same bits
//! on every run, on every GPU and on the emulator. Operators need not commute: every
//! combination keeps the earlier elements on the left.
//!
//! # Status words and memory order
//! [`TaggedStatus`] stores a value of `T` as one 64-bit word per 32 bits of `T`, each
//! holding 32 bits of the value in its low half and the launch's *epoch* in its high half
//! (the format of the partials of [`crate::reduce::grid::last_block`], written and read by
//! the same functions).
//! Each word is written by one `st.relaxed.gpu.b64` and read by one `ld.relaxed.gpu.b64`;
//! aligned 64-bit accesses are single-copy atomic, so a reader sees a word's epoch and
//! value bits from the same store. A reader accepts a value only when every word carries
//! the current launch's epoch, and each slot is written exactly once per launch, by one
//! thread, so all the words it accepts come from one publication: the value is exactly
//! the one published. Nothing but the status words themselves is communicated through
//! them, so no release or acquire fence is needed (and none is paid on the critical
//! path); every access to them is a device-scope atomic, so the PTX memory model (and the
//! emulator's race check) sees no data race. Words left by earlier launches carry an older
//! epoch and read as unpublished, which is what lets the same scratch serve launch after
//! launch without being cleared; the host gives every launch a new epoch and zeroes the
//! scratch before the epochs wrap ([`MAX_EPOCH`]).
//!
//! Reentrancy: two launches in flight at once must not share status words or a counter.

use core::mem::size_of;

use bytemuck::Pod;

use crate::arch::{FULL_MASK, WARP_SIZE};
use crate::atomic::{DeviceAtomicU32, Relaxed};
use crate::barrier;
use crate::op::Operator;
use crate::reduce::{grid, warp};
use crate::shared::{self, SharedSlice};
use crate::thread;
use crate::warp as raw;

/// The largest epoch a launch may use (0 means unpublished).
pub const MAX_EPOCH: u32 = u32::MAX;

/// Tiles per window: one per lane of the looking-back warp.
const WINDOW: u64 = WARP_SIZE as u64;

/// A status slot: one of the 34 of a window (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The window.
    pub window: u64,
    /// 0 to 31: the aggregate of tile `32 * window + index`; [`Slot::BASE`]: the window's
    /// base; [`Slot::TOTAL`]: its total.
    pub index: u32,
}

impl Slot {
    /// The index of a window's base.
    pub const BASE: u32 = 32;
    /// The index of a window's total.
    pub const TOTAL: u32 = 33;
    /// Windows per group: the slots are laid out group by group (see [`Slot::position`]).
    pub const GROUP: u64 = 32;
    /// Slots per group of [`Slot::GROUP`] windows: each window's aggregates, base and
    /// total (34 per window).
    pub const PER_GROUP: u64 = Slot::GROUP * (WINDOW + 2);

    /// Tile `tile`'s aggregate.
    #[inline(always)]
    pub fn aggregate(tile: u64) -> Slot {
        Slot { window: tile / WINDOW, index: (tile % WINDOW) as u32 }
    }

    /// Window `window`'s base.
    #[inline(always)]
    pub fn base(window: u64) -> Slot {
        Slot { window, index: Slot::BASE }
    }

    /// Window `window`'s total.
    #[inline(always)]
    pub fn total(window: u64) -> Slot {
        Slot { window, index: Slot::TOTAL }
    }

    /// The slot's position among all slots. Groups of 32 windows lie one after another;
    /// in a group, the 32 aggregates of each window, window by window, then the 32
    /// windows' bases, then their totals. So the loads of one look-back round touch few
    /// cache lines: a window's aggregates are 32 neighbouring slots, and so are the bases
    /// (and the totals) of 32 consecutive windows, in at most two groups. (With each
    /// window's base and total beside its aggregates, the 32 lanes that read the bases of
    /// 32 windows touched 32 different lines, and as many again for the totals.)
    #[inline(always)]
    pub fn position(self) -> usize {
        let (group, window) = (self.window / Slot::GROUP, self.window % Slot::GROUP);
        let within = match self.index {
            Slot::BASE => Slot::GROUP * WINDOW + window,
            Slot::TOTAL => Slot::GROUP * WINDOW + Slot::GROUP + window,
            aggregate => window * WINDOW + aggregate as u64,
        };
        (group * Slot::PER_GROUP + within) as usize
    }
}

/// The status slots of a launch: where tiles publish aggregates, window totals and
/// window bases.
///
/// # Safety
/// An implementation guarantees that [`TileStatus::read`] of a slot returns `Some(v)` only
/// for a `v` that [`TileStatus::publish`] published there in the same launch, and that a
/// published value is eventually read. The look-back relies on nothing else: it passes no
/// other memory between blocks. ([`TaggedStatus`] is warpsafe's; the trait is public so
/// that the emulator's tests can plant broken protocols, such as a flag published before
/// its value.)
pub unsafe trait TileStatus<T: Pod>: Copy {
    /// Publishes `value` in `slot`.
    ///
    /// # Safety
    /// `slot` belongs to a window of the launch; each slot is published once per launch,
    /// by one thread.
    unsafe fn publish(self, slot: Slot, value: T);

    /// Reads `slot` once, without waiting.
    ///
    /// # Safety
    /// `slot` belongs to a window of the launch.
    unsafe fn read(self, slot: Slot) -> Option<T>;
}

/// 64-bit status words that [`TaggedStatus`] uses for `tiles` tiles of `T`: 34 slots per
/// window of 32 tiles, in whole groups of 32 windows ([`Slot::position`]), one word per 32
/// bits of `T` each.
pub const fn status_words<T>(tiles: u64) -> u64 {
    tiles.div_ceil(WINDOW * Slot::GROUP) * Slot::PER_GROUP * grid::slot_words::<T>() as u64
}

/// warpsafe's status slots: every 32 bits of a value beside the launch's epoch in one
/// 64-bit word (module docs).
#[derive(Clone, Copy, Debug)]
pub struct TaggedStatus {
    words: *mut u64,
    epoch: u32,
}

impl TaggedStatus {
    /// The slots at `words` for a launch with epoch `epoch`.
    ///
    /// # Safety
    /// - `words` holds [`status_words`]`::<T>(tiles)` 8-byte aligned `u64`s of global
    ///   memory for the launch's `tiles`, accessed only by this launch (atomically) while it
    ///   runs;
    /// - `epoch` is not 0 and no word holds this epoch from before the launch (each launch
    ///   a new epoch; zeroed words before the epochs wrap).
    #[inline(always)]
    pub unsafe fn new(words: *mut u64, epoch: u32) -> TaggedStatus {
        TaggedStatus { words, epoch }
    }
}

// SAFETY: a value is accepted only when all its words carry this launch's epoch; each
// slot is written once per launch, by single-copy-atomic 64-bit stores (see the module
// docs). No ordering of other memory is promised.
unsafe impl<T: Pod> TileStatus<T> for TaggedStatus {
    #[inline(always)]
    unsafe fn publish(self, slot: Slot, value: T) {
        // SAFETY: `new`'s contract: the slot's words exist, are aligned, and are accessed
        // only atomically, by threads of this GPU, during the launch.
        unsafe { grid::publish(self.words, slot.position() as u64, value, self.epoch) }
    }

    #[inline(always)]
    unsafe fn read(self, slot: Slot) -> Option<T> {
        // SAFETY: as above.
        let (value, current) = unsafe { grid::read_slots(self.words, slot.position() as u64, self.epoch) };
        current.then_some(value)
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

/// Bytes at the start of the dynamic shared memory that the look-back of a scan over `T`
/// takes: the ticket, then the scratch of [`block_prefix`] at byte 16; a multiple of 16,
/// so what follows (the tile's staging) is 16-byte aligned.
pub const fn prefix_bytes<T>() -> usize {
    (16 + SCRATCH_LEN * size_of::<T>()).next_multiple_of(16)
}

/// The ticket slot and the prefix scratch, carved from the launch's dynamic shared
/// memory (which must be at least [`prefix_bytes`]`::<T>()`: a smaller window traps).
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

/// Warp 0's part: publishes `aggregate` as tile `tile`'s, finds the base of its window by
/// looking back (module docs), publishes what it owes its window, and returns (exclusive
/// prefix, inclusive end of the tile) to every lane.
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
        unsafe { status.publish(Slot::aggregate(tile), aggregate) };
    }
    // One round of loads, all in flight together (module docs).
    // SAFETY: earlier tiles of this window, window `window - 1`'s tiles, earlier windows:
    // all of the launch (contract).
    let mut own = unsafe { Polled::issue(status, lane < position, Slot { window, index: lane }) };
    let previous = window.checked_sub(1);
    let mut before = match previous {
        // SAFETY: as above.
        Some(p) => unsafe { Polled::issue(status, true, Slot { window: p, index: lane }) },
        None => Polled::nothing(),
    };
    // SAFETY: as above.
    let mut far = unsafe { Far::issue(status, window, lane) };
    own.wait(status);
    let own_value = if lane == position { aggregate } else { own.value.unwrap_or(op.identity()) };
    // SAFETY: all 32 lanes of warp 0 are here.
    let own_scan = unsafe { warp::inclusive_scan_full(own_value, op) };
    if position == WARP_SIZE - 1 && lane == WARP_SIZE - 1 {
        // SAFETY: the window's total, published once, by its last tile.
        unsafe { status.publish(Slot::total(window), own_scan) };
    }
    let base = match previous {
        None => op.identity(),
        // SAFETY: all 32 lanes are here.
        Some(_) => unsafe { find_base(status, &mut before, &mut far, op) },
    };
    if position == 0 && lane == 0 {
        // SAFETY: the window's base, published once, by its first tile.
        unsafe { status.publish(Slot::base(window), base) };
    }
    // SAFETY: all 32 lanes are here.
    let before_me = unsafe { raw::shfl_idx_sync(FULL_MASK, own_scan, position.saturating_sub(1), WARP_SIZE) };
    // SAFETY: as above.
    let through_me = unsafe { raw::shfl_idx_sync(FULL_MASK, own_scan, position, WARP_SIZE) };
    let prefix = if position == 0 { base } else { op.combine(base, before_me) };
    (prefix, op.combine(base, through_me))
}

/// One lane's read of one slot, kept until it has a value.
#[derive(Clone, Copy)]
struct Polled<T> {
    slot: Slot,
    /// Whether this lane reads a slot at all.
    reads: bool,
    value: Option<T>,
}

impl<T: Pod> Polled<T> {
    /// No slot.
    #[inline(always)]
    fn nothing() -> Polled<T> {
        Polled { slot: Slot { window: 0, index: 0 }, reads: false, value: None }
    }

    /// Reads `slot` once if `reads`.
    ///
    /// # Safety
    /// When `reads`, `slot` belongs to a window of the launch of `status`, and every later
    /// call on the result passes the same `status`.
    #[inline(always)]
    unsafe fn issue<S: TileStatus<T>>(status: S, reads: bool, slot: Slot) -> Polled<T> {
        let mut polled = Polled { slot, reads, value: None };
        polled.retry(status);
        polled
    }

    /// Reads the slot again if it has no value yet.
    #[inline(always)]
    fn retry<S: TileStatus<T>>(&mut self, status: S) {
        if self.reads && self.value.is_none() {
            // SAFETY: a slot of the launch (the contract of `issue`, the only constructor
            // of a reading `Polled`).
            self.value = unsafe { status.read(self.slot) };
        }
    }

    /// Polls until the slot has a value: for aggregates, which running blocks publish
    /// early.
    #[inline(always)]
    fn wait<S: TileStatus<T>>(&mut self, status: S) {
        while self.reads && self.value.is_none() {
            self.retry(status);
        }
    }

    /// Whether the slot has a value, or is not read at all.
    #[inline(always)]
    fn settled(&self) -> bool {
        !self.reads || self.value.is_some()
    }
}

/// One lane's reads of the far windows: the base of window `window - lane` and the total
/// of window `window - 1 - lane`.
#[derive(Clone, Copy)]
struct Far<T> {
    base: Polled<T>,
    total: Polled<T>,
}

impl<T: Pod> Far<T> {
    /// Reads the base of window `window - lane` and the total of `window - 1 - lane`
    /// (those that exist).
    ///
    /// # Safety
    /// `window` is a window of the launch of `status`, used for every later call.
    #[inline(always)]
    unsafe fn issue<S: TileStatus<T>>(status: S, window: u64, lane: u32) -> Far<T> {
        let lane = lane as u64;
        // SAFETY: windows `window - lane >= 0` and `window - 1 - lane >= 0` of the launch.
        unsafe {
            Far {
                base: Polled::issue(status, lane <= window, Slot::base(window.wrapping_sub(lane))),
                total: Polled::issue(status, lane < window, Slot::total(window.wrapping_sub(lane + 1))),
            }
        }
    }

    #[inline(always)]
    fn retry<S: TileStatus<T>>(&mut self, status: S) {
        self.base.retry(status);
        self.total.retry(status);
    }
}

/// `E(w - 1)` for the caller's window `w > 0` (module docs), from the lanes' reads of
/// window `w - 1`'s aggregates (`before`) and of the far bases and totals.
///
/// # Safety
/// As for [`look_back`].
#[inline(always)]
unsafe fn find_base<T: Pod, Op: Operator<T>, S: TileStatus<T>>(
    status: S,
    before: &mut Polled<T>,
    far: &mut Far<T>,
    op: Op,
) -> T {
    loop {
        // SAFETY: all 32 lanes are here (every decision below is uniform over the warp).
        let bases = unsafe { raw::ballot_sync(FULL_MASK, far.base.value.is_some()) };
        if bases & 1 != 0 {
            // The window's own base: its first tile has finished.
            // SAFETY: as above.
            return unsafe {
                raw::shfl_idx_sync(FULL_MASK, far.base.value.unwrap_or(op.identity()), 0, WARP_SIZE)
            };
        }
        // SAFETY: as above.
        let totals = unsafe { raw::ballot_sync(FULL_MASK, far.total.value.is_some()) };
        // SAFETY: as above.
        let before_complete = unsafe { raw::all_sync(FULL_MASK, before.settled()) };
        if totals & 1 != 0 || before_complete {
            // T(window - 1): published, or the same scan of its aggregates.
            // SAFETY: as above.
            let scan = unsafe { warp::inclusive_scan_full(before.value.unwrap_or(op.identity()), op) };
            let mine = if totals & 1 != 0 { far.total.value.unwrap_or(op.identity()) } else { scan };
            let source = if totals & 1 != 0 { 0 } else { WARP_SIZE - 1 };
            // SAFETY: as above.
            let last_total = unsafe { raw::shfl_idx_sync(FULL_MASK, mine, source, WARP_SIZE) };
            // Base of window `window - l` usable when the totals of windows
            // `window - l .. window - 2` (lanes 1 .. l - 1) are published.
            let run = (!(totals >> 1)).trailing_zeros();
            let reach = if run >= WARP_SIZE - 2 { u32::MAX } else { (1u32 << (run + 2)) - 1 };
            let usable = bases & reach & !1;
            if usable != 0 {
                let l = usable.trailing_zeros();
                // SAFETY: as above.
                let mut base = unsafe {
                    raw::shfl_idx_sync(FULL_MASK, far.base.value.unwrap_or(op.identity()), l, WARP_SIZE)
                };
                let mut m = l;
                while m > 1 {
                    m -= 1;
                    // SAFETY: as above (the loop count is uniform).
                    let total = unsafe {
                        raw::shfl_idx_sync(FULL_MASK, far.total.value.unwrap_or(op.identity()), m, WARP_SIZE)
                    };
                    base = op.combine(base, total);
                }
                return op.combine(base, last_total);
            }
        }
        // Nothing usable yet: read what is missing again.
        before.retry(status);
        far.retry(status);
    }
}
