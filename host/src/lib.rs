//! # warpsafe-host
//!
//! The host side of warpsafe: it owns a CUDA context on the first GPU, loads warpsafe's
//! embedded PTX (built from `warpsafe-entry` by `build.rs`, one file per architecture,
//! the newest one the device can run chosen at start), and launches kernels through
//! typed wrappers that check their inputs before the driver sees them.
//!
//! Every failure is an [`Error`] with a message; nothing here panics on bad input.
//!
//! ```no_run
//! let gpu = warpsafe_host::Gpu::new()?;
//! let sums = gpu.warp_sums(&[1u32; 64])?;
//! assert_eq!(sums, vec![32, 32]);
//! # Ok::<(), warpsafe_host::Error>(())
//! ```

mod error;
mod gpu;
pub mod ptx;
pub mod reduce;

pub use error::Error;
pub use gpu::{Function, Gpu, LaunchConfig, Module, WarpSumElement};

/// The argument array for [`Gpu::launch`]: one `*mut c_void` per kernel parameter, each
/// pointing at a local variable that holds the value (a `DevicePointer`, a `u64`, an
/// `f32`, ...). The variables must be mutable places and outlive the launch.
///
/// ```
/// let mut len = 3u64;
/// let mut factor = 0.5f32;
/// let args = warpsafe_host::kernel_args![len, factor];
/// assert_eq!(args.len(), 2);
/// ```
#[macro_export]
macro_rules! kernel_args {
    ($($arg:ident),* $(,)?) => {
        [$(&mut $arg as *mut _ as *mut ::core::ffi::c_void),*]
    };
}
