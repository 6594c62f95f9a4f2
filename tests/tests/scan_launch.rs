//! `warpsafe::scan` on the emulator and the GPU: the host `Scanner` and `Selector` for
//! every built-in operator and element type against sequential CPU models (floats with
//! `approx`), user-defined operators (one that does not commute, one over a 12-byte type)
//! and a user predicate, in-place scans, odd sizes around tiles and look-back windows,
//! bit-identical float results across runs, emulator seeds and backends, typed errors
//! for bad input, the look-back protocol under the emulator's memory-model race check (and
//! a planted broken protocol it must report), and on the GPU a length past 2^31.

#[allow(dead_code)] // only `launch_with` is used here
mod emu_support;

use std::fmt::Debug;

use bytemuck::Pod;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scan_test_kernels::{
    self as k, affine_of, triple_of, Affine, ByteBelow, Parity, Then, Triple, TripleSum,
};
use warpsafe::emu::{ErrorKind, Options};
use warpsafe::op::{Max, Min, Operator, Sum};
use warpsafe::scan::select::{GreaterThan, LessThan, Predicate};
use warpsafe_host::scan::{
    Scan, ScanKernel, ScanKind, ScanOptions, Scanner, SelectKernel, Selection, Selector,
};
use warpsafe_host::{Device, Error};
use warpsafe_tests::{gpu_or_skip, on_gpu, test_devices, test_program};

/// Blocks of 32 threads: tiles of 512 `f32`s, so that the emulator runs many tiles and
/// look-back windows (32 tiles each) at small lengths.
const SMALL_TILES: ScanOptions = ScanOptions { block_threads: 32 };

/// Emulator seeds the protocol tests run under (each a different interleaving).
const SEEDS: std::ops::Range<u64> = 0..4;

/// An emulator with `seed` and room for 16 blocks at once, so that look-back meets tiles in
/// every state.
fn emulator(seed: u64) -> Device {
    emulator_holding(seed, 16)
}

/// An emulator with `seed` and room for `blocks` blocks at once: one block at a time, every
/// tile finds all earlier ones finished; many, it meets them in every state.
fn emulator_holding(seed: u64, blocks: u32) -> Device {
    Device::emulator_with(Options { seed, max_resident_blocks: blocks, ..Options::default() })
}

/// Lengths around a tile of `tile` elements and around windows of 32 tiles.
fn lengths(tile: usize, large: bool) -> Vec<usize> {
    let mut lengths = vec![0, 1, 31, 33, tile - 1, tile, tile + 1, 3 * tile + 7];
    if large {
        lengths.extend([32 * tile - 1, 32 * tile + 1, 70 * tile + 5]);
    }
    lengths
}

// ---------------------------------------------------------------------------------------
// CPU models

/// An element type of the built-in kernels, with the test data and the comparison.
trait Element: Pod + PartialEq + Debug {
    /// The element input value `x` stands for.
    fn of(x: u32) -> Self;
    /// Whether a computed prefix is close enough to the sequential model's.
    fn close(got: Self, expected: Self, scale: f64) -> bool;
}

macro_rules! exact {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn of(x: u32) -> $t {
                (x as $t).wrapping_sub(1 << 20)
            }
            fn close(got: $t, expected: $t, _scale: f64) -> bool {
                got == expected
            }
        }
    )*};
}
exact!(i32, u32, i64, u64);

impl Element for u8 {
    fn of(x: u32) -> u8 {
        x as u8
    }
    fn close(got: u8, expected: u8, _scale: f64) -> bool {
        got == expected
    }
}

macro_rules! float {
    ($($t:ty: $eps:expr),*) => {$(
        impl Element for $t {
            fn of(x: u32) -> $t {
                (x % 2000) as $t * 0.125 - 125.0
            }
            fn close(got: $t, expected: $t, scale: f64) -> bool {
                got == expected // infinities (the identity of min and max) included
                    || approx::abs_diff_eq!(got as f64, expected as f64, epsilon = $eps * scale.max(1.0))
            }
        }
    )*};
}
float!(f32: 1e-5, f64: 1e-12);

