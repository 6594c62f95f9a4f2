//! Warp collectives: `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`, `bar.warp.sync`,
//! `activemask`, `elect.sync`, through LLVM's NVVM intrinsics (all `convergent`).

mod llvm {
    extern "C" {
        // shfl.sync.down.b32 (convergent)
        #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
        pub fn shfl_sync_down_i32(mask: u32, value: i32, delta: u32, clamp: u32) -> i32;
        #[link_name = "llvm.nvvm.shfl.sync.down.f32"]
        pub fn shfl_sync_down_f32(mask: u32, value: f32, delta: u32, clamp: u32) -> f32;
    }
}

/// The bits of the shuffle's `c` operand for a full 32-lane segment: the clamp value 31
/// in bits 0-4 and a segment mask of 0 in bits 8-12.
const CLAMP_FULL_SEGMENT_DOWN: u32 = 0x1f;

/// `shfl.sync.down.b32` over the whole warp: returns the value of lane `lane + delta`, or
/// the caller's own `value` where `lane + delta` is past lane 31.
///
/// # Safety
/// - The calling lane is in `mask`.
/// - Every lane named in `mask` executes this same shuffle (same `mask`) before any of
///   them continues; none of them has exited. The hardware does not check this: a
///   missing lane makes the shuffle hang or read an undefined value.
/// - A lane reads from `lane + delta`; that lane must be in `mask`, or the result is
///   undefined.
#[inline(always)]
pub unsafe fn shfl_down_sync_u32(mask: u32, value: u32, delta: u32) -> u32 {
    // SAFETY: the caller upholds the convergence contract above.
    unsafe { llvm::shfl_sync_down_i32(mask, value as i32, delta, CLAMP_FULL_SEGMENT_DOWN) as u32 }
}

/// `shfl.sync.down.b32` on an `f32` (moved bit for bit).
///
/// # Safety
/// As for [`shfl_down_sync_u32`].
#[inline(always)]
pub unsafe fn shfl_down_sync_f32(mask: u32, value: f32, delta: u32) -> f32 {
    // SAFETY: the caller upholds the convergence contract of `shfl_down_sync_u32`.
    unsafe { llvm::shfl_sync_down_f32(mask, value, delta, CLAMP_FULL_SEGMENT_DOWN) }
}
