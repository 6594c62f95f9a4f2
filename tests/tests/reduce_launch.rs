//! `warpsafe::reduce` on the emulator and the GPU: warp and block reductions and scans
//! against CPU models (block sizes that are not multiples of 32, 2-D blocks, divergent
//! lanes), warp-aggregated atomics against per-thread atomics, and the host `Reducer` for
//! every operator, element type and strategy against a CPU reference (floats with
//! `approx` against a Neumaier-compensated f64 sum), with determinism, counter reset and
//! user-defined operators. Sizes: small on the emulator; on the GPU also 2^20 + 7, and in
//! the `huge_*` tests 2^28 and 2^31 + 5 elements (the sanitizer runs skip those).

use approx::abs_diff_eq;
use bytemuck::Pod;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reduce_test_kernels::{
    self as k, float_of, lanes_of, mat_of, stats_of, takes_atomics, LaneSum, Lanes, Mat2, MatMul, Stats,
    StatsOp, BLOCK_SLOTS, CONVERGED_SLOTS, COUNTERS, POISON, WARP_SLOTS,
};
use warpsafe::op::{BitAnd, BitOr, BitXor, Max, Min, Operator, Sum};
use warpsafe_host::reduce::{ReduceOptions, Reducer, Reduction, Strategy};
use warpsafe_host::{kernel_args, Device, DeviceBuffer, Error, LaunchConfig};
use warpsafe_tests::{common_modules, gpu_or_skip, on_gpu, test_devices, test_program};

const STRATEGIES: [Strategy; 4] =
    [Strategy::Auto, Strategy::TwoPass, Strategy::LastBlock, Strategy::Cooperative];

/// Sizes every operator, type and strategy is checked at; the GPU adds 2^20 + 7.
const SMALL_SIZES: [usize; 7] = [0, 1, 31, 32, 33, 1023, 1025];

/// Options that give several blocks even for the small sizes, so that the emulator runs
/// the inter-block paths: 64 threads, at most 5 blocks (a tile is 1024 `f32`s).
fn small_options(strategy: Strategy) -> ReduceOptions {
    ReduceOptions { strategy, block_threads: 64, max_blocks: Some(5) }
}

/// The option sets a device is tested with at length `n`: the defaults and the small
/// multi-block shape; on the emulator the defaults (256 threads per block, the costly
/// part to emulate) only at the largest length.
fn option_sets(device: &Device, strategy: Strategy, n: usize) -> Vec<ReduceOptions> {
    let default = ReduceOptions { strategy, ..ReduceOptions::default() };
    if on_gpu(device) {
        vec![default, small_options(strategy)]
    } else if n == EMULATOR_LARGEST {
        vec![small_options(strategy), default]
    } else {
        vec![small_options(strategy)]
    }
}

/// The largest length tested on the emulator: two blocks of the default shape.
const EMULATOR_LARGEST: usize = 5000;

fn sizes(device: &Device) -> Vec<usize> {
    let mut sizes = SMALL_SIZES.to_vec();
    if on_gpu(device) {
        sizes.push((1 << 20) + 7);
    } else {
        sizes.push(EMULATOR_LARGEST);
    }
    sizes
}

// ---------------------------------------------------------------------------------------
// Warp collectives

/// Thread `t`'s lane, and the lanes that exist in its warp, for blocks of `threads`.
fn lane_and_existing(t: usize, threads: usize) -> (usize, u32) {
    let linear = t % threads;
    let first = linear / 32 * 32;
    let lanes = (threads - first).min(32);
    (linear % 32, if lanes == 32 { u32::MAX } else { (1u32 << lanes) - 1 })
}

/// The CPU model of `reduce_warp_collectives` for thread `t`.
fn warp_model(t: usize, threads: usize, x: &[u32]) -> [u32; WARP_SLOTS] {
    let (lane, existing) = lane_and_existing(t, threads);
    let base = t - lane;
    let lanes = existing.count_ones() as usize;
    let v = |l: usize| x[base + l];
    let sum = |r: std::ops::Range<usize>| r.map(v).fold(0u32, u32::wrapping_add);
    let product = |r: std::ops::Range<usize>| {
        r.map(|l| mat_of(v(l))).fold(MatMul.identity(), |a, b| MatMul.combine(a, b))
    };
    let mut out = [0u32; WARP_SLOTS];
    out[0] = sum(0..lanes);
    out[1] = sum(0..lane + 1);
    out[2] = sum(0..lane);
    out[3..7].copy_from_slice(&product(0..lanes).0);
    out[7..11].copy_from_slice(&product(0..lane + 1).0);
    if lanes == 32 {
        let safe = [out[0], out[1], out[2]];
        out[11..14].copy_from_slice(&safe);
    } else {
        out[11..14].copy_from_slice(&[POISON; 3]);
    }
    out
}

