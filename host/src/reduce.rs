//! Whole-array reductions on a [`Device`]: [`Reducer`].
//!
//! A [`Reducer`] is built once for an element type `T` and an operator `O` (a
//! [`Reduction`]: every built-in operator of `warpsafe::op` over its element types, or
//! your own with its kernels). It loads its kernels, sizes its grids from the device and
//! allocates its scratch once (one partial per block, the last-block strategy's tagged
//! slots, a ticket counter and a grid-barrier word), and reuses all of it on every call.
//!
//! ```
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! use warpsafe::op::{Max, Sum};
//! use warpsafe_host::reduce::Reducer;
//! use warpsafe_host::Device;
//!
//! let device = Device::emulator();
//! let data = device.upload(&[1.5f32, 2.0, -4.0, 8.25])?;
//! let mut sum = Reducer::<f32, Sum>::new(&device)?;
//! assert_eq!(sum.reduce(&data)?, 7.75);
//! let mut max = Reducer::<f32, Max>::new(&device)?;
//! assert_eq!(max.reduce(&data)?, Some(8.25));
//! assert_eq!(max.reduce(&device.alloc_zeroed::<f32>(0)?)?, None);
//! # Ok(())
//! # }
//! ```
//!
//! # API
//! ```text
//! pub enum Strategy { Auto, TwoPass, LastBlock, Cooperative }
//! pub struct ReduceOptions { pub strategy: Strategy, pub block_threads: u32, pub max_blocks: Option<u32> }
//! pub struct Plan { pub strategy: Strategy, pub blocks: u32, pub block_threads: u32, pub launches: u32 }
//! pub unsafe trait Reduction<T: Pod>: Operator<T> + Default {
//!     type Output;                                   // T, or Option<T> for Min and Max
//!     fn output(value: T, len: usize) -> Self::Output;
//!     fn kernels() -> ReduceKernels;
//! }
//! pub struct ReduceKernels { pub program: Program, pub two_pass: &'static Kernel,
//!                            pub last_block: &'static Kernel, pub cooperative: &'static Kernel,
//!                            pub fold_copies: &'static Kernel }
//! impl<T: Pod, O: Reduction<T>> Reducer<T, O> {
//!     pub fn new(device: &Device) -> Result<Self, Error>;                     // Strategy::Auto
//!     pub fn with_options(device: &Device, options: ReduceOptions) -> Result<Self, Error>;
//!     pub fn options(&self) -> ReduceOptions;
//!     pub fn set_strategy(&mut self, strategy: Strategy);
//!     pub fn plan(&self, len: usize) -> Result<Plan, Error>;
//!     pub fn reduce(&mut self, input: &DeviceBuffer<T>) -> Result<O::Output, Error>;          // waits
//!     pub fn reduce_to_device(&mut self, input: &DeviceBuffer<T>, out: &mut DeviceBuffer<T>) -> Result<(), Error>; // waits, result in out[0]
//!     pub unsafe fn reduce_on(&mut self, stream: &Stream, input: &DeviceBuffer<T>, out: &DeviceBuffer<T>) -> Result<(), Error>; // enqueues
//! }
//! ```
//!
//! # Empty input
//! [`Reducer::reduce`] returns the operator's identity for `Sum`, `BitAnd`, `BitOr` and
//! `BitXor` (0, all ones, 0, 0) and `None` for `Min` and `Max`, whose identity (`+inf`,
//! `MAX`, ...) is not a value of the input. The device forms write the identity to
//! `out[0]` in every case.
//!
//! # Strategies
//! All three are the kernels of `warpsafe::reduce::grid` (whose docs describe them in
//! full); every block first reduces its share of the input to a partial.
//!
//! | [`Strategy`] | launches | combining the partials |
//! | --- | --- | --- |
//! | [`Strategy::TwoPass`] | 2 (1 when one block covers the input) | a second launch with one block |
//! | [`Strategy::LastBlock`] | 1 | the block that takes the last ticket of an atomic counter |
//! | [`Strategy::Cooperative`] | 1, cooperative | block 0, after a grid-wide barrier |
//! | [`Strategy::Auto`] | 1 | `TwoPass` when one block covers the input (no atomic at all), else `LastBlock` |
//!
//! Grid size: a tile is `block_threads * 4` 16-byte vectors (4096 `f32`s, 2048 `f64`s
//! with the default 256 threads). `resident` is the multiprocessor count times the
//! smaller of the kernel's occupancy (`cuOccupancyMaxActiveBlocksPerMultiprocessor`) and
//! 1024 threads' worth of blocks (4 of 256), or 1280 (5 of 256) when that would leave
//! more than 32 tiles per block (both measured fastest on an H100), for the cooperative
//! kernel also at most [`Device::max_cooperative_blocks`], and capped by
//! [`ReduceOptions::max_blocks`]. With `tiles = ceil(len / tile)` and
//! `rounds = ceil(tiles / resident)`, the grid has `ceil(tiles / rounds)` blocks: one wave
//! of resident blocks, each looping over the same number of tiles (within one), so no last
//! round of tiles is left to a few blocks. An input whose grid would have fewer blocks
//! than half the multiprocessors (but more than one) is read by smaller blocks instead
//! (halving a block of a multiple of 64 threads, down to 64), which is faster for such
//! launch-bound sizes.
//! [`Reducer::plan`] shows the choice for a length.
//!
//! # Determinism
//! Every strategy is bitwise deterministic: the grid size is a function of the length
//! (and of the device, kernel and options), each thread's elements and their order are a
//! function of the grid, and the partials are combined in block order by one block; no
//! float atomics are used. So the same input, length, device and options give the same
//! bits on every run. Different strategies (and different devices, whose SM count and
//! occupancy set the grid) may round floats differently.
//!
//! # Limits
//! Lengths are `u64` in the kernels: inputs of more than 2^31 elements work. The
//! Reducer's calls take `&mut self`: one call at a time per Reducer, since its scratch is
//! shared by its launches.

