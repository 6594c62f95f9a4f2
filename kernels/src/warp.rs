//! Warp collectives: the raw, masked layer.
//!
//! Since Volta (sm_70) the 32 lanes of a warp are scheduled independently: they may
//! diverge and need not run in lockstep. A collective therefore names the lanes that take
//! part in a `mask`, and every lane in that mask must reach the same collective. Every
//! `unsafe fn` here states that rule in its `# Safety` section; in short, for a call with
//! `mask`:
//! - the calling lane is in `mask`;
//! - every lane of `mask` reaches this same collective with the same `mask` and none of
//!   them has exited (the hardware does not check this: the warp hangs, or the result is
//!   undefined);
//! - a shuffle reads from a source lane, which must be in `mask`, or the value is
//!   undefined.
//!
//! On sm_6x and older `mask` would also have to equal the set of active lanes; warpsafe
//! targets sm_70 and newer only, where any subset of converged-or-not lanes works.
//!
//! The GPU checks none of these rules; the CPU emulator (`warpsafe::emu`, on the host)
//! checks all three at every call and reports the lanes, masks and source location.
//!
//! Everything lowers to one PTX instruction per 32-bit word (named in each function's
//! documentation, with its minimum architecture) through LLVM's `convergent` NVVM
//! intrinsics, so the optimiser never moves a collective into or out of a branch.
//! `redux.sync` (sm_80) and `elect.sync` (sm_90) are chosen at compile time with
//! `#[cfg(target_feature = "sm_80")]` / `"sm_90"`; older targets get a fallback built from
//! sm_70 instructions with the same results.
//!
//! # Shuffles of any `Pod` type
//!
//! `shfl.sync` moves 32 bits. The `shfl_*_sync` functions accept any
//! [`bytemuck::Pod`] value: its bytes are split into `ceil(size_of::<T>() / 4)` 32-bit
//! words (one word for types of four bytes or fewer, and for zero-sized types), each word
//! is shuffled with the same lane arguments, and the words are put back together byte by
//! byte, so no alignment is assumed. Values move bit for bit (a float NaN keeps its
//! payload). CCCL issue #10958 reported `ptxas` miscompiling CUB's word-split shuffle of a
//! 12-byte struct with a sub-4-byte field; warpsafe's tests shuffle exactly such a struct.
//!
//! # Widths (segments)
//!
//! `width` splits the warp into `32 / width` segments of `width` consecutive lanes. It must
//! be a power of two in `1..=32`, and this is checked on both backends: any other width
//! prints `warpsafe: shuffle width W is not a power of two in 1..=32, at FILE:LINE: ...`
//! and traps on the GPU, and ends an emulated launch with
//! `ErrorKind::InvalidShuffleWidth`; a constant width costs nothing (the check folds
//! away). The shuffle's `c` operand is
//! `((32 - width) << 8) | clamp`, with clamp 31 for `idx`, `down` and `bfly` and 0 for
//! `up`, as in CUDA's `__shfl_*_sync`. With `s` the first lane of the caller's segment:
//! - `idx` reads lane `s + src_lane % width`;
//! - `up` reads lane `lane - delta`, or keeps its own value when that is below `s`;
//! - `down` reads lane `lane + delta`, or keeps its own value when that is past the
//!   segment's last lane;
//! - `xor` reads lane `lane ^ lane_mask`, or keeps its own value when that is past the
//!   segment's last lane. A `lane_mask` of `width` or more can reach a *lower* segment
//!   (the hardware only clamps upwards).
//!
//! Only bits 0-4 of `src_lane`, `delta` and `lane_mask` are used. The `_p` variants also
//! return the hardware's predicate: `true` when the value came from the computed source
//! lane, `false` when the caller kept its own value.

use core::panic::Location;

use crate::arch::{self, FULL_MASK};
use crate::op::{BitAnd, BitOr, BitXor, Max, Min, Operator, Redux, Sum};

pub use crate::arch::lane_id;

/// The clamp field of the shuffle `c` operand for `idx`, `down` and `bfly`.
const CLAMP_HIGH: u32 = 31;
/// The clamp field of the shuffle `c` operand for `up`.
const CLAMP_LOW: u32 = 0;

