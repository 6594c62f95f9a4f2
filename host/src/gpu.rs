//! A CUDA device with warpsafe's kernels loaded, and the launch path for user modules.

use std::ffi::c_void;

use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};
use cust::stream::{Stream, StreamFlags};

use crate::{ptx, Error};

/// Threads per block of warpsafe's 1-D kernels: a multiple of 32, so every warp is full.
const BLOCK_THREADS: u32 = 256;

/// The largest grid size along x that every sm_70+ device accepts.
const MAX_GRID_X: u32 = i32::MAX as u32;

/// A GPU with a CUDA context, a stream and warpsafe's own kernels loaded.
///
/// Every method makes this context current on the calling thread first, so a `Gpu` may be
/// used from any thread (one at a time: it is not `Sync`).
pub struct Gpu {
    // Field order is drop order: the module and stream go before the context they use.
    kernels: Module,
    stream: Stream,
    context: Context,
    name: String,
    compute_capability: (u32, u32),
    ptx_arch: u32,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .field("ptx_arch", &self.ptx_arch)
            .finish()
    }
}

/// A launch configuration: grid and block shape (x, y, z) and dynamic shared memory.
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
    pub fn linear(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig { grid: (grid, 1, 1), block: (block, 1, 1), shared_mem_bytes: 0 }
    }
}

/// A loaded PTX module.
#[derive(Debug)]
pub struct Module {
    inner: cust::module::Module,
}

/// A kernel of a [`Module`].
#[derive(Debug)]
pub struct Function<'m> {
    inner: cust::function::Function<'m>,
    name: String,
}

impl Module {
    /// Looks a kernel up by its (unmangled) name.
    ///
    /// # Errors
    /// [`Error::KernelNotFound`] if the module has no such kernel.
    pub fn function(&self, name: &str) -> Result<Function<'_>, Error> {
        let inner = self
            .inner
            .get_function(name)
            .map_err(|source| Error::KernelNotFound { name: name.to_string(), source })?;
        Ok(Function { inner, name: name.to_string() })
    }
}

/// An element type that warpsafe's warp-sum kernel supports.
///
/// Sealed: the kernel exists for exactly these types.
pub trait WarpSumElement: DeviceCopy + sealed::Sealed {
    /// The kernel's name in warpsafe's PTX.
    const KERNEL: &'static str;
}

impl WarpSumElement for u32 {
    const KERNEL: &'static str = "warpsafe_warp_sum_u32";
}

impl WarpSumElement for f32 {
    const KERNEL: &'static str = "warpsafe_warp_sum_f32";
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
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
        cust::init(cust::CudaFlags::empty()).map_err(|e| Error::NoDevice { reason: e.to_string() })?;
        let count = Device::num_devices().map_err(|e| Error::NoDevice { reason: e.to_string() })?;
        if count == 0 {
            return Err(Error::NoDevice { reason: "the driver reports 0 devices".into() });
        }
        let device = Device::get_device(0).map_err(|e| Error::NoDevice { reason: e.to_string() })?;
        let name = device.name().map_err(Error::driver("reading the device name"))?;
        let attribute = |a, what: &str| -> Result<u32, Error> {
            device.get_attribute(a).map(|v| v as u32).map_err(Error::driver(format!("reading the {what}")))
        };
        let major = attribute(DeviceAttribute::ComputeCapabilityMajor, "compute capability")?;
        let minor = attribute(DeviceAttribute::ComputeCapabilityMinor, "compute capability")?;
        let (ptx_arch, ptx_text) = ptx::for_compute_capability(major, minor)
            .ok_or_else(|| Error::UnsupportedDevice { name: name.clone(), major, minor })?;
        let context = Context::new(device).map_err(|e| {
            if means_no_device(e) {
                Error::NoDevice { reason: e.to_string() }
            } else {
                Error::Driver { during: "creating a context".into(), source: e }
            }
        })?;
        let stream =
            Stream::new(StreamFlags::NON_BLOCKING, None).map_err(Error::driver("creating a stream"))?;
        let kernels = load_module(ptx_text)?;
        Ok(Gpu { kernels, stream, context, name, compute_capability: (major, minor), ptx_arch })
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device's compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    /// The `sm_XX` of the embedded PTX that was loaded for this device.
    pub fn ptx_arch(&self) -> u32 {
        self.ptx_arch
    }

    fn make_current(&self) -> Result<(), Error> {
        CurrentContext::set_current(&self.context).map_err(Error::driver("making the context current"))
    }

