//! Kernel entry points: [`crate::kernel!`] declares one for both targets.
//!
//! On the GPU a kernel is an `extern "ptx-kernel"` function exported under its own name,
//! which the host finds in the PTX. On the host the same declaration becomes a
//! `static` of type `warpsafe::emu::Kernel` (same name) that the CPU emulator launches
//! with a grid, a block shape and a dynamic shared-memory size; the host crate's launch
//! API takes that static for either backend, so the host code names kernels by Rust path
//! rather than by string.

/// Declares a kernel entry point.
///
/// ```ignore
/// warpsafe::kernel! {
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
/// ```
///
/// Parameters are plain `Copy` values (integers, floats, raw pointers), passed by the
/// host in declaration order. The declaring crate enables `#![feature(abi_ptx)]` when
/// compiling for `nvptx64` (`#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]`).
#[macro_export]
macro_rules! kernel {
    ($(
        $(#[$attr:meta])*
        $vis:vis unsafe fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block
    )*) => {$(
        $crate::__warpsafe_kernel!($(#[$attr])* ($vis) $name ($($arg: $ty),*) $body);
    )*};
}
