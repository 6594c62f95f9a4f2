//! The warp sum: warpsafe's first kernel, and the demo's.

use crate::{entry_kernels, kernel_args, Device, Error, LaunchConfig};

/// Threads per block of the warp-sum launch: a multiple of 32, so every warp is full.
const BLOCK_THREADS: u32 = 256;

/// The largest grid size along x that every sm_70+ device accepts.
const MAX_GRID_X: u32 = i32::MAX as u32;

/// An element type that warpsafe's warp-sum kernel supports.
///
/// Sealed: the kernel exists for exactly these types.
pub trait WarpSumElement: bytemuck::Pod + sealed::Sealed {
    /// The kernel (`warpsafe-entry`'s `warpsafe_warp_sum_*`) for this type.
    fn kernel() -> &'static warpsafe::kernel::UntypedKernel;
}

impl WarpSumElement for u32 {
    fn kernel() -> &'static warpsafe::kernel::UntypedKernel {
        &entry_kernels::warpsafe_warp_sum_u32
    }
}

impl WarpSumElement for f32 {
    fn kernel() -> &'static warpsafe::kernel::UntypedKernel {
        &entry_kernels::warpsafe_warp_sum_f32
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
}

impl Device {
    /// Sums each run of 32 consecutive elements (the last run may be shorter) with one warp
    /// per run, through warpsafe's warp reduction (`warpsafe::reduce::warp::reduce_full`):
    /// `redux.sync.add` for `u32` on sm_80+, five `shfl.sync.bfly` steps otherwise. Returns
    /// `input.len().div_ceil(32)` sums; an empty input gives an empty result without
    /// touching the device. `u32` sums wrap on overflow; `f32` sums add pairwise in the
    /// butterfly's order (neighbours first: `(x0 + x1) + (x2 + x3)`, ...), the same bits on
    /// both backends.
    ///
    /// ```
    /// # fn main() -> Result<(), warpsafe_host::Error> {
    /// let device = warpsafe_host::Device::emulator();
    /// assert_eq!(device.warp_sums(&[1.5f32; 33])?, vec![48.0, 1.5]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InputTooLarge`] past the largest 1-D grid; allocation, copy and launch
    /// failures otherwise.
    pub fn warp_sums<T: WarpSumElement>(&self, input: &[T]) -> Result<Vec<T>, Error> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let max = MAX_GRID_X as usize * BLOCK_THREADS as usize;
        if input.len() > max {
            return Err(Error::InputTooLarge { operation: "warp_sums", len: input.len(), max });
        }
        let function = self.entry_module().untyped_kernel(T::kernel())?;
        let d_input = self.upload(input)?;
        let d_out = self.alloc_zeroed::<T>(input.len().div_ceil(32))?;
        let grid = input.len().div_ceil(BLOCK_THREADS as usize) as u32;
        let (mut p_input, mut len, mut p_out) =
            (d_input.device_address(), input.len() as u64, d_out.device_address());
        let args = kernel_args![p_input, len, p_out];
        // SAFETY: the kernel's parameters are (*const T, u64, *mut T) (warpsafe-entry);
        // `d_input` holds `len` elements and `d_out` holds `len.div_ceil(32)`; the block
        // size is a multiple of 32 as the kernel requires.
        unsafe { self.launch_raw(&function, LaunchConfig::linear(grid, BLOCK_THREADS), &args)? };
        d_out.download()
    }
}