/// The shuffle's `c` operand for segments of `width` lanes: the segment mask
/// `32 - width` in bits 8-12 and `clamp` in bits 0-4. A width that is not a power of two
/// in `1..=32` traps with a message on the GPU (the emulator reports
/// `ErrorKind::InvalidShuffleWidth`); for a constant width the check folds away.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn shuffle_c(width: u32, clamp: u32) -> u32 {
    if !(width.is_power_of_two() && width <= arch::WARP_SIZE) {
        arch::invalid_shuffle_width(width, Location::caller());
    }
    (arch::WARP_SIZE.wrapping_sub(width) << 8) | clamp
}

/// Moves `value` word by word through `shuffle` (one call per 32-bit word, at least one)
/// and returns the reassembled value with the first word's predicate (all words use the
/// same lane arguments, so all predicates are equal; the plain shuffles report `true`).
#[inline(always)]
fn shuffle_words<T: bytemuck::Pod>(value: T, mut shuffle: impl FnMut(u32) -> (u32, bool)) -> (T, bool) {
    let src = bytemuck::bytes_of(&value);
    let mut result = T::zeroed();
    let dst = bytemuck::bytes_of_mut(&mut result);
    let mut in_range = true;
    // At least one word, so that every lane executes the collective even for a ZST.
    let words = src.len().div_ceil(4).max(1);
    for w in 0..words {
        let start = 4 * w;
        let end = src.len().min(start + 4);
        let mut word = [0u8; 4];
        word[..end - start].copy_from_slice(&src[start..end]);
        let (moved, predicate) = shuffle(u32::from_ne_bytes(word));
        dst[start..end].copy_from_slice(&moved.to_ne_bytes()[..end - start]);
        if w == 0 {
            in_range = predicate;
        }
    }
    (result, in_range)
}

/// `shfl.sync.idx.b32` (sm_70+, one per 32-bit word): the `value` of lane
/// `s + src_lane % width` of the caller's segment (see the module docs).
///
/// # Safety
/// The calling lane is in `mask`; every lane of `mask` reaches this shuffle with the same
/// `mask` and `width` and none has exited. The source lane must be in `mask`, or the
/// result is undefined. (`width` must be a power of two in `1..=32`; any other width
/// traps, see the module docs.)
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_idx_sync<T: bytemuck::Pod>(mask: u32, value: T, src_lane: u32, width: u32) -> T {
    let _site = arch::site(c"warp::shfl_idx_sync", Location::caller());
    let c = shuffle_c(width, CLAMP_HIGH);
    let (moved, _) = shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract; every word uses the same
        // lane arguments, so every word satisfies it.
        (unsafe { arch::shfl_sync_idx_b32(mask, word, src_lane, c) }, true)
    });
    moved
}

/// `shfl.sync.up.b32` (sm_70+, one per 32-bit word): the `value` of lane `lane - delta`,
/// or the caller's own `value` when that lane is below its segment.
///
/// # Safety
/// As for [`shfl_idx_sync`]: the caller is in `mask`, all of `mask` arrives with the same
/// arguments `mask` and `width`, and the source lane (when in range) is in `mask`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_up_sync<T: bytemuck::Pod>(mask: u32, value: T, delta: u32, width: u32) -> T {
    let _site = arch::site(c"warp::shfl_up_sync", Location::caller());
    let c = shuffle_c(width, CLAMP_LOW);
    let (moved, _) = shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract; every word uses the same
        // lane arguments, so every word satisfies it.
        (unsafe { arch::shfl_sync_up_b32(mask, word, delta, c) }, true)
    });
    moved
}

/// `shfl.sync.down.b32` (sm_70+, one per 32-bit word): the `value` of lane
/// `lane + delta`, or the caller's own `value` when that lane is past its segment.
///
/// # Safety
/// As for [`shfl_idx_sync`]: the caller is in `mask`, all of `mask` arrives with the same
/// `mask` and `width`, and the source lane (when in range) is in `mask`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_down_sync<T: bytemuck::Pod>(mask: u32, value: T, delta: u32, width: u32) -> T {
    let _site = arch::site(c"warp::shfl_down_sync", Location::caller());
    let c = shuffle_c(width, CLAMP_HIGH);
    let (moved, _) = shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract; every word uses the same
        // lane arguments, so every word satisfies it.
        (unsafe { arch::shfl_sync_down_b32(mask, word, delta, c) }, true)
    });
    moved
}

