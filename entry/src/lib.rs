//! warpsafe's own kernel entry points: the functions `warpsafe-host` launches.
//!
//! They live in this crate, not in `warpsafe`, so that a third-party kernel crate that
//! depends on `warpsafe` gets none of them in its PTX. `warpsafe-host`'s build script
//! compiles this crate to PTX with `warpsafe-build` and embeds the result.
//!
//! Each kernel's parameter list is part of the host's launch contract; `warpsafe-host`
//! passes exactly these types in this order.
#![no_std]

pub mod kernels {
    use warpsafe::bytemuck::Pod;
    use warpsafe::op::Sum;
    use warpsafe::reduce::warp;
    use warpsafe::thread;

    /// Shared body of the warp-sum kernels: warp `w` of the grid sums
    /// `input[32*w .. 32*w + 32]` (missing elements count as zero) into `out[w]`.
    ///
    /// # Safety
    /// `input` holds `len` readable elements, `out` holds `len.div_ceil(32)` writable
    /// ones, and the block size is a multiple of 32 (every warp is full and every thread
    /// reaches the warp sum; threads past `len` contribute zero instead of leaving).
    #[inline(always)]
    unsafe fn warp_sums<T: Pod>(input: *const T, len: u64, out: *mut T, zero: T)
    where
        Sum: warpsafe::op::Operator<T>,
    {
        let i = thread::global_index_x();
        let value = if i < len {
            // SAFETY: i < len and `input` holds len elements.
            unsafe { *input.add(i as usize) }
        } else {
            zero
        };
        // SAFETY: the block size is a multiple of 32 and no thread has returned, so all
        // 32 lanes of every warp arrive here together.
        let total = unsafe { warp::reduce_full(value, Sum) };
        let warp_index = i / 32;
        if thread::lane_id() == 0 && warp_index < len.div_ceil(32) {
            // SAFETY: warp_index < len.div_ceil(32), the length of `out`.
            unsafe { *out.add(warp_index as usize) = total };
        }
    }

    warpsafe::kernel! {
        /// Per-warp sums of `u32` values (wrapping). See [`warp_sums`] for the contract.
        ///
        /// # Safety
        /// As for [`warp_sums`].
        pub unsafe fn warpsafe_warp_sum_u32(input: *const u32, len: u64, out: *mut u32) {
            // SAFETY: forwarded from the launch contract.
            unsafe { warp_sums(input, len, out, 0u32) }
        }

        /// Per-warp sums of `f32` values. See [`warp_sums`] for the contract.
        ///
        /// # Safety
        /// As for [`warp_sums`].
        pub unsafe fn warpsafe_warp_sum_f32(input: *const f32, len: u64, out: *mut f32) {
            // SAFETY: forwarded from the launch contract.
            unsafe { warp_sums(input, len, out, 0.0f32) }
        }
    }
}

pub mod histogram;
pub mod reduce;
pub mod scan;
pub mod segmented;
