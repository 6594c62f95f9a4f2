//! Device-wide histograms on a [`Device`]: [`Histogram`], one kernel launch per call
//! (CUB's `DeviceHistogram::HistogramEven`, `HistogramRange` and their multi-channel
//! forms).
//!
//! ```
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! use warpsafe_host::histogram::Histogram;
//! use warpsafe_host::Device;
//!
//! let device = Device::emulator();
//! // 4 even bins over [0, 8): 0..2, 2..4, 4..6, 6..8; 9 and 200 fall outside.
//! let samples = device.upload(&[0u8, 1, 2, 7, 7, 5, 9, 200, 3])?;
//! let mut counts = device.alloc_zeroed::<u32>(4)?;
//! let mut histogram = Histogram::<u8>::even(&device, 4, 0, 8)?;
//! histogram.compute(&samples, &mut counts)?;
//! assert_eq!(counts.download()?, [2, 2, 1, 2]);
//!
//! // Bins between levels, f32 samples: [-1, 0), [0, 0.5), [0.5, 10); NaN counts nowhere.
//! let samples = device.upload(&[-0.5f32, 0.25, f32::NAN, 0.5, 9.0, 10.0])?;
//! let mut counts = device.alloc_zeroed::<u32>(3)?;
//! let mut histogram = Histogram::<f32>::range(&device, &[-1.0, 0.0, 0.5, 10.0])?;
//! histogram.compute(&samples, &mut counts)?;
//! assert_eq!(counts.download()?, [1, 1, 2]);
//!
//! // RGBA pixels, the first 3 channels counted: counts[c * bins + b].
//! let pixels = device.upload(&[10u8, 20, 30, 255, 10, 200, 30, 0])?;
//! let mut counts = device.alloc_zeroed::<u32>(3 * 2)?;
//! let mut histogram = Histogram::<u8, 4, 3>::even(&device, 2, 0, 256)?;
//! histogram.compute(&pixels, &mut counts)?;
//! assert_eq!(counts.download()?, [2, 0, 1, 1, 2, 0]);
//! # Ok(())
//! # }
//! ```
//!
//! # API
//! ```text
//! pub unsafe trait HistogramKernels<S: Sample, const CHANNELS: usize, const ACTIVE: usize> { fn kernel() -> HistogramKernel; }
//! pub struct BuiltIn;                                      // warpsafe's kernels
//! pub struct HistogramKernel { pub program: Program, pub even: &'static [&'static UntypedKernel], pub range: &'static UntypedKernel }
//! pub struct HistogramOptions { pub block_threads: Option<u32>, pub blocks_per_multiprocessor: u32, pub copies: Option<u32>, pub blocks: Option<u32>, pub concentrated_copies: u32 }
//! pub struct HistogramPlan { pub threads: u32, pub blocks: u32, pub copies: u32, pub concentrated_copies: u32, pub shared_bytes: u32 }
//! pub struct Histogram<S: Sample, const CHANNELS: usize = 1, const ACTIVE: usize = 1, K = BuiltIn>;
//! impl<S: Sample, const CHANNELS: usize, const ACTIVE: usize, K: HistogramKernels<S, CHANNELS, ACTIVE>> Histogram<S, CHANNELS, ACTIVE, K> {
//!     pub fn even(device: &Device, bins: u32, lower: S::Level, upper: S::Level) -> Result<Self, Error>;
//!     pub fn range(device: &Device, levels: &[S::Level]) -> Result<Self, Error>;
//!     pub fn with_options(self, options: HistogramOptions) -> Result<Self, Error>;
//!     pub fn bins(&self) -> u32;
//!     pub fn counts_len(&self) -> usize;                   // bins * ACTIVE
//!     pub fn plan(&self, samples: usize) -> HistogramPlan;
//!     pub fn compute(&mut self, samples: &DeviceBuffer<S>, counts: &mut DeviceBuffer<u32>) -> Result<(), Error>;
//!     pub unsafe fn compute_on(&mut self, stream: &Stream, samples: &DeviceBuffer<S>, counts: &DeviceBuffer<u32>) -> Result<(), Error>;
//! }
//! ```
//! `Sample` (`warpsafe::histogram::Sample`) is implemented for `u8`, `u16`, `i32` (bounds
//! and levels of type `i64`) and `f32` (bounds and levels of type `f32`).
//!
//! # Results
//! `counts[c * bins + b]` is the number of samples of channel `c` (pixel `p`'s channel `c`
//! is `samples[p * CHANNELS + c]`; channels `ACTIVE..CHANNELS` are not counted) in bin
//! `b`. The counts buffer is **overwritten**, not added to: it need not be zeroed first.
//! - Even bins over `[lower, upper)`: an integer sample `s` goes to bin `(s - lower) *
//!   bins / (upper - lower)` (exact); an `f32` sample to `min(trunc((s - lower) * scale),
//!   bins - 1)` with `scale = bins as f32 / (upper - lower)`, each step in `f32`.
//! - Range bins: `levels[i] <= s < levels[i + 1]` goes to bin `i` (`bins = levels.len() - 1`).
//! - Samples outside the range, and NaN samples, are counted in no bin.
//! - Counts are `u32`, exact modulo 2^32: a bin with more than 2^32 - 1 samples wraps.
//!   Inputs may hold more than 2^32 samples (their length is a `u64` in the kernel).
//!
//! # What each call does
//! One launch of the kernel of `warpsafe::histogram` (see there): blocks of 256 threads,
//! or [`LARGE_INPUT_BLOCK_THREADS`] for large inputs (2^24 `u8` samples and more on an
//! H100), in a persistent grid of at
//! most `blocks_per_multiprocessor` blocks per multiprocessor and never more than are
//! resident at once (a second wave would double the time), fewer for small inputs (each
//! thread gets at least two 16-byte loads, and one block per multiprocessor until each
//! thread has 32); per block, private copies of the
//! bins in shared memory (one per lane, fewer when the block's share of the input is
//! small, so that clearing and merging them costs less than the samples; with 16 copies
//! or more, one copy in a block whose first 32 vectors have half their first samples in
//! one bin, as data with one dominant value has, where copies cost and buy nothing),
//! added into `counts` with device-scope atomics once the launch's first block has zeroed
//! it. Histograms too large for 48 KiB of shared memory (more than 12288 bins times active
//! channels) count into `counts` directly. The two words through which the first block
//! says that it has zeroed the output are owned by the `Histogram`, with a launch number
//! (epoch) that tells each launch's use of them from earlier ones', so nothing needs
//! resetting between calls, not even after a failed one.
//!
//! # Errors
//! - [`Error::InvalidArgument`]: no bins; even bounds with `lower >= upper`, a NaN bound,
//!   an integer width over 2^32 or an `f32` width or scale that is not finite; fewer than
//!   2 levels, or levels not strictly increasing (a NaN level included); a counts buffer
//!   whose length is not `bins * ACTIVE`; a sample count that is not a multiple of
//!   `CHANNELS`; options out of range.
//! - [`Error::InputTooLarge`]: `bins * ACTIVE` past 2^32 - 1.
//! - [`Error::Unsupported`]: a buffer or stream of another device.
//! - A sample type and channel layout without kernels does not compile
//!   (`Histogram<u16, 4, 4>` needs `BuiltIn: HistogramKernels<u16, 4, 4>`, which warpsafe
//!   does not have; declare the kernels with `warpsafe::histogram_kernels!` in your
//!   kernel crate and name them with a type of yours: [`HistogramKernels`]).

