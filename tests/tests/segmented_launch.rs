//! `warpsafe::reduce::segmented` on the emulator and the GPU: the host `SegmentedReducer`
//! for a sample of built-in (type, operator) pairs and a user operator that does not
//! commute (composition of affine maps), every strategy and `Auto`, fixed lengths and
//! offsets of many patterns (empty segments, lengths 1, 31, 33, 2^k +- 1, random mixed,
//! power law with a few huge segments) against sequential CPU models (floats against an
//! f64 model with a tolerance), the 16-byte vector loads at every misalignment of a
//! segment's start, bit-identical float results across runs, emulator seeds and
//! backends, `Auto`'s choice of kernel (on the GPU for long averages), and a typed error
//! for each kind of bad input.

use std::fmt::Debug;

use bytemuck::Pod;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scan_test_kernels::{self as k, affine_of, Affine, Then};
use warpsafe::emu::Options;
use warpsafe::op::{Max, Min, Operator, Sum};
use warpsafe::reduce::segmented::{is_small_input, small_input_block_elements, SMALL_INPUT_SEGMENTS};
use warpsafe::scan::segmented::{chunk_windows, chunks, window_elements};
use warpsafe_host::segmented::{
    SegmentStrategy, SegmentedKernels, SegmentedOptions, SegmentedReducer, SegmentedReduction,
};
use warpsafe_host::{Device, DeviceBuffer, Error, SegmentsProblem};
use warpsafe_tests::{on_gpu, test_devices, test_program};

/// Emulator seeds (each a different interleaving of warps and blocks).
const SEEDS: std::ops::Range<u64> = 0..3;

/// `Auto` and every strategy.
const STRATEGIES: [SegmentStrategy; 8] = [
    SegmentStrategy::Auto,
    SegmentStrategy::Thread,
    SegmentStrategy::Tile4,
    SegmentStrategy::Tile16,
    SegmentStrategy::Warp,
    SegmentStrategy::Block,
    SegmentStrategy::Balanced,
    SegmentStrategy::Scan,
];

// ---------------------------------------------------------------------------------------
// Element types and CPU models

/// An element type of the tests: its test values and how a result is compared with the
/// sequential model.
trait Element: Pod + PartialEq + Debug {
    /// The element input value `x` stands for.
    fn of(x: u32) -> Self;
    /// Whether `got` matches the model's `expected` for a segment of `len` elements
    /// (`exact`: the f64 model's value for floats).
    fn close(got: Self, expected: Self, exact: f64, len: usize) -> bool;
    /// The value in f64, for the float model (0 for the others).
    fn wide(self) -> f64;
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn of(x: u32) -> $t {
                (x as $t).wrapping_sub(1 << 20)
            }
            fn close(got: $t, expected: $t, _exact: f64, _len: usize) -> bool {
                got == expected
            }
            fn wide(self) -> f64 {
                0.0
            }
        }
    )*};
}
integers!(i32, u64);

macro_rules! floats {
    ($($t:ty: $eps:expr),*) => {$(
        impl Element for $t {
            fn of(x: u32) -> $t {
                (x % 2001) as $t * 0.37 - 370.0
            }
            fn close(got: $t, expected: $t, exact: f64, len: usize) -> bool {
                // Min and max are exact; a sum is within len * eps * 370 of the f64 sum.
                got == expected || (got as f64 - exact).abs() <= $eps * 370.0 * (len.max(1) as f64)
            }
            fn wide(self) -> f64 {
                self as f64
            }
        }
    )*};
}
floats!(f32: 2e-6, f64: 1e-14);

impl Element for Affine {
    fn of(x: u32) -> Affine {
        affine_of(x)
    }
    fn close(got: Affine, expected: Affine, _exact: f64, _len: usize) -> bool {
        got == expected
    }
    fn wide(self) -> f64 {
        0.0
    }
}

/// The composition of affine maps with its kernels from the test crate.
#[derive(Clone, Copy, Default)]
struct Compose;
impl Operator<Affine> for Compose {
    fn identity(self) -> Affine {
        Then.identity()
    }
    fn combine(self, a: Affine, b: Affine) -> Affine {
        Then.combine(a, b)
    }
}
// SAFETY: the test crate's `segmented_reduce_kernels!` kernels of `Affine`, each in its field.
unsafe impl SegmentedReduction<Affine> for Compose {
    fn kernels() -> SegmentedKernels {
        SegmentedKernels {
            program: test_program("scan"),
            thread: &k::segreduce_affine_thread,
            tile4: &k::segreduce_affine_tile4,
            tile16: &k::segreduce_affine_tile16,
            warp: &k::segreduce_affine_warp,
            block: &k::segreduce_affine_block,
            balanced_batches: &k::segreduce_affine_batches,
            balanced_chunks: &k::segreduce_affine_chunks,
            balanced_small: &k::segreduce_affine_small,
            scan: &k::segreduce_affine_scan,
        }
    }
}

/// The sequential reduction of each segment `offsets[s]..offsets[s + 1]`, and for floats
/// the f64 sum of each (the tolerance's reference).
fn model<T: Element, O: Operator<T>>(data: &[T], offsets: &[u64], op: O) -> (Vec<T>, Vec<f64>) {
    offsets
        .windows(2)
        .map(|w| {
            let segment = &data[w[0] as usize..w[1] as usize];
            (
                segment.iter().fold(op.identity(), |acc, &x| op.combine(acc, x)),
                segment.iter().map(|x| x.wide()).sum::<f64>(),
            )
        })
        .unzip()
}

fn random(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen()).collect()
}

// ---------------------------------------------------------------------------------------
// Segment patterns

/// Offsets from segment lengths, starting at `first`.
fn offsets_of(first: u64, lengths: &[u64]) -> Vec<u64> {
    let mut offsets = vec![first];
    for &len in lengths {
        offsets.push(offsets.last().unwrap() + len);
    }
    offsets
}

/// Named lists of segment lengths; `scale` grows the long ones (1 on the emulator).
fn patterns(scale: u64) -> Vec<(&'static str, Vec<u64>)> {
    let mut rng = StdRng::seed_from_u64(13);
    let mixed: Vec<u64> = (0..150).map(|_| rng.gen_range(0..300)).collect();
    let mut power_law: Vec<u64> =
        (0..160).map(|_| (1.0 / rng.gen_range(0.02f64..1.0)).powi(2) as u64 - 1).collect();
    power_law[37] = 6000 * scale;
    power_law[121] = 20000 * scale;
    let around_powers: Vec<u64> = (0..=11).flat_map(|k| [(1u64 << k) - 1, (1 << k) + 1]).collect();
    vec![
        ("no segment", vec![]),
        ("all empty", vec![0; 40]),
        ("length 1", vec![1; 100 * scale as usize]),
        ("length 31", vec![31; 40]),
        ("length 33", vec![33; 40]),
        ("2^k +- 1", around_powers),
        ("empty among others", vec![0, 5, 0, 0, 17, 0, 300, 0, 1, 0, 2000, 0]),
        ("random mixed", mixed),
        ("power law", power_law),
        ("one long", vec![5000 * scale + 3]),
    ]
}

