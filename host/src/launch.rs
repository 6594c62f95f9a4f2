//! The shape of a launch, and its arguments: typed ([`KernelArgs`], checked against the
//! kernel's parameter types at compile time) or raw ([`kernel_args!`]).

use std::ffi::c_void;

use bytemuck::Pod;
use warpsafe::global::{AtomicElement, AtomicSlice, DisjointSlice, Slice, UnsafeSlice};
use warpsafe::kernel::Param;
use warpsafe::thread::OwnedIndex;

pub use warpsafe::kernel::LaunchConfig;

use crate::{Device, DeviceBuffer, Error};

/// The kernel crate `name` (its library name, `my_kernels` for the package `my-kernels`)
/// as a [`crate::Program`], from the PTX that `warpsafe_build::Builder` compiled in this
/// crate's build script (`OUT_DIR/<name>.program.rs`): every architecture built, oldest
/// first.
///
/// ```text
/// // build.rs: warpsafe_build::Builder::new("../my-kernels").archs(&[Arch::SM_70, Arch::SM_90]).build()?;
/// static MY_KERNELS: warpsafe_host::Program = warpsafe_host::include_program!("my_kernels");
/// ```
#[macro_export]
macro_rules! include_program {
    ($name:literal) => {
        ::core::include!(::core::concat!(::core::env!("OUT_DIR"), "/", $name, ".program.rs"))
    };
}

/// The argument array for a launch: one `*mut c_void` per kernel parameter, each pointing
/// at a local variable that holds the value (a device address from
/// [`crate::DeviceBuffer::device_address`], a `u64`, an `f32`, ...). The variables must be
/// mutable places and outlive the launch call.
///
/// ```
/// let mut len = 3u64;
/// let mut factor = 0.5f32;
/// let args = warpsafe_host::kernel_args![len, factor];
/// assert_eq!(args.len(), 2);
/// ```
#[macro_export]
macro_rules! kernel_args {
    ($($arg:ident),* $(,)?) => {
        [$(&mut $arg as *mut _ as *mut ::core::ffi::c_void),*]
    };
}

/// A host value that a kernel parameter of type `P` receives: a `Pod` scalar for a scalar
/// parameter, `&DeviceBuffer<T>` for a [`Slice<T>`] (or, in an `unsafe` kernel, a
/// `*const T`), `&mut DeviceBuffer<T>` for a [`DisjointSlice<T>`], an [`AtomicSlice<T>`]
/// (or a `*mut T`). Read-only views borrow the buffer shared and writable ones borrow it
/// exclusively, so no launch can hand one buffer to a writable view and to any other
/// parameter: the kernel's threads cannot race through two views of one buffer.
///
/// # Safety
/// `param` returns a value the kernel may use as its contract says for `P`: for the views,
/// memory of `device`, valid for the view's length, aligned, and borrowed (shared for
/// [`Slice`], exclusively for the others) for as long as `self` lives.
#[diagnostic::on_unimplemented(
    message = "a kernel parameter of type `{P}` cannot take a `{Self}`",
    label = "this argument does not match the kernel's parameter type `{P}`",
    note = "a scalar parameter takes a value of exactly its type (`3u64` for a `u64`), a `Slice<T>` takes `&DeviceBuffer<T>`, a `DisjointSlice<T>`, an `AtomicSlice<T>` or an `UnsafeSlice<T>` takes `&mut DeviceBuffer<T>`"
)]
pub unsafe trait KernelArg<P> {
    /// The parameter's value, after checking that the argument belongs to `device`.
    ///
    /// # Errors
    /// [`Error::ForeignBuffer`] for a buffer of another device.
    fn param(self, device: &Device, param: ParamAt<'_>) -> Result<P, Error>;
}

/// Which parameter an argument is for, for messages.
#[derive(Clone, Copy, Debug)]
pub struct ParamAt<'a> {
    /// The kernel's name.
    pub kernel: &'a str,
    /// The parameter, when the kernel's declaration is known.
    pub param: Option<&'static Param>,
    /// Its position, from 0.
    pub position: usize,
    /// The launch's threads, for a parameter marked `#[covers]`.
    pub threads: u64,
}

impl ParamAt<'_> {
    /// The parameter, for messages: its position, and its name and type when known.
    fn describe(self) -> String {
        match self.param {
            Some(param) => format!("parameter {} `{}: {}`", self.position, param.name, param.ty),
            None => format!("parameter {}", self.position),
        }
    }
}

/// The buffer's address as a `*mut T` of `device`, or the error for a buffer of another
/// device, or for a `#[covers]` buffer longer than the launch has threads. An empty buffer
/// gives a dangling, aligned pointer (nothing is read through it).
fn address_on<T: Pod>(buffer: &DeviceBuffer<T>, device: &Device, at: ParamAt<'_>) -> Result<*mut T, Error> {
    if !buffer.is_on(device) {
        return Err(Error::ForeignBuffer { kernel: at.kernel.to_string(), param: at.describe() });
    }
    if at.param.is_some_and(|p| p.covers) && buffer.len() as u64 > at.threads {
        return Err(Error::GridDoesNotCover {
            kernel: at.kernel.to_string(),
            param: at.describe(),
            len: buffer.len(),
            threads: at.threads,
        });
    }
    Ok(match buffer.device_address() {
        0 => std::ptr::NonNull::dangling().as_ptr(),
        address => address as *mut T,
    })
}

