//! Programs (a kernel crate, as PTX per architecture and as host code), modules (a
//! program loaded on a device) and functions (one kernel of a module, ready to launch).

use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};

use warpsafe::kernel::{Kernel, Param, Safety, Unsafe, UntypedKernel};

use crate::gpu::{GpuContext, LoadedPtx, RawFunction};
use crate::ptx_split::PtxSplit;
use crate::Error;

/// A kernel crate in both of the forms a device can run: its PTX for each architecture it
/// was built for (by `warpsafe-build` in a build script), and optionally its kernels as
/// host code (the `static`s `warpsafe::kernel!` declares on the host), which the emulator
/// runs. [`crate::ptx::ENTRY`] is warpsafe's own.
///
/// A host crate whose build script builds its kernel crate with `warpsafe-build` gets its
/// program with [`crate::include_program!`]; by hand it is
///
/// ```
/// static MY_KERNELS: warpsafe_host::Program = warpsafe_host::Program::new(
///     "my-kernels",
///     &[(70, "// the sm_70 PTX text"), (90, "// the sm_90 PTX text")],
/// );
/// assert_eq!(MY_KERNELS.ptx_for(9, 0).map(|(sm, _)| sm), Some(90));
/// ```
#[derive(Clone, Copy)]
pub struct Program {
    name: &'static str,
    ptx: &'static [(u32, &'static str)],
    kernels: &'static [&'static UntypedKernel],
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .field("archs", &self.ptx.iter().map(|(sm, _)| sm).collect::<Vec<_>>())
            .field("kernels", &self.kernels.iter().map(|k| k.name()).collect::<Vec<_>>())
            .finish()
    }
}

impl Program {
    /// A program named `name` (for messages) with `(sm, PTX text)` for each architecture,
    /// oldest first. It has no host kernels: on the emulator, reach its kernels with
    /// [`Module::kernel`], or list them with [`Program::with_kernels`] for
    /// [`Module::function_by_name`].
    pub const fn new(name: &'static str, ptx: &'static [(u32, &'static str)]) -> Program {
        Program { name, ptx, kernels: &[] }
    }

    /// The same program, with its kernels' host forms listed so that the emulator can find
    /// them by name.
    pub const fn with_kernels(self, kernels: &'static [&'static UntypedKernel]) -> Program {
        Program { kernels, ..self }
    }

    /// The name given to [`Program::new`].
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `(sm, PTX text)` for every architecture, oldest first.
    pub fn ptx(&self) -> &'static [(u32, &'static str)] {
        self.ptx
    }

    /// The kernels listed with [`Program::with_kernels`].
    pub fn kernels(&self) -> &'static [&'static UntypedKernel] {
        self.kernels
    }

    /// The PTX that a device of compute capability `major.minor` runs: the newest whose
    /// `sm` is at most the device's (PTX is forward compatible: the driver compiles it for
    /// newer GPUs), or `None` when the device is older than every architecture.
    pub fn ptx_for(&self, major: u32, minor: u32) -> Option<(u32, &'static str)> {
        let sm = major * 10 + minor;
        self.ptx.iter().rev().find(|(arch, _)| *arch <= sm).copied()
    }

    /// [`Program::ptx_for`] for device `device`, or the error that says what to build.
    ///
    /// # Errors
    /// [`Error::UnsupportedDevice`] for a device older than sm_70;
    /// [`Error::NoPtxForDevice`] when the program has no PTX the device runs (none at
    /// all, or only for newer architectures).
    pub fn ptx_for_device(&self, device: &str, major: u32, minor: u32) -> Result<(u32, &'static str), Error> {
        if major < 7 {
            return Err(Error::UnsupportedDevice { name: device.to_string(), major, minor });
        }
        self.ptx_for(major, minor).ok_or_else(|| Error::NoPtxForDevice {
            program: self.name.to_string(),
            device: device.to_string(),
            sm: major * 10 + minor,
            built: self.ptx.iter().map(|(sm, _)| *sm).collect(),
        })
    }

    /// The same program with only its `sm_<sm>` PTX, to run an older architecture's code
    /// (say the sm_70 fallbacks) on a newer GPU; `None` when it was not built for `sm`.
    pub fn for_arch(&self, sm: u32) -> Option<Program> {
        let at = self.ptx.iter().position(|(arch, _)| *arch == sm)?;
        Some(Program { ptx: &self.ptx[at..=at], ..*self })
    }
}