use std::cmp::Ordering;
use std::marker::PhantomData;

use warpsafe::histogram::{self as kernel_histogram, BinParams, Copies, Sample};

use crate::{kernel_args, ptx, Device, DeviceBuffer, Error, Function, LaunchConfig, Program, Stream};

/// A sample type's histogram kernels, as `warpsafe::histogram_kernels!` declares them,
/// and their program.
#[derive(Clone, Copy, Debug)]
pub struct HistogramKernel {
    /// The kernel crate.
    pub program: Program,
    /// The even-bins kernels, indexed by division mode (`BinParams::division`, one of
    /// `warpsafe::histogram::DIVIDE_*`); one for `f32`, whose mode is 0.
    pub even: &'static [&'static warpsafe::kernel::UntypedKernel],
    /// The range-bins kernel.
    pub range: &'static warpsafe::kernel::UntypedKernel,
}

/// A set of histogram kernels for samples of `S` in `CHANNELS` interleaved channels, the
/// first `ACTIVE` counted, named by a type of its own: a [`Histogram`]'s last parameter.
/// [`BuiltIn`] names warpsafe's; for another layout, declare its kernels in your kernel
/// crate with `warpsafe::histogram_kernels!` and implement this for a type of yours
/// (`Histogram<u16, 2, 2, MyKernels>`).
///
/// # Safety
/// [`HistogramKernels::kernel`] returns the kernels that `warpsafe::histogram_kernels!`
/// declared for `S`, `CHANNELS` and `ACTIVE`, `even` in that macro's order, and the
/// program that holds them: the `Histogram` launches them with samples of `S` and bins
/// sized for `ACTIVE` channels, so kernels of another type or layout would read and
/// write outside its buffers. (A kernel listed in another kernel's place, the wrong
/// division mode or even bins for range bins, stops the launch with a trap rather than
/// count: it checks the binning it is given.)
pub unsafe trait HistogramKernels<S: Sample, const CHANNELS: usize, const ACTIVE: usize> {
    /// The kernels.
    fn kernel() -> HistogramKernel;
}

