//! Test kernels for `warpsafe::group`: every collective on every kind of group, and
//! kernels that misuse groups on purpose (the run-time check must trap them).
#![no_std]

/// Values each thread of `group_collectives` writes (see `fill`).
pub const SLOTS: usize = 25;

/// A 2x2 matrix of wrapping `u32`s, row-major: matrix products are associative but not
/// commutative, so a reduction that reorders operands gives a different answer.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Mat2(pub [u32; 4]);

/// The matrix product as a warpsafe operator.
#[derive(Clone, Copy)]
pub struct MatMul;

impl warpsafe::op::Operator<Mat2> for MatMul {
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

/// The float a thread contributes for input `x`: a multiple of 1/8 below 125, so sums of
/// up to 32 of them are exact in f32 whatever the order.
pub fn float_of(x: u32) -> f32 {
    (x % 1000) as f32 * 0.125 - 60.0
}

pub use kernels::*;

mod kernels {
    use super::{float_of, mat_of, MatMul, SLOTS};
    use warpsafe::group::{Coalesced, Group, Warp};
    use warpsafe::op::{Max, Sum};
    use warpsafe::thread;

    /// This thread's index over the whole grid, in hardware order (block, then linear).
    fn global_thread() -> usize {
        let b = thread::block_idx();
        let g = thread::grid_dim();
        let block = (b.x + b.y * g.x + b.z * g.x * g.y) as usize;
        block * thread::block_threads() as usize + thread::linear_thread_idx() as usize
    }

    /// Writes every collective of `group` on this thread's inputs into `out[0..SLOTS]`.
    ///
    /// # Safety
    /// `out` has SLOTS writable elements.
    #[inline(always)]
    unsafe fn fill<G: Group>(group: G, x: u32, label: u32, out: *mut u32) {
        let pred = x & 1 == 1;
        let last = group.size() - 1;
        let mat = mat_of(x);
        let mat_total = group.reduce(mat, MatMul);
        let mat_prefix = group.inclusive_scan(mat, MatMul);
        let values: [u32; SLOTS] = [
            group.mask(),
            group.size(),
            group.thread_rank(),
            group.reduce(x, Sum),
            group.reduce(x, Max),
            group.inclusive_scan(x, Sum),
            group.exclusive_scan(x, Sum),
            group.shfl(x, 0),
            group.shfl(x, last),
            group.shfl_up(x, 1),
            group.shfl_down(x, 1),
            group.shfl_xor(x, 1),
            group.ballot(pred),
            group.any(pred) as u32,
            group.all(pred) as u32,
            group.match_any(label),
            group.reduce(float_of(x), Sum).to_bits(),
            mat_total.0[0],
            mat_total.0[1],
            mat_total.0[2],
            mat_total.0[3],
            mat_prefix.0[0],
            mat_prefix.0[1],
            mat_prefix.0[2],
            mat_prefix.0[3],
        ];
        for (k, v) in values.into_iter().enumerate() {
            // SAFETY: k < SLOTS.
            unsafe { *out.add(k) = v };
        }
    }

    warpsafe::kernel! {
        /// Runs every collective on the group selected by `kind` (0 warp; 1-6 tiles of 1, 2,
        /// 4, 8, 16, 32 lanes; 7 coalesced lanes inside a branch taken by the lanes set in
        /// `members`; 8 labeled partition by `labels`; 9 binary partition by `input & 1`).
        /// Thread `t` writes `out[SLOTS * t ..]`; threads outside the group write nothing.
        ///
        /// # Safety
        /// `input`, `labels` hold one element per thread of the grid, `out` SLOTS per thread.
        pub unsafe fn group_collectives(
            kind: u32,
            members: u32,
            input: *const u32,
            labels: *const u32,
            out: *mut u32,
        ) {
            let t = global_thread();
            // SAFETY: one element per thread.
            let (x, label) = unsafe { (*input.add(t), *labels.add(t)) };
            // SAFETY: SLOTS elements per thread.
            let out = unsafe { out.add(SLOTS * t) };
            let warp = Warp::this();
            // SAFETY (all arms): `out` has SLOTS elements for this thread.
            unsafe {
                match kind {
                    0 => fill(warp, x, label, out),
                    1 => fill(warp.tiles::<1>(), x, label, out),
                    2 => fill(warp.tiles::<2>(), x, label, out),
                    3 => fill(warp.tiles::<4>(), x, label, out),
                    4 => fill(warp.tiles::<8>(), x, label, out),
                    5 => fill(warp.tiles::<16>(), x, label, out),
                    6 => fill(warp.tiles::<32>(), x, label, out),
                    7 => {
                        if (members >> thread::lane_id()) & 1 == 1 {
                            fill(Coalesced::active(), x, label, out)
                        }
                    }
                    8 => fill(warp.labeled_partition(label), x, label, out),
                    9 => fill(warp.binary_partition(x & 1 == 1), x, label, out),
                    _ => {}
                }
            }
        }
    }

