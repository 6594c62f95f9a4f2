//! The hardware layer: the one place that knows it runs on an NVIDIA GPU.
//!
//! Every function here is a thin, `#[inline(always)]` wrapper over one LLVM NVVM intrinsic.
//! Warp collectives go through intrinsics and never through `asm!`: LLVM declares the
//! `llvm.nvvm.shfl.sync.*` family `convergent`, which forbids hoisting or sinking a call
//! into or out of control flow that some lanes skip; rustc emits `asm!` without that
//! attribute on this toolchain.
//!
//! All collectives here are `unsafe fn`: the hardware cannot check the rules in their
//! `# Safety` sections, and breaking one is undefined behaviour (a hang, or garbage).
//! The safe layers above ([`crate::warp`]) establish those rules by construction.

mod nvptx;
pub use nvptx::*;

/// The mask naming all 32 lanes of a warp.
pub const FULL_MASK: u32 = u32::MAX;

/// Number of lanes in a warp on every NVIDIA GPU from sm_70 on.
pub const WARP_SIZE: u32 = 32;