/// A PTX text loaded into a GPU context one kernel at a time (`ptx_split`): each kernel
/// on its first lookup, as a module of its own.
pub(crate) struct GpuModule {
    // Field order is drop order: the modules are unloaded before the context goes.
    /// The kernels loaded so far, by name; never removed while the module lives (the
    /// functions taken from them hold this module).
    loaded: Mutex<HashMap<String, LoadedPtx>>,
    ptx: Cow<'static, str>,
    split: PtxSplit,
    /// The program's listed kernels, whose parameter counts name lookups use.
    kernels: &'static [&'static UntypedKernel],
    context: Arc<GpuContext>,
}

impl GpuModule {
    /// The kernel `name`, loaded on first use.
    fn function(&self, name: &str) -> Result<RawFunction, Error> {
        let not_found = |source| Error::KernelNotFound { name: name.to_string(), source };
        // A poisoned lock only means another thread panicked while loading; the map
        // holds only complete modules.
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if !loaded.contains_key(name) {
            let text = self.split.kernel_module(&self.ptx, name).ok_or_else(|| not_found(None))?;
            let module = LoadedPtx::load(&self.context, &text, Some(name))?;
            loaded.insert(name.to_string(), module);
        }
        self.context.make_current()?;
        loaded[name].function(name).map_err(|source| not_found(Some(source)))
    }
}

/// A [`Program`] loaded on a device: [`crate::Device::load`]. A cheap handle; the
/// functions taken from it keep it loaded.
///
/// On a GPU each kernel is compiled by the driver and loaded on its first lookup
/// ([`Module::kernel`] and the like), as a module of its own: the driver compiles a
/// module's kernels all at once when it loads it, and warpsafe's own 290 kernels took
/// 132 s that way on an H100's host, against 0.1 to 0.6 s for most single kernels.
/// Module-scope `.global` variables are therefore per kernel (warpsafe's kernel language
/// has none that kernels write). The driver caches what it compiled (`~/.nv/ComputeCache`),
/// so a later process's lookups are faster still.
#[derive(Clone)]
pub struct Module {
    inner: ModuleInner,
}

#[derive(Clone)]
enum ModuleInner {
    Gpu(Arc<GpuModule>),
    Emulator(Program),
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            ModuleInner::Gpu(module) => write!(f, "Module(GPU {})", module.context.name()),
            ModuleInner::Emulator(program) => write!(f, "Module(emulator, {})", program.name),
        }
    }
}

