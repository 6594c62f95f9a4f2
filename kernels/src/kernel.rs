//! Kernel entry points: [`crate::kernel!`] declares one for both targets.
//!
//! On the GPU a kernel is an `extern "ptx-kernel"` function exported under its own name,
//! which the host finds in the PTX. On the host the same declaration becomes a `static`
//! [`Kernel`] of the same name: a backend-neutral handle that records the kernel's name,
//! its parameters and their types (the type parameter `P`, a tuple), whether it is safe to
//! launch (`S`: [`Safe`] or [`Unsafe`]), and the host code the CPU emulator runs. The host
//! crate's launch API takes that static for either backend and checks the launch's
//! arguments against `P` at compile time, so host code names kernels by Rust path rather
//! than by string, and a `u32` passed where the kernel takes a `u64` does not compile.
//!
//! A kernel declared `fn` (no `unsafe`) is a *safe kernel*: its body is checked as safe
//! code, and a launch with arguments of its parameter types is a safe call. Its parameters
//! are typed views of device buffers ([`crate::global::Slice`],
//! [`crate::global::DisjointSlice`], [`crate::global::AtomicSlice`]) and `Pod` scalars,
//! and every access through the views is bounds-checked. A kernel declared `unsafe fn`
//! states in its `# Safety` section what a launch must guarantee (raw pointers and their
//! lengths, say), and is launched only through `unsafe` calls.

use core::marker::PhantomData;
use core::ops::Deref;

pub use warpsafe_types::{HostEntry, LaunchConfig, Param, UntypedKernel, MAX_DYNAMIC_SHARED_BYTES};

