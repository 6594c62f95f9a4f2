//! [`Device`]: one launch API over both backends, a CUDA GPU and the CPU emulator.

use std::ffi::c_void;

use bytemuck::Pod;

use warpsafe::kernel::{Safe, Safety};

use crate::emulator::{self, Emulator};
use crate::launch::{KernelArgs, ParamValues};
use crate::stream::Stream;
use crate::{emu, ptx, DeviceBuffer, Error, Function, Gpu, LaunchConfig, Module, Program};

/// Which machine a [`Device`] runs kernels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// A CUDA GPU, through the driver API.
    Gpu,
    /// warpsafe's CPU emulator (`warpsafe::emu`): the kernels' Rust code run on the host,
    /// with every warp rule checked.
    Emulator,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Gpu => "GPU",
            Backend::Emulator => "CPU emulator",
        })
    }
}

/// A device that runs warpsafe kernels: a CUDA GPU or the CPU emulator, behind one API,
/// so the same host code and tests run on either. A cheap handle: clones share the GPU
/// context.
///
/// Kernels are reached through a [`Module`] ([`Device::load`] of a [`Program`]) and
/// launched with [`Device::launch`] (typed, safe for safe kernels; waits) or the raw
/// [`Device::launch_raw_on`] (enqueues on a [`Stream`]). Memory is a [`DeviceBuffer`]: on the emulator, host memory whose address
/// the emulated kernels receive.
///
/// ```
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// use warpsafe_host::{Backend, Device};
/// // The GPU when there is one, else the emulator.
/// let device = Device::auto()?;
/// println!("running on {} ({})", device.name(), device.backend());
/// let sums = device.warp_sums(&[1u32; 40])?;
/// assert_eq!(sums, vec![32, 8]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Device {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    Gpu(Gpu),
    Emulator(Emulator),
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Gpu(gpu) => write!(f, "Device({gpu:?})"),
            Inner::Emulator(emulator) => write!(f, "Device(emulator, {:?})", emulator.options()),
        }
    }
}

impl From<Gpu> for Device {
    fn from(gpu: Gpu) -> Device {
        Device { inner: Inner::Gpu(gpu) }
    }
}

impl Device {
    /// The first CUDA GPU ([`Gpu::new`]).
    ///
    /// # Errors
    /// [`Error::NoDevice`] without a GPU; see [`Gpu::new`] for the others.
    pub fn gpu() -> Result<Device, Error> {
        Gpu::new().map(Device::from)
    }

    /// Every CUDA GPU the driver shows this process, in ordinal order (empty without a
    /// driver or a GPU): the devices of a multi-GPU [`crate::collective::Communicator`].
    ///
    /// # Errors
    /// As for [`Gpu::with_ordinal`], for a GPU that is present but cannot be used.
    pub fn gpus() -> Result<Vec<Device>, Error> {
        (0..Gpu::count()).map(|ordinal| Gpu::with_ordinal(ordinal).map(Device::from)).collect()
    }

    /// The CPU emulator with default options (`warpsafe::emu::Options::default()`, whose
    /// seed comes from `$WARPSAFE_EMU_SEED` when set).
    pub fn emulator() -> Device {
        Device::emulator_with(emu::Options::default())
    }

    /// The CPU emulator with `options` (seed, resident blocks, race checking).
    pub fn emulator_with(options: emu::Options) -> Device {
        Device { inner: Inner::Emulator(Emulator::new(options)) }
    }