/// Lengths the fixed form is checked at for each segment length (some not multiples).
/// With `rows` (`Auto` and the thread strategy, whose kernel reads lengths 1 to 128 in
/// warp rows of 2 KiB for 32-bit types, 1 to 64 for 64-bit ones) also those lengths and
/// 3, 5, 12 (the ordinary path), at 31, 33, 2^k +- 1, and whole rows plus a partial one;
/// on the GPU (`scale` > 1) at 2^20 + 7 elements, and for lengths 1, 16 and 128 at
/// 2^24 - 1.
fn fixed_cases(scale: u64, rows: bool) -> Vec<(u64, u64)> {
    let mut cases = Vec::new();
    let lengths: &[u64] =
        if rows { &[1, 2, 4, 8, 16, 32, 64, 3, 5, 12, 128, 1024] } else { &[1, 8, 32, 128, 1024] };
    for &len in lengths {
        for n in [0, 1, len - 1, 3 * len + 5, 600 * scale + 33] {
            cases.push((len, n));
        }
        if rows && len <= 128 {
            cases.extend([31, 33, 511, 513, 4 * 512 + 37].map(|n| (len, n)));
            if scale > 1 {
                cases.push((len, (1 << 20) + 7));
            }
            // Several warp rows per warp of a full grid: the shortest and the longest row
            // length (each case costs the debug-built host seconds to make and model).
            if scale > 1 && (len == 1 || len == 16 || len == 128) {
                cases.push((len, (1 << 24) - 1));
            }
        }
    }
    cases.push((u64::MAX, 5));
    cases
}

// ---------------------------------------------------------------------------------------
// Checks

/// Checks `T` with `O` in every strategy on every pattern, offsets and fixed form. Each
/// input and its model are made once and checked under every strategy that runs it (on
/// the GPU the fixed form reaches 2^24 - 1 elements, which the debug-built host side
/// takes seconds to make and model).
fn check<T: Element, O: SegmentedReduction<T>>(device: &Device, what: &str) {
    let scale = if on_gpu(device) { 40 } else { 1 };
    // On the emulator a few blocks (every emulated thread costs), which also makes the
    // workers loop over many segments.
    let max_blocks = if on_gpu(device) { None } else { Some(3) };
    let mut reducer =
        SegmentedReducer::<T, O>::with_options(device, SegmentedOptions { max_blocks, ..Default::default() })
            .unwrap();
    for (name, lengths) in patterns(scale) {
        let first = 3; // offsets need not start at 0
        let offsets = offsets_of(first, &lengths);
        let n = *offsets.last().unwrap() as usize + 2;
        let data: Vec<T> = random(n, n as u64).into_iter().map(T::of).collect();
        let (expected, exact) = model(&data, &offsets, O::default());
        let input = device.upload(&data).unwrap();
        let offsets_buffer = device.upload(&offsets).unwrap();
        let sentinel = T::of(0xdead);
        for strategy in STRATEGIES {
            reducer.set_strategy(strategy);
            let mut output = device.upload(&vec![sentinel; lengths.len() + 1]).unwrap();
            reducer.reduce_offsets(&input, &offsets_buffer, &mut output).unwrap();
            let got = output.download().unwrap();
            compare(
                &got[..lengths.len()],
                &expected,
                &exact,
                &lengths,
                &format!("{what} {strategy:?} offsets {name}"),
            );
            assert_eq!(got[lengths.len()], sentinel, "{what} {strategy:?} {name}: wrote past the segments");
        }
    }
    // Every strategy runs the plain cases; `Auto` and the thread strategy the row cases too.
    let plain = fixed_cases(scale, false);
    for (segment_len, n) in fixed_cases(scale, true) {
        let data: Vec<T> = random(n as usize, n ^ segment_len).into_iter().map(T::of).collect();
        let offsets: Vec<u64> =
            (0..=n.div_ceil(segment_len)).map(|s| s.saturating_mul(segment_len).min(n)).collect();
        let lengths: Vec<u64> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
        let (expected, exact) = model(&data, &offsets, O::default());
        let input = device.upload(&data).unwrap();
        for strategy in STRATEGIES {
            let rows = matches!(strategy, SegmentStrategy::Auto | SegmentStrategy::Thread);
            if !rows && !plain.contains(&(segment_len, n)) {
                continue;
            }
            reducer.set_strategy(strategy);
            let mut output = device.alloc_zeroed::<T>(lengths.len()).unwrap();
            reducer.reduce_fixed(&input, segment_len, &mut output).unwrap();
            let got = output.download().unwrap();
            compare(
                &got,
                &expected,
                &exact,
                &lengths,
                &format!("{what} {strategy:?} fixed {segment_len} over {n}"),
            );
        }
    }
}

fn compare<T: Element>(got: &[T], expected: &[T], exact: &[f64], lengths: &[u64], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}");
    for (s, ((&g, &e), &x)) in got.iter().zip(expected).zip(exact).enumerate() {
        assert!(
            T::close(g, e, x, lengths[s] as usize),
            "{what}: segment {s} of length {}: got {g:?}, expected {e:?}",
            lengths[s]
        );
    }
}

#[test]
fn built_in_operators_match_the_model() {
    for device in test_devices("segmented_built_in") {
        check::<i32, Sum>(&device, "i32 sum");
        check::<u64, Sum>(&device, "u64 sum");
        check::<f32, Sum>(&device, "f32 sum");
        check::<f64, Max>(&device, "f64 max");
        // The emulator runs a sample (each emulated check takes tens of seconds on two
        // cores); the kernels are one generic implementation for every pair.
        if on_gpu(&device) {
            check::<i32, Min>(&device, "i32 min");
            check::<u64, Max>(&device, "u64 max");
            check::<f32, Max>(&device, "f32 max");
            check::<f64, Min>(&device, "f64 min");
            check::<f64, Sum>(&device, "f64 sum");
        }
    }
}

#[test]
fn a_non_commutative_user_operator_keeps_the_order() {
    for device in test_devices("segmented_non_commutative") {
        check::<Affine, Compose>(&device, "affine composition");
    }
}

#[test]
fn reduced_grids_loop_over_their_segments() {
    // One block: every worker takes many segments.
    for device in test_devices("segmented_one_block") {
        for strategy in SegmentStrategy::ALL {
            let options = SegmentedOptions { strategy, max_blocks: Some(1), ..Default::default() };
            let mut reducer = SegmentedReducer::<i32, Sum>::with_options(&device, options).unwrap();
            let lengths: Vec<u64> = (0..700).map(|s| s % 37).collect();
            let offsets = offsets_of(0, &lengths);
            let data: Vec<i32> =
                random(*offsets.last().unwrap() as usize, 5).into_iter().map(i32::of).collect();
            let (expected, _) = model(&data, &offsets, Sum);
            let mut output = device.alloc_zeroed::<i32>(lengths.len()).unwrap();
            reducer
                .reduce_offsets(
                    &device.upload(&data).unwrap(),
                    &device.upload(&offsets).unwrap(),
                    &mut output,
                )
                .unwrap();
            assert_eq!(output.download().unwrap(), expected, "{strategy:?}");
        }
    }
}

/// Segment lengths around the 16-byte vector (4 elements of 32 bits, 2 of 64 bits) and
/// the tiles' steps: heads and tails of every size, vectors that a tile's lanes share
/// unevenly.
const AROUND_VECTORS: [u64; 22] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 515];

