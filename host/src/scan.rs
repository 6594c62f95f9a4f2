//! Device-wide scans, selections and partitions on a [`Device`]: [`Scanner`] and
//! [`Selector`], each one kernel launch per call.
//!
//! ```
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! use warpsafe::op::Sum;
//! use warpsafe::scan::select::LessThan;
//! use warpsafe_host::scan::{Scanner, Selector};
//! use warpsafe_host::Device;
//!
//! let device = Device::emulator();
//! let data = device.upload(&[3i32, 1, 4, 1, 5, 9, 2, 6])?;
//! let mut sums = device.alloc_zeroed::<i32>(8)?;
//! let mut scanner = Scanner::<i32, Sum>::new(&device)?;
//! scanner.inclusive(&data, &mut sums)?;
//! assert_eq!(sums.download()?, [3, 4, 8, 9, 14, 23, 25, 31]);
//! scanner.exclusive(&data, &mut sums)?;
//! assert_eq!(sums.download()?, [0, 3, 4, 8, 9, 14, 23, 25]);
//!
//! let mut small = device.alloc_zeroed::<i32>(8)?;
//! let mut selector = Selector::new(&device, LessThan(4i32))?;
//! let count = selector.select(&data, &mut small)?;
//! assert_eq!(count, 4);
//! assert_eq!(small.download()?[..4], [3, 1, 1, 2]);
//! # Ok(())
//! # }
//! ```
//!
//! # API
//! ```text
//! pub enum ScanKind { Inclusive, Exclusive }
//! pub unsafe trait Scan<T: Pod>: Operator<T> + Default { fn kernel() -> ScanKernel; }
//! pub unsafe trait Selection<T: Pod>: Predicate<T> + Pod { fn kernel() -> SelectKernel; }
//! pub struct ScanOptions { pub block_threads: u32 }
//! impl ScanOptions {
//!     pub fn scan() -> Self; /* 128 threads */ pub fn select() -> Self; /* 128 */
//!     pub fn scan_for<T: Pod>(device: &Device, len: usize) -> Self; /* the default: by length and device */
//!     pub fn select_for<T: Pod>(device: &Device, len: usize) -> Self;
//! }
//! impl<T: Pod, O: Scan<T>> Scanner<T, O> {
//!     pub fn new(device: &Device) -> Result<Self, Error>;
//!     pub fn with_options(device: &Device, options: ScanOptions) -> Result<Self, Error>;
//!     pub fn options_for(&self, len: usize) -> ScanOptions;
//!     pub fn tile_len(&self, len: usize) -> usize;
//!     pub fn inclusive(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<(), Error>;
//!     pub fn exclusive(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<(), Error>;
//!     pub fn inclusive_in_place(&mut self, data: &mut DeviceBuffer<T>) -> Result<(), Error>;
//!     pub fn exclusive_in_place(&mut self, data: &mut DeviceBuffer<T>) -> Result<(), Error>;
//!     pub unsafe fn scan_on(&mut self, stream: &Stream, kind: ScanKind, input: &DeviceBuffer<T>, output: &DeviceBuffer<T>) -> Result<(), Error>;
//! }
//! pub enum SelectForm { Select, Partition }
//! impl<T: Pod, P: Selection<T>> Selector<T, P> {
//!     pub fn new(device: &Device, predicate: P) -> Result<Self, Error>;
//!     pub fn with_options(device: &Device, predicate: P, options: ScanOptions) -> Result<Self, Error>;
//!     pub fn options_for(&self, len: usize) -> ScanOptions;
//!     pub fn tile_len(&self, len: usize) -> usize;
//!     pub fn predicate(&self) -> P;
//!     pub fn set_predicate(&mut self, predicate: P);
//!     pub fn select(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<u64, Error>;
//!     pub fn select_flagged(&mut self, input: &DeviceBuffer<T>, flags: &DeviceBuffer<u8>, output: &mut DeviceBuffer<T>) -> Result<u64, Error>;
//!     pub fn partition(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<u64, Error>;
//!     pub fn partition_flagged(&mut self, input: &DeviceBuffer<T>, flags: &DeviceBuffer<u8>, output: &mut DeviceBuffer<T>) -> Result<u64, Error>;
//!     pub unsafe fn select_on(&mut self, stream: &Stream, form: SelectForm, input: &DeviceBuffer<T>,
//!                             flags: Option<&DeviceBuffer<u8>>, output: &DeviceBuffer<T>, count: &DeviceBuffer<u64>) -> Result<(), Error>;
//! }
//! ```
//!
//! # What each call does
//! One launch of one block per tile (by default 128 threads, each with a run of 256 bytes,
//! at most 64 elements in a selection: 8192 `f32`s; 256 threads for large inputs on GPUs
//! with an sm_90's shared memory, and on the emulator: [`ScanOptions::scan_for`]) of the
//! kernels in `warpsafe::scan`: every block
//! loads its tile once, publishes the tile's aggregate, finds its prefix by decoupled
//! look-back over the earlier tiles' status words, and writes its tile once. There is no
//! initialisation launch: status words carry the launch's epoch, so words of earlier launches read as
//! unpublished, and the tile counter resets itself. `Scanner` and `Selector` own their
//! scratch (status words, grown to the longest input seen, and the counter) and reuse it
//! on every call.
//!
//! # Results
//! - Scans: element `i` of an inclusive scan is `input[0] ⊕ ... ⊕ input[i]`, of an
//!   exclusive scan `input[0] ⊕ ... ⊕ input[i - 1]` (the identity for `i = 0`). Operators
//!   need not commute. Float results are the same bits on every run: the tile length
//!   depends on the type and the options only, and every prefix is combined in one fixed
//!   order (`warpsafe::scan::lookback`), whichever tiles happen to finish first. With the
//!   same options they are the same bits on every device too; the default options depend
//!   on the input's length and the device's shared memory ([`ScanOptions::scan_for`]), so
//!   pass [`ScanOptions::scan`] where two GPU generations must agree. The order is not left to
//!   right, so floats may differ from a sequential loop in the last bits.
//! - Selections: the kept elements in input order at the front of `output`, the count
//!   returned as a `u64`. Partitions: kept elements as for select, then the rejected ones
//!   at the end of `output` in reverse input order; the output is a permutation of the
//!   input. The flagged forms keep element `i` when `flags[i] != 0` and ignore the
//!   predicate.
//!
//! # Errors
//! - [`Error::MismatchedLengths`]: a scan's output, a partition's output or the flags do
//!   not have the input's length.
//! - [`Error::OutputTooSmall`]: a selection kept more than its output holds; the first
//!   `output.len()` kept elements were written, nothing beyond.
//! - [`Error::InputTooLarge`]: more than 2^32 tiles (2^44 `f32`s).
//! - [`Error::Unsupported`]: a buffer or stream of another device; options whose tile does
//!   not fit the shared memory the device gives a block.
//! - An operator for another element type does not compile (`Scanner<f32, O>` needs
//!   `O: Scan<f32>`), nor does a predicate for another type.
//!
//! # Concurrency
//! Calls take `&mut self`: a scanner's scratch serves one launch at a time. Two scans in
//! flight on different streams need two scanners (the `_on` forms are `unsafe` for that
//! reason).

