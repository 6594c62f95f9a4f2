//! Test kernels for `warpsafe::reduce`: warp and block reductions and scans written out
//! slot by slot for a CPU model to check, warp-aggregated atomics beside per-thread
//! ones, and the grid reductions for three user-defined operators (one non-commutative,
//! one over a 12-byte type, one over a 16-byte type).
#![no_std]

use warpsafe::op::Operator;

/// Values each thread of `reduce_warp_collectives` writes.
pub const WARP_SLOTS: usize = 14;
/// Values each thread of `reduce_warp_converged` writes.
pub const CONVERGED_SLOTS: usize = 7;
/// Values each thread of `reduce_block_collectives` writes.
pub const BLOCK_SLOTS: usize = 17;
/// What a thread writes into the slots of a collective it does not take part in.
pub const POISON: u32 = 0xdead_beef;
/// Counters of the atomic kernels: fetch_add, min, max, and, or, xor, add.
pub const COUNTERS: usize = 7;

/// A 2x2 matrix of wrapping `u32`s, row-major: matrix products are associative but not
/// commutative, so a reduction that reorders operands gives a different answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Mat2(pub [u32; 4]);

/// The matrix product (non-commutative).
#[derive(Clone, Copy, Debug, Default)]
pub struct MatMul;

impl Operator<Mat2> for MatMul {
    fn identity(self) -> Mat2 {
        Mat2([1, 0, 0, 1])
    }
    fn combine(self, a: Mat2, b: Mat2) -> Mat2 {
        let [a0, a1, a2, a3] = a.0;
        let [b0, b1, b2, b3] = b.0;
        Mat2([
            a0.wrapping_mul(b0).wrapping_add(a1.wrapping_mul(b2)),
            a0.wrapping_mul(b1).wrapping_add(a1.wrapping_mul(b3)),
            a2.wrapping_mul(b0).wrapping_add(a3.wrapping_mul(b2)),
            a2.wrapping_mul(b1).wrapping_add(a3.wrapping_mul(b3)),
        ])
    }
}

/// The matrix a thread contributes for input `x`.
pub fn mat_of(x: u32) -> Mat2 {
    Mat2([x & 7, (x >> 3) & 7, (x >> 6) & 7, 1 + ((x >> 9) & 7)])
}

/// The float a thread contributes for input `x`: a multiple of 1/8 below 125 in
/// magnitude, so sums of up to 2^14 of them are exact in `f32` whatever the order.
pub fn float_of(x: u32) -> f32 {
    (x % 1000) as f32 * 0.125 - 60.0
}

/// Count, wrapping sum and maximum of `u32`s: a 12-byte type (its size does not divide
/// 16, so grid reductions read it one element at a time) with a commutative operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Stats {
    /// How many values.
    pub count: u32,
    /// Their wrapping sum.
    pub sum: u32,
    /// Their maximum.
    pub max: u32,
}

/// Combines [`Stats`].
#[derive(Clone, Copy, Debug, Default)]
pub struct StatsOp;

impl Operator<Stats> for StatsOp {
    const COMMUTATIVE: bool = true;
    fn identity(self) -> Stats {
        Stats { count: 0, sum: 0, max: 0 }
    }
    fn combine(self, a: Stats, b: Stats) -> Stats {
        Stats { count: a.count.wrapping_add(b.count), sum: a.sum.wrapping_add(b.sum), max: a.max.max(b.max) }
    }
}

/// The [`Stats`] of one value.
pub fn stats_of(x: u32) -> Stats {
    Stats { count: 1, sum: x, max: x }
}

/// Four `u32` lanes: a 16-byte type, one per 16-byte vector load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Lanes(pub [u32; 4]);

/// Lane-wise wrapping sum of [`Lanes`] (commutative).
#[derive(Clone, Copy, Debug, Default)]
pub struct LaneSum;

impl Operator<Lanes> for LaneSum {
    const COMMUTATIVE: bool = true;
    fn identity(self) -> Lanes {
        Lanes([0; 4])
    }
    fn combine(self, a: Lanes, b: Lanes) -> Lanes {
        Lanes(core::array::from_fn(|i| a.0[i].wrapping_add(b.0[i])))
    }
}

