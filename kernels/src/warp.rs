//! Warp collectives.
//!
//! Since Volta (sm_70) the 32 lanes of a warp are scheduled independently: they may
//! diverge and need not run in lockstep. A collective therefore names the lanes that take
//! part in a mask, and every lane in that mask must reach the same collective. The
//! functions here state, in their `# Safety` sections, which lanes must be present.

use crate::arch::{self, FULL_MASK};

/// A value that a warp can sum with shuffles: moved with `shfl.sync` and added with the
/// type's own `+` (wrapping for integers).
pub trait WarpSum: Copy {
    /// `shfl.sync.down` of `self` by `delta` lanes across the full warp.
    ///
    /// # Safety
    /// All 32 lanes of the warp execute this same call together.
    unsafe fn shfl_down_full(self, delta: u32) -> Self;
    /// The sum of two values (wrapping for integers).
    fn add(self, other: Self) -> Self;
}

impl WarpSum for u32 {
    #[inline(always)]
    unsafe fn shfl_down_full(self, delta: u32) -> Self {
        // SAFETY: the caller guarantees all 32 lanes take part, so FULL_MASK is exact.
        unsafe { arch::shfl_down_sync_u32(FULL_MASK, self, delta) }
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

impl WarpSum for f32 {
    #[inline(always)]
    unsafe fn shfl_down_full(self, delta: u32) -> Self {
        // SAFETY: the caller guarantees all 32 lanes take part, so FULL_MASK is exact.
        unsafe { arch::shfl_down_sync_f32(FULL_MASK, self, delta) }
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
}

/// Sums `value` over the 32 lanes of the warp with five `shfl.sync.down` steps (offsets
/// 16, 8, 4, 2, 1). Lane 0 receives the total; other lanes receive partial sums.
///
/// For floats the order of additions is fixed, so the result is bitwise reproducible:
/// lane 0 gets `((v0+v16) + (v8+v24)) + ...` as the tree above prescribes.
///
/// # Safety
/// All 32 lanes of the warp call this function together: none has exited and none is on
/// a different path. A block whose size is a multiple of 32, in which every thread calls
/// this outside any lane-dependent branch, satisfies it.
#[inline(always)]
pub unsafe fn sum_full_warp<T: WarpSum>(value: T) -> T {
    let mut acc = value;
    let mut delta = arch::WARP_SIZE / 2;
    while delta > 0 {
        // SAFETY: forwarded from this function's contract: all 32 lanes are here.
        acc = acc.add(unsafe { acc.shfl_down_full(delta) });
        delta /= 2;
    }
    acc
}
