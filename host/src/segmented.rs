//! Segmented reductions on a [`Device`]: [`SegmentedReducer`], one result per segment of
//! an array, one kernel launch per call (two for the balanced strategy on an input that
//! is not small, below).
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
//! pub enum SegmentStrategy { Auto, Thread, Tile4, Tile16, Warp, Block, Balanced, Scan }
//! pub const SCAN_MIN_BYTES: u64 = 256 << 20;
//! pub struct SegmentedOptions { pub strategy: SegmentStrategy, pub max_blocks: Option<u32>,
//!                               pub long_elements: Option<u64>, pub chunk_elements: Option<u64> }
//! pub struct SegmentedKernels { pub program: Program, pub thread: &'static Kernel, pub tile4: &'static Kernel,
//!                               pub tile16: &'static Kernel, pub warp: &'static Kernel, pub block: &'static Kernel,
//!                               pub balanced_batches: &'static Kernel, pub balanced_chunks: &'static Kernel,
//!                               pub balanced_small: &'static Kernel, pub scan: &'static Kernel }
//! pub unsafe trait SegmentedReduction<T: Pod>: Operator<T> + Default { fn kernels() -> SegmentedKernels; }
//! impl SegmentStrategy {
//!     pub fn for_average(len: u64, segments: u64) -> SegmentStrategy;
//!     pub fn for_offsets<T>(len: u64) -> SegmentStrategy;
//!     pub fn for_fixed<T, O: Operator<T>>(len: u64, segment_len: u64) -> SegmentStrategy;
//! }
//! impl<T: Pod, O: SegmentedReduction<T>> SegmentedReducer<T, O> {
//!     pub fn new(device: &Device) -> Result<Self, Error>;
//!     pub fn with_options(device: &Device, options: SegmentedOptions) -> Result<Self, Error>;
//!     pub fn options(&self) -> SegmentedOptions;
//!     pub fn set_strategy(&mut self, strategy: SegmentStrategy);
//!     pub fn strategy_for_offsets(&self, len: u64) -> SegmentStrategy;           // never Auto
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
//! combination). [`SegmentStrategy::Auto`] picks [`SegmentStrategy::Balanced`] for
//! offsets, or [`SegmentStrategy::Scan`] for an input of at least [`SCAN_MIN_BYTES`] (256
//! MiB) whose element size divides 16 ([`SegmentStrategy::for_offsets`]): their lengths
//! are unknown on the host (reading them would cost a pass and a copy), and one huge
//! segment among short ones would otherwise be read by the few workers the average length
//! gives it (a power-law mix ran at 0.2 % of the read ceiling that way); both read every
//! element whatever the lengths. For the fixed form with a commutative operator and segments of a power
//! of two of bytes from 4 to 512 (`f32` of length 1 to 128; `f64` of length 1 to 64:
//! `warpsafe::reduce::segmented::reads_fixed_rows`) it picks
//! [`SegmentStrategy::Thread`], whose kernel reads such segments in warp rows of 16-byte
//! vectors ([`SegmentStrategy::for_fixed`]); for other fixed lengths, where every segment
//! is alike, it picks by the length `len / segments`:
//!
//! | average length | strategy | who reduces a segment |
//! | --- | --- | --- |
//! | up to 4 | [`SegmentStrategy::Thread`] | one thread (many segments per thread) |
//! | up to 48 | [`SegmentStrategy::Tile4`] | 4 lanes of a warp |
//! | up to 256 | [`SegmentStrategy::Tile16`] | 16 lanes |
//! | up to 2048, or up to 8192 with at least 1024 segments | [`SegmentStrategy::Warp`] | a warp |
//! | longer | [`SegmentStrategy::Block`] | a block of 512 threads (256 from 512 segments) |
//!
//! The grid is at most one wave of resident blocks (multiprocessors times the kernel's
//! occupancy, capped by [`SegmentedOptions::max_blocks`]); workers loop over segments.
//! For a commutative operator over a type whose size divides 16 (every built-in pair),
//! every strategy reads the 16-byte aligned vectors of each segment with one load each,
//! 4 loads in flight per thread, and only the few elements before the first and after
//! the last vector one by one. The fixed form's warp rows: each warp reads 2 KiB rows of
//! the input, each lane 4 vectors of 16 bytes; a lane folds the 1, 2 or 4 segments
//! inside each vector and writes their results together (one 16-byte store for `f32` or
//! a 64-bit type of length 1), or 2 to 32 lanes combine a segment of 32 to 512 bytes
//! with shuffles; the segments after the last whole row are reduced one per thread as
//! usual.
//!
//! [`SegmentStrategy::Balanced`] takes each segment by its own length, in two launches on
//! the same stream. The first gives each warp 32 neighbouring segments (one offsets read
//! per lane): a segment of at most 16 bytes is reduced by its own lane, up to 256 bytes by
//! a 4-lane tile, up to [`SegmentedOptions::long_elements`] (default
//! `warpsafe::reduce::segmented::LONG_SEGMENT_BYTES`, 32 KiB, over the element size) by
//! the whole warp; a longer one is cut into chunks of
//! [`SegmentedOptions::chunk_elements`] (default `chunk_bytes(input bytes)`: the input
//! over 512, a power of two from 16 to 128 KiB) and handed to the
//! second launch, where every block of the grid takes chunks in turn and the block that
//! finishes a segment's last chunk folds the chunks' partials in order. A small input,
//! of at most 16 `long_elements` elements and 16 384 segments
//! (`warpsafe::reduce::segmented::is_small_input`: 512 KiB of `f32`s by default), takes
//! one launch instead, a kernel of its own
//! (`warpsafe::reduce::segmented::small_input_segments`): a warp per segment, and the
//! segments longer than a 32nd of the input (and than 8 KiB) reduced by a whole block
//! after its warps' ones; a block per segment while they are fewer than a wave. At that
//! size what a call waits for is the longest chain of dependent round trips to memory,
//! which a warp per segment keeps short: the power-law mix runs at 1.1-1.5x CUB from
//! 2^10 to 2^17 elements on an H100 (2026-11-27), where the batch kernel and the chunk
//! launch had run at 0.6-1.1x. The reducer
//! owns the
//! hand-off's scratch (two counters, descriptors and tickets, one partial per chunk: about
//! 0.5 % of the input's bytes for `f32`), allocated zeroed at the first balanced call and
//! grown for a longer input; calls with a chunk launch use the two counters in turn and
//! each chunk launch clears the one the next call uses, so there is no memset or
//! clearing launch between calls and no block of the chunk launch waits for the others. For an
//! input so large that the scratch's counters could overflow (far past 2^40 elements)
//! the call falls back to the fixed-length choice.
//!
//! [`SegmentStrategy::Scan`] (offsets only; `warpsafe::scan::segmented`) reads the input
//! as a scan in windows of 256 `f32`s a warp, one launch: every warp takes chunks of
//! windows by a ticket (`warpsafe::scan::segmented::chunk_windows`: one wave of chunks
//! up to 384 MiB of input, 16 Ki `f32`s each beyond), finds its first segment by a
//! 32-way search over the offsets,
//! and writes each segment that ends in its chunk; a segment that crosses chunks gets its
//! earlier partials by a look-back over the chunks' published carries. Its scratch is
//! epoch-tagged status words (one carry per chunk, grown with the input) and a
//! self-resetting ticket counter, as the scan's: no clearing between calls. For the fixed
//! form, or an element size that does not divide 16, the call takes the strategy `Auto`
//! would. Measured on an H100: faster than the balanced strategy on the power-law mix
//! from 2^26 `f32`s on, slower below ([`SCAN_MIN_BYTES`]), hence `Auto`'s threshold.
//!
//! The default chunk size was measured on an H100 (`warpsafe::reduce::segmented::chunk_bytes`);
//! the other constants are first-principles choices for it.
//!
//! # Determinism
//! A segment's result depends only on its elements, its start address modulo 16 (where
//! the 16-byte vectors begin), for the fixed form whether it lies in a whole warp row of
//! 2 KiB (fixed by the length), the strategy (for the balanced one: with its
//! `long_elements` and `chunk_elements`, through which class the segment's length puts
//! it in; in a small input, whether the segment is longer than a 32nd of the input and
//! 8 KiB, a block's fold, or a warp's; for the scan strategy, through the chunk length,
//! the input's length; for the block strategy, through its block size, the segment
//! count: [`SegmentStrategy::block_threads`]) and the operator's
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
//!   lowest bad segment. The other segments' results are written as usual. The scan
//!   strategy cannot tell which segment is bad (a scan needs monotonic offsets), only that
//!   one is: it counts the segments it wrote with valid offsets, and when that count falls
//!   short the waiting call runs the balanced strategy again, which reports the lowest bad
//!   segment and writes the others.
//!
//! [`Error::Unsupported`]: a buffer or stream of another device. An operator for another
//! element type does not compile.
//!
//! The `_on` forms only enqueue: they cannot report bad offsets (the kernel still reads
//! nothing out of range and writes the identity for such segments; with the scan strategy
//! the other segments' results are then unspecified, though each is written at most once
//! and nothing outside the buffers is touched).

