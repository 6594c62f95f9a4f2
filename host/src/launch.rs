//! The shape of a launch, and the argument array.

use crate::emu;

/// A launch configuration: grid and block shape (x, y, z) and dynamic shared memory.
///
/// The same configuration means the same thing on both backends: `grid` blocks of
/// `block` threads, numbered x fastest, each block with `shared_mem_bytes` bytes of
/// dynamic shared memory (the window of `warpsafe::shared::dynamic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid along x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads in a block along x, y, z.
    pub block: (u32, u32, u32),
    /// Bytes of dynamic shared memory per block.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads, no dynamic shared memory.
    ///
    /// ```
    /// let config = warpsafe_host::LaunchConfig::linear(4, 256);
    /// assert_eq!(config.blocks(), 4);
    /// assert_eq!(config.block_threads(), 256);
    /// ```
    pub fn linear(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig { grid: (grid, 1, 1), block: (block, 1, 1), shared_mem_bytes: 0 }
    }

    /// Threads per block (saturating at `u32::MAX` for shapes no device accepts).
    pub fn block_threads(&self) -> u32 {
        let (x, y, z) = self.block;
        x.saturating_mul(y).saturating_mul(z)
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        let (x, y, z) = self.grid;
        u64::from(x) * u64::from(y) * u64::from(z)
    }

    /// The emulator's form of this configuration.
    pub(crate) fn to_emulator(self, cooperative: bool) -> emu::LaunchConfig {
        let dim = |(x, y, z): (u32, u32, u32)| emu::Dim3 { x, y, z };
        emu::LaunchConfig {
            grid: dim(self.grid),
            block: dim(self.block),
            dynamic_shared_bytes: self.shared_mem_bytes,
            cooperative,
        }
    }
}

/// The argument array for a launch: one `*mut c_void` per kernel parameter, each pointing
/// at a local variable that holds the value (a device address from
/// [`crate::DeviceBuffer::device_address`], a `u64`, an `f32`, ...). The variables must be
/// mutable places and outlive the launch call.
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