/// The sequential scan of `data` with `op`.
fn scan_model<T: Copy, O: Operator<T>>(data: &[T], op: O, kind: ScanKind) -> Vec<T> {
    let mut acc = op.identity();
    data.iter()
        .map(|&x| {
            let before = acc;
            acc = op.combine(acc, x);
            if kind == ScanKind::Exclusive {
                before
            } else {
                acc
            }
        })
        .collect()
}

/// The sequential selection (`partition`: then the rejected, reversed).
fn select_model<T: Copy>(data: &[T], keep: impl Fn(usize, T) -> bool, partition: bool) -> (Vec<T>, u64) {
    let kept: Vec<T> = data.iter().enumerate().filter(|&(i, &x)| keep(i, x)).map(|(_, &x)| x).collect();
    let count = kept.len() as u64;
    let mut out = kept;
    if partition {
        out.extend(data.iter().enumerate().rev().filter(|&(i, &x)| !keep(i, x)).map(|(_, &x)| x));
    }
    (out, count)
}

fn random(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen()).collect()
}

// ---------------------------------------------------------------------------------------
// Scans

/// Checks both kinds of scan, out of place and in place, of `T` with `O` at every length.
fn check_scan<T: Element, O: Scan<T>>(device: &Device, options: ScanOptions, large: bool, what: &str) {
    let mut scanner = Scanner::<T, O>::with_options(device, options).unwrap();
    for n in lengths(scanner.tile_len(0), large) {
        let data: Vec<T> = random(n, n as u64).into_iter().map(T::of).collect();
        let input = device.upload(&data).unwrap();
        let scale = n as f64 * 250.0;
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let expected = scan_model(&data, O::default(), kind);
            let mut output = device.alloc_zeroed::<T>(n).unwrap();
            let mut in_place = device.upload(&data).unwrap();
            match kind {
                ScanKind::Inclusive => {
                    scanner.inclusive(&input, &mut output).unwrap();
                    scanner.inclusive_in_place(&mut in_place).unwrap();
                }
                ScanKind::Exclusive => {
                    scanner.exclusive(&input, &mut output).unwrap();
                    scanner.exclusive_in_place(&mut in_place).unwrap();
                }
            }
            let (got, got_in_place) = (output.download().unwrap(), in_place.download().unwrap());
            for (i, e) in expected.iter().enumerate() {
                assert!(
                    T::close(got[i], *e, scale),
                    "{what} {kind:?} n={n} {options:?} on {}: [{i}] = {:?}, expected {e:?}",
                    device.name(),
                    got[i]
                );
            }
            assert_eq!(got, got_in_place, "{what} {kind:?} n={n}: in place differs");
        }
    }
}

#[test]
fn builtin_scans_match_the_sequential_model() {
    for device in test_devices("builtin_scans") {
        let gpu = on_gpu(&device);
        check_scan::<f32, Sum>(&device, ScanOptions::scan(), false, "f32 sum");
        check_scan::<f32, Sum>(&device, SMALL_TILES, true, "f32 sum");
        check_scan::<i32, Sum>(&device, SMALL_TILES, true, "i32 sum");
        check_scan::<u64, Max>(&device, SMALL_TILES, gpu, "u64 max");
        check_scan::<f64, Min>(&device, SMALL_TILES, gpu, "f64 min");
        if gpu {
            macro_rules! every {
                ($($t:ty),*) => {$(
                    check_scan::<$t, Sum>(&device, ScanOptions::scan(), true, concat!(stringify!($t), " sum"));
                    check_scan::<$t, Min>(&device, ScanOptions::scan(), true, concat!(stringify!($t), " min"));
                    check_scan::<$t, Max>(&device, ScanOptions::scan(), true, concat!(stringify!($t), " max"));
                )*};
            }
            every!(f32, f64, i32, u32, i64, u64);
        }
    }
}