#[test]
fn warp_reduce_and_scans_match_the_cpu_model_in_full_and_partial_warps() {
    let mut rng = StdRng::seed_from_u64(5);
    for device in test_devices("warp_reduce_and_scans") {
        for (label, module) in common_modules(&device, "reduce", "warp_reduce_and_scans") {
            let function = module.kernel(&k::kernels::reduce_warp_collectives).unwrap();
            for (bx, by, grid) in
                [(32, 1, 2), (64, 1, 1), (100, 1, 2), (33, 1, 1), (1, 1, 3), (16, 2, 1), (7, 5, 2)]
            {
                let threads = bx * by;
                let total = threads * grid;
                let x: Vec<u32> = (0..total).map(|_| rng.gen_range(0..4096)).collect();
                let input = device.upload(&x).unwrap();
                let out = device.alloc_zeroed::<u32>(total * WARP_SLOTS).unwrap();
                let (mut p_input, mut p_out) = (input.device_address(), out.device_address());
                let args = kernel_args![p_input, p_out];
                let config = LaunchConfig {
                    grid: (grid as u32, 1, 1),
                    block: (bx as u32, by as u32, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: (input: *const u32, out: *mut u32) with one input and WARP_SLOTS
                // outputs per thread.
                unsafe { device.launch_raw(&function, config, &args) }
                    .unwrap_or_else(|e| panic!("{label}: {e}"));
                let got = out.download().unwrap();
                for t in 0..total {
                    assert_eq!(
                        got[t * WARP_SLOTS..(t + 1) * WARP_SLOTS],
                        warp_model(t, threads, &x),
                        "{label}, block ({bx}, {by}), thread {t}"
                    );
                }
            }
        }
    }
}

#[test]
fn warp_reduce_over_converged_lanes_in_divergent_branches() {
    let mut rng = StdRng::seed_from_u64(6);
    for device in test_devices("warp_reduce_converged") {
        for (label, module) in common_modules(&device, "reduce", "warp_reduce_converged") {
            let function = module.kernel(&k::kernels::reduce_warp_converged).unwrap();
            for members in [u32::MAX, 0x0000_ffff, 0xaaaa_aaaa, 0x8000_0001, 0x0000_0001, 0x7fff_fffe] {
                for threads in [32usize, 64, 50] {
                    let x: Vec<u32> = (0..threads).map(|_| rng.gen()).collect();
                    let input = device.upload(&x).unwrap();
                    let mut out = device.alloc_zeroed::<u32>(threads * CONVERGED_SLOTS).unwrap();
                    out.copy_from_host(&vec![POISON; threads * CONVERGED_SLOTS]).unwrap();
                    let (mut p_input, mut m, mut p_out) =
                        (input.device_address(), members, out.device_address());
                    let args = kernel_args![p_input, m, p_out];
                    // SAFETY: (input, members, out) with one input and CONVERGED_SLOTS
                    // outputs per thread.
                    unsafe { device.launch_raw(&function, LaunchConfig::linear(1, threads as u32), &args) }
                        .unwrap_or_else(|e| panic!("{label}: {e}"));
                    let got = out.download().unwrap();
                    for t in 0..threads {
                        let (lane, existing) = lane_and_existing(t, threads);
                        let slots = &got[t * CONVERGED_SLOTS..(t + 1) * CONVERGED_SLOTS];
                        let member = (members & existing) >> lane & 1 == 1;
                        if !member {
                            assert_eq!(
                                slots, [POISON; CONVERGED_SLOTS],
                                "{label}: lane {lane} is not a member"
                            );
                            continue;
                        }
                        let base = t - lane;
                        // Each call covers the lanes converged at it: some lanes of the
                        // branch, the caller among them, all reporting the same mask.
                        for (mask_slot, what) in [(1, "sum"), (6, "product")] {
                            let mask = slots[mask_slot];
                            assert_eq!(
                                mask >> lane & 1,
                                1,
                                "{label}: {what} mask {mask:#x} omits lane {lane}"
                            );
                            assert_eq!(
                                mask & !(members & existing),
                                0,
                                "{label}: {what} mask {mask:#x} has lanes that did not branch"
                            );
                            for l in (0..32).filter(|l| mask >> l & 1 == 1) {
                                assert_eq!(
                                    got[(base + l) * CONVERGED_SLOTS + mask_slot],
                                    mask,
                                    "{label}: {what}: lanes of one group disagree"
                                );
                            }
                        }
                        let lanes = |mask: u32| (0..32usize).filter(move |l| mask >> l & 1 == 1);
                        let sum = lanes(slots[1]).fold(0u32, |a, l| a.wrapping_add(x[base + l]));
                        let mat = lanes(slots[6])
                            .fold(MatMul.identity(), |a, l| MatMul.combine(a, mat_of(x[base + l])));
                        assert_eq!(slots[0], sum, "{label}: sum over {:#x}", slots[1]);
                        assert_eq!(slots[2..6], mat.0, "{label}: product over {:#x}", slots[6]);
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Block collectives

/// The CPU model of `reduce_block_collectives` for the thread of rank `r` in a block
/// whose inputs are `x`.
fn block_model(r: usize, x: &[u32]) -> [u32; BLOCK_SLOTS] {
    let sum = |n: usize| x[..n].iter().fold(0u32, |a, &b| a.wrapping_add(b));
    let product = |n: usize| x[..n].iter().fold(MatMul.identity(), |a, &b| MatMul.combine(a, mat_of(b)));
    let float: f64 = x.iter().map(|&v| float_of(v) as f64).sum();
    let mut out = [0u32; BLOCK_SLOTS];
    out[0] = sum(x.len());
    out[1] = *x.iter().max().unwrap();
    out[2] = sum(r + 1);
    out[3] = sum(r);
    out[4] = (float as f32).to_bits();
    out[5..9].copy_from_slice(&product(x.len()).0);
    out[9..13].copy_from_slice(&product(r + 1).0);
    out[13..17].copy_from_slice(&product(r).0);
    out
}

#[test]
fn block_reduce_and_scans_for_any_block_size() {
    let mut rng = StdRng::seed_from_u64(7);
    for device in test_devices("block_reduce_and_scans") {
        let shapes: &[(usize, usize)] = if on_gpu(&device) {
            &[
                (1, 1),
                (31, 1),
                (32, 1),
                (33, 1),
                (100, 1),
                (256, 1),
                (257, 1),
                (1000, 1),
                (1023, 1),
                (1024, 1),
                (10, 7),
                (32, 32),
            ]
        } else {
            &[(1, 1), (31, 1), (32, 1), (33, 1), (100, 1), (257, 1), (10, 7), (1024, 1)]
        };
        for (label, module) in common_modules(&device, "reduce", "block_reduce_and_scans") {
            let function = module.kernel(&k::kernels::reduce_block_collectives).unwrap();
            for &(bx, by) in shapes {
                let threads = bx * by;
                let grid = 2;
                let x: Vec<u32> = (0..threads * grid).map(|_| rng.gen_range(0..100_000)).collect();
                let input = device.upload(&x).unwrap();
                let out = device.alloc_zeroed::<u32>(threads * grid * BLOCK_SLOTS).unwrap();
                let (mut p_input, mut p_out) = (input.device_address(), out.device_address());
                let args = kernel_args![p_input, p_out];
                let config = LaunchConfig {
                    grid: (grid as u32, 1, 1),
                    block: (bx as u32, by as u32, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: (input: *const u32, out: *mut u32) with one input and BLOCK_SLOTS
                // outputs per thread; every thread runs the kernel.
                unsafe { device.launch_raw(&function, config, &args) }
                    .unwrap_or_else(|e| panic!("{label}: {e}"));
                let got = out.download().unwrap();
                for b in 0..grid {
                    let block = &x[b * threads..(b + 1) * threads];
                    for r in 0..threads {
                        let t = b * threads + r;
                        assert_eq!(
                            got[t * BLOCK_SLOTS..(t + 1) * BLOCK_SLOTS],
                            block_model(r, block),
                            "{label}, block ({bx}, {by}), block {b}, rank {r}"
                        );
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Warp-aggregated atomics

/// What one integer type needs for the atomic comparison.
trait Counter: Pod + Ord + std::fmt::Debug + Into<i128> {
    const ONES: Self;
    const MIN: Self;
    const MAX: Self;
    fn of(v: u32) -> Self;
    fn wrapping_add(self, other: Self) -> Self;
    fn bit_and(self, other: Self) -> Self;
    fn bit_or(self, other: Self) -> Self;
    fn bit_xor(self, other: Self) -> Self;
}

macro_rules! counter {
    ($($t:ty),*) => {$(
        impl Counter for $t {
            const ONES: Self = !0;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            fn of(v: u32) -> Self { v as $t }
            fn wrapping_add(self, other: Self) -> Self { <$t>::wrapping_add(self, other) }
            fn bit_and(self, other: Self) -> Self { self & other }
            fn bit_or(self, other: Self) -> Self { self | other }
            fn bit_xor(self, other: Self) -> Self { self ^ other }
        }
    )*};
}
counter!(u32, i64);

/// Runs one atomic kernel over `values` and returns the counters and previous values.
fn run_atomics<T: Counter>(
    device: &Device,
    kernel: &'static warpsafe::kernel::UntypedKernel,
    values: &[T],
) -> (Vec<T>, Vec<T>) {
    let module = device.load(&test_program("reduce")).unwrap();
    let function = module.untyped_kernel(kernel).unwrap();
    let input = device.upload(values).unwrap();
    let initial = [T::of(0), T::MAX, T::MIN, T::ONES, T::of(0), T::of(0), T::of(0)];
    let counters = device.upload(&initial).unwrap();
    let olds = device.alloc_zeroed::<T>(values.len()).unwrap();
    let (mut p_values, mut len, mut p_counters, mut p_olds) =
        (input.device_address(), values.len() as u64, counters.device_address(), olds.device_address());
    let args = kernel_args![p_values, len, p_counters, p_olds];
    let grid = values.len().div_ceil(256) as u32;
    // SAFETY: (values, len, counters, olds) with `len` values and olds and COUNTERS
    // counters, accessed only by this launch.
    unsafe { device.launch_raw(&function, LaunchConfig::linear(grid, 256), &args) }.unwrap();
    (counters.download().unwrap(), olds.download().unwrap())
}

/// Checks one atomic kernel's results against the CPU: the counters, and that the
/// values `fetch_add` returned are the prefix sums of one order of the taken values.
fn check_atomics<T: Counter>(what: &str, values: &[T], counters: &[T], olds: &[T]) {
    let taken: Vec<usize> = (0..values.len()).filter(|&i| takes_atomics(values[i].into() as u32)).collect();
    let fold = |init: T, f: fn(T, T) -> T| taken.iter().fold(init, |a, &i| f(a, values[i]));
    let expected = [
        fold(T::of(0), T::wrapping_add),
        fold(T::MAX, std::cmp::min),
        fold(T::MIN, std::cmp::max),
        fold(T::ONES, T::bit_and),
        fold(T::of(0), T::bit_or),
        fold(T::of(0), T::bit_xor),
        fold(T::of(0), T::wrapping_add),
    ];
    assert_eq!(counters, &expected[..COUNTERS], "{what}: counters");
    let mut pairs: Vec<(i128, i128)> = taken.iter().map(|&i| (olds[i].into(), values[i].into())).collect();
    pairs.sort();
    let mut running = 0i128;
    for (old, value) in pairs {
        assert_eq!(old, running, "{what}: the returned values are not the prefix sums of one order");
        running += value;
    }
}

#[test]
fn warp_aggregated_atomics_equal_per_thread_atomics() {
    let mut rng = StdRng::seed_from_u64(8);
    for device in test_devices("warp_aggregated_atomics") {
        let n = if on_gpu(&device) { 1 << 20 } else { 1000 };
        let values: Vec<u32> = (0..n).map(|_| rng.gen_range(1..1000)).collect();
        let aggregated = run_atomics(&device, &k::kernels::reduce_atomics_aggregated_u32, &values);
        let per_thread = run_atomics(&device, &k::kernels::reduce_atomics_per_thread_u32, &values);
        check_atomics("u32 aggregated", &values, &aggregated.0, &aggregated.1);
        check_atomics("u32 per thread", &values, &per_thread.0, &per_thread.1);
        assert_eq!(aggregated.0, per_thread.0, "u32: aggregated and per-thread counters differ");

        let values: Vec<i64> =
            (0..n).map(|_| rng.gen_range(1..1000) * if rng.gen() { 1 } else { 1 << 33 }).collect();
        let aggregated = run_atomics(&device, &k::kernels::reduce_atomics_aggregated_i64, &values);
        let per_thread = run_atomics(&device, &k::kernels::reduce_atomics_per_thread_i64, &values);
        check_atomics("i64 aggregated", &values, &aggregated.0, &aggregated.1);
        check_atomics("i64 per thread", &values, &per_thread.0, &per_thread.1);
        assert_eq!(aggregated.0, per_thread.0, "i64: aggregated and per-thread counters differ");
    }
}

/// Runs one scattered atomic kernel over `values`, thread `i` on target `targets[i]` of
/// `count`, and returns the counters (COUNTERS per target) and the previous values.
fn run_scattered<T: Counter>(
    device: &Device,
    kernel: &'static warpsafe::kernel::UntypedKernel,
    values: &[T],
    (targets, count): (&[u32], usize),
) -> (Vec<T>, Vec<T>) {
    let module = device.load(&test_program("reduce")).unwrap();
    let function = module.untyped_kernel(kernel).unwrap();
    let input = device.upload(values).unwrap();
    let d_targets = device.upload(targets).unwrap();
    let initial = [T::of(0), T::MAX, T::MIN, T::ONES, T::of(0), T::of(0), T::of(0)].repeat(count);
    let counters = device.upload(&initial).unwrap();
    let olds = device.alloc_zeroed::<T>(values.len()).unwrap();
    let (mut p_values, mut p_targets, mut len, mut p_counters, mut p_olds) = (
        input.device_address(),
        d_targets.device_address(),
        values.len() as u64,
        counters.device_address(),
        olds.device_address(),
    );
    let args = kernel_args![p_values, p_targets, len, p_counters, p_olds];
    let grid = values.len().div_ceil(256) as u32;
    // SAFETY: (values, targets, len, counters, olds) with `len` values, targets (each
    // below `count`) and olds, and COUNTERS counters per target, accessed only by this
    // launch.
    unsafe { device.launch_raw(&function, LaunchConfig::linear(grid, 256), &args) }.unwrap();
    (counters.download().unwrap(), olds.download().unwrap())
}

/// Checks a scattered atomic kernel target by target with `check_atomics`: each target's
/// counters fold the values of the threads aiming at it, and the values `fetch_add`
/// returned on it are the prefix sums of one order of those values.
fn check_scattered<T: Counter>(
    what: &str,
    values: &[T],
    (targets, count): (&[u32], usize),
    counters: &[T],
    olds: &[T],
) {
    for target in 0..count {
        let mine: Vec<usize> = (0..values.len()).filter(|&i| targets[i] as usize == target).collect();
        let values: Vec<T> = mine.iter().map(|&i| values[i]).collect();
        let olds: Vec<T> = mine.iter().map(|&i| olds[i]).collect();
        let counters = &counters[COUNTERS * target..COUNTERS * (target + 1)];
        check_atomics(&format!("{what}, target {target}"), &values, counters, &olds);
    }
}

/// The histogram pattern: lanes of one warp aim their atomics at different counters
/// (counter `lane % 3`, and a random one of 5 per thread). The aggregated atomics must
/// still equal per-thread atomics on every counter, and `fetch_add` must return per-thread
/// values: on the emulator under several scheduler seeds, and on the GPU.
#[test]
fn warp_aggregated_atomics_on_scattered_targets_equal_per_thread_atomics() {
    let test = "warp_aggregated_atomics_on_scattered_targets";
    let check = |device: &Device, seed: u64| {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = if on_gpu(device) { 1 << 20 } else { 700 };
        let by_lane: Vec<u32> = (0..n).map(|i| (i % 32 % 3) as u32).collect();
        let random: Vec<u32> = (0..n).map(|_| rng.gen_range(0..5)).collect();
        for (pattern, targets) in [("lane % 3", (&by_lane[..], 3)), ("random of 5", (&random[..], 5))] {
            let values: Vec<u32> = (0..n).map(|_| rng.gen_range(1..1000)).collect();
            let aggregated =
                run_scattered(device, &k::kernels::reduce_atomics_scattered_aggregated_u32, &values, targets);
            let per_thread =
                run_scattered(device, &k::kernels::reduce_atomics_scattered_per_thread_u32, &values, targets);
            check_scattered(
                &format!("u32 aggregated, {pattern}"),
                &values,
                targets,
                &aggregated.0,
                &aggregated.1,
            );
            check_scattered(
                &format!("u32 per thread, {pattern}"),
                &values,
                targets,
                &per_thread.0,
                &per_thread.1,
            );
            assert_eq!(
                aggregated.0, per_thread.0,
                "u32, {pattern}: aggregated and per-thread counters differ"
            );

            let values: Vec<i64> =
                (0..n).map(|_| rng.gen_range(1..1000) * if rng.gen() { 1 } else { 1 << 33 }).collect();
            let aggregated =
                run_scattered(device, &k::kernels::reduce_atomics_scattered_aggregated_i64, &values, targets);
            check_scattered(
                &format!("i64 aggregated, {pattern}"),
                &values,
                targets,
                &aggregated.0,
                &aggregated.1,
            );
        }
    };
    warpsafe::emu::for_each_seed(0..3, |options| {
        check(&Device::emulator_with(options.clone()), options.seed);
        Ok(())
    })
    .unwrap();
    for device in test_devices(test).into_iter().filter(on_gpu) {
        check(&device, 9);
    }
}

// ---------------------------------------------------------------------------------------
// The Reducer against a CPU reference

/// An element type of the built-in reductions, with its CPU reference.
trait Element: Pod + PartialEq + std::fmt::Debug + Send {
    /// `n` test values from `rng`.
    fn values(rng: &mut StdRng, n: usize) -> Vec<Self>;
    /// `n` values of the same kind from a hash of the index: cheap enough for 2^28.
    fn patterned(n: usize) -> Vec<Self>;
    /// Compares a sum with the CPU (exactly for integers, within rounding for floats).
    fn check_sum(got: Self, data: &[Self], what: &str);
}

macro_rules! integer_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn values(rng: &mut StdRng, n: usize) -> Vec<Self> {
                // A fixed pattern with random low bits and sign: and, or and xor stay
                // non-trivial at every length, and sums wrap.
                let pattern = (0x5a5a_5a5a_5a5a_5a5au64 >> (64 - <$t>::BITS)) as $t;
                (0..n).map(|_| pattern ^ (rng.gen::<$t>() & 0xff) ^ if rng.gen() { <$t>::MIN } else { 0 }).collect()
            }
            fn patterned(n: usize) -> Vec<Self> {
                let pattern = (0x5a5a_5a5a_5a5a_5a5au64 >> (64 - <$t>::BITS)) as $t;
                (0..n as u64)
                    .map(|i| {
                        let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                        pattern ^ (h & 0xff) as $t ^ if h & 0x100 != 0 { <$t>::MIN } else { 0 }
                    })
                    .collect()
            }
            fn check_sum(got: Self, data: &[Self], what: &str) {
                assert_eq!(got, data.iter().fold(0, |a: $t, &b| a.wrapping_add(b)), "{what}");
            }
        }
    )*};
}
integer_element!(i32, u32, i64, u64);

/// The Neumaier-compensated sum of `data` in f64, and the sum of magnitudes.
fn compensated_sum(data: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut sum, mut compensation, mut magnitude) = (0.0f64, 0.0f64, 0.0f64);
    for x in data {
        let t = sum + x;
        compensation += if sum.abs() >= x.abs() { (sum - t) + x } else { (x - t) + sum };
        sum = t;
        magnitude += x.abs();
    }
    (sum + compensation, magnitude)
}

macro_rules! float_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn values(rng: &mut StdRng, n: usize) -> Vec<Self> {
                (0..n).map(|_| rng.gen_range(-1.0..1.0) as $t * if rng.gen_ratio(1, 16) { 1000.0 } else { 1.0 }).collect()
            }
            fn patterned(n: usize) -> Vec<Self> {
                (0..n as u64)
                    .map(|i| {
                        let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                        ((h % 2001) as $t - 1000.0) / 1024.0
                    })
                    .collect()
            }
            fn check_sum(got: Self, data: &[Self], what: &str) {
                let (reference, magnitude) = compensated_sum(data.iter().map(|&x| x as f64));
                // Any summation order is within (n - 1) * eps * sum |x| of the exact sum.
                let bound = data.len().max(1) as f64 * <$t>::EPSILON as f64 * magnitude;
                assert!(
                    abs_diff_eq!(got as f64, reference, epsilon = bound.max(1e-30)),
                    "{what}: {got} is not within {bound:e} of the compensated sum {reference}"
                );
            }
        }
    )*};
}
float_element!(f32, f64);

/// Reduces `data` with `O` and every option set and strategy on `device`, comparing
/// with `expected(data)`.
fn check_operator<T: Element, O: Reduction<T>>(
    device: &Device,
    data: &[T],
    what: &str,
    check: impl Fn(O::Output, &[T], &str),
) {
    let input = device.upload(data).unwrap();
    for strategy in STRATEGIES {
        for options in option_sets(device, strategy, data.len()) {
            let mut reducer = Reducer::<T, O>::with_options(device, options).unwrap();
            let label = format!("{what} n={} {options:?} plan {:?}", data.len(), reducer.plan(data.len()));
            let got = reducer.reduce(&input).unwrap_or_else(|e| panic!("{label}: {e}"));
            check(got, data, &label);
        }
    }
}

/// Checks sum, min, max (and for integers and, or, xor) of `T` at every size.
macro_rules! check_type {
    ($device:expr, $rng:expr, $t:ty, ints: $ints:tt) => {{
        for n in sizes($device) {
            let data = <$t as Element>::values($rng, n);
            let name = stringify!($t);
            check_operator::<$t, Sum>($device, &data, &format!("sum {name}"), |got, d, w| <$t>::check_sum(got, d, w));
            let min = data.iter().copied().reduce(|a, b| if b < a { b } else { a });
            let max = data.iter().copied().reduce(|a, b| if b > a { b } else { a });
            check_operator::<$t, Min>($device, &data, &format!("min {name}"), |got, _, w| assert_eq!(got, min, "{w}"));
            check_operator::<$t, Max>($device, &data, &format!("max {name}"), |got, _, w| assert_eq!(got, max, "{w}"));
            check_type!(@bits $ints, $device, &data, $t, name);
        }
    }};
    (@bits true, $device:expr, $data:expr, $t:ty, $name:expr) => {{
        let and = $data.iter().fold(!0, |a: $t, &b| a & b);
        let or = $data.iter().fold(0, |a: $t, &b| a | b);
        let xor = $data.iter().fold(0, |a: $t, &b| a ^ b);
        check_operator::<$t, BitAnd>($device, $data, &format!("and {}", $name), |got, _, w| assert_eq!(got, and, "{w}"));
        check_operator::<$t, BitOr>($device, $data, &format!("or {}", $name), |got, _, w| assert_eq!(got, or, "{w}"));
        check_operator::<$t, BitXor>($device, $data, &format!("xor {}", $name), |got, _, w| assert_eq!(got, xor, "{w}"));
    }};
    (@bits false, $device:expr, $data:expr, $t:ty, $name:expr) => {};
}

#[test]
fn reducer_matches_the_cpu_for_every_operator_type_and_strategy() {
    let mut rng = StdRng::seed_from_u64(9);
    for device in test_devices("reducer_every_operator") {
        check_type!(&device, &mut rng, f32, ints: false);
        check_type!(&device, &mut rng, f64, ints: false);
        check_type!(&device, &mut rng, i32, ints: true);
        check_type!(&device, &mut rng, u32, ints: true);
        check_type!(&device, &mut rng, i64, ints: true);
        check_type!(&device, &mut rng, u64, ints: true);
    }
}

#[test]
fn empty_input_gives_the_identity_or_none() {
    for device in test_devices("empty_input") {
        let empty = device.alloc_zeroed::<f32>(0).unwrap();
        for strategy in STRATEGIES {
            let options = ReduceOptions { strategy, ..ReduceOptions::default() };
            assert_eq!(
                Reducer::<f32, Sum>::with_options(&device, options).unwrap().reduce(&empty).unwrap(),
                0.0
            );
            assert_eq!(
                Reducer::<f32, Min>::with_options(&device, options).unwrap().reduce(&empty).unwrap(),
                None
            );
            assert_eq!(
                Reducer::<f32, Max>::with_options(&device, options).unwrap().reduce(&empty).unwrap(),
                None
            );
            let empty_u = device.alloc_zeroed::<u32>(0).unwrap();
            assert_eq!(
                Reducer::<u32, BitAnd>::with_options(&device, options).unwrap().reduce(&empty_u).unwrap(),
                !0
            );
            // The device form writes the identity, for min too.
            let mut out = device.upload(&[7.0f32]).unwrap();
            let mut min = Reducer::<f32, Min>::with_options(&device, options).unwrap();
            min.reduce_to_device(&empty, &mut out).unwrap();
            assert_eq!(out.download().unwrap(), vec![f32::INFINITY], "{strategy:?}");
        }
    }
}

#[test]
fn float_results_are_bitwise_identical_run_to_run() {
    let mut rng = StdRng::seed_from_u64(10);
    for device in test_devices("float_determinism") {
        let (n, runs) = if on_gpu(&device) { ((1 << 24) + 3, 20) } else { (3001, 3) };
        let f32s = f32::values(&mut rng, n);
        let f64s = f64::values(&mut rng, n);
        let (d32, d64) = (device.upload(&f32s).unwrap(), device.upload(&f64s).unwrap());
        for strategy in STRATEGIES {
            for options in option_sets(&device, strategy, n) {
                let mut r32 = Reducer::<f32, Sum>::with_options(&device, options).unwrap();
                let mut r64 = Reducer::<f64, Sum>::with_options(&device, options).unwrap();
                let first = (r32.reduce(&d32).unwrap(), r64.reduce(&d64).unwrap());
                for run in 1..runs {
                    let again = (r32.reduce(&d32).unwrap(), r64.reduce(&d64).unwrap());
                    assert_eq!(first.0.to_bits(), again.0.to_bits(), "f32 {options:?} run {run}");
                    assert_eq!(first.1.to_bits(), again.1.to_bits(), "f64 {options:?} run {run}");
                }
                // A fresh reducer (new scratch, new epochs) gives the same bits too.
                let fresh =
                    Reducer::<f32, Sum>::with_options(&device, options).unwrap().reduce(&d32).unwrap();
                assert_eq!(first.0.to_bits(), fresh.to_bits(), "f32 {options:?}, fresh reducer");
            }
        }
    }
}

#[test]
fn last_block_counter_resets_across_many_launches() {
    let mut rng = StdRng::seed_from_u64(11);
    for device in test_devices("last_block_many_launches") {
        let (max_len, launches) = if on_gpu(&device) { (1 << 18, 500) } else { (3000, 40) };
        let data: Vec<u32> = (0..max_len).map(|_| rng.gen_range(0..1000)).collect();
        let input = device.upload(&data).unwrap();
        for options in option_sets(&device, Strategy::LastBlock, EMULATOR_LARGEST) {
            let mut reducer = Reducer::<u32, Sum>::with_options(&device, options).unwrap();
            let stream = device.stream().unwrap();
            // Enqueue them all, each with a different length (so a different grid), into
            // one output each, then check: every launch found the counter at 0.
            let lens: Vec<usize> = (0..launches).map(|_| rng.gen_range(1..=max_len)).collect();
            let outs: Vec<DeviceBuffer<u32>> =
                (0..launches).map(|_| device.alloc_zeroed(1).unwrap()).collect();
            let slices: Vec<DeviceBuffer<u32>> =
                lens.iter().map(|&len| device.upload(&data[..len]).unwrap()).collect();
            for (slice, out) in slices.iter().zip(&outs) {
                // SAFETY: `slice` and `out` live until the stream is synchronised below;
                // this reducer is used on this stream only.
                unsafe { reducer.reduce_on(&stream, slice, out) }.unwrap();
            }
            stream.synchronize().unwrap();
            for (i, (len, out)) in lens.iter().zip(&outs).enumerate() {
                let expected = data[..*len].iter().sum::<u32>();
                assert_eq!(
                    out.download().unwrap(),
                    vec![expected],
                    "launch {i} of {len} elements, {options:?}"
                );
            }
            // And the synchronous form after the enqueued ones.
            assert_eq!(reducer.reduce(&input).unwrap(), data.iter().sum::<u32>());
        }
    }
}

#[test]
fn grid_kernels_work_with_blocks_that_are_not_multiples_of_32() {
    let mut rng = StdRng::seed_from_u64(12);
    for device in test_devices("odd_block_sizes") {
        let n = if on_gpu(&device) { 100_003 } else { 2_500 };
        let ints: Vec<i64> = i64::values(&mut rng, n);
        let floats: Vec<f32> = f32::values(&mut rng, n);
        let (di, df) = (device.upload(&ints).unwrap(), device.upload(&floats).unwrap());
        let block_sizes: &[u32] =
            if on_gpu(&device) { &[1, 33, 100, 257, 1000, 1024] } else { &[1, 33, 100] };
        for &block_threads in block_sizes {
            for strategy in STRATEGIES {
                let options = ReduceOptions { strategy, block_threads, max_blocks: Some(7) };
                let label = format!("{options:?}");
                let mut sum = Reducer::<i64, Sum>::with_options(&device, options).unwrap();
                i64::check_sum(sum.reduce(&di).unwrap(), &ints, &label);
                let mut max = Reducer::<i64, Max>::with_options(&device, options).unwrap();
                assert_eq!(max.reduce(&di).unwrap(), ints.iter().copied().max(), "{label}");
                let mut fsum = Reducer::<f32, Sum>::with_options(&device, options).unwrap();
                f32::check_sum(fsum.reduce(&df).unwrap(), &floats, &label);
            }
        }
    }
}

#[test]
fn reduce_on_a_callers_stream_leaves_the_result_on_the_device() {
    for device in test_devices("reduce_on_stream") {
        let data: Vec<f64> = (0..5000).map(|i| i as f64 * 0.5).collect();
        let input = device.upload(&data).unwrap();
        let stream = device.stream().unwrap();
        for strategy in STRATEGIES {
            let mut reducer = Reducer::<f64, Sum>::with_options(&device, small_options(strategy)).unwrap();
            let out = device.alloc_zeroed::<f64>(3).unwrap();
            // SAFETY: `input` and `out` outlive the synchronisation below; one stream.
            unsafe { reducer.reduce_on(&stream, &input, &out) }.unwrap();
            stream.synchronize().unwrap();
            assert_eq!(out.download().unwrap(), vec![data.iter().sum::<f64>(), 0.0, 0.0], "{strategy:?}");
        }
    }
}

#[test]
fn bad_options_and_outputs_are_typed_errors() {
    let device = Device::emulator();
    for block_threads in [0, 1025] {
        let options = ReduceOptions { block_threads, ..ReduceOptions::default() };
        let err = Reducer::<f32, Sum>::with_options(&device, options).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    }
    let err = Reducer::<f32, Sum>::with_options(
        &device,
        ReduceOptions { max_blocks: Some(0), ..Default::default() },
    )
    .unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    let mut reducer = Reducer::<f32, Sum>::new(&device).unwrap();
    let input = device.upload(&[1.0f32, 2.0]).unwrap();
    let mut empty = device.alloc_zeroed::<f32>(0).unwrap();
    let err = reducer.reduce_to_device(&input, &mut empty).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    // The reducer still works after an error.
    assert_eq!(reducer.reduce(&input).unwrap(), 3.0);
}

#[test]
fn plans_follow_the_length() {
    let device = Device::emulator();
    let reducer = Reducer::<f32, Sum>::new(&device).unwrap();
    let one = reducer.plan(4096).unwrap();
    assert_eq!((one.strategy, one.blocks, one.launches), (Strategy::TwoPass, 1, 1));
    let many = reducer.plan(4097).unwrap();
    assert_eq!((many.strategy, many.launches), (Strategy::LastBlock, 1));
    assert!(many.blocks >= 2, "{many:?}");
    let mut two = Reducer::<f32, Sum>::with_options(&device, small_options(Strategy::TwoPass)).unwrap();
    assert_eq!(two.plan(5000).unwrap().launches, 2);
    two.set_strategy(Strategy::Cooperative);
    assert_eq!(two.plan(5000).unwrap().strategy, Strategy::Cooperative);
}

// ---------------------------------------------------------------------------------------
// User-defined operators

warpsafe_tests::user_reduction!(MatReduction: Mat2, MatMul, reduce_mat_two_pass, reduce_mat_last_block, reduce_mat_cooperative, reduce_mat_fold_copies);
warpsafe_tests::user_reduction!(StatsReduction: Stats, StatsOp, reduce_stats_two_pass, reduce_stats_last_block, reduce_stats_cooperative, reduce_stats_fold_copies);
warpsafe_tests::user_reduction!(LanesReduction: Lanes, LaneSum, reduce_lanes_two_pass, reduce_lanes_last_block, reduce_lanes_cooperative, reduce_lanes_fold_copies);

fn check_user<T: Pod + PartialEq + std::fmt::Debug, O: Reduction<T, Output = T>>(
    device: &Device,
    data: &[T],
    what: &str,
) {
    let expected = data.iter().fold(O::default().identity(), |a, &b| O::default().combine(a, b));
    let input = device.upload(data).unwrap();
    for strategy in STRATEGIES {
        for options in option_sets(device, strategy, data.len()) {
            let mut reducer = Reducer::<T, O>::with_options(device, options).unwrap();
            let got = reducer.reduce(&input).unwrap_or_else(|e| panic!("{what} {options:?}: {e}"));
            assert_eq!(got, expected, "{what} n={} {options:?}", data.len());
        }
    }
}

#[test]
fn user_defined_operators_over_any_pod_type() {
    let mut rng = StdRng::seed_from_u64(13);
    for device in test_devices("user_defined_operators") {
        for n in sizes(&device) {
            let x: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
            let mats: Vec<Mat2> = x.iter().map(|&v| mat_of(v)).collect();
            check_user::<Mat2, MatReduction>(&device, &mats, "matrix product (not commutative)");
            let stats: Vec<Stats> = x.iter().map(|&v| stats_of(v)).collect();
            check_user::<Stats, StatsReduction>(&device, &stats, "stats (12 bytes)");
            let lanes: Vec<Lanes> = x.iter().map(|&v| lanes_of(v)).collect();
            check_user::<Lanes, LanesReduction>(&device, &lanes, "lanes (16 bytes)");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Huge sizes (GPU only)

/// The GPU, when there is one (these sizes do not run on the emulator).
fn gpu_device(test: &str) -> Option<Device> {
    gpu_or_skip(test).map(Device::from)
}

#[test]
fn huge_2_28_elements_every_operator_type_and_strategy() {
    let Some(device) = gpu_device("huge_2_28") else { return };
    let n = 1 << 28;
    macro_rules! huge_type {
        ($t:ty, ints: $ints:tt) => {{
            let data = <$t as Element>::patterned(n);
            let input = device.upload(&data).unwrap();
            let name = stringify!($t);
            for strategy in STRATEGIES {
                let options = ReduceOptions { strategy, ..ReduceOptions::default() };
                let label = format!("{name} 2^28 {strategy:?}");
                <$t>::check_sum(Reducer::<$t, Sum>::with_options(&device, options).unwrap().reduce(&input).unwrap(), &data, &label);
            }
            let min = data.iter().copied().reduce(|a, b| if b < a { b } else { a });
            let max = data.iter().copied().reduce(|a, b| if b > a { b } else { a });
            for strategy in STRATEGIES {
                let options = ReduceOptions { strategy, ..ReduceOptions::default() };
                assert_eq!(Reducer::<$t, Min>::with_options(&device, options).unwrap().reduce(&input).unwrap(), min, "min {name} {strategy:?}");
                assert_eq!(Reducer::<$t, Max>::with_options(&device, options).unwrap().reduce(&input).unwrap(), max, "max {name} {strategy:?}");
            }
            huge_type!(@bits $ints, &input, &data, $t, name);
        }};
        (@bits true, $input:expr, $data:expr, $t:ty, $name:expr) => {{
            let and = $data.iter().fold(!0, |a: $t, &b| a & b);
            let or = $data.iter().fold(0, |a: $t, &b| a | b);
            let xor = $data.iter().fold(0, |a: $t, &b| a ^ b);
            for strategy in STRATEGIES {
                let options = ReduceOptions { strategy, ..ReduceOptions::default() };
                assert_eq!(Reducer::<$t, BitAnd>::with_options(&device, options).unwrap().reduce($input).unwrap(), and, "and {} {strategy:?}", $name);
                assert_eq!(Reducer::<$t, BitOr>::with_options(&device, options).unwrap().reduce($input).unwrap(), or, "or {} {strategy:?}", $name);
                assert_eq!(Reducer::<$t, BitXor>::with_options(&device, options).unwrap().reduce($input).unwrap(), xor, "xor {} {strategy:?}", $name);
            }
        }};
        (@bits false, $input:expr, $data:expr, $t:ty, $name:expr) => {};
    }
    huge_type!(f32, ints: false);
    huge_type!(f64, ints: false);
    huge_type!(i32, ints: true);
    huge_type!(u32, ints: true);
    huge_type!(i64, ints: true);
    huge_type!(u64, ints: true);
}

#[test]
fn huge_i32_over_2_31_elements() {
    let Some(device) = gpu_device("huge_i32_over_2_31") else { return };
    let n = (1usize << 31) + 5;
    // value(i) = (i % 7) - 3 + (i == n - 1) * 1000: the last element lies past 2^31, so a
    // 32-bit index would miss or misplace it.
    let data: Vec<i32> = (0..n).map(|i| (i % 7) as i32 - 3 + if i == n - 1 { 1000 } else { 0 }).collect();
    let expected_sum = data.iter().fold(0i32, |a, &b| a.wrapping_add(b));
    let expected_max = 1003;
    let input = device.upload(&data).unwrap();
    drop(data);
    for strategy in STRATEGIES {
        let options = ReduceOptions { strategy, ..ReduceOptions::default() };
        let sum = Reducer::<i32, Sum>::with_options(&device, options).unwrap().reduce(&input).unwrap();
        assert_eq!(sum, expected_sum, "sum {strategy:?}");
        let max = Reducer::<i32, Max>::with_options(&device, options).unwrap().reduce(&input).unwrap();
        assert_eq!(max, Some(expected_max), "max {strategy:?}");
        let min = Reducer::<i32, Min>::with_options(&device, options).unwrap().reduce(&input).unwrap();
        assert_eq!(min, Some(-3), "min {strategy:?}");
        let or = Reducer::<i32, BitOr>::with_options(&device, options).unwrap().reduce(&input).unwrap();
        assert_eq!(or, -1, "or {strategy:?}");
    }
}

#[test]
fn buffers_of_another_device_are_refused() {
    let devices = test_devices("buffers_of_another_device");
    let [emulator, gpu] = &devices[..] else { return };
    for (reducer_device, buffer_device) in [(gpu, emulator), (emulator, gpu)] {
        let mut reducer = Reducer::<u32, Sum>::new(reducer_device).unwrap();
        let foreign = buffer_device.upload(&[1u32, 2, 3]).unwrap();
        let err = reducer.reduce(&foreign).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
        let mut out = reducer_device.alloc_zeroed::<u32>(1).unwrap();
        assert!(matches!(reducer.reduce_to_device(&foreign, &mut out), Err(Error::Unsupported { .. })));
        let own = reducer_device.upload(&[1u32, 2, 3]).unwrap();
        let mut foreign_out = buffer_device.alloc_zeroed::<u32>(1).unwrap();
        assert!(matches!(reducer.reduce_to_device(&own, &mut foreign_out), Err(Error::Unsupported { .. })));
        assert_eq!(reducer.reduce(&own).unwrap(), 6);
    }
}