    /// Writes the group's mask, then the value of the lowest-ranked lane whose `x & 2` is
    /// set, found as `shfl(x, ballot(..).trailing_zeros())` (the caller's own value when
    /// there is none), then the value of the lowest-ranked lane with the caller's label,
    /// found as `shfl(x, match_any(label).trailing_zeros())`, into `out[0..3]`.
    ///
    /// # Safety
    /// `out` has 3 writable elements.
    #[inline(always)]
    unsafe fn first_where<G: Group>(group: G, x: u32, label: u32, out: *mut u32) {
        let values = [
            group.mask(),
            group.shfl(x, group.ballot(x & 2 != 0).trailing_zeros()),
            group.shfl(x, group.match_any(label).trailing_zeros()),
        ];
        for (k, v) in values.into_iter().enumerate() {
            // SAFETY: k < 3.
            unsafe { *out.add(k) = v };
        }
    }

    warpsafe::kernel! {
        /// Ballot and match results as ranks: `first_where` on the group selected by `kind`
        /// (numbered as in `group_collectives`). Thread `t` writes `out[3 * t ..]`; threads
        /// outside the group write nothing.
        ///
        /// # Safety
        /// `input`, `labels` hold one element per thread of the grid, `out` 3 per thread.
        pub unsafe fn group_first_where(
            kind: u32,
            members: u32,
            input: *const u32,
            labels: *const u32,
            out: *mut u32,
        ) {
            let t = global_thread();
            // SAFETY: one element per thread.
            let (x, label) = unsafe { (*input.add(t), *labels.add(t)) };
            // SAFETY: 3 elements per thread.
            let out = unsafe { out.add(3 * t) };
            let warp = Warp::this();
            // SAFETY (all arms): `out` has 3 elements for this thread.
            unsafe {
                match kind {
                    0 => first_where(warp, x, label, out),
                    1 => first_where(warp.tiles::<1>(), x, label, out),
                    2 => first_where(warp.tiles::<2>(), x, label, out),
                    3 => first_where(warp.tiles::<4>(), x, label, out),
                    4 => first_where(warp.tiles::<8>(), x, label, out),
                    5 => first_where(warp.tiles::<16>(), x, label, out),
                    6 => first_where(warp.tiles::<32>(), x, label, out),
                    7 => {
                        if (members >> thread::lane_id()) & 1 == 1 {
                            first_where(Coalesced::active(), x, label, out)
                        }
                    }
                    8 => first_where(warp.labeled_partition(label), x, label, out),
                    9 => first_where(warp.binary_partition(x & 1 == 1), x, label, out),
                    _ => {}
                }
            }
        }
    }

    warpsafe::kernel! {
        /// The Volta partial-mask reduction: every lane stays converged and the lanes not in
        /// `members` contribute the identity. Thread `t` writes the warp's sum to `out[t]`.
        ///
        /// # Safety
        /// `input` and `out` hold one element per thread of the grid.
        pub unsafe fn group_reduce_where(members: u32, input: *const u32, out: *mut u32) {
            let t = global_thread();
            let active = (members >> thread::lane_id()) & 1 == 1;
            // SAFETY: one element per thread.
            let x = unsafe { *input.add(t) };
            let total = Warp::this().reduce_where(active, x, Sum);
            // SAFETY: one element per thread.
            unsafe { *out.add(t) = total };
        }
    }