// SAFETY: a Pod value is a valid parameter of its own type and names no memory.
unsafe impl<T: Pod> KernelArg<T> for T {
    fn param(self, _: &Device, _: ParamAt<'_>) -> Result<T, Error> {
        Ok(self)
    }
}

// SAFETY: the buffer is of `device` (checked), holds `len()` aligned elements and is
// borrowed shared while the argument lives, so nothing writes it.
unsafe impl<T: Pod> KernelArg<Slice<T>> for &DeviceBuffer<T> {
    fn param(self, device: &Device, at: ParamAt<'_>) -> Result<Slice<T>, Error> {
        let ptr = address_on(self, device, at)?;
        // SAFETY: as above.
        Ok(unsafe { Slice::from_raw_parts(ptr, self.len()) })
    }
}

// SAFETY: the buffer is of `device` (checked), holds `len()` aligned elements and is
// borrowed exclusively while the argument lives, so only this launch's view touches it.
unsafe impl<T: Pod, I: OwnedIndex> KernelArg<DisjointSlice<T, I>> for &mut DeviceBuffer<T> {
    fn param(self, device: &Device, at: ParamAt<'_>) -> Result<DisjointSlice<T, I>, Error> {
        let ptr = address_on(self, device, at)?;
        // SAFETY: as above.
        Ok(unsafe { DisjointSlice::from_raw_parts(ptr, self.len()) })
    }
}

// SAFETY: as for DisjointSlice: exclusively borrowed, so only the launch's atomics touch it.
unsafe impl<T: AtomicElement> KernelArg<AtomicSlice<T>> for &mut DeviceBuffer<T> {
    fn param(self, device: &Device, at: ParamAt<'_>) -> Result<AtomicSlice<T>, Error> {
        let ptr = address_on(self, device, at)?;
        // SAFETY: as above.
        Ok(unsafe { AtomicSlice::from_raw_parts(ptr, self.len()) })
    }
}

// SAFETY: as for DisjointSlice: exclusively borrowed, so only the launch's view touches
// it (the kernel's own accesses are an `unsafe` kernel's or `unsafe` block's contract).
unsafe impl<T: Pod> KernelArg<UnsafeSlice<T>> for &mut DeviceBuffer<T> {
    fn param(self, device: &Device, at: ParamAt<'_>) -> Result<UnsafeSlice<T>, Error> {
        let ptr = address_on(self, device, at)?;
        // SAFETY: as above.
        Ok(unsafe { UnsafeSlice::from_raw_parts(ptr, self.len()) })
    }
}

// SAFETY: a raw pointer promises nothing by itself; an `unsafe` kernel's contract, which
// the caller of its `unsafe` launch keeps, says what may be done through it. The buffer
// is of `device` (checked) and borrowed shared.
unsafe impl<T: Pod> KernelArg<*const T> for &DeviceBuffer<T> {
    fn param(self, device: &Device, at: ParamAt<'_>) -> Result<*const T, Error> {
        address_on(self, device, at).map(<*mut T>::cast_const)
    }
}

// SAFETY: as above, borrowed exclusively.
unsafe impl<T: Pod> KernelArg<*mut T> for &mut DeviceBuffer<T> {
    fn param(self, device: &Device, at: ParamAt<'_>) -> Result<*mut T, Error> {
        address_on(self, device, at)
    }
}

/// The arguments of a typed launch: a tuple with one [`KernelArg`] per parameter of the
/// kernel, in order, whose parameter types are the tuple `P`. The arity and every type are
/// checked at compile time.
#[diagnostic::on_unimplemented(
    message = "these arguments do not match the kernel's parameters `{P}`",
    label = "one argument per kernel parameter, in order, as a tuple: `(&a, &mut b, 3u64)`",
    note = "a one-parameter kernel takes a one-element tuple: `(&a,)`"
)]
pub trait KernelArgs<P> {
    /// The parameters' values, each argument checked against `device` and, for a
    /// `#[covers]` parameter, against the launch's `threads`.
    ///
    /// # Errors
    /// [`Error::ForeignBuffer`] for a buffer of another device,
    /// [`Error::GridDoesNotCover`] for a `#[covers]` buffer longer than `threads`.
    fn params(
        self,
        device: &Device,
        kernel: &str,
        params: Option<&'static [Param]>,
        threads: u64,
    ) -> Result<P, Error>;
}

/// A tuple of parameter values, as `cuLaunchKernel` takes them: one pointer to each.
pub trait ParamValues {
    /// One pointer per value, in order, into `self`.
    fn pointers(&mut self) -> Vec<*mut c_void>;
}

macro_rules! tuples {
    ($(($($a:ident $p:ident $i:tt),*))*) => {$(
        impl<$($a: KernelArg<$p>, $p),*> KernelArgs<($($p,)*)> for ($($a,)*) {
            #[allow(unused_variables)]
            fn params(
                self,
                device: &Device,
                kernel: &str,
                params: Option<&'static [Param]>,
                threads: u64,
            ) -> Result<($($p,)*), Error> {
                Ok(($(
                    self.$i.param(
                        device,
                        ParamAt { kernel, param: params.and_then(|p| p.get($i)), position: $i, threads },
                    )?,
                )*))
            }
        }

        impl<$($p),*> ParamValues for ($($p,)*) {
            fn pointers(&mut self) -> Vec<*mut c_void> {
                vec![$(&mut self.$i as *mut $p as *mut c_void),*]
            }
        }
    )*};
}

tuples! {
    ()
    (A0 P0 0)
    (A0 P0 0, A1 P1 1)
    (A0 P0 0, A1 P1 1, A2 P2 2)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10, A11 P11 11)
}