use std::marker::PhantomData;

use bytemuck::Pod;
use warpsafe::op::{Max, Min, Operator, Sum};
use warpsafe::reduce::segmented::{
    self as kernel, BadSegment, BLOCK_THREADS, CHUNK_BITS, DESCRIPTOR_WORDS, LONG_SEGMENT_BYTES, NO_ERROR,
    SEGMENT_BLOCK_THREADS,
};
use warpsafe::scan::segmented as windows;

use crate::lookback::LookBackScratch;
use crate::{
    kernel_args, ptx, Device, DeviceBuffer, Error, Function, LaunchConfig, Program, SegmentsProblem, Stream,
};

/// With at least [`MANY_SEGMENTS`] segments the warp strategy, not the block one, takes
/// average lengths up to this many elements: a block of 512 threads reads a segment of
/// 4096 `f32`s in one step with half its threads idle, and its registers leave 2 blocks
/// per SM, so with enough segments a warp each keeps more bytes in flight. Measured on an
/// H100 (2026-11-27, `segreduce-bench --strategy auto,warp,block --patterns
/// 2048,4096,8192,16384,32768 --sizes 20,24,28`, `f32` sums), warp against block: L = 4096
/// at 2^24 27.2 against 41.3 us and at 2^28 354 against 553 (CUB 25.0 and 339); L = 8192
/// 29.2 against 33.2 and 357 against 445; with fewer segments the block wins (L = 4096 at
/// 2^20, 256 segments: 4.2 against 5.5 us). Up to 16384 until the block strategy met once
/// a segment (48a5c3c); since, on an H200 (2026-11-28, the same command with sizes
/// 20,24,25,26,28, `bench/results/2026-11-28-h200/segmented-warp-block-session35.txt`),
/// L = 16384 takes 36.5 against 37.0 us at 2^25 and 242.9 against 251.6 at 2^28 by block
/// (66.2 against 65.7 at 2^26), while at L = 8192 the warp still wins (20.0 against 21.2
/// at 2^24, 243.7 against 256.6 at 2^28). Not yet measured on an H100.
const MANY_WARP_MAX: u64 = 8192;

/// The segment count from which [`MANY_WARP_MAX`] applies (a constant rather than a
/// function of the GPU, so that `Auto` picks the same strategy, and so the same bits, on
/// every device and on the emulator). Measured on an H200 (2026-11-29, `segreduce-bench
/// --quick --strategy warp,block --patterns 3072,4096,6144,8192 --sizes 21,22,23`, three
/// processes, block strategy by segment count;
/// `bench/results/2026-11-29-h200/segmented-warp-block-by-count.txt`): from about 683
/// segments on the warp wins at every length measured (L = 3072 at 1366 segments 4.9-5.0
/// against 6.1-6.2 us, L = 4096 at 1024 4.9 against 5.4-5.6, L = 8192 at 1024 6.7-6.8
/// against 7.1-7.2), with 512 or fewer the block wins or ties (L = 8192 at 512 5.0-5.1
/// against 5.7, L = 4096 at 512 a tie); 2048 until then had left L = 3072-8192 at 2^22-2^23
/// to the block at 0.84-0.94x CUB.
const MANY_SEGMENTS: u64 = 1024;

/// The block strategy's block size with at least [`MANY_BLOCK_SEGMENTS`] segments; with
/// fewer, [`SEGMENT_BLOCK_THREADS`] (512). The kernel is the same (it reads its block size
/// at run time; its sm_90 launch bounds, 512 threads and 2 blocks per SM, give it 64
/// registers, so 4 blocks of 256 fit an SM): a wave of 512-thread blocks holds 2 an SM
/// (264 on a GPU of 132 SMs), so a few hundred long segments each get a block of 512 and
/// its loads, while with more segments than that every block walks several and blocks
/// half as large keep twice as many segments in flight, each barrier holding back 8
/// warps instead of 16. Measured on an H200 (2026-11-28, `segreduce-bench --quick
/// --strategy auto,block --patterns 4096,16384,32768,65536 --sizes 20,24,25,28`, `f32`
/// sums, 512 and 256 threads interleaved in two rounds, CUB in the same command;
/// `bench/results/2026-11-28-h200/segmented-block-256-threads-experiment.txt`), 256
/// against 512 threads: L = 16384 at 2^24 (1024 segments) 19.5-19.7 against 20.4-20.5
/// us, at 2^25 34.5 against 36.3 (CUB 19.0 and 33.8); L = 32768 at 2^24 (512 segments)
/// 19.2 against 19.9-20.1; L = 65536 at 2^25 (512) 34.0 against 34.8-35.2; but with
/// fewer segments 512 wins: L = 65536 at 2^24 (256 segments) 19.2-19.3 against 20.0,
/// at 2^20 (16) 4.5 against 5.5, L = 16384 at 2^20 (64) 3.7-4.0 against 4.4-4.6.
pub const MANY_SEGMENTS_BLOCK_THREADS: u32 = 256;