    warpsafe::kernel! {
        /// `group_reduce_where` through [`Group::assume_present`]: the same reduction
        /// without the presence check (the PTX tests compare the two kernels).
        ///
        /// # Safety
        /// `input` and `out` hold one element per thread of the grid; every lane of each
        /// warp that exists reaches the reduction.
        pub unsafe fn group_reduce_where_unchecked(members: u32, input: *const u32, out: *mut u32) {
            let t = global_thread();
            let active = (members >> thread::lane_id()) & 1 == 1;
            // SAFETY: one element per thread.
            let x = unsafe { *input.add(t) };
            // SAFETY: no lane returns or branches before the reduction, so every lane of the
            // warp reaches it (the caller's contract: all of them exist and run).
            let warp = unsafe { Warp::this().assume_present() };
            let total = warp.reduce(if active { x } else { 0 }, Sum);
            // SAFETY: one element per thread.
            unsafe { *out.add(t) = total };
        }
    }

    warpsafe::kernel! {
        /// The CUDA guide's correct ballot loop: the loop runs while any lane of the warp has
        /// work, so every iteration votes with the whole warp; lanes out of range vote false.
        /// Lane `l` starts at element `l` of its warp's row of `len` elements and steps by 32;
        /// thread `t` writes the OR of its warp's ballots of "element is odd" to `out[t]`, and
        /// the number of loop iterations to `out[t + threads]`.
        ///
        /// # Safety
        /// `input` holds `len * warps` elements, `out` two per thread, 32 threads per warp.
        pub unsafe fn group_ballot_loop(input: *const u32, len: u32, out: *mut u32) {
            let t = global_thread();
            let threads = thread::grid_threads_x() as usize;
            let warp = Warp::this();
            let row = (t / 32) * len as usize;
            let mut i = thread::lane_id();
            let mut seen = 0u32;
            let mut iterations = 0u32;
            while warp.any(i < len) {
                // SAFETY: read only when i < len, inside this warp's row.
                let odd = i < len && unsafe { *input.add(row + i as usize) } & 1 == 1;
                seen |= warp.ballot(odd);
                iterations += 1;
                i += 32;
            }
            // SAFETY: two elements per thread.
            unsafe {
                *out.add(t) = seen;
                *out.add(t + threads) = iterations;
            }
        }
    }

    warpsafe::kernel! {
        /// MISUSE: lanes 16..32 return before the warp reduces. The check must trap.
        ///
        /// # Safety
        /// `out` holds one element per thread.
        pub unsafe fn group_misuse_early_exit(out: *mut u32) {
            if thread::lane_id() >= 16 {
                return;
            }
            let total = Warp::this().reduce(1u32, Sum);
            // SAFETY: one element per thread.
            unsafe { *out.add(global_thread()) = total };
        }
    }

    warpsafe::kernel! {
        /// MISUSE: the CUDA guide's invalid ballot loop: the loop condition differs between
        /// lanes (lanes below 8 run twice), and the loop votes with the whole warp. The second
        /// iteration's ballot must trap.
        ///
        /// # Safety
        /// `out` holds one element per thread.
        pub unsafe fn group_misuse_divergent_ballot(out: *mut u32) {
            let warp = Warp::this();
            let mut seen = 0;
            let mut i = thread::lane_id();
            while i < 40 {
                seen |= warp.ballot(i.is_multiple_of(3));
                i += 32;
            }
            // SAFETY: one element per thread.
            unsafe { *out.add(global_thread()) = seen };
        }
    }

    warpsafe::kernel! {
        /// MISUSE: even and odd lanes of one warp group call different collectives.
        ///
        /// # Safety
        /// `out` holds one element per thread.
        pub unsafe fn group_misuse_split_collectives(out: *mut u32) {
            let warp = Warp::this();
            let v = if thread::lane_id().is_multiple_of(2) { warp.ballot(true) } else { warp.any(true) as u32 };
            // SAFETY: one element per thread.
            unsafe { *out.add(global_thread()) = v };
        }
    }
}