impl Module {
    /// Loads PTX text into `context` (its kernels on first use); `kernels` are the host
    /// forms of its kernels, if known.
    pub(crate) fn load_ptx_gpu(
        context: &Arc<GpuContext>,
        ptx: Cow<'static, str>,
        kernels: &'static [&'static UntypedKernel],
    ) -> Result<Module, Error> {
        if let Some(offset) = ptx.bytes().position(|b| b == 0) {
            return Err(Error::PtxContainsNul { offset });
        }
        let split = PtxSplit::new(&ptx);
        // The text outside every kernel, compiled once here so that a bad header or
        // declaration is reported by `Device::load`; every kernel's module repeats it, so
        // this one is not kept.
        LoadedPtx::load(context, split.common(), None)?;
        let module = GpuModule {
            loaded: Mutex::new(HashMap::new()),
            ptx,
            split,
            kernels,
            context: Arc::clone(context),
        };
        Ok(Module { inner: ModuleInner::Gpu(Arc::new(module)) })
    }

    /// Loads the PTX of `program` that the device of `context` runs.
    pub(crate) fn load_program_gpu(context: &Arc<GpuContext>, program: &Program) -> Result<Module, Error> {
        let (major, minor) = context.compute_capability();
        let (_, ptx) = program.ptx_for_device(context.name(), major, minor)?;
        Module::load_ptx_gpu(context, Cow::Borrowed(ptx), program.kernels)
    }

    /// `program` on the emulator: nothing to load, its kernels are host code.
    pub(crate) fn emulator(program: Program) -> Module {
        Module { inner: ModuleInner::Emulator(program) }
    }

    /// The kernel `kernel` (the `static` that `warpsafe::kernel!` declares on the host),
    /// typed by its parameters: on the GPU the module's entry of the same name, on the
    /// emulator the host code itself. [`crate::Device::launch`] checks a launch's
    /// arguments against its parameter types at compile time.
    ///
    /// # Errors
    /// [`Error::KernelNotFound`] when the GPU module has no such entry (the PTX came from
    /// another crate).
    pub fn kernel<P, S: Safety>(&self, kernel: &'static Kernel<P, S>) -> Result<Function<P, S>, Error> {
        let untyped = self.untyped_kernel(kernel.untyped())?;
        Ok(Function {
            name: untyped.name,
            params: untyped.params,
            inner: untyped.inner,
            signature: PhantomData,
        })
    }

    /// The kernel `kernel` without its parameter types, for code that handles kernels of
    /// any signature; launched only with [`crate::Device::launch_raw`], whose argument
    /// count is checked against its parameters.
    ///
    /// # Errors
    /// As for [`Module::kernel`].
    pub fn untyped_kernel(&self, kernel: &'static UntypedKernel) -> Result<Function, Error> {
        match &self.inner {
            ModuleInner::Gpu(module) => {
                let mut function = Module::gpu_function(module, kernel.name())?;
                function.params = Some(kernel.params());
                Ok(function)
            }
            ModuleInner::Emulator(_) => Ok(Function {
                name: Cow::Borrowed(kernel.name()),
                params: Some(kernel.params()),
                inner: FunctionInner::Emulator(kernel),
                signature: PhantomData,
            }),
        }
    }

    /// The kernel named `name`: on the GPU looked up in the PTX, on the emulator among the
    /// program's [`Program::with_kernels`] list. Launches check the argument count when
    /// the kernel is in that list; on a GPU module loaded from bare PTX text they cannot
    /// (PTX lookup gives no parameter list), so prefer [`Module::kernel`].
    ///
    /// # Errors
    /// [`Error::KernelNotFound`] when there is no such kernel.
    pub fn function_by_name(&self, name: &str) -> Result<Function, Error> {
        match &self.inner {
            ModuleInner::Gpu(module) => {
                let mut function = Module::gpu_function(module, name)?;
                function.params = module.kernels.iter().find(|k| k.name() == name).map(|k| k.params());
                Ok(function)
            }
            ModuleInner::Emulator(program) => {
                let kernel = program
                    .kernels
                    .iter()
                    .find(|k| k.name() == name)
                    .ok_or_else(|| Error::KernelNotFound { name: name.to_string(), source: None })?;
                self.untyped_kernel(kernel)
            }
        }
    }

    /// The same as [`Module::function_by_name`] (the name this method had before the
    /// emulator backend existed).
    ///
    /// # Errors
    /// As for [`Module::function_by_name`].
    pub fn function(&self, name: &str) -> Result<Function, Error> {
        self.function_by_name(name)
    }

    fn gpu_function(module: &Arc<GpuModule>, name: &str) -> Result<Function, Error> {
        let raw = module.function(name)?;
        Ok(Function {
            name: Cow::Owned(name.to_string()),
            params: None,
            inner: FunctionInner::Gpu { raw, module: Arc::clone(module) },
            signature: PhantomData,
        })
    }
}