use std::cell::Cell;
use std::marker::PhantomData;

use bytemuck::Pod;
use warpsafe::op::{BitAnd, BitOr, BitXor, Max, Min, Operator, Sum};
use warpsafe::reduce::grid;

use warpsafe::global::Slice;

use crate::{kernel_args, ptx, Device, DeviceBuffer, Error, Function, LaunchConfig, Program, Stream};

/// How a [`Reducer`] combines the blocks' partial results (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Chosen by length: [`Strategy::TwoPass`] when one block covers the input (a single
    /// launch without atomics), [`Strategy::LastBlock`] otherwise.
    #[default]
    Auto,
    /// Per-block partials, then a second launch of one block over them.
    TwoPass,
    /// One launch; the last block to finish (by an atomic ticket) combines the partials.
    LastBlock,
    /// One cooperative launch with a grid-wide barrier; block 0 combines the partials.
    Cooperative,
}

/// A [`Reducer`]'s launch settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceOptions {
    /// The strategy ([`Strategy::Auto`] by default).
    pub strategy: Strategy,
    /// Threads per block, 1 to 1024 (256 by default; the kernels handle any size, warps
    /// that are not full included).
    pub block_threads: u32,
    /// A cap on the number of blocks below the device's resident limit (`None`: the
    /// limit), for tests and experiments.
    pub max_blocks: Option<u32>,
}

impl Default for ReduceOptions {
    fn default() -> ReduceOptions {
        ReduceOptions { strategy: Strategy::Auto, block_threads: grid::BLOCK_THREADS, max_blocks: None }
    }
}

/// What a [`Reducer`] launches for a given length: [`Reducer::plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The strategy, never [`Strategy::Auto`].
    pub strategy: Strategy,
    /// Blocks of the (first) launch.
    pub blocks: u32,
    /// Threads per block.
    pub block_threads: u32,
    /// Kernel launches per reduction.
    pub launches: u32,
}

/// The kernels of one element type and operator (three grid reductions and the
/// element-wise fold of copies), as
/// `warpsafe::reduce_kernels!` declares them, and the program that holds them.
#[derive(Clone, Copy, Debug)]
pub struct ReduceKernels {
    /// The kernel crate (its PTX, and the host forms for the emulator).
    pub program: Program,
    /// `warpsafe::reduce::grid::two_pass`.
    pub two_pass: &'static warpsafe::kernel::UntypedKernel,
    /// `warpsafe::reduce::grid::last_block`.
    pub last_block: &'static warpsafe::kernel::UntypedKernel,
    /// `warpsafe::reduce::grid::cooperative`.
    pub cooperative: &'static warpsafe::kernel::UntypedKernel,
    /// `warpsafe::reduce::copies::fold_copies`: the cross-device all-reduce of
    /// [`crate::collective`] combines gathered copies with it when the transport cannot
    /// apply the operator itself.
    pub fold_copies: &'static warpsafe::kernel::UntypedKernel,
}

/// An operator a [`Reducer`] can apply to `T`: its kernels and what an empty input
/// gives.
///
/// Implemented for every built-in operator of `warpsafe::op` over its element types
/// (kernels in `warpsafe-entry`). For your own operator, declare its kernels in your
/// kernel crate with `warpsafe::reduce_kernels!` and implement this trait with them
/// (`unsafe impl`: see Safety).
///
/// # Safety
/// [`Reduction::kernels`] returns kernels that `warpsafe::reduce_kernels!` declared for
/// the element type `T`, each in the field named for it, and the program that holds
/// them: the `Reducer` launches each with the buffers, lengths and launch shape of that
/// kernel's contract, so a kernel of another element type or in another field would
/// read and write outside them.
pub unsafe trait Reduction<T: Pod>: Operator<T> + Default {
    /// What [`Reducer::reduce`] returns: `T`, or `Option<T>` when an empty input has no
    /// meaningful result.
    type Output;
    /// The result of reducing `len` elements to `value` (`value` is the identity when
    /// `len` is 0).
    fn output(value: T, len: usize) -> Self::Output;
    /// The kernels.
    fn kernels() -> ReduceKernels;
}

