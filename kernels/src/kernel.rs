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

use core::ffi::c_void;
use core::marker::PhantomData;
use core::ops::Deref;

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
/// // On the host each is a `static` handle that records its parameters.
/// assert_eq!(vecadd.name(), "vecadd");
/// assert_eq!(vecadd.param_count(), 3);
/// assert_eq!(add_one.params()[1].ty, "u64");
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
/// assert!(iota.params()[0].covers);
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

/// What the CPU emulator calls for each thread: reads the parameters from the launch's
/// argument pointers and runs the kernel's body.
///
/// # Safety (of calling it)
/// `args` has one pointer per parameter, each to a valid value of that parameter's type,
/// and the kernel's own contract holds.
pub type HostEntry = unsafe fn(&[*mut c_void]);

/// A kernel without its parameter types: its name, parameters and emulator entry. Every
/// [`Kernel`] dereferences to one, for code that handles kernels of any signature.
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
            .field("name", &self.untyped.name)
            .field("params", &self.untyped.params)
            .finish()
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
    /// let config = warpsafe::kernel::LaunchConfig::linear(4, 256);
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
