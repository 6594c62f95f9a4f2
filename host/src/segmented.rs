//! Segmented reductions on a [`Device`]: [`SegmentedReducer`], one result per segment of
//! an array, one kernel launch per call.
//!
//! ```
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! use warpsafe::op::{Max, Sum};
//! use warpsafe_host::segmented::SegmentedReducer;
//! use warpsafe_host::Device;
//!
//! let device = Device::emulator();
//! let data = device.upload(&[3i32, 1, 4, 1, 5, 9, 2, 6, 5])?;
//! let mut sums = device.alloc_zeroed::<i32>(3)?;
//! let mut sum = SegmentedReducer::<i32, Sum>::new(&device)?;
//! // Fixed length: [3, 1, 4, 1] [5, 9, 2, 6] [5]
//! sum.reduce_fixed(&data, 4, &mut sums)?;
//! assert_eq!(sums.download()?, [9, 22, 5]);
//! // Offsets (CSR): [3, 1] [] [4, 1, 5, 9, 2, 6, 5]
//! let offsets = device.upload(&[0u64, 2, 2, 9])?;
//! sum.reduce_offsets(&data, &offsets, &mut sums)?;
//! assert_eq!(sums.download()?, [4, 0, 32]);
//! let mut max = SegmentedReducer::<i32, Max>::new(&device)?;
//! max.reduce_offsets(&data, &offsets, &mut sums)?;
//! assert_eq!(sums.download()?, [3, i32::MIN, 9]); // an empty segment gets the identity
//! # Ok(())
//! # }
//! ```
//!
//! # API
//! ```text
//! pub enum SegmentStrategy { Auto, Thread, Tile4, Tile16, Warp, Block }
//! pub struct SegmentedOptions { pub strategy: SegmentStrategy, pub max_blocks: Option<u32> }
//! pub struct SegmentedKernels { pub program: Program, pub thread: &'static Kernel, pub tile4: &'static Kernel,
//!                               pub tile16: &'static Kernel, pub warp: &'static Kernel, pub block: &'static Kernel }
//! pub trait SegmentedReduction<T: Pod>: Operator<T> + Default { fn kernels() -> SegmentedKernels; }
//! impl SegmentStrategy {
//!     pub fn for_average(len: u64, segments: u64) -> SegmentStrategy;
//!     pub fn for_fixed<T, O: Operator<T>>(len: u64, segment_len: u64) -> SegmentStrategy;
//! }
//! impl<T: Pod, O: SegmentedReduction<T>> SegmentedReducer<T, O> {
//!     pub fn new(device: &Device) -> Result<Self, Error>;
//!     pub fn with_options(device: &Device, options: SegmentedOptions) -> Result<Self, Error>;
//!     pub fn options(&self) -> SegmentedOptions;
//!     pub fn set_strategy(&mut self, strategy: SegmentStrategy);
//!     pub fn strategy_for(&self, len: u64, segments: u64) -> SegmentStrategy;   // offsets; never Auto
//!     pub fn strategy_for_fixed(&self, len: u64, segment_len: u64) -> SegmentStrategy; // never Auto
//!     pub fn reduce_fixed(&mut self, input: &DeviceBuffer<T>, segment_len: u64, output: &mut DeviceBuffer<T>) -> Result<(), Error>;
//!     pub fn reduce_offsets(&mut self, input: &DeviceBuffer<T>, offsets: &DeviceBuffer<u64>, output: &mut DeviceBuffer<T>) -> Result<(), Error>;
//!     pub unsafe fn reduce_fixed_on(&mut self, stream: &Stream, input: &DeviceBuffer<T>, segment_len: u64, output: &DeviceBuffer<T>) -> Result<(), Error>;
//!     pub unsafe fn reduce_offsets_on(&mut self, stream: &Stream, input: &DeviceBuffer<T>, offsets: &DeviceBuffer<u64>, output: &DeviceBuffer<T>) -> Result<(), Error>;
//! }
//! ```
//!
//! # Segments and results
//! - Fixed length `L`: segment `s` is `input[s * L .. min((s + 1) * L, len)]`; there are
//!   `ceil(len / L)` segments, the last one shorter when `L` does not divide the length.
//! - Offsets (CSR, as CUB's `DeviceSegmentedReduce`): `offsets` holds `segments + 1`
//!   `u64`s, segment `s` is `input[offsets[s] .. offsets[s + 1]]`; offsets need not start
//!   at 0, and segments may be empty.
//! - `output[s]` is `input[b] ⊕ ... ⊕ input[e - 1]` for segment `s = b..e`, the operator's
//!   identity for an empty segment (`0` for `Sum`, `+inf` or `MAX` for `Min`, ...).
//!   Operators need not commute. Elements of `output` past the segment count are left
//!   as they were.
//!
//! # Strategies
//! The kernels of `warpsafe::reduce::segmented` (whose docs give the order of
//! combination). For the fixed form with a commutative operator and segments of 4, 8,
//! 16, 32 or 64 bytes (`f32` of length 1, 2, 4, 8, 16; `f64` of length 1, 2, 4, 8:
//! `warpsafe::reduce::segmented::reads_fixed_rows`), [`SegmentStrategy::Auto`] picks
//! [`SegmentStrategy::Thread`], whose kernel reads such segments in warp rows of 16-byte
//! vectors ([`SegmentStrategy::for_fixed`]). Otherwise it picks by the average segment
//! length `len / segments`, computed on the host (no look at the offsets):
//!
//! | average length | strategy | who reduces a segment |
//! | --- | --- | --- |
//! | up to 4 | [`SegmentStrategy::Thread`] | one thread (many segments per thread) |
//! | up to 48 | [`SegmentStrategy::Tile4`] | 4 lanes of a warp |
//! | up to 256 | [`SegmentStrategy::Tile16`] | 16 lanes |
//! | up to 2048 | [`SegmentStrategy::Warp`] | a warp |
//! | longer | [`SegmentStrategy::Block`] | a block of 256 threads |
//!
//! The grid is at most one wave of resident blocks (multiprocessors times the kernel's
//! occupancy, capped by [`SegmentedOptions::max_blocks`]); workers loop over segments.
//! For a commutative operator over a type whose size divides 16 (every built-in pair),
//! every strategy reads the 16-byte aligned vectors of each segment with one load each,
//! 4 loads in flight per thread, and only the few elements before the first and after
//! the last vector one by one. The fixed form's warp rows: each warp reads 2 KiB rows of
//! the input, each lane 4 vectors of 16 bytes; a lane folds the 1, 2 or 4 segments
//! inside each vector and writes their results together (one 16-byte store for `f32` or
//! a 64-bit type of length 1), or 2 or 4 lanes combine a segment of 32 or 64 bytes with
//! a shuffle; the segments after the last whole row are reduced one per thread as usual.
//!
//! Not done yet: a split of single very long segments across blocks, and an
//! element-balanced schedule for offsets whose lengths vary wildly (a power law with a
//! few huge segments is reduced by the strategy its average length picks, so one huge
//! segment is read by one block).
//!
//! # Determinism
//! A segment's result depends only on its elements, its start address modulo 16 (where
//! the 16-byte vectors begin), for the fixed form whether it lies in a whole warp row of
//! 2 KiB (fixed by the length), the strategy and the operator's
//! [`Operator::COMMUTATIVE`] (the grid size does not matter), so for the same input and
//! strategy float results are the same bits on every run, on the GPU and the emulator.
//!
//! # Errors
//! [`Error::InvalidSegments`] with a [`SegmentsProblem`]:
//! - [`SegmentsProblem::ZeroSegmentLength`], [`SegmentsProblem::EmptyOffsets`],
//!   [`SegmentsProblem::OutputTooShort`]: checked on the host before any launch;
//! - [`SegmentsProblem::NotMonotonic`], [`SegmentsProblem::PastInput`]: checked on the
//!   device as each segment's offsets are read (no extra pass over the offsets and no copy
//!   of them to the host): a bad segment is reduced as empty, reads nothing, and its index
//!   lands in an 8-byte error word by an atomic minimum; the waiting calls reset the word
//!   before the launch and read it back after it (one 8-byte copy each way), and report the
//!   lowest bad segment. The other segments' results are written as usual.
//!
//! [`Error::Unsupported`]: a buffer or stream of another device. An operator for another
//! element type does not compile.
//!
//! The `_on` forms only enqueue: they cannot report bad offsets (the kernel still reads
//! nothing out of range and writes the identity for such segments).

