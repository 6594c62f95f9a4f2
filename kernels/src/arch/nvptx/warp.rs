//! Warp collectives: `shfl.sync`, `vote.sync`, `activemask`, `match.sync`, `redux.sync`,
//! `bar.warp.sync`, `elect.sync`, and the `%lanemask_*` special registers, through LLVM's
//! NVVM intrinsics.
//!
//! Every collective intrinsic bound here is declared `convergent` by LLVM 22 (checked in
//! the `.ll` that `warpsafe-build` writes): no pass may hoist or sink it across a branch
//! that some lanes skip, nor merge two of them from different branches. The
//! `%lanemask_*` reads are not collectives (each lane reads its own register).
//!
//! The functions here take raw 32/64-bit words; [`crate::warp`] builds typed collectives
//! on them. Their `# Safety` sections use these words:
//! - the **convergence rule**: the calling lane is in `mask`, and every lane named in
//!   `mask` executes the same instruction with the same `mask` (none has exited, none is
//!   waiting elsewhere). The hardware does not check it: a missing lane hangs the warp or
//!   leaves the result undefined. (On sm_6x and older `mask` would also have to equal the
//!   active mask; warpsafe targets sm_70 and newer only.)

/// A 32-bit result paired with a predicate, the `{i32, i1}` that several NVVM intrinsics
/// return. rustc lowers this `repr(C)` struct to exactly that LLVM type for an intrinsic's
/// return value (the emitted IR shows `{ i32, i1 }` and two `extractvalue`s).
#[repr(C)]
#[derive(Clone, Copy)]
struct WordAndPredicate {
    word: u32,
    predicate: bool,
}

mod llvm {
    use super::WordAndPredicate;