/// A local operator that applies a test crate's operator, with its kernel (`Scan` is
/// implemented here, for a type of this crate).
macro_rules! user_scan {
    ($name:ident: $op:ident, $t:ty, $kernel:ident) => {
        #[derive(Clone, Copy, Default)]
        struct $name;
        impl Operator<$t> for $name {
            fn identity(self) -> $t {
                $op.identity()
            }
            fn combine(self, a: $t, b: $t) -> $t {
                $op.combine(a, b)
            }
        }
        // SAFETY: the test crate's `scan_kernels!` kernel of `$t`.
        unsafe impl Scan<$t> for $name {
            fn kernel() -> ScanKernel {
                ScanKernel { program: test_program("scan"), scan: &k::$kernel }
            }
        }
    };
}
user_scan!(Compose: Then, Affine, scan_affine);
user_scan!(SumOfTriples: TripleSum, Triple, scan_triple);

impl Element for Affine {
    fn of(x: u32) -> Affine {
        affine_of(x)
    }
    fn close(got: Affine, expected: Affine, _scale: f64) -> bool {
        got == expected
    }
}

impl Element for Triple {
    fn of(x: u32) -> Triple {
        triple_of(x)
    }
    fn close(got: Triple, expected: Triple, _scale: f64) -> bool {
        got == expected
    }
}

#[test]
fn user_operators_that_do_not_commute_or_move_12_bytes() {
    for device in test_devices("user_scans") {
        check_scan::<Affine, Compose>(&device, SMALL_TILES, true, "affine maps (not commutative)");
        check_scan::<Triple, SumOfTriples>(&device, SMALL_TILES, true, "triples (12 bytes)");
        if on_gpu(&device) {
            check_scan::<Affine, Compose>(&device, ScanOptions::scan(), true, "affine maps");
            check_scan::<Triple, SumOfTriples>(&device, ScanOptions::scan(), true, "triples");
        }
    }
}

#[test]
fn look_back_under_many_emulator_schedules() {
    // Many blocks resident, a different interleaving per seed: tiles meet predecessors
    // with nothing published yet, an aggregate, a window's total or its base.
    for seed in SEEDS {
        let device = emulator(seed);
        let n = 70 * 256 + 5;
        let data: Vec<Affine> = random(n, seed).into_iter().map(affine_of).collect();
        let input = device.upload(&data).unwrap();
        let mut output = device.alloc_zeroed(n).unwrap();
        let mut scanner = Scanner::<Affine, Compose>::with_options(&device, SMALL_TILES).unwrap();
        scanner.inclusive(&input, &mut output).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(
            output.download().unwrap(),
            scan_model(&data, Compose, ScanKind::Inclusive),
            "seed {seed}"
        );
    }
}

/// The float sum of `data` by `device`'s scanner, `runs` times.
fn float_sums(device: &Device, data: &[f32], options: ScanOptions, runs: usize) -> Vec<Vec<u32>> {
    let input = device.upload(data).unwrap();
    let mut output = device.alloc_zeroed(data.len()).unwrap();
    let mut scanner = Scanner::<f32, Sum>::with_options(device, options).unwrap();
    (0..runs)
        .map(|_| {
            scanner.inclusive(&input, &mut output).unwrap();
            output.download().unwrap().iter().map(|x| x.to_bits()).collect()
        })
        .collect()
}

#[test]
fn float_scans_are_bit_identical_across_runs_schedules_and_backends() {
    // Values with many significant bits, so that any change of association shows.
    let mut rng = StdRng::seed_from_u64(5);
    let data: Vec<f32> = (0..(40 * 512 + 3)).map(|_| rng.gen_range(-1.0f32..1.0) * 1e3).collect();
    // One block at a time: every look-back finds its predecessors finished.
    let reference = float_sums(&emulator_holding(0, 1), &data, SMALL_TILES, 1).remove(0);
    for seed in SEEDS {
        for blocks in [2, 5, 16, 64] {
            for run in float_sums(&emulator_holding(seed, blocks), &data, SMALL_TILES, 2) {
                assert!(run == reference, "emulator seed {seed}, {blocks} blocks resident: other bits");
            }
        }
    }
    for device in test_devices("float_determinism").into_iter().filter(on_gpu) {
        for run in float_sums(&device, &data, SMALL_TILES, 20) {
            assert!(run == reference, "the GPU gave other bits than the emulator");
        }
        // The default tiles on a length of 2^22 + 1: 20 runs, one answer.
        let big: Vec<f32> = (0..(1 << 22) + 1).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
        let runs = float_sums(&device, &big, ScanOptions::scan(), 20);
        assert!(runs.iter().all(|r| *r == runs[0]), "runs on the GPU differ");
    }
}

