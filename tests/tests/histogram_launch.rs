//! `warpsafe::histogram` on the emulator and the GPU: the host `Histogram` for every
//! built-in sample type and channel layout, even and range bins, against CPU models that
//! compute each bin on their own (exact counts): bin counts 1, 2, 255, 256, 257 and a
//! histogram too large for shared memory (the global-atomics path), sizes 0, 1, 31, 33,
//! 2^k +- 1 (up to 2^26 + 5 on the GPU), uniform and skewed data (90 % in one bin), samples outside the range and
//! NaNs, every private-copy count, repeated calls over a counts buffer full of garbage
//! (the output is overwritten: the launch's first block zeroes it), several emulator seeds, and
//! typed errors for bad input.

use std::fmt::Debug;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use warpsafe::emu::Options;
use warpsafe::histogram::{
    BinParams, Copies, Sample, BINS_BETWEEN_LEVELS, DIVIDE_EVERY_VALUE, DIVIDE_IDENTITY, DIVIDE_MAGIC,
    DIVIDE_WIDE,
};
use warpsafe_host::histogram::{BuiltIn, Histogram, HistogramKernel, HistogramKernels, HistogramOptions};
use warpsafe_host::{kernel_args, Device, Error, LaunchConfig};
use warpsafe_tests::{on_gpu, test_devices};

/// Emulator seeds (each a different interleaving of the blocks' claims, waits and merges).
const SEEDS: std::ops::Range<u64> = 0..3;

/// Small blocks, so that the emulator runs many blocks (and many claims, waits and merges) on
/// small inputs.
const SMALL_BLOCKS: HistogramOptions = HistogramOptions {
    block_threads: Some(64),
    blocks_per_multiprocessor: 4,
    copies: None,
    blocks: None,
    concentrated_copies: 1,
};

/// Sample counts around vectors, tiles and 2^k.
fn lengths(gpu: bool) -> Vec<usize> {
    let mut lengths = vec![0, 1, 31, 33, 255, 257, 1023, 1025, 4097];
    if gpu {
        lengths.extend([(1 << 16) - 1, (1 << 20) + 1]);
    }
    lengths
}

// ---------------------------------------------------------------------------------------
// CPU models: each bin from the documented rule, computed without the kernel's code.

/// How a model maps a sample to a bin.
#[derive(Clone, Debug)]
enum Bins<L> {
    /// Even bins over `[lower, upper)`.
    Even { bins: u32, lower: L, upper: L },
    /// Bins between these levels.
    Range(Vec<L>),
}

impl<L: Copy> Bins<L> {
    fn count(&self) -> u32 {
        match self {
            Bins::Even { bins, .. } => *bins,
            Bins::Range(levels) => levels.len() as u32 - 1,
        }
    }
}

/// A built-in sample type with its model bin and test data.
trait TestSample: Sample + Debug {
    /// The model's bin of `self`.
    fn model_bin(self, bins: &Bins<Self::Level>) -> Option<u32>;
    /// A sample spread over about `[lower - margin, upper + margin)` of `bins`.
    fn spread(rng: &mut StdRng, bins: &Bins<Self::Level>) -> Self;
    /// One fixed sample inside the bins (the skewed data's favourite).
    fn favourite(bins: &Bins<Self::Level>) -> Self;
    /// A NaN, for types that have one.
    fn nan() -> Option<Self> {
        None
    }
}

/// The range bin of `x`: `levels[i] <= x < levels[i + 1]`.
fn range_bin<L: PartialOrd + Copy>(x: L, levels: &[L]) -> Option<u32> {
    if !(levels[0] <= x && x < levels[levels.len() - 1]) {
        return None;
    }
    Some(levels.partition_point(|l| *l <= x) as u32 - 1)
}

macro_rules! integer_test_samples {
    ($($t:ty),*) => {$(
        impl TestSample for $t {
            fn model_bin(self, bins: &Bins<i64>) -> Option<u32> {
                let x = self as i64;
                match bins {
                    Bins::Even { bins, lower, upper } => (*lower <= x && x < *upper).then(|| {
                        ((x - lower) as i128 * *bins as i128 / (upper - lower) as i128) as u32
                    }),
                    Bins::Range(levels) => range_bin(x, levels),
                }
            }
            fn spread(rng: &mut StdRng, bins: &Bins<i64>) -> $t {
                let (lower, upper) = match bins {
                    Bins::Even { lower, upper, .. } => (*lower, *upper),
                    Bins::Range(levels) => (levels[0], levels[levels.len() - 1]),
                };
                let margin = (upper - lower) / 8 + 1;
                let x = rng.gen_range(lower - margin..upper + margin);
                x.clamp(<$t>::MIN as i64, <$t>::MAX as i64) as $t
            }
            fn favourite(bins: &Bins<i64>) -> $t {
                let (lower, upper) = match bins {
                    Bins::Even { lower, upper, .. } => (*lower, *upper),
                    Bins::Range(levels) => (levels[0], levels[levels.len() - 1]),
                };
                (lower + (upper - lower) / 3).clamp(<$t>::MIN as i64, <$t>::MAX as i64) as $t
            }
        }
    )*};
}
integer_test_samples!(u8, u16, i32);