    extern "C" {
        // shfl.sync.{idx,up,down,bfly}.b32 d, a, b, c, membermask (convergent).
        // Intrinsic operand order: (membermask, a, b, c).
        #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
        pub fn shfl_sync_idx_i32(mask: u32, value: u32, lane: u32, c: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
        pub fn shfl_sync_up_i32(mask: u32, value: u32, delta: u32, c: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
        pub fn shfl_sync_down_i32(mask: u32, value: u32, delta: u32, c: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
        pub fn shfl_sync_bfly_i32(mask: u32, value: u32, lane_mask: u32, c: u32) -> u32;

        // shfl.sync.{idx,up,down,bfly}.b32 d|p, a, b, c, membermask (convergent).
        #[link_name = "llvm.nvvm.shfl.sync.idx.i32p"]
        pub fn shfl_sync_idx_i32p(mask: u32, value: u32, lane: u32, c: u32) -> WordAndPredicate;
        #[link_name = "llvm.nvvm.shfl.sync.up.i32p"]
        pub fn shfl_sync_up_i32p(mask: u32, value: u32, delta: u32, c: u32) -> WordAndPredicate;
        #[link_name = "llvm.nvvm.shfl.sync.down.i32p"]
        pub fn shfl_sync_down_i32p(mask: u32, value: u32, delta: u32, c: u32) -> WordAndPredicate;
        #[link_name = "llvm.nvvm.shfl.sync.bfly.i32p"]
        pub fn shfl_sync_bfly_i32p(mask: u32, value: u32, lane_mask: u32, c: u32) -> WordAndPredicate;

        // vote.sync.ballot.b32 / vote.sync.{any,all,uni}.pred (convergent).
        #[link_name = "llvm.nvvm.vote.ballot.sync"]
        pub fn vote_ballot_sync(mask: u32, predicate: bool) -> u32;
        #[link_name = "llvm.nvvm.vote.any.sync"]
        pub fn vote_any_sync(mask: u32, predicate: bool) -> bool;
        #[link_name = "llvm.nvvm.vote.all.sync"]
        pub fn vote_all_sync(mask: u32, predicate: bool) -> bool;
        #[link_name = "llvm.nvvm.vote.uni.sync"]
        pub fn vote_uni_sync(mask: u32, predicate: bool) -> bool;

        // activemask.b32 (convergent).
        #[link_name = "llvm.nvvm.activemask"]
        pub fn activemask() -> u32;

        // match.{any,all}.sync.{b32,b64} (convergent).
        #[link_name = "llvm.nvvm.match.any.sync.i32"]
        pub fn match_any_sync_i32(mask: u32, value: u32) -> u32;
        #[link_name = "llvm.nvvm.match.any.sync.i64"]
        pub fn match_any_sync_i64(mask: u32, value: u64) -> u32;
        #[link_name = "llvm.nvvm.match.all.sync.i32p"]
        pub fn match_all_sync_i32p(mask: u32, value: u32) -> WordAndPredicate;
        #[link_name = "llvm.nvvm.match.all.sync.i64p"]
        pub fn match_all_sync_i64p(mask: u32, value: u64) -> WordAndPredicate;

        // bar.warp.sync membermask (convergent).
        #[link_name = "llvm.nvvm.bar.warp.sync"]
        pub fn bar_warp_sync(mask: u32);

        // mov.u32 %r, %lanemask_{eq,lt,le,gt,ge} (not collectives).
        #[link_name = "llvm.nvvm.read.ptx.sreg.lanemask.eq"]
        pub fn lanemask_eq() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.lanemask.lt"]
        pub fn lanemask_lt() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.lanemask.le"]
        pub fn lanemask_le() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.lanemask.gt"]
        pub fn lanemask_gt() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.lanemask.ge"]
        pub fn lanemask_ge() -> u32;
    }

    // redux.sync.{add,min,max,and,or,xor}.{s32,u32,b32} d, a, membermask (convergent,
    // sm_80+). Intrinsic operand order: (a, membermask).
    #[cfg(target_feature = "sm_80")]
    extern "C" {
        #[link_name = "llvm.nvvm.redux.sync.add"]
        pub fn redux_sync_add(value: u32, mask: u32) -> u32;
        #[link_name = "llvm.nvvm.redux.sync.min"]
        pub fn redux_sync_min(value: i32, mask: u32) -> i32;
        #[link_name = "llvm.nvvm.redux.sync.max"]
        pub fn redux_sync_max(value: i32, mask: u32) -> i32;
        #[link_name = "llvm.nvvm.redux.sync.umin"]
        pub fn redux_sync_umin(value: u32, mask: u32) -> u32;
        #[link_name = "llvm.nvvm.redux.sync.umax"]
        pub fn redux_sync_umax(value: u32, mask: u32) -> u32;
        #[link_name = "llvm.nvvm.redux.sync.and"]
        pub fn redux_sync_and(value: u32, mask: u32) -> u32;
        #[link_name = "llvm.nvvm.redux.sync.or"]
        pub fn redux_sync_or(value: u32, mask: u32) -> u32;
        #[link_name = "llvm.nvvm.redux.sync.xor"]
        pub fn redux_sync_xor(value: u32, mask: u32) -> u32;
    }

    // elect.sync d|p, membermask (convergent, sm_90+, PTX 8.0).
    #[cfg(target_feature = "sm_90")]
    extern "C" {
        #[link_name = "llvm.nvvm.elect.sync"]
        pub fn elect_sync(mask: u32) -> WordAndPredicate;
    }
}

/// `shfl.sync.idx.b32` (sm_70+): the 32-bit `value` of the source lane that `lane` and
/// the packed operand `c` select (see [`crate::warp::shfl_idx_sync`]).
///
/// # Safety
/// The convergence rule (module docs), and the selected source lane is in `mask`, or the
/// result is undefined.
#[inline(always)]
pub unsafe fn shfl_sync_idx_b32(mask: u32, value: u32, lane: u32, c: u32) -> u32 {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    unsafe { llvm::shfl_sync_idx_i32(mask, value, lane, c) }
}

/// `shfl.sync.up.b32` (sm_70+): `value` of lane `lane - delta` within the segment that
/// `c` describes, or the caller's own `value` below the segment's first lane.
///
/// # Safety
/// As for [`shfl_sync_idx_b32`].
#[inline(always)]
pub unsafe fn shfl_sync_up_b32(mask: u32, value: u32, delta: u32, c: u32) -> u32 {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    unsafe { llvm::shfl_sync_up_i32(mask, value, delta, c) }
}

/// `shfl.sync.down.b32` (sm_70+): `value` of lane `lane + delta`, or the caller's own
/// `value` past the clamp lane that `c` describes.
///
/// # Safety
/// As for [`shfl_sync_idx_b32`].
#[inline(always)]
pub unsafe fn shfl_sync_down_b32(mask: u32, value: u32, delta: u32, c: u32) -> u32 {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    unsafe { llvm::shfl_sync_down_i32(mask, value, delta, c) }
}

/// `shfl.sync.bfly.b32` (sm_70+): `value` of lane `lane ^ lane_mask`, or the caller's own
/// `value` past the clamp lane that `c` describes.
///
/// # Safety
/// As for [`shfl_sync_idx_b32`].
#[inline(always)]
pub unsafe fn shfl_sync_bfly_b32(mask: u32, value: u32, lane_mask: u32, c: u32) -> u32 {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    unsafe { llvm::shfl_sync_bfly_i32(mask, value, lane_mask, c) }
}

/// `shfl.sync.idx.b32 d|p` (sm_70+): as [`shfl_sync_idx_b32`], with the predicate `p`
/// (the computed source lane was within the clamp; otherwise `d` is the caller's value).
///
/// # Safety
/// As for [`shfl_sync_idx_b32`].
#[inline(always)]
pub unsafe fn shfl_sync_idx_b32_p(mask: u32, value: u32, lane: u32, c: u32) -> (u32, bool) {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    let r = unsafe { llvm::shfl_sync_idx_i32p(mask, value, lane, c) };
    (r.word, r.predicate)
}

/// `shfl.sync.up.b32 d|p` (sm_70+): as [`shfl_sync_up_b32`], with the in-range predicate.
///
/// # Safety
/// As for [`shfl_sync_idx_b32`].
#[inline(always)]
pub unsafe fn shfl_sync_up_b32_p(mask: u32, value: u32, delta: u32, c: u32) -> (u32, bool) {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    let r = unsafe { llvm::shfl_sync_up_i32p(mask, value, delta, c) };
    (r.word, r.predicate)
}

/// `shfl.sync.down.b32 d|p` (sm_70+): as [`shfl_sync_down_b32`], with the in-range
/// predicate.
///
/// # Safety
/// As for [`shfl_sync_idx_b32`].
#[inline(always)]
pub unsafe fn shfl_sync_down_b32_p(mask: u32, value: u32, delta: u32, c: u32) -> (u32, bool) {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    let r = unsafe { llvm::shfl_sync_down_i32p(mask, value, delta, c) };
    (r.word, r.predicate)
}

/// `shfl.sync.bfly.b32 d|p` (sm_70+): as [`shfl_sync_bfly_b32`], with the in-range
/// predicate.
///
/// # Safety
/// As for [`shfl_sync_idx_b32`].
#[inline(always)]
pub unsafe fn shfl_sync_bfly_b32_p(mask: u32, value: u32, lane_mask: u32, c: u32) -> (u32, bool) {
    // SAFETY: the caller upholds the convergence and source-lane rules.
    let r = unsafe { llvm::shfl_sync_bfly_i32p(mask, value, lane_mask, c) };
    (r.word, r.predicate)
}

/// `vote.sync.ballot.b32` (sm_70+): bit `i` set for each lane `i` of `mask` whose
/// `predicate` is true.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn vote_sync_ballot(mask: u32, predicate: bool) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::vote_ballot_sync(mask, predicate) }
}

/// `vote.sync.any.pred` (sm_70+): whether `predicate` is true in some lane of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn vote_sync_any(mask: u32, predicate: bool) -> bool {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::vote_any_sync(mask, predicate) }
}

/// `vote.sync.all.pred` (sm_70+): whether `predicate` is true in every lane of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn vote_sync_all(mask: u32, predicate: bool) -> bool {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::vote_all_sync(mask, predicate) }
}