/// Implements [`Reduction`] for built-in operators; `$empty` says whether an empty input
/// gives the identity (`identity`) or `None` (`none`).
macro_rules! builtin {
    ($($op:ident $t:ty: $empty:ident, $two_pass:ident, $last_block:ident, $cooperative:ident, $fold_copies:ident;)*) => {$(
        // SAFETY: warpsafe-entry's `reduce_kernels!` kernels of `$t`, each in its field.
        unsafe impl Reduction<$t> for $op {
            builtin!(@output $empty, $t);
            fn kernels() -> ReduceKernels {
                ReduceKernels {
                    program: ptx::ENTRY,
                    two_pass: &warpsafe_entry::reduce::$two_pass,
                    last_block: &warpsafe_entry::reduce::$last_block,
                    cooperative: &warpsafe_entry::reduce::$cooperative,
                    fold_copies: &warpsafe_entry::reduce::$fold_copies,
                }
            }
        }
    )*};
    (@output identity, $t:ty) => {
        type Output = $t;
        fn output(value: $t, _len: usize) -> $t {
            value
        }
    };
    (@output none, $t:ty) => {
        type Output = Option<$t>;
        fn output(value: $t, len: usize) -> Option<$t> {
            (len > 0).then_some(value)
        }
    };
}

builtin! {
    Sum f32: identity, warpsafe_reduce_sum_f32_two_pass, warpsafe_reduce_sum_f32_last_block, warpsafe_reduce_sum_f32_cooperative, warpsafe_reduce_sum_f32_fold_copies;
    Sum f64: identity, warpsafe_reduce_sum_f64_two_pass, warpsafe_reduce_sum_f64_last_block, warpsafe_reduce_sum_f64_cooperative, warpsafe_reduce_sum_f64_fold_copies;
    Sum i32: identity, warpsafe_reduce_sum_i32_two_pass, warpsafe_reduce_sum_i32_last_block, warpsafe_reduce_sum_i32_cooperative, warpsafe_reduce_sum_i32_fold_copies;
    Sum u32: identity, warpsafe_reduce_sum_u32_two_pass, warpsafe_reduce_sum_u32_last_block, warpsafe_reduce_sum_u32_cooperative, warpsafe_reduce_sum_u32_fold_copies;
    Sum i64: identity, warpsafe_reduce_sum_i64_two_pass, warpsafe_reduce_sum_i64_last_block, warpsafe_reduce_sum_i64_cooperative, warpsafe_reduce_sum_i64_fold_copies;
    Sum u64: identity, warpsafe_reduce_sum_u64_two_pass, warpsafe_reduce_sum_u64_last_block, warpsafe_reduce_sum_u64_cooperative, warpsafe_reduce_sum_u64_fold_copies;
    Min f32: none, warpsafe_reduce_min_f32_two_pass, warpsafe_reduce_min_f32_last_block, warpsafe_reduce_min_f32_cooperative, warpsafe_reduce_min_f32_fold_copies;
    Min f64: none, warpsafe_reduce_min_f64_two_pass, warpsafe_reduce_min_f64_last_block, warpsafe_reduce_min_f64_cooperative, warpsafe_reduce_min_f64_fold_copies;
    Min i32: none, warpsafe_reduce_min_i32_two_pass, warpsafe_reduce_min_i32_last_block, warpsafe_reduce_min_i32_cooperative, warpsafe_reduce_min_i32_fold_copies;
    Min u32: none, warpsafe_reduce_min_u32_two_pass, warpsafe_reduce_min_u32_last_block, warpsafe_reduce_min_u32_cooperative, warpsafe_reduce_min_u32_fold_copies;
    Min i64: none, warpsafe_reduce_min_i64_two_pass, warpsafe_reduce_min_i64_last_block, warpsafe_reduce_min_i64_cooperative, warpsafe_reduce_min_i64_fold_copies;
    Min u64: none, warpsafe_reduce_min_u64_two_pass, warpsafe_reduce_min_u64_last_block, warpsafe_reduce_min_u64_cooperative, warpsafe_reduce_min_u64_fold_copies;
    Max f32: none, warpsafe_reduce_max_f32_two_pass, warpsafe_reduce_max_f32_last_block, warpsafe_reduce_max_f32_cooperative, warpsafe_reduce_max_f32_fold_copies;
    Max f64: none, warpsafe_reduce_max_f64_two_pass, warpsafe_reduce_max_f64_last_block, warpsafe_reduce_max_f64_cooperative, warpsafe_reduce_max_f64_fold_copies;
    Max i32: none, warpsafe_reduce_max_i32_two_pass, warpsafe_reduce_max_i32_last_block, warpsafe_reduce_max_i32_cooperative, warpsafe_reduce_max_i32_fold_copies;
    Max u32: none, warpsafe_reduce_max_u32_two_pass, warpsafe_reduce_max_u32_last_block, warpsafe_reduce_max_u32_cooperative, warpsafe_reduce_max_u32_fold_copies;
    Max i64: none, warpsafe_reduce_max_i64_two_pass, warpsafe_reduce_max_i64_last_block, warpsafe_reduce_max_i64_cooperative, warpsafe_reduce_max_i64_fold_copies;
    Max u64: none, warpsafe_reduce_max_u64_two_pass, warpsafe_reduce_max_u64_last_block, warpsafe_reduce_max_u64_cooperative, warpsafe_reduce_max_u64_fold_copies;
    BitAnd i32: identity, warpsafe_reduce_and_i32_two_pass, warpsafe_reduce_and_i32_last_block, warpsafe_reduce_and_i32_cooperative, warpsafe_reduce_and_i32_fold_copies;
    BitAnd u32: identity, warpsafe_reduce_and_u32_two_pass, warpsafe_reduce_and_u32_last_block, warpsafe_reduce_and_u32_cooperative, warpsafe_reduce_and_u32_fold_copies;
    BitAnd i64: identity, warpsafe_reduce_and_i64_two_pass, warpsafe_reduce_and_i64_last_block, warpsafe_reduce_and_i64_cooperative, warpsafe_reduce_and_i64_fold_copies;
    BitAnd u64: identity, warpsafe_reduce_and_u64_two_pass, warpsafe_reduce_and_u64_last_block, warpsafe_reduce_and_u64_cooperative, warpsafe_reduce_and_u64_fold_copies;
    BitOr i32: identity, warpsafe_reduce_or_i32_two_pass, warpsafe_reduce_or_i32_last_block, warpsafe_reduce_or_i32_cooperative, warpsafe_reduce_or_i32_fold_copies;
    BitOr u32: identity, warpsafe_reduce_or_u32_two_pass, warpsafe_reduce_or_u32_last_block, warpsafe_reduce_or_u32_cooperative, warpsafe_reduce_or_u32_fold_copies;
    BitOr i64: identity, warpsafe_reduce_or_i64_two_pass, warpsafe_reduce_or_i64_last_block, warpsafe_reduce_or_i64_cooperative, warpsafe_reduce_or_i64_fold_copies;
    BitOr u64: identity, warpsafe_reduce_or_u64_two_pass, warpsafe_reduce_or_u64_last_block, warpsafe_reduce_or_u64_cooperative, warpsafe_reduce_or_u64_fold_copies;
    BitXor i32: identity, warpsafe_reduce_xor_i32_two_pass, warpsafe_reduce_xor_i32_last_block, warpsafe_reduce_xor_i32_cooperative, warpsafe_reduce_xor_i32_fold_copies;
    BitXor u32: identity, warpsafe_reduce_xor_u32_two_pass, warpsafe_reduce_xor_u32_last_block, warpsafe_reduce_xor_u32_cooperative, warpsafe_reduce_xor_u32_fold_copies;
    BitXor i64: identity, warpsafe_reduce_xor_i64_two_pass, warpsafe_reduce_xor_i64_last_block, warpsafe_reduce_xor_i64_cooperative, warpsafe_reduce_xor_i64_fold_copies;
    BitXor u64: identity, warpsafe_reduce_xor_u64_two_pass, warpsafe_reduce_xor_u64_last_block, warpsafe_reduce_xor_u64_cooperative, warpsafe_reduce_xor_u64_fold_copies;
}

