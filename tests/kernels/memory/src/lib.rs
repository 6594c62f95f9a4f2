//! Test kernels for `warpsafe::fence`, `warpsafe::atomic` and `warpsafe::barrier`.
//!
//! - `mem_probe_*`: call every API once, in a fixed order, so the PTX tests can compare
//!   the instructions of each kernel with the expected list.
//! - `mem_mp_*`: inter-block message passing (producer warps publish, consumer warps of
//!   the next block check), one kernel per hand-off protocol.
//! - `mem_counters_*`: every atomic operation on counters at each scope.
//! - `mem_barrier_*`: whole-block, reduction and named barriers.
//!
//! Shared memory: Rust cannot place a `static` in PTX's `.shared` state space (it has no
//! address spaces, and `#[link_section = ".shared"]` still yields a `.global`), so
//! `shared_array!` declares a kernel-scope `.shared` array in `asm!` and converts its
//! address to a generic pointer with `cvta.shared.u64`.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

#[cfg(target_arch = "nvptx64")]
mod gpu;