use std::marker::PhantomData;

use bytemuck::Pod;
use warpsafe::op::{Max, Min, Operator, Sum};
use warpsafe::reduce::segmented::{self as kernel, BadSegment, BLOCK_THREADS, NO_ERROR};

use crate::{
    kernel_args, ptx, Device, DeviceBuffer, Error, Function, LaunchConfig, Program, SegmentsProblem, Stream,
};

/// Who reduces one segment (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SegmentStrategy {
    /// Chosen from the segment length ([`SegmentStrategy::for_fixed`],
    /// [`SegmentStrategy::for_average`]).
    #[default]
    Auto,
    /// One thread per segment.
    Thread,
    /// An aligned tile of 4 lanes per segment.
    Tile4,
    /// An aligned tile of 16 lanes per segment.
    Tile16,
    /// A warp per segment.
    Warp,
    /// A block of [`BLOCK_THREADS`] threads per segment.
    Block,
}

impl SegmentStrategy {
    /// Every strategy but [`SegmentStrategy::Auto`], in order of growing segment length.
    pub const ALL: [SegmentStrategy; 5] = [
        SegmentStrategy::Thread,
        SegmentStrategy::Tile4,
        SegmentStrategy::Tile16,
        SegmentStrategy::Warp,
        SegmentStrategy::Block,
    ];

