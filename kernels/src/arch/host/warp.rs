//! Warp collectives on the emulator: each is one rendezvous of the lanes of its mask
//! (see `warpsafe_emu`); the `# Safety` rules are those of the GPU side, and breaking one
//! ends the launch with an error naming it.

use core::panic::Location;

use warpsafe_emu::device::{self as emu, Op, Redux, Shfl, Vote};

macro_rules! shuffles {
    ($($name:ident, $name_p:ident: $mode:ident, $b:ident, $ptx:literal;)*) => {$(
        #[doc = concat!("`", $ptx, "` on the emulator: the 32-bit `value` of the source lane \
            that `", stringify!($b), "` and the segment operand `c` select.\n\n\
            # Safety\n\
            The convergence rule: the caller is in `mask`, every lane of `mask` reaches \
            this shuffle with the same `mask` and `c`, and the source lane is in `mask`.")]
        #[inline]
        #[track_caller]
        pub unsafe fn $name(mask: u32, value: u32, $b: u32, c: u32) -> u32 {
            emu::collective(Op::Shfl(Shfl::$mode), mask, $b, c, value as u64, Location::caller()).0 as u32
        }

        #[doc = concat!("`", $ptx, " d|p` on the emulator: as [`", stringify!($name), "`], \
            with the predicate (the source lane was in range).\n\n\
            # Safety\nAs for [`", stringify!($name), "`].")]
        #[inline]
        #[track_caller]
        pub unsafe fn $name_p(mask: u32, value: u32, $b: u32, c: u32) -> (u32, bool) {
            let (word, in_range) = emu::collective(Op::Shfl(Shfl::$mode), mask, $b, c, value as u64, Location::caller());
            (word as u32, in_range)
        }
    )*};
}

shuffles! {
    shfl_sync_idx_b32, shfl_sync_idx_b32_p: Idx, lane, "shfl.sync.idx.b32";
    shfl_sync_up_b32, shfl_sync_up_b32_p: Up, delta, "shfl.sync.up.b32";
    shfl_sync_down_b32, shfl_sync_down_b32_p: Down, delta, "shfl.sync.down.b32";
    shfl_sync_bfly_b32, shfl_sync_bfly_b32_p: Bfly, lane_mask, "shfl.sync.bfly.b32";
}

/// `vote.sync.ballot.b32` on the emulator: bit `i` set for each lane `i` of `mask` whose
/// `predicate` is true.
///
/// # Safety
/// The convergence rule: the caller is in `mask` and every lane of `mask` reaches this
/// vote with the same `mask`.
#[inline]
#[track_caller]
pub unsafe fn vote_sync_ballot(mask: u32, predicate: bool) -> u32 {
    emu::collective(Op::Vote(Vote::Ballot), mask, 0, 0, predicate as u64, Location::caller()).0 as u32
}

/// `vote.sync.any.pred` on the emulator.
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn vote_sync_any(mask: u32, predicate: bool) -> bool {
    emu::collective(Op::Vote(Vote::Any), mask, 0, 0, predicate as u64, Location::caller()).1
}

/// `vote.sync.all.pred` on the emulator.
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn vote_sync_all(mask: u32, predicate: bool) -> bool {
    emu::collective(Op::Vote(Vote::All), mask, 0, 0, predicate as u64, Location::caller()).1
}

/// `vote.sync.uni.pred` on the emulator.
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn vote_sync_uni(mask: u32, predicate: bool) -> bool {
    emu::collective(Op::Vote(Vote::Uni), mask, 0, 0, predicate as u64, Location::caller()).1
}

/// `activemask.b32` on the emulator: the lanes of the caller's warp that are at this same
/// call when the scheduler resolves it (always the caller, and depending on the seed
/// fewer lanes than took the branch, as on the GPU).
#[inline]
#[track_caller]
pub fn activemask() -> u32 {
    emu::activemask(Location::caller())
}