/// `vote.sync.uni.pred` (sm_70+): whether `predicate` has the same value in every lane of
/// `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn vote_sync_uni(mask: u32, predicate: bool) -> bool {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::vote_uni_sync(mask, predicate) }
}

/// `activemask.b32` (sm_70+): the lanes executing this instruction together with the
/// caller (always including the caller). Not a synchronisation: lanes that the scheduler
/// runs separately are missing even when they will reach the same point.
#[inline(always)]
pub fn activemask() -> u32 {
    // SAFETY: activemask waits for no other lane and reads no memory; any lane may
    // execute it at any time.
    unsafe { llvm::activemask() }
}

/// `match.any.sync.b32` (sm_70+): the lanes of `mask` whose `value` equals the caller's.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn match_any_sync_b32(mask: u32, value: u32) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::match_any_sync_i32(mask, value) }
}

/// `match.any.sync.b64` (sm_70+): the lanes of `mask` whose `value` equals the caller's.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn match_any_sync_b64(mask: u32, value: u64) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::match_any_sync_i64(mask, value) }
}

/// `match.all.sync.b32 d|p` (sm_70+): `(mask, true)` when every lane of `mask` has the
/// same `value`, else `(0, false)`.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn match_all_sync_b32(mask: u32, value: u32) -> (u32, bool) {
    // SAFETY: the caller upholds the convergence rule.
    let r = unsafe { llvm::match_all_sync_i32p(mask, value) };
    (r.word, r.predicate)
}