// ---------------------------------------------------------------------------------------
// Selections

/// The test crate's predicate as a local type (the kernel's parameter has its layout).
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct ByParity(Parity);

impl Predicate<u32> for ByParity {
    fn keep(self, value: u32) -> bool {
        self.0.keep(value)
    }
}

// SAFETY: the test crate's `select_kernels!` kernel of `u32` and `Parity`, the predicate inside.
unsafe impl Selection<u32> for ByParity {
    fn kernel() -> SelectKernel {
        SelectKernel { program: test_program("scan"), select: &k::select_parity }
    }
}

/// The test crate's predicate over bytes: runs of 64 one-byte elements, 4 vectors each.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct ByByteBelow(ByteBelow);

impl Predicate<u8> for ByByteBelow {
    fn keep(self, value: u8) -> bool {
        self.0.keep(value)
    }
}

// SAFETY: the test crate's `select_kernels!` kernel of `u8` and `ByteBelow`, the predicate inside.
unsafe impl Selection<u8> for ByByteBelow {
    fn kernel() -> SelectKernel {
        SelectKernel { program: test_program("scan"), select: &k::select_byte_below }
    }
}

/// Checks select, partition and their flagged forms of `T` by `predicate`.
fn check_select<T: Element, P: Selection<T>>(
    device: &Device,
    predicate: P,
    options: ScanOptions,
    large: bool,
) {
    let mut selector = Selector::with_options(device, predicate, options).unwrap();
    let tile = options.block_threads as usize * warpsafe::scan::select::items_per_thread::<T>();
    for n in lengths(tile, large) {
        let raw = random(n, 7 + n as u64);
        let data: Vec<T> = raw.iter().map(|&x| T::of(x)).collect();
        let flags: Vec<u8> = raw.iter().map(|&x| (x >> 7) as u8 & 1).collect();
        let input = device.upload(&data).unwrap();
        let flags_buffer = device.upload(&flags).unwrap();
        for (partition, flagged) in [(false, false), (true, false), (false, true), (true, true)] {
            let keep = |i: usize, x: T| if flagged { flags[i] != 0 } else { predicate.keep(x) };
            let (expected, count) = select_model(&data, keep, partition);
            let mut output = device.alloc_zeroed::<T>(n).unwrap();
            let got = match (partition, flagged) {
                (false, false) => selector.select(&input, &mut output),
                (true, false) => selector.partition(&input, &mut output),
                (false, true) => selector.select_flagged(&input, &flags_buffer, &mut output),
                (true, true) => selector.partition_flagged(&input, &flags_buffer, &mut output),
            }
            .unwrap();
            let what = format!("n={n} partition={partition} flagged={flagged} on {}", device.name());
            assert_eq!(got, count, "count, {what}");
            assert_eq!(output.download().unwrap()[..expected.len()], expected[..], "{what}");
        }
    }
}

#[test]
fn selections_and_partitions_match_the_sequential_model() {
    for device in test_devices("selections") {
        let gpu = on_gpu(&device);
        check_select::<f32, _>(&device, LessThan(0.0f32), SMALL_TILES, true);
        check_select::<u32, _>(&device, ByParity(Parity(1)), SMALL_TILES, true);
        // One-byte elements (runs of 64, 4 vectors: a step is half a run, whose vectors the
        // staging rotates within the run; so are those of `f32` and `u32`, 16 vectors),
        // about half kept and nearly all kept.
        check_select::<u8, _>(&device, ByByteBelow(ByteBelow(128)), SMALL_TILES, true);
        check_select::<u8, _>(&device, ByByteBelow(ByteBelow(255)), SMALL_TILES, true);
        check_select::<i64, _>(&device, GreaterThan(0i64), ScanOptions::select(), gpu);
        if gpu {
            check_select::<f32, _>(&device, LessThan(0.0f32), ScanOptions::select(), true);
            check_select::<f64, _>(&device, GreaterThan(10.0f64), ScanOptions::select(), true);
            check_select::<u32, _>(&device, ByParity(Parity(0)), ScanOptions::select(), true);
        }
    }
}

