//! The GPU backend: a CUDA device's primary context, a default stream and warpsafe's own
//! kernels loaded for the device's architecture; and the driver objects the rest of the
//! crate holds (allocations, streams, events, loaded PTX) behind small wrappers.
//!
//! The one place that talks to the CUDA driver (through `cust` 0.3.2 and the calls of
//! [`driver`] that it does not wrap). Without the crate's `cuda` feature this module is
//! replaced by `gpu_absent.rs`, whose types have no values: every GPU path is then
//! unreachable, `Gpu::new` says why, and nothing links `libcuda`.

mod driver;

use std::borrow::Cow;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cust::context::{Context, CurrentContext};
use cust::sys as cuda;

use warpsafe::kernel::Safety;

use crate::stream::Stream;
use crate::{ptx, Device, Error, Function, LaunchConfig, Module, WarpSumElement};

pub use cust::error::CudaError;

/// A stream's raw handle, as kernel launches and NCCL take it.
pub(crate) type RawStream = cuda::CUstream;
/// A loaded kernel's raw handle.
pub(crate) type RawFunction = cuda::CUfunction;

/// One CUDA device's primary context and what warpsafe needs to know about the device.
/// Everything made on the device (modules, buffers, streams, events) holds an `Arc` of
/// it, so the context outlives them.
pub(crate) struct GpuContext {
    context: Context,
    name: String,
    ordinal: u32,
    compute_capability: (u32, u32),
    ptx_arch: u32,
    multiprocessors: u32,
    cooperative_launch: bool,
    /// `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: the most shared memory (static and dynamic) a
    /// block may have once its kernel opts in.
    shared_bytes_per_block: u32,
    /// `MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`.
    shared_bytes_per_multiprocessor: u32,
    /// Held while a function's dynamic shared memory limit is read and raised
    /// ([`GpuContext::fit_dynamic_shared`]), so that two threads cannot lower it under each
    /// other.
    shared_limits: Mutex<()>,
}

impl GpuContext {
    /// Makes this context current on the calling thread (the driver API works on the
    /// calling thread's current context).
    pub(crate) fn make_current(&self) -> Result<(), Error> {
        CurrentContext::set_current(&self.context).map_err(Error::driver("making the context current"))
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    pub(crate) fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    pub(crate) fn shared_bytes_per_block(&self) -> u32 {
        self.shared_bytes_per_block
    }

    pub(crate) fn shared_bytes_per_multiprocessor(&self) -> u32 {
        self.shared_bytes_per_multiprocessor
    }

    pub(crate) fn supports_cooperative_launch(&self) -> bool {
        self.cooperative_launch
    }

    /// Makes `function` launchable with `bytes` of dynamic shared memory. Up to 48 KiB every
    /// launch may have; above it the kernel must opt in (`MAX_DYNAMIC_SHARED_SIZE_BYTES`,
    /// raised here when it is lower, never lowered), up to the device's limit per block
    /// less the function's static shared memory. `Ok(Some(problem))` when the device
    /// cannot give the function that much (the launch would fail), saying why.
    ///
    /// This context must be current.
    fn fit_dynamic_shared(&self, function: RawFunction, bytes: u32) -> Result<Option<String>, Error> {
        if bytes <= driver::SHARED_WITHOUT_OPT_IN {
            return Ok(None);
        }
        let attribute = |a, what: &str| {
            // SAFETY: the function belongs to this context, which is current (caller).
            unsafe { driver::function_attribute(function, a) }
                .map_err(Error::driver(format!("reading {what}")))
        };
        let static_bytes = attribute(
            cuda::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            "a kernel's static shared memory",
        )?;
        let most = self.shared_bytes_per_block.saturating_sub(static_bytes);
        if bytes > most {
            return Ok(Some(format!(
                "{bytes} bytes of dynamic shared memory per block: {} gives a block at most {} bytes of \
                 shared memory, and this kernel has {static_bytes} of its own, so at most {most}",
                self.name, self.shared_bytes_per_block
            )));
        }
        // A poisoned lock guards nothing of its own: the limit lives in the driver.
        let _held = self.shared_limits.lock().unwrap_or_else(PoisonError::into_inner);
        let allowed = attribute(
            cuda::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            "a kernel's dynamic shared memory limit",
        )?;
        if allowed < bytes {
            // SAFETY: as above.
            unsafe { driver::set_max_dynamic_shared(function, bytes) }
                .map_err(Error::driver("raising a kernel's dynamic shared memory limit"))?;
        }
        Ok(None)
    }
}

/// A GPU: the backend of [`Device::gpu`], with a CUDA context, a default stream and
/// warpsafe's own kernels loaded. A cheap handle: clones share the context.
///
/// Every method makes the context current on the calling thread first, so a `Gpu` may be
/// used from any thread.
#[derive(Clone)]
pub struct Gpu {
    // Field order is drop order: the stream and module go before the context they use.
    stream: Arc<Stream>,
    kernels: Module,
    context: Arc<GpuContext>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("name", &self.context.name)
            .field("ordinal", &self.context.ordinal)
            .field("compute_capability", &self.context.compute_capability)
            .field("ptx_arch", &self.context.ptx_arch)
            .finish()
    }
}