/// `shfl.sync.bfly.b32` (sm_70+, one per 32-bit word): the `value` of lane
/// `lane ^ lane_mask`, or the caller's own `value` when that lane is past its segment.
///
/// # Safety
/// As for [`shfl_idx_sync`]: the caller is in `mask`, all of `mask` arrives with the same
/// `mask` and `width`, and the source lane (when in range) is in `mask`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_xor_sync<T: bytemuck::Pod>(mask: u32, value: T, lane_mask: u32, width: u32) -> T {
    let _site = arch::site(c"warp::shfl_xor_sync", Location::caller());
    let c = shuffle_c(width, CLAMP_HIGH);
    let (moved, _) = shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract; every word uses the same
        // lane arguments, so every word satisfies it.
        (unsafe { arch::shfl_sync_bfly_b32(mask, word, lane_mask, c) }, true)
    });
    moved
}

/// [`shfl_idx_sync`] with the predicate of `shfl.sync.idx.b32 d|p` (sm_70+): always
/// `true` for a valid `width`, since the source lane is always inside the segment.
///
/// # Safety
/// As for [`shfl_idx_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_idx_sync_p<T: bytemuck::Pod>(mask: u32, value: T, src_lane: u32, width: u32) -> (T, bool) {
    let _site = arch::site(c"warp::shfl_idx_sync_p", Location::caller());
    let c = shuffle_c(width, CLAMP_HIGH);
    shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract; every word uses the same
        // lane arguments, so every word satisfies it.
        unsafe { arch::shfl_sync_idx_b32_p(mask, word, src_lane, c) }
    })
}

/// [`shfl_up_sync`] with the predicate of `shfl.sync.up.b32 d|p` (sm_70+): `true` when
/// lane `lane - delta` is in the caller's segment and its value was read.
///
/// # Safety
/// As for [`shfl_up_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_up_sync_p<T: bytemuck::Pod>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
    let _site = arch::site(c"warp::shfl_up_sync_p", Location::caller());
    let c = shuffle_c(width, CLAMP_LOW);
    shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract, for every word alike.
        unsafe { arch::shfl_sync_up_b32_p(mask, word, delta, c) }
    })
}

/// [`shfl_down_sync`] with the predicate of `shfl.sync.down.b32 d|p` (sm_70+): `true`
/// when lane `lane + delta` is in the caller's segment and its value was read.
///
/// # Safety
/// As for [`shfl_down_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_down_sync_p<T: bytemuck::Pod>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
    let _site = arch::site(c"warp::shfl_down_sync_p", Location::caller());
    let c = shuffle_c(width, CLAMP_HIGH);
    shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract, for every word alike.
        unsafe { arch::shfl_sync_down_b32_p(mask, word, delta, c) }
    })
}

/// [`shfl_xor_sync`] with the predicate of `shfl.sync.bfly.b32 d|p` (sm_70+): `true`
/// when lane `lane ^ lane_mask` is not past the caller's segment and its value was read.
///
/// # Safety
/// As for [`shfl_xor_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_xor_sync_p<T: bytemuck::Pod>(
    mask: u32,
    value: T,
    lane_mask: u32,
    width: u32,
) -> (T, bool) {
    let _site = arch::site(c"warp::shfl_xor_sync_p", Location::caller());
    let c = shuffle_c(width, CLAMP_HIGH);
    shuffle_words(value, |word| {
        // SAFETY: forwarded from this function's contract, for every word alike.
        unsafe { arch::shfl_sync_bfly_b32_p(mask, word, lane_mask, c) }
    })
}

/// `vote.sync.ballot.b32` (sm_70+): bit `i` is set for each lane `i` of `mask` whose
/// `predicate` is true; bits of lanes outside `mask` are 0.
///
/// # Safety
/// The calling lane is in `mask`; every lane of `mask` reaches this vote with the same
/// `mask` and none has exited.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    let _site = arch::site(c"warp::ballot_sync", Location::caller());
    // SAFETY: forwarded from this function's contract.
    unsafe { arch::vote_sync_ballot(mask, predicate) }
}

/// `vote.sync.any.pred` (sm_70+): whether `predicate` is true in at least one lane of
/// `mask`.
///
/// # Safety
/// As for [`ballot_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn any_sync(mask: u32, predicate: bool) -> bool {
    let _site = arch::site(c"warp::any_sync", Location::caller());
    // SAFETY: forwarded from this function's contract.
    unsafe { arch::vote_sync_any(mask, predicate) }
}

