//! Warp-aggregated atomics: one atomic per warp and target address for the lanes that
//! want one.
//!
//! When many threads update one counter, each atomic waits for the one before it at the
//! memory (L2) slice that owns the address. CUDA's Volta notes suggest aggregating per
//! warp: the lanes that take the branch with the atomic combine their operands with
//! shuffles, one lane (the leader) does a single atomic with the combination, and for
//! `fetch_add` the leader's previous value is shuffled back so that each lane gets the
//! value it would have seen had the lanes done their atomics one after another in lane
//! order. The result is the same as per-thread atomics: the final value of every target
//! is equal, and the values `fetch_add` returns are one valid serialisation of the
//! per-thread ones.
//!
//! Lanes may aim at different targets (the histogram pattern: `counts[bin]`). The lanes
//! are therefore first grouped by target address with `match.any` (a
//! [`Group::labeled_partition`] on the address): each address group combines its own
//! operands, and its lowest lane applies them to that address, so a warp makes one atomic
//! per distinct address, and lanes of one address group get the prefix of their own group.
//! The `match.any` costs a few cycles more than a single-target aggregation (sm_70 has no
//! cheaper way to learn which lanes share an address) and saves the most when many lanes
//! share few addresses.
//!
//! The participating lanes are a [`Coalesced`] group: the lanes executing the call
//! together. Lanes that the scheduler runs separately form separate groups, each with
//! its own atomics, which is still correct. The group layer checks, before each
//! collective, that its lanes are present (see [`crate::group`]).
//!
//! Every atomic here is `.relaxed` at the target's scope: an aggregated atomic publishes
//! nothing for the other lanes, so ordering must come from a fence (see
//! [`crate::fence`]).
//!
//! ```
//! use warpsafe::global::{AtomicSlice, Slice};
//! warpsafe::kernel! {
//!     /// Counts the even elements of `data` into `count[0]`: one atomic per warp for the
//!     /// lanes that found one, not one per lane.
//!     pub fn count_even(data: Slice<u32>, count: AtomicSlice<u32>) {
//!         for i in warpsafe::thread::grid_stride(data.len()) {
//!             if data[i] % 2 == 0 {
//!                 warpsafe::reduce::aggregate::add(count.at(0), 1);
//!             }
//!         }
//!     }
//! }
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! # static PROGRAM: warpsafe_host::Program =
//! #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[count_even.untyped()]);
//! # let device = warpsafe_host::Device::emulator();
//! # let f = device.load(&PROGRAM)?.kernel(&count_even)?;
//! # let data = device.upload(&(0..1000u32).collect::<Vec<_>>())?;
//! # let mut count = device.alloc_zeroed::<u32>(1)?;
//! # device.launch(&f, warpsafe_host::LaunchConfig::linear(2, 64), (&data, &mut count))?;
//! # assert_eq!(count.download()?, vec![500]);
//! # Ok(())
//! # }
//! ```

use crate::atomic::{Atomic, AtomicScope, Relaxed};
use crate::group::{Coalesced, Group, Partition};
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

/// The converged lanes that aim at the same address as the caller (`match.any` on the
/// address over the [`Coalesced`] lanes).
#[inline(always)]
#[track_caller]
fn same_target<T, S: AtomicScope>(target: &Atomic<T, S>) -> Partition {
    let address = target as *const Atomic<T, S> as usize as u64;
    Coalesced::active().labeled_partition(address)
}

/// `fetch_add` with one atomic per target address among the converged lanes: adds
/// `value` (wrapping) to `target` and returns the value `target` held before this lane's
/// addition, as if the lanes aiming at `target` had added one after another in lane order
/// (the lowest of them gets the value before their single `atom.add`). Relaxed.
#[inline(always)]
#[track_caller]
pub fn fetch_add<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T) -> T
where
    Sum: Operator<T>,
{
    let group = same_target(target);
    let before_me = group.exclusive_scan(value, Sum);
    let total = group.shfl(Sum.combine(before_me, value), group.size() - 1);
    let base = if group.thread_rank() == 0 { T::fetch_add_relaxed(target, total) } else { Sum.identity() };
    let base = group.shfl(base, 0);
    Sum.combine(base, before_me)
}

/// Applies `op` to the values of the converged lanes aiming at `target` with shuffles,
/// then the lowest of them applies the result to `target` with `apply` (one `red` per
/// address).
#[inline(always)]
#[track_caller]
fn aggregate<T: AtomicInteger, S: AtomicScope, Op: Operator<T>>(
    target: &Atomic<T, S>,
    value: T,
    op: Op,
    apply: impl FnOnce(&Atomic<T, S>, T),
) {
    let group = same_target(target);
    let combined = group.reduce(value, op);
    if group.thread_rank() == 0 {
        apply(target, combined);
    }
}

/// Adds `value` (wrapping) to `target` with one `red.add` per target address among the
/// converged lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn add<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    Sum: Operator<T>,
{
    aggregate(target, value, Sum, T::add_relaxed);
}

/// Lowers `target` to `value` if smaller, with one `red.min` per target address among
/// the converged lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn min<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    Min: Operator<T>,
{
    aggregate(target, value, Min, T::min_relaxed);
}

/// Raises `target` to `value` if larger, with one `red.max` per target address among
/// the converged lanes. Relaxed.
#[inline(always)]
#[track_caller]
pub fn max<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    Max: Operator<T>,
{
    aggregate(target, value, Max, T::max_relaxed);
}

/// `target &= value` with one `red.and` per target address among the converged lanes.
/// Relaxed.
#[inline(always)]
#[track_caller]
pub fn and<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    BitAnd: Operator<T>,
{
    aggregate(target, value, BitAnd, T::and_relaxed);
}

/// `target |= value` with one `red.or` per target address among the converged lanes.
/// Relaxed.
#[inline(always)]
#[track_caller]
pub fn or<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    BitOr: Operator<T>,
{
    aggregate(target, value, BitOr, T::or_relaxed);
}

/// `target ^= value` with one `red.xor` per target address among the converged lanes.
/// Relaxed.
#[inline(always)]
#[track_caller]
pub fn xor<T: AtomicInteger, S: AtomicScope>(target: &Atomic<T, S>, value: T)
where
    BitXor: Operator<T>,
{
    aggregate(target, value, BitXor, T::xor_relaxed);
}