    /// Loads a PTX module (for example one built from your own kernel crate with
    /// `warpsafe-build`) into this device's context.
    ///
    /// # Errors
    /// [`Error::PtxContainsNul`] or [`Error::ModuleLoad`] when the PTX cannot be loaded.
    pub fn load_module(&self, ptx: &str) -> Result<Module, Error> {
        self.make_current()?;
        load_module(ptx)
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
    pub unsafe fn launch(
        &self,
        function: &Function<'_>,
        config: LaunchConfig,
        args: &[*mut c_void],
    ) -> Result<(), Error> {
        self.make_current()?;
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(function, config, args)? };
        self.wait_for(function)
    }

    /// Queues one launch of `function` on the stream without waiting for it.
    ///
    /// # Safety
    /// As for [`Gpu::launch`]; the context is current.
    unsafe fn enqueue(
        &self,
        function: &Function<'_>,
        config: LaunchConfig,
        args: &[*mut c_void],
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the arguments match the kernel's parameters.
        unsafe {
            self.stream.launch(&function.inner, config.grid, config.block, config.shared_mem_bytes, args)
        }
        .map_err(|source| Error::Launch { kernel: function.name.clone(), source })
    }

    /// Waits for the stream; a failure is reported as `function`'s.
    fn wait_for(&self, function: &Function<'_>) -> Result<(), Error> {
        self.stream
            .synchronize()
            .map_err(|source| Error::KernelFailed { kernel: function.name.clone(), source })
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
    pub unsafe fn launch_timed(
        &self,
        function: &Function<'_>,
        config: LaunchConfig,
        args: &[*mut c_void],
        repetitions: usize,
    ) -> Result<Vec<std::time::Duration>, Error> {
        use cust::event::{Event, EventFlags};
        self.make_current()?;
        let events = (0..=repetitions)
            .map(|_| Event::new(EventFlags::DEFAULT))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::driver("creating timing events"))?;
        events[0].record(&self.stream).map_err(Error::driver("recording an event"))?;
        for end in &events[1..] {
            // SAFETY: forwarded from the caller.
            unsafe { self.enqueue(function, config, args)? };
            end.record(&self.stream).map_err(Error::driver("recording an event"))?;
        }
        self.wait_for(function)?;
        events
            .windows(2)
            .map(|pair| pair[1].elapsed(&pair[0]).map_err(Error::driver("reading an event")))
            .collect()
    }

    /// Sums each run of 32 consecutive elements (the last run may be shorter) with one warp
    /// per run, on the GPU. Returns `input.len().div_ceil(32)` sums; an empty input gives
    /// an empty result without touching the device. `u32` sums wrap on overflow.
    ///
    /// # Errors
    /// [`Error::InputTooLarge`] past the largest 1-D grid; driver failures otherwise.
    pub fn warp_sums<T: WarpSumElement>(&self, input: &[T]) -> Result<Vec<T>, Error> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let max = MAX_GRID_X as usize * BLOCK_THREADS as usize;
        if input.len() > max {
            return Err(Error::InputTooLarge { operation: "warp_sums", len: input.len(), max });
        }
        self.make_current()?;
        let bytes = std::mem::size_of_val(input);
        let d_input = DeviceBuffer::from_slice(input)
            .map_err(Error::driver(format!("copying {bytes} bytes to the device")))?;
        let out_len = input.len().div_ceil(32);
        // SAFETY: every element of the output is written by the kernel before it is read
        // back (one lane 0 per warp, for every warp index below out_len).
        let d_out = unsafe { DeviceBuffer::<T>::uninitialized(out_len) }
            .map_err(Error::driver(format!("allocating {} bytes", out_len * std::mem::size_of::<T>())))?;

        let function = self.kernels.function(T::KERNEL)?;
        let grid = input.len().div_ceil(BLOCK_THREADS as usize) as u32;
        let mut p_input = d_input.as_device_ptr();
        let mut len = input.len() as u64;
        let mut p_out = d_out.as_device_ptr();
        let args = crate::kernel_args![p_input, len, p_out];
        // SAFETY: the kernel's parameters are (*const T, u64, *mut T) (warpsafe-entry);
        // `d_input` holds `len` elements and `d_out` holds `len.div_ceil(32)`; the block
        // size is a multiple of 32 as the kernel requires.
        unsafe { self.launch(&function, LaunchConfig::linear(grid, BLOCK_THREADS), &args)? };

        let mut out = vec![input[0]; out_len];
        d_out.copy_to(&mut out[..]).map_err(Error::driver("copying the sums back"))?;
        Ok(out)
    }
}

fn load_module(ptx: &str) -> Result<Module, Error> {
    if let Some(offset) = ptx.bytes().position(|b| b == 0) {
        return Err(Error::PtxContainsNul { offset });
    }
    let inner = cust::module::Module::from_ptx(ptx, &[]).map_err(|source| Error::ModuleLoad { source })?;
    Ok(Module { inner })
}
