//! NVVM intrinsic bindings for `nvptx64-nvidia-cuda`: special registers and `trap` here,
//! warp collectives in [`warp`], fences, atomics and barriers in [`memory`].

mod check;
mod declare;
mod memory;
mod warp;
pub use check::*;
pub use declare::*;
pub use memory::*;
pub use warp::*;

use super::Dim3;

/// Declarations of the LLVM intrinsics. `link_name` binds each to the intrinsic that
/// LLVM's NVPTX backend lowers to exactly one PTX instruction (named beside it).
mod llvm {
    extern "C" {
        // mov.u32 %r, %tid.{x,y,z} / %ntid.* / %ctaid.* / %nctaid.* / %laneid
        #[link_name = "llvm.nvvm.read.ptx.sreg.tid.x"]
        pub fn tid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.tid.y"]
        pub fn tid_y() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.tid.z"]
        pub fn tid_z() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.x"]
        pub fn ntid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.y"]
        pub fn ntid_y() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.z"]
        pub fn ntid_z() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.x"]
        pub fn ctaid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.y"]
        pub fn ctaid_y() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.z"]
        pub fn ctaid_z() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.nctaid.x"]
        pub fn nctaid_x() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.nctaid.y"]
        pub fn nctaid_y() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.nctaid.z"]
        pub fn nctaid_z() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
        pub fn laneid() -> u32;

        // trap
        #[link_name = "llvm.trap"]
        pub fn trap() -> !;
    }

    extern "C" {
        /// CUDA's device-side printf: `args` points to the arguments packed one after
        /// another, each aligned to its own size. The driver prints the buffer to the
        /// host process's stdout when the host next synchronises.
        pub fn vprintf(format: *const u8, args: *const u8) -> i32;
    }
}

/// `%tid`: this thread's index within its block.
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: reading a special register has no precondition.
    unsafe { Dim3 { x: llvm::tid_x(), y: llvm::tid_y(), z: llvm::tid_z() } }
}

/// `%ntid`: the block's shape.
#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: reading a special register has no precondition.
    unsafe { Dim3 { x: llvm::ntid_x(), y: llvm::ntid_y(), z: llvm::ntid_z() } }
}

/// `%ctaid`: this block's index within the grid.
#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: reading a special register has no precondition.
    unsafe { Dim3 { x: llvm::ctaid_x(), y: llvm::ctaid_y(), z: llvm::ctaid_z() } }
}

/// `%nctaid`: the grid's shape in blocks.
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: reading a special register has no precondition.
    unsafe { Dim3 { x: llvm::nctaid_x(), y: llvm::nctaid_y(), z: llvm::nctaid_z() } }
}

/// `%laneid`: this thread's lane within its warp, `0..32`.
#[inline(always)]
pub fn lane_id() -> u32 {
    // SAFETY: reading a special register has no precondition.
    unsafe { llvm::laneid() }
}

/// `fns.b32`: the lane of the `n`-th (from 0) set bit of `mask`, counting up from lane 0;
/// 32 or more when `mask` has at most `n` bits set. Not a collective: it reads nothing of
/// other lanes, so `asm!` (which is not `convergent`) is safe here.
#[inline(always)]
pub fn nth_set_lane(mask: u32, n: u32) -> u32 {
    let lane: u32;
    // SAFETY: fns.b32 only computes on its register operands. Its offset operand is
    // 1-based and must be positive when the base is 0.
    unsafe {
        core::arch::asm!(
            "fns.b32 {lane}, {mask}, 0, {offset};",
            lane = out(reg32) lane,
            mask = in(reg32) mask,
            offset = in(reg32) n + 1,
            options(pure, nomem, nostack)
        );
    }
    // fns returns 0xffffffff when there is no such bit.
    lane.min(32)
}

/// Prints `format` (a NUL-terminated C format string) with the arguments packed in `args`
/// through CUDA's device printf. Output appears on the host's stdout at its next
/// synchronisation with the device.
///
/// # Safety
/// `format` is NUL-terminated and every conversion in it matches the argument at the same
/// position of `args`, which is laid out as CUDA's `vprintf` expects (each argument at an
/// offset aligned to its size; 32-bit integers as 4 bytes, pointers and 64-bit values as
/// 8, strings as pointers to NUL-terminated bytes).
#[inline(always)]
pub unsafe fn vprintf(format: &core::ffi::CStr, args: *const u8) {
    // SAFETY: forwarded from the caller.
    unsafe { llvm::vprintf(format.as_ptr().cast(), args) };
}

/// `trap`: aborts the whole kernel launch; the host sees a launch failure.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` has no precondition; it never returns.
    unsafe { llvm::trap() }
}