use std::marker::PhantomData;

use bytemuck::Pod;
use warpsafe::op::{Max, Min, Operator, Sum};
use warpsafe::scan::device as kernel_scan;
use warpsafe::scan::lookback::status_words;
use warpsafe::scan::select::{self as kernel_select, GreaterThan, LessThan, Predicate};

use crate::lookback::LookBackScratch;
use crate::{kernel_args, ptx, Device, DeviceBuffer, Error, Function, LaunchConfig, Program, Stream};

/// Inclusive or exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// Element `i` combines elements `0..=i`.
    Inclusive,
    /// Element `i` combines elements `0..i`; element 0 is the identity.
    Exclusive,
}

/// Select (kept elements only) or partition (kept, then rejected in reverse).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelectForm {
    /// The kept elements, in order.
    Select,
    /// The kept elements in order, then the rejected ones in reverse order.
    Partition,
}

/// Launch settings of a [`Scanner`] or [`Selector`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// Threads per block: a multiple of 32 from 32 to 512 whose tile fits the shared
    /// memory the device gives a block ([`Device::shared_bytes_per_block`]; a scan's runs
    /// are 256 bytes, so 128 threads take 32 KiB, 256 threads 64 KiB). With the element
    /// type it fixes the tile length, and so the order in which floats are combined:
    /// results are bit-identical between runs with the same options, on every device.
    pub block_threads: u32,
}

impl ScanOptions {
    /// 128 threads per block: tiles of 32 KiB, which every supported GPU holds without
    /// opting in to more shared memory (why 128: `warpsafe::scan::device::BLOCK_THREADS`).
    /// Float results with these options are the same bits on every device.
    pub fn scan() -> ScanOptions {
        ScanOptions { block_threads: kernel_scan::BLOCK_THREADS }
    }

    /// 128 threads per block, as [`ScanOptions::scan`] (why:
    /// `warpsafe::scan::select::BLOCK_THREADS`).
    pub fn select() -> ScanOptions {
        ScanOptions { block_threads: kernel_select::BLOCK_THREADS }
    }