/// warpsafe's own histogram kernels (in `warpsafe-entry`), every [`Histogram`]'s unless
/// it names others: `u8` samples in 1 channel, in 4 with all 4 counted and in 4 with 3
/// counted; `u16`, `i32` and `f32` samples in 1 channel.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltIn;

macro_rules! builtin_histograms {
    ($($t:ty, $channels:literal, $active:literal => [$($even:ident),+], $range:ident;)*) => {$(
        // SAFETY: warpsafe-entry's `histogram_kernels!` kernels of this layout, in its order.
        unsafe impl HistogramKernels<$t, $channels, $active> for BuiltIn {
            fn kernel() -> HistogramKernel {
                use warpsafe_entry::histogram as k;
                static EVEN: &[&warpsafe::kernel::UntypedKernel] = &[$(k::$even.untyped()),+];
                HistogramKernel { program: ptx::ENTRY, even: EVEN, range: &k::$range }
            }
        }
    )*};
}

builtin_histograms! {
    u8, 1, 1 => [
        warpsafe_histogram_identity_u8_1c1, warpsafe_histogram_magic_u8_1c1,
        warpsafe_histogram_wide_u8_1c1, warpsafe_histogram_every_u8_1c1
    ], warpsafe_histogram_range_u8_1c1;
    u8, 4, 4 => [
        warpsafe_histogram_identity_u8_4c4, warpsafe_histogram_magic_u8_4c4,
        warpsafe_histogram_wide_u8_4c4, warpsafe_histogram_every_u8_4c4
    ], warpsafe_histogram_range_u8_4c4;
    u8, 4, 3 => [
        warpsafe_histogram_identity_u8_4c3, warpsafe_histogram_magic_u8_4c3,
        warpsafe_histogram_wide_u8_4c3, warpsafe_histogram_every_u8_4c3
    ], warpsafe_histogram_range_u8_4c3;
    u16, 1, 1 => [
        warpsafe_histogram_identity_u16_1c1, warpsafe_histogram_magic_u16_1c1,
        warpsafe_histogram_wide_u16_1c1, warpsafe_histogram_every_u16_1c1
    ], warpsafe_histogram_range_u16_1c1;
    i32, 1, 1 => [
        warpsafe_histogram_identity_i32_1c1, warpsafe_histogram_magic_i32_1c1,
        warpsafe_histogram_wide_i32_1c1
    ], warpsafe_histogram_range_i32_1c1;
    f32, 1, 1 => [warpsafe_histogram_even_f32_1c1], warpsafe_histogram_range_f32_1c1;
}

/// Launch settings of a [`Histogram`] (the defaults suit every input size; the
/// benchmark sweeps them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramOptions {
    /// Threads per block: a multiple of 32 from 32 to 1024; `None` (the default) picks 256,
    /// or [`LARGE_INPUT_BLOCK_THREADS`] for large inputs (see [`Histogram::plan`]).
    pub block_threads: Option<u32>,
    /// The most blocks per multiprocessor of the persistent grid, 1 to 32 (4 by default);
    /// small inputs get 1 whatever this says, and more than 2 only when the blocks keep
    /// [`FEWEST_COPIES_FOR_MORE_BLOCKS`] copies (see [`Histogram::plan`]).
    pub blocks_per_multiprocessor: u32,
    /// Private copies of the bins per block: a power of two from 1 to 32, lowered to what
    /// fits 48 KiB of shared memory; `None` (the default) picks them from the input size.
    pub copies: Option<u32>,
    /// A fixed grid (for sweeps), at least 1, lowered to one wave of resident blocks;
    /// `None` (the default) plans it from the input size and `blocks_per_multiprocessor`.
    pub blocks: Option<u32>,
    /// Private copies a block keeps instead when its first samples concentrate in one bin
    /// (`warpsafe::histogram`, "Concentrated samples"): a power of two from 1 to 32 (1 by
    /// default), lowered to `copies`; 32 never looks at the data. With `copies: None`,
    /// blocks look only when the plan gives them at least 16 copies (see
    /// [`Histogram::plan`]).
    pub concentrated_copies: u32,
}

