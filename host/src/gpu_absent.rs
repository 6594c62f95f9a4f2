//! The GPU backend when warpsafe-host is built without its `cuda` feature: the same types
//! as `gpu/mod.rs`, none of which has a value. [`Gpu::new`] says why there is no GPU, so
//! `Device::auto` picks the emulator and `Device::gpu` is [`Error::NoDevice`]; every
//! other GPU path is unreachable by construction (matching on a value of an empty type),
//! and nothing links `libcuda`.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

use warpsafe::kernel::Safety;

use crate::stream::Stream;
use crate::{Error, Function, LaunchConfig, Module, WarpSumElement};

/// What [`Gpu::new`] and every GPU constructor report without the `cuda` feature.
const NO_CUDA: &str = "warpsafe-host was built without its `cuda` feature, so it has no GPU backend \
(emulator only, no libcuda needed); enable the feature (it is on by default) to use a GPU";

/// A type with no values: what every GPU object holds here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Never {}

/// A CUDA driver error; without the `cuda` feature there are none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudaError {}

impl std::fmt::Display for CudaError {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {}
    }
}

impl std::error::Error for CudaError {}

/// A stream's raw handle (never made here).
pub(crate) type RawStream = *mut c_void;
/// A loaded kernel's raw handle (never made here).
pub(crate) type RawFunction = *mut c_void;

/// A GPU context; none exists without the `cuda` feature.
pub(crate) struct GpuContext(Never);

impl GpuContext {
    pub(crate) fn make_current(&self) -> Result<(), Error> {
        match self.0 {}
    }

    pub(crate) fn name(&self) -> &str {
        match self.0 {}
    }

    pub(crate) fn compute_capability(&self) -> (u32, u32) {
        match self.0 {}
    }

    pub(crate) fn multiprocessors(&self) -> u32 {
        match self.0 {}
    }

    pub(crate) fn supports_cooperative_launch(&self) -> bool {
        match self.0 {}
    }

    pub(crate) fn shared_bytes_per_block(&self) -> u32 {
        match self.0 {}
    }

    pub(crate) fn shared_bytes_per_multiprocessor(&self) -> u32 {
        match self.0 {}
    }

    pub(crate) fn alloc_zeroed(&self, _bytes: usize) -> Result<u64, Error> {
        match self.0 {}
    }

    pub(crate) fn free(&self, _address: u64) {
        match self.0 {}
    }

    /// # Safety
    /// Never callable: there is no context.
    pub(crate) unsafe fn copy_to_host(&self, _address: u64, _dst: &mut [u8]) -> Result<(), Error> {
        match self.0 {}
    }

    /// # Safety
    /// Never callable: there is no context.
    pub(crate) unsafe fn copy_from_host(&self, _address: u64, _src: &[u8]) -> Result<(), Error> {
        match self.0 {}
    }
}

/// A GPU; without the `cuda` feature [`Gpu::new`] is always [`Error::NoDevice`].
#[derive(Clone, Debug)]
pub struct Gpu(Never);

impl Gpu {
    /// [`Error::NoDevice`], saying that the crate was built without its `cuda` feature.
    ///
    /// # Errors
    /// Always.
    pub fn new() -> Result<Gpu, Error> {
        Gpu::with_ordinal(0)
    }

    /// 0: no GPU is visible without the `cuda` feature.
    pub fn count() -> u32 {
        0
    }

    /// [`Error::NoDevice`], saying that the crate was built without its `cuda` feature.
    ///
    /// # Errors
    /// Always.
    pub fn with_ordinal(_ordinal: u32) -> Result<Gpu, Error> {
        Err(Error::NoDevice { reason: NO_CUDA.to_string() })
    }

    pub(crate) fn context(&self) -> &Arc<GpuContext> {
        match self.0 {}
    }

    pub(crate) fn entry_module(&self) -> &Module {
        match self.0 {}
    }

    /// The device's name (never reached).
    pub fn name(&self) -> &str {
        match self.0 {}
    }

    /// The device's ordinal (never reached).
    pub fn ordinal(&self) -> u32 {
        match self.0 {}
    }