    /// What a [`Scanner::new`] scanner uses for a call over `len` elements of `T` on
    /// `device`: large tiles (`warpsafe::scan::device::LARGE_BLOCK_THREADS` = 256 threads,
    /// 64 KiB) for inputs of at least `warpsafe::scan::device::large_tiles_from_bytes`
    /// (128 MiB of 8-byte or larger elements, 256 MiB of smaller ones) where a
    /// multiprocessor holds three such tiles (an sm_90 GPU, and the emulator, which
    /// models one); otherwise [`ScanOptions::scan`]. The tile, and with it the bits of a
    /// float sum, thus depends on the input's length and the GPU generation; pass
    /// [`ScanOptions::scan`] to [`Scanner::with_options`] for the same bits everywhere.
    pub fn scan_for<T: Pod>(device: &Device, len: usize) -> ScanOptions {
        let large = ScanOptions { block_threads: kernel_scan::LARGE_BLOCK_THREADS };
        let bytes = len.saturating_mul(size_of::<T>());
        if bytes >= kernel_scan::large_tiles_from_bytes::<T>()
            && holds_three(device, kernel_scan::shared_bytes::<T>(large.block_threads))
        {
            large
        } else {
            ScanOptions::scan()
        }
    }

    /// What a [`Selector::new`] selector uses for a call over `len` elements of `T` on
    /// `device`: large tiles (`warpsafe::scan::select::LARGE_BLOCK_THREADS` = 256 threads,
    /// 64 KiB) for inputs of at least 16 MiB of 4-byte or larger elements
    /// (`warpsafe::scan::select::large_tiles_from_bytes`) where a multiprocessor holds
    /// three such tiles (as [`ScanOptions::scan_for`]); otherwise [`ScanOptions::select`].
    /// Which elements are kept, and their order, do not depend on the tile.
    pub fn select_for<T: Pod>(device: &Device, len: usize) -> ScanOptions {
        let large = ScanOptions { block_threads: kernel_select::LARGE_BLOCK_THREADS };
        let bytes = len.saturating_mul(size_of::<T>());
        match kernel_select::large_tiles_from_bytes::<T>() {
            Some(from)
                if bytes >= from
                    && holds_three(device, kernel_select::shared_bytes::<T>(large.block_threads)) =>
            {
                large
            }
            _ => ScanOptions::select(),
        }
    }

    /// Refuses a block size the kernels cannot run with: not a multiple of 32 from 32 to
    /// 512, or a tile staging (`shared_bytes` with this block size) over `limit`, the
    /// shared memory the device gives a block.
    fn check(self, shared_bytes: impl Fn(u32) -> usize, limit: usize) -> Result<ScanOptions, Error> {
        let threads = self.block_threads;
        if !threads.is_multiple_of(32) || !(32..=512).contains(&threads) {
            return Err(Error::unsupported(format!(
                "{threads} threads per block for a scan or selection: a multiple of 32 from 32 to 512"
            )));
        }
        if shared_bytes(threads) > limit {
            let most = (32..=threads).step_by(32).filter(|&t| shared_bytes(t) <= limit).max();
            return Err(Error::unsupported(format!(
                "{threads} threads per block for a scan or selection of this element type: its tile takes {} bytes \
                 of shared memory, more than the {limit} this device gives a block; at most {} threads",
                shared_bytes(threads),
                most.unwrap_or(0)
            )));
        }
        Ok(self)
    }
}

/// Whether `device` gives a block `tile_bytes` of shared memory and a multiprocessor holds
/// three such blocks (the driver keeps 1 KiB of shared memory per resident block): the
/// condition for large tiles, under which the benchmarks measured them faster (three
/// blocks of 64 KiB stage as much as six of 32 KiB, with half the look-backs per byte).
fn holds_three(device: &Device, tile_bytes: usize) -> bool {
    tile_bytes <= device.shared_bytes_per_block() as usize
        && 3 * (tile_bytes + 1024) <= device.shared_bytes_per_multiprocessor() as usize
}

/// A scan kernel, as `warpsafe::scan_kernels!` declares it, and its program.
#[derive(Clone, Copy, Debug)]
pub struct ScanKernel {
    /// The kernel crate.
    pub program: Program,
    /// The kernel.
    pub scan: &'static warpsafe::kernel::UntypedKernel,
}

/// A selection kernel, as `warpsafe::select_kernels!` declares it, and its program.
#[derive(Clone, Copy, Debug)]
pub struct SelectKernel {
    /// The kernel crate.
    pub program: Program,
    /// The kernel.
    pub select: &'static warpsafe::kernel::UntypedKernel,
}

/// An operator a [`Scanner`] can apply to `T`: its kernel. Implemented for `Sum`, `Min`
/// and `Max` over `i32`, `u32`, `i64`, `u64`, `f32`, `f64`; for your own, declare the
/// kernel with `warpsafe::scan_kernels!` and implement this with it.
///
/// # Safety
/// [`Scan::kernel`] returns a kernel that `warpsafe::scan_kernels!` declared for the
/// element type `T`, and the program that holds it: the `Scanner` launches it with
/// buffers of `T` under that kernel's contract, so a kernel of another element type
/// would read and write outside them.
pub unsafe trait Scan<T: Pod>: Operator<T> + Default {
    /// The kernel.
    fn kernel() -> ScanKernel;
}