/// The [`Lanes`] of one value.
pub fn lanes_of(x: u32) -> Lanes {
    Lanes([x, x.rotate_left(8), x ^ 0x5555_5555, x.wrapping_mul(3)])
}

/// Whether thread `i` of the atomic kernels takes the atomic branch for value `v`.
pub fn takes_atomics(v: u32) -> bool {
    !v.is_multiple_of(3)
}

/// The grid reductions of the three user-defined operators.
pub mod grid {
    use super::{LaneSum, Lanes, Mat2, MatMul, Stats, StatsOp};

    warpsafe::reduce_kernels! {
        Mat2, MatMul => reduce_mat_two_pass, reduce_mat_last_block, reduce_mat_cooperative, reduce_mat_fold_copies;
        Stats, StatsOp => reduce_stats_two_pass, reduce_stats_last_block, reduce_stats_cooperative, reduce_stats_fold_copies;
        Lanes, LaneSum => reduce_lanes_two_pass, reduce_lanes_last_block, reduce_lanes_cooperative, reduce_lanes_fold_copies;
    }
}

/// The warp, block and atomic test kernels.
pub mod kernels {
    use super::*;
    use core::ptr;
    use warpsafe::atomic::{Atomic, Device};
    use warpsafe::op::{BitAnd, BitOr, BitXor, Max, Min, Sum};
    use warpsafe::reduce::{aggregate, block, warp};
    use warpsafe::thread;

    warpsafe::shared! {
        /// Scratch of the `u32` block collectives.
        static SCRATCH_U32: [u32; block::SCRATCH_LEN];
    }
    warpsafe::shared! {
        /// Scratch of the `f32` block reduction.
        static SCRATCH_F32: [f32; block::SCRATCH_LEN];
    }
    warpsafe::shared! {
        /// Scratch of the matrix block collectives.
        static SCRATCH_MAT: [Mat2; block::SCRATCH_LEN];
    }

    /// This thread's index over the whole grid, in hardware order (block, then linear).
    fn global_thread() -> usize {
        let b = thread::block_idx();
        let g = thread::grid_dim();
        let block = (b.x + b.y * g.x + b.z * g.x * g.y) as usize;
        block * thread::block_threads() as usize + thread::linear_thread_idx() as usize
    }

    /// Writes `values` to `out[first..]`.
    ///
    /// # Safety
    /// `out` has `first + values.len()` writable elements.
    unsafe fn put(out: *mut u32, first: usize, values: &[u32]) {
        for (k, v) in values.iter().enumerate() {
            // SAFETY: in bounds by the contract.
            unsafe { *out.add(first + k) = *v };
        }
    }

    warpsafe::kernel! {
        /// Every warp collective of `warpsafe::reduce::warp` on the thread's input
        /// `input[t]`; thread `t` writes `out[WARP_SLOTS * t ..]`: safe sum, inclusive
        /// and exclusive sums over the warp's existing lanes, the matrix product and its
        /// inclusive scan (4 words each), then the raw full-warp sum, inclusive and
        /// exclusive sums (POISON in a warp that is not full).
        ///
        /// # Safety
        /// `input` has one element per thread of the grid, `out` WARP_SLOTS per thread.
        pub unsafe fn reduce_warp_collectives(input: *const u32, out: *mut u32) {
            let t = global_thread();
            // SAFETY: one element per thread.
            let x = unsafe { *input.add(t) };
            let out = out.wrapping_add(WARP_SLOTS * t);
            let mat = warp::reduce(mat_of(x), MatMul);
            let mat_prefix = warp::inclusive_scan(mat_of(x), MatMul);
            let safe = [warp::reduce(x, Sum), warp::inclusive_scan(x, Sum), warp::exclusive_scan(x, Sum)];
            let full = (thread::warp_idx() + 1) * 32 <= thread::block_threads();
            let raw = if full {
                // SAFETY: the warp is full (uniform branch) and every lane gets here.
                unsafe {
                    [warp::reduce_full(x, Sum), warp::inclusive_scan_full(x, Sum), warp::exclusive_scan_full(x, Sum)]
                }
            } else {
                [POISON; 3]
            };
            // SAFETY: WARP_SLOTS elements for this thread: 3 + 4 + 4 + 3.
            unsafe {
                put(out, 0, &safe);
                put(out, 3, &mat.0);
                put(out, 7, &mat_prefix.0);
                put(out, 11, &raw);
            }
        }
    }