impl Default for HistogramOptions {
    fn default() -> HistogramOptions {
        HistogramOptions {
            block_threads: None,
            blocks_per_multiprocessor: 4,
            copies: None,
            blocks: None,
            concentrated_copies: 1,
        }
    }
}

/// Dynamic shared memory a kernel gets without opting in to more (48 KiB on every GPU
/// since sm_70): the private copies must fit in it.
const SHARED_WITHOUT_OPT_IN: u64 = 48 * 1024;

/// Samples a block should have per word of private copies it clears and merges, when the
/// copies are picked from the input size. Measured on an H100 (2026-11-26, `histogram-bench
/// --copies 1,2,4,8,16 --blocks-per-sm 1,2`, 256 bins of `u8`): clearing and merging the
/// copies is a fixed cost per block that more copies only repay with many samples per
/// block (uniform data: 1-2 copies best up to 2^22 samples, 16-32 from 2^24; data with
/// 90 % in one bin gains nothing from copies, since the hardware merges a warp's
/// increments of one address); 16 samples per word picks about that.
const SAMPLES_PER_COPY_WORD: u64 = 16;

/// The fewest private copies with which blocks of an automatic plan look at their data
/// before counting (`warpsafe::histogram`, "Concentrated samples"). Measured on an H100
/// (2026-11-26, `histogram-bench --concentrated-copies 32`, 256 bins of `u8`): the look
/// holds a block at its first barrier until warp 0's first loads are back, 0.3-0.7 us
/// on uniform samples from 2^16 to 2^28; with 90 % of the samples in one bin it saved
/// 1.2 us at 2^24 and 2.2 us at 2^25 (16 copies), 0.7 at 2^26 (32), but lost 0.2 us at
/// 2^22 (4 copies) and saved 0.2 at 2^23 (8): fewer copies cost too little to repay it.
const LOOK_FROM_COPIES: u32 = 16;

/// The fewest 16-byte sample vectors a thread reads before the grid stops growing: a
/// small input is spread over this many per thread (half a tile of
/// `warpsafe::histogram::VECTORS_PER_THREAD`), so that it reaches twice as many
/// multiprocessors as whole tiles would, each counting half as long.
const MIN_VECTORS_PER_THREAD: u64 = 2;

/// The plan puts more than 2 blocks on a multiprocessor only when each block still gets
/// at least this many copies (with `copies: None`). Measured on an H100 (2026-11-26,
/// bench/results/2026-11-26-h100/histogram-blocks-1bab932.txt), `u8` samples, uniform and
/// skewed: at 2^25, 4 blocks per SM (8 copies each) took 20.4 and 16.5 us against 16.4
/// and 12.5 with 2 (16 copies); at 2^26 (16 against 32 copies) 32.4 and 31.2 against
/// 32.9 and 31.6; at 2^28 (32 copies either way) 95.4 and 94.6 against 104.5 and 103.3.
pub const FEWEST_COPIES_FOR_MORE_BLOCKS: u32 = 16;

/// Inputs of at most this many 16-byte vectors per thread of one block per multiprocessor
/// get one block per multiprocessor, not a full wave: a second block per multiprocessor
/// doubles the blocks that clear, merge and hand off their copies, which cost more than it
/// saves while each thread reads only a few tiles (H100, 2^22 `u8` samples: 6.4-7.1 us
/// with 132 blocks against 7.6-8.9 us with 264; from 2^26 the second block pays).
const ONE_BLOCK_PER_SM_VECTORS: u64 = 32;