/// Index of the last-block ticket counter in the sync words.
const TICKET: usize = 0;
/// Index of the grid-barrier word in the sync words.
const BARRIER: usize = 1;

/// Reduces device arrays of `T` with operator `O` (see the module docs).
///
/// Built once, reused for any number of calls and any lengths; it owns its kernels, a
/// stream for the waiting forms, and its scratch.
pub struct Reducer<T: Pod, O: Reduction<T>> {
    device: Device,
    options: ReduceOptions,
    two_pass: Function,
    last_block: Function,
    cooperative: Function,
    /// Largest grids of the two-pass kernel: one wave of resident blocks.
    two_pass_blocks: Caps,
    /// Largest grids of the last-block kernel.
    last_block_blocks: Caps,
    /// Largest grids of the cooperative kernel (0 when the device has no cooperative
    /// launch).
    cooperative_blocks: Caps,
    /// One partial per block of the largest grid (two-pass and cooperative).
    partials: DeviceBuffer<T>,
    /// The last-block strategy's tagged partials: `grid::slot_words::<T>()` per block.
    slots: DeviceBuffer<u64>,
    /// The epoch of the last last-block launch: each launch gets the next, never 0.
    epoch: Cell<u32>,
    /// The last-block ticket counter and the grid-barrier word; both 0 between launches.
    sync_words: DeviceBuffer<u32>,
    /// Set when a launch that uses the sync words failed, or the epochs wrapped: the
    /// words and slots are zeroed before the next launch.
    scratch_dirty: Cell<bool>,
    /// The result of [`Reducer::reduce`].
    result: DeviceBuffer<T>,
    stream: Stream,
    /// The device's multiprocessors.
    multiprocessors: u32,
    operator: PhantomData<fn() -> O>,
}

