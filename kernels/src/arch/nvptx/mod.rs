//! NVVM intrinsic bindings for `nvptx64-nvidia-cuda`: special registers and `trap` here,
//! warp collectives in [`warp`], fences, atomics and barriers in [`memory`].

mod memory;
mod warp;
pub use memory::*;
pub use warp::*;

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
}

/// A `(x, y, z)` triple of special-register values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// The x component.
    pub x: u32,
    /// The y component.
    pub y: u32,
    /// The z component.
    pub z: u32,
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

/// `trap`: aborts the whole kernel launch; the host sees a launch failure.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` has no precondition; it never returns.
    unsafe { llvm::trap() }
}