/// True for driver answers that mean "there is no usable GPU here" rather than a fault.
fn means_no_device(err: CudaError) -> bool {
    matches!(
        err,
        CudaError::NoDevice
            | CudaError::InvalidDevice
            | CudaError::OperatingSystemError
            | CudaError::UnknownError
    )
}

impl Gpu {
    /// Opens the first CUDA device and loads warpsafe's PTX for its architecture.
    ///
    /// # Errors
    /// [`Error::NoDevice`] when there is no driver or no GPU, [`Error::UnsupportedDevice`]
    /// for a GPU older than sm_70, [`Error::ModuleLoad`] when the driver rejects the PTX,
    /// [`Error::Driver`] for any other driver failure.
    pub fn new() -> Result<Gpu, Error> {
        Gpu::with_ordinal(0)
    }

    /// The number of CUDA devices the driver shows this process (`CUDA_VISIBLE_DEVICES`
    /// applies); 0 without a driver.
    pub fn count() -> u32 {
        if cust::init(cust::CudaFlags::empty()).is_err() {
            return 0;
        }
        cust::device::Device::num_devices().unwrap_or(0)
    }

    /// Opens CUDA device `ordinal` (0 is the first, as `CUDA_VISIBLE_DEVICES` orders
    /// them) and loads warpsafe's PTX for its architecture. Each device has its own
    /// primary context, shared by every `Gpu` of that ordinal in the process.
    ///
    /// # Errors
    /// [`Error::NoDevice`] when there is no driver or no device `ordinal`; otherwise as
    /// for [`Gpu::new`].
    pub fn with_ordinal(ordinal: u32) -> Result<Gpu, Error> {
        cust::init(cust::CudaFlags::empty()).map_err(|e| Error::NoDevice { reason: e.to_string() })?;
        let count =
            cust::device::Device::num_devices().map_err(|e| Error::NoDevice { reason: e.to_string() })?;
        if count == 0 {
            return Err(Error::NoDevice { reason: "the driver reports 0 devices".into() });
        }
        if ordinal >= count {
            return Err(Error::NoDevice {
                reason: format!("no device {ordinal}: the driver reports {count} (0 to {})", count - 1),
            });
        }
        let device = cust::device::Device::get_device(ordinal)
            .map_err(|e| Error::NoDevice { reason: e.to_string() })?;
        let name = device.name().map_err(Error::driver("reading the device name"))?;
        // Every attribute by the driver's own enum: `cust`'s `DeviceAttribute` names neither
        // the cooperative-launch flag nor the opt-in shared memory limit.
        let attribute = |a, what: &str| -> Result<u32, Error> {
            driver::device_attribute(device.as_raw(), a)
                .map(|v| v.max(0) as u32)
                .map_err(Error::driver(format!("reading the {what}")))
        };
        use cuda::CUdevice_attribute as Attribute;
        let major = attribute(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability")?;
        let minor = attribute(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability")?;
        let multiprocessors =
            attribute(Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count")?;
        let cooperative_launch =
            attribute(Attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, "cooperative-launch attribute")?
                != 0;
        let shared_bytes_per_block = attribute(
            Attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            "shared memory per block",
        )?;
        let shared_bytes_per_multiprocessor = attribute(
            Attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            "shared memory per multiprocessor",
        )?;
        let ptx_arch = ptx::ENTRY
            .ptx_for(major, minor)
            .map(|(sm, _)| sm)
            .ok_or_else(|| Error::UnsupportedDevice { name: name.clone(), major, minor })?;
        // The primary context: every `Gpu` of the process shares it, as the runtime API does.
        let context = Context::new(device).map_err(|e| {
            if means_no_device(e) {
                Error::NoDevice { reason: e.to_string() }
            } else {
                Error::Driver { during: "creating a context".into(), source: e }
            }
        })?;
        let context = Arc::new(GpuContext {
            context,
            name,
            ordinal,
            compute_capability: (major, minor),
            ptx_arch,
            multiprocessors,
            cooperative_launch,
            shared_bytes_per_block,
            shared_bytes_per_multiprocessor,
            shared_limits: Mutex::new(()),
        });
        context.make_current()?;
        let stream = Arc::new(Stream::gpu(&context)?);
        let kernels = Module::load_program_gpu(&context, &ptx::ENTRY)?;
        Ok(Gpu { stream, kernels, context })
    }

    pub(crate) fn context(&self) -> &Arc<GpuContext> {
        &self.context
    }

    pub(crate) fn entry_module(&self) -> &Module {
        &self.kernels
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> &str {
        &self.context.name
    }

    /// The device's ordinal: its position among the devices the driver shows this process.
    pub fn ordinal(&self) -> u32 {
        self.context.ordinal
    }

    /// The device's compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.context.compute_capability
    }

    /// The `sm_XX` of the embedded PTX that was loaded for this device.
    pub fn ptx_arch(&self) -> u32 {
        self.context.ptx_arch
    }

    /// Loads a PTX module (for example one built from your own kernel crate with
    /// `warpsafe-build`) into this device's context.
    ///
    /// # Errors
    /// [`Error::PtxContainsNul`] or [`Error::ModuleLoad`] when the PTX cannot be loaded.
    pub fn load_module(&self, ptx: &str) -> Result<Module, Error> {
        Module::load_ptx_gpu(&self.context, Cow::Owned(ptx.to_string()), &[])
    }

    /// Launches `function` on this device's stream and waits for it to finish.
    ///
    /// # Safety
    /// `args` has one pointer per kernel parameter, in order, each pointing to a value of
    /// exactly the parameter's type; every device pointer among those values is valid for
    /// everything the kernel reads and writes through it.
    ///
    /// # Errors
    /// [`Error::Launch`] when the driver refuses the launch (for example a block of more
    /// than 1024 threads, or more shared memory than the device has);
    /// [`Error::KernelFailed`] when the kernel faults while running.
    pub unsafe fn launch<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { Device::from(self.clone()).launch_raw(function, config, args) }
    }

    /// This device's own stream, on which [`Gpu::launch`] and the waiting launches of
    /// [`Device`] run.
    pub(crate) fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Queues one launch of `function` on `stream` without waiting for it. The launch was
    /// checked by [`Device::check_launch`].
    ///
    /// # Safety
    /// As for [`Gpu::launch`]; the stream belongs to this device.
    pub(crate) unsafe fn enqueue<P, S: Safety>(
        &self,
        stream: &Stream,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
        cooperative: bool,
    ) -> Result<(), Error> {
        let raw = function.gpu_handle(&self.context)?;
        let stream = stream.gpu_handle(&self.context)?;
        self.context.make_current()?;
        if let Some(problem) = self.context.fit_dynamic_shared(raw, config.shared_mem_bytes)? {
            return Err(Error::InvalidLaunch { kernel: function.name().to_string(), problem });
        }
        let shape = driver::RawLaunch {
            grid: config.grid,
            block: config.block,
            shared_mem_bytes: config.shared_mem_bytes,
        };
        // SAFETY: the function and stream belong to this (current) context; the caller
        // guarantees the arguments match the kernel's parameters.
        unsafe { driver::launch(raw, stream, &shape, args, cooperative) }
            .map_err(|source| Error::Launch { kernel: function.name().to_string(), source })
    }

    /// Blocks of `function` one multiprocessor holds at once (`0` for an impossible block).
    pub(crate) fn max_active_blocks_per_multiprocessor<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        block_threads: u32,
        dynamic_shared_bytes: u32,
    ) -> Result<u32, Error> {
        let raw = function.gpu_handle(&self.context)?;
        if block_threads == 0 || block_threads > 1024 {
            return Ok(0);
        }
        self.context.make_current()?;
        if self.context.fit_dynamic_shared(raw, dynamic_shared_bytes)?.is_some() {
            return Ok(0);
        }
        // SAFETY: the function belongs to this context, which is current.
        unsafe { driver::max_active_blocks(raw, block_threads, dynamic_shared_bytes) }
            .map_err(Error::driver(format!("computing the occupancy of {}", function.name())))
    }

    /// Blocks of `function` the whole device holds at once: the largest cooperative grid.
    pub(crate) fn max_cooperative_blocks<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        block_threads: u32,
        dynamic_shared_bytes: u32,
    ) -> Result<u32, Error> {
        let per_sm =
            self.max_active_blocks_per_multiprocessor(function, block_threads, dynamic_shared_bytes)?;
        Ok(per_sm.saturating_mul(self.context.multiprocessors))
    }

