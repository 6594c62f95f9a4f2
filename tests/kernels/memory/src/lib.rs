//! Test kernels for `warpsafe::fence`, `warpsafe::atomic` and `warpsafe::barrier`.
//!
//! - `mem_probe_*`: call every API once, in a fixed order, so the PTX tests can compare
//!   the instructions of each kernel with the expected list.
//! - `mem_mp_*`: inter-block message passing (producer warps publish, consumer warps of
//!   the next block check), one kernel per hand-off protocol.
//! - `mem_counters_*`: every atomic operation on counters at each scope.
//! - `mem_barrier_*`: whole-block, reduction and named barriers.
//!
//! Shared memory comes from `warpsafe::shared!`.
#![no_std]

mod kernels;
pub use kernels::*;