impl TestSample for f32 {
    fn model_bin(self, bins: &Bins<f32>) -> Option<u32> {
        match bins {
            Bins::Even { bins, lower, upper } => (*lower <= self && self < *upper).then(|| {
                let scale = *bins as f32 / (upper - lower);
                (((self - lower) * scale) as u32).min(bins - 1)
            }),
            Bins::Range(levels) => range_bin(self, levels),
        }
    }
    fn spread(rng: &mut StdRng, bins: &Bins<f32>) -> f32 {
        let (lower, upper) = match bins {
            Bins::Even { lower, upper, .. } => (*lower, *upper),
            Bins::Range(levels) => (levels[0], levels[levels.len() - 1]),
        };
        let margin = (upper - lower) / 8.0;
        // Every few samples exactly a bound, where rounding decides.
        match rng.gen_range(0..16) {
            0 => lower,
            1 => upper,
            2 => f32::from_bits(upper.to_bits() - 1),
            _ => rng.gen_range(lower - margin..upper + margin),
        }
    }
    fn favourite(bins: &Bins<f32>) -> f32 {
        match bins {
            Bins::Even { lower, upper, .. } => lower + (upper - lower) / 3.0,
            Bins::Range(levels) => levels[levels.len() / 2],
        }
    }
    fn nan() -> Option<f32> {
        Some(f32::NAN)
    }
}

/// The model's counts: `counts[c * bins + b]` over the first `active` of `channels`.
fn model<S: TestSample>(samples: &[S], bins: &Bins<S::Level>, channels: usize, active: usize) -> Vec<u32> {
    let n = bins.count() as usize;
    let mut counts = vec![0u32; n * active];
    for (i, &s) in samples.iter().enumerate() {
        let channel = i % channels;
        if channel < active {
            if let Some(b) = s.model_bin(bins) {
                counts[channel * n + b as usize] += 1;
            }
        }
    }
    counts
}

/// Test data: uniform over a bit more than the range, or skewed (90 % one sample), with
/// a NaN every 97 samples for float types.
fn data<S: TestSample>(len: usize, bins: &Bins<S::Level>, skewed: bool, seed: u64) -> Vec<S> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len)
        .map(|i| match S::nan() {
            Some(nan) if i % 97 == 13 => nan,
            _ if skewed && rng.gen_range(0..10) != 0 => S::favourite(bins),
            _ => S::spread(&mut rng, bins),
        })
        .collect()
}

/// Runs `histogram` over `samples` twice, into a counts buffer filled with garbage, and
/// checks both runs against the model.
fn check_counts<S, const CH: usize, const ACTIVE: usize, K>(
    device: &Device,
    histogram: &mut Histogram<S, CH, ACTIVE, K>,
    samples: &[S],
    bins: &Bins<S::Level>,
    what: &str,
) where
    S: TestSample,
    K: HistogramKernels<S, CH, ACTIVE>,
{
    let expected = model(samples, bins, CH, ACTIVE);
    let input = device.upload(samples).unwrap();
    let mut counts = device.upload(&vec![0xdead_beef_u32; histogram.counts_len()]).unwrap();
    for run in 0..2 {
        histogram.compute(&input, &mut counts).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got = counts.download().unwrap();
        if got != expected {
            let first = got.iter().zip(&expected).position(|(g, e)| g != e).unwrap();
            panic!(
                "{what}, {} samples, run {run}, plan {:?}: bin {first} holds {} instead of {} ({} bins differ)",
                samples.len(),
                histogram.plan(samples.len()),
                got[first],
                expected[first],
                got.iter().zip(&expected).filter(|(g, e)| g != e).count()
            );
        }
    }
}

/// The histogram of `bins` with `options`.
fn histogram_of<S, const CH: usize, const ACTIVE: usize, K>(
    device: &Device,
    bins: &Bins<S::Level>,
    options: HistogramOptions,
) -> Histogram<S, CH, ACTIVE, K>
where
    S: TestSample,
    K: HistogramKernels<S, CH, ACTIVE>,
{
    match bins {
        Bins::Even { bins, lower, upper } => {
            Histogram::<S, CH, ACTIVE, K>::even(device, *bins, *lower, *upper)
        }
        Bins::Range(levels) => Histogram::<S, CH, ACTIVE, K>::range(device, levels),
    }
    .unwrap()
    .with_options(options)
    .unwrap()
}

