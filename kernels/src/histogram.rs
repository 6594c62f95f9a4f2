//! Device-wide histograms: even bins over a range or bins between explicit boundaries,
//! over 1 to 4 channels of interleaved samples, in one launch.
//!
//! # Bins
//! - *Even* (CUB's `HistogramEven`): `bins` bins of equal width over `[lower, upper)`.
//!   For integer samples (`u8`, `u16`, `i32`; the bounds are `i64`s, so `[0, 256)` covers
//!   every `u8`) a sample `s` in the range goes to bin `(s - lower) * bins / (upper -
//!   lower)`, computed exactly (the width `upper - lower` is at most 2^32). For `f32`
//!   samples (`f32` bounds) it goes to bin `min(trunc((s - lower) * scale), bins - 1)`
//!   with `scale = bins as f32 / (upper - lower)`, every step an `f32` operation in that
//!   order (so a CPU model computes the same bin), the `min` catching the rounding of a
//!   sample just below `upper`.
//! - *Range* (CUB's `HistogramRange`): `bins + 1` strictly increasing levels (of the
//!   same level type); a sample in `[levels[i], levels[i + 1])` goes to bin `i`, found by
//!   binary search.
//!
//! A sample outside the range (below the lower bound or level, at or above the upper) is
//! counted in no bin, and so is a NaN: every comparison with NaN is false, and a sample
//! is counted only when `lower <= s && s < upper` holds.
//!
//! # Channels
//! The samples of `CHANNELS` channels (1 to 4) are interleaved: pixel `p`'s channel `c`
//! is `samples[p * CHANNELS + c]`. The first `ACTIVE` channels (1 to `CHANNELS`) get a
//! histogram each, `counts[c * bins + b]`; the other channels are skipped. Both are
//! compile-time constants of the kernel.
//!
//! # Counting
//! Counters are `u32` and wrap: a bin's count is exact modulo 2^32 (every addition on
//! the way, in shared and in global memory, is modulo 2^32, so the result is the true
//! count mod 2^32 however the samples were split).
//!
//! Two paths, chosen per launch by the host's [`Copies`] argument:
//! - *Private copies in shared memory* (`copies.spread` a power of two, 1 to 32): the
//!   block keeps `copies` copies of its histograms in dynamic shared memory, bin `b` of
//!   channel `c` of copy `k` at word `(c * bins + b) * copies + k`, and lane `l` counts
//!   into copy `l % copies` with a block-scope atomic add (`red.shared.add`, so a
//!   shared-memory atomic whatever ptxas proves about the address). With 32 copies each
//!   lane of a warp owns one bank, so a warp's 32 atomics never conflict, whatever the
//!   data (the hardware already merges increments of one address within a warp, so no
//!   match/aggregation step comes before the atomic: measured slower). Fewer copies cost
//!   less to clear and to merge, which is what small inputs need. When the block is done,
//!   each thread sums the copies of its bins (copy `(k + slot) % copies` in step `k`, so
//!   that a warp's lanes read 32 different banks) and adds the nonzero sums to the output
//!   (device-scope atomic adds).
//! - *Global bins* (`copies.spread == 0`): for histograms too large for shared memory,
//!   every sample is a device-scope atomic add on the output.
//!
//! # Concentrated samples
//! Copies pay for spread-out samples, whose atomics would conflict in one copy, but not
//! for samples that mostly fall in one bin: the hardware merges a warp's increments of
//! one address, and 32 copies turn them into 32 addresses (measured on an H100 with 90 %
//! of 2^24 `u8` samples in one bin: 9.8 us with one copy, 12.1 us with 32; uniform
//! samples the other way round, 12.9 and 12.0 us). So a block looks at its data before it
//! counts: every thread loads its vectors of the block's first tile before the block
//! clears its copies (so the loads' latency overlaps the clearing), then warp 0 bins the
//! first sample of each of its first 32 vectors and compares the bins with `match.any`;
//! when some bin holds at least [`CONCENTRATED_LANES`] of the 32 samples, the block counts
//! in `copies.concentrated` copies (its words are a prefix of the cleared window) instead
//! of `copies.spread`. The vote rides on the barrier after the clearing (`bar.red.or`),
//! so it costs no extra barrier; the look itself costs the wait for warp 0's first loads
//! (the host's plan looks only where that pays). Counts are exact either way: the choice
//! changes where a block's increments go, never how many there are.
//!
//! # Reading the samples
//! The samples are read as 16-byte vectors (16 `u8`s, 8 `u16`s, 4 `i32`s or `f32`s)
//! through the read-only cache, [`VECTORS_PER_THREAD`] loads in flight per thread: block
//! `b` of a grid of `g` takes tiles `b`, `b + g`, ... of `threads * VECTORS_PER_THREAD`
//! vectors (a persistent grid: the host sizes it to the GPU and the input), thread `t`
//! the vectors `t`, `t + threads`, ... of a tile. The samples after the last whole vector
//! go one per thread to the grid's first threads.
//!
//! # One launch, and an output that need not be zeroed
//! The first block of a launch to start zeroes the output; every block adds its counts
//! into it once it is zeroed. Two `u64` words in global memory (`claim`, `ready`) and the
//! launch's `epoch`, a number the host never gives two launches over the same words, say
//! which block that is and when it is done:
//! - thread 0 of every block swaps the epoch into `claim` as the block starts; the one
//!   block that gets back another value (an earlier launch's epoch) is the first;
//! - that block zeroes the output (every thread a share, atomic stores), fences
//!   (`fence.acq_rel.gpu`), meets at a barrier, and its thread 0 stores the epoch into
//!   `ready` with release;
//! - before its first update of the output (after counting into private copies; before
//!   counting, for global bins) thread 0 of every block loads `ready` with acquire until
//!   it holds the epoch, and the block meets at a barrier.
//!
//! The wait cannot last forever: the block waited for has started (its swap came first)
//! and waits for nothing before it publishes. Nothing has to be reset between launches
//! (a new epoch makes the words stale), not even after a failed launch, and nothing runs
//! after a block's last atomic add: no ticket, no last block. So the caller need not clear
//! the output, and there is no zeroing launch.

