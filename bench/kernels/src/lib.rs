//! Kernels timed by `warpsafe-bench`.
//!
//! - `bench_group_*` (the `group-checks` benchmark): each runs one warp collective `iters`
//!   times per thread in a dependent chain (each result feeds the next call), so the time
//!   is the collective's latency plus whatever checking surrounds it; each comes twice, on
//!   the checked `Warp` and, as `*_unchecked`, on the same warp through
//!   `Group::assume_present`.
//! - `bench_read_x{2,4,8}` (the `reduce-bench` benchmark): the memory roofline, a kernel
//!   that reads every byte of its input once with 16-byte loads and writes almost nothing.
#![no_std]

pub use kernels::*;

mod kernels {
    use warpsafe::global::DisjointSlice;
    use warpsafe::group::{Group, Unchecked, Warp};
    use warpsafe::op::Sum;
    use warpsafe::thread;

    /// `iters` dependent warp sums over `warp`.
    #[inline(always)]
    fn reduce_chain<G: Group>(warp: G, iters: u32) -> u32 {
        let mut x = thread::global_index_x() as u32;
        for i in 0..iters {
            x = warp.reduce(x ^ i, Sum);
        }
        x
    }

    /// `iters` dependent ballots over `warp`.
    #[inline(always)]
    fn ballot_chain<G: Group>(warp: G, iters: u32) -> u32 {
        let mut x = thread::global_index_x() as u32;
        for i in 0..iters {
            x = x.wrapping_add(warp.ballot((x ^ i) & 1 == 1));
        }
        x
    }

    /// `iters` dependent shuffles over `warp`.
    #[inline(always)]
    fn shfl_chain<G: Group>(warp: G, iters: u32) -> u32 {
        let mut x = thread::global_index_x() as u32;
        for i in 0..iters {
            x = warp.shfl_xor(x, 1 + (i & 15)).wrapping_add(i);
        }
        x
    }

    /// The caller's warp without the presence check.
    ///
    /// # Safety
    /// Every lane of the warp exists and reaches each collective of the benchmark (the
    /// kernels below run no lane-dependent branch, and the block size is a multiple of 32).
    /// The calling warp without its presence check.
    #[inline(always)]
    fn unchecked_warp() -> Unchecked<Warp> {
        // SAFETY: every lane of the warp that exists in the block calls this at the start of
        // the kernel and runs the same chain of collectives, with no branch before or in it,
        // so every lane of `Warp::this()` is present at each collective.
        unsafe { Warp::this().assume_present() }
    }

    /// Writes the calling thread's own element of `out`, if it has one.
    #[inline(always)]
    fn write_own(out: &DisjointSlice<u32>, value: u32) {
        if let Some(i) = out.get(thread::index()) {
            out.write(i, value);
        }
    }

    warpsafe::kernel! {
        /// `iters` dependent warp reductions through the safe group API; thread `t` writes
        /// its result to `out[t]`.
        pub fn bench_group_reduce(iters: u32, out: DisjointSlice<u32>) {
            write_own(&out, reduce_chain(Warp::this(), iters));
        }

        /// `bench_group_reduce` through `Group::assume_present` (no presence check).
        pub fn bench_group_reduce_unchecked(iters: u32, out: DisjointSlice<u32>) {
            write_own(&out, reduce_chain(unchecked_warp(), iters));
        }

        /// `iters` dependent ballots through the safe group API.
        pub fn bench_group_ballot(iters: u32, out: DisjointSlice<u32>) {
            write_own(&out, ballot_chain(Warp::this(), iters));
        }

        /// `bench_group_ballot` through `Group::assume_present` (no presence check).
        pub fn bench_group_ballot_unchecked(iters: u32, out: DisjointSlice<u32>) {
            write_own(&out, ballot_chain(unchecked_warp(), iters));
        }

        /// `iters` dependent shuffles through the safe group API.
        pub fn bench_group_shfl(iters: u32, out: DisjointSlice<u32>) {
            write_own(&out, shfl_chain(Warp::this(), iters));
        }

        /// `bench_group_shfl` through `Group::assume_present` (no presence check).
        pub fn bench_group_shfl_unchecked(iters: u32, out: DisjointSlice<u32>) {
            write_own(&out, shfl_chain(unchecked_warp(), iters));
        }
    }

    /// Sixteen bytes with sixteen-byte alignment, so that one read of it is one
    /// `ld.global.v4.b32`: the widest load a thread can issue, and the one that moves the
    /// most bytes per instruction (fewest load instructions in flight per byte).
    #[repr(C, align(16))]
    #[derive(Clone, Copy)]
    pub struct Vector(pub [u32; 4]);

    /// The XOR of one vector's four words: cheap, and it makes every loaded word feed the
    /// result, so the compiler keeps every load.
    #[inline(always)]
    fn fold(v: Vector) -> u32 {
        v.0[0] ^ v.0[1] ^ v.0[2] ^ v.0[3]
    }