    warpsafe::kernel! {
        /// Lanes in `members` (bit per lane) take a branch and reduce there with
        /// `warp::reduce_converged`, twice; thread `t` of a member lane writes the sum and
        /// the mask it covered, then the matrix product and its mask, to
        /// `out[CONVERGED_SLOTS * t ..]`; the others write nothing.
        ///
        /// # Safety
        /// `input` has one element per thread, `out` CONVERGED_SLOTS per thread.
        pub unsafe fn reduce_warp_converged(input: *const u32, members: u32, out: *mut u32) {
            let t = global_thread();
            // SAFETY: one element per thread.
            let x = unsafe { *input.add(t) };
            if (members >> thread::lane_id()) & 1 == 1 {
                let (sum, mask) = warp::reduce_converged(x, Sum);
                let (mat, mat_mask) = warp::reduce_converged(mat_of(x), MatMul);
                // SAFETY: CONVERGED_SLOTS elements for this thread.
                unsafe {
                    put(out.wrapping_add(CONVERGED_SLOTS * t), 0, &[sum, mask]);
                    put(out.wrapping_add(CONVERGED_SLOTS * t), 2, &mat.0);
                    put(out.wrapping_add(CONVERGED_SLOTS * t), 6, &[mat_mask]);
                }
            }
        }
    }

    warpsafe::kernel! {
        /// Every block collective of `warpsafe::reduce::block`, one after another on the
        /// same scratch (no barrier between them); thread `t` writes
        /// `out[BLOCK_SLOTS * t ..]`: sum, max, inclusive sum, exclusive sum, the f32 sum
        /// of `float_of` (bits), then the matrix product, its inclusive and exclusive scan
        /// (4 words each).
        ///
        /// # Safety
        /// `input` has one element per thread, `out` BLOCK_SLOTS per thread; every thread
        /// of each block runs the kernel.
        pub unsafe fn reduce_block_collectives(input: *const u32, out: *mut u32) {
            let t = global_thread();
            // SAFETY: one element per thread.
            let x = unsafe { *input.add(t) };
            let (u, f, m) = (SCRATCH_U32.slice(), SCRATCH_F32.slice(), SCRATCH_MAT.slice());
            // SAFETY: every thread of the block runs each call, in the same order; each
            // scratch is used only by these calls.
            let (ints, float, mats) = unsafe {
                (
                    [
                        block::reduce(u, x, Sum),
                        block::reduce(u, x, Max),
                        block::inclusive_scan(u, x, Sum),
                        block::exclusive_scan(u, x, Sum),
                    ],
                    block::reduce(f, float_of(x), Sum),
                    [
                        block::reduce(m, mat_of(x), MatMul),
                        block::inclusive_scan(m, mat_of(x), MatMul),
                        block::exclusive_scan(m, mat_of(x), MatMul),
                    ],
                )
            };
            let out = out.wrapping_add(BLOCK_SLOTS * t);
            // SAFETY: BLOCK_SLOTS elements for this thread: 4 + 1 + 12.
            unsafe {
                put(out, 0, &ints);
                put(out, 4, &[float.to_bits()]);
                for (k, mat) in mats.iter().enumerate() {
                    put(out, 5 + 4 * k, &mat.0);
                }
            }
        }
    }