/// `T` with `O` in every strategy, over segments of [`AROUND_VECTORS`] starting at each
/// element offset `first` of a 16-byte vector (so every misalignment of a segment's start
/// against the vectors), against the exact model: read as vectors, every element must be
/// counted exactly once.
fn check_vector_edges<T: Element, O: SegmentedReduction<T>>(device: &Device, what: &str) {
    let max_blocks = if on_gpu(device) { None } else { Some(2) };
    let mut reducer =
        SegmentedReducer::<T, O>::with_options(device, SegmentedOptions { max_blocks, ..Default::default() })
            .unwrap();
    for strategy in STRATEGIES {
        reducer.set_strategy(strategy);
        for first in 0..=4 {
            let offsets = offsets_of(first, &AROUND_VECTORS);
            let n = *offsets.last().unwrap() as usize + 3;
            let data: Vec<T> = random(n, first).into_iter().map(T::of).collect();
            let (expected, exact) = model(&data, &offsets, O::default());
            let mut output = device.alloc_zeroed::<T>(AROUND_VECTORS.len()).unwrap();
            reducer
                .reduce_offsets(
                    &device.upload(&data).unwrap(),
                    &device.upload(&offsets).unwrap(),
                    &mut output,
                )
                .unwrap();
            compare(
                &output.download().unwrap(),
                &expected,
                &exact,
                &AROUND_VECTORS,
                &format!("{what} {strategy:?} vector edges from {first}"),
            );
        }
        // Fixed lengths 1 to 9 (the thread strategy's short segments, most of them
        // straddling vectors) over a length that is not a multiple of any of them.
        for segment_len in 1..=9u64 {
            let n = 200 + segment_len;
            let data: Vec<T> = random(n as usize, 7 * segment_len).into_iter().map(T::of).collect();
            let offsets: Vec<u64> = (0..=n.div_ceil(segment_len)).map(|s| (s * segment_len).min(n)).collect();
            let lengths: Vec<u64> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
            let (expected, exact) = model(&data, &offsets, O::default());
            let mut output = device.alloc_zeroed::<T>(lengths.len()).unwrap();
            reducer.reduce_fixed(&device.upload(&data).unwrap(), segment_len, &mut output).unwrap();
            compare(
                &output.download().unwrap(),
                &expected,
                &exact,
                &lengths,
                &format!("{what} {strategy:?} fixed {segment_len} over {n}"),
            );
        }
    }
}

#[test]
fn vector_loads_count_every_element_once_at_every_misalignment() {
    for device in test_devices("segmented_vector_edges") {
        // Integer sums are exact in any order: a lost or doubled element shows.
        check_vector_edges::<i32, Sum>(&device, "i32 sum");
        check_vector_edges::<u64, Sum>(&device, "u64 sum");
        check_vector_edges::<f32, Max>(&device, "f32 max");
        // Not commutative: read in index order, never as vectors.
        check_vector_edges::<Affine, Compose>(&device, "affine composition");
    }
}

/// f32 sums of the power-law pattern with `options` on `device`, then, for the thread
/// strategy, of fixed lengths 1 to 128 (its warp rows) and 3 over 3 rows and a part,
/// as bits. (The other strategies read the fixed form as they read offsets; leaving them
/// out keeps the emulated test short.)
fn f32_sums(device: &Device, options: SegmentedOptions) -> Vec<u32> {
    let lengths = patterns(1).into_iter().find(|(name, _)| *name == "power law").unwrap().1;
    let offsets = offsets_of(0, &lengths);
    let data: Vec<f32> = random(*offsets.last().unwrap() as usize, 99).into_iter().map(f32::of).collect();
    let mut reducer = SegmentedReducer::<f32, Sum>::with_options(device, options).unwrap();
    let mut output = device.alloc_zeroed::<f32>(lengths.len()).unwrap();
    reducer
        .reduce_offsets(&device.upload(&data).unwrap(), &device.upload(&offsets).unwrap(), &mut output)
        .unwrap();
    let mut sums = output.download().unwrap();
    if options.strategy != SegmentStrategy::Thread {
        return sums.into_iter().map(f32::to_bits).collect();
    }
    let fixed = device.upload(&data[..3 * 512 + 37]).unwrap();
    for segment_len in [1, 2, 4, 8, 16, 32, 64, 128, 3] {
        let mut output = device.alloc_zeroed::<f32>(fixed.len().div_ceil(segment_len as usize)).unwrap();
        reducer.reduce_fixed(&fixed, segment_len, &mut output).unwrap();
        sums.extend(output.download().unwrap());
    }
    sums.into_iter().map(f32::to_bits).collect()
}

