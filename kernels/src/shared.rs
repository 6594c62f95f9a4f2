//! Block-shared memory: arrays every thread of a block can read and write.
//!
//! The hardware rule: shared memory lives as long as its block, starts with whatever the
//! previous block left there, and nothing orders one thread's accesses with another's
//! except a barrier ([`crate::barrier`], or [`crate::group::Group::sync`] for the lanes of
//! one warp) or an atomic with a fence. Two threads touching the same element with at
//! least one write and no barrier between is a data race: the value read is whatever the
//! hardware's timing gives.
//!
//! What warpsafe checks: every index. Every accessor compares the index with the length
//! and, past the end, reports the source location, block, thread, index and length, then
//! traps (on the CPU emulator the launch fails with the same facts). The only way around
//! the check is the explicit `unsafe` [`SharedSlice::read_unchecked`] /
//! [`SharedSlice::write_unchecked`]. Elements are `bytemuck::Pod`, so reading one that no
//! thread wrote yet gives garbage, never an invalid value, and every byte a thread writes
//! is a value (no padding), which the CPU emulator inspects to report a use of an
//! undefined value.
//!
//! What needs no `unsafe`, because the API itself rules the race out:
//! - a thread's own slot of a static array, [`SharedArray::write_own`] /
//!   [`SharedArray::read_own`]: element [`crate::thread::linear_thread_idx`], which no
//!   other thread of the block writes through these methods;
//! - atomics on a static array's elements, [`SharedArray::atomic`] (block scope: a block
//!   histogram, a block-wide counter).
//!
//! What still needs `unsafe`, and why: reading another thread's slot, and any write to an
//! element other threads read ([`SharedArray::read`], [`SharedArray::write`],
//! [`SharedSlice`]). Whether a barrier separates the two is a property of every thread's
//! path through the kernel, which a type cannot see; on the GPU the race would go
//! unnoticed, so the caller states it (`// SAFETY: written before the barrier above`), and
//! the CPU emulator checks it (see `warpsafe::emu`). The dynamic window ([`dynamic`]) is
//! never accessed safely: views of it with different element types overlap.
//!
//! Two kinds of storage:
//! - static, declared with [`crate::shared!`] at item level (`static PARTIALS: [f32; 32];`):
//!   like CUDA's `static __shared__`, one copy per block, its size fixed at compile time;
//! - dynamic, [`dynamic`]: the window whose size the host passes at launch
//!   (`shared_mem_bytes`), like CUDA's `extern __shared__`.
//!
//! ```
//! use warpsafe::global::{DisjointSlice, Slice};
//! warpsafe::shared! {
//!     /// Each thread's running maximum, in its own slot.
//!     static RUNNING: [f32; 1024];
//! }
//! warpsafe::kernel! {
//!     /// `out[t]` = the largest element thread `t` visits in a grid-stride loop.
//!     pub fn strided_max(input: Slice<f32>, out: DisjointSlice<f32>) {
//!         RUNNING.write_own(f32::NEG_INFINITY); // the thread's own slot: no race, safe
//!         for i in warpsafe::thread::grid_stride(input.len()) {
//!             RUNNING.write_own(RUNNING.read_own().max(input[i]));
//!         }
//!         if let Some(t) = out.get(warpsafe::thread::index()) {
//!             out.write(t, RUNNING.read_own());
//!         }
//!     }
//! }
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! # static PROGRAM: warpsafe_host::Program =
//! #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[strided_max.untyped()]);
//! // On the CPU emulator:
//! let device = warpsafe_host::Device::emulator();
//! let f = device.load(&PROGRAM)?.kernel(&strided_max)?;
//! let input = device.upload(&[3.0f32, -1.0, 8.0, 2.0, 5.0])?;
//! let mut out = device.alloc_zeroed::<f32>(2)?;
//! device.launch(&f, warpsafe_host::LaunchConfig::linear(1, 2), (&input, &mut out))?;
//! assert_eq!(out.download()?, vec![8.0, 2.0]);
//! # Ok(())
//! # }
//! ```

use core::marker::PhantomData;
use core::panic::Location;

use bytemuck::Pod;

use crate::arch::{self, Memory};
use crate::atomic::{Atomic, Block};
use crate::global::AtomicElement;
use crate::thread;

/// The storage behind one [`crate::shared!`] declaration (implemented by the macro).
///
/// # Safety
/// `base()` returns, in every block, the start of that block's own `LEN` elements of
/// `Elem`, aligned for `Elem`, valid for the whole life of the block.
pub unsafe trait SharedStorage {
    /// The element type: any bit pattern is a valid value, since shared memory starts
    /// with whatever the last block left there.
    type Elem: Pod;
    /// Number of elements.
    const LEN: usize;
    /// The calling block's first element.
    fn base() -> *mut Self::Elem;
}