    /// Waits for `stream`; a failure is reported as `function`'s.
    pub(crate) fn wait_for<P, S: Safety>(
        &self,
        stream: &Stream,
        function: &Function<P, S>,
    ) -> Result<(), Error> {
        stream.synchronize().map_err(|err| match err {
            Error::Driver { source, .. } => {
                Error::KernelFailed { kernel: function.name().to_string(), source }
            }
            other => other,
        })
    }

    /// Launches `function` `repetitions` times back to back on this device's stream and
    /// returns the GPU time of each launch, measured with CUDA events recorded around it
    /// (launch gaps excluded). For benchmarks: warm up first and take the median.
    ///
    /// # Safety
    /// As for [`Gpu::launch`].
    ///
    /// # Errors
    /// As for [`Gpu::launch`], plus [`Error::Driver`] when an event cannot be made or read.
    pub unsafe fn launch_timed<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
        repetitions: usize,
    ) -> Result<Vec<Duration>, Error> {
        Device::from(self.clone()).check_launch(function, config, args, false)?;
        let mut events = vec![self.stream.record()?];
        for _ in 0..repetitions {
            // SAFETY: forwarded from the caller.
            unsafe { self.enqueue(&self.stream, function, config, args, false)? };
            events.push(self.stream.record()?);
        }
        self.wait_for(&self.stream, function)?;
        events.windows(2).map(|pair| pair[1].elapsed_since(&pair[0])).collect()
    }

    /// Sums each run of 32 consecutive elements on the GPU: [`Device::warp_sums`].
    ///
    /// # Errors
    /// As for [`Device::warp_sums`].
    pub fn warp_sums<T: WarpSumElement>(&self, input: &[T]) -> Result<Vec<T>, Error> {
        Device::from(self.clone()).warp_sums(input)
    }
}

