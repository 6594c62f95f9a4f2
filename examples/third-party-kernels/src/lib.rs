//! A kernel crate of the kind a warpsafe user writes: it depends on `warpsafe` and defines
//! its own entry points with `warpsafe::kernel!`. Its host crate's `build.rs` compiles it
//! to PTX with `warpsafe_build::Builder::new("../third-party-kernels").build()` (warpsafe's
//! own kernels do not appear in its PTX); the host crate also depends on it, so that on the
//! CPU emulator the same kernels run as host code (`third_party_kernels::scale_and_total`
//! is then a `warpsafe::emu::Kernel`).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

warpsafe::kernel! {
    /// Scales every element by `factor` and writes each warp's total of the scaled values.
    ///
    /// # Safety
    /// `data` holds `len` elements, `warp_totals` holds `len.div_ceil(32)`, and the block
    /// size is a multiple of 32.
    pub unsafe fn scale_and_total(data: *mut f32, len: u64, factor: f32, warp_totals: *mut f32) {
        use warpsafe::{thread, warp};
        let i = thread::global_index_x();
        let mut scaled = 0.0;
        if i < len {
            // SAFETY: i < len, the length of `data`.
            unsafe {
                scaled = *data.add(i as usize) * factor;
                *data.add(i as usize) = scaled;
            }
        }
        // SAFETY: blocks are a multiple of 32 and every thread gets here.
        let total = unsafe { warp::sum_full_warp(scaled) };
        if thread::lane_id() == 0 && i / 32 < len.div_ceil(32) {
            // SAFETY: i / 32 < len.div_ceil(32), the length of `warp_totals`.
            unsafe { *warp_totals.add((i / 32) as usize) = total };
        }
    }
}