/// A statically sized shared array, declared with [`crate::shared!`].
pub struct SharedArray<S: SharedStorage> {
    storage: PhantomData<S>,
}

// SAFETY: a SharedArray is a zero-sized name for per-block storage; every access goes
// through `unsafe` accessors whose callers promise freedom from races.
unsafe impl<S: SharedStorage> Sync for SharedArray<S> {}

impl<S: SharedStorage> SharedArray<S> {
    #[doc(hidden)]
    pub const fn new() -> Self {
        SharedArray { storage: PhantomData }
    }

    /// Number of elements.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        S::LEN
    }

    /// Always false: a shared array has at least one element.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        false
    }

    /// The calling block's copy, as a bounds-checked slice.
    #[inline(always)]
    pub fn slice(&self) -> SharedSlice<S::Elem> {
        SharedSlice { base: S::base(), len: S::LEN }
    }

    /// Writes the calling thread's own slot, element
    /// [`thread::linear_thread_idx`] (bounds-checked). No other thread writes that
    /// element through this method, so it needs no `unsafe`; another thread that reads it
    /// ([`SharedArray::read`]) needs a barrier after this write.
    #[track_caller]
    #[inline(always)]
    pub fn write_own(&self, value: S::Elem) {
        // SAFETY: only this thread writes its own slot through the safe API, and every
        // other access of it is an `unsafe` read whose caller orders it after this write.
        unsafe { self.write(thread::linear_thread_idx() as usize, value) }
    }

    /// Reads the calling thread's own slot, element [`thread::linear_thread_idx`]
    /// (bounds-checked): what it last wrote there with [`SharedArray::write_own`].
    #[track_caller]
    #[inline(always)]
    pub fn read_own(&self) -> S::Elem {
        // SAFETY: the element is written only by this thread through the safe API (an
        // `unsafe` write of it by another thread is that caller's race to rule out).
        unsafe { self.read(thread::linear_thread_idx() as usize) }
    }

    /// Element `index` of the calling block's copy as a block-scope atomic
    /// (bounds-checked): `fetch_add`, `add`, `fetch_max`, ... with [`crate::atomic`]'s
    /// typed orderings, safe because atomics never race. Block scope, since a shared array
    /// is seen by the threads of one block only.
    #[track_caller]
    #[inline(always)]
    pub fn atomic(&self, index: usize) -> &Atomic<S::Elem, Block>
    where
        S::Elem: AtomicElement,
    {
        let slice = self.slice();
        slice.check(index);
        // SAFETY: index < len: the element lies in the block's copy, aligned for its type,
        // for the whole life of the block; mixing it with plain accesses is a race only
        // `unsafe` accessors can make.
        unsafe { Atomic::from_ptr(slice.base.add(index)) }
    }

    /// Reads element `index` of the calling block's copy (bounds-checked).
    ///
    /// # Safety
    /// No other thread writes element `index` between the last barrier and this read
    /// (or the write is ordered before it by a barrier or syncwarp).
    #[track_caller]
    #[inline(always)]
    pub unsafe fn read(&self, index: usize) -> S::Elem {
        // SAFETY: forwarded from the caller.
        unsafe { self.slice().read(index) }
    }

    /// Writes element `index` of the calling block's copy (bounds-checked).
    ///
    /// # Safety
    /// No other thread reads or writes element `index` unordered with this write.
    #[track_caller]
    #[inline(always)]
    pub unsafe fn write(&self, index: usize, value: S::Elem) {
        // SAFETY: forwarded from the caller.
        unsafe { self.slice().write(index, value) }
    }
}

/// A bounds-checked view of shared memory: a static array's [`SharedArray::slice`] or
/// the [`dynamic`] window.
pub struct SharedSlice<T> {
    base: *mut T,
    len: usize,
}

impl<T> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SharedSlice<T> {}