    /// The strategy [`SegmentStrategy::Auto`] picks for `segments` segments over `len`
    /// elements (module docs).
    pub fn for_average(len: u64, segments: u64) -> SegmentStrategy {
        match len / segments.max(1) {
            0..=4 => SegmentStrategy::Thread,
            5..=48 => SegmentStrategy::Tile4,
            49..=256 => SegmentStrategy::Tile16,
            257..=2048 => SegmentStrategy::Warp,
            _ => SegmentStrategy::Block,
        }
    }

    /// The strategy [`SegmentStrategy::Auto`] picks for the fixed form with segments of
    /// `segment_len` elements of `T` over `len` elements, with operator `O` (module docs):
    /// the thread strategy when its kernel reads them in warp rows of 16-byte vectors
    /// (`O` commutes and a segment has 4, 8, 16, 32 or 64 bytes:
    /// `warpsafe::reduce::segmented::reads_fixed_rows`), else
    /// [`SegmentStrategy::for_average`].
    pub fn for_fixed<T, O: Operator<T>>(len: u64, segment_len: u64) -> SegmentStrategy {
        if O::COMMUTATIVE && kernel::reads_fixed_rows::<T>(segment_len) {
            SegmentStrategy::Thread
        } else {
            SegmentStrategy::for_average(len, len.div_ceil(segment_len.max(1)))
        }
    }

    /// Threads that work on one segment; `None` for `Auto`.
    fn lanes(self) -> Option<u64> {
        match self {
            SegmentStrategy::Auto => None,
            SegmentStrategy::Thread => Some(1),
            SegmentStrategy::Tile4 => Some(4),
            SegmentStrategy::Tile16 => Some(16),
            SegmentStrategy::Warp => Some(32),
            SegmentStrategy::Block => Some(BLOCK_THREADS as u64),
        }
    }

    /// Index into [`SegmentStrategy::ALL`].
    fn index(self) -> usize {
        SegmentStrategy::ALL.iter().position(|&s| s == self).unwrap_or(0)
    }
}

/// A [`SegmentedReducer`]'s settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegmentedOptions {
    /// The strategy ([`SegmentStrategy::Auto`] by default).
    pub strategy: SegmentStrategy,
    /// A cap on the number of blocks below one wave of resident blocks (`None`: the
    /// wave), for tests and experiments.
    pub max_blocks: Option<u32>,
}

/// The kernels of one element type and operator, one per strategy, as
/// `warpsafe::segmented_reduce_kernels!` declares them, and their program.
#[derive(Clone, Copy, Debug)]
pub struct SegmentedKernels {
    /// The kernel crate.
    pub program: Program,
    /// A thread per segment.
    pub thread: &'static warpsafe::kernel::UntypedKernel,
    /// 4 lanes per segment.
    pub tile4: &'static warpsafe::kernel::UntypedKernel,
    /// 16 lanes per segment.
    pub tile16: &'static warpsafe::kernel::UntypedKernel,
    /// A warp per segment.
    pub warp: &'static warpsafe::kernel::UntypedKernel,
    /// A block per segment.
    pub block: &'static warpsafe::kernel::UntypedKernel,
}