/// A predicate a [`Selector`] can apply to `T`: its kernel. Implemented for `LessThan`
/// and `GreaterThan` over the six numeric types; for your own, declare the kernel with
/// `warpsafe::select_kernels!` and implement this with it.
///
/// # Safety
/// [`Selection::kernel`] returns a kernel that `warpsafe::select_kernels!` declared for
/// the element type `T` and a predicate of `Self`'s layout, and the program that holds it:
/// the `Selector` launches it with buffers of `T` and the predicate's bytes under that
/// kernel's contract, so a kernel of other types would read and write outside them.
pub unsafe trait Selection<T: Pod>: Predicate<T> + Pod {
    /// The kernel.
    fn kernel() -> SelectKernel;
}

macro_rules! builtin_scans {
    ($($op:ident $t:ty => $name:ident;)*) => {$(
        // SAFETY: warpsafe-entry's `scan_kernels!` kernel of `$t`.
        unsafe impl Scan<$t> for $op {
            fn kernel() -> ScanKernel {
                ScanKernel { program: ptx::ENTRY, scan: &warpsafe_entry::scan::$name }
            }
        }
    )*};
}

builtin_scans! {
    Sum f32 => warpsafe_scan_sum_f32; Sum f64 => warpsafe_scan_sum_f64;
    Sum i32 => warpsafe_scan_sum_i32; Sum u32 => warpsafe_scan_sum_u32;
    Sum i64 => warpsafe_scan_sum_i64; Sum u64 => warpsafe_scan_sum_u64;
    Min f32 => warpsafe_scan_min_f32; Min f64 => warpsafe_scan_min_f64;
    Min i32 => warpsafe_scan_min_i32; Min u32 => warpsafe_scan_min_u32;
    Min i64 => warpsafe_scan_min_i64; Min u64 => warpsafe_scan_min_u64;
    Max f32 => warpsafe_scan_max_f32; Max f64 => warpsafe_scan_max_f64;
    Max i32 => warpsafe_scan_max_i32; Max u32 => warpsafe_scan_max_u32;
    Max i64 => warpsafe_scan_max_i64; Max u64 => warpsafe_scan_max_u64;
}

macro_rules! builtin_selections {
    ($($predicate:ident $t:ty => $name:ident;)*) => {$(
        // SAFETY: warpsafe-entry's `select_kernels!` kernel of `$t` and this predicate.
        unsafe impl Selection<$t> for $predicate<$t> {
            fn kernel() -> SelectKernel {
                SelectKernel { program: ptx::ENTRY, select: &warpsafe_entry::scan::$name }
            }
        }
    )*};
}

builtin_selections! {
    LessThan f32 => warpsafe_select_less_f32; LessThan f64 => warpsafe_select_less_f64;
    LessThan i32 => warpsafe_select_less_i32; LessThan u32 => warpsafe_select_less_u32;
    LessThan i64 => warpsafe_select_less_i64; LessThan u64 => warpsafe_select_less_u64;
    GreaterThan f32 => warpsafe_select_greater_f32; GreaterThan f64 => warpsafe_select_greater_f64;
    GreaterThan i32 => warpsafe_select_greater_i32; GreaterThan u32 => warpsafe_select_greater_u32;
    GreaterThan i64 => warpsafe_select_greater_i64; GreaterThan u64 => warpsafe_select_greater_u64;
}

/// The grid and tile count of one launch over `len` elements in tiles of `tile`.
fn launch_shape(
    operation: &'static str,
    len: usize,
    tile: u64,
    options: ScanOptions,
    shared_bytes: usize,
) -> Result<(LaunchConfig, u64), Error> {
    let tiles = (len as u64).div_ceil(tile).max(1);
    // One block per tile, and a ticket counter of 32 bits.
    if tiles > u32::MAX as u64 {
        return Err(Error::InputTooLarge {
            operation,
            len,
            max: usize::try_from(tile * (u32::MAX as u64)).unwrap_or(usize::MAX),
        });
    }
    let shared = u32::try_from(shared_bytes)
        .map_err(|_| Error::unsupported(format!("{operation}: scratch of {shared_bytes} shared bytes")))?;
    Ok((
        LaunchConfig {
            shared_mem_bytes: shared,
            ..LaunchConfig::linear(tiles as u32, options.block_threads)
        },
        tiles,
    ))
}

