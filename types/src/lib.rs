//! The plain types that every layer of warpsafe shares: the device crate (`warpsafe`, on
//! the GPU and on the host), the CPU emulator (`warpsafe-emu`) and the host crate. They
//! sit at the bottom so that the emulator, which the device crate uses on the host,
//! imports nothing back from the crates above it.
//!
//! Everything here is re-exported where users meet it: `warpsafe::arch` (special
//! registers, scopes, orderings) and `warpsafe::kernel` (kernels, launch shapes).
#![no_std]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

use core::ffi::c_void;
#[cfg(not(target_arch = "nvptx64"))]
use std::{format, string::String};

/// One parameter of a kernel, as declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// The parameter's name.
    pub name: &'static str,
    /// Its type, as written in the declaration.
    pub ty: &'static str,
    /// Marked `#[covers]`: the launch's threads must cover this buffer, one element each.
    pub covers: bool,
}

/// What the CPU emulator calls for each thread: reads the parameters from the launch's
/// argument pointers and runs the kernel's body.
///
/// # Safety (of calling it)
/// `args` has one pointer per parameter, each to a valid value of that parameter's type,
/// and the kernel's own contract holds.
pub type HostEntry = unsafe fn(&[*mut c_void]);

/// A kernel without its parameter types: its name, parameters and emulator entry. Every
/// `warpsafe::kernel::Kernel` dereferences to one, for code that handles kernels of any signature.
#[derive(Debug)]
pub struct UntypedKernel {
    name: &'static str,
    params: &'static [Param],
    entry: HostEntry,
}

impl UntypedKernel {
    #[doc(hidden)]
    pub const fn __new(name: &'static str, params: &'static [Param], entry: HostEntry) -> UntypedKernel {
        UntypedKernel { name, params, entry }
    }

    /// The kernel's name (its PTX entry's name on the GPU).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How many parameters the kernel takes.
    pub fn param_count(&self) -> usize {
        self.params.len()
    }

    /// The parameters, in declaration order.
    pub fn params(&self) -> &'static [Param] {
        self.params
    }

    /// The host code the emulator runs for each thread.
    pub fn host_entry(&self) -> HostEntry {
        self.entry
    }
}

/// The most dynamic shared memory a block can have on any GPU warpsafe supports (sm_90's
/// 227 KiB; older GPUs have less, and their driver refuses more).
pub const MAX_DYNAMIC_SHARED_BYTES: u32 = 227 * 1024;

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
    /// let config = warpsafe_types::LaunchConfig::linear(4, 256);
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

    /// Threads in the whole grid.
    pub fn threads(&self) -> u64 {
        self.blocks() * u64::from(self.block_threads())
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        let (x, y, z) = self.grid;
        u64::from(x) * u64::from(y) * u64::from(z)
    }

    /// The reason no device runs this shape, if there is one: an empty grid or block, a
    /// block of more than 1024 threads, a grid wider than the hardware's limits (2^31 - 1
    /// blocks in x, 65535 in y and z; 1024 threads in x and y, 64 in z), more dynamic
    /// shared memory than any supported GPU has per block (227 KiB). Both backends refuse
    /// such a launch with this reason. (Host only: kernels do not launch kernels.)
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn problem(&self) -> Option<String> {
        let ((gx, gy, gz), (bx, by, bz)) = (self.grid, self.block);
        if self.blocks() == 0 {
            return Some(format!(
                "the grid ({gx}, {gy}, {gz}) has no blocks: every dimension must be at least 1"
            ));
        }
        if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
            return Some(format!(
                "the grid ({gx}, {gy}, {gz}) is too large: at most 2^31 - 1 blocks in x and 65535 in y and z"
            ));
        }
        if bx == 0 || by == 0 || bz == 0 {
            return Some(format!(
                "the block ({bx}, {by}, {bz}) has no threads: every dimension must be at least 1"
            ));
        }
        if bx > 1024 || by > 1024 || bz > 64 || self.block_threads() > 1024 {
            return Some(format!(
                "the block ({bx}, {by}, {bz}) is too large: at most 1024 threads in all (1024 in x and y, 64 in z)"
            ));
        }
        if self.shared_mem_bytes > MAX_DYNAMIC_SHARED_BYTES {
            return Some(format!(
                "{} bytes of dynamic shared memory per block: at most {MAX_DYNAMIC_SHARED_BYTES} (227 KiB)",
                self.shared_mem_bytes
            ));
        }
        None
    }
}
/// The memory a checked index addresses, for the out-of-bounds report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// Block-shared memory (a `warpsafe::shared!` array or the dynamic window).
    Shared,
    /// Global memory (a `warpsafe::global` view of a device buffer).
    Global,
}

/// A `(x, y, z)` triple of special-register values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// The x component.
    pub x: u32,
    /// The y component.
    pub y: u32,
    /// The z component.
    pub z: u32,
}

/// The set of threads a memory operation is atomic, or ordered, with respect to (PTX's
/// `.scope` qualifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `.cta`: the threads of the executing thread's block.
    Cta,
    /// `.gpu`: every thread of the executing program on the same GPU (other grids running
    /// on that GPU included), but not the host or other GPUs.
    Gpu,
    /// `.sys`: every thread of the program: all GPUs' threads and the host's.
    Sys,
}

/// Memory-ordering semantics of a read-modify-write `atom` (PTX's `.sem`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmwSem {
    /// `.relaxed`: atomic, but orders no other access.
    Relaxed,
    /// `.acquire`: no later access of this thread is performed before it.
    Acquire,
    /// `.release`: no earlier access of this thread is performed after it.
    Release,
    /// `.acq_rel`: both.
    AcqRel,
}

/// Memory-ordering semantics of a load (`ld`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadSem {
    /// `ld.relaxed`: a strong (atomic) load that orders nothing else.
    Relaxed,
    /// `ld.acquire`: no later access of this thread is performed before it.
    Acquire,
}

/// Memory-ordering semantics of a store (`st`) or of a reduction (`red`): PTX allows
/// only `.relaxed` and `.release` on both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreSem {
    /// `.relaxed`: a strong (atomic) write that orders nothing else.
    Relaxed,
    /// `.release`: no earlier access of this thread is performed after it.
    Release,
}