/// The segment count from which the block strategy's blocks have
/// [`MANY_SEGMENTS_BLOCK_THREADS`] threads (the smallest count measured to gain; a
/// constant rather than a function of the GPU, so that the same input gets the same
/// block size, and so the same bits, on every device and on the emulator).
pub const MANY_BLOCK_SEGMENTS: u64 = 512;

/// The segment-count class of a call with `segments` segments: 0 below
/// [`MANY_BLOCK_SEGMENTS`], 1 from it. It picks the block strategy's block size
/// ([`SegmentStrategy::block_threads`]) and so which of a strategy's two waves
/// (`SegmentedReducer::resident`) the call launches.
fn segment_class(segments: u64) -> usize {
    usize::from(segments >= MANY_BLOCK_SEGMENTS)
}

/// Inputs of offsets with at least this many bytes take [`SegmentStrategy::Scan`] under
/// `Auto`. Measured on an H100 (2026-11-28, `segreduce-bench --quick --strategy
/// auto,balanced,scan --patterns power-law`, `f32`,
/// `bench/results/2026-11-28-h100/segmented-scan-chunks-lookback.txt`): the scan strategy
/// took 546 us at 2^28 elements (1 GiB) against the balanced strategy's 663, 316 against
/// 351 at 2^27 and 181.5 against 194.3 at 2^26 (256 MiB), but 115.8 against 107.4 at 2^25
/// and 80.7 against 64.6 at 2^24.
pub const SCAN_MIN_BYTES: u64 = 256 << 20;

/// Who reduces one segment (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SegmentStrategy {
    /// [`SegmentStrategy::for_offsets`] for offsets, [`SegmentStrategy::for_fixed`] for a
    /// fixed length (module docs).
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
    /// A block per segment: of [`SEGMENT_BLOCK_THREADS`] (512) threads, or of
    /// [`MANY_SEGMENTS_BLOCK_THREADS`] (256) from [`MANY_BLOCK_SEGMENTS`] segments on
    /// ([`SegmentStrategy::block_threads`]).
    Block,
    /// By each segment's own length, two launches: a lane, 4 lanes or a warp per segment
    /// up to a long length, the chunks of longer ones spread over all blocks (module docs).
    Balanced,
    /// Offsets only: one launch that reads the input as a scan in windows, whatever the
    /// lengths, and carries the partials of segments that cross tiles by a look-back
    /// (module docs). For the fixed form, or a type whose size does not divide 16, the
    /// call takes the strategy `Auto` would.
    Scan,
}

impl SegmentStrategy {
    /// Every strategy but [`SegmentStrategy::Auto`]: those for one segment length, in
    /// order of growing length, then [`SegmentStrategy::Balanced`] and
    /// [`SegmentStrategy::Scan`].
    pub const ALL: [SegmentStrategy; 7] = [
        SegmentStrategy::Thread,
        SegmentStrategy::Tile4,
        SegmentStrategy::Tile16,
        SegmentStrategy::Warp,
        SegmentStrategy::Block,
        SegmentStrategy::Balanced,
        SegmentStrategy::Scan,
    ];

    /// The strategy [`SegmentStrategy::Auto`] picks for `segments` segments over `len`
    /// elements (module docs).
    pub fn for_average(len: u64, segments: u64) -> SegmentStrategy {
        match len / segments.max(1) {
            0..=4 => SegmentStrategy::Thread,
            5..=48 => SegmentStrategy::Tile4,
            49..=256 => SegmentStrategy::Tile16,
            257..=2048 => SegmentStrategy::Warp,
            2049..=MANY_WARP_MAX if segments >= MANY_SEGMENTS => SegmentStrategy::Warp,
            _ => SegmentStrategy::Block,
        }
    }

    /// The strategy [`SegmentStrategy::Auto`] picks for offsets over `len` elements of `T`
    /// (module docs): [`SegmentStrategy::Scan`] for an input of at least
    /// [`SCAN_MIN_BYTES`] whose element size divides 16, else
    /// [`SegmentStrategy::Balanced`]. By the length only, so the same on every device.
    pub fn for_offsets<T>(len: u64) -> SegmentStrategy {
        let bytes = len.saturating_mul(std::mem::size_of::<T>() as u64);
        if windows::reads_windows::<T>() && bytes >= SCAN_MIN_BYTES {
            SegmentStrategy::Scan
        } else {
            SegmentStrategy::Balanced
        }
    }

    /// The strategy [`SegmentStrategy::Auto`] picks for the fixed form with segments of
    /// `segment_len` elements of `T` over `len` elements, with operator `O` (module docs):
    /// the thread strategy when its kernel reads them in warp rows of 16-byte vectors
    /// (`O` commutes and a segment has a power of two of bytes from 4 to 512:
    /// `warpsafe::reduce::segmented::reads_fixed_rows`), else
    /// [`SegmentStrategy::for_average`].
    pub fn for_fixed<T, O: Operator<T>>(len: u64, segment_len: u64) -> SegmentStrategy {
        if O::COMMUTATIVE && kernel::reads_fixed_rows::<T>(segment_len) {
            SegmentStrategy::Thread
        } else {
            SegmentStrategy::for_average(len, len.div_ceil(segment_len.max(1)))
        }
    }

    /// Threads that work on one segment of a call with `segments` segments; `None` for
    /// `Auto`, `Balanced` and `Scan`.
    fn lanes(self, segments: u64) -> Option<u64> {
        match self {
            SegmentStrategy::Auto | SegmentStrategy::Balanced | SegmentStrategy::Scan => None,
            SegmentStrategy::Thread => Some(1),
            SegmentStrategy::Tile4 => Some(4),
            SegmentStrategy::Tile16 => Some(16),
            SegmentStrategy::Warp => Some(32),
            SegmentStrategy::Block => Some(self.block_threads(segments) as u64),
        }
    }