/// The block size of automatic plans for inputs of more than
/// `LARGE_INPUT_VECTORS_PER_THREAD` (16) 16-byte vectors per thread of one 256-thread block
/// per multiprocessor (2^24 `u8` samples and more on an H100). Measured on an H100
/// (2026-11-27, `histogram-bench --block-threads 128,512,1024`, 256 bins of `u8`, the
/// same run): 512 threads took 10.60 / 8.37 us (uniform / skewed) at 2^24 against 11.20 /
/// 9.41 with 256, 12.68 / 11.87 at 2^25 against 16.24 / 12.63, 29.41 / 28.23 at 2^26
/// against 31.25 / 30.52 and 94.56 / 92.61 at 2^28 against 94.89 / 93.53 (twice the warps
/// per block: at 2^24 one 256-thread block per multiprocessor left the loads' latency
/// exposed), but were slower up to 2^23 (5.90 / 5.22 against 5.10 / 5.17 at 2^20: fewer
/// blocks, more copies to clear); 1024 threads were slower than 512 everywhere.
pub const LARGE_INPUT_BLOCK_THREADS: u32 = 512;

/// See [`LARGE_INPUT_BLOCK_THREADS`]: half of [`ONE_BLOCK_PER_SM_VECTORS`], so 2^23 `u8`
/// samples on 132 multiprocessors (15.5 vectors per thread) keep 256 threads and 2^24
/// (31) take 512.
const LARGE_INPUT_VECTORS_PER_THREAD: u64 = 16;

/// How one launch runs: what [`Histogram::plan`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramPlan {
    /// Threads per block.
    pub threads: u32,
    /// Blocks of the grid.
    pub blocks: u32,
    /// Private copies of the bins per block; 0 for the global-atomics path.
    pub copies: u32,
    /// Private copies of a block whose first samples concentrate in one bin (at most
    /// `copies`; equal to it when blocks do not look; 0 for the global-atomics path).
    pub concentrated_copies: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
}

/// Counts samples of `S` into bins (module docs): `CHANNELS` interleaved channels, the
/// first `ACTIVE` counted, with the kernels that `K` names.
pub struct Histogram<S: Sample, const CHANNELS: usize = 1, const ACTIVE: usize = 1, K = BuiltIn> {
    device: Device,
    function: Function,
    params: BinParams,
    range: bool,
    /// The levels of range bins, on the device: held so that the address in `params`
    /// stays valid.
    _levels: Option<DeviceBuffer<S::Level>>,
    options: HistogramOptions,
    /// The kernel's two hand-off words (`warpsafe::histogram`, "One launch"), zeroed at
    /// allocation, then holding earlier launches' epochs.
    handoff: DeviceBuffer<u64>,
    /// The last launch's epoch: each launch gets the next (1 the first), so no two
    /// launches over `handoff` share one (a `u64` does not wrap).
    epoch: u64,
    /// `(threads, blocks)`: for each block size a plan may take under the current
    /// options, how many blocks of it can be resident on one multiprocessor with the most
    /// shared memory a plan gives them (the kernel's registers usually decide): the
    /// persistent grid is never larger than one wave.
    resident_per_multiprocessor: Vec<(u32, u32)>,
    /// The stream of the waiting calls.
    stream: Stream,
    sample: PhantomData<fn(S) -> K>,
}

impl<S: Sample, const CHANNELS: usize, const ACTIVE: usize, K> std::fmt::Debug
    for Histogram<S, CHANNELS, ACTIVE, K>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("sample", &std::any::type_name::<S>())
            .field("channels", &CHANNELS)
            .field("active", &ACTIVE)
            .field("kernels", &std::any::type_name::<K>())
            .field("bins", &self.params.bins)
            .field("range", &self.range)
            .field("device", &self.device)
            .finish()
    }
}

/// An [`Error::InvalidArgument`] of a histogram.
fn invalid(problem: String) -> Error {
    Error::InvalidArgument { operation: "histogram", problem }
}

/// Refuses a buffer or stream of another device: a kernel must never get an address it
/// cannot reach.
fn check_device(device: &Device, on_device: bool) -> Result<(), Error> {
    if on_device {
        Ok(())
    } else {
        Err(Error::unsupported(format!(
            "histogram: a buffer or stream of another device than {}",
            device.name()
        )))
    }
}

