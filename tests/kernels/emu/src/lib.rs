//! Kernels for the CPU emulator's tests (`tests/tests/emu_*.rs`).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use warpsafe::arch::FULL_MASK;
use warpsafe::{thread, warp};

warpsafe::kernel! {
    /// Each thread writes its lane's butterfly partner's lane id.
    ///
    /// # Safety
    /// `out` holds one element per thread; the block size is a multiple of 32.
    pub unsafe fn smoke(out: *mut u32) {
        let t = thread::global_index_x();
        let lane = warp::lane_id();
        // SAFETY: full warps, every lane arrives.
        let v = unsafe { warp::shfl_xor_sync(FULL_MASK, lane, 1, 32) };
        // SAFETY: t is in range.
        unsafe { *out.add(t as usize) = v };
    }
}