/// Every length and both distributions for one histogram.
fn check_layout<S, const CH: usize, const ACTIVE: usize, K>(
    device: &Device,
    bins: Bins<S::Level>,
    options: HistogramOptions,
    seed: u64,
) where
    S: TestSample,
    K: HistogramKernels<S, CH, ACTIVE>,
{
    let mut histogram = histogram_of::<S, CH, ACTIVE, K>(device, &bins, options);
    let gpu = on_gpu(device);
    for len in lengths(gpu) {
        let len = len - len % CH;
        for skewed in [false, true] {
            let samples = data::<S>(len, &bins, skewed, seed ^ len as u64);
            let what = format!(
                "{} x {CH} channels ({ACTIVE} counted), {bins:?}, {}",
                std::any::type_name::<S>(),
                if skewed { "skewed" } else { "uniform" }
            );
            check_counts(device, &mut histogram, &samples, &bins, &what);
        }
    }
}

/// `bins + 1` strictly increasing levels over about `[lower, upper]`, unevenly spaced.
fn integer_levels(bins: u32, lower: i64, step: i64) -> Vec<i64> {
    (0..=bins as i64).map(|i| lower + i * step + (i * i) % 3).collect()
}

fn check_every_sample_type(device: &Device, options: HistogramOptions, seed: u64) {
    for bins in [1, 2, 255, 256, 257] {
        check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Even { bins, lower: 0, upper: 256 }, options, seed);
    }
    // One bin per value with the bounds one below the type's: the identity with an offset,
    // not the every-value fast path.
    check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Even { bins: 257, lower: -1, upper: 256 }, options, seed);
    // One bin per u16 value (the every-value fast path on the global-memory path).
    check_layout::<u16, 1, 1, BuiltIn>(
        device,
        Bins::Even { bins: 65_536, lower: 0, upper: 65_536 },
        options,
        seed,
    );
    check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Even { bins: 10, lower: 20, upper: 220 }, options, seed);
    // Bounds past the type's values on either side, and a range no u8 reaches.
    check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Even { bins: 7, lower: -300, upper: 100 }, options, seed);
    check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Even { bins: 9, lower: 200, upper: 1000 }, options, seed);
    check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Even { bins: 3, lower: 300, upper: 400 }, options, seed);
    check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Even { bins: 3, lower: -100, upper: -10 }, options, seed);
    check_layout::<u16, 1, 1, BuiltIn>(
        device,
        Bins::Even { bins: 5, lower: -70_000, upper: 10 },
        options,
        seed,
    );
    check_layout::<u8, 1, 1, BuiltIn>(device, Bins::Range(integer_levels(40, 3, 6)), options, seed);
    check_layout::<u8, 4, 4, BuiltIn>(device, Bins::Even { bins: 256, lower: 0, upper: 256 }, options, seed);
    check_layout::<u8, 4, 4, BuiltIn>(device, Bins::Range(integer_levels(17, 0, 15)), options, seed);
    check_layout::<u8, 4, 3, BuiltIn>(device, Bins::Even { bins: 64, lower: 0, upper: 256 }, options, seed);
    check_layout::<u8, 4, 3, BuiltIn>(device, Bins::Range(integer_levels(5, 100, 9)), options, seed);
    check_layout::<u16, 1, 1, BuiltIn>(
        device,
        Bins::Even { bins: 1000, lower: 100, upper: 60_000 },
        options,
        seed,
    );
    check_layout::<u16, 1, 1, BuiltIn>(device, Bins::Range(integer_levels(300, 1000, 200)), options, seed);
    check_layout::<i32, 1, 1, BuiltIn>(
        device,
        Bins::Even { bins: 257, lower: -1_000_000, upper: 3_000_001 },
        options,
        seed,
    );
    // A width of 2^32 with 3 bins: past what the 32-bit reciprocal handles (the wide
    // division).
    check_layout::<i32, 1, 1, BuiltIn>(
        device,
        Bins::Even { bins: 3, lower: i32::MIN as i64, upper: i32::MAX as i64 + 1 },
        options,
        seed,
    );
    check_layout::<i32, 1, 1, BuiltIn>(device, Bins::Range(integer_levels(1000, -5000, 11)), options, seed);
    check_layout::<i32, 1, 1, BuiltIn>(
        device,
        Bins::Even { bins: 1000, lower: i32::MAX as i64 - 999, upper: i32::MAX as i64 + 1 },
        options,
        seed,
    );
    check_layout::<f32, 1, 1, BuiltIn>(
        device,
        Bins::Even { bins: 256, lower: -1.5, upper: 2.25 },
        options,
        seed,
    );
    check_layout::<f32, 1, 1, BuiltIn>(device, Bins::Even { bins: 7, lower: 0.1, upper: 0.3 }, options, seed);
    let levels: Vec<f32> = (0..=100).map(|i| -3.0 + (i as f32).powf(1.3) * 0.01).collect();
    check_layout::<f32, 1, 1, BuiltIn>(device, Bins::Range(levels), options, seed);
}

#[test]
fn every_sample_type_and_layout_matches_the_model() {
    for device in test_devices("histogram_types") {
        check_every_sample_type(&device, HistogramOptions::default(), 1);
        check_every_sample_type(&device, SMALL_BLOCKS, 2);
    }
}