/// Refuses a buffer of another device: a kernel must never get an address it cannot reach.
fn check_device(device: &Device, operation: &str, on_device: bool) -> Result<(), Error> {
    if on_device {
        Ok(())
    } else {
        Err(Error::unsupported(format!(
            "{operation}: a buffer or stream of another device than {}",
            device.name()
        )))
    }
}

/// Scans device arrays of `T` with operator `O` (module docs).
pub struct Scanner<T: Pod, O: Scan<T>> {
    function: Function,
    /// The options of every call, or `None`: [`ScanOptions::scan_for`] picks them for each
    /// call's length.
    options: Option<ScanOptions>,
    scratch: LookBackScratch,
    /// The stream of the waiting calls.
    stream: Stream,
    operator: PhantomData<fn(T) -> O>,
}

impl<T: Pod, O: Scan<T>> std::fmt::Debug for Scanner<T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("type", &std::any::type_name::<T>())
            .field("operator", &std::any::type_name::<O>())
            .field("device", &self.scratch.device)
            .finish()
    }
}

impl<T: Pod, O: Scan<T>> Scanner<T, O> {
    /// Loads the kernel and allocates the scratch; each call takes the options
    /// [`ScanOptions::scan_for`] picks for its length.
    ///
    /// # Errors
    /// Loading the kernel ([`Error::ModuleLoad`], [`Error::NoPtxForDevice`], ...) or
    /// allocating ([`Error::Alloc`]); [`Error::Unsupported`] for an element type whose
    /// smallest default tile does not fit the shared memory the device gives a block.
    pub fn new(device: &Device) -> Result<Self, Error> {
        // `scan_for` picks large tiles only where they fit; the 32 KiB ones must fit too.
        ScanOptions::scan()
            .check(kernel_scan::shared_bytes::<T>, device.shared_bytes_per_block() as usize)?;
        Self::create(device, None)
    }

    /// As [`Scanner::new`], with `options`.
    ///
    /// # Errors
    /// As for [`Scanner::new`]; [`Error::Unsupported`] for a block size the kernel cannot
    /// run with.
    pub fn with_options(device: &Device, options: ScanOptions) -> Result<Self, Error> {
        let options =
            options.check(kernel_scan::shared_bytes::<T>, device.shared_bytes_per_block() as usize)?;
        Self::create(device, Some(options))
    }

    fn create(device: &Device, options: Option<ScanOptions>) -> Result<Self, Error> {
        let kernel = O::kernel();
        let function = device.load(&kernel.program)?.untyped_kernel(kernel.scan)?;
        Ok(Scanner {
            function,
            options,
            scratch: LookBackScratch::new(device, status_words::<T>)?,
            stream: device.stream()?,
            operator: PhantomData,
        })
    }

    /// The options of a call over `len` elements: those given to
    /// [`Scanner::with_options`], or [`ScanOptions::scan_for`]'s.
    pub fn options_for(&self, len: usize) -> ScanOptions {
        self.options.unwrap_or_else(|| ScanOptions::scan_for::<T>(&self.scratch.device, len))
    }

    /// Elements per tile (per block of the launch) of a call over `len` elements.
    pub fn tile_len(&self, len: usize) -> usize {
        kernel_scan::tile_elements::<T>(self.options_for(len).block_threads) as usize
    }

