//! What the declaration macros ([`crate::kernel!`], [`crate::shared!`]) expand to on the
//! host, and the emulator's shared-memory accessors.
//!
//! A kernel becomes a `static` [`crate::kernel::Kernel`] of the same name, whose entry reads
//! each parameter from the launch's argument pointers and runs the body. A shared array
//! is keyed by a `static` [`SharedDeclaration`] of its own: the emulator gives every block
//! its own allocation for each key.

use core::ffi::c_void;
use core::panic::Location;
use std::format;

use warpsafe_emu::device as emu;

/// Expands a kernel declaration to a `static` [`crate::kernel::Kernel`] of the same name,
/// whose type records the parameter types and whether the kernel is safe to launch.
#[doc(hidden)]
#[macro_export]
macro_rules! __warpsafe_kernel {
    (
        [$($unsafety:tt)?] $safety:ident
        $(#[$attr:meta])* ($($vis:tt)*) $name:ident ($([$($pattr:ident)?] $arg:ident : $ty:ty),*) $body:block
    ) => {
        $(#[$attr])*
        #[allow(non_upper_case_globals)]
        $($vis)* static $name: $crate::kernel::Kernel<($($ty,)*), $crate::kernel::$safety> = {
            const PARAMS: &[$crate::kernel::Param] = &[$(
                $crate::kernel::Param {
                    name: ::core::stringify!($arg),
                    ty: ::core::stringify!($ty),
                    covers: $crate::__warpsafe_covers!($($pattr)?),
                }
            ),*];

            #[allow(clippy::too_many_arguments)]
            $($unsafety)? fn body($($arg: $ty),*) $body

            unsafe fn entry(args: &[*mut ::core::ffi::c_void]) {
                let &[$($arg),*] = args else {
                    $crate::arch::bad_kernel_arguments(PARAMS.len(), args.len());
                };
                $(
                    // SAFETY: the launch's contract: each argument points at a value of
                    // its parameter's type.
                    let $arg: $ty = unsafe { $crate::arch::kernel_argument($arg) };
                )*
                // SAFETY: the kernel's contract is the launch's (a safe kernel has none).
                #[allow(unused_unsafe)]
                unsafe { body($($arg),*) }
            }

            $crate::kernel::Kernel::__new($crate::kernel::UntypedKernel::__new(
                ::core::stringify!($name),
                PARAMS,
                entry,
            ))
        };
    };
}

/// Launch bounds on the emulator: none. The GPU build announces them to the builder
/// (`arch::nvptx::declare`); the emulator runs a kernel at any block size its launch
/// allows, so callers launch such a kernel with at most its bound themselves.
#[doc(hidden)]
#[macro_export]
macro_rules! __warpsafe_launch_bounds {
    ($name:ident, $threads:expr, $blocks:expr) => {
        const _: () = assert!($threads > 0 && $blocks > 0, "launch bounds are positive");
    };
}

/// Implements [`crate::shared::SharedStorage`] for `$storage` over the emulator's
/// per-block allocation keyed by a `static` of its own.
#[doc(hidden)]
#[macro_export]
macro_rules! __warpsafe_shared_storage {
    ($storage:ident, $elem:ty, $len:expr, $name:ident) => {
        const _: () = assert!($len > 0, "a shared array needs at least one element");

        // SAFETY: `base` returns the calling block's own allocation of
        // `size_of::<Elem>() * LEN` bytes at the declared alignment, which lives as long
        // as the block.
        unsafe impl $crate::shared::SharedStorage for $storage {
            type Elem = $elem;
            const LEN: usize = $len;

            #[inline]
            fn base() -> *mut $elem {
                static DECLARATION: $crate::arch::SharedDeclaration = $crate::arch::SharedDeclaration::new(
                    ::core::stringify!($name),
                    ::core::file!(),
                    ::core::line!(),
                );
                $crate::arch::shared_storage(
                    &DECLARATION,
                    ::core::mem::size_of::<$elem>() * $len,
                    $crate::arch::shared_alignment(::core::mem::align_of::<$elem>()),
                )
                .cast()
            }
        }
    };
}

/// Where a [`crate::shared!`] array is declared; its address is the array's key.
#[doc(hidden)]
#[derive(Debug)]
pub struct SharedDeclaration {
    name: &'static str,
    file: &'static str,
    line: u32,
}

impl SharedDeclaration {
    #[doc(hidden)]
    pub const fn new(name: &'static str, file: &'static str, line: u32) -> SharedDeclaration {
        SharedDeclaration { name, file, line }
    }
}

/// The calling block's copy of the shared array `declaration` (`bytes` bytes aligned to
/// `align`), allocated when the block first uses it.
#[doc(hidden)]
pub fn shared_storage(declaration: &'static SharedDeclaration, bytes: usize, align: usize) -> *mut u8 {
    let key = declaration as *const SharedDeclaration as usize;
    emu::shared_static(key, bytes, align, || {
        format!("`{}` (declared at {}:{})", declaration.name, declaration.file, declaration.line)
    })
}

/// Reads a kernel argument for the entry that [`crate::kernel!`] makes.
///
/// # Safety
/// `arg` points at a valid `T`.
#[doc(hidden)]
pub unsafe fn kernel_argument<T>(arg: *mut c_void) -> T {
    // SAFETY: forwarded from the caller; cuLaunchKernel's argument pointers need not be
    // aligned, so neither are these.
    unsafe { arg.cast::<T>().read_unaligned() }
}

/// Ends the launch: the kernel was given the wrong number of arguments.
#[doc(hidden)]
pub fn bad_kernel_arguments(expected: usize, got: usize) -> ! {
    emu::bad_arguments(expected, got)
}

/// The start of this block's dynamic shared memory (16-byte aligned) and its size in
/// bytes (the launch's `dynamic_shared_bytes`).
#[inline]
pub fn dynamic_shared() -> (*mut u8, usize) {
    emu::shared_dynamic()
}

/// Reads element `*ptr` of a shared array: a switch point, the race check, and the
/// undefined-value check (a read of bytes no thread of the block wrote).
///
/// # Safety
/// `ptr` is valid for reads.
#[inline]
#[track_caller]
pub unsafe fn shared_read<T: bytemuck::Pod>(ptr: *const T) -> T {
    let bytes = core::mem::size_of::<T>();
    emu::shared_access(ptr as usize, bytes, None, Location::caller(), || {
        // SAFETY: forwarded from the caller.
        unsafe { ptr.read() }
    })
}

/// Writes element `*ptr` of a shared array: a switch point, the race check, and the
/// undefined-value check (storing a value that carries the poison word).
///
/// # Safety
/// `ptr` is valid for writes.
#[inline]
#[track_caller]
pub unsafe fn shared_write<T: bytemuck::Pod>(ptr: *mut T, value: T) {
    let bytes = core::mem::size_of::<T>();
    emu::shared_access(ptr as usize, bytes, Some(bytemuck::bytes_of(&value)), Location::caller(), || {
        // SAFETY: forwarded from the caller.
        unsafe { ptr.write(value) }
    })
}

/// Reports an index past the end of a checked view of `memory`: ends the launch with
/// `warpsafe_emu::ErrorKind::SharedOutOfBounds` or
/// `warpsafe_emu::ErrorKind::GlobalOutOfBounds`.
#[cold]
#[inline(never)]
pub fn index_out_of_bounds(
    memory: crate::arch::Memory,
    index: usize,
    len: usize,
    at: &'static Location<'static>,
) -> ! {
    emu::index_out_of_bounds(memory, index, len, at)
}

/// A shuffle width that is not a power of two in `1..=32`: ends the launch with
/// `warpsafe_emu::ErrorKind::InvalidShuffleWidth`.
#[cold]
#[inline(never)]
pub fn invalid_shuffle_width(width: u32, at: &'static Location<'static>) -> ! {
    emu::invalid_shuffle_width(width, at)
}

/// A grid-wide wait (`reduce::grid::GridBarrier::sync`): ends the launch with
/// `warpsafe_emu::ErrorKind::NotCooperative` unless it is cooperative.
#[inline]
pub fn requires_cooperative_launch(at: &'static Location<'static>) {
    emu::requires_cooperative_launch(at)
}

/// A store of `value` to global memory through a typed view: ends the launch with
/// `warpsafe_emu::ErrorKind::UninitializedValue` when it carries an undefined value.
#[inline]
pub fn global_store(value: &[u8], at: &'static Location<'static>) {
    emu::check_stored(value, at)
}

/// An access of `bytes` bytes to element `index` of the global buffer at `base` through
/// `global::UnsafeSlice`: the emulator's race check (`warpsafe_emu::ErrorKind::DataRace`).
#[inline]
pub fn global_access(base: usize, index: usize, bytes: usize, write: bool, at: &'static Location<'static>) {
    emu::global_access(base + index * bytes, bytes, write, base, index, at)
}