    /// Body of the read-roofline kernels: a grid-stride loop over `vectors` 16-byte
    /// vectors in which each thread issues `UNROLL` independent loads before it uses any
    /// of them, so that `UNROLL` loads per thread are in flight (DRAM latency is hidden
    /// by the bytes in flight, not by the instruction count). Within one step the warp's
    /// 32 loads of one vector are 512 consecutive bytes: fully coalesced.
    ///
    /// The only store is the thread's XOR of what it read, and only when that equals
    /// `sentinel` (the host picks a value that almost never occurs), so the kernel
    /// writes almost nothing while the compiler cannot drop a single load.
    ///
    /// # Safety
    /// `input` is 16-byte aligned and holds `vectors` readable vectors; `out` holds one
    /// writable `u32` per thread of the grid (a 1-D grid).
    #[inline(always)]
    unsafe fn read_all<const UNROLL: usize>(
        input: *const Vector,
        vectors: u64,
        sentinel: u32,
        out: *mut u32,
    ) {
        let stride = thread::grid_threads_x();
        let me = thread::global_index_x();
        let mut i = me;
        let mut acc = 0u32;
        while i + (UNROLL as u64 - 1) * stride < vectors {
            // All loads first, then all uses: constant trip counts, fully unrolled.
            let mut batch = [Vector([0; 4]); UNROLL];
            let mut k = 0;
            while k < UNROLL {
                // SAFETY: i + k * stride <= i + (UNROLL - 1) * stride < vectors.
                batch[k] = unsafe { *input.add((i + k as u64 * stride) as usize) };
                k += 1;
            }
            let mut k = 0;
            while k < UNROLL {
                acc ^= fold(batch[k]);
                k += 1;
            }
            i += UNROLL as u64 * stride;
        }
        while i < vectors {
            // SAFETY: i < vectors.
            acc ^= fold(unsafe { *input.add(i as usize) });
            i += stride;
        }
        if acc == sentinel {
            // SAFETY: `out` holds one element per thread of the grid; `me` is this thread's.
            unsafe { *out.add(me as usize) = acc };
        }
    }

    warpsafe::kernel! {
        /// Read roofline with 2 loads in flight per thread. See `read_all`.
        ///
        /// # Safety
        /// As for `read_all`.
        pub unsafe fn bench_read_x2(input: *const Vector, vectors: u64, sentinel: u32, out: *mut u32) {
            // SAFETY: forwarded from the launch contract.
            unsafe { read_all::<2>(input, vectors, sentinel, out) }
        }

        /// Read roofline with 4 loads in flight per thread. See `read_all`.
        ///
        /// # Safety
        /// As for `read_all`.
        pub unsafe fn bench_read_x4(input: *const Vector, vectors: u64, sentinel: u32, out: *mut u32) {
            // SAFETY: forwarded from the launch contract.
            unsafe { read_all::<4>(input, vectors, sentinel, out) }
        }

        /// Read roofline with 8 loads in flight per thread. See `read_all`.
        ///
        /// # Safety
        /// As for `read_all`.
        pub unsafe fn bench_read_x8(input: *const Vector, vectors: u64, sentinel: u32, out: *mut u32) {
            // SAFETY: forwarded from the launch contract.
            unsafe { read_all::<8>(input, vectors, sentinel, out) }
        }
    }
}

/// Safe streaming kernels, each in a bounds-checked and an unchecked form, for
/// `bounds-checks`: what the checks of [`warpsafe::global`] cost in a memory-bound loop.
mod streaming {
    use warpsafe::global::{DisjointSlice, Slice};
    use warpsafe::thread;

    warpsafe::kernel! {
        /// `partials[t]` = the sum of thread `t`'s grid-stride share of `input`, read with
        /// checked indexing (`input[i]`).
        pub fn bench_sum_checked(input: Slice<f32>, partials: DisjointSlice<f32>) {
            let mut acc = 0.0f32;
            for i in thread::grid_stride(input.len()) {
                acc += input[i];
            }
            if let Some(t) = partials.get(thread::index()) {
                partials.write(t, acc);
            }
        }

        /// [`bench_sum_checked`] with `get_unchecked`.
        pub fn bench_sum_unchecked(input: Slice<f32>, partials: DisjointSlice<f32>) {
            let mut acc = 0.0f32;
            for i in thread::grid_stride(input.len()) {
                // SAFETY: grid_stride yields indices below input.len().
                acc += unsafe { input.get_unchecked(i.get()) };
            }
            if let Some(t) = partials.get(thread::index()) {
                partials.write(t, acc);
            }
        }

        /// `y[i] = a * x[i]` over `y`'s length, checked: `x[i]` is a real check (the loop
        /// is bounded by `y`), `y.write` one LLVM can drop.
        pub fn bench_scale_checked(x: Slice<f32>, y: DisjointSlice<f32>, a: f32) {
            for i in thread::grid_stride(y.len()) {
                y.write(i, a * x[i]);
            }
        }

        /// [`bench_scale_checked`] with `get_unchecked` and `write_unchecked` (the loop is
        /// bounded by both lengths).
        pub fn bench_scale_unchecked(x: Slice<f32>, y: DisjointSlice<f32>, a: f32) {
            for i in thread::grid_stride(y.len().min(x.len())) {
                // SAFETY: i < min(x.len(), y.len()).
                unsafe { y.write_unchecked(i, a * x.get_unchecked(i.get())) };
            }
        }
    }
}

pub use streaming::*;
