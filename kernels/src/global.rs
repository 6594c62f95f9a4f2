//! Global memory: typed, bounds-checked views of device buffers, as kernel parameters.
//!
//! The hardware rules: global memory is visible to every thread of the grid (and to the
//! host between launches); an address outside an allocation faults the whole context, or
//! silently reads and writes a neighbouring allocation; two threads writing one element
//! without an atomic, or one writing while another reads it, race, and the value is
//! whatever the timing gives.
//!
//! A safe kernel ([`crate::kernel!`] with `fn`, not `unsafe fn`) takes its buffers as one
//! of three views, which the host builds from its device buffers and checks when it
//! launches (the buffer belongs to the launching device, its length is the view's):
//!
//! | view | host argument | what a thread may do | CUDA C++ |
//! | --- | --- | --- | --- |
//! | [`Slice<T>`] | `&DeviceBuffer<T>` | read any element (`a[i]`, [`Slice::get`]) | `const T* __restrict__` + length |
//! | [`DisjointSlice<T>`] | `&mut DeviceBuffer<T>` | write (and read back) only the elements it owns: [`crate::thread::index`] and the indices of [`crate::thread::grid_stride`] | `T*` where thread `i` writes `out[i]` |
//! | `DisjointSlice<T, TileIndex<TILE>>` | `&mut DeviceBuffer<T>` | the same, owning by block tiles: [`crate::thread::block_tiles`] | `T*` where block `b` writes `out[b * TILE ..][..TILE]` |
//! | [`AtomicSlice<T>`] | `&mut DeviceBuffer<T>` | any atomic operation on any element, at device scope | `atomicAdd(&out[i], v)`, ... |
//!
//! So, in safe code:
//! - every index is checked against the view's length: past the end, the kernel prints
//!   `warpsafe: global-memory index out of bounds at FILE:LINE: block (..), thread (..):
//!   index I, length L` and traps (the host's error names the kernel); on the CPU emulator
//!   the launch fails with `ErrorKind::GlobalOutOfBounds` and the same facts. Nothing is
//!   read or written out of bounds;
//! - no element is written by two threads: a [`DisjointSlice`] is written only through an
//!   [`OwnedIndex`](crate::thread::OwnedIndex), and a thread can hold only the indices it
//!   owns (its linear index in the grid plus multiples of the grid's thread count, or its
//!   offsets in its block's tiles), which no other thread of the launch owns;
//! - no element is read while another thread writes it: the host lends a buffer either to
//!   one writable view (`&mut`) or to any number of read-only ones (`&`), never both, and a
//!   [`DisjointSlice`] element is read back only by its owner;
//! - elements many threads update go through [`AtomicSlice`], whose operations are
//!   [`crate::atomic`]'s scoped atomics with their typed orderings.
//!
//! The checks cost a compare and a not-taken branch per access; in a loop whose bound is
//! the view's length (a grid-stride loop over `0..a.len()`) LLVM proves most of them and
//! removes them. Where a kernel proves its indices some other way, `unsafe`
//! [`Slice::get_unchecked`] and [`DisjointSlice::write_unchecked`] skip the check: the
//! opt-out is explicit in the code that relies on it, never a build flag.
//!
//! The raw form stays for experts: an `unsafe fn` kernel may take `*const T` / `*mut T`
//! parameters (the host passes `&DeviceBuffer` / `&mut DeviceBuffer` for them too), and
//! every view converts to its raw pointer.

use core::marker::PhantomData;
use core::ops::Index;
use core::panic::Location;

use bytemuck::Pod;

use crate::arch::{self, Memory};
use crate::atomic::{Atomic, Device};
use crate::thread;

/// Reports `index` past a view of `len` elements and ends the launch.
#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(index: usize, len: usize) -> ! {
    arch::index_out_of_bounds(Memory::Global, index, len, Location::caller())
}

