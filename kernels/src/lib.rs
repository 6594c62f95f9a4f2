//! # warpsafe (device side)
//!
//! The `#![no_std]` library that GPU kernels written in Rust depend on. It compiles for
//! rustc's `nvptx64-nvidia-cuda` target (through `warpsafe-build`) and for the host.
//!
//! Layering, from the bottom:
//! - [`arch`](crate::arch) is the only module that knows what it runs on. On the GPU it
//!   lowers to LLVM NVVM intrinsics, which LLVM marks `convergent`, so no optimisation
//!   may move a warp collective across a branch. Inline `asm!` is not convergent on this
//!   toolchain and is therefore never used for a collective.
//! - [`thread`] reads thread, block and grid coordinates.
//! - [`warp`] holds warp collectives; every one states the hardware rule it relies on.
//!
//! Kernel entry points are not part of this crate: a crate that defines kernels depends on
//! `warpsafe` and declares its own `extern "ptx-kernel"` functions, so its PTX holds its
//! kernels and nothing of warpsafe's own (those live in `warpsafe-entry`).
//!
//! On the host target the GPU-only modules are compiled out; the CPU emulator that runs
//! kernels without a GPU will provide a host `arch` backend.
#![no_std]
// NVVM intrinsics are the only way to reach the convergent warp collectives from Rust on
// this target (see `arch`); the feature is internal to rustc, hence the allow. `asm!` on
// nvptx64 is still experimental; it is used only for non-collective instructions.
#![cfg_attr(
    target_arch = "nvptx64",
    feature(link_llvm_intrinsics, asm_experimental_arch),
    allow(internal_features)
)]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

#[cfg(target_arch = "nvptx64")]
pub mod arch;
#[cfg(target_arch = "nvptx64")]
pub mod atomic;
#[cfg(target_arch = "nvptx64")]
pub mod barrier;
#[cfg(target_arch = "nvptx64")]
pub mod fence;
#[cfg(target_arch = "nvptx64")]
pub mod group;
pub mod op;
#[cfg(target_arch = "nvptx64")]
pub mod thread;
#[cfg(target_arch = "nvptx64")]
pub mod warp;

/// A panic in a kernel cannot unwind: it executes `trap`, which aborts the whole launch,
/// and the host sees `CUDA_ERROR_LAUNCH_FAILED` (or an illegal-instruction error) from the
/// next synchronising call.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    arch::trap()
}
