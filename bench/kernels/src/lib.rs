//! Kernels timed by `warpsafe-bench`. Each runs one warp collective `iters` times per
//! thread in a dependent chain (each result feeds the next call), so the time is the
//! collective's latency plus whatever checking surrounds it.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(target_arch = "nvptx64")]
mod kernels {
    use warpsafe::group::{Group, Warp};
    use warpsafe::op::Sum;
    use warpsafe::thread;

    /// `iters` dependent warp sums through the safe group API.
    ///
    /// # Safety
    /// `out` holds one element per thread; the block size is a multiple of 32.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn bench_group_reduce(iters: u32, out: *mut u32) {
        let warp = Warp::this();
        let mut x = thread::global_index_x() as u32;
        for i in 0..iters {
            x = warp.reduce(x ^ i, Sum);
        }
        // SAFETY: one element per thread.
        unsafe { *out.add(thread::global_index_x() as usize) = x };
    }

    /// `iters` dependent ballots through the safe group API.
    ///
    /// # Safety
    /// As for `bench_group_reduce`.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn bench_group_ballot(iters: u32, out: *mut u32) {
        let warp = Warp::this();
        let mut x = thread::global_index_x() as u32;
        for i in 0..iters {
            x = x.wrapping_add(warp.ballot((x ^ i) & 1 == 1));
        }
        // SAFETY: one element per thread.
        unsafe { *out.add(thread::global_index_x() as usize) = x };
    }

    /// `iters` dependent shuffles through the safe group API.
    ///
    /// # Safety
    /// As for `bench_group_reduce`.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn bench_group_shfl(iters: u32, out: *mut u32) {
        let warp = Warp::this();
        let mut x = thread::global_index_x() as u32;
        for i in 0..iters {
            x = warp.shfl_xor(x, 1 + (i & 15)).wrapping_add(i);
        }
        // SAFETY: one element per thread.
        unsafe { *out.add(thread::global_index_x() as usize) = x };
    }
}