impl<T: Pod, O: Reduction<T>> std::fmt::Debug for Reducer<T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reducer")
            .field("type", &std::any::type_name::<T>())
            .field("operator", &std::any::type_name::<O>())
            .field("device", &self.device)
            .field("options", &self.options)
            .field("two_pass_blocks", &self.two_pass_blocks)
            .field("last_block_blocks", &self.last_block_blocks)
            .field("cooperative_blocks", &self.cooperative_blocks)
            .finish()
    }
}

/// Threads per multiprocessor the grids aim for when every block takes at most
/// [`LONG_ROUNDS`] tiles: 1024, four blocks of 256 threads, each thread with four 16-byte
/// loads in flight (64 KiB per multiprocessor). Measured on an H100 (f32 sum): from 2^22
/// to 2^26 elements these grids read 1 to 3 % faster than grids at the occupancy limit
/// (six blocks of 256 threads at 40 registers).
const SHORT_THREADS_PER_MULTIPROCESSOR: u32 = 1024;

/// Threads per multiprocessor for longer inputs: 1280, five blocks of 256 threads. At
/// 2^27 and 2^28 `f32`s on an H100 five blocks per multiprocessor read 0.6 to 1 % faster
/// than four (and than six): a long stream needs more loads in flight.
const LONG_THREADS_PER_MULTIPROCESSOR: u32 = 1280;

/// Tiles per block above which an input counts as long.
const LONG_ROUNDS: u64 = 32;

/// The largest grids of one kernel, for short and for long inputs (see
/// [`SHORT_THREADS_PER_MULTIPROCESSOR`]); all their blocks are resident at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Caps {
    short: u32,
    long: u32,
}

impl Caps {
    /// No grid at all (a kernel the device cannot launch this way).
    const NONE: Caps = Caps { short: 0, long: 0 };