    /// The atomic kernels' body for one integer type: thread `i < len` with a value `v`
    /// that `takes_atomics` takes the branch and applies fetch_add (writing the previous
    /// value to `olds[i]`), min, max, and, or, xor and add to its target's `COUNTERS`
    /// counters, either warp-aggregated or one atomic per thread. Thread `i`'s target is
    /// `targets[i]` (counters `COUNTERS * targets[i] ..`), or target 0 when `targets` is
    /// null.
    ///
    /// # Safety
    /// `values` and `olds` have `len` elements, `targets` is null or has `len` elements,
    /// `counters` has COUNTERS per target; nothing else accesses the counters during the
    /// launch.
    #[inline(always)]
    unsafe fn atomics<T>(
        values: *const T,
        targets: *const u32,
        len: u64,
        counters: *mut T,
        olds: *mut T,
        aggregated: bool,
    ) where
        T: aggregate::AtomicInteger + Into<i128>,
        Sum: Operator<T>,
        Min: Operator<T>,
        Max: Operator<T>,
        BitAnd: Operator<T>,
        BitOr: Operator<T>,
        BitXor: Operator<T>,
    {
        let i = thread::global_index_x();
        if i >= len {
            return;
        }
        // SAFETY: i < len.
        let v = unsafe { *values.add(i as usize) };
        let value: i128 = v.into();
        if !takes_atomics(value as u32) {
            return;
        }
        let target = if targets.is_null() {
            0
        } else {
            // SAFETY: `targets` is not null, so it has `len` elements, and i < len.
            unsafe { *targets.add(i as usize) as usize }
        };
        let base = COUNTERS * target;
        // SAFETY (each counter): a valid, aligned global element accessed only atomically
        // during the launch, by threads of this GPU.
        let counter = |k: usize| unsafe { Atomic::<T, Device>::from_ptr(counters.add(base + k)) };
        let old = if aggregated {
            let old = aggregate::fetch_add(counter(0), v);
            aggregate::min(counter(1), v);
            aggregate::max(counter(2), v);
            aggregate::and(counter(3), v);
            aggregate::or(counter(4), v);
            aggregate::xor(counter(5), v);
            aggregate::add(counter(6), v);
            old
        } else {
            let old = T::fetch_add_relaxed(counter(0), v);
            T::min_relaxed(counter(1), v);
            T::max_relaxed(counter(2), v);
            T::and_relaxed(counter(3), v);
            T::or_relaxed(counter(4), v);
            T::xor_relaxed(counter(5), v);
            T::add_relaxed(counter(6), v);
            old
        };
        // SAFETY: i < len.
        unsafe { *olds.add(i as usize) = old };
    }

    warpsafe::kernel! {
        /// Warp-aggregated `u32` atomics (see `atomics`).
        ///
        /// # Safety
        /// As for `atomics`.
        pub unsafe fn reduce_atomics_aggregated_u32(values: *const u32, len: u64, counters: *mut u32, olds: *mut u32) {
            // SAFETY: forwarded.
            unsafe { atomics(values, ptr::null(), len, counters, olds, true) }
        }

        /// Per-thread `u32` atomics (see `atomics`).
        ///
        /// # Safety
        /// As for `atomics`.
        pub unsafe fn reduce_atomics_per_thread_u32(values: *const u32, len: u64, counters: *mut u32, olds: *mut u32) {
            // SAFETY: forwarded.
            unsafe { atomics(values, ptr::null(), len, counters, olds, false) }
        }

        /// Warp-aggregated `i64` atomics (see `atomics`).
        ///
        /// # Safety
        /// As for `atomics`.
        pub unsafe fn reduce_atomics_aggregated_i64(values: *const i64, len: u64, counters: *mut i64, olds: *mut i64) {
            // SAFETY: forwarded.
            unsafe { atomics(values, ptr::null(), len, counters, olds, true) }
        }

        /// Per-thread `i64` atomics (see `atomics`).
        ///
        /// # Safety
        /// As for `atomics`.
        pub unsafe fn reduce_atomics_per_thread_i64(values: *const i64, len: u64, counters: *mut i64, olds: *mut i64) {
            // SAFETY: forwarded.
            unsafe { atomics(values, ptr::null(), len, counters, olds, false) }
        }

        /// Warp-aggregated `u32` atomics, thread `i` on target `targets[i]` (see `atomics`).
        ///
        /// # Safety
        /// As for `atomics`, with `targets` not null.
        pub unsafe fn reduce_atomics_scattered_aggregated_u32(
            values: *const u32,
            targets: *const u32,
            len: u64,
            counters: *mut u32,
            olds: *mut u32,
        ) {
            // SAFETY: forwarded.
            unsafe { atomics(values, targets, len, counters, olds, true) }
        }

        /// Per-thread `u32` atomics, thread `i` on target `targets[i]` (see `atomics`).
        ///
        /// # Safety
        /// As for `atomics`, with `targets` not null.
        pub unsafe fn reduce_atomics_scattered_per_thread_u32(
            values: *const u32,
            targets: *const u32,
            len: u64,
            counters: *mut u32,
            olds: *mut u32,
        ) {
            // SAFETY: forwarded.
            unsafe { atomics(values, targets, len, counters, olds, false) }
        }

        /// Warp-aggregated `i64` atomics, thread `i` on target `targets[i]` (see `atomics`).
        ///
        /// # Safety
        /// As for `atomics`, with `targets` not null.
        pub unsafe fn reduce_atomics_scattered_aggregated_i64(
            values: *const i64,
            targets: *const u32,
            len: u64,
            counters: *mut i64,
            olds: *mut i64,
        ) {
            // SAFETY: forwarded.
            unsafe { atomics(values, targets, len, counters, olds, true) }
        }
    }
}