/// An operator a [`SegmentedReducer`] can apply to `T`: its kernels. Implemented for
/// `Sum`, `Min` and `Max` over `i32`, `u32`, `i64`, `u64`, `f32`, `f64`; for your own,
/// declare the kernels with `warpsafe::segmented_reduce_kernels!` and implement this with
/// them.
pub trait SegmentedReduction<T: Pod>: Operator<T> + Default {
    /// The kernels.
    fn kernels() -> SegmentedKernels;
}

macro_rules! builtin {
    ($($op:ident $t:ty => $thread:ident, $tile4:ident, $tile16:ident, $warp:ident, $block:ident;)*) => {$(
        impl SegmentedReduction<$t> for $op {
            fn kernels() -> SegmentedKernels {
                SegmentedKernels {
                    program: ptx::ENTRY,
                    thread: &warpsafe_entry::segmented::$thread,
                    tile4: &warpsafe_entry::segmented::$tile4,
                    tile16: &warpsafe_entry::segmented::$tile16,
                    warp: &warpsafe_entry::segmented::$warp,
                    block: &warpsafe_entry::segmented::$block,
                }
            }
        }
    )*};
}

builtin! {
    Sum f32 => warpsafe_segreduce_sum_f32_thread, warpsafe_segreduce_sum_f32_tile4, warpsafe_segreduce_sum_f32_tile16, warpsafe_segreduce_sum_f32_warp, warpsafe_segreduce_sum_f32_block;
    Sum f64 => warpsafe_segreduce_sum_f64_thread, warpsafe_segreduce_sum_f64_tile4, warpsafe_segreduce_sum_f64_tile16, warpsafe_segreduce_sum_f64_warp, warpsafe_segreduce_sum_f64_block;
    Sum i32 => warpsafe_segreduce_sum_i32_thread, warpsafe_segreduce_sum_i32_tile4, warpsafe_segreduce_sum_i32_tile16, warpsafe_segreduce_sum_i32_warp, warpsafe_segreduce_sum_i32_block;
    Sum u32 => warpsafe_segreduce_sum_u32_thread, warpsafe_segreduce_sum_u32_tile4, warpsafe_segreduce_sum_u32_tile16, warpsafe_segreduce_sum_u32_warp, warpsafe_segreduce_sum_u32_block;
    Sum i64 => warpsafe_segreduce_sum_i64_thread, warpsafe_segreduce_sum_i64_tile4, warpsafe_segreduce_sum_i64_tile16, warpsafe_segreduce_sum_i64_warp, warpsafe_segreduce_sum_i64_block;
    Sum u64 => warpsafe_segreduce_sum_u64_thread, warpsafe_segreduce_sum_u64_tile4, warpsafe_segreduce_sum_u64_tile16, warpsafe_segreduce_sum_u64_warp, warpsafe_segreduce_sum_u64_block;
    Min f32 => warpsafe_segreduce_min_f32_thread, warpsafe_segreduce_min_f32_tile4, warpsafe_segreduce_min_f32_tile16, warpsafe_segreduce_min_f32_warp, warpsafe_segreduce_min_f32_block;
    Min f64 => warpsafe_segreduce_min_f64_thread, warpsafe_segreduce_min_f64_tile4, warpsafe_segreduce_min_f64_tile16, warpsafe_segreduce_min_f64_warp, warpsafe_segreduce_min_f64_block;
    Min i32 => warpsafe_segreduce_min_i32_thread, warpsafe_segreduce_min_i32_tile4, warpsafe_segreduce_min_i32_tile16, warpsafe_segreduce_min_i32_warp, warpsafe_segreduce_min_i32_block;
    Min u32 => warpsafe_segreduce_min_u32_thread, warpsafe_segreduce_min_u32_tile4, warpsafe_segreduce_min_u32_tile16, warpsafe_segreduce_min_u32_warp, warpsafe_segreduce_min_u32_block;
    Min i64 => warpsafe_segreduce_min_i64_thread, warpsafe_segreduce_min_i64_tile4, warpsafe_segreduce_min_i64_tile16, warpsafe_segreduce_min_i64_warp, warpsafe_segreduce_min_i64_block;
    Min u64 => warpsafe_segreduce_min_u64_thread, warpsafe_segreduce_min_u64_tile4, warpsafe_segreduce_min_u64_tile16, warpsafe_segreduce_min_u64_warp, warpsafe_segreduce_min_u64_block;
    Max f32 => warpsafe_segreduce_max_f32_thread, warpsafe_segreduce_max_f32_tile4, warpsafe_segreduce_max_f32_tile16, warpsafe_segreduce_max_f32_warp, warpsafe_segreduce_max_f32_block;
    Max f64 => warpsafe_segreduce_max_f64_thread, warpsafe_segreduce_max_f64_tile4, warpsafe_segreduce_max_f64_tile16, warpsafe_segreduce_max_f64_warp, warpsafe_segreduce_max_f64_block;
    Max i32 => warpsafe_segreduce_max_i32_thread, warpsafe_segreduce_max_i32_tile4, warpsafe_segreduce_max_i32_tile16, warpsafe_segreduce_max_i32_warp, warpsafe_segreduce_max_i32_block;
    Max u32 => warpsafe_segreduce_max_u32_thread, warpsafe_segreduce_max_u32_tile4, warpsafe_segreduce_max_u32_tile16, warpsafe_segreduce_max_u32_warp, warpsafe_segreduce_max_u32_block;
    Max i64 => warpsafe_segreduce_max_i64_thread, warpsafe_segreduce_max_i64_tile4, warpsafe_segreduce_max_i64_tile16, warpsafe_segreduce_max_i64_warp, warpsafe_segreduce_max_i64_block;
    Max u64 => warpsafe_segreduce_max_u64_thread, warpsafe_segreduce_max_u64_tile4, warpsafe_segreduce_max_u64_tile16, warpsafe_segreduce_max_u64_warp, warpsafe_segreduce_max_u64_block;
}