/// `match.any.sync.b32` on the emulator.
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn match_any_sync_b32(mask: u32, value: u32) -> u32 {
    emu::collective(Op::MatchAny(false), mask, 0, 0, value as u64, Location::caller()).0 as u32
}

/// `match.any.sync.b64` on the emulator.
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn match_any_sync_b64(mask: u32, value: u64) -> u32 {
    emu::collective(Op::MatchAny(true), mask, 0, 0, value, Location::caller()).0 as u32
}

/// `match.all.sync.b32 d|p` on the emulator: `(mask, true)` when every lane of `mask` has
/// the same `value`, else `(0, false)`.
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn match_all_sync_b32(mask: u32, value: u32) -> (u32, bool) {
    let (lanes, all) = emu::collective(Op::MatchAll(false), mask, 0, 0, value as u64, Location::caller());
    (lanes as u32, all)
}

/// `match.all.sync.b64 d|p` on the emulator.
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn match_all_sync_b64(mask: u32, value: u64) -> (u32, bool) {
    let (lanes, all) = emu::collective(Op::MatchAll(true), mask, 0, 0, value, Location::caller());
    (lanes as u32, all)
}

/// `bar.warp.sync` on the emulator: waits for every lane of `mask`; orders the memory
/// accesses of those lanes (the race check joins their clocks).
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn bar_warp_sync(mask: u32) {
    emu::collective(Op::SyncWarp, mask, 0, 0, 0, Location::caller());
}

macro_rules! reductions {
    ($($name:ident($t:ty): $op:ident, $ptx:literal;)*) => {$(
        #[doc = concat!("`", $ptx, "` on the emulator: the reduction of `value` over the lanes \
            of `mask`, returned to each of them.\n\n\
            # Safety\nAs for [`vote_sync_ballot`].")]
        #[inline]
        #[track_caller]
        pub unsafe fn $name(mask: u32, value: $t) -> $t {
            emu::collective(Op::Redux(Redux::$op), mask, 0, 0, value as u32 as u64, Location::caller()).0 as u32 as $t
        }
    )*};
}

reductions! {
    redux_sync_add(u32): Add, "redux.sync.add.s32";
    redux_sync_min_s32(i32): MinS, "redux.sync.min.s32";
    redux_sync_max_s32(i32): MaxS, "redux.sync.max.s32";
    redux_sync_min_u32(u32): MinU, "redux.sync.min.u32";
    redux_sync_max_u32(u32): MaxU, "redux.sync.max.u32";
    redux_sync_and(u32): And, "redux.sync.and.b32";
    redux_sync_or(u32): Or, "redux.sync.or.b32";
    redux_sync_xor(u32): Xor, "redux.sync.xor.b32";
}

/// `elect.sync` on the emulator: true in exactly one lane of `mask`, chosen by the seed
/// (code must not assume which).
///
/// # Safety
/// As for [`vote_sync_ballot`].
#[inline]
#[track_caller]
pub unsafe fn elect_sync(mask: u32) -> bool {
    emu::collective(Op::Elect, mask, 0, 0, 0, Location::caller()).1
}

/// `%lanemask_eq`: only the caller's lane bit set.
#[inline]
pub fn lanemask_eq() -> u32 {
    1 << super::lane_id()
}

/// `%lanemask_lt`: the bits of the lanes below the caller's.
#[inline]
pub fn lanemask_lt() -> u32 {
    lanemask_eq() - 1
}

/// `%lanemask_le`: the bits of the caller's lane and those below it.
#[inline]
pub fn lanemask_le() -> u32 {
    lanemask_lt() | lanemask_eq()
}

/// `%lanemask_gt`: the bits of the lanes above the caller's.
#[inline]
pub fn lanemask_gt() -> u32 {
    !lanemask_le()
}

/// `%lanemask_ge`: the bits of the caller's lane and those above it.
#[inline]
pub fn lanemask_ge() -> u32 {
    !lanemask_lt()
}