/// A read-only view of `len` elements of a device buffer: a kernel parameter (host
/// argument `&DeviceBuffer<T>`). Every thread may read every element; nothing writes them
/// during the launch (the host lends the buffer shared), so reads never race.
///
/// ```
/// use warpsafe::global::{DisjointSlice, Slice};
/// warpsafe::kernel! {
///     /// `out[i]` = the sum of `input` over the grid-stride indices of thread `i`.
///     pub fn strided_sums(input: Slice<u32>, out: DisjointSlice<u32>) {
///         let mut sum = 0u32;
///         for i in warpsafe::thread::grid_stride(input.len()) {
///             sum = sum.wrapping_add(input[i]);
///         }
///         if let Some(slot) = out.get(warpsafe::thread::index()) {
///             out.write(slot, sum);
///         }
///     }
/// }
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// # assert_eq!(strided_sums.param_count(), 2);
/// # static PROGRAM: warpsafe_host::Program =
/// #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[strided_sums.untyped()]);
/// // On the CPU emulator: 4 threads, each summing every 4th element.
/// let device = warpsafe_host::Device::emulator();
/// let f = device.load(&PROGRAM)?.kernel(&strided_sums)?;
/// let input = device.upload(&(1..=10).collect::<Vec<u32>>())?;
/// let mut out = device.alloc_zeroed::<u32>(4)?;
/// device.launch(&f, warpsafe_host::LaunchConfig::linear(1, 4), (&input, &mut out))?;
/// assert_eq!(out.download()?, vec![1 + 5 + 9, 2 + 6 + 10, 3 + 7, 4 + 8]);
/// # Ok(())
/// # }
/// ```
#[repr(C)]
pub struct Slice<T> {
    ptr: *const T,
    len: usize,
    element: PhantomData<T>,
}

impl<T> Clone for Slice<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Slice<T> {}

impl<T: Pod> Slice<T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned for `T` and valid for reads of `len` elements (it may dangle when
    /// `len` is 0), and nothing writes those elements while the view is used.
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *const T, len: usize) -> Slice<T> {
        Slice { ptr, len, element: PhantomData }
    }

    /// Number of elements.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no element.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first element's address.
    #[inline(always)]
    pub const fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// Element `index`, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<T> {
        if index < self.len {
            // SAFETY: index < len, and the view's elements are readable and not written.
            Some(unsafe { self.ptr.add(index).read() })
        } else {
            None
        }
    }

    /// Element `index`, without the bounds check.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, index: usize) -> T {
        // SAFETY: index < len (the caller's promise); the elements are readable.
        unsafe { self.ptr.add(index).read() }
    }

    /// The view as a Rust slice, for iterators and everything else `&[T]` has.
    #[inline(always)]
    pub fn as_slice(&self) -> &[T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `len` elements at `ptr` are readable, aligned and never written while the
        // view lives (`from_raw_parts`' contract); `len` is not 0, so `ptr` is not null.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Pod> Index<usize> for Slice<T> {
    type Output = T;

    /// Element `index`; past the end the kernel reports the index and traps.
    #[track_caller]
    #[inline(always)]
    fn index(&self, index: usize) -> &T {
        if index >= self.len {
            out_of_bounds(index, self.len);
        }
        // SAFETY: index < len, and the view's elements are readable and never written.
        unsafe { &*self.ptr.add(index) }
    }
}

impl<T: Pod, I: thread::OwnedIndex> Index<I> for Slice<T> {
    type Output = T;

    /// Element `index`; past the end the kernel reports the index and traps.
    #[track_caller]
    #[inline(always)]
    fn index(&self, index: I) -> &T {
        &self[index.index()]
    }
}

/// An output that threads write without atomics, each only the elements it owns: a kernel
/// parameter (host argument `&mut DeviceBuffer<T>`).
///
/// A thread writes and reads back elements through an index of type `I` that only it can
/// hold ([`thread::OwnedIndex`]), so two threads never touch one element and safe code
/// cannot race on it:
/// - `DisjointSlice<T>` (`I` = [`thread::Index`]): the thread's own linear index in the
///   grid ([`thread::index`]) and those of a grid-stride loop ([`thread::grid_stride`]),
///   exactly the indices congruent to its linear index modulo the grid's thread count;
/// - `DisjointSlice<T, TileIndex<TILE>>` ([`thread::TileIndex`]): tiles of `TILE` elements
///   owned block by block, offsets within a tile thread by thread
///   ([`thread::block_tiles`]), for kernels that work on a block's contiguous tile.
///
/// The index type is part of the view's type, so one kernel cannot mix two ownerships on
/// one output. Elements are written and read by value: the view hands out no references.
#[repr(C)]
pub struct DisjointSlice<T, I: thread::OwnedIndex = thread::Index> {
    ptr: *mut T,
    len: usize,
    element: PhantomData<(T, fn(I))>,
}