#[test]
fn counts_under_several_emulator_schedules() {
    for seed in SEEDS {
        let device = Device::emulator_with(Options { seed, max_resident_blocks: 8, ..Options::default() });
        check_layout::<u8, 1, 1, BuiltIn>(
            &device,
            Bins::Even { bins: 256, lower: 0, upper: 256 },
            SMALL_BLOCKS,
            seed,
        );
        check_layout::<u8, 4, 3, BuiltIn>(
            &device,
            Bins::Even { bins: 255, lower: 0, upper: 256 },
            SMALL_BLOCKS,
            seed,
        );
        check_layout::<f32, 1, 1, BuiltIn>(
            &device,
            Bins::Even { bins: 31, lower: -1.0, upper: 1.0 },
            SMALL_BLOCKS,
            seed,
        );
    }
}

/// Every copy count, with blocks of skewed data dropping to 1 (or 4) copies and blocks
/// that never look at the data.
#[test]
fn every_private_copy_count_gives_the_same_counts() {
    let pairs = [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (32, 1), (32, 4), (32, 32)];
    // Small blocks, and the block size of large inputs' plans for two of the copy counts.
    let settings = pairs.iter().map(|&pair| (pair, SMALL_BLOCKS.block_threads)).chain([
        ((16, 1), Some(warpsafe_host::histogram::LARGE_INPUT_BLOCK_THREADS)),
        ((32, 32), Some(warpsafe_host::histogram::LARGE_INPUT_BLOCK_THREADS)),
    ]);
    for device in test_devices("histogram_copies") {
        for ((copies, concentrated_copies), block_threads) in settings.clone() {
            let options =
                HistogramOptions { copies: Some(copies), concentrated_copies, block_threads, ..SMALL_BLOCKS };
            let seed = (copies * 64 + concentrated_copies) as u64;
            check_layout::<u8, 1, 1, BuiltIn>(
                &device,
                Bins::Even { bins: 256, lower: 0, upper: 256 },
                options,
                seed,
            );
            check_layout::<u8, 4, 4, BuiltIn>(
                &device,
                Bins::Even { bins: 100, lower: 0, upper: 256 },
                options,
                seed,
            );
        }
    }
}

/// The test kernel crate's histogram kernels for `f32` samples in 2 channels, both
/// counted: a layout warpsafe does not build in.
struct TwoChannelKernels;

// SAFETY: the test crate's `histogram_kernels!` kernels of `f32` in 2 channels, both
// counted, `even` in the macro's order (f32 has one).
unsafe impl HistogramKernels<f32, 2, 2> for TwoChannelKernels {
    fn kernel() -> HistogramKernel {
        use scan_test_kernels as k;
        static EVEN: &[&warpsafe::kernel::UntypedKernel] = &[k::histogram_even_f32_2c2.untyped()];
        HistogramKernel {
            program: warpsafe_tests::test_program("scan"),
            even: EVEN,
            range: &k::histogram_range_f32_2c2,
        }
    }
}

#[test]
fn a_layout_declared_outside_warpsafe_counts_with_its_own_kernels() {
    for device in test_devices("histogram_user_layout") {
        for (options, seed) in [(HistogramOptions::default(), 21), (SMALL_BLOCKS, 22)] {
            let even = Bins::Even { bins: 33, lower: -1.0, upper: 1.5 };
            check_layout::<f32, 2, 2, TwoChannelKernels>(&device, even, options, seed);
            let levels: Vec<f32> = (0..=20).map(|i| -1.0 + (i as f32).powf(1.2) * 0.07).collect();
            check_layout::<f32, 2, 2, TwoChannelKernels>(&device, Bins::Range(levels), options, seed);
        }
    }
}

/// Blocks of one launch that pick different copy counts: the tiles of every other block
/// hold one value (those blocks count in 1 copy), the others' uniform samples (32
/// copies); all merge into the same bins.
#[test]
fn blocks_that_see_concentrated_and_spread_samples_merge_into_the_same_counts() {
    let bins = Bins::Even { bins: 256, lower: 0, upper: 256 };
    let tile = SMALL_BLOCKS.block_threads.unwrap() as usize
        * warpsafe::histogram::VECTORS_PER_THREAD
        * warpsafe::histogram::samples_per_vector::<u8>();
    for device in test_devices("histogram_mixed") {
        let options = HistogramOptions { copies: Some(32), ..SMALL_BLOCKS };
        let mut histogram = histogram_of::<u8, 1, 1, BuiltIn>(&device, &bins, options);
        for (seed, len) in [(21, tile * 7 + 13), (22, tile * 40 + 100)] {
            let blocks = histogram.plan(len).blocks as usize;
            assert!(blocks >= 2, "{blocks} blocks");
            for parity in [0, 1] {
                let mut samples = data::<u8>(len, &bins, false, seed);
                for (t, tile_samples) in samples.chunks_mut(tile).enumerate() {
                    if (t % blocks) % 2 == parity {
                        tile_samples.fill(200);
                    }
                }
                let what = format!("u8, one value in the tiles of blocks 2k + {parity} of {blocks}");
                check_counts(&device, &mut histogram, &samples, &bins, &what);
            }
        }
    }
}