#[test]
fn float_results_are_bit_identical_across_runs_seeds_and_backends() {
    let default = |strategy| SegmentedOptions { strategy, ..Default::default() };
    // The balanced strategy with its default limits (at this size its kernel for small
    // inputs, whose blocks take the two huge segments) and with tiny ones (most segments
    // in many chunks).
    let tiny = SegmentedOptions {
        long_elements: Some(64),
        chunk_elements: Some(32),
        ..default(SegmentStrategy::Balanced)
    };
    for options in SegmentStrategy::ALL.map(default).into_iter().chain([tiny]) {
        let strategy = (options.strategy, options.long_elements);
        let reference = f32_sums(&Device::emulator_with(Options { seed: 0, ..Options::default() }), options);
        for seed in SEEDS {
            for blocks in [1, 8] {
                let device = Device::emulator_with(Options {
                    seed,
                    max_resident_blocks: blocks,
                    ..Options::default()
                });
                assert_eq!(
                    f32_sums(&device, options),
                    reference,
                    "{strategy:?}, seed {seed}, {blocks} resident blocks"
                );
            }
        }
        for device in test_devices("segmented_determinism") {
            for run in 0..3 {
                assert_eq!(
                    f32_sums(&device, options),
                    reference,
                    "{strategy:?} on {}, run {run}",
                    device.name()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The balanced strategy with tiny limits

/// `(long_elements, chunk_elements)` of the balanced tests: tiny, so that the emulator
/// runs many chunks and descriptors (16, 16: a long segment of one chunk plus one
/// element; 24, 5: many chunks per segment; 64, 32: the power law's segments in chunks).
const BALANCED_LIMITS: [(u64, u64); 3] = [(16, 16), (24, 5), (64, 32)];

/// Chunks an emulated pattern may have (each chunk is a block's turn: emulated threads
/// cost).
const EMULATED_CHUNKS: u64 = 300;

/// Segment lengths around the balanced limits: exactly `long` and `long + 1`, one chunk
/// plus one element, whole chunks and one more, short ones between them.
fn around_limits(long: u64, chunk: u64) -> Vec<u64> {
    vec![
        0,
        long,
        long + 1,
        chunk + 1,
        1,
        2 * chunk,
        2 * chunk + 1,
        long - 1,
        7 * chunk + 3,
        0,
        long + 1,
        300,
        3,
        long,
    ]
}

/// `T` with `O` in the balanced strategy (and `Auto`, which is it for offsets) with tiny limits,
/// on every pattern and the lengths around the limits, each called four times in a row
/// (calls with a chunk launch use the scratch's two packed counters in turn, so from the
/// third call on each finds a counter that a chunk launch cleared; a pattern of at most
/// `long` elements has no chunk launch, and its calls all use one counter).
fn check_balanced<T: Element, O: SegmentedReduction<T>>(device: &Device, what: &str) {
    let scale = if on_gpu(device) { 40 } else { 1 };
    let max_blocks = if on_gpu(device) { None } else { Some(3) };
    for (long, chunk) in BALANCED_LIMITS {
        let options = SegmentedOptions {
            max_blocks,
            long_elements: Some(long),
            chunk_elements: Some(chunk),
            ..Default::default()
        };
        let mut reducer = SegmentedReducer::<T, O>::with_options(device, options).unwrap();
        let mut cases = patterns(scale);
        cases.push(("around the limits", around_limits(long, chunk)));
        // Auto is the balanced strategy for offsets: checked with the first limits only.
        let auto = (long, chunk) == BALANCED_LIMITS[0];
        for strategy in [SegmentStrategy::Balanced, SegmentStrategy::Auto] {
            if strategy == SegmentStrategy::Auto && !auto {
                continue;
            }
            reducer.set_strategy(strategy);
            for (name, lengths) in &cases {
                if !on_gpu(device) && lengths.iter().sum::<u64>() / chunk > EMULATED_CHUNKS {
                    continue;
                }
                let offsets = offsets_of(5, lengths);
                let n = *offsets.last().unwrap() as usize + 1;
                let data: Vec<T> = random(n, n as u64 ^ long).into_iter().map(T::of).collect();
                let (expected, exact) = model(&data, &offsets, O::default());
                let input = device.upload(&data).unwrap();
                let offsets_buffer = device.upload(&offsets).unwrap();
                for call in 0..4 {
                    let sentinel = T::of(0xbeef + call);
                    let mut output = device.upload(&vec![sentinel; lengths.len() + 1]).unwrap();
                    reducer.reduce_offsets(&input, &offsets_buffer, &mut output).unwrap();
                    let got = output.download().unwrap();
                    let case = format!("{what} {strategy:?} long {long} chunk {chunk} {name}, call {call}");
                    compare(&got[..lengths.len()], &expected, &exact, lengths, &case);
                    assert_eq!(got[lengths.len()], sentinel, "{case}: wrote past the segments");
                }
            }
        }
    }
}

#[test]
fn balanced_splits_long_segments_into_chunks() {
    for device in test_devices("segmented_balanced") {
        check_balanced::<i32, Sum>(&device, "i32 sum");
        check_balanced::<u64, Max>(&device, "u64 max");
        check_balanced::<f32, Sum>(&device, "f32 sum");
        check_balanced::<f64, Min>(&device, "f64 min");
        check_balanced::<Affine, Compose>(&device, "affine composition");
    }
}

#[test]
fn balanced_chunks_find_their_descriptors_among_many() {
    // 1 500 long segments (each one chunk, between short ones): the chunk kernel's
    // warp-wide search for a chunk's descriptor takes two rounds of 32 candidates before
    // its last one (more than 1 024 descriptors), and blocks that loop over chunks search
    // from their previous descriptor. Every long segment's sum is checked.
    const LONG: u64 = 16;
    let lengths: Vec<u64> = (0..3000u64).map(|s| if s % 2 == 0 { LONG + 1 + s % 7 } else { s % 5 }).collect();
    assert!(lengths.iter().filter(|&&l| l > LONG).count() > 1024);
    for device in test_devices("segmented_balanced_search") {
        let max_blocks = if on_gpu(&device) { None } else { Some(3) };
        let options = SegmentedOptions {
            max_blocks,
            long_elements: Some(LONG),
            chunk_elements: Some(2 * LONG),
            strategy: SegmentStrategy::Balanced,
        };
        let mut reducer = SegmentedReducer::<i32, Sum>::with_options(&device, options).unwrap();
        let offsets = offsets_of(3, &lengths);
        let n = *offsets.last().unwrap() as usize + 1;
        let data: Vec<i32> = random(n, 29).into_iter().map(i32::of).collect();
        let (expected, exact) = model(&data, &offsets, Sum);
        let input = device.upload(&data).unwrap();
        let mut output = device.upload(&vec![-7i32; lengths.len() + 1]).unwrap();
        reducer.reduce_offsets(&input, &device.upload(&offsets).unwrap(), &mut output).unwrap();
        let got = output.download().unwrap();
        compare(&got[..lengths.len()], &expected, &exact, &lengths, "many long segments");
        assert_eq!(got[lengths.len()], -7, "wrote past the segments");
    }
}

#[test]
fn balanced_calls_with_and_without_a_chunk_launch_reuse_the_cleared_counters() {
    // One reducer, its scratch allocated for the largest input first, then calls with a
    // chunk launch (inputs longer than 16 `long_elements`) and without one (small inputs,
    // with long segments or none) in an order that makes each counter serve after a chunk
    // launch cleared it and after a call that left it untouched.
    const LONG: u64 = 16;
    let with_chunks: [&[u64]; 2] = [&[100, 3, 40, 1, 17, 0, 33, 120], &[20, 2, 64, 5, 200]];
    let without_chunks: [&[u64]; 2] = [&[3, 5, 0, 2], &[40, 3, 17]];
    let calls = [
        with_chunks[0],
        without_chunks[0],
        with_chunks[1],
        with_chunks[0],
        without_chunks[1],
        with_chunks[1],
        with_chunks[0],
    ];
    for device in test_devices("segmented_balanced_counters") {
        let max_blocks = if on_gpu(&device) { None } else { Some(3) };
        let options = SegmentedOptions {
            max_blocks,
            long_elements: Some(LONG),
            chunk_elements: Some(LONG),
            strategy: SegmentStrategy::Balanced,
        };
        let mut reducer = SegmentedReducer::<i32, Sum>::with_options(&device, options).unwrap();
        for (call, lengths) in calls.iter().enumerate() {
            let offsets = offsets_of(5, lengths);
            let n = *offsets.last().unwrap() as usize + 1;
            assert_eq!(
                is_small_input::<i32>(n as u64, lengths.len() as u64, LONG),
                without_chunks.iter().any(|without| std::ptr::eq(*lengths, *without)),
                "call {call}: its input's length"
            );
            let data: Vec<i32> = random(n, call as u64).into_iter().map(i32::of).collect();
            let (expected, exact) = model(&data, &offsets, Sum);
            let input = device.upload(&data).unwrap();
            let mut output = device.upload(&vec![-7i32; lengths.len() + 1]).unwrap();
            reducer.reduce_offsets(&input, &device.upload(&offsets).unwrap(), &mut output).unwrap();
            let got = output.download().unwrap();
            compare(&got[..lengths.len()], &expected, &exact, lengths, &format!("counters, call {call}"));
            assert_eq!(got[lengths.len()], -7, "call {call}: wrote past the segments");
        }
    }
}

#[test]
fn balanced_bad_offsets_never_overflow_the_scratch() {
    // Valid segments that overlap across bad ones ([0, n) three times, [2, n) once): more
    // long elements than the input holds, so (for an input past the small limit) more
    // chunks than the scratch has room for. Those the scratch cannot take are reduced by
    // the batch kernel's warps instead. A small input touches no scratch: its warps
    // reduce them (10 elements), or its blocks (3 000, past the blocks' limit of 2 048).
    for device in test_devices("segmented_balanced_bad") {
        for (n, long) in [(10i32, 2), (40, 2), (3000, 1024)] {
            let options =
                SegmentedOptions { long_elements: Some(long), chunk_elements: Some(2), ..Default::default() };
            let mut reducer = SegmentedReducer::<i32, Sum>::with_options(&device, options).unwrap();
            let small = is_small_input::<i32>(n as u64, 8, long);
            assert_eq!(small, n != 40, "input of {n}: which kernels");
            let data: Vec<i32> = (1..=n).collect();
            let input = device.upload(&data).unwrap();
            let end = n as u64;
            let offsets = device.upload(&[0u64, end, 0, end, 0, end, 2, end, 3]).unwrap();
            let whole = n * (n + 1) / 2;
            for call in 0..3 {
                let mut output = device.upload(&[-1i32; 8]).unwrap();
                assert_eq!(
                    invalid(reducer.reduce_offsets(&input, &offsets, &mut output)),
                    SegmentsProblem::NotMonotonic { segment: 1 },
                    "input of {n}, call {call}"
                );
                let expected = [whole, 0, whole, 0, whole, 0, whole - 3, 0];
                assert_eq!(output.download().unwrap(), expected, "input of {n}, call {call}");
            }
            // And a good call after them: the scratch was left clean.
            let mut output = device.alloc_zeroed::<i32>(2).unwrap();
            reducer.reduce_offsets(&input, &device.upload(&[0u64, 7, end]).unwrap(), &mut output).unwrap();
            assert_eq!(output.download().unwrap(), [28, whole - 28], "input of {n}");
        }
    }
}

/// `T` with `O` in the balanced strategy's kernel for small inputs: a warp per segment,
/// and a block for each segment longer than `small_input_block_elements` (at least 8 KiB,
/// so 2 048 `f32`s, 1 024 of the 8-byte types), here at the first segments of a grid's
/// blocks and warps, in later rounds of a block (one block of 8 warps: 600 segments take
/// 75 rounds, so the block walks them all again) and as the very last segment, among
/// short and empty ones; long segments in a row (which go to different blocks of a full
/// grid, or all to the one block); and one segment of (nearly) the whole input. Each
/// input is checked to be small and to have long and short segments on both sides of
/// the block's limit, so that both paths run.
fn check_small<T: Element, O: SegmentedReduction<T>>(device: &Device, what: &str) {
    const LONG: u64 = 1024;
    let long_at = [0usize, 1, 7, 8, 300, 599];
    let mut rng = StdRng::seed_from_u64(41);
    let spread: Vec<u64> = (0..600)
        .map(|s| if long_at.contains(&s) { 2049 + rng.gen_range(0..60) } else { rng.gen_range(0..4) })
        .collect();
    let in_a_row: Vec<u64> = (0..40).map(|s| if (3..8).contains(&s) { 2100 + s } else { s % 3 }).collect();
    let cases: [(&str, Vec<u64>); 3] = [
        ("long segments spread out", spread),
        ("long segments in a row", in_a_row),
        ("one segment", vec![16 * LONG - 4]),
    ];
    for max_blocks in [Some(1), Some(3), None] {
        let options = SegmentedOptions {
            max_blocks,
            long_elements: Some(LONG),
            strategy: SegmentStrategy::Balanced,
            ..Default::default()
        };
        let mut reducer = SegmentedReducer::<T, O>::with_options(device, options).unwrap();
        for (name, lengths) in &cases {
            let offsets = offsets_of(3, lengths);
            let n = *offsets.last().unwrap() + 1;
            let case = format!("{what}, {name}, at most {max_blocks:?} blocks");
            assert!(
                is_small_input::<T>(n, lengths.len() as u64, LONG),
                "{case}: a small input ({n} elements)"
            );
            let block = small_input_block_elements::<T>(n);
            assert!(lengths.iter().any(|&l| l > block), "{case}: a segment for a block");
            assert!(lengths.len() == 1 || lengths.iter().any(|&l| l <= block), "{case}: segments for warps");
            let data: Vec<T> = random(n as usize, n ^ 77).into_iter().map(T::of).collect();
            let (expected, exact) = model(&data, &offsets, O::default());
            let (input, offsets) = (device.upload(&data).unwrap(), device.upload(&offsets).unwrap());
            let mut output = device.upload(&vec![T::of(0xbeef); lengths.len() + 1]).unwrap();
            reducer.reduce_offsets(&input, &offsets, &mut output).unwrap();
            let got = output.download().unwrap();
            compare(&got[..lengths.len()], &expected, &exact, lengths, &case);
            assert_eq!(got[lengths.len()], T::of(0xbeef), "{case}: wrote past the segments");
        }
    }
}

#[test]
fn small_inputs_take_a_warp_per_segment_and_a_block_per_long_one() {
    for device in test_devices("segmented_small_inputs") {
        check_small::<f32, Sum>(&device, "f32 sum");
        check_small::<u64, Max>(&device, "u64 max");
        check_small::<Affine, Compose>(&device, "affine composition");
    }
    // Several interleavings of the emulated warps and blocks.
    for seed in SEEDS {
        let device = Device::emulator_with(Options { seed, max_resident_blocks: 2, ..Options::default() });
        check_small::<f32, Sum>(&device, &format!("f32 sum, seed {seed}"));
    }
}

#[test]
fn small_inputs_are_told_apart_by_length_and_segment_count() {
    // The host's choice (and so each segment's order of combination) depends on the
    // lengths alone: at most 16 `long_elements` elements, 512 KiB and 16 384 segments.
    let long = 8192;
    assert!(is_small_input::<f32>(16 * long, SMALL_INPUT_SEGMENTS, long));
    assert!(!is_small_input::<f32>(16 * long + 1, 1, long));
    assert!(!is_small_input::<f32>(1, SMALL_INPUT_SEGMENTS + 1, long));
    assert!(!is_small_input::<f32>(17, 1, 1));
    assert!(!is_small_input::<f64>(16 * long, 1, u64::MAX));
    assert!(is_small_input::<f64>(8 * long, 1, u64::MAX));
    assert!(!is_small_input::<f32>(u64::MAX, 1, u64::MAX));
    // The block takes a 32nd of the input, at least 8 KiB.
    assert_eq!(small_input_block_elements::<f32>(1 << 16), 2048);
    assert_eq!(small_input_block_elements::<f32>(1 << 17), 4096);
    assert_eq!(small_input_block_elements::<f64>(1 << 10), 1024);
    assert_eq!(small_input_block_elements::<u8>(0), 8192);
}

// ---------------------------------------------------------------------------------------
// Bad input

fn invalid(result: Result<(), Error>) -> SegmentsProblem {
    match result {
        Err(Error::InvalidSegments { problem, .. }) => problem,
        other => panic!("expected Error::InvalidSegments, got {other:?}"),
    }
}

#[test]
fn bad_input_gets_a_typed_error() {
    for device in test_devices("segmented_bad_input") {
        let mut reducer = SegmentedReducer::<i32, Sum>::new(&device).unwrap();
        let input = device.upload(&[1i32; 10]).unwrap();
        let mut output = device.alloc_zeroed::<i32>(4).unwrap();
        let upload = |offsets: &[u64]| device.upload(offsets).unwrap();

        assert_eq!(invalid(reducer.reduce_fixed(&input, 0, &mut output)), SegmentsProblem::ZeroSegmentLength);
        assert_eq!(
            invalid(reducer.reduce_fixed(&input, 2, &mut output)),
            SegmentsProblem::OutputTooShort { segments: 5, len: 4 }
        );
        let empty: DeviceBuffer<u64> = device.alloc_zeroed(0).unwrap();
        assert_eq!(
            invalid(reducer.reduce_offsets(&input, &empty, &mut output)),
            SegmentsProblem::EmptyOffsets
        );
        assert_eq!(
            invalid(reducer.reduce_offsets(&input, &upload(&[0, 1, 2, 3, 4, 5]), &mut output)),
            SegmentsProblem::OutputTooShort { segments: 5, len: 4 }
        );
        for strategy in SegmentStrategy::ALL {
            reducer.set_strategy(strategy);
            // Segment 2 ends before it begins, segment 3 past the input: the lowest is named.
            let mut output = device.upload(&[-1i32; 4]).unwrap();
            assert_eq!(
                invalid(reducer.reduce_offsets(&input, &upload(&[0, 2, 6, 4, 11]), &mut output)),
                SegmentsProblem::NotMonotonic { segment: 2 },
                "{strategy:?}"
            );
            // The good segments are reduced, the bad ones read nothing and get the identity.
            assert_eq!(output.download().unwrap(), [2, 4, 0, 0], "{strategy:?}");
            assert_eq!(
                invalid(reducer.reduce_offsets(&input, &upload(&[0, 2, 4, 6, u64::MAX]), &mut output)),
                SegmentsProblem::PastInput { segment: 3, len: 10 },
                "{strategy:?}"
            );
            assert_eq!(
                invalid(reducer.reduce_offsets(&input, &upload(&[11, 12]), &mut output)),
                SegmentsProblem::PastInput { segment: 0, len: 10 },
                "{strategy:?}"
            );
            // The error word is reset: a good call after a bad one succeeds.
            reducer.reduce_offsets(&input, &upload(&[0, 10]), &mut output).unwrap();
            assert_eq!(output.download().unwrap()[0], 10);
        }
        // An `_on` call does not report bad offsets; the word it leaves set is reset before
        // the next waiting call, which succeeds (and a bad waiting call after it names its
        // own segment).
        let (stream, bad, good) = (device.stream().unwrap(), upload(&[0, 2, 1]), upload(&[0, 10]));
        // SAFETY: the buffers outlive the launch, which the synchronize below waits for;
        // nothing else uses them meanwhile.
        unsafe { reducer.reduce_offsets_on(&stream, &input, &bad, &output) }.unwrap();
        stream.synchronize().unwrap();
        reducer.reduce_offsets(&input, &good, &mut output).unwrap();
        assert_eq!(output.download().unwrap()[0], 10);
        assert_eq!(
            invalid(reducer.reduce_offsets(&input, &upload(&[0, 4, 3, 2]), &mut output)),
            SegmentsProblem::NotMonotonic { segment: 1 }
        );
        // A buffer of another device.
        let other = Device::emulator();
        let foreign = other.upload(&[1i32; 10]).unwrap();
        assert!(matches!(reducer.reduce_fixed(&foreign, 4, &mut output), Err(Error::Unsupported { .. })));
        let foreign_offsets = other.upload(&[0u64, 1]).unwrap();
        assert!(matches!(
            reducer.reduce_offsets(&input, &foreign_offsets, &mut output),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            SegmentedReducer::<i32, Sum>::with_options(
                &device,
                SegmentedOptions { max_blocks: Some(0), ..Default::default() }
            ),
            Err(Error::Unsupported { .. })
        ));
    }
}

#[test]
fn auto_picks_the_thread_strategy_for_fixed_lengths_read_in_warp_rows() {
    let f32_sum = SegmentStrategy::for_fixed::<f32, Sum>;
    // Powers of two from 4 to 512 bytes (ROW_SEGMENT_BYTES).
    for segment_len in [1, 2, 4, 8, 16, 32, 64, 128] {
        assert_eq!(f32_sum(1 << 24, segment_len), SegmentStrategy::Thread, "f32 {segment_len}");
    }
    assert_eq!(warpsafe::reduce::segmented::ROW_SEGMENT_BYTES, 512);
    // 1024 bytes, 12 bytes, 96 bytes: by the average.
    assert_eq!(f32_sum(1 << 24, 256), SegmentStrategy::Tile16);
    assert_eq!(f32_sum(1 << 24, 3), SegmentStrategy::Thread);
    assert_eq!(f32_sum(1 << 24, 24), SegmentStrategy::Tile4);
    assert_eq!(f32_sum(1 << 24, 65536), SegmentStrategy::Block);
    assert_eq!(SegmentStrategy::for_fixed::<f64, Max>(1 << 24, 8), SegmentStrategy::Thread);
    assert_eq!(SegmentStrategy::for_fixed::<f64, Max>(1 << 24, 64), SegmentStrategy::Thread);
    assert_eq!(SegmentStrategy::for_fixed::<f64, Max>(1 << 24, 128), SegmentStrategy::Tile16);
    assert_eq!(SegmentStrategy::for_fixed::<u64, Sum>(1 << 24, 6), SegmentStrategy::Tile4);
    // Not commutative: never read as vectors, so by the average.
    assert_eq!(SegmentStrategy::for_fixed::<Affine, Compose>(1 << 24, 8), SegmentStrategy::Tile4);
    assert_eq!(SegmentStrategy::for_fixed::<i32, Sum>(0, u64::MAX), SegmentStrategy::Thread);
    let reducer = SegmentedReducer::<f32, Sum>::new(&Device::emulator()).unwrap();
    assert_eq!(reducer.strategy_for_fixed(1 << 24, 8), SegmentStrategy::Thread);
}

#[test]
fn auto_picks_by_average_length() {
    let pick = SegmentStrategy::for_average;
    assert_eq!(pick(1 << 20, 1 << 20), SegmentStrategy::Thread);
    assert_eq!(pick(8 << 20, 1 << 20), SegmentStrategy::Tile4);
    assert_eq!(pick(32 << 20, 1 << 20), SegmentStrategy::Tile4);
    assert_eq!(pick(128 << 20, 1 << 20), SegmentStrategy::Tile16);
    assert_eq!(pick(1024 << 10, 1 << 10), SegmentStrategy::Warp);
    assert_eq!(pick(2048 << 10, 1 << 10), SegmentStrategy::Warp);
    assert_eq!(pick(65536 << 10, 1 << 10), SegmentStrategy::Block);
    // Longer than 2048: a warp each only with at least 1024 segments, up to 8192.
    assert_eq!(pick(4096 << 8, 1 << 8), SegmentStrategy::Block);
    assert_eq!(pick(4096 << 10, 1 << 10), SegmentStrategy::Warp);
    assert_eq!(pick((4096 << 10) - 1, (1 << 10) - 1), SegmentStrategy::Block);
    assert_eq!(pick(8192 << 10, 1 << 10), SegmentStrategy::Warp);
    assert_eq!(pick(8192 << 14, 1 << 14), SegmentStrategy::Warp);
    assert_eq!(pick((8192 << 14) + (1 << 14), 1 << 14), SegmentStrategy::Block);
    assert_eq!(pick(16384 << 14, 1 << 14), SegmentStrategy::Block);
    assert_eq!(pick(32768 << 13, 1 << 13), SegmentStrategy::Block);
    assert_eq!(pick(0, 0), SegmentStrategy::Thread);
    // Auto: balanced for offsets (whatever the lengths); for a fixed length the warp rows
    // (32 bytes of i32) or else the average.
    let reducer = SegmentedReducer::<i32, Sum>::new(&Device::emulator()).unwrap();
    assert_eq!(reducer.strategy_for_offsets(1 << 20), SegmentStrategy::Balanced);
    // From 256 MiB on, the scan strategy; by bytes, not elements.
    assert_eq!(reducer.strategy_for_offsets((1 << 26) - 1), SegmentStrategy::Balanced);
    assert_eq!(reducer.strategy_for_offsets(1 << 26), SegmentStrategy::Scan);
    assert_eq!(SegmentStrategy::for_offsets::<f64>(1 << 25), SegmentStrategy::Scan);
    assert_eq!(SegmentStrategy::for_offsets::<f64>((1 << 25) - 1), SegmentStrategy::Balanced);
    assert_eq!(reducer.strategy_for_fixed(8 << 20, 8), SegmentStrategy::Thread);
    assert_eq!(reducer.strategy_for_fixed(12 << 20, 12), SegmentStrategy::Tile4);
}

/// The block strategy's block size follows the segment count, and the kernel's order of
/// combination follows the block size: 511 segments of 1500 `f32`s (375 vectors, one
/// per rank of 512) and the same data with a 512th segment (blocks of 256, ranks folding
/// up to two vectors) give other bits in the shared segments, so a launch that ignored the
/// rule could not pass; both match the model, and give the same bits under every emulator
/// seed and on the GPU.
#[test]
fn the_block_strategy_halves_its_blocks_from_many_segments() {
    use warpsafe_host::segmented::{MANY_BLOCK_SEGMENTS, MANY_SEGMENTS_BLOCK_THREADS};
    let block = SegmentStrategy::Block;
    assert_eq!(block.block_threads(0), 512);
    assert_eq!(block.block_threads(MANY_BLOCK_SEGMENTS - 1), 512);
    assert_eq!(block.block_threads(MANY_BLOCK_SEGMENTS), MANY_SEGMENTS_BLOCK_THREADS);
    assert_eq!(block.block_threads(u64::MAX), 256);
    for other in [SegmentStrategy::Thread, SegmentStrategy::Warp, SegmentStrategy::Balanced] {
        assert_eq!(other.block_threads(0), 256);
        assert_eq!(other.block_threads(MANY_BLOCK_SEGMENTS), 256);
    }
    let segment_len = 1500;
    let many = MANY_BLOCK_SEGMENTS;
    let data: Vec<f32> = random((segment_len * many) as usize, 41).into_iter().map(f32::of).collect();
    let sums = |device: &Device, segments: u64| {
        // Two blocks on the emulator (each walks its share of the segments).
        let max_blocks = if on_gpu(device) { None } else { Some(2) };
        let options = SegmentedOptions { strategy: block, max_blocks, ..Default::default() };
        let mut reducer = SegmentedReducer::<f32, Sum>::with_options(device, options).unwrap();
        let input = device.upload(&data[..(segment_len * segments) as usize]).unwrap();
        let mut output = device.alloc_zeroed::<f32>(segments as usize).unwrap();
        reducer.reduce_fixed(&input, segment_len, &mut output).unwrap();
        output.download().unwrap()
    };
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let offsets: Vec<u64> = (0..=many).map(|s| s * segment_len).collect();
    let (expected, exact) = model(&data, &offsets, Sum);
    let lengths = vec![segment_len; many as usize];
    let emulator = |seed| Device::emulator_with(Options { seed, ..Options::default() });
    let (few_bits, many_bits) = (bits(&sums(&emulator(0), many - 1)), bits(&sums(&emulator(0), many)));
    let differ = few_bits.iter().zip(&many_bits).filter(|(a, b)| a != b).count();
    assert!(differ > 0, "blocks of 512 and of 256 must combine in other orders: no segment's bits differ");
    let few_sums: Vec<f32> = few_bits.iter().map(|&b| f32::from_bits(b)).collect();
    let many_sums: Vec<f32> = many_bits.iter().map(|&b| f32::from_bits(b)).collect();
    compare(&few_sums, &expected[..many as usize - 1], &exact, &lengths, "511 segments");
    compare(&many_sums, &expected, &exact, &lengths, "512 segments");
    let mut devices: Vec<Device> = (1..SEEDS.end).map(emulator).collect();
    devices.extend(test_devices("segmented_block_threads").into_iter().filter(on_gpu));
    for device in devices {
        assert_eq!(bits(&sums(&device, many - 1)), few_bits, "511 segments on {}", device.name());
        assert_eq!(bits(&sums(&device, many)), many_bits, "512 segments on {}", device.name());
    }
}

/// Auto's rule for long averages on the device (GPU only: 1024 segments of more than 2048
/// elements are millions of elements, too many for the emulator; the rule itself is
/// checked above): the fixed form with average lengths 2049 to 8192 (whole elements per
/// segment, rounded down) and at least 1024 segments gives the warp strategy's bits; with
/// fewer segments, or longer ones, the block strategy's. Random floats make the two
/// strategies' orders of combination give other bits, which the test checks first, so a
/// wrong pick cannot pass.
#[test]
fn auto_reduces_many_long_segments_with_the_warp_strategy_on_the_gpu() {
    let Some(device) = warpsafe_tests::gpu_or_skip("segmented_auto_long").map(Device::from) else { return };
    let mut rng = StdRng::seed_from_u64(29);
    let mut reducer = SegmentedReducer::<f32, Sum>::new(&device).unwrap();
    for (segment_len, segments, expected) in [
        (2050, 2048, SegmentStrategy::Warp),
        (4096, 2048, SegmentStrategy::Warp),
        (8192, 2100, SegmentStrategy::Warp),
        (8193, 2048, SegmentStrategy::Warp),
        (4096, 1024, SegmentStrategy::Warp),
        (4096, 1023, SegmentStrategy::Block),
        (8194, 2048, SegmentStrategy::Block),
        (16384, 2048, SegmentStrategy::Block),
    ] {
        // The last segment one element short: a partial one at the end.
        let n = segment_len * segments - 1;
        let data: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
        let input = device.upload(&data).unwrap();
        let mut results = Vec::new();
        for strategy in [SegmentStrategy::Warp, SegmentStrategy::Block, SegmentStrategy::Auto] {
            reducer.set_strategy(strategy);
            let mut output = device.alloc_zeroed::<f32>(segments as usize).unwrap();
            reducer.reduce_fixed(&input, segment_len, &mut output).unwrap();
            results.push(output.download().unwrap());
        }
        let what = format!("{segments} segments of {segment_len}");
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_ne!(bits(&results[0]), bits(&results[1]), "{what}: warp and block orders must differ");
        let picked = if expected == SegmentStrategy::Warp { &results[0] } else { &results[1] };
        assert_eq!(
            bits(&results[2]),
            bits(picked),
            "{what}: Auto must give the {expected:?} strategy's bits"
        );
        // The loop above left the reducer on `Auto`.
        assert_eq!(reducer.strategy_for_fixed(n, segment_len), expected, "{what}");
        let offsets: Vec<u64> = (0..=segments).map(|s| (s * segment_len).min(n)).collect();
        let lengths: Vec<u64> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
        let (expected_sums, exact) = model(&data, &offsets, Sum);
        compare(&results[2], &expected_sums, &exact, &lengths, &what);
    }
}

#[test]
fn default_chunks_grow_with_the_input_from_16_to_128_kib() {
    use warpsafe::reduce::segmented::chunk_bytes;
    const KIB: u64 = 1 << 10;
    // The input's bytes over 512, rounded down to a power of two, within [16, 128] KiB.
    let expected = [
        (0, 16 * KIB),
        (4 << 20, 16 * KIB),
        (8 << 20, 16 * KIB),
        ((8 << 20) + 512, 16 * KIB),
        (16 << 20, 32 * KIB),
        ((32 << 20) - 1, 32 * KIB),
        (32 << 20, 64 * KIB),
        (64 << 20, 128 * KIB),
        (1 << 40, 128 * KIB),
        (u64::MAX, 128 * KIB),
    ];
    for (input_bytes, chunk) in expected {
        assert_eq!(chunk_bytes(input_bytes), chunk, "{input_bytes} bytes");
    }
}

// ---------------------------------------------------------------------------------------
// Past 2^31 elements (GPU only)

#[test]
fn huge_segments_past_2_31_elements() {
    let Some(device) = warpsafe_tests::gpu_or_skip("huge_segmented").map(Device::from) else { return };
    let n = (1u64 << 31) + 5;
    let input = device.upload(&vec![1i32; n as usize]).unwrap();
    let mut reducer = SegmentedReducer::<i32, Sum>::new(&device).unwrap();
    let segment_len = 1u64 << 20;
    let mut output = device.alloc_zeroed::<i32>(n.div_ceil(segment_len) as usize).unwrap();
    reducer.reduce_fixed(&input, segment_len, &mut output).unwrap();
    let got = output.download().unwrap();
    assert!(got[..got.len() - 1].iter().all(|&x| x == segment_len as i32));
    assert_eq!(got[got.len() - 1], 5);
    // Offsets past 2^31, in every strategy: one segment straddles 2^31. (Short segments:
    // a segment of 2^31 elements read by one thread of the thread strategy takes minutes.)
    let offsets = device.upload(&[(1u64 << 31) - 3, (1 << 31) + 2, n]).unwrap();
    let mut output = device.alloc_zeroed::<i32>(2).unwrap();
    for strategy in SegmentStrategy::ALL {
        reducer.set_strategy(strategy);
        reducer.reduce_offsets(&input, &offsets, &mut output).unwrap();
        assert_eq!(output.download().unwrap(), [5, 3], "{strategy:?}");
    }
}

#[test]
fn the_scan_strategy_survives_garbage_offsets_and_reports_them() {
    // Offsets that break a scan's assumptions in every way (descending, past the input,
    // huge, equal runs, a start past the end), over several chunks of windows: the kernel
    // must read and write nothing outside the buffers (the emulator checks every access,
    // compute-sanitizer the GPU), finish, and the waiting call must report the lowest bad
    // segment, as the balanced strategy finds it, with the other segments' results written.
    let n = 3 * 4096 + 77;
    for device in test_devices("segmented_scan_garbage") {
        let max_blocks = if on_gpu(&device) { None } else { Some(2) };
        let options = SegmentedOptions { strategy: SegmentStrategy::Scan, max_blocks, ..Default::default() };
        let mut scan = SegmentedReducer::<i32, Sum>::with_options(&device, options).unwrap();
        let data: Vec<i32> = random(n, 21).into_iter().map(i32::of).collect();
        let input = device.upload(&data).unwrap();
        let mut rng = StdRng::seed_from_u64(22);
        for case in 0..8 {
            let segments = 40 + 300 * case;
            let mut offsets: Vec<u64> =
                (0..=segments).map(|s| (s as u64 * n as u64) / segments as u64).collect();
            match case % 4 {
                0 => offsets.reverse(),
                1 => offsets[segments / 2] = u64::MAX,
                2 => offsets.iter_mut().for_each(|o| *o = rng.gen_range(0..n as u64 + 50)),
                _ => offsets[segments / 3] = n as u64 + 1,
            }
            let offsets_buffer = device.upload(&offsets).unwrap();
            // The output is one longer than the segments: its last element must survive.
            let sentinel = 0x5a5a_5a5a;
            let mut output = device.upload(&vec![sentinel; segments + 1]).unwrap();
            let got = scan.reduce_offsets(&input, &offsets_buffer, &mut output);
            let Err(Error::InvalidSegments { problem, .. }) = got else {
                panic!("case {case}: {got:?}");
            };
            let lowest = offsets
                .windows(2)
                .position(|w| w[1] < w[0] || w[1] > n as u64)
                .expect("every case has a bad segment") as u64;
            let segment = match problem {
                SegmentsProblem::NotMonotonic { segment } | SegmentsProblem::PastInput { segment, .. } => {
                    segment
                }
                other => panic!("case {case}: {other:?}"),
            };
            assert_eq!(segment, lowest, "case {case}");
            let written = output.download().unwrap();
            assert_eq!(written[segments], sentinel, "case {case}: wrote past the segments");
            for (s, w) in offsets.windows(2).enumerate() {
                if w[0] <= w[1] && w[1] <= n as u64 {
                    let want =
                        data[w[0] as usize..w[1] as usize].iter().fold(0i32, |a, &b| a.wrapping_add(b));
                    assert_eq!(written[s], want, "case {case}: segment {s}");
                }
            }
            // The `_on` form: the scan kernel alone, unchecked, then a good call works.
            let stream = device.stream().unwrap();
            // SAFETY: the buffers outlive the launch, which the synchronize below waits
            // for; nothing else uses them meanwhile.
            unsafe { scan.reduce_offsets_on(&stream, &input, &offsets_buffer, &output) }.unwrap();
            stream.synchronize().unwrap();
            assert_eq!(
                output.download().unwrap()[segments],
                sentinel,
                "case {case}: `_on` wrote past the segments"
            );
        }
        let good: Vec<u64> = (0..=7).map(|s| s * n as u64 / 7).collect();
        let mut output = device.alloc_zeroed::<i32>(7).unwrap();
        scan.reduce_offsets(&input, &device.upload(&good).unwrap(), &mut output).unwrap();
        let want: Vec<i32> = good
            .windows(2)
            .map(|w| data[w[0] as usize..w[1] as usize].iter().fold(0i32, |a, &b| a.wrapping_add(b)))
            .collect();
        assert_eq!(output.download().unwrap(), want);
    }
}

#[test]
fn the_scan_look_back_crosses_groups_of_chunks_in_order() {
    // Segments that cross many chunks (the look-back reads 32 predecessors at a time, and
    // waits only for those after the newest start): one across about 70 chunks, one that
    // ends exactly on a chunk's end after 33, and runs of short ones between, with a
    // non-commutative operator, on emulators with few warps (so predecessors are still
    // running when a chunk looks back) under several seeds and resident-block counts.
    let chunk_of = |n: u64| chunk_windows::<Affine>(n) * window_elements::<Affine>();
    let chunk = chunk_of(1 << 18);
    let mut lengths = vec![5, 3, 0, 1];
    lengths.push(70 * chunk + 100 - 9);
    lengths.extend([7, 0, 2, 31]);
    let done: u64 = lengths.iter().sum();
    lengths.push(33 * chunk - done % chunk + chunk);
    lengths.extend((0..300).map(|s| s % 17));
    lengths.push(chunk + 1);
    let offsets = offsets_of(0, &lengths);
    let n = *offsets.last().unwrap() as usize;
    assert_eq!(chunk_of(n as u64), chunk, "{n} elements");
    assert!(chunks::<Affine>(n as u64) > 100, "{n} elements");
    let data: Vec<Affine> = random(n, 31).into_iter().map(Affine::of).collect();
    let (expected, exact) = model(&data, &offsets, Compose);
    let mut devices: Vec<Device> = [(0, 1), (1, 2), (2, 8)]
        .into_iter()
        .map(|(seed, blocks)| {
            Device::emulator_with(Options { seed, max_resident_blocks: blocks, ..Options::default() })
        })
        .collect();
    devices.extend(test_devices("segmented_scan_groups").into_iter().filter(on_gpu));
    for device in devices {
        let max_blocks = if on_gpu(&device) { None } else { Some(2) };
        let options = SegmentedOptions { strategy: SegmentStrategy::Scan, max_blocks, ..Default::default() };
        let mut scan = SegmentedReducer::<Affine, Compose>::with_options(&device, options).unwrap();
        let mut output = device.alloc_zeroed::<Affine>(lengths.len()).unwrap();
        scan.reduce_offsets(&device.upload(&data).unwrap(), &device.upload(&offsets).unwrap(), &mut output)
            .unwrap();
        compare(
            &output.download().unwrap(),
            &expected,
            &exact,
            &lengths,
            &format!("scan on {}", device.name()),
        );
    }
}