use core::marker::PhantomData;
use core::mem::size_of;

use bytemuck::{Pod, Zeroable};

use crate::arch::{self, NoPrefetch, WARP_SIZE};
use crate::atomic::{Acquire, DeviceAtomicU32, DeviceAtomicU64, Relaxed, Release};
use crate::barrier;
use crate::fence;
use crate::shared;
use crate::thread;
use crate::warp;

/// The block size the host launches histograms with, up to about 16 vectors per thread of
/// one such block per multiprocessor (larger inputs get blocks of 512: the host's plan).
pub const BLOCK_THREADS: u32 = 256;

/// 16-byte sample vectors each thread loads per tile: the loads it has in flight.
pub const VECTORS_PER_THREAD: usize = 4;

/// The most private copies of the bins a block keeps (one per lane of a warp).
pub const MAX_COPIES: u32 = WARP_SIZE;

/// The width of one vector load.
const VECTOR_BYTES: usize = 16;

/// Of the 32 samples warp 0 bins before counting, how many must share a bin for the block
/// to count in [`Copies::concentrated`] copies (module docs): half the warp.
pub const CONCENTRATED_LANES: u32 = WARP_SIZE / 2;

/// How many private copies of the bins a block keeps: a kernel parameter, made by the
/// host (module docs, "Concentrated samples").
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Copies {
    /// The copies for spread-out samples, and the copies the dynamic shared memory holds:
    /// 0 (global bins) or a power of two up to [`MAX_COPIES`].
    pub spread: u32,
    /// The copies a block keeps when its first samples concentrate in one bin: a power of
    /// two up to `spread` (ignored when `spread` is 0); equal to `spread`, the block does
    /// not look.
    pub concentrated: u32,
}

/// Bytes of dynamic shared memory a block needs for `slots` (active channels times bins)
/// bins in `copies` copies (0 for the global path).
pub const fn shared_bytes(slots: u64, copies: u32) -> u64 {
    slots * copies as u64 * size_of::<u32>() as u64
}

/// Samples of `S` in one 16-byte vector.
pub const fn samples_per_vector<S: Sample>() -> usize {
    VECTOR_BYTES / size_of::<S>()
}

/// Integer even bins: the division `o * bins / width` as `o` (the bins are the width).
pub const DIVIDE_IDENTITY: u32 = 0;
/// Integer even bins: the division by a multiply with a 64-bit reciprocal, exact when
/// `width * bins <= 2^32` (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019, theorem 1, with N = 32 and F = 64).
pub const DIVIDE_MAGIC: u32 = 1;
/// Integer even bins: a 64-bit division (any width and bin count).
pub const DIVIDE_WIDE: u32 = 2;
/// Integer even bins: one bin per value of the sample type, over exactly its values (256
/// bins over `[0, 256)` for `u8`): no sample needs the range check, and the bin is the
/// sample minus the type's smallest value, a constant (nothing at all for unsigned types).
pub const DIVIDE_EVERY_VALUE: u32 = 3;
/// A histogram kernel's binning (its `BINNING` parameter) for bins between levels; even
/// bins' kernels take the division mode (`DIVIDE_*`; any for `f32`, which divides in
/// floating point). One kernel per binning, so that the driver, which compiles a kernel
/// when it is first looked up, compiles only the binnings a program uses: with all four
/// division modes and their counters in one `u8` kernel, the H100's host took 28 s.
pub const BINS_BETWEEN_LEVELS: u32 = u32::MAX;

/// How samples map to bins: a kernel parameter, made on the host by [`Sample::even`] or
/// [`BinParams::range`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct BinParams {
    /// Even bins: the lower bound (an `i64` for integer samples, `f32` bits for `f32`).
    pub lower: u64,
    /// Even bins: the upper bound, in the same form.
    pub upper: u64,
    /// Even bins: `upper - lower` for integer samples (1 to 2^32), the scale's `f32` bits
    /// for `f32` samples.
    pub width: u64,
    /// Even integer bins with [`DIVIDE_MAGIC`]: `ceil(2^64 / width)` (`u64::MAX` for a width
    /// of 1).
    pub magic: u64,
    /// Range bins: the address of the `bins + 1` levels in global memory.
    pub levels: u64,
    /// The number of bins per channel (at least 1).
    pub bins: u32,
    /// The binning, which every kernel checks against its own `BINNING` (see
    /// [`histogram`]): for even integer bins [`DIVIDE_EVERY_VALUE`], [`DIVIDE_IDENTITY`],
    /// [`DIVIDE_MAGIC`] or [`DIVIDE_WIDE`]; for even `f32` bins 0; for range bins
    /// [`BINS_BETWEEN_LEVELS`].
    pub division: u32,
    /// Even integer bins: the smallest sample value in the range, `max(lower, S::MIN)`,
    /// as the sample's 32 bits (`s as u32`).
    pub first: u32,
    /// Even integer bins: the largest sample value in the range minus the smallest,
    /// `min(upper - 1, S::MAX) - max(lower, S::MIN)`.
    pub span: u32,
    /// Even integer bins: `max(lower, S::MIN) - lower`, what a sample's distance from
    /// `first` is short of its distance from `lower`.
    pub skip: u32,
    /// Even integer bins: 1 when no value of the sample type lies in the range (then
    /// `first`, `span` and `skip` are 0, and the host counts nothing: it launches over no
    /// samples).
    pub nothing: u32,
}

impl BinParams {
    /// Range bins over the `bins + 1` levels at global address `levels`.
    pub const fn range(levels: u64, bins: u32) -> BinParams {
        BinParams { levels, bins, division: BINS_BETWEEN_LEVELS, ..BinParams::ZERO }
    }

    /// Every field 0.
    const ZERO: BinParams = BinParams {
        lower: 0,
        upper: 0,
        width: 0,
        magic: 0,
        levels: 0,
        bins: 0,
        division: 0,
        first: 0,
        span: 0,
        skip: 0,
        nothing: 0,
    };