    /// `output[i] = input[0] ⊕ ... ⊕ input[i]`; waits for the device.
    ///
    /// # Errors
    /// See the module docs.
    pub fn inclusive(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<(), Error> {
        self.scan_and_wait(ScanKind::Inclusive, input, output)
    }

    /// `output[i] = input[0] ⊕ ... ⊕ input[i - 1]`, `output[0]` the identity; waits.
    ///
    /// # Errors
    /// See the module docs.
    pub fn exclusive(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<(), Error> {
        self.scan_and_wait(ScanKind::Exclusive, input, output)
    }

    /// The inclusive scan of `data`, written over it; waits.
    ///
    /// # Errors
    /// See the module docs.
    pub fn inclusive_in_place(&mut self, data: &mut DeviceBuffer<T>) -> Result<(), Error> {
        self.scan_and_wait(ScanKind::Inclusive, data, data)
    }

    /// The exclusive scan of `data`, written over it; waits.
    ///
    /// # Errors
    /// See the module docs.
    pub fn exclusive_in_place(&mut self, data: &mut DeviceBuffer<T>) -> Result<(), Error> {
        self.scan_and_wait(ScanKind::Exclusive, data, data)
    }

    fn scan_and_wait(
        &mut self,
        kind: ScanKind,
        input: &DeviceBuffer<T>,
        output: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        // SAFETY: both buffers are borrowed (the output mutably, or it is the input,
        // borrowed mutably by the caller) until the stream is synchronised below.
        unsafe { self.enqueue(None, kind, input, output)? };
        let waited = self.stream.synchronize();
        self.scratch.note_failure(&waited);
        waited
    }

    /// Enqueues the scan of `input` into `output` on `stream` and returns without waiting.
    /// `output` may be `input` (an in-place scan).
    ///
    /// # Safety
    /// - Both buffers stay alive, and nothing else accesses them, until `stream` has run
    ///   the launch.
    /// - No other launch of this scanner runs while this one does (its scratch serves one
    ///   launch at a time): none enqueued on another stream is still running, and none is
    ///   enqueued on another stream (by `scan` or `scan_on`) before `stream` has run this
    ///   one: one scanner per stream, or synchronise.
    ///
    /// # Errors
    /// See the module docs.
    pub unsafe fn scan_on(
        &mut self,
        stream: &Stream,
        kind: ScanKind,
        input: &DeviceBuffer<T>,
        output: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(Some(stream), kind, input, output) }
    }

    /// [`Scanner::scan_on`] on `stream`, or on this scanner's own stream.
    ///
    /// # Safety
    /// As for [`Scanner::scan_on`].
    unsafe fn enqueue(
        &mut self,
        stream: Option<&Stream>,
        kind: ScanKind,
        input: &DeviceBuffer<T>,
        output: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        let stream = stream.unwrap_or(&self.stream);
        let device = &self.scratch.device;
        check_device(device, "scan", input.is_on(device) && output.is_on(device) && stream.is_on(device))?;
        if output.len() != input.len() {
            return Err(Error::MismatchedLengths {
                operation: "scan",
                what: "the output",
                expected: input.len(),
                actual: output.len(),
            });
        }
        if input.is_empty() {
            return Ok(());
        }
        let options = self.options_for(input.len());
        let (config, tiles) = launch_shape(
            "scan",
            input.len(),
            kernel_scan::tile_elements::<T>(options.block_threads),
            options,
            kernel_scan::shared_bytes::<T>(options.block_threads),
        )?;
        let slots = self.scratch.prepare(tiles, stream, &self.stream)?;
        let (mut input, mut output, mut len) =
            (input.device_address(), output.device_address(), input.len() as u64);
        let (mut status, mut counter, mut epoch) = (slots.status, slots.counter, slots.epoch);
        let mut exclusive = (kind == ScanKind::Exclusive) as u32;
        let args = kernel_args![input, output, len, status, counter, epoch, exclusive];
        // SAFETY: scan(input, output, len, status, counter, epoch, exclusive): one block
        // per tile, of the options' threads (a multiple of 32 up to 512, checked by
        // `ScanOptions::check`, or 128 or 256 from `scan_for`) and the shared bytes they
        // need (a launch over the device's limit is refused, not run); both buffers hold `len`
        // elements and are the same or distinct allocations (the caller keeps them alive
        // and untouched); the status words cover `tiles` tiles, this scratch is used by no
        // other launch (caller), the epoch is new and the counter 0 (reset by the last
        // ticket, or re-zeroed after a failure).
        let launched = unsafe { self.scratch.device.launch_raw_on(stream, &self.function, config, &args) };
        self.scratch.note_failure(&launched);
        launched
    }
}

/// Selects or partitions device arrays of `T` by predicate `P` or by flags (module docs).
pub struct Selector<T: Pod, P: Selection<T>> {
    function: Function,
    /// The options of every call, or `None`: [`ScanOptions::select_for`] picks them for
    /// each call's length.
    options: Option<ScanOptions>,
    scratch: LookBackScratch,
    /// The stream of the waiting calls.
    stream: Stream,
    predicate: P,
    /// Where a waiting call's count lands.
    count: DeviceBuffer<u64>,
    element: PhantomData<fn(T)>,
}

impl<T: Pod, P: Selection<T>> std::fmt::Debug for Selector<T, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selector")
            .field("type", &std::any::type_name::<T>())
            .field("predicate", &std::any::type_name::<P>())
            .field("device", &self.scratch.device)
            .finish()
    }
}

impl<T: Pod, P: Selection<T>> Selector<T, P> {
    /// Loads the kernel and allocates the scratch; each call takes the options
    /// [`ScanOptions::select_for`] picks for its length.
    ///
    /// # Errors
    /// As for [`Scanner::new`].
    pub fn new(device: &Device, predicate: P) -> Result<Self, Error> {
        // As for `Scanner::new`.
        ScanOptions::select()
            .check(kernel_select::shared_bytes::<T>, device.shared_bytes_per_block() as usize)?;
        Self::create(device, predicate, None)
    }

    /// As [`Selector::new`], with `options`.
    ///
    /// # Errors
    /// As for [`Scanner::with_options`].
    pub fn with_options(device: &Device, predicate: P, options: ScanOptions) -> Result<Self, Error> {
        let options =
            options.check(kernel_select::shared_bytes::<T>, device.shared_bytes_per_block() as usize)?;
        Self::create(device, predicate, Some(options))
    }