/// `vote.sync.all.pred` (sm_70+): whether `predicate` is true in every lane of `mask`.
///
/// # Safety
/// As for [`ballot_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn all_sync(mask: u32, predicate: bool) -> bool {
    let _site = arch::site(c"warp::all_sync", Location::caller());
    // SAFETY: forwarded from this function's contract.
    unsafe { arch::vote_sync_all(mask, predicate) }
}

/// `vote.sync.uni.pred` (sm_70+): whether `predicate` has the same value in every lane
/// of `mask`.
///
/// # Safety
/// As for [`ballot_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn uni_sync(mask: u32, predicate: bool) -> bool {
    let _site = arch::site(c"warp::uni_sync", Location::caller());
    // SAFETY: forwarded from this function's contract.
    unsafe { arch::vote_sync_uni(mask, predicate) }
}

/// `activemask.b32` (sm_70+): the lanes executing this call together with the caller
/// (the caller's bit is always set). It synchronises nothing and is not a valid `mask` for
/// a later collective: lanes that will reach the same code, but that the scheduler runs
/// separately, are missing from it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn active_mask() -> u32 {
    let _site = arch::site(c"warp::active_mask", Location::caller());
    arch::activemask()
}

mod sealed {
    /// The value types `match.sync` compares, and the instruction width for each.
    pub trait Sealed: Copy {
        /// `match.any.sync` on the value's bits.
        ///
        /// # Safety
        /// As for [`super::match_any_sync`].
        unsafe fn match_any(self, mask: u32) -> u32;
        /// `match.all.sync` on the value's bits: `(mask or 0, all equal)`.
        ///
        /// # Safety
        /// As for [`super::match_all_sync`].
        unsafe fn match_all(self, mask: u32) -> (u32, bool);
    }
}

/// A value [`match_any_sync`] and [`match_all_sync`] can compare: `u32`, `i32` and `f32`
/// (with `match.*.sync.b32`), `u64`, `i64` and `f64` (with `match.*.sync.b64`). Values
/// are compared by their bits, so `0.0 != -0.0` and a NaN equals the same NaN bits.
pub trait MatchValue: sealed::Sealed {}

macro_rules! match_value {
    ($($t:ty => $bits:ty, $any:ident, $all:ident;)*) => {$(
        impl sealed::Sealed for $t {
            #[inline(always)]
            unsafe fn match_any(self, mask: u32) -> u32 {
                // SAFETY: forwarded from the caller's contract.
                unsafe { arch::$any(mask, bytemuck::cast::<$t, $bits>(self)) }
            }
            #[inline(always)]
            unsafe fn match_all(self, mask: u32) -> (u32, bool) {
                // SAFETY: forwarded from the caller's contract.
                unsafe { arch::$all(mask, bytemuck::cast::<$t, $bits>(self)) }
            }
        }
        impl MatchValue for $t {}
    )*};
}

match_value! {
    u32 => u32, match_any_sync_b32, match_all_sync_b32;
    i32 => u32, match_any_sync_b32, match_all_sync_b32;
    f32 => u32, match_any_sync_b32, match_all_sync_b32;
    u64 => u64, match_any_sync_b64, match_all_sync_b64;
    i64 => u64, match_any_sync_b64, match_all_sync_b64;
    f64 => u64, match_any_sync_b64, match_all_sync_b64;
}

/// `match.any.sync.b32` / `.b64` (sm_70+): the lanes of `mask` whose `value` has the same
/// bits as the caller's (the caller's own bit included).
///
/// # Safety
/// The calling lane is in `mask`; every lane of `mask` reaches this match with the same
/// `mask` and none has exited.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn match_any_sync<T: MatchValue>(mask: u32, value: T) -> u32 {
    let _site = arch::site(c"warp::match_any_sync", Location::caller());
    // SAFETY: forwarded from this function's contract.
    unsafe { value.match_any(mask) }
}