/// One kernel per built-in (operator, type) and for the matrix product: the caller's warp
/// reduced with the safe `warpsafe::reduce::warp::reduce` (the group layer's `reduce`,
/// through `warpsafe::warp::reduce_sync`). Only their PTX is checked
/// (`tests/tests/reduce_ptx.rs`): which instruction each (type, operator, target) gets.
pub mod front_end {
    use super::{Mat2, MatMul};
    use warpsafe::op::{BitAnd, BitOr, BitXor, Max, Min, Sum};
    use warpsafe::reduce::warp;
    use warpsafe::thread;

    /// Declares `$name(input, out)`: `out[t] = ` the reduction of `input[t]` over the
    /// caller's warp with `$op`.
    macro_rules! warp_reduce_kernels {
        ($($name:ident: $t:ty, $op:expr;)*) => {$(
            warpsafe::kernel! {
                #[doc = concat!("`out[t]`: `", stringify!($op), "` over the caller's warp of `input[t]` (`", stringify!($t), "`).")]
                ///
                /// # Safety
                /// `input` and `out` hold one element per thread of a one-dimensional grid.
                pub unsafe fn $name(input: *const $t, out: *mut $t) {
                    let t = thread::global_index_x() as usize;
                    // SAFETY: one element per thread.
                    let x = unsafe { *input.add(t) };
                    let total = warp::reduce(x, $op);
                    // SAFETY: one element per thread.
                    unsafe { *out.add(t) = total };
                }
            }
        )*};
    }

    warp_reduce_kernels! {
        warp_reduce_sum_i32: i32, Sum;
        warp_reduce_min_i32: i32, Min;
        warp_reduce_max_i32: i32, Max;
        warp_reduce_and_i32: i32, BitAnd;
        warp_reduce_or_i32: i32, BitOr;
        warp_reduce_xor_i32: i32, BitXor;
        warp_reduce_sum_u32: u32, Sum;
        warp_reduce_min_u32: u32, Min;
        warp_reduce_max_u32: u32, Max;
        warp_reduce_and_u32: u32, BitAnd;
        warp_reduce_or_u32: u32, BitOr;
        warp_reduce_xor_u32: u32, BitXor;
        warp_reduce_sum_i64: i64, Sum;
        warp_reduce_min_i64: i64, Min;
        warp_reduce_max_i64: i64, Max;
        warp_reduce_and_i64: i64, BitAnd;
        warp_reduce_or_i64: i64, BitOr;
        warp_reduce_xor_i64: i64, BitXor;
        warp_reduce_sum_u64: u64, Sum;
        warp_reduce_min_u64: u64, Min;
        warp_reduce_max_u64: u64, Max;
        warp_reduce_and_u64: u64, BitAnd;
        warp_reduce_or_u64: u64, BitOr;
        warp_reduce_xor_u64: u64, BitXor;
        warp_reduce_sum_f32: f32, Sum;
        warp_reduce_min_f32: f32, Min;
        warp_reduce_max_f32: f32, Max;
        warp_reduce_sum_f64: f64, Sum;
        warp_reduce_min_f64: f64, Min;
        warp_reduce_max_f64: f64, Max;
        warp_reduce_matmul: Mat2, MatMul;
    }
}