    /// The GPU when one is present, else the emulator.
    ///
    /// # Errors
    /// A GPU that is present but cannot be used (a driver failure, a device older than
    /// sm_70) is an error, not a reason to fall back silently.
    pub fn auto() -> Result<Device, Error> {
        match Device::gpu() {
            Err(Error::NoDevice { .. }) => Ok(Device::emulator()),
            other => other,
        }
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Gpu(_) => Backend::Gpu,
            Inner::Emulator(_) => Backend::Emulator,
        }
    }

    /// The device's name: the GPU's (e.g. "NVIDIA H100 80GB HBM3"), or "warpsafe CPU
    /// emulator" with its seed.
    pub fn name(&self) -> String {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.name().to_string(),
            Inner::Emulator(emulator) => format!("warpsafe CPU emulator (seed {})", emulator.options().seed),
        }
    }

    /// The GPU backend, for what only a GPU has (compute capability, PTX architecture,
    /// timed launches); `None` on the emulator.
    pub fn as_gpu(&self) -> Option<&Gpu> {
        match &self.inner {
            Inner::Gpu(gpu) => Some(gpu),
            Inner::Emulator(_) => None,
        }
    }

    /// Makes the GPU's context current on the calling thread (for libraries such as NCCL
    /// that work on the current device); nothing on the emulator.
    pub(crate) fn make_current(&self) -> Result<(), Error> {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.context().make_current(),
            Inner::Emulator(_) => Ok(()),
        }
    }

    /// The emulated device's identity; `None` on a GPU.
    pub(crate) fn emulator_id(&self) -> Option<u64> {
        match &self.inner {
            Inner::Gpu(_) => None,
            Inner::Emulator(emulator) => Some(emulator.id()),
        }
    }

    /// The emulator's options; `None` on a GPU.
    pub fn emulator_options(&self) -> Option<&emu::Options> {
        match &self.inner {
            Inner::Gpu(_) => None,
            Inner::Emulator(emulator) => Some(emulator.options()),
        }
    }

    /// Streaming multiprocessors: the GPU's, or the emulator's fixed small number (4), so
    /// grids sized from it stay cheap to emulate.
    pub fn multiprocessor_count(&self) -> u32 {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.context().multiprocessors(),
            Inner::Emulator(_) => emulator::MULTIPROCESSORS,
        }
    }

    /// The most shared memory, static and dynamic together, one block may have: the GPU's
    /// opt-in limit (`MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: 96 KiB on sm_70, 64 KiB on sm_75,
    /// 163 KiB on sm_80, 99 KiB on sm_86 and sm_89, 227 KiB on sm_90), or on the emulator
    /// an sm_90's 227 KiB. A launch may ask for more than 48 KiB of dynamic shared memory:
    /// on a GPU warpsafe opts the kernel in (`MAX_DYNAMIC_SHARED_SIZE_BYTES`) before it
    /// launches it. A launch over this limit is refused with [`Error::InvalidLaunch`] on
    /// both backends; the kernel's static shared arrays count against it too: a GPU
    /// refuses the launch before it runs, the emulator ends it with an `InvalidLaunch`
    /// emulator error when the kernel first touches an array that does not fit (it can
    /// be stricter than a GPU, where LLVM may keep an array in registers).
    pub fn shared_bytes_per_block(&self) -> u32 {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.context().shared_bytes_per_block(),
            Inner::Emulator(_) => warpsafe::kernel::MAX_DYNAMIC_SHARED_BYTES,
        }
    }

    /// Shared memory of one multiprocessor, which its resident blocks share: the GPU's
    /// (`MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`: 228 KiB on sm_90, 164 KiB on sm_80, 96 KiB
    /// on sm_70), or on the emulator an sm_90's 228 KiB.
    pub fn shared_bytes_per_multiprocessor(&self) -> u32 {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.context().shared_bytes_per_multiprocessor(),
            Inner::Emulator(_) => emulator::SHARED_BYTES_PER_MULTIPROCESSOR,
        }
    }

    /// Whether [`Device::launch_cooperative`] works here (every sm_70+ GPU under a
    /// driver that allows it, and the emulator).
    pub fn supports_cooperative_launch(&self) -> bool {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.context().supports_cooperative_launch(),
            Inner::Emulator(_) => true,
        }
    }

    /// `len` zeroed elements of device memory.
    ///
    /// # Errors
    /// [`Error::Alloc`] when the memory cannot be had, [`Error::InputTooLarge`] for a
    /// length whose byte size overflows.
    pub fn alloc_zeroed<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<T>, Error> {
        match &self.inner {
            Inner::Gpu(gpu) => DeviceBuffer::gpu_zeroed(gpu.context(), len),
            Inner::Emulator(emulator) => DeviceBuffer::host_zeroed(len, emulator.id()),
        }
    }

    /// A device buffer holding a copy of `data`.
    ///
    /// # Errors
    /// As for [`Device::alloc_zeroed`], plus [`Error::Driver`] when the copy fails.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let mut buffer = self.alloc_zeroed(data.len())?;
        buffer.copy_from_host(data)?;
        Ok(buffer)
    }

    /// Loads `program` on this device: on a GPU its PTX for the newest architecture the
    /// GPU runs, each kernel compiled by the driver on its first lookup (a module of 290
    /// kernels took over two minutes to compile whole: `Module`), warpsafe's own
    /// [`ptx::ENTRY`] once per [`Gpu`]; on the emulator nothing needs loading (the kernels
    /// are host code).
    ///
    /// # Errors
    /// [`Error::UnsupportedDevice`] when the program has no PTX the GPU can run,
    /// [`Error::ModuleLoad`] when the driver rejects its text outside the kernels (a
    /// kernel's own text is compiled, and any error reported, when it is looked up).
    pub fn load(&self, program: &Program) -> Result<Module, Error> {
        match &self.inner {
            Inner::Gpu(gpu) if std::ptr::eq(program.ptx(), ptx::ENTRY.ptx()) => {
                Ok(gpu.entry_module().clone())
            }
            Inner::Gpu(gpu) => Module::load_program_gpu(gpu.context(), program),
            Inner::Emulator(_) => Ok(Module::emulator(*program)),
        }
    }

    /// Loads PTX text (GPU only: the emulator runs a kernel's Rust code, not its PTX; load
    /// a [`Program`] instead).
    ///
    /// # Errors
    /// [`Error::Unsupported`] on the emulator; as for [`Gpu::load_module`] on a GPU.
    pub fn load_ptx(&self, ptx: &str) -> Result<Module, Error> {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.load_module(ptx),
            Inner::Emulator(_) => Err(Error::unsupported(
                "loading PTX text on the emulator (it runs the kernels' Rust code: load a Program)",
            )),
        }
    }

    /// warpsafe's own kernels ([`ptx::ENTRY`]) on this device.
    pub(crate) fn entry_module(&self) -> Module {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.entry_module().clone(),
            Inner::Emulator(_) => Module::emulator(ptx::ENTRY),
        }
    }

    /// A new stream of this device.
    ///
    /// # Errors
    /// [`Error::Driver`] when the GPU cannot make one.
    pub fn stream(&self) -> Result<Stream, Error> {
        match &self.inner {
            Inner::Gpu(gpu) => Stream::gpu(gpu.context()),
            Inner::Emulator(_) => Ok(Stream::emulator()),
        }
    }

    /// Launches the safe kernel `function` with `args` and waits for it to finish: a safe
    /// call. `args` is a tuple with one argument per kernel parameter, in order, whose
    /// types are checked against the kernel's declaration at compile time (a
    /// `&DeviceBuffer<T>` for a `Slice<T>`, a `&mut DeviceBuffer<T>` for a
    /// `DisjointSlice<T>` or an `AtomicSlice<T>`, a value of exactly the parameter's type
    /// for a scalar). The same call runs on the GPU and on the emulator.
    ///
    /// ```
    /// # fn main() -> Result<(), warpsafe_host::Error> {
    /// use warpsafe::global::{DisjointSlice, Slice};
    /// use warpsafe_host::{Device, LaunchConfig, Program};
    ///
    /// warpsafe::kernel! {
    ///     /// `out[i] = 2 * input[i]`.
    ///     pub fn double(input: Slice<u32>, out: DisjointSlice<u32>) {
    ///         for i in warpsafe::thread::grid_stride(out.len().min(input.len())) {
    ///             out.write(i, 2 * input[i]);
    ///         }
    ///     }
    /// }
    /// // This example runs on the emulator only: its program has no PTX.
    /// static PROGRAM: Program = Program::new("doc", &[]);
    ///
    /// let device = Device::emulator();
    /// let doubler = device.load(&PROGRAM)?.kernel(&double)?;
    /// let input = device.upload(&[1u32, 2, 3])?;
    /// let mut out = device.alloc_zeroed::<u32>(3)?;
    /// device.launch(&doubler, LaunchConfig::linear(1, 32), (&input, &mut out))?;
    /// assert_eq!(out.download()?, vec![2, 4, 6]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] for a shape no device runs (an empty grid, too many
    /// threads); [`Error::ForeignBuffer`] for a buffer of another device; on a GPU
    /// [`Error::Launch`] when the driver refuses the launch and [`Error::KernelFailed`]
    /// when the kernel faults or traps (an index out of bounds); on the emulator
    /// [`Error::Emulator`] for anything it detects (an index out of bounds, a warp-rule
    /// violation, a deadlock); [`Error::Unsupported`] for a function of another device.
    pub fn launch<P: ParamValues, A: KernelArgs<P>>(
        &self,
        function: &Function<P, Safe>,
        config: LaunchConfig,
        args: A,
    ) -> Result<(), Error> {
        // SAFETY: a safe kernel has no contract beyond its parameter types, which `args`
        // matches (checked at compile time), and each argument's buffer is of this device
        // and borrowed until the launch has finished (KernelArg's guarantee); `launch`
        // waits for it.
        unsafe { self.launch_unsafe(function, config, args) }
    }

    /// Launches the `unsafe` kernel `function` with typed arguments, as [`Device::launch`]
    /// does, and waits for it to finish.
    ///
    /// # Safety
    /// The launch keeps the contract in the kernel's `# Safety` section (what its raw
    /// pointers may reach, the block shape it needs).
    ///
    /// # Errors
    /// As for [`Device::launch`].
    pub unsafe fn launch_unsafe<P: ParamValues, A: KernelArgs<P>, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: A,
    ) -> Result<(), Error> {
        let mut params = self.typed_params(function, config, args)?;
        let pointers = params.pointers();
        // SAFETY: `pointers` point at values of exactly the kernel's parameter types, each
        // buffer among them of this device and borrowed by `args` until this returns; the
        // kernel's own contract is the caller's.
        unsafe { self.launch_raw(function, config, &pointers) }
    }

    /// Launches `function` with a raw argument array and waits for it to finish: the
    /// escape hatch for kernels whose types are not known here.
    ///
    /// # Safety
    /// `args` has one pointer per kernel parameter, in order, each pointing to a value of
    /// exactly the parameter's type; every device address among those values is a buffer
    /// of this device, valid for everything the kernel reads and writes through it; the
    /// configuration meets the kernel's documented requirements (block shape, shared
    /// memory).
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] when `args` does not match the kernel's parameter count;
    /// otherwise as for [`Device::launch`].
    pub unsafe fn launch_raw<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.launch_and_wait(function, config, args, false) }
    }

    /// Launches on the device's own stream and waits for the launch.
    ///
    /// # Safety
    /// As for [`Device::launch_raw`].
    unsafe fn launch_and_wait<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
        cooperative: bool,
    ) -> Result<(), Error> {
        match &self.inner {
            Inner::Gpu(gpu) => {
                // SAFETY: forwarded from the caller; the stream is waited for before
                // returning, while the caller's buffers are still alive.
                unsafe { self.enqueue(gpu.stream(), function, config, args, cooperative) }?;
                gpu.wait_for(gpu.stream(), function)
            }
            // SAFETY: forwarded from the caller; emulated launches finish before they
            // return.
            Inner::Emulator(_) => unsafe {
                self.enqueue(&Stream::emulator(), function, config, args, cooperative)
            },
        }
    }

    /// Launches the safe kernel `function` cooperatively (every block of the grid resident
    /// at once, so blocks may wait for each other: a grid barrier) and waits for it. On a
    /// GPU this is `cuLaunchCooperativeKernel`.
    ///
    /// # Errors
    /// [`Error::CooperativeGridTooLarge`] when the grid has more blocks than
    /// [`Device::max_cooperative_blocks`]; [`Error::Unsupported`] on a GPU without
    /// cooperative launch; otherwise as for [`Device::launch`].
    pub fn launch_cooperative<P: ParamValues, A: KernelArgs<P>>(
        &self,
        function: &Function<P, Safe>,
        config: LaunchConfig,
        args: A,
    ) -> Result<(), Error> {
        let mut params = self.typed_params(function, config, args)?;
        let pointers = params.pointers();
        // SAFETY: as for `launch`.
        unsafe { self.launch_and_wait(function, config, &pointers, true) }
    }

    /// Enqueues `function` on `stream` with typed arguments (as for [`Device::launch`]) and
    /// returns without waiting; on the emulator the launch runs to completion before this
    /// returns.
    ///
    /// # Safety
    /// Every buffer among `args` stays alive, and the host neither reads nor writes it,
    /// until the stream has finished the launch (the borrows in `args` end when this
    /// returns, the launch does not); for an `unsafe` kernel, the launch keeps the
    /// contract in its `# Safety` section.
    ///
    /// # Errors
    /// As for [`Device::launch`], except that on a GPU a fault while running surfaces at
    /// the next synchronisation ([`Stream::synchronize`]).
    pub unsafe fn launch_on<P: ParamValues, A: KernelArgs<P>, S: Safety>(
        &self,
        stream: &Stream,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: A,
    ) -> Result<(), Error> {
        let mut params = self.typed_params(function, config, args)?;
        let pointers = params.pointers();
        // SAFETY: `pointers` match the kernel's parameter types (checked at compile time);
        // the rest is the caller's contract.
        unsafe { self.enqueue(stream, function, config, &pointers, false) }
    }

    /// Enqueues `function` on `stream` with a raw argument array and returns; on the
    /// emulator the launch runs to completion before this returns.
    ///
    /// # Safety
    /// As for [`Device::launch_raw`], and the buffers stay alive and untouched by the
    /// host until the stream has finished the launch.
    ///
    /// # Errors
    /// As for [`Device::launch_raw`], except that on a GPU a fault while running surfaces
    /// at the next synchronisation ([`Stream::synchronize`]) instead.
    pub unsafe fn launch_raw_on<P, S: Safety>(
        &self,
        stream: &Stream,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(stream, function, config, args, false) }
    }

    /// Enqueues a cooperative launch of `function` on `stream` with a raw argument array
    /// (see [`Device::launch_cooperative`]).
    ///
    /// # Safety
    /// As for [`Device::launch_raw_on`].
    ///
    /// # Errors
    /// As for [`Device::launch_cooperative`], except that on a GPU a fault while running
    /// surfaces at the next synchronisation.
    pub unsafe fn launch_raw_cooperative_on<P, S: Safety>(
        &self,
        stream: &Stream,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(stream, function, config, args, true) }
    }

    /// Every launch goes through here: the checks that do not depend on the backend
    /// (argument count, shape, cooperative grid size), then the backend's launch.
    ///
    /// # Safety
    /// As for [`Device::launch_raw_on`].
    unsafe fn enqueue<P, S: Safety>(
        &self,
        stream: &Stream,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
        cooperative: bool,
    ) -> Result<(), Error> {
        self.check_launch(function, config, args, cooperative)?;
        match &self.inner {
            // SAFETY: forwarded from the caller.
            Inner::Gpu(gpu) => unsafe { gpu.enqueue(stream, function, config, args, cooperative) },
            Inner::Emulator(emulator) => {
                if !stream.is_emulator() {
                    return Err(Error::unsupported("a GPU stream used with the emulator"));
                }
                // SAFETY: forwarded from the caller.
                unsafe { emulator.launch(function, config, args, cooperative) }
            }
        }
    }

    /// The parameter values of a typed launch: the shape is checked first (an empty grid
    /// is a shape error, not a grid too small for a `#[covers]` buffer), then every
    /// argument ([`KernelArgs::params`]).
    fn typed_params<P, A: KernelArgs<P>, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: A,
    ) -> Result<P, Error> {
        if let Some(problem) = config.problem() {
            return Err(Error::InvalidLaunch { kernel: function.name().to_string(), problem });
        }
        args.params(self, function.name(), function.params(), config.threads())
    }

    /// The checks every launch passes before it reaches a backend: the argument count,
    /// the shape, and for a cooperative launch that the grid is resident at once.
    pub(crate) fn check_launch<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
        cooperative: bool,
    ) -> Result<(), Error> {
        function.check_argument_count(args)?;
        if let Some(problem) = config.problem() {
            return Err(Error::InvalidLaunch { kernel: function.name().to_string(), problem });
        }
        if cooperative {
            if !self.supports_cooperative_launch() {
                return Err(Error::unsupported(format!(
                    "{} cannot launch kernels cooperatively",
                    self.name()
                )));
            }
            let block_threads = config.block_threads();
            let max = self.max_cooperative_blocks(function, block_threads, config.shared_mem_bytes)?;
            if config.blocks() > u64::from(max) {
                return Err(Error::CooperativeGridTooLarge {
                    kernel: function.name().to_string(),
                    blocks: config.blocks(),
                    max,
                    block_threads,
                    dynamic_shared_bytes: config.shared_mem_bytes,
                });
            }
        }
        Ok(())
    }

    /// The largest grid of `function` a cooperative launch accepts with blocks of
    /// `block_threads` threads and `dynamic_shared_bytes` of dynamic shared memory:
    /// [`Device::max_active_blocks_per_multiprocessor`] times the multiprocessor count (on
    /// the emulator, at most its `max_resident_blocks`).
    ///
    /// # Errors
    /// As for [`Device::max_active_blocks_per_multiprocessor`].
    pub fn max_cooperative_blocks<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        block_threads: u32,
        dynamic_shared_bytes: u32,
    ) -> Result<u32, Error> {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.max_cooperative_blocks(function, block_threads, dynamic_shared_bytes),
            Inner::Emulator(emulator) => {
                function.emulator_kernel()?;
                Ok(emulator.max_cooperative_blocks(block_threads, dynamic_shared_bytes))
            }
        }
    }

    /// How many blocks of `function` (with `block_threads` threads and
    /// `dynamic_shared_bytes` of dynamic shared memory) one multiprocessor holds at once:
    /// on a GPU `cuOccupancyMaxActiveBlocksPerMultiprocessor` (registers, shared memory,
    /// threads and blocks per SM all count); on the emulator the same limits of a fixed
    /// sm_90-like multiprocessor (2048 threads, 32 blocks, 228 KiB of shared memory), and
    /// the emulator's `max_resident_blocks` shared among its 4 multiprocessors. `0` when
    /// such a block cannot run at all (more than 1024 threads, too much shared memory).
    ///
    /// # Errors
    /// [`Error::Driver`] when the driver cannot answer; [`Error::Unsupported`] for a
    /// function of another device or backend.
    pub fn max_active_blocks_per_multiprocessor<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        block_threads: u32,
        dynamic_shared_bytes: u32,
    ) -> Result<u32, Error> {
        match &self.inner {
            Inner::Gpu(gpu) => {
                gpu.max_active_blocks_per_multiprocessor(function, block_threads, dynamic_shared_bytes)
            }
            Inner::Emulator(emulator) => {
                function.emulator_kernel()?;
                Ok(emulator.max_active_blocks_per_multiprocessor(block_threads, dynamic_shared_bytes))
            }
        }
    }
}