/// The default options: tiles of 256 threads (64 KiB, more than the 48 KiB a GPU launch
/// gets unless its kernel opts in, which the launch path does) for scans of at least
/// 128 MiB of 8-byte or 256 MiB of 4-byte elements and selections of at least 16 MiB of
/// 4-byte or larger ones, where a multiprocessor holds three such tiles, as the emulator's
/// sm_90-like one does; otherwise 128 threads. On a GPU that holds them, calls over
/// inputs on both sides of the thresholds match the CPU models.
#[test]
fn default_options_take_large_tiles_for_large_inputs_where_a_multiprocessor_holds_three() {
    for device in test_devices("default_options") {
        let gpu = on_gpu(&device);
        let large = device.shared_bytes_per_block() >= 66 * 1024
            && device.shared_bytes_per_multiprocessor() >= 3 * 67 * 1024;
        assert!(large || gpu, "the emulator models an sm_90 multiprocessor");
        let block = if large { 256 } else { 128 };
        let small = ScanOptions::scan();
        let mib = 1 << 20;
        assert_eq!(ScanOptions::scan_for::<f64>(&device, 16 * mib).block_threads, block);
        assert_eq!(ScanOptions::scan_for::<f64>(&device, 16 * mib - 1), small);
        assert_eq!(ScanOptions::scan_for::<u64>(&device, 16 * mib).block_threads, block);
        assert_eq!(ScanOptions::scan_for::<Triple>(&device, 11 * mib).block_threads, block);
        assert_eq!(ScanOptions::scan_for::<f32>(&device, 64 * mib).block_threads, block);
        assert_eq!(ScanOptions::scan_for::<f32>(&device, 64 * mib - 1), small);
        assert_eq!(ScanOptions::select_for::<f32>(&device, 4 * mib).block_threads, block);
        assert_eq!(ScanOptions::select_for::<f32>(&device, 4 * mib - 1), ScanOptions::select());
        assert_eq!(ScanOptions::select_for::<i64>(&device, 2 * mib).block_threads, block);
        assert_eq!(ScanOptions::select_for::<u16>(&device, 1 << 30), ScanOptions::select());
        let scanner = Scanner::<f64, Sum>::new(&device).unwrap();
        assert_eq!(scanner.tile_len(16 * mib), 32 * block as usize, "the tile of 128 MiB of f64");
        assert_eq!(scanner.tile_len(1000), 4096, "the tile of a short f64 input");
        let selector = Selector::new(&device, LessThan(0.5f32)).unwrap();
        assert_eq!(selector.options_for(4 * mib).block_threads, block);
        // The large tiles themselves, at lengths around their tiles (given as options: the
        // emulator would take minutes over 128 MiB).
        let large_options = ScanOptions { block_threads: 256 };
        check_scan::<f64, Sum>(&device, large_options, gpu, "f64 sum, large tiles");
        check_scan::<i64, Min>(&device, large_options, gpu, "i64 min, large tiles");
        check_select::<f64, _>(&device, GreaterThan(10.0f64), large_options, gpu);
        check_select::<u32, _>(&device, ByParity(Parity(1)), large_options, gpu);
        if gpu {
            // The defaults on both sides of the thresholds, against the CPU models.
            for n in [16 * mib - 1, 16 * mib + 4097] {
                let data: Vec<f64> = random(n, n as u64).into_iter().map(f64::of).collect();
                let input = device.upload(&data).unwrap();
                let mut output = device.alloc_zeroed::<f64>(n).unwrap();
                let mut scanner = Scanner::<f64, Sum>::new(&device).unwrap();
                scanner.inclusive(&input, &mut output).unwrap();
                // Multiples of 1/8 below 2^31 in magnitude: every sum is exact.
                let expected = scan_model(&data, Sum, ScanKind::Inclusive);
                assert!(output.download().unwrap() == expected, "f64 sum n={n}: differs from the model");
                let mut selector = Selector::new(&device, GreaterThan(0.0f64)).unwrap();
                let count = selector.select(&input, &mut output).unwrap();
                let (kept, kept_count) = select_model(&data, |_, x| x > 0.0, false);
                assert_eq!(count, kept_count, "n={n}");
                assert!(output.download().unwrap()[..kept.len()] == kept[..], "f64 select n={n}: differs");
            }
        }
    }
}