/// One kernel of a [`Module`], ready to launch. A cheap handle that keeps its module
/// loaded.
///
/// `P` is the tuple of the kernel's parameter types and `S` whether launching it is safe,
/// as [`Module::kernel`] takes them from the kernel's declaration: a
/// `Function<P, Safe>` launches with [`crate::Device::launch`], a safe call whose
/// arguments are checked against `P` at compile time. A function without its types
/// ([`Module::untyped_kernel`], [`Module::function_by_name`]) is a `Function<Untyped>`,
/// launched only by the `unsafe` [`crate::Device::launch_raw`].
pub struct Function<P = Untyped, S: Safety = Unsafe> {
    name: Cow<'static, str>,
    params: Option<&'static [Param]>,
    inner: FunctionInner,
    signature: PhantomData<fn(P) -> S>,
}

/// The parameter types of a [`Function`] that was not typed by its kernel's declaration.
#[derive(Debug)]
pub enum Untyped {}

impl<P, S: Safety> Clone for Function<P, S> {
    fn clone(&self) -> Self {
        Function {
            name: self.name.clone(),
            params: self.params,
            inner: self.inner.clone(),
            signature: PhantomData,
        }
    }
}

#[derive(Clone)]
enum FunctionInner {
    // Never constructed without the `cuda` feature (the stand-in backend has no modules).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Gpu {
        raw: RawFunction,
        module: Arc<GpuModule>,
    },
    Emulator(&'static UntypedKernel),
}

// SAFETY: a CUfunction is a driver handle, valid in every thread while its module is
// loaded (the `Arc` keeps it loaded); the driver API is thread-safe, and every use makes
// the module's context current first.
unsafe impl Send for FunctionInner {}
// SAFETY: as above; the handle is never mutated through a shared reference.
unsafe impl Sync for FunctionInner {}

impl<P, S: Safety> std::fmt::Debug for Function<P, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let backend = match self.inner {
            FunctionInner::Gpu { .. } => "GPU",
            FunctionInner::Emulator(_) => "emulator",
        };
        write!(f, "Function({}, {backend})", self.name)
    }
}

impl<P, S: Safety> Function<P, S> {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of parameters, when known (always for [`Module::kernel`]).
    pub fn param_count(&self) -> Option<usize> {
        self.params.map(<[Param]>::len)
    }

    /// The parameters as declared, when known (always for [`Module::kernel`]).
    pub fn params(&self) -> Option<&'static [Param]> {
        self.params
    }

    /// The same function without its parameter types, for code that launches functions
    /// of any signature with [`crate::Device::launch_raw`].
    pub fn untyped(&self) -> Function {
        Function {
            name: self.name.clone(),
            params: self.params,
            inner: self.inner.clone(),
            signature: PhantomData,
        }
    }

    /// The raw handle, after checking that the function was loaded in `context`.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn gpu_handle(&self, context: &Arc<GpuContext>) -> Result<RawFunction, Error> {
        match &self.inner {
            FunctionInner::Gpu { raw, module } if Arc::ptr_eq(&module.context, context) => Ok(*raw),
            FunctionInner::Gpu { .. } => {
                Err(Error::unsupported(format!("{} was loaded in another GPU context", self.name)))
            }
            FunctionInner::Emulator(_) => {
                Err(Error::unsupported(format!("{} is an emulator function, launched on a GPU", self.name)))
            }
        }
    }

    /// The host code, after checking that this is an emulator function.
    pub(crate) fn emulator_kernel(&self) -> Result<&'static UntypedKernel, Error> {
        match self.inner {
            FunctionInner::Emulator(kernel) => Ok(kernel),
            FunctionInner::Gpu { .. } => {
                Err(Error::unsupported(format!("{} is a GPU function, launched on the emulator", self.name)))
            }
        }
    }

    /// Checks `args` against the parameter count, when it is known.
    pub(crate) fn check_argument_count(&self, args: &[*mut core::ffi::c_void]) -> Result<(), Error> {
        match self.param_count() {
            Some(expected) if expected != args.len() => {
                Err(Error::ArgumentCount { kernel: self.name.to_string(), expected, got: args.len() })
            }
            _ => Ok(()),
        }
    }
}