    /// Even integer bins over `[lower, upper)` for samples whose values run from `min` to
    /// `max` (a span below 2^32), for `0 < upper - lower <= 2^32` and `bins >= 1` (the
    /// caller's to check: see [`even_integer_ok`]).
    pub const fn even_integer(lower: i64, upper: i64, bins: u32, min: i64, max: i64) -> BinParams {
        let width = upper.wrapping_sub(lower) as u64;
        let smallest = if lower > min { lower } else { min };
        let largest = if upper - 1 < max { upper - 1 } else { max };
        let nothing = smallest > largest;
        // A sample s is in the range when (s - smallest) mod 2^32 <= largest - smallest:
        // both lie in the sample type's span, below 2^32, so the wrapping difference of a
        // sample below `smallest` exceeds it. Its offset from `lower` is that difference
        // plus `skip`, at most largest - lower < width <= 2^32.
        let (first, span, skip) = if nothing {
            (0, 0, 0)
        } else {
            (smallest as u32, (largest - smallest) as u32, (smallest - lower) as u32)
        };
        let every_value = lower == min && upper - 1 == max;
        let (division, magic) = if width == bins as u64 && every_value {
            (DIVIDE_EVERY_VALUE, 0)
        } else if width == bins as u64 {
            (DIVIDE_IDENTITY, 0)
        } else if width * bins as u64 <= 1 << 32 {
            let magic = if width == 1 { u64::MAX } else { u64::MAX / width + 1 };
            (DIVIDE_MAGIC, magic)
        } else {
            (DIVIDE_WIDE, 0)
        };
        BinParams {
            lower: lower as u64,
            upper: upper as u64,
            width,
            magic,
            bins,
            division,
            first,
            span,
            skip,
            nothing: nothing as u32,
            ..BinParams::ZERO
        }
    }
}

/// Whether integer even bins over `[lower, upper)` can be counted: `lower < upper` and a
/// width of at most 2^32.
pub const fn even_integer_ok(lower: i64, upper: i64) -> bool {
    lower < upper && (upper as i128 - lower as i128) <= 1 << 32
}

/// `floor(n / width)` for `n < width * bins <= 2^32`, by `magic = ceil(2^64 / width)`:
/// the high 64 bits of `magic * n`, from two 32 x 32-bit products.
#[inline(always)]
fn divide_by_magic(n: u32, magic: u64) -> u32 {
    let low = ((magic & 0xffff_ffff) * n as u64) >> 32;
    (((magic >> 32) * n as u64 + low) >> 32) as u32
}

mod sealed {
    pub trait Sealed {}
}

/// A sample type: `u8`, `u16`, `i32` or `f32`. Sealed.
pub trait Sample: Pod + sealed::Sealed {
    /// The type of the bounds and levels: `i64` for integer samples (wide enough for
    /// `[0, 256)` over `u8`), `f32` for `f32`.
    type Level: Pod + PartialOrd + core::fmt::Debug;
    /// The sample as a level, for comparisons with levels.
    fn level(self) -> Self::Level;
    /// Sample `k` (`k < 4 / size`) of a little-endian 32-bit word of samples. Counting
    /// unpacks each loaded vector with these shifts, word by word, with `k` a constant of
    /// an unrolled loop: indexing the vector's bytes at run time instead puts the vector
    /// in local memory and costs a local load per sample (seen in the PTX).
    fn unpack(word: u32, k: usize) -> Self;
    /// The even bins' parameters over `[lower, upper)`, or `None` when they cannot be
    /// counted: `lower < upper` fails (NaN included), an integer width over 2^32, or an
    /// `f32` width or scale that is not finite and positive. `bins >= 1` is the caller's.
    fn even(lower: Self::Level, upper: Self::Level, bins: u32) -> Option<BinParams>;
    /// The bin of `self` under the even bins of `params`, by the rule of the module docs.
    /// Generic over the division, which the kernel picks once per launch.
    fn even_bin<const DIVISION: u32>(self, params: &BinParams) -> Option<u32>;
}

macro_rules! integer_samples {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Sample for $t {
            type Level = i64;
            #[inline(always)]
            fn level(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn unpack(word: u32, k: usize) -> $t {
                (word >> (k * 8 * size_of::<$t>())) as $t
            }
            fn even(lower: i64, upper: i64, bins: u32) -> Option<BinParams> {
                even_integer_ok(lower, upper)
                    .then(|| BinParams::even_integer(lower, upper, bins, <$t>::MIN as i64, <$t>::MAX as i64))
            }
            #[inline(always)]
            fn even_bin<const DIVISION: u32>(self, params: &BinParams) -> Option<u32> {
                // 32-bit arithmetic (see `BinParams::even_integer`): below the range the
                // difference wraps past `span`, so one compare checks both bounds.
                if DIVISION == DIVIDE_EVERY_VALUE {
                    // lower is the type's smallest value and bins = width = its count of
                    // values (`BinParams::even_integer`).
                    return Some((self as u32).wrapping_sub(<$t>::MIN as u32));
                }
                let from_first = (self as u32).wrapping_sub(params.first);
                if from_first > params.span {
                    return None;
                }
                // offset = sample - lower <= span + skip < width <= 2^32.
                let offset = from_first + params.skip;
                Some(match DIVISION {
                    DIVIDE_IDENTITY => offset,
                    // offset * bins < width * bins <= 2^32 for this mode.
                    DIVIDE_MAGIC => divide_by_magic(offset.wrapping_mul(params.bins), params.magic),
                    _ => (offset as u64 * params.bins as u64 / params.width) as u32,
                })
            }
        }
    )*};
}
integer_samples!(u8, u16, i32);

