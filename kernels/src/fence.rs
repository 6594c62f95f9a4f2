//! Memory fences (sm_70+).
//!
//! A fence orders the calling thread's own memory accesses; it moves no data and waits
//! for no other thread. What it guarantees, for a fence of scope *S* (the threads of the
//! block, of the GPU, or of the whole system):
//!
//! - **Publishing** (a fence *before* a write): let thread A write some data, execute a
//!   fence of scope *S*, then write a flag (a strong write: an atomic store, a reduction
//!   or a volatile store). Any thread B within *S* that reads that flag value with a
//!   strong read, and then itself executes a fence of scope *S* (or made that read an
//!   [`Acquire`](crate::atomic::Acquire) load), sees all of A's data writes, or later
//!   values of those locations: never the values they held before A wrote them.
//! - **Nothing more**: a fence does not make a write visible sooner, and a thread that
//!   reads the flag without ordering its own later reads after that read (no fence, no
//!   acquire) may still see the old data. Both sides need ordering.
//! - **Scope**: the guarantee holds only for threads inside the fence's scope. A block
//!   fence orders A's accesses only as observed by threads of A's block; a device fence
//!   as observed by every thread on the GPU; a system fence also as observed by the host
//!   and other GPUs (for example through mapped or managed memory).
//!
//! The `*_sc` fences (`fence.sc`) are in addition sequentially consistent: all `fence.sc`
//! operations whose scopes include one another fall into one total order that every
//! thread agrees on. That is what makes Dekker-style "write mine, then read yours"
//! patterns work, and what CUDA's `__threadfence*` functions are; they cost more than the
//! `fence.acq_rel` ones, which suffice for every publish/consume hand-off.
//!
//! | CUDA | warpsafe | PTX |
//! | --- | --- | --- |
//! | `__threadfence_block()` | [`block_sc`] | `fence.sc.cta` (`membar.cta`) |
//! | `__threadfence()` | [`device_sc`] | `fence.sc.gpu` (`membar.gl`) |
//! | `__threadfence_system()` | [`system_sc`] | `fence.sc.sys` (`membar.sys`) |
//! | `cuda::atomic_thread_fence(memory_order_acq_rel, thread_scope_block)` | [`block`] | `fence.acq_rel.cta` |
//! | `cuda::atomic_thread_fence(memory_order_acq_rel, thread_scope_device)` | [`device`] | `fence.acq_rel.gpu` |
//! | `cuda::atomic_thread_fence(memory_order_acq_rel, thread_scope_system)` | [`system`] | `fence.acq_rel.sys` |
//!
//! `membar.gl`'s `gl` is spelled `gpu` in `fence`: there is no `fence.sc.gl`.

use crate::arch::{self, Scope};

/// `fence.acq_rel.cta`: publishes to / acquires from the threads of this block.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn block() {
    arch::fence_acq_rel(Scope::Cta);
}

/// `fence.acq_rel.gpu`: publishes to / acquires from every thread on this GPU.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn device() {
    arch::fence_acq_rel(Scope::Gpu);
}

/// `fence.acq_rel.sys`: publishes to / acquires from every thread of the program, the
/// host's and other GPUs' included.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn system() {
    arch::fence_acq_rel(Scope::Sys);
}

/// `fence.sc.cta` (CUDA's `__threadfence_block`): [`block`], sequentially consistent.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn block_sc() {
    arch::fence_sc(Scope::Cta);
}

/// `fence.sc.gpu` (CUDA's `__threadfence`): [`device`], sequentially consistent.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn device_sc() {
    arch::fence_sc(Scope::Gpu);
}

/// `fence.sc.sys` (CUDA's `__threadfence_system`): [`system`], sequentially consistent.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn system_sc() {
    arch::fence_sc(Scope::Sys);
}
