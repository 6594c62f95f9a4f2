//! Warp-aggregated atomics: one atomic per warp for the lanes that want one.
//!
//! When many threads update one counter, each atomic waits for the one before it at the
//! memory (L2) slice that owns the address. CUDA's Volta notes suggest aggregating per
//! warp: the lanes that take the branch with the atomic combine their operands with
//! shuffles, one lane (the leader) does a single atomic with the combination, and for
//! `fetch_add` the leader's previous value is shuffled back so that each lane gets the
//! value it would have seen had the lanes done their atomics one after another in lane
//! order. The result is the same as per-thread atomics: the final value is equal, and
//! the values `fetch_add` returns are one valid serialisation of the per-thread ones.
//!
//! The participating lanes are a [`Coalesced`] group: the lanes executing the call
//! together. Lanes that the scheduler runs separately form separate groups, each with
//! its own atomic, which is still correct. The group layer checks, before each
//! collective, that its lanes are present (see [`crate::group`]).
//!
//! Every atomic here is `.relaxed` at the target's scope: an aggregated atomic publishes
//! nothing for the other lanes, so ordering must come from a fence (see
//! [`crate::fence`]).
//!
//! ```ignore
//! use warpsafe::atomic::{DeviceAtomicU32, Relaxed};
//! // SAFETY: `counter` is a valid global u32 accessed only atomically.
//! let counter = unsafe { DeviceAtomicU32::from_ptr(counter_ptr) };
//! if keep {
//!     let slot = warpsafe::reduce::aggregate::fetch_add(counter, 1);
//!     // `slot` is unique: each kept thread writes its own output slot.
//! }
//! ```

use crate::atomic::{Atomic, AtomicScope, Relaxed};
use crate::group::{Coalesced, Group};
use crate::op::{BitAnd, BitOr, BitXor, Max, Min, Operator, Sum};

mod sealed {
    pub trait Sealed {}
}

/// An integer type with device atomics: `u32`, `i32`, `u64`, `i64`. Sealed. Its methods
/// are the plain one-per-thread atomics the aggregated forms are built on.
pub trait AtomicInteger: bytemuck::Pod + sealed::Sealed {
    /// `atom.add` at `S`'s scope, relaxed; returns the previous value.
    fn fetch_add_relaxed<S: AtomicScope>(target: &Atomic<Self, S>, value: Self) -> Self;
    /// `red.add`, relaxed.
    fn add_relaxed<S: AtomicScope>(target: &Atomic<Self, S>, value: Self);
    /// `red.min`, relaxed.
    fn min_relaxed<S: AtomicScope>(target: &Atomic<Self, S>, value: Self);
    /// `red.max`, relaxed.
    fn max_relaxed<S: AtomicScope>(target: &Atomic<Self, S>, value: Self);
    /// `red.and`, relaxed.
    fn and_relaxed<S: AtomicScope>(target: &Atomic<Self, S>, value: Self);
    /// `red.or`, relaxed.
    fn or_relaxed<S: AtomicScope>(target: &Atomic<Self, S>, value: Self);
    /// `red.xor`, relaxed.
    fn xor_relaxed<S: AtomicScope>(target: &Atomic<Self, S>, value: Self);
}

macro_rules! atomic_integer {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl AtomicInteger for $t {
            #[inline(always)]
            fn fetch_add_relaxed<S: AtomicScope>(target: &Atomic<$t, S>, value: $t) -> $t {
                target.fetch_add(value, Relaxed)
            }
            #[inline(always)]
            fn add_relaxed<S: AtomicScope>(target: &Atomic<$t, S>, value: $t) {
                target.add(value, Relaxed)
            }
            #[inline(always)]
            fn min_relaxed<S: AtomicScope>(target: &Atomic<$t, S>, value: $t) {
                target.min(value, Relaxed)
            }
            #[inline(always)]
            fn max_relaxed<S: AtomicScope>(target: &Atomic<$t, S>, value: $t) {
                target.max(value, Relaxed)
            }
            #[inline(always)]
            fn and_relaxed<S: AtomicScope>(target: &Atomic<$t, S>, value: $t) {
                target.and(value, Relaxed)
            }
            #[inline(always)]
            fn or_relaxed<S: AtomicScope>(target: &Atomic<$t, S>, value: $t) {
                target.or(value, Relaxed)
            }
            #[inline(always)]
            fn xor_relaxed<S: AtomicScope>(target: &Atomic<$t, S>, value: $t) {
                target.xor(value, Relaxed)
            }
        }
    )*};
}
atomic_integer!(u32, i32, u64, i64);

/// `fetch_add` with one atomic per group of converged lanes: adds `value` (wrapping) to
/// `target` and returns the value `target` held before this lane's addition, as if the
/// lanes of the group had added one after another in lane order (the group's first lane
/// gets the value before the group's single `atom.add`). Relaxed.
#[inline(always)]
#[track_caller]
pub fn fetch_add<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T) -> T
where
    Sum: Operator<T>,
{
    let group = Coalesced::active();
    let before_me = group.exclusive_scan(value, Sum);
    let total = group.shfl(Sum.combine(before_me, value), group.size() - 1);
    let base = if group.thread_rank() == 0 { T::fetch_add_relaxed(target, total) } else { Sum.identity() };
    let base = group.shfl(base, 0);
    Sum.combine(base, before_me)
}

/// Applies `op` to the values of the converged lanes with shuffles, then the group's
/// first lane applies the result to `target` with `apply` (one `red`).
#[inline(always)]
#[track_caller]
fn aggregate<T: AtomicInteger, Op: Operator<T>>(value: T, op: Op, apply: impl FnOnce(T)) {
    let group = Coalesced::active();
    let combined = group.reduce(value, op);
    if group.thread_rank() == 0 {
        apply(combined);
    }
}

/// Adds `value` (wrapping) to `target` with one `red.add` per group of converged lanes.
/// Relaxed.
#[inline(always)]
#[track_caller]
pub fn add<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    Sum: Operator<T>,
{
    aggregate(value, Sum, |v| T::add_relaxed(target, v));
}

/// Lowers `target` to `value` if smaller, with one `red.min` per group of converged
/// lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn min<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    Min: Operator<T>,
{
    aggregate(value, Min, |v| T::min_relaxed(target, v));
}

/// Raises `target` to `value` if larger, with one `red.max` per group of converged
/// lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn max<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    Max: Operator<T>,
{
    aggregate(value, Max, |v| T::max_relaxed(target, v));
}

/// `target &= value` with one `red.and` per group of converged lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn and<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    BitAnd: Operator<T>,
{
    aggregate(value, BitAnd, |v| T::and_relaxed(target, v));
}

/// `target |= value` with one `red.or` per group of converged lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn or<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    BitOr: Operator<T>,
{
    aggregate(value, BitOr, |v| T::or_relaxed(target, v));
}

/// `target ^= value` with one `red.xor` per group of converged lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn xor<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    BitXor: Operator<T>,
{
    aggregate(value, BitXor, |v| T::xor_relaxed(target, v));
}