impl GpuContext {
    /// `bytes` (> 0) zeroed bytes of device memory in this context: its address.
    pub(crate) fn alloc_zeroed(&self, bytes: usize) -> Result<u64, Error> {
        self.make_current()?;
        let mut address = 0;
        // SAFETY: `address` is a valid out-pointer; the context is current.
        driver::check(unsafe { cuda::cuMemAlloc_v2(&mut address, bytes) })
            .map_err(|source| Error::Alloc { bytes, source: Some(source) })?;
        // SAFETY: the `bytes` bytes at `address` were just allocated in this context.
        if let Err(source) = driver::check(unsafe { cuda::cuMemsetD8_v2(address, 0, bytes) }) {
            self.free(address);
            return Err(Error::Driver { during: format!("zeroing {bytes} bytes"), source });
        }
        if let Err(error) = self.wait_for_legacy_stream(&format!("zeroing {bytes} bytes")) {
            self.free(address);
            return Err(error);
        }
        Ok(address)
    }

    /// Waits for the work this context's synchronous memory calls left on the legacy
    /// default stream. `cuMemsetD8` and `cuMemcpyHtoD` from pageable memory may return
    /// before the device memory holds the result (CUDA's "API synchronization behavior"),
    /// and warpsafe launches on non-blocking streams, which do not wait for the legacy
    /// stream: without this, a launch enqueued right after could read the memory before
    /// the memset or copy reached it (a histogram's hand-off words cleared under a running
    /// launch would leave its blocks waiting forever).
    fn wait_for_legacy_stream(&self, during: &str) -> Result<(), Error> {
        // SAFETY: the context is current (callers made it so); the null stream is the
        // legacy default stream, always valid.
        driver::check(unsafe { cuda::cuStreamSynchronize(std::ptr::null_mut()) })
            .map_err(Error::driver(during))
    }

    /// Frees an allocation of this context. A failure (the context is already broken by
    /// a faulted kernel) leaves nothing to free and no one to tell: it is ignored, as the
    /// driver's own wrappers do.
    pub(crate) fn free(&self, address: u64) {
        if self.make_current().is_ok() {
            // SAFETY: `address` came from `alloc_zeroed` in this context and is freed once.
            let _ = unsafe { cuda::cuMemFree_v2(address) };
        }
    }