/// One histogram over inputs that give every block of the grid 1, 2 and 3 whole tiles of 4
/// vectors per thread, then none or a partial one (whose loads are all issued before it
/// is counted).
fn check_whole_tiles<S, const CH: usize, const ACTIVE: usize, K>(
    device: &Device,
    bins: Bins<S::Level>,
    seed: u64,
) where
    S: TestSample,
    K: HistogramKernels<S, CH, ACTIVE>,
{
    let options = HistogramOptions {
        block_threads: Some(32),
        blocks_per_multiprocessor: 1,
        copies: None,
        blocks: None,
        concentrated_copies: 1,
    };
    let mut histogram = histogram_of::<S, CH, ACTIVE, K>(device, &bins, options);
    let blocks = histogram.plan(usize::MAX / 2).blocks as usize;
    let tile = 32 * 4 * warpsafe::histogram::samples_per_vector::<S>();
    for tiles in 1..=3 {
        for extra in [0, tile / 2 + 5] {
            let len = blocks * tiles * tile + extra;
            let len = len - len % CH;
            assert_eq!(histogram.plan(len).blocks as usize, blocks, "{len} samples fill the grid");
            for skewed in [false, true] {
                let samples = data::<S>(len, &bins, skewed, seed ^ len as u64);
                let what = format!(
                    "{} x {CH} ({ACTIVE} counted), {tiles} tiles per block",
                    std::any::type_name::<S>()
                );
                check_counts(device, &mut histogram, &samples, &bins, &what);
            }
        }
    }
}

#[test]
fn blocks_count_several_whole_tiles_then_a_partial_one() {
    for device in test_devices("histogram_tiles") {
        check_whole_tiles::<u8, 1, 1, BuiltIn>(&device, Bins::Even { bins: 256, lower: 0, upper: 256 }, 3);
        check_whole_tiles::<u8, 4, 3, BuiltIn>(&device, Bins::Even { bins: 64, lower: 0, upper: 256 }, 4);
        check_whole_tiles::<u16, 1, 1, BuiltIn>(&device, Bins::Range(integer_levels(300, 1000, 200)), 5);
        check_whole_tiles::<f32, 1, 1, BuiltIn>(&device, Bins::Even { bins: 7, lower: 0.1, upper: 0.3 }, 6);
    }
}

#[test]
fn histograms_too_large_for_shared_memory_count_in_global_memory() {
    for device in test_devices("histogram_global") {
        let bins = Bins::Even { bins: 100_000, lower: -50_000, upper: 150_000 };
        let histogram = Histogram::<i32>::even(&device, 100_000, -50_000, 150_000).unwrap();
        assert_eq!(histogram.plan(1 << 20).copies, 0, "100 000 bins take the global path");
        check_layout::<i32, 1, 1, BuiltIn>(&device, bins, SMALL_BLOCKS, 7);
        let levels: Vec<f32> = (0..=20_000).map(|i| i as f32 * 0.5).collect();
        check_layout::<f32, 1, 1, BuiltIn>(&device, Bins::Range(levels), SMALL_BLOCKS, 8);
        // 4 counted channels of 4096 bins: over 48 KiB even with one copy.
        check_layout::<u8, 4, 4, BuiltIn>(
            &device,
            Bins::Even { bins: 4096, lower: 0, upper: 256 },
            SMALL_BLOCKS,
            9,
        );
    }
}

/// Large inputs on the GPU only (named `huge` so that the sanitizer runs skip them): the
/// default plans at 2^24 + 3 and 2^26 + 5 samples, where every block runs many tiles.
#[test]
fn huge_inputs_match_the_model_on_the_gpu() {
    for device in test_devices("histogram_huge").into_iter().filter(on_gpu) {
        for len in [(1 << 24) + 3, (1 << 26) + 5] {
            for skewed in [false, true] {
                let even = Bins::Even { bins: 256, lower: 0, upper: 256 };
                let samples = data::<u8>(len, &even, skewed, 11);
                let mut histogram = Histogram::<u8>::even(&device, 256, 0, 256).unwrap();
                check_counts(&device, &mut histogram, &samples, &even, "u8 huge");
                let pixels = &samples[..len - len % 4];
                let mut rgb = Histogram::<u8, 4, 3>::even(&device, 256, 0, 256).unwrap();
                check_counts(&device, &mut rgb, pixels, &even, "u8 RGBA huge");
            }
        }
        let global = Bins::Even { bins: 100_000, lower: -50_000, upper: 150_000 };
        let samples = data::<i32>((1 << 24) + 1, &global, true, 12);
        let mut histogram = Histogram::<i32>::even(&device, 100_000, -50_000, 150_000).unwrap();
        check_counts(&device, &mut histogram, &samples, &global, "i32 global huge");
    }
}