impl sealed::Sealed for f32 {}
impl Sample for f32 {
    type Level = f32;
    #[inline(always)]
    fn level(self) -> f32 {
        self
    }
    #[inline(always)]
    fn unpack(word: u32, _k: usize) -> f32 {
        f32::from_bits(word)
    }
    fn even(lower: f32, upper: f32, bins: u32) -> Option<BinParams> {
        let width = upper - lower;
        let scale = bins as f32 / width;
        let usable = lower < upper && width.is_finite() && scale.is_finite() && scale > 0.0;
        usable.then(|| BinParams {
            lower: lower.to_bits() as u64,
            upper: upper.to_bits() as u64,
            width: scale.to_bits() as u64,
            bins,
            ..BinParams::ZERO
        })
    }
    #[inline(always)]
    fn even_bin<const DIVISION: u32>(self, params: &BinParams) -> Option<u32> {
        let lower = f32::from_bits(params.lower as u32);
        let upper = f32::from_bits(params.upper as u32);
        // False for NaN.
        if !(lower <= self && self < upper) {
            return None;
        }
        let scale = f32::from_bits(params.width as u32);
        Some((((self - lower) * scale) as u32).min(params.bins - 1))
    }
}

/// A mapping from samples to bins, fixed for a launch.
pub trait Binning<S>: Copy {
    /// The bin of `sample`, below the bin count, or `None` when it is counted nowhere.
    fn bin(self, sample: S) -> Option<u32>;
}

/// Even bins with the integer division `DIVISION` (ignored for `f32`).
#[derive(Clone, Copy)]
pub struct Even<S, const DIVISION: u32> {
    params: BinParams,
    sample: PhantomData<S>,
}

impl<S: Sample, const DIVISION: u32> Binning<S> for Even<S, DIVISION> {
    #[inline(always)]
    fn bin(self, sample: S) -> Option<u32> {
        sample.even_bin::<DIVISION>(&self.params)
    }
}

/// Bins between levels, by binary search over the levels in global memory.
#[derive(Clone, Copy)]
pub struct Levels<S: Sample> {
    levels: *const S::Level,
    bins: u32,
}

impl<S: Sample> Binning<S> for Levels<S> {
    #[inline(always)]
    fn bin(self, sample: S) -> Option<u32> {
        let x = sample.level();
        // SAFETY: the kernel's contract: `levels` holds `bins + 1` readable levels that
        // nothing writes during the launch, and every index below is at most `bins`.
        let level = |i: u32| unsafe { self.levels.add(i as usize).read() };
        // False for NaN.
        if !(level(0) <= x && x < level(self.bins)) {
            return None;
        }
        // levels[low] <= x < levels[high].
        let (mut low, mut high) = (0, self.bins);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if level(middle) <= x {
                low = middle;
            } else {
                high = middle;
            }
        }
        Some(low)
    }
}

/// Where a block's counts go: its private copies in shared memory, or the global bins.
trait Counter: Copy {
    /// Counts one sample in slot `slot` (channel times bins plus bin).
    ///
    /// # Safety
    /// `slot < ACTIVE * bins` of the launch.
    unsafe fn count(self, slot: u32);
}

/// `SharedCopies`' copy count when it is not a compile-time constant.
const RUN_TIME_COPIES: u32 = u32::MAX;

/// The block's private copies in the dynamic shared memory window (module docs), `2^LOG2`
/// of them, or `2^log2_copies` when `LOG2` is [`RUN_TIME_COPIES`]. With a constant count
/// a sample's counter address is one shift-and-add (a single `LEA` on sm_90) from the
/// lane's own copy.
#[derive(Clone, Copy)]
struct SharedCopies<const LOG2: u32> {
    /// Word 0 of the calling lane's copy: the window's word `lane % copies`.
    lane_copy: *mut u32,
    log2_copies: u32,
}

impl<const LOG2: u32> Counter for SharedCopies<LOG2> {
    #[inline(always)]
    unsafe fn count(self, slot: u32) {
        let log2 = if LOG2 == RUN_TIME_COPIES { self.log2_copies } else { LOG2 };
        // The byte offset in 32 bits (the window is at most 48 KiB), added to the lane's
        // copy as a shared-window address: 64-bit pointer arithmetic here cost a wide
        // multiply and a move per sample on sm_90.
        let bytes = (slot << log2) * size_of::<u32>() as u32;
        // SAFETY: slot < ACTIVE * bins (caller) and the lane's copy is below the copy count,
        // so the word `(slot << log2) + copy` lies below ACTIVE * bins * copies, the words
        // of the window (the kernel's contract): 4-byte aligned shared memory of this
        // block, accessed only atomically between the barriers around the counting.
        unsafe { arch::red_shared_add_u32_at(self.lane_copy, bytes, 1) };
    }
}

/// The output's bins in global memory, counted into directly.
#[derive(Clone, Copy)]
struct GlobalBins {
    base: *mut u32,
}

impl Counter for GlobalBins {
    #[inline(always)]
    unsafe fn count(self, slot: u32) {
        // SAFETY: slot < ACTIVE * bins (caller), the output's length; zeroed before the
        // counting (`Handoff::wait_zeroed`), accessed only atomically during the launch,
        // by threads of this GPU (the kernel's contract).
        unsafe { DeviceAtomicU32::from_ptr(self.base.add(slot as usize)) }.add(1, Relaxed);
    }
}

/// One 16-byte vector of samples, aligned so that it loads with one `ld.v4`.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(16))]
struct Vector([u32; 4]);

/// The kernel's fixed inputs, as the counting loop uses them.
#[derive(Clone, Copy)]
struct Input<S, B, C> {
    samples: *const S,
    len: u64,
    bins: u32,
    binning: B,
    counter: C,
}

impl<S: Sample, B: Binning<S>, C: Counter> Input<S, B, C> {
    /// Counts sample `sample`, the one at index `index` of the input (its channel is
    /// `index % CHANNELS`), or `channel` when known.
    #[inline(always)]
    fn count<const ACTIVE: usize>(self, sample: S, channel: usize) {
        if channel < ACTIVE {
            if let Some(bin) = self.binning.bin(sample) {
                // SAFETY: channel < ACTIVE and bin < bins (the `Binning` contract).
                unsafe { self.counter.count(channel as u32 * self.bins + bin) };
            }
        }
    }

