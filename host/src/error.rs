//! The host crate's one error type.

use cust::error::CudaError;

/// Everything that can go wrong on the host side, with the context needed to act on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No usable CUDA device: no driver, no GPU, or the driver refused to start.
    #[error("no CUDA device found ({reason}); warpsafe's GPU paths need an NVIDIA GPU of sm_70 or newer")]
    NoDevice {
        /// What the driver said.
        reason: String,
    },
    /// The device is older than sm_70, the oldest architecture warpsafe supports.
    #[error(
        "{name} has compute capability {major}.{minor}; warpsafe needs 7.0 (Volta) or newer, where warps have independent thread scheduling"
    )]
    UnsupportedDevice {
        /// The device's name.
        name: String,
        /// Compute capability, major part.
        major: u32,
        /// Compute capability, minor part.
        minor: u32,
    },
    /// A driver call failed; `during` says which step.
    #[error("CUDA driver error while {during}: {source}")]
    Driver {
        /// The step that failed, e.g. "allocating 4096 bytes".
        during: String,
        /// The driver's error.
        source: CudaError,
    },
    /// The driver rejected a PTX module (malformed PTX, or a PTX ISA version newer than the
    /// driver supports).
    #[error("the driver could not load the PTX module: {source}; check that the PTX is complete and that the driver is new enough for its .version")]
    ModuleLoad {
        /// The driver's error.
        source: CudaError,
    },
    /// A PTX text contained a NUL byte, which the driver's string interface cannot carry.
    #[error("the PTX text contains a NUL byte at offset {offset}")]
    PtxContainsNul {
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// The module has no kernel of that name.
    #[error("the module has no kernel named {name:?}: {source}")]
    KernelNotFound {
        /// The name asked for.
        name: String,
        /// The driver's error.
        source: CudaError,
    },
    /// The driver refused to launch a kernel (bad configuration or arguments).
    #[error("launching {kernel} failed: {source}")]
    Launch {
        /// The kernel's name.
        kernel: String,
        /// The driver's error.
        source: CudaError,
    },
    /// A kernel started but failed while running (a `trap`, a bad memory access).
    #[error("{kernel} failed while running: {source}")]
    KernelFailed {
        /// The kernel's name.
        kernel: String,
        /// The driver's error.
        source: CudaError,
    },
    /// An input is larger than the operation can address in one launch.
    #[error("input of {len} elements is too large for {operation}: at most {max}")]
    InputTooLarge {
        /// The operation.
        operation: &'static str,
        /// The input's length.
        len: usize,
        /// The largest supported length.
        max: usize,
    },
}

impl Error {
    /// A [`Error::Driver`] for the step `during`.
    pub(crate) fn driver(during: impl Into<String>) -> impl FnOnce(CudaError) -> Error {
        let during = during.into();
        move |source| Error::Driver { during, source }
    }
}