/// How one call gives its segments.
#[derive(Clone, Copy)]
enum Form<'a> {
    Fixed(u64),
    Offsets(&'a DeviceBuffer<u64>),
}

/// Reduces segments of device arrays of `T` with operator `O` (module docs).
pub struct SegmentedReducer<T: Pod, O: SegmentedReduction<T>> {
    device: Device,
    /// One function per strategy, in the order of [`SegmentStrategy::ALL`].
    functions: Vec<Function>,
    /// One wave of resident blocks per strategy, in the same order.
    resident: Vec<u32>,
    options: SegmentedOptions,
    /// The device's error word (module docs).
    error: DeviceBuffer<u64>,
    /// The stream of the waiting calls.
    stream: Stream,
    operator: PhantomData<fn(T) -> O>,
}

impl<T: Pod, O: SegmentedReduction<T>> std::fmt::Debug for SegmentedReducer<T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentedReducer")
            .field("type", &std::any::type_name::<T>())
            .field("operator", &std::any::type_name::<O>())
            .field("device", &self.device)
            .field("options", &self.options)
            .finish()
    }
}

impl<T: Pod, O: SegmentedReduction<T>> SegmentedReducer<T, O> {
    /// Loads the kernels and allocates the error word, with the default options.
    ///
    /// # Errors
    /// Loading the kernels ([`Error::ModuleLoad`], [`Error::NoPtxForDevice`], ...) or
    /// allocating ([`Error::Alloc`]).
    pub fn new(device: &Device) -> Result<Self, Error> {
        Self::with_options(device, SegmentedOptions::default())
    }

    /// As [`SegmentedReducer::new`], with `options`.
    ///
    /// # Errors
    /// As for [`SegmentedReducer::new`]; [`Error::Unsupported`] for `max_blocks: Some(0)`.
    pub fn with_options(device: &Device, options: SegmentedOptions) -> Result<Self, Error> {
        if options.max_blocks == Some(0) {
            return Err(Error::unsupported("a segmented reduction with at most 0 blocks"));
        }
        let kernels = O::kernels();
        let module = device.load(&kernels.program)?;
        let mut functions = Vec::new();
        let mut resident = Vec::new();
        for (strategy, untyped) in SegmentStrategy::ALL.into_iter().zip([
            kernels.thread,
            kernels.tile4,
            kernels.tile16,
            kernels.warp,
            kernels.block,
        ]) {
            let function = module.untyped_kernel(untyped)?;
            let per_sm = device.max_active_blocks_per_multiprocessor(
                &function,
                BLOCK_THREADS,
                Self::shared_bytes(strategy),
            )?;
            resident.push((per_sm.max(1)).saturating_mul(device.multiprocessor_count().max(1)));
            functions.push(function);
        }
        Ok(SegmentedReducer {
            device: device.clone(),
            functions,
            resident,
            options,
            error: device.upload(&[NO_ERROR])?,
            stream: device.stream()?,
            operator: PhantomData,
        })
    }