    /// Counts the samples of the vector whose first sample has index `first`.
    #[inline(always)]
    fn count_vector<const CHANNELS: usize, const ACTIVE: usize>(self, vector: &Vector, first: u64) {
        let per_vector = samples_per_vector::<S>();
        // A compile-time 0 when a vector holds whole pixels (1, 2 or 4 channels).
        let base = if per_vector.is_multiple_of(CHANNELS) { 0 } else { (first % CHANNELS as u64) as usize };
        let per_word = size_of::<u32>() / size_of::<S>();
        let count_word = |w: usize| {
            for j in 0..per_word {
                let k = w * per_word + j;
                self.count::<ACTIVE>(S::unpack(vector.0[w], j), (base + k) % CHANNELS);
            }
        };
        // Word by word with constant indices (a loop over the words was not unrolled, and
        // the vector went to local memory).
        count_word(0);
        count_word(1);
        count_word(2);
        count_word(3);
    }

    /// Counts the calling thread's share of the input (module docs), the block's first
    /// tile from `first_tile`, which [`Tile::load`] loaded.
    ///
    /// # Safety
    /// `samples` is 16-byte aligned global memory holding `len` samples that nothing
    /// writes during the launch.
    #[inline(always)]
    unsafe fn count_share<const CHANNELS: usize, const ACTIVE: usize>(self, first_tile: Tile) {
        let per_vector = samples_per_vector::<S>() as u64;
        let tile = Tile::span();
        let step = thread::grid_blocks() as u64 * tile;
        let vectors = first_tile.whole;
        self.count_tile::<CHANNELS, ACTIVE>(&first_tile);
        let mut first = first_tile.first + step;
        let base = self.samples.cast::<Vector>();
        const { assert!(VECTORS_PER_THREAD == 4, "the loads below are written out for 4") };
        while first + tile <= vectors {
            let index = |u: u64| Tile::vector_index(first, u);
            // SAFETY: index(u) < first + tile <= vectors: a whole 16-byte aligned vector of
            // the input (contract), read-only during the launch.
            let load = |u: u64| {
                Vector(unsafe { arch::load_global_nc_16::<NoPrefetch>(base.add(index(u) as usize).cast()) })
            };
            // All four loads before the first count, with constant indices: as an array
            // indexed in a loop they were kept in local memory.
            let (v0, v1, v2, v3) = (load(0), load(1), load(2), load(3));
            self.count_vector::<CHANNELS, ACTIVE>(&v0, index(0) * per_vector);
            self.count_vector::<CHANNELS, ACTIVE>(&v1, index(1) * per_vector);
            self.count_vector::<CHANNELS, ACTIVE>(&v2, index(2) * per_vector);
            self.count_vector::<CHANNELS, ACTIVE>(&v3, index(3) * per_vector);
            first += step;
        }
        // The last, partial tile.
        if first < vectors {
            // SAFETY: forwarded from the contract.
            let last = unsafe { Tile::load(self.samples, self.len, first) };
            self.count_tile::<CHANNELS, ACTIVE>(&last);
        }
        let threads = thread::block_threads() as u64;
        let rank = thread::linear_thread_idx() as u64;
        let mut index = vectors * per_vector + thread::linear_block_idx() as u64 * threads + rank;
        while index < self.len {
            // SAFETY: index < len.
            let sample = unsafe { self.samples.add(index as usize).read() };
            self.count::<ACTIVE>(sample, (index % CHANNELS as u64) as usize);
            index += thread::grid_blocks() as u64 * threads;
        }
    }

    /// Counts the present vectors of `tile`.
    #[inline(always)]
    fn count_tile<const CHANNELS: usize, const ACTIVE: usize>(self, tile: &Tile) {
        let per_vector = samples_per_vector::<S>() as u64;
        let count_present = |u: u64, vector: &Vector| {
            if tile.present(u) {
                self.count_vector::<CHANNELS, ACTIVE>(vector, tile.index(u) * per_vector);
            }
        };
        count_present(0, &tile.vectors.0);
        count_present(1, &tile.vectors.1);
        count_present(2, &tile.vectors.2);
        count_present(3, &tile.vectors.3);
    }
}

/// One thread's [`VECTORS_PER_THREAD`] vectors of the tile that starts at vector `first`:
/// vector `u` is the input's vector `first + u * threads + rank` (zeroed, not loaded, past
/// the input's whole vectors).
#[derive(Clone, Copy)]
struct Tile {
    first: u64,
    /// The input's whole vectors: vector `u` is present when its index is below this.
    whole: u64,
    /// With constant indices: as an array indexed in a loop the vectors were kept in
    /// local memory.
    vectors: (Vector, Vector, Vector, Vector),
}

impl Tile {
    /// Vectors in a block's tile.
    #[inline(always)]
    fn span() -> u64 {
        thread::block_threads() as u64 * VECTORS_PER_THREAD as u64
    }

    /// The input's index of the calling thread's vector `u`.
    #[inline(always)]
    fn index(&self, u: u64) -> u64 {
        Tile::vector_index(self.first, u)
    }

    /// Whether the calling thread's vector `u` lies in the input (and was loaded).
    #[inline(always)]
    fn present(&self, u: u64) -> bool {
        self.index(u) < self.whole
    }

    /// The input's index of the calling thread's vector `u` of the tile starting at
    /// vector `first`.
    #[inline(always)]
    fn vector_index(first: u64, u: u64) -> u64 {
        first + u * thread::block_threads() as u64 + thread::linear_thread_idx() as u64
    }

