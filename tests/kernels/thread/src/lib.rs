//! Test kernels for `warpsafe::thread`.
#![no_std]

warpsafe::kernel! {
    /// Each thread writes `[linear index, warp index, lane, block threads]` to its own
    /// element of `out`, `thread::index()`: `block_linear * block_threads + linear`, for any
    /// block and grid shape (threads past the end of `out` write nothing).
    pub fn thread_coordinates(out: warpsafe::global::DisjointSlice<[u32; 4]>) {
        use warpsafe::thread;
        if let Some(mine) = out.get(thread::index()) {
            let values =
                [thread::linear_thread_idx(), thread::warp_idx(), thread::lane_id(), thread::block_threads()];
            out.write(mine, values);
        }
    }
}