    /// The options.
    pub fn options(&self) -> SegmentedOptions {
        self.options
    }

    /// Sets the strategy of the next calls.
    pub fn set_strategy(&mut self, strategy: SegmentStrategy) {
        self.options.strategy = strategy;
    }

    /// The strategy an offsets call over `len` elements in `segments` segments uses: the
    /// options' one, or [`SegmentStrategy::for_average`] for `Auto`.
    pub fn strategy_for(&self, len: u64, segments: u64) -> SegmentStrategy {
        match self.options.strategy {
            SegmentStrategy::Auto => SegmentStrategy::for_average(len, segments),
            chosen => chosen,
        }
    }

    /// The strategy a fixed-length call over `len` elements with segments of
    /// `segment_len` uses: the options' one, or [`SegmentStrategy::for_fixed`] for `Auto`.
    pub fn strategy_for_fixed(&self, len: u64, segment_len: u64) -> SegmentStrategy {
        match self.options.strategy {
            SegmentStrategy::Auto => SegmentStrategy::for_fixed::<T, O>(len, segment_len),
            chosen => chosen,
        }
    }

    /// Dynamic shared memory of a strategy's launch: only the block strategy uses any.
    fn shared_bytes(strategy: SegmentStrategy) -> u32 {
        if strategy == SegmentStrategy::Block {
            kernel::shared_bytes::<T>() as u32
        } else {
            0
        }
    }

    /// `output[s]` = the reduction of `input[s * segment_len .. min((s + 1) * segment_len,
    /// len)]` for the `ceil(len / segment_len)` segments; waits for the device.
    ///
    /// # Errors
    /// See the module docs.
    pub fn reduce_fixed(
        &mut self,
        input: &DeviceBuffer<T>,
        segment_len: u64,
        output: &mut DeviceBuffer<T>,
    ) -> Result<(), Error> {
        // SAFETY: both buffers are borrowed (the output mutably) until the stream is
        // synchronised below.
        unsafe { self.enqueue(None, input, Form::Fixed(segment_len), output)? };
        self.stream.synchronize()
    }

    /// `output[s]` = the reduction of `input[offsets[s] .. offsets[s + 1]]` for the
    /// `offsets.len() - 1` segments; waits for the device.
    ///
    /// # Errors
    /// See the module docs (bad offsets are found on the device and reported here).
    pub fn reduce_offsets(
        &mut self,
        input: &DeviceBuffer<T>,
        offsets: &DeviceBuffer<u64>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<(), Error> {
        self.error.copy_from_host(&[NO_ERROR])?;
        // SAFETY: the buffers are borrowed (the output mutably) until the stream is
        // synchronised below.
        unsafe { self.enqueue(None, input, Form::Offsets(offsets), output)? };
        self.stream.synchronize()?;
        let code = self.error.download()?[0];
        if code == NO_ERROR {
            return Ok(());
        }
        let segment = code / 2;
        let problem = if code % 2 == BadSegment::NotMonotonic as u64 {
            SegmentsProblem::NotMonotonic { segment }
        } else {
            SegmentsProblem::PastInput { segment, len: input.len() as u64 }
        };
        Err(Error::InvalidSegments { operation: "segmented reduce", problem })
    }

    /// Enqueues [`SegmentedReducer::reduce_fixed`] on `stream` without waiting.
    ///
    /// # Safety
    /// Both buffers stay alive, and nothing else accesses them, until `stream` has run
    /// the launch.
    ///
    /// # Errors
    /// See the module docs.
    pub unsafe fn reduce_fixed_on(
        &mut self,
        stream: &Stream,
        input: &DeviceBuffer<T>,
        segment_len: u64,
        output: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(Some(stream), input, Form::Fixed(segment_len), output) }
    }