impl<S: Sample, const CHANNELS: usize, const ACTIVE: usize, K: HistogramKernels<S, CHANNELS, ACTIVE>>
    Histogram<S, CHANNELS, ACTIVE, K>
{
    /// `bins` even bins per channel over `[lower, upper)` (module docs).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no bins or bounds that cannot be counted (module
    /// docs); [`Error::InputTooLarge`] for `bins * ACTIVE` past 2^32 - 1; loading the
    /// kernel or allocating the hand-off words.
    pub fn even(device: &Device, bins: u32, lower: S::Level, upper: S::Level) -> Result<Self, Error> {
        Self::check_bins(bins)?;
        let params = S::even(lower, upper, bins).ok_or_else(|| {
            invalid(format!(
                "even bins over [{lower:?}, {upper:?}): the lower bound must be below the upper, neither NaN, \
                 the width at most 2^32 for integer samples and finite for f32 samples, with a finite scale"
            ))
        })?;
        Self::new(device, params, false, None)
    }

    /// `levels.len() - 1` bins per channel, bin `i` holding `[levels[i], levels[i + 1])`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for fewer than 2 levels or levels that are not strictly
    /// increasing (NaN included); otherwise as for [`Histogram::even`].
    pub fn range(device: &Device, levels: &[S::Level]) -> Result<Self, Error> {
        if levels.len() < 2 {
            return Err(invalid(format!("{} levels: range bins need at least 2", levels.len())));
        }
        if let Some(i) =
            levels.windows(2).position(|pair| pair[0].partial_cmp(&pair[1]) != Some(Ordering::Less))
        {
            return Err(invalid(format!(
                "levels must increase strictly and not be NaN, but levels[{i}] = {:?} and levels[{}] = {:?}",
                levels[i],
                i + 1,
                levels[i + 1]
            )));
        }
        let bins = u32::try_from(levels.len() - 1).map_err(|_| Error::InputTooLarge {
            operation: "histogram bins",
            len: levels.len() - 1,
            max: u32::MAX as usize,
        })?;
        Self::check_bins(bins)?;
        let on_device = device.upload(levels)?;
        let params = BinParams::range(on_device.device_address(), bins);
        Self::new(device, params, true, Some(on_device))
    }

    fn check_bins(bins: u32) -> Result<(), Error> {
        if bins == 0 {
            return Err(invalid("0 bins: a histogram needs at least 1".to_string()));
        }
        if (bins as u64) * (ACTIVE as u64) > u32::MAX as u64 {
            return Err(Error::InputTooLarge {
                operation: "histogram bins times active channels",
                len: bins as usize * ACTIVE,
                max: u32::MAX as usize,
            });
        }
        Ok(())
    }

    fn new(
        device: &Device,
        params: BinParams,
        range: bool,
        levels: Option<DeviceBuffer<S::Level>>,
    ) -> Result<Self, Error> {
        let kernel = K::kernel();
        let entry = if range {
            kernel.range
        } else {
            *kernel.even.get(params.division as usize).ok_or_else(|| {
                Error::unsupported(format!(
                    "even bins with division mode {} (the HistogramKernel lists {} even-bins kernels)",
                    params.division,
                    kernel.even.len()
                ))
            })?
        };
        let function = device.load(&kernel.program)?.untyped_kernel(entry)?;
        let mut histogram = Histogram {
            device: device.clone(),
            function,
            params,
            range,
            _levels: levels,
            options: HistogramOptions::default(),
            resident_per_multiprocessor: Vec::new(),
            handoff: device.alloc_zeroed(2)?,
            epoch: 0,
            stream: device.stream()?,
            sample: PhantomData,
        };
        histogram.resident_per_multiprocessor = histogram.resident_blocks()?;
        Ok(histogram)
    }

    /// [`Histogram::resident_per_multiprocessor`] under the current options.
    fn resident_blocks(&self) -> Result<Vec<(u32, u32)>, Error> {
        let shared = kernel_histogram::shared_bytes(self.counts_len() as u64, self.fitting_copies()) as u32;
        let sizes = match self.options.block_threads {
            Some(threads) => vec![threads],
            None => vec![kernel_histogram::BLOCK_THREADS, LARGE_INPUT_BLOCK_THREADS],
        };
        sizes
            .into_iter()
            .map(|threads| {
                let resident =
                    self.device.max_active_blocks_per_multiprocessor(&self.function, threads, shared)?;
                Ok((threads, resident.max(1)))
            })
            .collect()
    }

    /// The most private copies 48 KiB of shared memory hold: 0 (global atomics) when not
    /// even one fits.
    fn fitting_copies(&self) -> u32 {
        let slots = self.counts_len() as u64;
        let mut fitting = kernel_histogram::MAX_COPIES;
        while fitting > 0 && kernel_histogram::shared_bytes(slots, fitting) > SHARED_WITHOUT_OPT_IN {
            fitting /= 2;
        }
        fitting
    }

    /// The same histogram with `options`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a block size, block count or copy count out of the
    /// ranges [`HistogramOptions`] gives.
    pub fn with_options(mut self, options: HistogramOptions) -> Result<Self, Error> {
        if let Some(threads) =
            options.block_threads.filter(|t| !t.is_multiple_of(32) || !(32..=1024).contains(t))
        {
            return Err(invalid(format!("{threads} threads per block: a multiple of 32 from 32 to 1024")));
        }
        if !(1..=32).contains(&options.blocks_per_multiprocessor) {
            return Err(invalid(format!(
                "{} blocks per multiprocessor: 1 to 32",
                options.blocks_per_multiprocessor
            )));
        }
        if options.blocks == Some(0) {
            return Err(invalid("a fixed grid of 0 blocks: at least 1".into()));
        }
        let copies_ok = |copies: u32| copies.is_power_of_two() && copies <= kernel_histogram::MAX_COPIES;
        if let Some(copies) = options.copies.filter(|&c| !copies_ok(c)) {
            return Err(invalid(format!("{copies} private copies: a power of two from 1 to 32")));
        }
        if !copies_ok(options.concentrated_copies) {
            return Err(invalid(format!(
                "{} private copies for concentrated samples: a power of two from 1 to 32",
                options.concentrated_copies
            )));
        }
        self.options = options;
        self.resident_per_multiprocessor = self.resident_blocks()?;
        Ok(self)
    }

    /// Bins per channel.
    pub fn bins(&self) -> u32 {
        self.params.bins
    }

    /// The length the counts buffer must have: `bins * ACTIVE`.
    pub fn counts_len(&self) -> usize {
        self.params.bins as usize * ACTIVE
    }

    /// The block size, grid, private copies and shared memory of a launch over `samples`
    /// samples.
    pub fn plan(&self, samples: usize) -> HistogramPlan {
        let slots = self.counts_len() as u64;
        let fitting = self.fitting_copies();
        let vectors = (samples as u64 / kernel_histogram::samples_per_vector::<S>() as u64).max(1);
        let multiprocessors = self.device.multiprocessor_count() as u64;
        let small = kernel_histogram::BLOCK_THREADS as u64;
        let threads = match self.options.block_threads {
            Some(threads) => threads,
            None if vectors > multiprocessors * small * LARGE_INPUT_VECTORS_PER_THREAD => {
                LARGE_INPUT_BLOCK_THREADS
            }
            None => kernel_histogram::BLOCK_THREADS,
        };
        let resident = self
            .resident_per_multiprocessor
            .iter()
            .find_map(|&(size, blocks)| (size == threads).then_some(blocks))
            .unwrap_or(1);
        let threads = threads as u64;
        // One wave: blocks past the resident ones would wait for a first block to end, and
        // the input would take twice as long as one wave of equal shares.
        let grid = |per_multiprocessor: u32| {
            let most_blocks = multiprocessors * per_multiprocessor as u64;
            let blocks = match self.options.blocks {
                Some(blocks) => (blocks as u64).min(multiprocessors * resident as u64),
                None => vectors.div_ceil(threads * MIN_VECTORS_PER_THREAD).clamp(1, most_blocks),
            };
            let copies = match self.options.copies {
                Some(copies) => copies.min(fitting),
                None if fitting == 0 => 0,
                None => {
                    let per_block = samples as u64 / blocks;
                    let mut copies = fitting;
                    while copies > 1 && slots * copies as u64 * SAMPLES_PER_COPY_WORD > per_block {
                        copies /= 2;
                    }
                    copies
                }
            };
            (blocks, copies)
        };
        let mut per_multiprocessor = if vectors <= multiprocessors * threads * ONE_BLOCK_PER_SM_VECTORS {
            1
        } else {
            self.options.blocks_per_multiprocessor.min(resident)
        };
        let (mut blocks, mut copies) = grid(per_multiprocessor);
        while per_multiprocessor > 2
            && self.options.copies.is_none()
            && self.options.blocks.is_none()
            && copies < FEWEST_COPIES_FOR_MORE_BLOCKS.min(fitting)
        {
            per_multiprocessor = (per_multiprocessor / 2).max(2);
            (blocks, copies) = grid(per_multiprocessor);
        }
        HistogramPlan {
            threads: threads as u32,
            blocks: blocks as u32,
            copies,
            concentrated_copies: match self.options.copies {
                None if copies < LOOK_FROM_COPIES => copies,
                _ => self.options.concentrated_copies.min(copies),
            },
            shared_bytes: kernel_histogram::shared_bytes(slots, copies) as u32,
        }
    }

    /// Counts `samples` into `counts` (overwriting it) and waits for the device.
    ///
    /// # Errors
    /// See the module docs.
    pub fn compute(
        &mut self,
        samples: &DeviceBuffer<S>,
        counts: &mut DeviceBuffer<u32>,
    ) -> Result<(), Error> {
        // SAFETY: both buffers are borrowed (counts mutably) until the stream is
        // synchronised below.
        unsafe { self.enqueue(None, samples, counts)? };
        self.stream.synchronize()
    }

    /// Enqueues the histogram of `samples` into `counts` on `stream` and returns without
    /// waiting.
    ///
    /// # Safety
    /// - Both buffers stay alive, and nothing else accesses them (nothing at all writes
    ///   `samples`), until `stream` has run the launch.
    /// - No other launch of this histogram runs while this one does (its hand-off words
    ///   serve one launch at a time): none enqueued on another stream is still running,
    ///   and none is enqueued on another stream (by `compute` or `compute_on`) before
    ///   `stream` has run this one. Two launches over the same words could each see the
    ///   other's epoch and wait forever.
    ///
    /// # Errors
    /// See the module docs.
    pub unsafe fn compute_on(
        &mut self,
        stream: &Stream,
        samples: &DeviceBuffer<S>,
        counts: &DeviceBuffer<u32>,
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(Some(stream), samples, counts) }
    }

    /// [`Histogram::compute_on`] on `stream`, or on this histogram's own stream.
    ///
    /// # Safety
    /// As for [`Histogram::compute_on`].
    unsafe fn enqueue(
        &mut self,
        stream: Option<&Stream>,
        samples: &DeviceBuffer<S>,
        counts: &DeviceBuffer<u32>,
    ) -> Result<(), Error> {
        let stream = stream.unwrap_or(&self.stream);
        let device = &self.device;
        check_device(device, samples.is_on(device) && counts.is_on(device) && stream.is_on(device))?;
        if counts.len() != self.counts_len() {
            return Err(invalid(format!(
                "the counts buffer holds {} elements but must hold bins * active channels = {} * {ACTIVE} = {}",
                counts.len(),
                self.params.bins,
                self.counts_len()
            )));
        }
        if !samples.len().is_multiple_of(CHANNELS) {
            return Err(invalid(format!(
                "{} samples are not whole pixels of {CHANNELS} interleaved channels",
                samples.len()
            )));
        }
        let plan = self.plan(samples.len());
        let config = LaunchConfig {
            shared_mem_bytes: plan.shared_bytes,
            ..LaunchConfig::linear(plan.blocks, plan.threads)
        };
        // Even integer bins that no sample value reaches count nothing: a launch over no
        // samples writes the zeros.
        let len = if self.params.nothing != 0 { 0 } else { samples.len() as u64 };
        let (mut samples, mut len, mut params) = (samples.device_address(), len, self.params);
        let mut copies = Copies { spread: plan.copies, concentrated: plan.concentrated_copies };
        self.epoch += 1;
        let (mut counts, mut handoff, mut epoch) =
            (counts.device_address(), self.handoff.device_address(), self.epoch);
        let args = kernel_args![samples, len, params, copies, counts, handoff, epoch];
        // SAFETY: histogram(samples, len, params, copies, counts, handoff, epoch): a 1-D
        // grid of at most 32 blocks per multiprocessor of a multiple of 32 threads, the
        // shared bytes the spread copies need (0 or a power of two up to 32, fitting 48
        // KiB; the concentrated copies a power of two up to them, checked options);
        // `params` from `Sample::even` or `BinParams::range` over levels checked strictly
        // increasing and held on this device by `self.levels`; the samples are a whole
        // allocation (256-byte aligned) of `len` samples, the counts buffer `bins *
        // ACTIVE` words (checked), both of this device and untouched by anything else
        // until the stream has run (caller); the hand-off words are this histogram's, used
        // by one launch at a time (caller), allocated zeroed and since written only by its
        // launches, with epochs below this one.
        unsafe { self.device.launch_raw_on(stream, &self.function, config, &args) }
    }
}
