//! Test kernels for `warpsafe::thread`.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

warpsafe::kernel! {
    /// Each thread writes `[linear index, warp index, lane, block threads]` at
    /// `out[4 * (block_linear * block_threads + linear)]`, for any block and grid shape.
    ///
    /// # Safety
    /// `out` holds `4 * total threads` elements.
    pub unsafe fn thread_coordinates(out: *mut u32) {
        use warpsafe::thread;
        let b = thread::block_idx();
        let g = thread::grid_dim();
        let block_linear = b.x + b.y * g.x + b.z * g.x * g.y;
        let slot = (block_linear as usize * thread::block_threads() as usize
            + thread::linear_thread_idx() as usize)
            * 4;
        let values =
            [thread::linear_thread_idx(), thread::warp_idx(), thread::lane_id(), thread::block_threads()];
        for (k, v) in values.into_iter().enumerate() {
            // SAFETY: slot + k < 4 * total threads, the length of `out`.
            unsafe { *out.add(slot + k) = v };
        }
    }
}