    /// Enqueues [`SegmentedReducer::reduce_offsets`] on `stream` without waiting; bad
    /// offsets are not reported (module docs).
    ///
    /// # Safety
    /// The three buffers stay alive, and nothing else accesses them (the offsets and
    /// input may be read), until `stream` has run the launch; no launch of this reducer on
    /// another stream is running (they share the error word).
    ///
    /// # Errors
    /// See the module docs.
    pub unsafe fn reduce_offsets_on(
        &mut self,
        stream: &Stream,
        input: &DeviceBuffer<T>,
        offsets: &DeviceBuffer<u64>,
        output: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(Some(stream), input, Form::Offsets(offsets), output) }
    }

    /// Checks the call and enqueues one launch on `stream` (or the reducer's own).
    ///
    /// # Safety
    /// As for [`SegmentedReducer::reduce_offsets_on`].
    unsafe fn enqueue(
        &mut self,
        stream: Option<&Stream>,
        input: &DeviceBuffer<T>,
        form: Form<'_>,
        output: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        let stream = stream.unwrap_or(&self.stream);
        let device = &self.device;
        let offsets_on = match form {
            Form::Fixed(_) => true,
            Form::Offsets(offsets) => offsets.is_on(device),
        };
        if !(input.is_on(device) && output.is_on(device) && stream.is_on(device) && offsets_on) {
            return Err(Error::unsupported(format!(
                "segmented reduce: a buffer or stream of another device than {}",
                device.name()
            )));
        }
        let invalid = |problem| Error::InvalidSegments { operation: "segmented reduce", problem };
        let len = input.len() as u64;
        let (segments, segment_len, offsets) = match form {
            Form::Fixed(0) => return Err(invalid(SegmentsProblem::ZeroSegmentLength)),
            Form::Fixed(segment_len) => (len.div_ceil(segment_len), segment_len, 0),
            Form::Offsets(offsets) if offsets.is_empty() => {
                return Err(invalid(SegmentsProblem::EmptyOffsets))
            }
            Form::Offsets(offsets) => (offsets.len() as u64 - 1, 0, offsets.device_address()),
        };
        if (output.len() as u64) < segments {
            return Err(invalid(SegmentsProblem::OutputTooShort { segments, len: output.len() }));
        }
        if segments == 0 {
            return Ok(());
        }
        let strategy = match form {
            Form::Fixed(_) => self.strategy_for_fixed(len, segment_len),
            Form::Offsets(_) => self.strategy_for(len, segments),
        };
        let lanes = strategy.lanes().unwrap_or(1);
        let index = strategy.index();
        let wanted = if strategy == SegmentStrategy::Block {
            segments
        } else {
            segments.saturating_mul(lanes).div_ceil(BLOCK_THREADS as u64)
        };
        let cap = self.options.max_blocks.unwrap_or(u32::MAX).min(self.resident[index]);
        let blocks = wanted.min(cap as u64).max(1) as u32;
        let config = LaunchConfig {
            shared_mem_bytes: Self::shared_bytes(strategy),
            ..LaunchConfig::linear(blocks, BLOCK_THREADS)
        };
        let (mut input, mut len, mut offsets, mut segment_len, mut segments) =
            (input.device_address(), len, offsets, segment_len, segments);
        let (mut output, mut error) = (output.device_address(), self.error.device_address());
        let args = kernel_args![input, len, offsets, segment_len, segments, output, error];
        // SAFETY: the kernel (input, len, offsets, segment_len, segments, out, error) of
        // `warpsafe::segmented_reduce_kernels!`: a 1-D launch of BLOCK_THREADS (a multiple
        // of 32) with the block strategy's shared bytes; `input` holds `len` elements; for
        // the fixed form `offsets` is null, segment_len > 0 and segments = ceil(len /
        // segment_len); otherwise `offsets` holds segments + 1 u64s; the output holds at
        // least `segments` elements; the error word is this reducer's, used by one launch
        // at a time (caller); all buffers are the caller's, alive and untouched until the
        // stream has run the launch.
        unsafe { self.device.launch_raw_on(stream, &self.functions[index], config, &args) }
    }
}