#[test]
fn one_bin_per_value_of_the_type_skips_the_range_check() {
    use warpsafe::histogram::{Sample, DIVIDE_EVERY_VALUE, DIVIDE_IDENTITY, DIVIDE_MAGIC};
    let division = |params: Option<warpsafe::histogram::BinParams>| params.unwrap().division;
    assert_eq!(division(u8::even(0, 256, 256)), DIVIDE_EVERY_VALUE);
    assert_eq!(division(u16::even(0, 65_536, 65_536)), DIVIDE_EVERY_VALUE);
    // Wider than the type, or a part of it: the range check stays.
    assert_eq!(division(u8::even(-1, 256, 257)), DIVIDE_IDENTITY);
    assert_eq!(division(u8::even(0, 255, 255)), DIVIDE_IDENTITY);
    assert_eq!(division(u8::even(0, 256, 128)), DIVIDE_MAGIC);
}

#[test]
fn the_plan_spends_less_on_copies_for_small_inputs() {
    let device = Device::emulator();
    let histogram = Histogram::<u8>::even(&device, 256, 0, 256).unwrap();
    let small = histogram.plan(1 << 10);
    let large = histogram.plan(1 << 28);
    // One wave at most: the emulator keeps 8 blocks resident over its 4 multiprocessors,
    // so 2 per multiprocessor, below the default 4.
    assert_eq!((small.blocks, large.blocks), (1, 2 * device.multiprocessor_count()));
    // Large inputs in blocks of 512 threads (more than 16 vectors per thread of one block
    // of 256 per multiprocessor: 2^18 samples over the emulator's 4).
    assert_eq!((small.threads, histogram.plan(1 << 18).threads, large.threads), (256, 256, 512));
    assert_eq!(histogram.plan((1 << 18) + 16).threads, 512);
    assert!(small.copies < large.copies, "{small:?} {large:?}");
    assert_eq!(large.copies, 32);
    assert_eq!(large.shared_bytes, 256 * 32 * 4);
    // Blocks of concentrated samples drop to 1 copy by default, when the automatic plan
    // gives them 16 copies or more; fewer never look (concentrated = copies). The option
    // is lowered to the copies, and 32 never looks.
    let middle = histogram.plan(1 << 17);
    assert_eq!((middle.copies, middle.concentrated_copies), (8, 8), "{middle:?}");
    assert_eq!((small.concentrated_copies, large.concentrated_copies), (small.copies, 1));
    let with = |copies, concentrated_copies| {
        let options = HistogramOptions { copies, concentrated_copies, ..HistogramOptions::default() };
        Histogram::<u8>::even(&device, 256, 0, 256).unwrap().with_options(options).unwrap()
    };
    assert_eq!(with(None, 32).plan(1 << 28).concentrated_copies, 32);
    assert_eq!(with(None, 4).plan(1 << 28).concentrated_copies, 4);
    // Copies given: the concentrated copies as given, whatever the count.
    assert_eq!(with(Some(8), 1).plan(1 << 17).concentrated_copies, 1);
    assert_eq!(with(Some(2), 4).plan(1 << 17).concentrated_copies, 2);
    // A fixed grid (for sweeps): as given, at most one wave, the copies still planned.
    let fixed = |blocks| {
        let options = HistogramOptions { blocks: Some(blocks), ..HistogramOptions::default() };
        Histogram::<u8>::even(&device, 256, 0, 256).unwrap().with_options(options).unwrap()
    };
    assert_eq!(fixed(3).plan(1 << 10).blocks, 3);
    assert_eq!(fixed(3).plan(1 << 28).copies, 32);
    assert_eq!(fixed(1000).plan(1 << 28).blocks, large.blocks);
}

// ---------------------------------------------------------------------------------------
// Bad input