    /// Loads the calling thread's vectors of the tile starting at vector `first`: every
    /// present vector's load issued before any is used (one round trip).
    ///
    /// # Safety
    /// `samples` is 16-byte aligned global memory holding `len` samples that nothing
    /// writes during the launch.
    #[inline(always)]
    unsafe fn load<S: Sample>(samples: *const S, len: u64, first: u64) -> Tile {
        let whole = len / samples_per_vector::<S>() as u64;
        let load_present = |u: u64| {
            let index = Tile::vector_index(first, u);
            if index < whole {
                // SAFETY: index < whole: a whole 16-byte aligned vector of the input
                // (contract), read-only during the launch.
                Vector(unsafe {
                    arch::load_global_nc_16::<NoPrefetch>(samples.cast::<Vector>().add(index as usize).cast())
                })
            } else {
                Vector::zeroed()
            }
        };
        let vectors = (load_present(0), load_present(1), load_present(2), load_present(3));
        Tile { first, whole, vectors }
    }
}

/// Runs the histogram with the binning a [`BinningVisitor`] is handed.
trait BinningVisitor<S> {
    /// Runs with `binning`.
    ///
    /// # Safety
    /// The contract of [`histogram`].
    unsafe fn visit<B: Binning<S>>(self, binning: B);
}

/// The histogram kernel's arguments, past the binning.
#[derive(Clone, Copy)]
struct Launch<S, const CHANNELS: usize, const ACTIVE: usize> {
    samples: *const S,
    len: u64,
    bins: u32,
    copies: Copies,
    counts: *mut u32,
    handoff: Handoff,
}

impl<S: Sample, const CHANNELS: usize, const ACTIVE: usize> Launch<S, CHANNELS, ACTIVE> {
    /// The counting loop's inputs with `binning` and `counter`.
    #[inline(always)]
    fn input<B: Binning<S>, C: Counter>(&self, binning: B, counter: C) -> Input<S, B, C> {
        Input { samples: self.samples, len: self.len, bins: self.bins, binning, counter }
    }
}

/// Whether the calling lane's vector (`None` past the input) has its first sample in the
/// same bin as at least [`CONCENTRATED_LANES`] of the warp's vectors, its own included
/// (module docs, "Concentrated samples").
///
/// # Safety
/// Every lane of the calling warp calls it once, at the same point, none having exited.
#[inline(always)]
unsafe fn concentrated<S: Sample, B: Binning<S>>(binning: B, vector: Option<Vector>) -> bool {
    // A sample counted nowhere, or no sample, matches no other lane: bins are below 2^32,
    // these keys above.
    let key = match vector.and_then(|v| binning.bin(S::unpack(v.0[0], 0))) {
        Some(bin) => bin as u64,
        None => (1 << 32) + thread::lane_id() as u64,
    };
    // SAFETY: every lane of the warp reaches this match with the full mask (caller).
    let same = unsafe { warp::match_any_sync(u32::MAX, key) };
    same.count_ones() >= CONCENTRATED_LANES
}

impl<S: Sample, const CHANNELS: usize, const ACTIVE: usize> BinningVisitor<S>
    for Launch<S, CHANNELS, ACTIVE>
{
    #[inline(always)]
    unsafe fn visit<B: Binning<S>>(self, binning: B) {
        const {
            assert!(CHANNELS >= 1 && CHANNELS <= 4, "1 to 4 channels");
            assert!(ACTIVE >= 1 && ACTIVE <= CHANNELS, "1 to CHANNELS active channels");
        };
        let slots = ACTIVE as u32 * self.bins;
        // Thread 0's claim goes out first, so that its round trip overlaps the loads below.
        // SAFETY: forwarded from the launch contract (the hand-off words).
        let claimed = thread::linear_thread_idx() == 0 && unsafe { self.handoff.claim() };
        // The block's first tile, loaded before the copies are cleared so that the loads'
        // latency overlaps the clearing and its barrier.
        let first = thread::linear_block_idx() as u64 * Tile::span();
        // SAFETY: forwarded from the launch contract.
        let first_tile = unsafe { Tile::load(self.samples, self.len, first) };
        if self.copies.spread == 0 {
            // SAFETY (both): every thread of the block calls them once, in this order;
            // `counts` holds `slots` words (launch contract).
            unsafe {
                self.handoff.zero_if_first(claimed, self.counts, slots);
                self.handoff.wait_zeroed();
            }
            // SAFETY: forwarded from the launch contract; the counts are zeroed (above).
            unsafe {
                self.input(binning, GlobalBins { base: self.counts })
                    .count_share::<CHANNELS, ACTIVE>(first_tile)
            };
            return;
        }
        let window = shared::dynamic::<u32>();
        let words = slots * self.copies.spread;
        for_each_by_whole_warps(words, |word| {
            // SAFETY: bounds-checked against the window (this block's own shared memory);
            // no other thread of the block touches this word before the barrier below.
            unsafe { window.write(word as usize, 0) };
        });
        // Warp 0 looks at its first vectors (module docs, "Concentrated samples"): a
        // condition uniform over each warp, and warp 0 is whole (blocks are whole warps).
        let looks = self.copies.concentrated != self.copies.spread && thread::warp_idx() == 0;
        let present = first_tile.present(0).then_some(first_tile.vectors.0);
        // SAFETY: every lane of warp 0, and no other, reaches this match, once.
        let concentrated_here = looks && unsafe { concentrated(binning, present) };
        // SAFETY: every thread of the block reaches this barrier once.
        let copies = if unsafe { barrier::sync_or(concentrated_here) } {
            self.copies.concentrated
        } else {
            self.copies.spread
        };
        // SAFETY: every thread of the block calls it once; `counts` holds `slots` words.
        unsafe { self.handoff.zero_if_first(claimed, self.counts, slots) };
        let log2_copies = copies.trailing_zeros();
        // SAFETY: lane % copies < copies <= spread, so the word lies below `words`: inside
        // the window (the clearing loop's bound checks cover its last word).
        let lane_copy = unsafe { window.as_mut_ptr().add((thread::lane_id() & (copies - 1)) as usize) };
        // The most copies, which large inputs get, and one copy, which concentrated
        // samples get, with a constant count.
        // SAFETY (all three): forwarded from the launch contract (the window holds `words`
        // words; the first `slots * copies` of them are `copies` per slot).
        unsafe {
            if copies == MAX_COPIES {
                const LOG2_MAX: u32 = MAX_COPIES.trailing_zeros();
                let counter = SharedCopies::<LOG2_MAX> { lane_copy, log2_copies };
                self.input(binning, counter).count_share::<CHANNELS, ACTIVE>(first_tile);
            } else if copies == 1 {
                let counter = SharedCopies::<0> { lane_copy, log2_copies };
                self.input(binning, counter).count_share::<CHANNELS, ACTIVE>(first_tile);
            } else {
                let counter = SharedCopies::<RUN_TIME_COPIES> { lane_copy, log2_copies };
                self.input(binning, counter).count_share::<CHANNELS, ACTIVE>(first_tile);
            }
        }
        // Its barrier also orders every thread's shared atomics before the reads below.
        // SAFETY: every thread of the block calls it once.
        unsafe { self.handoff.wait_zeroed() };
        for_each_by_whole_warps(slots, |slot| {
            let mut sum = 0u32;
            for k in 0..copies {
                let word = (slot << log2_copies) | ((k + slot) & (copies - 1));
                // SAFETY: a word of the window (bounds-checked); its atomic updates are
                // ordered before this read by the barrier above, and nothing writes it
                // again in this block.
                sum = sum.wrapping_add(unsafe { window.read(word as usize) });
            }
            if sum != 0 {
                // SAFETY: slot < ACTIVE * bins, the output's length; zeroed (the wait
                // above) and accessed only atomically during the launch (contract).
                unsafe { DeviceAtomicU32::from_ptr(self.counts.add(slot as usize)) }.add(sum, Relaxed);
            }
        });
    }
}