    fn create(device: &Device, predicate: P, options: Option<ScanOptions>) -> Result<Self, Error> {
        let kernel = P::kernel();
        let function = device.load(&kernel.program)?.untyped_kernel(kernel.select)?;
        Ok(Selector {
            function,
            options,
            scratch: LookBackScratch::new(device, status_words::<u64>)?,
            stream: device.stream()?,
            predicate,
            count: device.alloc_zeroed(1)?,
            element: PhantomData,
        })
    }

    /// The options of a call over `len` elements: those given to
    /// [`Selector::with_options`], or [`ScanOptions::select_for`]'s.
    pub fn options_for(&self, len: usize) -> ScanOptions {
        self.options.unwrap_or_else(|| ScanOptions::select_for::<T>(&self.scratch.device, len))
    }

    /// Elements per tile (per block of the launch) of a call over `len` elements.
    pub fn tile_len(&self, len: usize) -> usize {
        kernel_select::tile_elements::<T>(self.options_for(len).block_threads) as usize
    }

    /// The predicate of later calls.
    pub fn predicate(&self) -> P {
        self.predicate
    }

    /// Changes the predicate of later calls.
    pub fn set_predicate(&mut self, predicate: P) {
        self.predicate = predicate;
    }

    /// Writes the elements the predicate keeps, in order, to the front of `output` and
    /// returns their count; waits.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] when more were kept than `output` holds (the first
    /// `output.len()` were written); see the module docs.
    pub fn select(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<u64, Error> {
        self.select_and_wait(SelectForm::Select, input, None, output)
    }

    /// As [`Selector::select`], keeping element `i` when `flags[i] != 0`.
    ///
    /// # Errors
    /// As for [`Selector::select`]; [`Error::MismatchedLengths`] when `flags` is not as
    /// long as `input`.
    pub fn select_flagged(
        &mut self,
        input: &DeviceBuffer<T>,
        flags: &DeviceBuffer<u8>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<u64, Error> {
        self.select_and_wait(SelectForm::Select, input, Some(flags), output)
    }

    /// Writes the kept elements in order to the front of `output` and the others to its
    /// back in reverse order; returns the count kept; waits.
    ///
    /// # Errors
    /// [`Error::MismatchedLengths`] when `output` is not as long as `input`.
    pub fn partition(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<u64, Error> {
        self.select_and_wait(SelectForm::Partition, input, None, output)
    }

    /// As [`Selector::partition`], keeping element `i` when `flags[i] != 0`.
    ///
    /// # Errors
    /// As for [`Selector::partition`] and [`Selector::select_flagged`].
    pub fn partition_flagged(
        &mut self,
        input: &DeviceBuffer<T>,
        flags: &DeviceBuffer<u8>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<u64, Error> {
        self.select_and_wait(SelectForm::Partition, input, Some(flags), output)
    }

    fn select_and_wait(
        &mut self,
        form: SelectForm,
        input: &DeviceBuffer<T>,
        flags: Option<&DeviceBuffer<u8>>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<u64, Error> {
        // SAFETY: the buffers are borrowed until the stream is synchronised below; the
        // count buffer is this selector's.
        unsafe { self.enqueue(None, form, input, flags, output, None)? };
        let waited = self.stream.synchronize();
        self.scratch.note_failure(&waited);
        waited?;
        let selected = self.count.download()?[0];
        if selected > output.len() as u64 {
            return Err(Error::OutputTooSmall { operation: "select", selected, len: output.len() });
        }
        Ok(selected)
    }

    /// Enqueues a selection or partition of `input` (by `flags` when given, else by the
    /// predicate) into `output` on `stream`, its count into `count[0]`, without waiting.
    /// A selection whose count exceeds `output.len()` writes the first `output.len()`.
    ///
    /// # Safety
    /// - The buffers stay alive, and nothing else accesses `output` and `count` (or writes
    ///   `input` and `flags`), until `stream` has run the launch.
    /// - As for [`Scanner::scan_on`]: one launch of this selector at a time.
    ///
    /// # Errors
    /// [`Error::MismatchedLengths`] (flags, or a partition's output), a `count` buffer
    /// that is empty ([`Error::Unsupported`]); see the module docs.
    pub unsafe fn select_on(
        &mut self,
        stream: &Stream,
        form: SelectForm,
        input: &DeviceBuffer<T>,
        flags: Option<&DeviceBuffer<u8>>,
        output: &DeviceBuffer<T>,
        count: &DeviceBuffer<u64>,
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(Some(stream), form, input, flags, output, Some(count)) }
    }

    /// [`Selector::select_on`] on `stream` (or this selector's own) into `count` (or this
    /// selector's own count buffer).
    ///
    /// # Safety
    /// As for [`Selector::select_on`].
    unsafe fn enqueue(
        &mut self,
        stream: Option<&Stream>,
        form: SelectForm,
        input: &DeviceBuffer<T>,
        flags: Option<&DeviceBuffer<u8>>,
        output: &DeviceBuffer<T>,
        count: Option<&DeviceBuffer<u64>>,
    ) -> Result<(), Error> {
        let stream = stream.unwrap_or(&self.stream);
        let count = count.unwrap_or(&self.count);
        let operation = match form {
            SelectForm::Select => "select",
            SelectForm::Partition => "partition",
        };
        let device = &self.scratch.device;
        let flags_on = flags.is_none_or(|f| f.is_on(device));
        check_device(
            device,
            operation,
            input.is_on(device)
                && output.is_on(device)
                && count.is_on(device)
                && stream.is_on(device)
                && flags_on,
        )?;
        if count.is_empty() {
            return Err(Error::unsupported(format!("{operation}: an empty count buffer")));
        }
        if let Some(flags) = flags {
            if flags.len() != input.len() {
                return Err(Error::MismatchedLengths {
                    operation,
                    what: "the flags buffer",
                    expected: input.len(),
                    actual: flags.len(),
                });
            }
        }
        if form == SelectForm::Partition && output.len() != input.len() {
            return Err(Error::MismatchedLengths {
                operation,
                what: "the output",
                expected: input.len(),
                actual: output.len(),
            });
        }
        // An empty input still gets one block, which writes the count 0.
        let options = self.options_for(input.len());
        let (config, tiles) = launch_shape(
            operation,
            input.len(),
            kernel_select::tile_elements::<T>(options.block_threads),
            options,
            kernel_select::shared_bytes::<T>(options.block_threads),
        )?;
        let slots = self.scratch.prepare(tiles, stream, &self.stream)?;
        let mut form_bits = match form {
            SelectForm::Select => 0,
            SelectForm::Partition => kernel_select::PARTITION,
        };
        // A flagged launch without flags never happens; the unflagged one gets the input's
        // (never read) address, not a null one.
        let mut flags_address = match flags {
            Some(flags) => {
                form_bits |= kernel_select::FLAGGED;
                flags.device_address()
            }
            None => input.device_address(),
        };
        let (mut input_address, mut len) = (input.device_address(), input.len() as u64);
        let (mut output_address, mut output_len) = (output.device_address(), output.len() as u64);
        let mut selected = count.device_address();
        let (mut status, mut counter, mut epoch) = (slots.status, slots.counter, slots.epoch);
        let mut predicate = self.predicate;
        let args = kernel_args![
            input_address,
            flags_address,
            len,
            output_address,
            output_len,
            selected,
            status,
            counter,
            epoch,
            form_bits,
            predicate
        ];
        // SAFETY: select(input, flags, len, output, output_len, selected, status, counter,
        // epoch, form, predicate): one block per tile; `input` (and `flags` when flagged)
        // hold `len` elements, `output` `output_len`, `count` one, all alive and untouched
        // until the stream has run the launch (caller); the output is a buffer of its own
        // (`&mut` or the caller's contract); status words, counter and epoch as for the scan.
        let launched = unsafe { self.scratch.device.launch_raw_on(stream, &self.function, config, &args) };
        self.scratch.note_failure(&launched);
        launched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options' check against a device's limit per block: a tile over it is refused
    /// with the largest block size that fits, whatever the limit (48 KiB without opting
    /// in; 64 KiB on sm_75; 227 KiB on sm_90).
    #[test]
    fn a_tile_over_the_devices_limit_is_refused_with_the_largest_that_fits() {
        let scan = kernel_scan::shared_bytes::<u32>;
        for (limit, most) in [(48 * 1024, 160), (64 * 1024, 224), (227 * 1024, 512)] {
            let fits = ScanOptions { block_threads: most }.check(scan, limit);
            assert_eq!(fits.unwrap().block_threads, most, "limit {limit}");
            if most < 512 {
                let err = ScanOptions { block_threads: most + 32 }.check(scan, limit).unwrap_err();
                let message = err.to_string();
                assert!(
                    message.contains(&format!("more than the {limit} this device gives a block")),
                    "{message}"
                );
                assert!(message.contains(&format!("at most {most} threads")), "{message}");
            }
        }
        // Selections of `u8` hold 64 elements a run: 32 KiB at 512 threads.
        let select = kernel_select::shared_bytes::<u8>;
        assert!(ScanOptions { block_threads: 512 }.check(select, 48 * 1024).is_ok());
        let err = ScanOptions { block_threads: 48 }.check(scan, 227 * 1024).unwrap_err();
        assert!(err.to_string().contains("a multiple of 32 from 32 to 512"), "{err}");
    }
}