#[test]
fn bad_input_gets_typed_errors() {
    let device = Device::emulator();
    let invalid = |result: Result<(), Error>, what: &str| match result {
        Err(Error::InvalidArgument { operation: "histogram", problem }) => {
            assert!(!problem.is_empty(), "{what}");
        }
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    };
    invalid(Histogram::<u8>::even(&device, 0, 0, 256).map(drop), "0 bins");
    invalid(Histogram::<u8>::even(&device, 4, 10, 10).map(drop), "lower == upper");
    invalid(Histogram::<u8>::even(&device, 4, 10, 5).map(drop), "lower > upper");
    invalid(Histogram::<i32>::even(&device, 4, -(1 << 32), 1).map(drop), "an integer width over 2^32");
    invalid(Histogram::<f32>::even(&device, 4, f32::NAN, 1.0).map(drop), "a NaN lower bound");
    invalid(Histogram::<f32>::even(&device, 4, 0.0, f32::NAN).map(drop), "a NaN upper bound");
    invalid(Histogram::<f32>::even(&device, 4, f32::MIN, f32::MAX).map(drop), "an infinite f32 width");
    invalid(Histogram::<f32>::even(&device, 4, f32::NEG_INFINITY, 0.0).map(drop), "an infinite bound");
    invalid(Histogram::<f32>::even(&device, u32::MAX, 0.0, 1e-40).map(drop), "an infinite scale");
    invalid(Histogram::<u8>::range(&device, &[]).map(drop), "no levels");
    invalid(Histogram::<u8>::range(&device, &[5]).map(drop), "one level");
    invalid(Histogram::<u8>::range(&device, &[0, 5, 5, 9]).map(drop), "repeated levels");
    invalid(Histogram::<u8>::range(&device, &[0, 5, 3]).map(drop), "decreasing levels");
    invalid(Histogram::<f32>::range(&device, &[0.0, f32::NAN, 3.0]).map(drop), "a NaN level");
    let options =
        |o: HistogramOptions| Histogram::<u8>::even(&device, 4, 0, 256).unwrap().with_options(o).map(drop);
    invalid(options(HistogramOptions { block_threads: Some(48), ..Default::default() }), "48 threads");
    invalid(options(HistogramOptions { block_threads: Some(2048), ..Default::default() }), "2048 threads");
    invalid(options(HistogramOptions { blocks_per_multiprocessor: 0, ..Default::default() }), "0 blocks");
    invalid(options(HistogramOptions { blocks: Some(0), ..Default::default() }), "a fixed grid of 0 blocks");
    invalid(options(HistogramOptions { copies: Some(3), ..Default::default() }), "3 copies");
    invalid(options(HistogramOptions { copies: Some(64), ..Default::default() }), "64 copies");
    invalid(options(HistogramOptions { copies: Some(0), ..Default::default() }), "0 copies");
    for concentrated_copies in [0, 3, 64] {
        match options(HistogramOptions { concentrated_copies, ..Default::default() }) {
            Err(Error::InvalidArgument { problem, .. }) => assert_eq!(
                problem,
                format!("{concentrated_copies} private copies for concentrated samples: a power of two from 1 to 32")
            ),
            other => panic!("{concentrated_copies} concentrated copies: {other:?}"),
        }
    }

    let samples = device.upload(&[1u8; 64]).unwrap();
    let mut histogram = Histogram::<u8>::even(&device, 4, 0, 256).unwrap();
    for wrong in [0, 3, 5] {
        let mut counts = device.alloc_zeroed::<u32>(wrong).unwrap();
        invalid(histogram.compute(&samples, &mut counts), "a counts buffer of the wrong length");
    }
    let mut rgba = Histogram::<u8, 4, 3>::even(&device, 4, 0, 256).unwrap();
    let mut counts = device.alloc_zeroed::<u32>(12).unwrap();
    let ragged = device.upload(&[1u8; 10]).unwrap();
    invalid(rgba.compute(&ragged, &mut counts), "samples that are not whole pixels");
    invalid(
        Histogram::<u8, 4, 3>::even(&device, 4, 0, 256).unwrap().compute(&ragged, &mut counts),
        "a new histogram with ragged samples",
    );
    match Histogram::<u8, 4, 4>::even(&device, u32::MAX / 2, 0, 256) {
        Err(Error::InputTooLarge { .. }) => {}
        other => panic!("bins * channels past 2^32: {other:?}"),
    }
    // Buffers of another device.
    let other = Device::emulator();
    let foreign = other.upload(&[1u8; 64]).unwrap();
    let mut counts = device.alloc_zeroed::<u32>(4).unwrap();
    match histogram.compute(&foreign, &mut counts) {
        Err(Error::Unsupported { .. }) => {}
        other => panic!("samples of another device: {other:?}"),
    }
    let mut foreign_counts = other.alloc_zeroed::<u32>(4).unwrap();
    match histogram.compute(&samples, &mut foreign_counts) {
        Err(Error::Unsupported { .. }) => {}
        other => panic!("counts of another device: {other:?}"),
    }
    // After all of that, the histogram still counts right.
    histogram.compute(&samples, &mut counts).unwrap();
    assert_eq!(counts.download().unwrap(), [64, 0, 0, 0]);
}

// ---------------------------------------------------------------------------------------
// A kernel given the parameters of another binning traps (the defence against a
// `HistogramKernels` that lists its kernels out of order).

/// The built-in `u8` (1 channel) kernel of `binning`, as `BuiltIn` lists it.
fn u8_kernel(device: &Device, binning: u32) -> warpsafe_host::Function {
    let kernels = <BuiltIn as HistogramKernels<u8, 1, 1>>::kernel();
    let kernel = if binning == BINS_BETWEEN_LEVELS { kernels.range } else { kernels.even[binning as usize] };
    device.load(&kernels.program).unwrap().untyped_kernel(kernel).unwrap()
}