    /// The device's compute capability (never reached).
    pub fn compute_capability(&self) -> (u32, u32) {
        match self.0 {}
    }

    /// The PTX architecture loaded (never reached).
    pub fn ptx_arch(&self) -> u32 {
        match self.0 {}
    }

    /// Loads a PTX module (never reached).
    ///
    /// # Errors
    /// Never returns.
    pub fn load_module(&self, _ptx: &str) -> Result<Module, Error> {
        match self.0 {}
    }

    /// Launches a kernel (never reached).
    ///
    /// # Safety
    /// Never callable: there is no GPU.
    ///
    /// # Errors
    /// Never returns.
    pub unsafe fn launch<P, S: Safety>(
        &self,
        _function: &Function<P, S>,
        _config: LaunchConfig,
        _args: &[*mut c_void],
    ) -> Result<(), Error> {
        match self.0 {}
    }

    pub(crate) fn stream(&self) -> &Stream {
        match self.0 {}
    }

    /// # Safety
    /// Never callable: there is no GPU.
    pub(crate) unsafe fn enqueue<P, S: Safety>(
        &self,
        _stream: &Stream,
        _function: &Function<P, S>,
        _config: LaunchConfig,
        _args: &[*mut c_void],
        _cooperative: bool,
    ) -> Result<(), Error> {
        match self.0 {}
    }

    pub(crate) fn max_active_blocks_per_multiprocessor<P, S: Safety>(
        &self,
        _function: &Function<P, S>,
        _block_threads: u32,
        _dynamic_shared_bytes: u32,
    ) -> Result<u32, Error> {
        match self.0 {}
    }

    pub(crate) fn max_cooperative_blocks<P, S: Safety>(
        &self,
        _function: &Function<P, S>,
        _block_threads: u32,
        _dynamic_shared_bytes: u32,
    ) -> Result<u32, Error> {
        match self.0 {}
    }

    pub(crate) fn wait_for<P, S: Safety>(
        &self,
        _stream: &Stream,
        _function: &Function<P, S>,
    ) -> Result<(), Error> {
        match self.0 {}
    }

    /// Timed launches (never reached).
    ///
    /// # Safety
    /// Never callable: there is no GPU.
    ///
    /// # Errors
    /// Never returns.
    pub unsafe fn launch_timed<P, S: Safety>(
        &self,
        _function: &Function<P, S>,
        _config: LaunchConfig,
        _args: &[*mut c_void],
        _repetitions: usize,
    ) -> Result<Vec<Duration>, Error> {
        match self.0 {}
    }

    /// Warp sums on the GPU (never reached).
    ///
    /// # Errors
    /// Never returns.
    pub fn warp_sums<T: WarpSumElement>(&self, _input: &[T]) -> Result<Vec<T>, Error> {
        match self.0 {}
    }
}

/// A CUDA stream (none here).
pub(crate) struct GpuStream(Never);

impl GpuStream {
    pub(crate) fn new(context: &GpuContext) -> Result<GpuStream, Error> {
        match context.0 {}
    }

    pub(crate) fn raw(&self) -> RawStream {
        match self.0 {}
    }

    pub(crate) fn synchronize(&self) -> Result<(), CudaError> {
        match self.0 {}
    }

    pub(crate) fn is_idle(&self) -> Result<bool, CudaError> {
        match self.0 {}
    }
}

/// A CUDA event (none here).
pub(crate) struct GpuEvent(Never);

impl GpuEvent {
    pub(crate) fn record(stream: &GpuStream) -> Result<GpuEvent, CudaError> {
        match stream.0 {}
    }

    pub(crate) fn elapsed_since(&self, _start: &GpuEvent) -> Result<Duration, Error> {
        match self.0 {}
    }
}

/// Loaded PTX (none here).
pub(crate) struct LoadedPtx(Never);

impl LoadedPtx {
    pub(crate) fn load(context: &GpuContext, _ptx: &str, _kernel: Option<&str>) -> Result<LoadedPtx, Error> {
        match context.0 {}
    }

    pub(crate) fn function(&self, _name: &str) -> Result<RawFunction, CudaError> {
        match self.0 {}
    }
}