impl<T: Pod, I: thread::OwnedIndex> DisjointSlice<T, I> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned for `T` and valid for reads and writes of `len` elements (it may
    /// dangle when `len` is 0); during the launch no other thread accesses them except
    /// through this launch's views (it is handed to one parameter of one launch).
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> DisjointSlice<T, I> {
        DisjointSlice { ptr, len, element: PhantomData }
    }

    /// Number of elements.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no element.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first element's address: every access through it is the caller's to prove.
    #[inline(always)]
    pub const fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    /// `index` when it is inside the view (`None` past the end): the usual guard of a
    /// thread whose index may lie past the output, `if let Some(i) = out.get(index)`.
    #[inline(always)]
    pub fn get(&self, index: I) -> Option<I> {
        (index.index() < self.len).then_some(index)
    }

    /// Writes element `index`, which the calling thread owns; past the end the kernel
    /// reports the index and traps.
    #[track_caller]
    #[inline(always)]
    pub fn write(&self, index: I, value: T) {
        let i = index.index();
        if i >= self.len {
            out_of_bounds(i, self.len);
        }
        arch::global_store(bytemuck::bytes_of(&value), Location::caller());
        // SAFETY: i < len; only the calling thread owns element i (an OwnedIndex), so no
        // other thread accesses it.
        unsafe { self.ptr.add(i).write(value) }
    }

    /// Reads back element `index`, which the calling thread owns (it holds what the
    /// host uploaded until the thread writes it); past the end the kernel traps.
    #[track_caller]
    #[inline(always)]
    pub fn read(&self, index: I) -> T {
        let i = index.index();
        if i >= self.len {
            out_of_bounds(i, self.len);
        }
        // SAFETY: as for `write`.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes element `index` without the bounds check.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_unchecked(&self, index: I, value: T) {
        arch::global_store(bytemuck::bytes_of(&value), Location::caller());
        // SAFETY: in bounds by the caller's promise; owned by the caller (as for `write`).
        unsafe { self.ptr.add(index.index()).write(value) }
    }
}

/// A buffer any thread may read and write at any index: CUDA's plain `T*`, for scratch
/// buffers, values exchanged between threads and the data of inter-block protocols (a
/// kernel parameter; host argument `&mut DeviceBuffer<T>`).
///
/// Every index is checked, as in the other views. What no type can prove here, that two
/// threads never access an element at once with one of them writing (a data race), is
/// the caller's to keep, so [`UnsafeSlice::read`] and [`UnsafeSlice::write`] are
/// `unsafe`. The CPU emulator checks that part: it records every access of this view for
/// its race check (happens-before under the PTX memory model: barriers, `syncwarp`,
/// collectives, release/acquire and fences at their scope), which accesses through raw
/// pointers cannot give it. Prefer it to a raw pointer in `unsafe` kernels for that.
#[repr(C)]
pub struct UnsafeSlice<T> {
    ptr: *mut T,
    len: usize,
    element: PhantomData<T>,
}

impl<T> Clone for UnsafeSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for UnsafeSlice<T> {}