#[test]
fn selection_counts_under_many_emulator_schedules() {
    for seed in SEEDS {
        let device = emulator(seed);
        let n = 40 * 256 + 9;
        let data = random(n, seed);
        let input = device.upload(&data).unwrap();
        let mut output = device.alloc_zeroed::<u32>(n).unwrap();
        let mut selector = Selector::with_options(&device, ByParity(Parity(1)), SMALL_TILES).unwrap();
        let count = selector.partition(&input, &mut output).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let (expected, kept) = select_model(&data, |_, x| x & 1 == 1, true);
        assert_eq!((count, output.download().unwrap()), (kept, expected), "seed {seed}");
    }
}

// ---------------------------------------------------------------------------------------
// Bad input

#[test]
fn bad_input_gets_typed_errors_and_nothing_is_written_out_of_bounds() {
    for device in test_devices("scan_bad_input") {
        let data: Vec<u32> = (0..1000).collect();
        let input = device.upload(&data).unwrap();
        let mut scanner = Scanner::<u32, Sum>::new(&device).unwrap();
        let mut short = device.alloc_zeroed::<u32>(999).unwrap();
        let err = scanner.inclusive(&input, &mut short).unwrap_err();
        assert!(matches!(err, Error::MismatchedLengths { expected: 1000, actual: 999, .. }), "{err}");
        assert!(err.to_string().contains("must hold 1000"), "{err}");

        // 500 odd values kept, room for 100: the first 100 are written, nothing past them
        // (the kernel bounds every write; compute-sanitizer's memcheck runs this on the
        // GPU).
        let mut selector = Selector::new(&device, ByParity(Parity(1))).unwrap();
        let mut room = device.alloc_zeroed::<u32>(100).unwrap();
        let err = selector.select(&input, &mut room).unwrap_err();
        assert!(matches!(err, Error::OutputTooSmall { selected: 500, len: 100, .. }), "{err}");
        assert!(err.to_string().contains("only the first 100 were written"), "{err}");
        let odd: Vec<u32> = (0..100).map(|i| 2 * i + 1).collect();
        assert_eq!(room.download().unwrap(), odd);
        let mut longer = device.alloc_zeroed::<u32>(1001).unwrap();
        let err = selector.partition(&input, &mut longer).unwrap_err();
        assert!(matches!(err, Error::MismatchedLengths { what: "the output", .. }), "{err}");
        let flags = device.upload(&[1u8; 10]).unwrap();
        let mut output = device.alloc_zeroed::<u32>(1000).unwrap();
        let err = selector.select_flagged(&input, &flags, &mut output).unwrap_err();
        assert!(matches!(err, Error::MismatchedLengths { what: "the flags buffer", .. }), "{err}");
        // After the errors the same objects still work.
        assert_eq!(selector.select(&input, &mut output).unwrap(), 500);
        let err = Scanner::<u32, Sum>::with_options(&device, ScanOptions { block_threads: 48 }).unwrap_err();
        assert!(err.to_string().contains("multiple of 32"), "{err}");
        // The largest tiles (512 threads: 128 KiB of `u32`s) fit the shared memory an sm_90,
        // and the emulator, give a block (227 KiB); a tile over a device's limit is refused
        // by the options' check (`warpsafe_host::scan`'s unit tests, with smaller limits).
        if device.shared_bytes_per_block() >= 129 * 1024 {
            let mut scanner =
                Scanner::<u32, Sum>::with_options(&device, ScanOptions { block_threads: 512 }).unwrap();
            let mut sums = device.alloc_zeroed::<u32>(1000).unwrap();
            scanner.inclusive(&input, &mut sums).unwrap();
            assert_eq!(sums.download().unwrap(), scan_model(&data, Sum, ScanKind::Inclusive));
            Selector::with_options(&device, ByParity(Parity(1)), ScanOptions { block_threads: 512 }).unwrap();
        }
    }
    // A buffer of another device.
    let (a, b) = (Device::emulator(), Device::emulator());
    let input = a.upload(&[1u32; 10]).unwrap();
    let mut output = b.alloc_zeroed::<u32>(10).unwrap();
    let err = Scanner::<u32, Sum>::new(&b).unwrap().inclusive(&input, &mut output).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}