/// Calls `body(index)` for the indices below `end` that the calling thread takes when
/// the block's threads split them round robin (thread `r` takes `r`, `r + threads`, ...),
/// stepping whole warps: every lane of a warp runs the same number of steps and tests its
/// own index inside. A warp whose lanes left such a loop at different steps reached the
/// next block barrier diverged, which compute-sanitizer's synccheck reports ("Divergent
/// thread(s) in block", H100, 2026-11-26, with 66 or 257 slots): PTX allows it for the
/// non-`.aligned` `barrier.sync`, CUDA's rule for `__syncthreads` does not.
///
/// The indices step in 64 bits: `end` may be up to `u32::MAX` (the global-bins path zeroes
/// that many slots), and a 32-bit step past it would wrap to a small index and never end.
#[inline(always)]
fn for_each_by_whole_warps(end: u32, mut body: impl FnMut(u32)) {
    let lane = thread::lane_id() as u64;
    let mut warp_first = thread::linear_thread_idx() as u64 - lane;
    while warp_first < end as u64 {
        let index = warp_first + lane;
        if index < end as u64 {
            // index < end <= u32::MAX.
            body(index as u32);
        }
        warp_first += thread::block_threads() as u64;
    }
}

/// The two words in global memory through which the first block of a launch tells the
/// others that it has zeroed the output (module docs, "One launch"), and the launch's
/// epoch, which differs from every earlier launch's.
#[derive(Clone, Copy)]
struct Handoff {
    /// `[claim, ready]`: the epochs of the launches that last claimed and last zeroed.
    words: *mut u64,
    epoch: u64,
}

impl Handoff {
    /// Swaps the epoch into the claim word: whether the calling block is the first of the
    /// launch to do so (the word held an earlier launch's epoch). Thread 0 of each block
    /// calls it once.
    ///
    /// # Safety
    /// `words` is two `u64`s of global memory of this GPU used by no other concurrent
    /// launch and accessed only atomically during this one.
    #[inline(always)]
    unsafe fn claim(self) -> bool {
        // SAFETY: the claim word (caller).
        let claim = unsafe { DeviceAtomicU64::from_ptr(self.words) };
        claim.swap(self.epoch, Relaxed) != self.epoch
    }

    /// When the block's thread 0 claimed first, the block zeroes `counts[..slots]` and
    /// then publishes the epoch in the ready word with release.
    ///
    /// # Safety
    /// Every thread of the block calls it once, `claimed` true only in the thread that
    /// [`Handoff::claim`]ed first; `words` as for `claim`; `counts` holds `slots` `u32`s
    /// of global memory of this GPU, accessed only atomically during the launch.
    #[inline(always)]
    unsafe fn zero_if_first(self, claimed: bool, counts: *mut u32, slots: u32) {
        // SAFETY: every thread of the block reaches this barrier once.
        if !unsafe { barrier::sync_or(claimed) } {
            return;
        }
        for_each_by_whole_warps(slots, |slot| {
            // SAFETY: slot < slots: a word of the output, accessed only atomically.
            unsafe { DeviceAtomicU32::from_ptr(counts.add(slot as usize)) }.store(0, Relaxed);
        });
        // Release: this thread's zeroes before the ready word (with the barrier, every
        // thread's before thread 0's store).
        fence::device();
        // SAFETY: the condition is uniform over the block (the barrier's OR); every thread
        // reaches this barrier once.
        unsafe { barrier::sync() };
        if thread::linear_thread_idx() == 0 {
            // SAFETY: the ready word (caller).
            unsafe { DeviceAtomicU64::from_ptr(self.words.add(1)) }.store(self.epoch, Release);
        }
    }

    /// Returns once the launch's output is zeroed: thread 0 waits for the epoch in the
    /// ready word (acquire), then the block meets at a barrier. It cannot wait forever:
    /// the block that zeroes has started (its claim came first) and waits for no other.
    ///
    /// # Safety
    /// Every thread of the block calls it once, after [`Handoff::zero_if_first`]; `words`
    /// as for [`Handoff::claim`].
    #[inline(always)]
    unsafe fn wait_zeroed(self) {
        if thread::linear_thread_idx() == 0 {
            // SAFETY: the ready word (caller).
            let ready = unsafe { DeviceAtomicU64::from_ptr(self.words.add(1)) };
            while ready.load(Acquire) != self.epoch {}
        }
        // SAFETY: every thread of the block reaches this barrier once.
        unsafe { barrier::sync() };
    }
}