impl<T: Pod> UnsafeSlice<T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned for `T` and valid for reads and writes of `len` elements (it may
    /// dangle when `len` is 0) while the launch runs; nothing outside the launch's views
    /// of it accesses them meanwhile.
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        UnsafeSlice { ptr, len, element: PhantomData }
    }

    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index`; past the end the kernel reports the index and traps.
    ///
    /// # Safety
    /// No other thread writes element `index` unless that write happens before this read
    /// or this read before it (a barrier, `syncwarp` or a collective between them in one
    /// block; a release and an acquire at device scope between blocks).
    #[track_caller]
    #[inline(always)]
    pub unsafe fn read(&self, index: usize) -> T {
        if index >= self.len {
            out_of_bounds(index, self.len);
        }
        arch::global_access(self.ptr as usize, index, core::mem::size_of::<T>(), false, Location::caller());
        // SAFETY: index < len, so in the buffer; no write races with it (caller).
        unsafe { self.ptr.add(index).read() }
    }

    /// Writes element `index`; past the end the kernel reports the index and traps.
    ///
    /// # Safety
    /// No other thread reads or writes element `index` unless that access and this write
    /// are ordered by happens-before (as for [`UnsafeSlice::read`]).
    #[track_caller]
    #[inline(always)]
    pub unsafe fn write(&self, index: usize, value: T) {
        if index >= self.len {
            out_of_bounds(index, self.len);
        }
        arch::global_store(bytemuck::bytes_of(&value), Location::caller());
        arch::global_access(self.ptr as usize, index, core::mem::size_of::<T>(), true, Location::caller());
        // SAFETY: index < len, so in the buffer; no access races with it (caller).
        unsafe { self.ptr.add(index).write(value) }
    }

    /// The address of element 0, for code that needs the raw form.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

/// The element types of an [`AtomicSlice`]: those [`crate::atomic::Atomic`] has
/// instructions for. Sealed.
pub trait AtomicElement: Pod + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! atomic_elements {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl AtomicElement for $t {}
    )*};
}
atomic_elements!(u32, i32, u64, i64, f32, f64);

/// A buffer that many threads update with atomics: a kernel parameter (host argument
/// `&mut DeviceBuffer<T>`). [`AtomicSlice::at`] gives element `i` as a device-scope
/// [`Atomic`], with every operation of [`crate::atomic`] (add, min, max, and, or, xor,
/// exchange, compare-and-swap, ordered loads and stores) and its typed orderings.
/// Device scope because the buffer is shared by every block of the grid.
///
/// ```
/// use warpsafe::atomic::Relaxed;
/// use warpsafe::global::{AtomicSlice, Slice};
/// warpsafe::kernel! {
///     /// Counts the samples per bin (`bins.len()` bins; samples past the last bin go to
///     /// the last one).
///     pub fn histogram(samples: Slice<u32>, bins: AtomicSlice<u32>) {
///         for i in warpsafe::thread::grid_stride(samples.len()) {
///             let bin = (samples[i] as usize).min(bins.len().saturating_sub(1));
///             if let Some(counter) = bins.get(bin) {
///                 counter.add(1, Relaxed);
///             }
///         }
///     }
/// }
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// # assert_eq!(histogram.param_count(), 2);
/// # static PROGRAM: warpsafe_host::Program =
/// #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[histogram.untyped()]);
/// let device = warpsafe_host::Device::emulator();
/// let f = device.load(&PROGRAM)?.kernel(&histogram)?;
/// let samples = device.upload(&[0u32, 1, 1, 2, 9, 2, 2])?;
/// let mut bins = device.alloc_zeroed::<u32>(3)?;
/// device.launch(&f, warpsafe_host::LaunchConfig::linear(2, 32), (&samples, &mut bins))?;
/// assert_eq!(bins.download()?, vec![1, 2, 4]); // 9 went to the last bin
/// # Ok(())
/// # }
/// ```
#[repr(C)]
pub struct AtomicSlice<T> {
    ptr: *mut T,
    len: usize,
    element: PhantomData<T>,
}

impl<T> Clone for AtomicSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for AtomicSlice<T> {}

impl<T: AtomicElement> AtomicSlice<T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned for `T` and valid for reads and writes of `len` elements (it may
    /// dangle when `len` is 0), and during the launch they are accessed only atomically.
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> AtomicSlice<T> {
        AtomicSlice { ptr, len, element: PhantomData }
    }

    /// Number of elements.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no element.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index` as a device-scope atomic; past the end the kernel reports the
    /// index and traps.
    #[track_caller]
    #[inline(always)]
    pub fn at(&self, index: usize) -> &Atomic<T, Device> {
        match self.get(index) {
            Some(atomic) => atomic,
            None => out_of_bounds(index, self.len),
        }
    }

    /// Element `index` as a device-scope atomic, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<&Atomic<T, Device>> {
        // SAFETY: index < len: the element is valid, aligned for T (the view's contract)
        // and accessed only atomically during the launch.
        (index < self.len).then(|| unsafe { Atomic::from_ptr(self.ptr.add(index)) })
    }
}