    /// Threads per block of the strategy's launch for a call with `segments` segments:
    /// for [`SegmentStrategy::Block`] [`SEGMENT_BLOCK_THREADS`] (512), or
    /// [`MANY_SEGMENTS_BLOCK_THREADS`] (256) from [`MANY_BLOCK_SEGMENTS`] segments on
    /// (a block's order of combination depends on its size, so float results do too);
    /// for every other strategy `warpsafe::reduce::segmented::BLOCK_THREADS` (256).
    pub fn block_threads(self, segments: u64) -> u32 {
        match self {
            SegmentStrategy::Block if segment_class(segments) == 1 => MANY_SEGMENTS_BLOCK_THREADS,
            SegmentStrategy::Block => SEGMENT_BLOCK_THREADS,
            _ => BLOCK_THREADS,
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
    /// [`SegmentStrategy::Balanced`]: segments longer than this many elements are split
    /// into chunks over all blocks (`None`: [`LONG_SEGMENT_BYTES`]` / size_of::<T>()`).
    pub long_elements: Option<u64>,
    /// [`SegmentStrategy::Balanced`]: elements per chunk of a long segment (`None`:
    /// `warpsafe::reduce::segmented::chunk_bytes(input bytes) / size_of::<T>()`, from 16
    /// to 128 KiB by the input's length).
    pub chunk_elements: Option<u64>,
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
    /// The balanced strategy's batches of 32 segments.
    pub balanced_batches: &'static warpsafe::kernel::UntypedKernel,
    /// The balanced strategy's chunks of long segments.
    pub balanced_chunks: &'static warpsafe::kernel::UntypedKernel,
    /// The balanced strategy's one kernel for small inputs (a warp per segment, a block
    /// for a long one).
    pub balanced_small: &'static warpsafe::kernel::UntypedKernel,
    /// The scan strategy's kernel (offsets only).
    pub scan: &'static warpsafe::kernel::UntypedKernel,
}

/// An operator a [`SegmentedReducer`] can apply to `T`: its kernels. Implemented for
/// `Sum`, `Min` and `Max` over `i32`, `u32`, `i64`, `u64`, `f32`, `f64`; for your own,
/// declare the kernels with `warpsafe::segmented_reduce_kernels!` and implement this with
/// them.
///
/// # Safety
/// [`SegmentedReduction::kernels`] returns kernels that
/// `warpsafe::segmented_reduce_kernels!` declared for the element type `T`, each in the
/// field named for its strategy, and the program that holds them: the
/// `SegmentedReducer` launches each with the buffers and launch shape of that strategy's
/// contract, so a kernel of another element type or strategy would read and write
/// outside them.
pub unsafe trait SegmentedReduction<T: Pod>: Operator<T> + Default {
    /// The kernels.
    fn kernels() -> SegmentedKernels;
}

macro_rules! builtin {
    ($($op:ident $t:ty => $thread:ident, $tile4:ident, $tile16:ident, $warp:ident, $block:ident, $batches:ident, $chunks:ident, $small:ident, $scan:ident;)*) => {$(
        // SAFETY: warpsafe-entry's `segmented_reduce_kernels!` kernels of `$t`, each in its field.
        unsafe impl SegmentedReduction<$t> for $op {
            fn kernels() -> SegmentedKernels {
                SegmentedKernels {
                    program: ptx::ENTRY,
                    thread: &warpsafe_entry::segmented::$thread,
                    tile4: &warpsafe_entry::segmented::$tile4,
                    tile16: &warpsafe_entry::segmented::$tile16,
                    warp: &warpsafe_entry::segmented::$warp,
                    block: &warpsafe_entry::segmented::$block,
                    balanced_batches: &warpsafe_entry::segmented::$batches,
                    balanced_chunks: &warpsafe_entry::segmented::$chunks,
                    balanced_small: &warpsafe_entry::segmented::$small,
                    scan: &warpsafe_entry::segmented::$scan,
                }
            }
        }
    )*};
}

builtin! {
    Sum f32 => warpsafe_segreduce_sum_f32_thread, warpsafe_segreduce_sum_f32_tile4, warpsafe_segreduce_sum_f32_tile16, warpsafe_segreduce_sum_f32_warp, warpsafe_segreduce_sum_f32_block, warpsafe_segreduce_sum_f32_batches, warpsafe_segreduce_sum_f32_chunks, warpsafe_segreduce_sum_f32_small, warpsafe_segreduce_sum_f32_scan;
    Sum f64 => warpsafe_segreduce_sum_f64_thread, warpsafe_segreduce_sum_f64_tile4, warpsafe_segreduce_sum_f64_tile16, warpsafe_segreduce_sum_f64_warp, warpsafe_segreduce_sum_f64_block, warpsafe_segreduce_sum_f64_batches, warpsafe_segreduce_sum_f64_chunks, warpsafe_segreduce_sum_f64_small, warpsafe_segreduce_sum_f64_scan;
    Sum i32 => warpsafe_segreduce_sum_i32_thread, warpsafe_segreduce_sum_i32_tile4, warpsafe_segreduce_sum_i32_tile16, warpsafe_segreduce_sum_i32_warp, warpsafe_segreduce_sum_i32_block, warpsafe_segreduce_sum_i32_batches, warpsafe_segreduce_sum_i32_chunks, warpsafe_segreduce_sum_i32_small, warpsafe_segreduce_sum_i32_scan;
    Sum u32 => warpsafe_segreduce_sum_u32_thread, warpsafe_segreduce_sum_u32_tile4, warpsafe_segreduce_sum_u32_tile16, warpsafe_segreduce_sum_u32_warp, warpsafe_segreduce_sum_u32_block, warpsafe_segreduce_sum_u32_batches, warpsafe_segreduce_sum_u32_chunks, warpsafe_segreduce_sum_u32_small, warpsafe_segreduce_sum_u32_scan;
    Sum i64 => warpsafe_segreduce_sum_i64_thread, warpsafe_segreduce_sum_i64_tile4, warpsafe_segreduce_sum_i64_tile16, warpsafe_segreduce_sum_i64_warp, warpsafe_segreduce_sum_i64_block, warpsafe_segreduce_sum_i64_batches, warpsafe_segreduce_sum_i64_chunks, warpsafe_segreduce_sum_i64_small, warpsafe_segreduce_sum_i64_scan;
    Sum u64 => warpsafe_segreduce_sum_u64_thread, warpsafe_segreduce_sum_u64_tile4, warpsafe_segreduce_sum_u64_tile16, warpsafe_segreduce_sum_u64_warp, warpsafe_segreduce_sum_u64_block, warpsafe_segreduce_sum_u64_batches, warpsafe_segreduce_sum_u64_chunks, warpsafe_segreduce_sum_u64_small, warpsafe_segreduce_sum_u64_scan;
    Min f32 => warpsafe_segreduce_min_f32_thread, warpsafe_segreduce_min_f32_tile4, warpsafe_segreduce_min_f32_tile16, warpsafe_segreduce_min_f32_warp, warpsafe_segreduce_min_f32_block, warpsafe_segreduce_min_f32_batches, warpsafe_segreduce_min_f32_chunks, warpsafe_segreduce_min_f32_small, warpsafe_segreduce_min_f32_scan;
    Min f64 => warpsafe_segreduce_min_f64_thread, warpsafe_segreduce_min_f64_tile4, warpsafe_segreduce_min_f64_tile16, warpsafe_segreduce_min_f64_warp, warpsafe_segreduce_min_f64_block, warpsafe_segreduce_min_f64_batches, warpsafe_segreduce_min_f64_chunks, warpsafe_segreduce_min_f64_small, warpsafe_segreduce_min_f64_scan;
    Min i32 => warpsafe_segreduce_min_i32_thread, warpsafe_segreduce_min_i32_tile4, warpsafe_segreduce_min_i32_tile16, warpsafe_segreduce_min_i32_warp, warpsafe_segreduce_min_i32_block, warpsafe_segreduce_min_i32_batches, warpsafe_segreduce_min_i32_chunks, warpsafe_segreduce_min_i32_small, warpsafe_segreduce_min_i32_scan;
    Min u32 => warpsafe_segreduce_min_u32_thread, warpsafe_segreduce_min_u32_tile4, warpsafe_segreduce_min_u32_tile16, warpsafe_segreduce_min_u32_warp, warpsafe_segreduce_min_u32_block, warpsafe_segreduce_min_u32_batches, warpsafe_segreduce_min_u32_chunks, warpsafe_segreduce_min_u32_small, warpsafe_segreduce_min_u32_scan;
    Min i64 => warpsafe_segreduce_min_i64_thread, warpsafe_segreduce_min_i64_tile4, warpsafe_segreduce_min_i64_tile16, warpsafe_segreduce_min_i64_warp, warpsafe_segreduce_min_i64_block, warpsafe_segreduce_min_i64_batches, warpsafe_segreduce_min_i64_chunks, warpsafe_segreduce_min_i64_small, warpsafe_segreduce_min_i64_scan;
    Min u64 => warpsafe_segreduce_min_u64_thread, warpsafe_segreduce_min_u64_tile4, warpsafe_segreduce_min_u64_tile16, warpsafe_segreduce_min_u64_warp, warpsafe_segreduce_min_u64_block, warpsafe_segreduce_min_u64_batches, warpsafe_segreduce_min_u64_chunks, warpsafe_segreduce_min_u64_small, warpsafe_segreduce_min_u64_scan;
    Max f32 => warpsafe_segreduce_max_f32_thread, warpsafe_segreduce_max_f32_tile4, warpsafe_segreduce_max_f32_tile16, warpsafe_segreduce_max_f32_warp, warpsafe_segreduce_max_f32_block, warpsafe_segreduce_max_f32_batches, warpsafe_segreduce_max_f32_chunks, warpsafe_segreduce_max_f32_small, warpsafe_segreduce_max_f32_scan;
    Max f64 => warpsafe_segreduce_max_f64_thread, warpsafe_segreduce_max_f64_tile4, warpsafe_segreduce_max_f64_tile16, warpsafe_segreduce_max_f64_warp, warpsafe_segreduce_max_f64_block, warpsafe_segreduce_max_f64_batches, warpsafe_segreduce_max_f64_chunks, warpsafe_segreduce_max_f64_small, warpsafe_segreduce_max_f64_scan;
    Max i32 => warpsafe_segreduce_max_i32_thread, warpsafe_segreduce_max_i32_tile4, warpsafe_segreduce_max_i32_tile16, warpsafe_segreduce_max_i32_warp, warpsafe_segreduce_max_i32_block, warpsafe_segreduce_max_i32_batches, warpsafe_segreduce_max_i32_chunks, warpsafe_segreduce_max_i32_small, warpsafe_segreduce_max_i32_scan;
    Max u32 => warpsafe_segreduce_max_u32_thread, warpsafe_segreduce_max_u32_tile4, warpsafe_segreduce_max_u32_tile16, warpsafe_segreduce_max_u32_warp, warpsafe_segreduce_max_u32_block, warpsafe_segreduce_max_u32_batches, warpsafe_segreduce_max_u32_chunks, warpsafe_segreduce_max_u32_small, warpsafe_segreduce_max_u32_scan;
    Max i64 => warpsafe_segreduce_max_i64_thread, warpsafe_segreduce_max_i64_tile4, warpsafe_segreduce_max_i64_tile16, warpsafe_segreduce_max_i64_warp, warpsafe_segreduce_max_i64_block, warpsafe_segreduce_max_i64_batches, warpsafe_segreduce_max_i64_chunks, warpsafe_segreduce_max_i64_small, warpsafe_segreduce_max_i64_scan;
    Max u64 => warpsafe_segreduce_max_u64_thread, warpsafe_segreduce_max_u64_tile4, warpsafe_segreduce_max_u64_tile16, warpsafe_segreduce_max_u64_warp, warpsafe_segreduce_max_u64_block, warpsafe_segreduce_max_u64_batches, warpsafe_segreduce_max_u64_chunks, warpsafe_segreduce_max_u64_small, warpsafe_segreduce_max_u64_scan;
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
    /// One wave of resident blocks per strategy, in the same order: at its block size
    /// for fewer than [`MANY_BLOCK_SEGMENTS`] segments, and for more (the two differ for
    /// the block strategy only; [`SegmentStrategy::block_threads`]).
    resident: Vec<[u32; 2]>,
    options: SegmentedOptions,
    /// The balanced strategy's chunk kernel and its wave of resident blocks.
    chunks: (Function, u32),
    /// The balanced strategy's kernel for small inputs and its wave of resident blocks.
    small: (Function, u32),
    /// The balanced strategy's scratch, grown with the input (`None` before its first use).
    scratch: Option<LongScratch<T>>,
    /// The scan strategy's look-back scratch (`None` before its first use).
    scan_scratch: Option<LookBackScratch>,
    /// The device's error word (module docs), then the scan strategy's count of segments
    /// written with valid offsets.
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
        if options.long_elements == Some(0) || options.chunk_elements == Some(0) {
            return Err(Error::unsupported(
                "a balanced segmented reduction with long segments or chunks of 0 elements",
            ));
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
            kernels.balanced_batches,
            kernels.scan,
        ]) {
            let function = module.untyped_kernel(untyped)?;
            let wave = |threads| Self::wave(device, &function, threads, Self::shared_bytes(strategy));
            // One occupancy query per block size (the two classes differ for the block
            // strategy only).
            let (few, many) = (strategy.block_threads(0), strategy.block_threads(MANY_BLOCK_SEGMENTS));
            let few_wave = wave(few)?;
            resident.push([few_wave, if many == few { few_wave } else { wave(many)? }]);
            functions.push(function);
        }
        let chunks = module.untyped_kernel(kernels.balanced_chunks)?;
        let chunks_resident = Self::wave(device, &chunks, BLOCK_THREADS, kernel::shared_bytes::<T>() as u32)?;
        let small = module.untyped_kernel(kernels.balanced_small)?;
        let small_resident =
            Self::wave(device, &small, BLOCK_THREADS, kernel::small_input_shared_bytes::<T>() as u32)?;
        Ok(SegmentedReducer {
            device: device.clone(),
            functions,
            resident,
            chunks: (chunks, chunks_resident),
            small: (small, small_resident),
            scratch: None,
            scan_scratch: None,
            options,
            error: device.upload(&[NO_ERROR, 0])?,
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

    /// The strategy an offsets call over `len` elements uses: the options' one, or
    /// [`SegmentStrategy::for_offsets`] for `Auto`.
    pub fn strategy_for_offsets(&self, len: u64) -> SegmentStrategy {
        match self.options.strategy {
            SegmentStrategy::Auto => SegmentStrategy::for_offsets::<T>(len),
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

    /// One wave of resident blocks of `function` (multiprocessors times its occupancy).
    fn wave(device: &Device, function: &Function, threads: u32, shared_bytes: u32) -> Result<u32, Error> {
        let per_sm = device.max_active_blocks_per_multiprocessor(function, threads, shared_bytes)?;
        Ok(per_sm.max(1).saturating_mul(device.multiprocessor_count().max(1)))
    }

    /// Dynamic shared memory of a strategy's launch: the block and scan strategies' (and
    /// the balanced strategy's chunk kernel and kernel for small inputs, which `enqueue`
    /// launches with their own).
    fn shared_bytes(strategy: SegmentStrategy) -> u32 {
        match strategy {
            SegmentStrategy::Block => kernel::shared_bytes::<T>() as u32,
            SegmentStrategy::Scan => windows::shared_bytes::<T>() as u32,
            _ => 0,
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
        unsafe { self.enqueue(None, input, Form::Fixed(segment_len), output, None)? };
        let done = self.stream.synchronize();
        self.forget_scratch_on_error(done)
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
        self.error.copy_from_host(&[NO_ERROR, 0])?;
        // SAFETY: the buffers are borrowed (the output mutably) until the stream is
        // synchronised below.
        let scanned = unsafe { self.enqueue(None, input, Form::Offsets(offsets), output, None)? };
        let done = self.stream.synchronize();
        self.forget_scratch_on_error(done)?;
        let [mut code, written] = <[u64; 2]>::try_from(self.error.download()?).expect("two words");
        if scanned && written != offsets.len() as u64 - 1 {
            // The scan strategy met bad offsets (module docs): the balanced strategy finds
            // the lowest bad segment and writes the others' results.
            self.error.copy_from_host(&[NO_ERROR, 0])?;
            // SAFETY: as above.
            unsafe {
                self.enqueue(None, input, Form::Offsets(offsets), output, Some(SegmentStrategy::Balanced))?
            };
            let done = self.stream.synchronize();
            self.forget_scratch_on_error(done)?;
            code = self.error.download()?[0];
        }
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
    /// the launch; with [`SegmentStrategy::Balanced`] chosen, no other launch of this
    /// reducer runs while this one does (they share its scratch): none enqueued on another
    /// stream is still running, and none is enqueued on another stream before `stream`
    /// has run this one.
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
        unsafe { self.enqueue(Some(stream), input, Form::Fixed(segment_len), output, None).map(drop) }
    }

    /// Enqueues [`SegmentedReducer::reduce_offsets`] on `stream` without waiting; bad
    /// offsets are not reported (module docs).
    ///
    /// # Safety
    /// The three buffers stay alive, and nothing else accesses them (the offsets and
    /// input may be read), until `stream` has run the launch; no other launch of this
    /// reducer runs while this one does (they share the error word and the balanced
    /// strategy's scratch): none enqueued on another stream is still running, and none is
    /// enqueued on another stream before `stream` has run this one.
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
        unsafe { self.enqueue(Some(stream), input, Form::Offsets(offsets), output, None).map(drop) }
    }

    /// Checks the call and enqueues its launches on `stream` (or the reducer's own), with
    /// the strategy `forced` or the options' one; returns whether the scan strategy's
    /// kernel ran.
    ///
    /// # Safety
    /// As for [`SegmentedReducer::reduce_offsets_on`].
    unsafe fn enqueue(
        &mut self,
        stream: Option<&Stream>,
        input: &DeviceBuffer<T>,
        form: Form<'_>,
        output: &DeviceBuffer<T>,
        forced: Option<SegmentStrategy>,
    ) -> Result<bool, Error> {
        let device = &self.device;
        let stream_on = stream.unwrap_or(&self.stream).is_on(device);
        let offsets_on = match form {
            Form::Fixed(_) => true,
            Form::Offsets(offsets) => offsets.is_on(device),
        };
        if !(input.is_on(device) && output.is_on(device) && stream_on && offsets_on) {
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
            return Ok(false);
        }
        let mut strategy = match (forced, form) {
            (Some(forced), _) => forced,
            (None, Form::Fixed(_)) => self.strategy_for_fixed(len, segment_len),
            (None, Form::Offsets(_)) => self.strategy_for_offsets(len),
        };
        if strategy == SegmentStrategy::Scan {
            let chunks = windows::chunks::<T>(len);
            match form {
                // The counter's `chunks + warps` tickets fit 32 bits (far past any memory
                // of today); else the balanced strategy.
                Form::Offsets(_) if windows::reads_windows::<T>() && chunks < 1 << 31 => {
                    // SAFETY: forwarded from the caller; checked above.
                    unsafe { self.enqueue_scan(stream, input, offsets, segments, output, chunks)? };
                    return Ok(true);
                }
                Form::Offsets(_) => strategy = SegmentStrategy::Balanced,
                Form::Fixed(_) => strategy = SegmentStrategy::for_fixed::<T, O>(len, segment_len),
            }
        }
        let mut limits = None;
        if strategy == SegmentStrategy::Balanced {
            limits = self.long_limits(len, segments);
            if limits.is_none() {
                strategy = SegmentStrategy::for_average(len, segments);
            }
        }
        // A small input takes the balanced strategy's one-launch kernel (module docs).
        let small =
            limits.is_some_and(|limits| kernel::is_small_input::<T>(len, segments, limits.long_elements));
        let lanes = strategy.lanes(segments).unwrap_or(1);
        let index = strategy.index();
        let wanted = match strategy {
            SegmentStrategy::Block => segments,
            // A warp per segment, and a block per segment while they are few, so that
            // the long ones (which blocks reduce) are each a different block's.
            SegmentStrategy::Balanced if small => segments,
            SegmentStrategy::Balanced => segments.div_ceil(BLOCK_THREADS as u64),
            // The thread strategy's warp rows want a warp per row (at L = 32 and 64 `f32`s
            // more threads than segments).
            SegmentStrategy::Thread if O::COMMUTATIVE => {
                segments.max(kernel::fixed_row_threads::<T>(len, segment_len)).div_ceil(BLOCK_THREADS as u64)
            }
            _ => segments.saturating_mul(lanes).div_ceil(BLOCK_THREADS as u64),
        };
        let resident = if small { self.small.1 } else { self.resident[index][segment_class(segments)] };
        let cap = self.options.max_blocks.unwrap_or(u32::MAX).min(resident);
        let blocks = wanted.min(cap as u64).max(1) as u32;
        let config = LaunchConfig {
            shared_mem_bytes: if small {
                kernel::small_input_shared_bytes::<T>() as u32
            } else {
                Self::shared_bytes(strategy)
            },
            ..LaunchConfig::linear(blocks, strategy.block_threads(segments))
        };
        let (mut input, mut len, mut offsets, mut segment_len, mut segments) =
            (input.device_address(), len, offsets, segment_len, segments);
        let (mut output, mut error) = (output.device_address(), self.error.device_address());
        let Some(limits) = limits else {
            let stream = stream.unwrap_or(&self.stream);
            let args = kernel_args![input, len, offsets, segment_len, segments, output, error];
            // SAFETY: the kernel (input, len, offsets, segment_len, segments, out, error) of
            // `warpsafe::segmented_reduce_kernels!`: a 1-D launch of the strategy's block
            // size (256 or 512, multiples of 32) with the block strategy's shared bytes;
            // `input` holds `len` elements; for the fixed form `offsets` is null, segment_len > 0 and segments =
            // ceil(len / segment_len); otherwise `offsets` holds segments + 1 u64s; the
            // output holds at least `segments` elements; the error word is this reducer's,
            // used by one launch at a time (caller); all buffers are the caller's, alive and
            // untouched until the stream has run the launch.
            return unsafe { self.device.launch_raw_on(stream, &self.functions[index], config, &args) }
                .map(|()| false);
        };
        self.grow_scratch(stream, limits)?;
        let stream = stream.unwrap_or(&self.stream);
        let scratch = self.scratch.as_ref().expect("grown just above");
        let (mut counter, mut spare_counter) = scratch.counters();
        let (mut descriptors, mut tickets, mut partials) = (
            scratch.descriptors.device_address(),
            scratch.tickets.device_address(),
            scratch.partials.device_address(),
        );
        let (mut descriptor_capacity, mut chunk_capacity) = scratch.capacity();
        let (mut long_elements, mut chunk_elements) = (limits.long_elements, limits.chunk_elements);
        if small {
            // The kernel for small inputs reads only this: which segments its blocks take.
            long_elements = kernel::small_input_block_elements::<T>(len);
        }
        let args = kernel_args![
            input,
            len,
            offsets,
            segment_len,
            segments,
            output,
            error,
            counter,
            descriptors,
            tickets,
            partials,
            descriptor_capacity,
            chunk_capacity,
            long_elements,
            chunk_elements,
            spare_counter
        ];
        // SAFETY: the balanced batch kernel of `warpsafe::segmented_reduce_kernels!`, its
        // parameter list: a 1-D launch of BLOCK_THREADS (a multiple of 32); the segments,
        // output and error word as for the other strategies (above); the scratch is this
        // reducer's, of the capacities passed, used by one launch pair at a time (caller:
        // the earlier pairs ran before on this stream, or the `_on` caller orders them),
        // allocated zeroed; its tickets are 0 (every chunk launch returns them to 0), its
        // packed counter `counter` is 0 (zeroed, cleared by the previous chunk launch, or
        // left at 0 by a call without one) and no launch in flight uses `spare_counter`
        // (`LongSegments`); and
        // `limits.fit` checked the counter's fields for a wave of blocks (more than this
        // grid) and the 32-bit tickets; the chunk kernel follows
        // on the same stream below whenever a segment can be longer than `long_elements`.
        // The kernel for small inputs (`small`: `small_input_segments`, the same parameter
        // list) reads only `long_elements` of the scratch's part, needs no chunk launch and
        // has its `small_input_shared_bytes` of dynamic shared memory (`config`).
        let function = if small { &self.small.0 } else { &self.functions[index] };
        let launched = unsafe { self.device.launch_raw_on(stream, function, config, &args) };
        if launched.is_err() || small || len <= limits.long_elements {
            return self.forget_scratch_on_error(launched).map(|()| false);
        }
        let (chunks, resident) = &self.chunks;
        let cap = self.options.max_blocks.unwrap_or(u32::MAX).min(*resident);
        let config = LaunchConfig {
            shared_mem_bytes: kernel::shared_bytes::<T>() as u32,
            ..LaunchConfig::linear(chunk_capacity.min(cap as u64).max(1) as u32, BLOCK_THREADS)
        };
        // SAFETY: the balanced chunk kernel, with the same arguments, right after the batch
        // kernel on the same stream; a 1-D launch of BLOCK_THREADS (256, a multiple of 32)
        // threads with its dynamic shared memory, fewer than 2^32 blocks. It stores 0 into
        // `spare_counter`, which nothing else of this pair uses (above).
        let launched = unsafe { self.device.launch_raw_on(stream, chunks, config, &args) };
        if let Some(scratch) = &mut self.scratch {
            // This call's counter is left as it is; the chunk launch clears the other.
            scratch.next_is_second = !scratch.next_is_second;
        }
        self.forget_scratch_on_error(launched).map(|()| false)
    }

    /// Enqueues the scan strategy's one launch over `segments` segments whose
    /// `segments + 1` offsets lie at device address `offsets`, in `chunks` chunks
    /// (`warpsafe::scan::segmented::chunks`): a wave of resident blocks at most, whose
    /// warps take chunks until none is left.
    ///
    /// # Safety
    /// As for [`SegmentedReducer::reduce_offsets_on`]; the buffers checked by `enqueue`
    /// (same device, output of at least `segments` elements, `segments > 0`), `T`'s size
    /// divides 16 and `chunks < 2^31`.
    unsafe fn enqueue_scan(
        &mut self,
        stream: Option<&Stream>,
        input: &DeviceBuffer<T>,
        offsets: u64,
        segments: u64,
        output: &DeviceBuffer<T>,
        chunks: u64,
    ) -> Result<(), Error> {
        let index = SegmentStrategy::Scan.index();
        let cap = self.options.max_blocks.unwrap_or(u32::MAX).min(self.resident[index][0]);
        let warps = (windows::BLOCK_THREADS / 32) as u64;
        let blocks = chunks.div_ceil(warps).min(cap as u64).max(1) as u32;
        let config = LaunchConfig {
            shared_mem_bytes: Self::shared_bytes(SegmentStrategy::Scan),
            ..LaunchConfig::linear(blocks, windows::BLOCK_THREADS)
        };
        let scratch = match &mut self.scan_scratch {
            Some(scratch) => scratch,
            empty => empty.insert(LookBackScratch::new(&self.device, windows::status_words::<T>)?),
        };
        let stream = stream.unwrap_or(&self.stream);
        let slots = scratch.prepare(chunks, stream, &self.stream)?;
        let (mut input, mut len, mut offsets, mut segments) =
            (input.device_address(), input.len() as u64, offsets, segments);
        let mut output = output.device_address();
        let mut written = self.error.device_address() + std::mem::size_of::<u64>() as u64;
        let (mut counter, mut status, mut epoch) = (slots.counter, slots.status, slots.epoch);
        let args = kernel_args![input, len, offsets, segments, output, written, counter, status, epoch];
        // SAFETY: the scan kernel of `warpsafe::segmented_reduce_kernels!`, its parameter
        // list: a 1-D launch of its BLOCK_THREADS with its shared bytes and at most a wave
        // of blocks (their warps fewer than 2^31, and chunks < 2^31: the tickets fit); `input` holds
        // `len` elements (device buffers are 256-byte aligned), `offsets` segments + 1,
        // the output at least `segments` (all checked by `enqueue`); `written` is the
        // second word of this reducer's error buffer, used by one launch at a time
        // (caller); the status words and counter come from this reducer's look-back
        // scratch for `chunks` chunks (`status_words`) with a fresh epoch, the counter at 0.
        let launched = unsafe { self.device.launch_raw_on(stream, &self.functions[index], config, &args) };
        scratch.note_failure(&launched);
        launched
    }

    /// `result`, after dropping the balanced strategy's scratch when it is an error: a
    /// launch pair that did not run to its end may have left tickets non-zero or the next
    /// call's counter not cleared, and the next call then allocates a zeroed scratch.
    fn forget_scratch_on_error(&mut self, result: Result<(), Error>) -> Result<(), Error> {
        if result.is_err() {
            self.scratch = None;
        }
        result
    }

    /// The balanced strategy's limits for `segments` over `len` elements, `None` when the
    /// scratch it needs would not fit the packed counter or 32-bit tickets (inputs far past
    /// any memory of today: `Auto` then falls back to the average length's strategy).
    fn long_limits(&self, len: u64, segments: u64) -> Option<LongLimits> {
        let size = std::mem::size_of::<T>().max(1) as u64;
        let long_elements = self.options.long_elements.unwrap_or((LONG_SEGMENT_BYTES / size).max(1));
        let chunk_elements = self
            .options
            .chunk_elements
            .unwrap_or((kernel::chunk_bytes(len.saturating_mul(size)) / size).max(1));
        let descriptors = (len / long_elements + 1).min(segments);
        let chunks = (len / chunk_elements).checked_add(descriptors)?;
        let limits = LongLimits { long_elements, chunk_elements, descriptors, chunks };
        // Every batch launch has at most a wave of blocks.
        let threads = self.resident[SegmentStrategy::Balanced.index()][0] as u64 * BLOCK_THREADS as u64;
        limits.fit(threads, len).then_some(limits)
    }

    /// Makes the balanced strategy's scratch at least as large as `limits` asks: new
    /// zeroed buffers after the stream has run every earlier launch (which may use the
    /// old ones).
    fn grow_scratch(&mut self, stream: Option<&Stream>, limits: LongLimits) -> Result<(), Error> {
        if let Some(scratch) = &self.scratch {
            let (descriptors, chunks) = scratch.capacity();
            if descriptors >= limits.descriptors && chunks >= limits.chunks {
                return Ok(());
            }
            stream.unwrap_or(&self.stream).synchronize()?;
        }
        let (descriptors, chunks) = match &self.scratch {
            Some(old) => {
                let (d, c) = old.capacity();
                (d.max(limits.descriptors), c.max(limits.chunks))
            }
            None => (limits.descriptors, limits.chunks),
        };
        let device = &self.device;
        self.scratch = Some(LongScratch {
            counters: device.alloc_zeroed(2)?,
            descriptors: device.alloc_zeroed(descriptors as usize * DESCRIPTOR_WORDS)?,
            tickets: device.alloc_zeroed(descriptors as usize)?,
            partials: device.alloc_zeroed(chunks as usize)?,
            next_is_second: false,
        });
        Ok(())
    }
}

/// The balanced strategy's limits for one call (`warpsafe::reduce::segmented::LongSegments`).
#[derive(Clone, Copy)]
struct LongLimits {
    long_elements: u64,
    chunk_elements: u64,
    /// Descriptors the call may need: one per long segment.
    descriptors: u64,
    /// Chunks the call may need.
    chunks: u64,
}

impl LongLimits {
    /// Whether the packed counter's fields hold every value a batch launch of at most
    /// `threads` threads over `len` elements can reach (`LongSegments`' limits), and
    /// chunks fit 32-bit tickets.
    fn fit(&self, threads: u64, len: u64) -> bool {
        let threads = threads as u128;
        let descriptors = self.descriptors as u128 + threads;
        let chunks = self.chunks as u128 + threads * len.div_ceil(self.chunk_elements) as u128;
        self.chunks < 1 << 32 && descriptors < 1 << (64 - CHUNK_BITS) && chunks < 1 << CHUNK_BITS
    }
}

/// The balanced strategy's scratch (`warpsafe::reduce::segmented::LongSegments`): zeroed
/// when allocated; each chunk launch clears the packed counter the next one uses.
struct LongScratch<T> {
    /// The two packed counters: the next call's, and the one its chunk launch clears.
    counters: DeviceBuffer<u64>,
    descriptors: DeviceBuffer<u64>,
    tickets: DeviceBuffer<u32>,
    partials: DeviceBuffer<T>,
    /// Whether the next call uses `counters[1]` rather than `counters[0]`.
    next_is_second: bool,
}

impl<T: Pod> LongScratch<T> {
    /// The device addresses of the next call's packed counter and of the other one.
    fn counters(&self) -> (u64, u64) {
        let first = self.counters.device_address();
        let second = first + std::mem::size_of::<u64>() as u64;
        if self.next_is_second {
            (second, first)
        } else {
            (first, second)
        }
    }

    /// Descriptors and chunks it holds.
    fn capacity(&self) -> (u64, u64) {
        (self.tickets.len() as u64, self.partials.len() as u64)
    }
}