impl<T: Pod> SharedSlice<T> {
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no element (a dynamic window of fewer bytes than one `T`).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first element's generic address, for code that proves its own bounds.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.base
    }

    #[track_caller]
    #[inline(always)]
    fn check(&self, index: usize) {
        if index >= self.len {
            arch::index_out_of_bounds(Memory::Shared, index, self.len, Location::caller());
        }
    }

    /// Reads element `index` (bounds-checked).
    ///
    /// # Safety
    /// The read is ordered after every other thread's write of this element by a barrier
    /// or syncwarp (no data race).
    #[track_caller]
    #[inline(always)]
    pub unsafe fn read(&self, index: usize) -> T {
        self.check(index);
        // SAFETY: index < len (checked above); race freedom from the caller.
        unsafe { arch::shared_read(self.base.add(index)) }
    }

    /// Writes element `index` (bounds-checked).
    ///
    /// # Safety
    /// The write is ordered with every other thread's access of this element by a
    /// barrier or syncwarp (no data race).
    #[track_caller]
    #[inline(always)]
    pub unsafe fn write(&self, index: usize, value: T) {
        self.check(index);
        // SAFETY: index < len (checked above); race freedom from the caller.
        unsafe { arch::shared_write(self.base.add(index), value) }
    }
}

impl<T: Pod> SharedSlice<T> {
    /// Reads element `index` without the bounds check.
    ///
    /// # Safety
    /// `index < self.len()`, and as for [`SharedSlice::read`].
    #[track_caller]
    #[inline(always)]
    pub unsafe fn read_unchecked(&self, index: usize) -> T {
        // SAFETY: in bounds and race-free by the caller's promise.
        unsafe { arch::shared_read(self.base.add(index)) }
    }

    /// Writes element `index` without the bounds check.
    ///
    /// # Safety
    /// `index < self.len()`, and as for [`SharedSlice::write`].
    #[track_caller]
    #[inline(always)]
    pub unsafe fn write_unchecked(&self, index: usize, value: T) {
        // SAFETY: in bounds and race-free by the caller's promise.
        unsafe { arch::shared_write(self.base.add(index), value) }
    }
}

/// The block's dynamic shared memory as elements of `T`: as many whole elements as the
/// launch's `shared_mem_bytes` holds. The window starts 16-byte aligned, so `T` may
/// need at most 16-byte alignment (checked at compile time).
#[inline(always)]
pub fn dynamic<T: Pod>() -> SharedSlice<T> {
    const { assert!(core::mem::align_of::<T>() <= 16, "dynamic shared memory is 16-byte aligned") };
    let (base, bytes) = arch::dynamic_shared();
    SharedSlice { base: base.cast(), len: bytes / core::mem::size_of::<T>().max(1) }
}

/// `len` elements of `T` of the block's dynamic shared memory, starting `offset` bytes
/// into the window: CUDA's carving of `extern __shared__` memory into several arrays
/// (`float* a = (float*)smem; int* b = (int*)&a[n];`), checked. A part that does not fit
/// in the launch's `shared_mem_bytes` reports the end it would need and the window's size
/// and traps (the CPU emulator: `ErrorKind::SharedOutOfBounds`), and so does an `offset`
/// that is not a multiple of `T`'s alignment.
#[inline(always)]
#[track_caller]
pub fn dynamic_part<T: Pod>(offset: usize, len: usize) -> SharedSlice<T> {
    const { assert!(core::mem::align_of::<T>() <= 16, "dynamic shared memory is 16-byte aligned") };
    let (base, bytes) = arch::dynamic_shared();
    let end = len.checked_mul(core::mem::size_of::<T>()).and_then(|b| b.checked_add(offset));
    match end {
        Some(end) if end <= bytes && offset.is_multiple_of(core::mem::align_of::<T>()) => {
            // SAFETY: offset + len elements lie inside the window (checked just above).
            SharedSlice { base: unsafe { base.add(offset) }.cast(), len }
        }
        _ => arch::index_out_of_bounds(Memory::Shared, end.unwrap_or(usize::MAX), bytes, Location::caller()),
    }
}

/// Declares a statically sized block-shared array at item level.
///
/// ```
/// warpsafe::shared! {
///     /// Scratch for the block reduction.
///     static SCRATCH: [u64; 32];
/// }
/// assert_eq!(SCRATCH.len(), 32);
/// ```
///
/// The name becomes a [`SharedArray`]; a module of the same name holds its storage type.
/// The element type must be `bytemuck::Pod` (shared memory starts as garbage, so a `bool`
/// or a reference does not compile, and a stored element has no padding bytes); the
/// length must be positive.
#[macro_export]
macro_rules! shared {
    ($(#[$attr:meta])* $vis:vis static $name:ident : [$elem:ty; $len:expr];) => {
        #[doc(hidden)]
        #[allow(non_snake_case)]
        $vis mod $name {
            #[allow(unused_imports)]
            use super::*;
            /// The storage of the shared array of the same name.
            pub struct Storage;
            $crate::__warpsafe_shared_storage!(Storage, $elem, $len, $name);
        }
        $(#[$attr])*
        $vis static $name: $crate::shared::SharedArray<$name::Storage> = $crate::shared::SharedArray::new();
    };
}