/// `match.all.sync.b64 d|p` (sm_70+): `(mask, true)` when every lane of `mask` has the
/// same `value`, else `(0, false)`.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn match_all_sync_b64(mask: u32, value: u64) -> (u32, bool) {
    // SAFETY: the caller upholds the convergence rule.
    let r = unsafe { llvm::match_all_sync_i64p(mask, value) };
    (r.word, r.predicate)
}

/// `bar.warp.sync` (sm_70+): waits until every lane of `mask` has executed it; memory
/// accesses before it in those lanes are ordered before those after it.
///
/// # Safety
/// The convergence rule (module docs).
#[inline(always)]
pub unsafe fn bar_warp_sync(mask: u32) {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::bar_warp_sync(mask) }
}

/// `redux.sync.add.s32` (sm_80+): the wrapping sum of `value` over the lanes of `mask`,
/// returned to each of them.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_add(mask: u32, value: u32) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_add(value, mask) }
}

/// `redux.sync.min.s32` (sm_80+): the signed minimum over the lanes of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_min_s32(mask: u32, value: i32) -> i32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_min(value, mask) }
}

/// `redux.sync.max.s32` (sm_80+): the signed maximum over the lanes of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_max_s32(mask: u32, value: i32) -> i32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_max(value, mask) }
}

/// `redux.sync.min.u32` (sm_80+): the unsigned minimum over the lanes of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_min_u32(mask: u32, value: u32) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_umin(value, mask) }
}

/// `redux.sync.max.u32` (sm_80+): the unsigned maximum over the lanes of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_max_u32(mask: u32, value: u32) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_umax(value, mask) }
}

/// `redux.sync.and.b32` (sm_80+): the bitwise and over the lanes of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_and(mask: u32, value: u32) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_and(value, mask) }
}

/// `redux.sync.or.b32` (sm_80+): the bitwise or over the lanes of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_or(mask: u32, value: u32) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_or(value, mask) }
}

/// `redux.sync.xor.b32` (sm_80+): the bitwise exclusive or over the lanes of `mask`.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn redux_sync_xor(mask: u32, value: u32) -> u32 {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::redux_sync_xor(value, mask) }
}

/// `elect.sync` (sm_90+): true in exactly one lane of `mask` (the elected leader), false
/// in the others.
///
/// # Safety
/// The convergence rule (module docs).
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub unsafe fn elect_sync(mask: u32) -> bool {
    // SAFETY: the caller upholds the convergence rule.
    unsafe { llvm::elect_sync(mask).predicate }
}

/// `%lanemask_eq`: only the caller's lane bit set.
#[inline(always)]
pub fn lanemask_eq() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::lanemask_eq() }
}

/// `%lanemask_lt`: the bits of the lanes below the caller's.
#[inline(always)]
pub fn lanemask_lt() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::lanemask_lt() }
}

/// `%lanemask_le`: the bits of the caller's lane and those below it.
#[inline(always)]
pub fn lanemask_le() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::lanemask_le() }
}

/// `%lanemask_gt`: the bits of the lanes above the caller's.
#[inline(always)]
pub fn lanemask_gt() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::lanemask_gt() }
}

/// `%lanemask_ge`: the bits of the caller's lane and those above it.
#[inline(always)]
pub fn lanemask_ge() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::lanemask_ge() }
}