/// `match.all.sync.b32` / `.b64` (sm_70+): `Some(mask)` when every lane of `mask` has a
/// `value` with the same bits, `None` otherwise.
///
/// # Safety
/// As for [`match_any_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn match_all_sync<T: MatchValue>(mask: u32, value: T) -> Option<u32> {
    let _site = arch::site(c"warp::match_all_sync", Location::caller());
    // SAFETY: forwarded from this function's contract.
    let (lanes, all_equal) = unsafe { value.match_all(mask) };
    all_equal.then_some(lanes)
}

/// Reduces `value` over the lanes of `mask` with `op`; every lane of `mask` gets the same
/// bits. This is warpsafe's one warp reduction: the groups' `reduce`
/// ([`crate::group::Group::reduce`]), [`crate::reduce::warp`], the block, grid and scan
/// reductions built on them and the named `reduce_*_sync` functions below all come here.
/// It chooses its instructions at compile time, from the operator, the type and the
/// target:
///
/// - `redux.sync` (sm_80+; the emulator runs it as one `redux.sync` too): one instruction
///   for any mask, when the operator names one ([`Operator::REDUX`]: warpsafe's `Sum`,
///   `Min`, `Max`, `BitAnd`, `BitOr`, `BitXor` over `u32` and `i32`);
/// - otherwise, when `mask` is the full warp or an aligned segment (`2^k` consecutive lanes
///   starting at a multiple of `2^k`, as a [`crate::group::Tile`] is), a butterfly of `k`
///   `shfl.sync.bfly` steps: after the step of distance `d` each lane holds the
///   combination of its aligned run of `2d` lanes, lower lanes first, so every lane ends
///   with the same bits (for a constant full mask the five steps unroll);
/// - any other mask: a tree over the members' ranks (rank = members below the lane) with
///   `shfl.sync.idx`: in the step of distance `d` (1, 2, 4, ...) every member combines the
///   partial result of rank `rank + d` (found with `fns.b32`) into its own, so rank 0 ends
///   with the whole reduction after `ceil(log2(members))` steps, and a last shuffle
///   broadcasts it from the lowest lane of `mask`.
///
/// `combine(a, b)` always gets the lower ranks' values in `a`, so the operator must be
/// associative but need not commute; the order of the combinations depends only on
/// `mask`, so float results are the same bits from run to run. (`redux.sync` serves only
/// integer operators, whose result does not depend on the order.)
///
/// # Safety
/// `mask` is not empty and the calling lane is in it; every lane of `mask` reaches this
/// reduction with the same `mask` and none has exited.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn reduce_sync<T: bytemuck::Pod, Op: Operator<T>>(mask: u32, value: T, op: Op) -> T {
    let _site = arch::site(c"warp::reduce_sync", Location::caller());
    if let Some(redux) = Op::REDUX {
        // SAFETY: forwarded from this function's contract.
        if let Some(result) = unsafe { redux_sync(redux, mask, value) } {
            return result;
        }
    }
    if mask == FULL_MASK {
        // SAFETY: forwarded; the whole warp is an aligned segment. The constant size lets
        // the five steps unroll.
        return unsafe { butterfly(FULL_MASK, arch::WARP_SIZE, value, op) };
    }
    if is_aligned_segment(mask) {
        // SAFETY: forwarded; `mask` is an aligned segment.
        return unsafe { butterfly(mask, mask.count_ones(), value, op) };
    }
    // SAFETY: forwarded from this function's contract.
    unsafe { reduce_over_ranks(mask, value, op) }
}

/// `redux.sync` of `value`'s 32 bits in the variant `redux` names, when the target has it
/// (sm_80+, and the emulator) and `T` has 4 bytes; `None` otherwise. For a constant
/// operator and type this folds to one path at compile time.
///
/// # Safety
/// As for [`reduce_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn redux_sync<T: bytemuck::Pod>(redux: Redux, mask: u32, value: T) -> Option<T> {
    if core::mem::size_of::<T>() != 4 {
        return None;
    }
    #[cfg(any(target_feature = "sm_80", not(target_arch = "nvptx64")))]
    {
        use crate::op::ReduxKind;
        let bits: u32 = bytemuck::pod_read_unaligned(bytemuck::bytes_of(&value));
        // SAFETY: forwarded from this function's contract.
        let result = unsafe {
            match redux.0 {
                ReduxKind::Add => arch::redux_sync_add(mask, bits),
                ReduxKind::MinU32 => arch::redux_sync_min_u32(mask, bits),
                ReduxKind::MaxU32 => arch::redux_sync_max_u32(mask, bits),
                ReduxKind::MinS32 => arch::redux_sync_min_s32(mask, bits as i32) as u32,
                ReduxKind::MaxS32 => arch::redux_sync_max_s32(mask, bits as i32) as u32,
                ReduxKind::And => arch::redux_sync_and(mask, bits),
                ReduxKind::Or => arch::redux_sync_or(mask, bits),
                ReduxKind::Xor => arch::redux_sync_xor(mask, bits),
            }
        };
        Some(bytemuck::pod_read_unaligned(&result.to_ne_bytes()))
    }
    #[cfg(all(not(target_feature = "sm_80"), target_arch = "nvptx64"))]
    {
        let _ = (redux, mask, value);
        None
    }
}

