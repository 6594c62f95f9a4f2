//! NVVM intrinsic bindings for `nvptx64-nvidia-cuda`.

/// Declarations of the LLVM intrinsics. `link_name` binds each to the intrinsic that
/// LLVM's NVPTX backend lowers to exactly one PTX instruction (named beside it).
mod llvm {
    extern "C" {
        // mov.u32 %r, %tid.x / %ntid.x / %ctaid.x / %nctaid.x / %laneid
        #[link_name = "llvm.nvvm.read.ptx.sreg.tid.x"]
        pub fn tid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.x"]
        pub fn ntid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.x"]
        pub fn ctaid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.nctaid.x"]
        pub fn nctaid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
        pub fn laneid() -> u32;

        // shfl.sync.down.b32 (convergent)
        #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
        pub fn shfl_sync_down_i32(mask: u32, value: i32, delta: u32, clamp: u32) -> i32;
        #[link_name = "llvm.nvvm.shfl.sync.down.f32"]
        pub fn shfl_sync_down_f32(mask: u32, value: f32, delta: u32, clamp: u32) -> f32;

        // trap
        #[link_name = "llvm.trap"]
        pub fn trap() -> !;
    }
}

/// `%tid.x`: this thread's index within its block along x.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::tid_x() }
}

/// `%ntid.x`: the block's size along x.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::ntid_x() }
}

/// `%ctaid.x`: this block's index within the grid along x.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::ctaid_x() }
}

/// `%nctaid.x`: the grid's size in blocks along x.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::nctaid_x() }
}

/// `%laneid`: this thread's lane within its warp, `0..32`.
#[inline(always)]
pub fn lane_id() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::laneid() }
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

/// `trap`: aborts the whole kernel launch; the host sees a launch failure.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` has no precondition; it never returns.
    unsafe { llvm::trap() }
}