/// Launches the built-in `u8` kernel of `binning` over 64 samples of 3..=255 with
/// `params` and 32 private copies of `params.bins` bins.
fn launch_with_params(device: &Device, binning: u32, params: BinParams) -> Result<(), Error> {
    let function = u8_kernel(device, binning);
    let samples: Vec<u8> = (0..64u32).map(|i| (i * 4 + 3) as u8).collect();
    let samples = device.upload(&samples).unwrap();
    let counts = device.alloc_zeroed::<u32>(params.bins as usize).unwrap();
    let handoff = device.alloc_zeroed::<u64>(2).unwrap();
    let copies = Copies { spread: 32, concentrated: 32 };
    let config = LaunchConfig {
        shared_mem_bytes: warpsafe::histogram::shared_bytes(params.bins as u64, copies.spread) as u32,
        ..LaunchConfig::linear(1, 64)
    };
    let (mut samples, mut len, mut params, mut copies) = (samples.device_address(), 64u64, params, copies);
    let (mut counts, mut handoff, mut epoch) = (counts.device_address(), handoff.device_address(), 1u64);
    let args = kernel_args![samples, len, params, copies, counts, handoff, epoch];
    // SAFETY: `histogram`'s contract: one block of 64 threads with the shared bytes of 32
    // copies of `params.bins` bins; 64 one-byte samples in a whole (aligned) allocation;
    // `params` made by `Sample::even` or `BinParams::range` with at least 1 bin (levels of
    // this device, strictly increasing); counts of `bins` words and zeroed hand-off words
    // (epoch 1 is new to them), used by nothing else. The binning may differ from the kernel's, which
    // its contract allows: the kernel checks it and traps.
    unsafe { device.launch_raw(&function, config, &args) }
}

/// Binnings given the parameters of another: the every-value and magic kernels 16
/// identity bins over [0, 16) (every value: each sample its own bin, past 16), the wide
/// kernel 2 magic bins, an even kernel range bins, the range kernel even bins.
fn mismatched_launches(levels: u64) -> Vec<(u32, BinParams)> {
    let sixteen = u8::even(0, 16, 16).unwrap();
    let halves = u8::even(0, 256, 2).unwrap();
    assert_eq!((sixteen.division, halves.division), (DIVIDE_IDENTITY, DIVIDE_MAGIC));
    vec![
        (DIVIDE_EVERY_VALUE, sixteen),
        (DIVIDE_MAGIC, sixteen),
        (DIVIDE_WIDE, halves),
        (DIVIDE_IDENTITY, BinParams::range(levels, 2)),
        (BINS_BETWEEN_LEVELS, sixteen),
    ]
}

#[test]
fn a_kernel_given_another_binning_traps_on_the_emulator() {
    use warpsafe::emu::ErrorKind;
    let device = Device::emulator();
    let levels = device.upload(&[0u8, 128, 255]).unwrap();
    for (binning, params) in mismatched_launches(levels.device_address()) {
        let kernel = u8_kernel(&device, binning).name().to_string();
        let err = launch_with_params(&device, binning, params).unwrap_err();
        let Error::Emulator(e) = &err else { panic!("{kernel}: expected an emulator error, got {err}") };
        assert_eq!(e.kind(), ErrorKind::Trap, "{kernel}: {err}");
        assert!(err.to_string().contains("histogram.rs"), "{kernel}: not the kernel's check: {err}");
    }
    // The same launches with the kernels' own binnings count (the test can tell).
    let sixteen = u8::even(0, 16, 16).unwrap();
    launch_with_params(&device, DIVIDE_IDENTITY, sixteen).unwrap();
    let range = BinParams::range(levels.device_address(), 2);
    launch_with_params(&device, BINS_BETWEEN_LEVELS, range).unwrap();
}

/// Set in the child process that runs the mismatched launch on the GPU (a trap ends the
/// CUDA context, so it runs apart from the other tests).
const MISMATCH_CHILD_ENV: &str = "WARPSAFE_HISTOGRAM_MISMATCH_CHILD";

#[test]
#[ignore = "entry point of the child process that the GPU binning test starts"]
fn mismatched_binning_child_process() {
    if std::env::var_os(MISMATCH_CHILD_ENV).is_none() {
        return;
    }
    let device = Device::gpu().unwrap();
    let levels = device.upload(&[0u8, 128, 255]).unwrap();
    let (binning, params) = mismatched_launches(levels.device_address())[0];
    match launch_with_params(&device, binning, params) {
        Err(err @ Error::KernelFailed { .. }) => println!("child: {err}"),
        other => println!("child: expected KernelFailed, got {other:?}"),
    }
}

#[test]
fn a_kernel_given_another_binning_traps_on_the_gpu() {
    if warpsafe_tests::gpu_or_skip("a_kernel_given_another_binning_traps_on_the_gpu").is_none() {
        return;
    }
    let stdout =
        warpsafe_tests::child_test_stdout("mismatched_binning_child_process", &[(MISMATCH_CHILD_ENV, "1")]);
    warpsafe_tests::note(&format!("child process output:\n{stdout}"));
    assert!(
        stdout.contains("child: warpsafe_histogram_every_u8_1c1 failed"),
        "no KernelFailed in:\n{stdout}"
    );
}