/// The butterfly of [`reduce_sync`] over an aligned segment of `size` lanes (`mask`).
/// Partners `lane ^ d` stay inside the segment because it is aligned to its size.
///
/// # Safety
/// `mask` is an aligned segment of `size` lanes containing the caller, and all of its
/// lanes call this together.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn butterfly<T: bytemuck::Pod, Op: Operator<T>>(mask: u32, size: u32, value: T, op: Op) -> T {
    let lane = arch::lane_id();
    let mut acc = value;
    let mut d = 1;
    while d < size {
        // SAFETY: caller's contract; lane ^ d is in the segment.
        let other = unsafe { shfl_xor_sync(mask, acc, d, arch::WARP_SIZE) };
        acc = if lane & d == 0 { op.combine(acc, other) } else { op.combine(other, acc) };
        d *= 2;
    }
    acc
}

/// Whether `mask` is `2^k` consecutive lanes starting at a multiple of `2^k`.
#[inline(always)]
fn is_aligned_segment(mask: u32) -> bool {
    let size = mask.count_ones();
    let base = mask.trailing_zeros();
    size.is_power_of_two()
        && base & (size - 1) == 0
        && (mask >> base) == (u32::MAX >> (arch::WARP_SIZE - size))
}

/// The rank tree of [`reduce_sync`], for any non-empty `mask`.
///
/// # Safety
/// As for [`reduce_sync`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn reduce_over_ranks<T: bytemuck::Pod, Op: Operator<T>>(mask: u32, value: T, op: Op) -> T {
    let members = mask.count_ones();
    let rank = (mask & arch::lanemask_lt()).count_ones();
    let mut acc = value;
    let mut distance = 1;
    // `members` is the same in every lane of `mask`, so all members run the same number
    // of steps and meet at every shuffle.
    while distance < members {
        let partner = rank + distance;
        let has_partner = partner < members;
        let src = if has_partner { arch::nth_set_lane(mask, partner) } else { arch::lane_id() };
        // SAFETY: every lane of `mask` executes this step (contract above); `src` is a
        // member's lane or the caller's own, which is in `mask` too.
        let theirs = unsafe { shfl_idx_sync(mask, acc, src, arch::WARP_SIZE) };
        if has_partner {
            acc = op.combine(acc, theirs);
        }
        distance *= 2;
    }
    // SAFETY: as above; the lowest lane of `mask` (rank 0) is a member.
    unsafe { shfl_idx_sync(mask, acc, mask.trailing_zeros(), arch::WARP_SIZE) }
}

/// Names [`reduce_sync`] with a built-in operator over one 32-bit type, as CUDA's
/// `__reduce_*_sync` do.
macro_rules! named_reductions {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($t:ty) = $op:ident, $instr:literal;
    )*) => {$(
        $(#[$doc])*
        #[doc = concat!("\n\n[`reduce_sync`] with [`", stringify!($op), "`]: `", $instr, "` (sm_80+) when compiled ")]
        #[doc = "for sm_80 or newer (the emulator runs it as one `redux.sync`); on sm_70 a butterfly of `shfl.sync.bfly` "]
        #[doc = "for a full or aligned mask and a tree of `shfl.sync.idx` over the ranks of any other. Every lane of "]
        #[doc = "`mask` receives the result."]
        ///
        /// # Safety
        /// `mask` is not empty and the calling lane is in it; every lane of `mask` reaches
        /// this reduction with the same `mask` and none has exited.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(mask: u32, value: $t) -> $t {
            // SAFETY: forwarded from this function's contract.
            unsafe { reduce_sync(mask, value, $op) }
        }
    )*};
}