/// Declares kernel entry points, safe (`fn`) or not (`unsafe fn`).
///
/// ```
/// use warpsafe::global::{DisjointSlice, Slice};
///
/// warpsafe::kernel! {
///     /// `c[i] = a[i] + b[i]` for every `i` below the three lengths.
///     pub fn vecadd(a: Slice<f32>, b: Slice<f32>, c: DisjointSlice<f32>) {
///         let i = warpsafe::thread::index();
///         if i.get() < a.len() && i.get() < b.len() {
///             c.write(i, a[i] + b[i]); // bounds-checked: a trap past the end of `c`
///         }
///     }
///
///     /// Adds one to every element.
///     ///
///     /// # Safety
///     /// `data` holds `len` elements.
///     pub unsafe fn add_one(data: *mut u32, len: u64) {
///         let i = warpsafe::thread::global_index_x();
///         if i < len {
///             // SAFETY: i < len.
///             unsafe { *data.add(i as usize) += 1 };
///         }
///     }
/// }
///
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// // On the host each is a `static` handle that records its parameters.
/// assert_eq!(vecadd.name(), "vecadd");
/// assert_eq!(vecadd.param_count(), 3);
/// assert_eq!(add_one.params()[1].ty, "u64");
/// # static PROGRAM: warpsafe_host::Program =
/// #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[vecadd.untyped(), add_one.untyped()]);
/// // Launched (here on the CPU emulator): the safe one with a checked call, the unsafe one
/// // under its contract.
/// let device = warpsafe_host::Device::emulator();
/// let module = device.load(&PROGRAM)?;
/// let (a, b) = (device.upload(&[1.0f32; 40])?, device.upload(&[2.0f32; 40])?);
/// let mut c = device.alloc_zeroed::<f32>(40)?;
/// device.launch(&module.kernel(&vecadd)?, warpsafe_host::LaunchConfig::linear(2, 32), (&a, &b, &mut c))?;
/// assert_eq!(c.download()?, vec![3.0; 40]);
/// let mut data = device.upload(&[7u32; 5])?;
/// // SAFETY: `data` holds 5 elements.
/// unsafe {
///     device.launch_unsafe(&module.kernel(&add_one)?, warpsafe_host::LaunchConfig::linear(1, 32), (&mut data, 5u64))?
/// };
/// assert_eq!(data.download()?, vec![8; 5]);
/// # Ok(())
/// # }
/// ```
///
/// Parameters are passed by the host in declaration order: typed views of device buffers
/// ([`crate::global`]), `bytemuck::Pod` scalars, and in `unsafe` kernels raw pointers. The
/// declaring crate needs no feature gate.
///
/// A buffer parameter marked `#[covers]` declares that the launch's threads cover it, one
/// element per thread (a kernel without a grid-stride loop): the host refuses a launch
/// with fewer threads than that buffer has elements (`Error::GridDoesNotCover`), instead
/// of leaving the rest silently unwritten.
///
/// ```
/// warpsafe::kernel! {
///     /// `out[i] = i` for every thread `i`.
///     pub fn iota(#[covers] out: warpsafe::global::DisjointSlice<u32>) {
///         if let Some(i) = out.get(warpsafe::thread::index()) {
///             out.write(i, i.get() as u32);
///         }
///     }
/// }
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// assert!(iota.params()[0].covers);
/// # static PROGRAM: warpsafe_host::Program =
/// #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[iota.untyped()]);
/// let device = warpsafe_host::Device::emulator();
/// let f = device.load(&PROGRAM)?.kernel(&iota)?;
/// let mut out = device.alloc_zeroed::<u32>(40)?;
/// let err = device.launch(&f, warpsafe_host::LaunchConfig::linear(1, 32), (&mut out,)).unwrap_err();
/// assert!(matches!(err, warpsafe_host::Error::GridDoesNotCover { .. })); // 32 threads, 40 elements
/// device.launch(&f, warpsafe_host::LaunchConfig::linear(2, 32), (&mut out,))?;
/// assert_eq!(out.download()?, (0..40).collect::<Vec<u32>>());
/// # Ok(())
/// # }
/// ```
#[macro_export]
macro_rules! kernel {
    () => {};
    (
        $(#[$attr:meta])*
        $vis:vis unsafe fn $name:ident($($(#[$pattr:ident])? $arg:ident : $ty:ty),* $(,)?) $body:block
        $($rest:tt)*
    ) => {
        $crate::__warpsafe_kernel!(
            [unsafe] Unsafe $(#[$attr])* ($vis) $name ($([$($pattr)?] $arg: $ty),*) $body
        );
        $crate::kernel! { $($rest)* }
    };
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident($($(#[$pattr:ident])? $arg:ident : $ty:ty),* $(,)?) $body:block
        $($rest:tt)*
    ) => {
        $crate::__warpsafe_kernel!([] Safe $(#[$attr])* ($vis) $name ($([$($pattr)?] $arg: $ty),*) $body);
        $crate::kernel! { $($rest)* }
    };
}

mod sealed {
    pub trait Sealed {}
}

/// Whether launching a kernel is safe: [`Safe`] or [`Unsafe`]. Sealed.
pub trait Safety: sealed::Sealed {}

/// A kernel declared `fn`: a launch with arguments of its parameter types is safe.
#[derive(Clone, Copy, Debug)]
pub struct Safe;

/// A kernel declared `unsafe fn`: a launch must keep the contract in its `# Safety`
/// section, so it is launched only by `unsafe` calls.
#[derive(Clone, Copy, Debug)]
pub struct Unsafe;

impl sealed::Sealed for Safe {}
impl sealed::Sealed for Unsafe {}
impl Safety for Safe {}
impl Safety for Unsafe {}

/// Whether a kernel parameter carries the `#[covers]` marker (used by [`crate::kernel!`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __warpsafe_covers {
    () => {
        false
    };
    (covers) => {
        true
    };
    ($other:ident) => {
        ::core::compile_error!(::core::concat!(
            "unknown kernel parameter attribute `#[",
            ::core::stringify!($other),
            "]`: the only one is `#[covers]`"
        ))
    };
}

/// A kernel entry point declared with [`crate::kernel!`]: on the host, a `static` of the
/// kernel's name. `P` is the tuple of its parameter types and `S` says whether a launch is
/// safe ([`Safe`]) or not ([`Unsafe`]); the host's launch API checks a launch's arguments
/// against `P` at compile time.
#[repr(transparent)]
pub struct Kernel<P, S: Safety = Safe> {
    untyped: UntypedKernel,
    signature: PhantomData<fn(P) -> S>,
}

impl<P, S: Safety> Kernel<P, S> {
    #[doc(hidden)]
    pub const fn __new(untyped: UntypedKernel) -> Kernel<P, S> {
        Kernel { untyped, signature: PhantomData }
    }

    /// The kernel without its parameter types.
    pub const fn untyped(&self) -> &UntypedKernel {
        &self.untyped
    }
}

impl<P, S: Safety> Deref for Kernel<P, S> {
    type Target = UntypedKernel;

    fn deref(&self) -> &UntypedKernel {
        &self.untyped
    }
}

impl<P, S: Safety> core::fmt::Debug for Kernel<P, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.untyped.name())
            .field("params", &self.untyped.params())
            .finish()
    }
}