    /// The caps of `function`: per multiprocessor the smaller of its occupancy
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`) and the target's worth of blocks,
    /// times the multiprocessor count, then at most `limit`.
    fn of(
        device: &Device,
        function: &Function,
        block_threads: u32,
        shared: u32,
        limit: u32,
    ) -> Result<Caps, Error> {
        let occupancy = device.max_active_blocks_per_multiprocessor(function, block_threads, shared)?;
        if occupancy == 0 {
            return Err(Error::unsupported(format!(
                "{}: a block of {block_threads} threads with {shared} bytes of shared memory cannot run on {}",
                function.name(),
                device.name()
            )));
        }
        let blocks = |threads: u32| {
            let per_multiprocessor = occupancy.min((threads / block_threads).max(1));
            per_multiprocessor.saturating_mul(device.multiprocessor_count()).min(limit)
        };
        Ok(Caps {
            short: blocks(SHORT_THREADS_PER_MULTIPROCESSOR),
            long: blocks(LONG_THREADS_PER_MULTIPROCESSOR),
        })
    }

    /// The grid for `tiles` tiles: one wave of at most the short cap (the long one past
    /// [`LONG_ROUNDS`] tiles per block), each block taking the same number of tiles
    /// (within one), so the last round is not left to a few blocks.
    fn blocks_for(self, tiles: u64) -> u32 {
        let tiles = tiles.max(1);
        let short = self.short.max(1) as u64;
        let cap = if tiles.div_ceil(short) > LONG_ROUNDS { self.long.max(1) as u64 } else { short };
        tiles.div_ceil(tiles.div_ceil(cap)) as u32
    }
}

impl<T: Pod, O: Reduction<T>> Reducer<T, O> {
    /// A reducer on `device` with the default options ([`Strategy::Auto`], 256 threads
    /// per block).
    ///
    /// # Errors
    /// As for [`Reducer::with_options`].
    pub fn new(device: &Device) -> Result<Self, Error> {
        Reducer::with_options(device, ReduceOptions::default())
    }

    /// A reducer on `device` with `options`: loads the kernels, sizes the grids and
    /// allocates the scratch.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a block size outside 1 to 1024, a `max_blocks` of 0, or
    /// a block the device cannot run; [`Error::KernelNotFound`] or [`Error::ModuleLoad`]
    /// when the kernels cannot be loaded; [`Error::Alloc`] when the scratch cannot be
    /// allocated; [`Error::Driver`] when the occupancy query fails.
    pub fn with_options(device: &Device, options: ReduceOptions) -> Result<Self, Error> {
        if !(1..=1024).contains(&options.block_threads) {
            return Err(Error::unsupported(format!(
                "reductions with blocks of {} threads (1 to 1024)",
                options.block_threads
            )));
        }
        if options.max_blocks == Some(0) {
            return Err(Error::unsupported("reductions with max_blocks = Some(0)"));
        }
        let kernels = O::kernels();
        let module = device.load(&kernels.program)?;
        let two_pass = module.untyped_kernel(kernels.two_pass)?;
        let last_block = module.untyped_kernel(kernels.last_block)?;
        let cooperative = module.untyped_kernel(kernels.cooperative)?;
        let threads = options.block_threads;
        let shared = shared_bytes::<T>()?;
        let limit = options.max_blocks.unwrap_or(u32::MAX);
        let two_pass_blocks = Caps::of(device, &two_pass, threads, shared, limit)?;
        let last_block_blocks = Caps::of(device, &last_block, threads, shared, limit)?;
        let cooperative_blocks = if device.supports_cooperative_launch() {
            let resident = device.max_cooperative_blocks(&cooperative, threads, shared)?;
            Caps::of(device, &cooperative, threads, shared, limit.min(resident))?
        } else {
            Caps::NONE
        };
        let most = two_pass_blocks.long.max(last_block_blocks.long).max(cooperative_blocks.long).max(1);
        Ok(Reducer {
            device: device.clone(),
            options,
            two_pass,
            last_block,
            cooperative,
            two_pass_blocks,
            last_block_blocks,
            cooperative_blocks,
            partials: device.alloc_zeroed(most as usize)?,
            slots: device.alloc_zeroed(last_block_blocks.long.max(1) as usize * grid::slot_words::<T>())?,
            epoch: Cell::new(0),
            sync_words: device.alloc_zeroed(2)?,
            scratch_dirty: Cell::new(false),
            result: device.alloc_zeroed(1)?,
            stream: device.stream()?,
            multiprocessors: device.multiprocessor_count(),
            operator: PhantomData,
        })
    }

    /// The options this reducer launches with.
    pub fn options(&self) -> ReduceOptions {
        self.options
    }

    /// Changes the strategy of later calls.
    pub fn set_strategy(&mut self, strategy: Strategy) {
        self.options.strategy = strategy;
    }

    /// The launches a reduction of `len` elements makes: strategy, grid and block size.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for [`Strategy::Cooperative`] on a device without
    /// cooperative launch.
    pub fn plan(&self, len: usize) -> Result<Plan, Error> {
        let tiles_of = |block_threads: u32| {
            let tile = match grid::tile_elements::<T>(block_threads) {
                0 => block_threads as u64 * grid::VECTORS_PER_THREAD as u64,
                elements => elements,
            };
            (len as u64).div_ceil(tile)
        };
        // An input that gives fewer blocks than half the multiprocessors (but more than
        // one) is read by more, smaller blocks: halve a block of a multiple of 64 threads
        // down to 64. Measured on an H100 at 2^16 `f32`s: 64 blocks of 64 threads take
        // 3.8 to 3.9 µs per call, 16 blocks of 256 take 4.4.
        let mut block_threads = self.options.block_threads;
        while block_threads >= 128
            && block_threads.is_multiple_of(64)
            && (2..self.multiprocessors as u64 / 2).contains(&tiles_of(block_threads))
        {
            block_threads /= 2;
        }
        let tiles = tiles_of(block_threads);
        let blocks_for = |caps: Caps| caps.blocks_for(tiles);
        let plan = |strategy, blocks, launches| Plan { strategy, blocks, block_threads, launches };
        Ok(match self.options.strategy {
            Strategy::Auto => match blocks_for(self.last_block_blocks) {
                1 => plan(Strategy::TwoPass, 1, 1),
                blocks => plan(Strategy::LastBlock, blocks, 1),
            },
            Strategy::TwoPass => {
                let blocks = blocks_for(self.two_pass_blocks);
                plan(Strategy::TwoPass, blocks, if blocks == 1 { 1 } else { 2 })
            }
            Strategy::LastBlock => plan(Strategy::LastBlock, blocks_for(self.last_block_blocks), 1),
            Strategy::Cooperative => {
                if self.cooperative_blocks == Caps::NONE {
                    return Err(Error::unsupported(format!(
                        "cooperative launches on {} (Strategy::Cooperative)",
                        self.device.name()
                    )));
                }
                plan(Strategy::Cooperative, blocks_for(self.cooperative_blocks), 1)
            }
        })
    }

    /// Reduces `input` and returns the result (see the module docs for an empty input).
    /// Waits for the device.
    ///
    /// # Errors
    /// [`Error::Unsupported`] as for [`Reducer::plan`], or when `input` belongs to another
    /// device (its memory is not this reducer's device's); launch failures ([`Error::Launch`], [`Error::KernelFailed`],
    /// [`Error::Emulator`]) and copy failures ([`Error::Driver`]).
    pub fn reduce(&mut self, input: &DeviceBuffer<T>) -> Result<O::Output, Error> {
        if input.is_empty() {
            return Ok(O::output(O::default().identity(), 0));
        }
        self.reset_scratch_if_dirty(None)?;
        // SAFETY: the launches read `input` and write `self.result`, both alive until the
        // stream is synchronised just below.
        unsafe { self.enqueue(&self.stream, input, &self.result)? };
        self.wait()?;
        let value = self.result.download()?.first().copied().unwrap_or_else(|| O::default().identity());
        Ok(O::output(value, input.len()))
    }

    /// Reduces `input` into `out[0]` on the device (the identity for an empty input) and
    /// waits for it.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when `out` is empty; otherwise as for [`Reducer::reduce`].
    pub fn reduce_to_device(
        &mut self,
        input: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
    ) -> Result<(), Error> {
        self.reset_scratch_if_dirty(None)?;
        // SAFETY: both buffers are borrowed until the stream is synchronised just below.
        unsafe { self.enqueue(&self.stream, input, out)? };
        self.wait()
    }

    /// Waits for this reducer's own stream; a failure there (a kernel that faulted) may
    /// have left the scratch inconsistent.
    fn wait(&self) -> Result<(), Error> {
        let waited = self.stream.synchronize();
        self.note_failure(&waited);
        waited
    }

    /// Enqueues the reduction of `input` into `out[0]` on `stream` and returns without
    /// waiting (one or two launches, see [`Reducer::plan`]); the identity for an empty
    /// input. Synchronise the stream (or record an event) before reading `out`.
    ///
    /// # Safety
    /// - `input` and `out` stay alive, and nothing else writes `input` or accesses
    ///   `out[0]`, until `stream` has finished these launches.
    /// - No launch of this reducer enqueued on another stream runs at the same time (its
    ///   scratch is shared by its launches): keep one reducer per stream, or synchronise
    ///   between calls on different streams.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when `out` is empty, when a buffer or `stream` belongs to
    /// another device, or as for [`Reducer::plan`]; launch failures.
    pub unsafe fn reduce_on(
        &mut self,
        stream: &Stream,
        input: &DeviceBuffer<T>,
        out: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        self.reset_scratch_if_dirty(Some(stream))?;
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(stream, input, out) }
    }

    /// Enqueues the launches of one reduction of `input` into `out[0]` on `stream`.
    ///
    /// # Safety
    /// As for [`Reducer::reduce_on`].
    unsafe fn enqueue(
        &self,
        stream: &Stream,
        input: &DeviceBuffer<T>,
        out: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        if out.is_empty() {
            return Err(Error::unsupported("reducing into an empty output buffer"));
        }
        // A kernel must never receive another device's addresses (the GPU cannot read host
        // memory; the emulator would read a GPU address as a host pointer).
        if !input.is_on(&self.device) || !out.is_on(&self.device) {
            return Err(Error::unsupported(format!(
                "a buffer of another device given to a reducer on {}",
                self.device.name()
            )));
        }
        let plan = self.plan(input.len())?;
        let config = LaunchConfig {
            shared_mem_bytes: shared_bytes::<T>()?,
            ..LaunchConfig::linear(plan.blocks, plan.block_threads)
        };
        // The kernels take the input as a `Slice<T>` (address and length); an empty input
        // passes the (never read) address of the result buffer, never a null one.
        let input_address =
            if input.is_empty() { self.result.device_address() } else { input.device_address() };
        let len = input.len();
        let partials = self.partials.device_address();
        let out = out.device_address();
        match plan.strategy {
            Strategy::TwoPass if plan.blocks == 1 => {
                // SAFETY: two_pass(input, len, partials) writes partials[0] with one block;
                // `out` has one element; the buffers outlive the launch (caller).
                unsafe { self.launch_two_pass(stream, config, input_address, len, out) }
            }
            Strategy::TwoPass => {
                // SAFETY: the first pass writes one partial per block into `partials`,
                // which holds the largest grid; the second reads those `blocks` partials
                // (ordered after the first launch by the stream) and writes out[0].
                unsafe {
                    self.launch_two_pass(stream, config, input_address, len, partials)?;
                    let single = LaunchConfig { grid: (1, 1, 1), ..config };
                    self.launch_two_pass(stream, single, partials, plan.blocks as usize, out)
                }
            }
            Strategy::LastBlock => {
                let Some(epoch) = self.next_epoch() else {
                    return Err(Error::unsupported("a last-block launch before its slots were re-zeroed"));
                };
                // SAFETY: the input buffer holds `len` elements (or `len` is 0), and the
                // caller keeps it alive and unwritten until the stream has run the launch.
                let mut input = unsafe { Slice::from_raw_parts(input_address as *const T, len) };
                let (mut slots, mut counter, mut epoch, mut out) =
                    (self.slots.device_address(), self.sync_word(TICKET), epoch, out);
                let args = kernel_args![input, slots, counter, epoch, out];
                // SAFETY: last_block(input: Slice<T>, slots: *mut u64, counter:
                // *mut u32, epoch: u32, out: *mut T): `input` holds `len` elements (or is
                // the unread result buffer), `slots` slot_words per block of the grid
                // (sized for the largest), holding no word of this epoch (each launch
                // takes a new one; they are zeroed before the epochs wrap), the counter
                // is 0 between launches (reset by the last ticket, or re-zeroed after a
                // failure), `out` one element; dynamic shared memory as the kernel needs.
                let launched = unsafe { self.device.launch_raw_on(stream, &self.last_block, config, &args) };
                self.note_failure(&launched);
                launched
            }
            Strategy::Cooperative => {
                // SAFETY: as for the last block.
                let mut input = unsafe { Slice::from_raw_parts(input_address as *const T, len) };
                let (mut partials, mut barrier, mut out) = (partials, self.sync_word(BARRIER), out);
                let args = kernel_args![input, partials, barrier, out];
                // SAFETY: cooperative(input: Slice<T>, partials, barrier: *mut u32, out): as for
                // the last block; the barrier word's low 31 bits are 0 between launches;
                // the grid is within the cooperative limit.
                let launched = unsafe {
                    self.device.launch_raw_cooperative_on(stream, &self.cooperative, config, &args)
                };
                self.note_failure(&launched);
                launched
            }
            Strategy::Auto => Err(Error::unsupported("an unresolved Strategy::Auto plan")),
        }
    }

    /// One launch of the two-pass kernel: `config`'s blocks each reduce their share of
    /// `input[..len]` into `partials[block]`.
    ///
    /// # Safety
    /// `input` holds `len` elements (or is any valid non-null address when `len` is 0),
    /// not written until `stream` has run the launch; `partials` one per block of
    /// `config`; both alive until then.
    unsafe fn launch_two_pass(
        &self,
        stream: &Stream,
        config: LaunchConfig,
        input: u64,
        len: usize,
        partials: u64,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        let mut input = unsafe { Slice::from_raw_parts(input as *const T, len) };
        let mut partials = partials;
        let args = kernel_args![input, partials];
        // SAFETY: two_pass(input: Slice<T>, partials: *mut T), as the caller guarantees.
        unsafe { self.device.launch_raw_on(stream, &self.two_pass, config, &args) }
    }

    /// The device address of sync word `index`.
    fn sync_word(&self, index: usize) -> u64 {
        self.sync_words.device_address() + (index * std::mem::size_of::<u32>()) as u64
    }

    /// The epoch of the next last-block launch, or `None` when the epochs have wrapped
    /// and the slots must be zeroed first ([`Reducer::reset_scratch_if_dirty`]).
    fn next_epoch(&self) -> Option<u32> {
        let epoch = self.epoch.get().wrapping_add(1);
        if epoch == 0 {
            self.scratch_dirty.set(true);
            return None;
        }
        self.epoch.set(epoch);
        Some(epoch)
    }

    /// Remembers that a launch using the sync words failed: a block may have taken a
    /// ticket or arrived at the barrier without the launch completing.
    fn note_failure(&self, launched: &Result<(), Error>) {
        if launched.is_err() {
            self.scratch_dirty.set(true);
        }
    }

    /// Zeroes the sync words and the slots, and restarts the epochs, when a failed launch
    /// may have left them inconsistent or the epochs are about to wrap: after `stream`
    /// (when given) and this reducer's own stream are idle.
    fn reset_scratch_if_dirty(&mut self, stream: Option<&Stream>) -> Result<(), Error> {
        if self.epoch.get() == u32::MAX {
            self.scratch_dirty.set(true);
        }
        if !self.scratch_dirty.get() {
            return Ok(());
        }
        if let Some(stream) = stream {
            stream.synchronize()?;
        }
        self.stream.synchronize()?;
        self.sync_words.copy_from_host(&[0; 2])?;
        self.slots.copy_from_host(&vec![0; self.slots.len()])?;
        self.epoch.set(0);
        self.scratch_dirty.set(false);
        Ok(())
    }
}

/// Dynamic shared memory of the reduction kernels over `T`, as a launch takes it.
fn shared_bytes<T>() -> Result<u32, Error> {
    u32::try_from(grid::shared_bytes::<T>()).map_err(|_| {
        Error::unsupported(format!("reducing {}: its scratch exceeds 4 GiB", std::any::type_name::<T>()))
    })
}
