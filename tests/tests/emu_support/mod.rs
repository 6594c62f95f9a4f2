//! What the emulator's tests share: launching a kernel on host vectors.

use core::ffi::c_void;
use warpsafe::emu::{self, Error, LaunchConfig, Options};
use warpsafe::kernel::UntypedKernel as Kernel;

/// A pointer to `value`, as one entry of a launch's argument list.
pub fn arg<T>(value: &mut T) -> *mut c_void {
    (value as *mut T).cast()
}

/// Runs `kernel` on `grid` blocks of `block` threads.
pub fn launch(
    kernel: &Kernel,
    grid: u32,
    block: u32,
    args: &[*mut c_void],
    options: &Options,
) -> Result<(), Error> {
    launch_with(kernel, LaunchConfig::linear(grid, block), args, options)
}

/// Runs `kernel` with `config`.
pub fn launch_with(
    kernel: &Kernel,
    config: LaunchConfig,
    args: &[*mut c_void],
    options: &Options,
) -> Result<(), Error> {
    // SAFETY: every test passes pointers to live values of the kernel's parameter types,
    // and buffers of the sizes the kernel's docs require.
    unsafe { emu::launch(kernel, &config, args, options) }
}