// ---------------------------------------------------------------------------------------
// The protocol under the emulator's race check

/// Runs a test kernel that scans with a hand-made flag-and-value status over `n`
/// elements with 32-thread blocks under `seed`.
fn run_flag_scan(
    kernel: &warpsafe::kernel::UntypedKernel,
    n: usize,
    seed: u64,
) -> Result<Vec<u32>, warpsafe::emu::Error> {
    use emu_support::{arg, launch_with};
    let tile = 32 * warpsafe::scan::device::items_per_thread::<u32>();
    let tiles = n.div_ceil(tile) as u64;
    let input: Vec<u32> = (0..n as u32).collect();
    let mut output = vec![0u32; n];
    let slots = warpsafe::scan::lookback::status_words::<u32>(tiles);
    let mut values = vec![0u32; slots as usize];
    let mut flags = vec![0u32; slots as usize];
    let mut counter = 0u32;
    let (mut pi, mut po, mut len) = (input.as_ptr(), output.as_mut_ptr(), n as u64);
    let (mut pv, mut slots_arg, mut pf, mut pc, mut epoch) =
        (values.as_mut_ptr(), slots, flags.as_mut_ptr(), &mut counter as *mut u32, 1u32);
    let config = warpsafe::emu::LaunchConfig {
        shared_mem_bytes: warpsafe::scan::device::shared_bytes::<u32>(32) as u32,
        ..warpsafe::emu::LaunchConfig::linear(tiles as u32, 32)
    };
    let options = Options { seed, max_resident_blocks: 16, ..Options::default() };
    let args = [
        arg(&mut pi),
        arg(&mut po),
        arg(&mut len),
        arg(&mut pv),
        arg(&mut slots_arg),
        arg(&mut pf),
        arg(&mut pc),
        arg(&mut epoch),
    ];
    launch_with(kernel, config, &args, &options)?;
    Ok(output)
}

#[test]
fn a_flag_published_with_release_before_its_value_is_read_passes_the_race_check() {
    let n = 40 * 512 + 3;
    let expected = scan_model(&(0..n as u32).collect::<Vec<_>>(), Sum, ScanKind::Inclusive);
    for seed in SEEDS {
        let got =
            run_flag_scan(&k::scan_flag_release, n, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(got, expected, "seed {seed}");
    }
}

#[test]
fn a_flag_published_without_release_is_reported_as_a_race() {
    for seed in SEEDS {
        let err = run_flag_scan(&k::scan_flag_relaxed, 40 * 512 + 3, seed).expect_err("a data race");
        assert_eq!(err.kind(), ErrorKind::DataRace, "seed {seed}: {err}");
        let message = err.to_string();
        for part in ["scan_flag_relaxed", "no happens-before order"] {
            assert!(message.contains(part), "seed {seed}: `{part}` missing from: {message}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Past 2^31 elements (GPU only)

#[test]
fn huge_scan_and_selection_past_2_31_elements() {
    let Some(device) = gpu_or_skip("huge_scan").map(Device::from) else { return };
    let n = (1usize << 31) + 5;
    let mut data = device.upload(&vec![1u32; n]).unwrap();
    let mut selector = Selector::new(&device, LessThan(2u32)).unwrap();
    let mut output = device.alloc_zeroed::<u32>(n).unwrap();
    assert_eq!(selector.select(&data, &mut output).unwrap(), n as u64);
    drop(output);
    Scanner::<u32, Sum>::new(&device).unwrap().inclusive_in_place(&mut data).unwrap();
    let got = data.download().unwrap();
    for i in [0, 1, (1 << 31) - 1, 1 << 31, n - 1] {
        assert_eq!(got[i], i as u32 + 1, "element {i}");
    }
}