/// Counts `samples[..len]` (interleaved in `CHANNELS` channels, the first `ACTIVE`
/// counted) into `counts[..ACTIVE * bins]` under the levels of `params` when `BINNING` is
/// [`BINS_BETWEEN_LEVELS`], under even bins with division mode `BINNING` otherwise
/// (module docs), overwriting `counts`.
///
/// Every thread first checks that `params.division` is `BINNING` (0 for `f32` even
/// bins) and executes `trap` if not, ending the launch before anything is counted: a
/// kernel of one binning given the parameters of another (a `HistogramKernels` that lists
/// its kernels out of order) would put samples in bins past the shared copies and the
/// counts. The check costs one comparison per thread.
///
/// # Safety
/// - Launched with a 1-D grid of fewer than 2^32 blocks of a multiple of 32 threads, and,
///   when `copies.spread > 0`, at least [`shared_bytes`]`(ACTIVE * bins, copies.spread)` bytes of
///   dynamic shared memory; every thread runs this once.
/// - `copies.spread` is 0 or a power of two up to [`MAX_COPIES`], and when it is not 0,
///   `copies.concentrated` is a power of two up to it; `ACTIVE * params.bins` fits
///   in a `u32`, and `params` was made by [`Sample::even`] (for even bins) or
///   [`BinParams::range`] (for range bins) with `bins >= 1` (a `params.division` other
///   than `BINNING` is checked: it traps).
/// - `samples` is 16-byte aligned global memory holding `len` samples; for range bins
///   `params.levels` is the address of `bins + 1` strictly increasing levels (no NaN);
///   nothing writes either during the launch.
/// - `counts` holds `ACTIVE * bins` `u32`s and `handoff` two `u64`s, global memory of
///   this GPU used by no other concurrent launch and accessed by nothing else during this
///   one; `handoff` holds the epochs of earlier launches over it (or zeroes, before the
///   first), and `epoch` differs from all of them (module docs, "One launch").
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn histogram<S: Sample, const CHANNELS: usize, const ACTIVE: usize, const BINNING: u32>(
    samples: *const S,
    len: u64,
    params: BinParams,
    copies: Copies,
    counts: *mut u32,
    handoff: *mut u64,
    epoch: u64,
) {
    if params.division != BINNING {
        arch::trap();
    }
    let handoff = Handoff { words: handoff, epoch };
    let launch = Launch::<S, CHANNELS, ACTIVE> { samples, len, bins: params.bins, copies, counts, handoff };
    // SAFETY (all arms): forwarded from the caller; the binning is the one `params` was
    // made for (checked above: `division` names it).
    unsafe {
        if BINNING == BINS_BETWEEN_LEVELS {
            launch.visit(Levels::<S> { levels: params.levels as *const S::Level, bins: params.bins });
        } else {
            launch.visit(Even::<S, BINNING> { params, sample: PhantomData });
        }
    }
}

/// Declares the histogram kernels for one sample type, channel count and active channel
/// count, launched by the host's `Histogram`: the even-bins kernels, one per division
/// mode in the order [`DIVIDE_IDENTITY`], [`DIVIDE_MAGIC`], [`DIVIDE_WIDE`],
/// [`DIVIDE_EVERY_VALUE`] for integer samples (one for `f32`), then the kernel for bins
/// between levels. Each has this parameter list:
///
/// `(samples: *const S, len: u64, params: BinParams, copies: Copies, counts: *mut u32,
/// handoff: *mut u64, epoch: u64)`: [`histogram`] with `BINNING` the kernel's
/// division mode or [`BINS_BETWEEN_LEVELS`], with [`shared_bytes`]`(ACTIVE * bins,
/// copies.spread)` bytes of dynamic shared memory.
///
/// ```
/// // Two channels of u16 samples, both counted; and one channel of f32 samples.
/// warpsafe::histogram_kernels! {
///     u16, 2, 2 => even [identity_u16_two, magic_u16_two, wide_u16_two, every_u16_two], range range_u16_two;
///     f32, 1, 1 => even [even_f32], range range_f32;
/// }
/// assert_eq!(magic_u16_two.param_count(), 7);
/// assert_eq!(range_u16_two.param_count(), 7);
/// assert_eq!(even_f32.param_count(), 7);
/// ```
#[macro_export]
macro_rules! histogram_kernels {
    ($($t:ty, $channels:literal, $active:literal => even [$($even:ident),+], range $range:ident;)*) => {$(
        $crate::__histogram_even_kernels!($t, $channels, $active, 0u32, $($even),+);
        $crate::__histogram_kernel!(
            $t, $channels, $active, $range, $crate::histogram::BINS_BETWEEN_LEVELS, "bins between levels"
        );
    )*};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __histogram_even_kernels {
    ($t:ty, $channels:literal, $active:literal, $division:expr, $name:ident $(, $rest:ident)*) => {
        $crate::__histogram_kernel!($t, $channels, $active, $name, $division, "even bins");
        $crate::__histogram_even_kernels!($t, $channels, $active, $division + 1, $($rest),*);
    };
    ($t:ty, $channels:literal, $active:literal, $division:expr,) => {};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __histogram_kernel {
    ($t:ty, $channels:literal, $active:literal, $name:ident, $binning:expr, $what:literal) => {
        $crate::kernel! {
            #[doc = concat!("Histogram of `", stringify!($t), "` samples in ", stringify!($channels),
                " channels (", stringify!($active), " counted), ", $what, ": ")]
            #[doc = "`warpsafe::histogram::histogram` (parameters: `warpsafe::histogram_kernels!`)."]
            ///
            /// # Safety
            /// The contract of `warpsafe::histogram::histogram`.
            pub unsafe fn $name(
                samples: *const $t,
                len: u64,
                params: $crate::histogram::BinParams,
                copies: $crate::histogram::Copies,
                counts: *mut u32,
                handoff: *mut u64,
                epoch: u64,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    $crate::histogram::histogram::<$t, $channels, $active, { $binning }>(
                        samples, len, params, copies, counts, handoff, epoch,
                    )
                }
            }
        }
    };
}