    /// Copies `dst.len()` bytes from device address `address` of this context.
    ///
    /// # Safety
    /// `address` holds at least `dst.len()` bytes of an allocation of this context.
    pub(crate) unsafe fn copy_to_host(&self, address: u64, dst: &mut [u8]) -> Result<(), Error> {
        self.make_current()?;
        let bytes = dst.len();
        // SAFETY: `dst` has `bytes` writable bytes; the caller vouches for `address`.
        driver::check(unsafe { cuda::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), address, bytes) })
            .map_err(Error::driver(format!("copying {bytes} bytes from the device")))
    }

    /// Copies `src` to device address `address` of this context.
    ///
    /// # Safety
    /// `address` holds at least `src.len()` bytes of an allocation of this context that no
    /// one else accesses now.
    pub(crate) unsafe fn copy_from_host(&self, address: u64, src: &[u8]) -> Result<(), Error> {
        self.make_current()?;
        let bytes = src.len();
        // SAFETY: `src` has `bytes` readable bytes; the caller vouches for `address`.
        let during = format!("copying {bytes} bytes to the device");
        driver::check(unsafe { cuda::cuMemcpyHtoD_v2(address, src.as_ptr().cast(), bytes) })
            .map_err(Error::driver(during.as_str()))?;
        self.wait_for_legacy_stream(&during)
    }
}

/// A non-blocking CUDA stream of the context current when it was made.
pub(crate) struct GpuStream(cust::stream::Stream);

impl GpuStream {
    /// A new stream in `context` that does not wait for the legacy default stream (so
    /// warpsafe's launches overlap with other libraries' work).
    pub(crate) fn new(context: &GpuContext) -> Result<GpuStream, Error> {
        context.make_current()?;
        cust::stream::Stream::new(cust::stream::StreamFlags::NON_BLOCKING, None)
            .map(GpuStream)
            .map_err(Error::driver("creating a stream"))
    }

    pub(crate) fn raw(&self) -> RawStream {
        self.0.as_inner()
    }

    /// Waits for everything queued (its context current).
    pub(crate) fn synchronize(&self) -> Result<(), CudaError> {
        self.0.synchronize()
    }

    /// Whether everything queued has finished, without waiting (its context current).
    pub(crate) fn is_idle(&self) -> Result<bool, CudaError> {
        // SAFETY: a live stream of the current context.
        match driver::check(unsafe { cuda::cuStreamQuery(self.0.as_inner()) }) {
            Ok(()) => Ok(true),
            Err(CudaError::NotReady) => Ok(false),
            Err(err) => Err(err),
        }
    }
}

/// A CUDA event recorded in a stream.
pub(crate) struct GpuEvent(cust::event::Event);

impl GpuEvent {
    /// An event recorded in `stream` now (its context current).
    pub(crate) fn record(stream: &GpuStream) -> Result<GpuEvent, CudaError> {
        let event = cust::event::Event::new(cust::event::EventFlags::DEFAULT)?;
        event.record(&stream.0)?;
        Ok(GpuEvent(event))
    }

    /// Waits for this event, then the GPU time from `start` to it (its context current).
    pub(crate) fn elapsed_since(&self, start: &GpuEvent) -> Result<Duration, Error> {
        self.0.synchronize().map_err(Error::driver("waiting for an event"))?;
        self.0.elapsed(&start.0).map_err(Error::driver("reading the time between two events"))
    }
}

/// PTX loaded into the context current when it was loaded; unloaded on drop.
pub(crate) struct LoadedPtx(cust::module::Module);

impl LoadedPtx {
    /// Loads `ptx` (no NUL bytes; the module of `kernel` alone, or of no kernel) into
    /// `context`: the driver compiles it here.
    pub(crate) fn load(context: &GpuContext, ptx: &str, kernel: Option<&str>) -> Result<LoadedPtx, Error> {
        context.make_current()?;
        cust::module::Module::from_ptx(ptx, &[])
            .map(LoadedPtx)
            .map_err(|source| Error::ModuleLoad { kernel: kernel.map(str::to_string), source })
    }

    /// The kernel `name` (its context current).
    pub(crate) fn function(&self, name: &str) -> Result<RawFunction, CudaError> {
        self.0.get_function(name).map(|f| f.to_raw())
    }
}