named_reductions! {
    /// The wrapping sum of `value` over the lanes of `mask`.
    fn reduce_add_sync(u32) = Sum, "redux.sync.add.s32";
    /// The unsigned minimum of `value` over the lanes of `mask`.
    fn reduce_min_sync_u32(u32) = Min, "redux.sync.min.u32";
    /// The unsigned maximum of `value` over the lanes of `mask`.
    fn reduce_max_sync_u32(u32) = Max, "redux.sync.max.u32";
    /// The signed minimum of `value` over the lanes of `mask`.
    fn reduce_min_sync_i32(i32) = Min, "redux.sync.min.s32";
    /// The signed maximum of `value` over the lanes of `mask`.
    fn reduce_max_sync_i32(i32) = Max, "redux.sync.max.s32";
    /// The bitwise and of `value` over the lanes of `mask`.
    fn reduce_and_sync(u32) = BitAnd, "redux.sync.and.b32";
    /// The bitwise or of `value` over the lanes of `mask`.
    fn reduce_or_sync(u32) = BitOr, "redux.sync.or.b32";
    /// The bitwise exclusive or of `value` over the lanes of `mask`.
    fn reduce_xor_sync(u32) = BitXor, "redux.sync.xor.b32";
}

/// `bar.warp.sync` (sm_70+), CUDA's `__syncwarp`: waits until every lane of `mask` has
/// reached it; memory accesses the lanes of `mask` made before it are visible to all of
/// them after it.
///
/// # Safety
/// The calling lane is in `mask`; every lane of `mask` reaches this barrier with the same
/// `mask` and none has exited.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_warp(mask: u32) {
    let _site = arch::site(c"warp::sync_warp", Location::caller());
    // SAFETY: forwarded from this function's contract.
    unsafe { arch::bar_warp_sync(mask) }
}

/// Elects one leader among the lanes of `mask`: `true` in exactly one of them.
///
/// Lowers to `elect.sync` (sm_90+) when compiled for sm_90 or newer (chosen at compile
/// time; the hardware picks the leader). On sm_70 and sm_80 it is `vote.sync.ballot.b32`
/// (sm_70+) with a true predicate, which like `elect.sync` waits for all of `mask` and
/// returns the lanes of `mask` that arrived (all of them, by the contract below, so the
/// lanes of `mask & active_mask()` once they have converged there), and elects the
/// lowest of them. Unlike reading `active_mask()` alone, the vote cannot elect two
/// leaders when the lanes of `mask` arrive at different times.
///
/// # Safety
/// The calling lane is in `mask`; every lane of `mask` reaches this election with the
/// same `mask` and none has exited.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn elect_sync(mask: u32) -> bool {
    let _site = arch::site(c"warp::elect_sync", Location::caller());
    #[cfg(any(target_feature = "sm_90", not(target_arch = "nvptx64")))]
    {
        // SAFETY: forwarded from this function's contract.
        unsafe { arch::elect_sync(mask) }
    }
    #[cfg(all(not(target_feature = "sm_90"), target_arch = "nvptx64"))]
    {
        // SAFETY: forwarded from this function's contract.
        let arrived = unsafe { arch::vote_sync_ballot(mask, true) };
        arch::lanemask_eq() == arrived & arrived.wrapping_neg()
    }
}

/// `%lanemask_eq` (sm_70+): only the caller's lane bit set (`1 << lane_id()`).
#[inline(always)]
pub fn lanemask_eq() -> u32 {
    arch::lanemask_eq()
}

/// `%lanemask_lt` (sm_70+): the bits of the lanes below the caller's.
#[inline(always)]
pub fn lanemask_lt() -> u32 {
    arch::lanemask_lt()
}

/// `%lanemask_le` (sm_70+): the bits of the caller's lane and the lanes below it.
#[inline(always)]
pub fn lanemask_le() -> u32 {
    arch::lanemask_le()
}

/// `%lanemask_gt` (sm_70+): the bits of the lanes above the caller's.
#[inline(always)]
pub fn lanemask_gt() -> u32 {
    arch::lanemask_gt()
}

/// `%lanemask_ge` (sm_70+): the bits of the caller's lane and the lanes above it.
#[inline(always)]
pub fn lanemask_ge() -> u32 {
    arch::lanemask_ge()
}
