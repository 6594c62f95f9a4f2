//! `warpsafe::{fence, atomic, barrier}` on the emulator and the GPU (kernels in
//! `tests/kernels/memory`): inter-block message passing under each hand-off protocol,
//! every atomic operation at every scope against a CPU model, and whole-block, reduction
//! and named barriers in blocks whose size is not a multiple of 32. Every output buffer is
//! poisoned before the launch and every element is checked. The emulator runs smaller
//! launches (and message passing under several scheduler seeds); without a GPU each test
//! prints `skipped: no CUDA device` for its GPU half.

use std::collections::HashMap;
use std::fmt::Debug;

use approx::assert_relative_eq;
use memory_test_kernels as k;
use rand::distributions::{Distribution, Standard};
use rand::{Rng, SeedableRng};
use warpsafe::emu;
use warpsafe::kernel::UntypedKernel as Kernel;
use warpsafe_host::{kernel_args, Device, Function, LaunchConfig, Module};
use warpsafe_tests::{gpu_or_skip, modules, note, on_gpu, test_devices};

/// The memory test kernels for every architecture they are built for that the device can
/// load (once on the emulator).
fn memory_modules(device: &Device, test: &str) -> Vec<(String, Module)> {
    modules(device, "memory", &[70, 80, 90], test)
}

// ---------------------------------------------------------------------------------------
// Message passing (layout constants as in the kernel crate).

const MP_WORDS: usize = 4;
const MP_STRIDE: usize = 32;

/// The size of a message-passing run.
#[derive(Clone, Copy)]
struct MpSize {
    blocks: u32,
    rounds: u32,
    launches: usize,
    /// Polls without news after which a consumer gives up (far above what a running
    /// producer ever needs, and a few seconds at most on a GPU when it never runs).
    spin_limit: u32,
}

/// On the GPU: many rounds, many launches, to give a weak outcome its chance.
const MP_GPU: MpSize = MpSize { blocks: 16, rounds: 2000, launches: 5, spin_limit: 1 << 22 };
/// On the emulator: fewer (every poll is a switch point), each launch under its own seed.
const MP_EMULATOR: MpSize = MpSize { blocks: 4, rounds: 40, launches: 3, spin_limit: 1 << 20 };

fn mp_size(device: &Device) -> MpSize {
    if on_gpu(device) {
        MP_GPU
    } else {
        MP_EMULATOR
    }
}

/// Totals over every launch of `kernel`, per architecture: (label, violations, timeouts,
/// consumers that did not reach the last round). On the emulator launch `l` runs under
/// scheduler seed `l`, so the launches try different interleavings.
fn run_message_passing(device: &Device, kernel: &'static Kernel, test: &str) -> Vec<(String, u64, u64, u64)> {
    let size = mp_size(device);
    let mut results = Vec::new();
    for (arch, module) in memory_modules(device, test) {
        let function = module.untyped_kernel(kernel).unwrap();
        let (mut violations, mut timeouts, mut unfinished) = (0u64, 0u64, 0u64);
        let channels = 32 * size.blocks as usize;
        for launch in 0..size.launches {
            let device = match device.emulator_options() {
                Some(options) => {
                    Device::emulator_with(emu::Options { seed: launch as u64, ..options.clone() })
                }
                None => device.clone(),
            };
            let flags = device.alloc_zeroed::<u32>(channels * MP_STRIDE).unwrap();
            let data = device.alloc_zeroed::<u32>(MP_WORDS * channels * MP_STRIDE).unwrap();
            let out = device.upload(&vec![u32::MAX; 3 * channels]).unwrap();
            let (mut p_flags, mut p_data, mut p_out) =
                (flags.device_address(), data.device_address(), out.device_address());
            let (mut rounds, mut spin_limit) = (size.rounds, size.spin_limit);
            let args = kernel_args![p_flags, p_data, p_out, rounds, spin_limit];
            // SAFETY: the parameters match message_passing's, with its buffer sizes for
            // `size.blocks` blocks of 64 threads; flags and data start zeroed.
            unsafe { device.launch_raw(&function, LaunchConfig::linear(size.blocks, 64), &args) }
                .unwrap_or_else(|e| panic!("{arch} {}: {e}", kernel.name()));
            for (c, r) in out.download().unwrap().chunks(3).enumerate() {
                let [v, timed_out, seen] = [r[0], r[1], r[2]];
                let what = || format!("{arch} {}: consumer {c} unwritten: {r:?}", kernel.name());
                assert!(v <= size.rounds * MP_WORDS as u32, "{}", what());
                assert!(timed_out <= 1 && seen <= size.rounds, "{}", what());
                violations += u64::from(v);
                timeouts += u64::from(timed_out);
                unfinished += u64::from(seen != size.rounds);
            }
        }
        results.push((arch, violations, timeouts, unfinished));
    }
    results
}

fn assert_message_passing_is_ordered(test: &str, kernel: &'static Kernel) {
    for device in test_devices(test) {
        for (arch, violations, timeouts, unfinished) in run_message_passing(&device, kernel, test) {
            let name = kernel.name();
            assert_eq!(timeouts, 0, "{arch} {name}: consumers timed out waiting for their producer");
            assert_eq!(unfinished, 0, "{arch} {name}: consumers stopped before the last round");
            assert_eq!(violations, 0, "{arch} {name}: a consumer saw the flag but stale data");
        }
    }
}

#[test]
fn message_passing_with_release_store_and_acquire_load_never_shows_stale_data() {
    assert_message_passing_is_ordered(
        "message_passing_with_release_store_and_acquire_load_never_shows_stale_data",
        &k::mem_mp_release_acquire,
    );
}

#[test]
fn message_passing_with_device_fences_and_volatile_flag_never_shows_stale_data() {
    assert_message_passing_is_ordered(
        "message_passing_with_device_fences_and_volatile_flag_never_shows_stale_data",
        &k::mem_mp_fence_volatile,
    );
}

#[test]
fn message_passing_with_system_sc_fences_never_shows_stale_data() {
    assert_message_passing_is_ordered(
        "message_passing_with_system_sc_fences_never_shows_stale_data",
        &k::mem_mp_fence_sc_system,
    );
}

#[test]
fn message_passing_within_a_block_at_block_scope_never_shows_stale_data() {
    assert_message_passing_is_ordered(
        "message_passing_within_a_block_at_block_scope_never_shows_stale_data",
        &k::mem_mp_block_release_acquire,
    );
}

#[test]
fn message_passing_with_plain_data_and_device_fences_never_shows_stale_data() {
    assert_message_passing_is_ordered(
        "message_passing_with_plain_data_and_device_fences_never_shows_stale_data",
        &k::mem_mp_plain_data_fenced,
    );
}

/// The same plain-data hand-off with both fences removed must be caught: the consumer's
/// plain loads are served from its L1 cache with data older than the flag it saw. This is
/// the proof that the ordered tests above can fail.
///
/// GPU only: the emulator is sequentially consistent (every write is visible to every
/// thread at once; see `warpsafe::emu`, "What is not modelled"), so it can never show a
/// stale read and this test could not pass there.
#[test]
fn message_passing_with_plain_data_and_the_fences_removed_is_caught() {
    let test = "message_passing_with_plain_data_and_the_fences_removed_is_caught";
    let Some(gpu) = gpu_or_skip(test) else { return };
    let device = Device::from(gpu);
    for (arch, violations, timeouts, _) in run_message_passing(&device, &k::mem_mp_plain_data_unfenced, test)
    {
        note(&format!("{test}: {} {arch}: {violations} stale reads without fences", device.name()));
        assert_eq!(timeouts, 0, "{arch}: consumers timed out waiting for their producer");
        assert!(violations > 0, "{arch}: removing the fences went unnoticed");
    }
}

/// Without fences a GPU may show stale data or not: reported, not asserted. The emulator,
/// sequentially consistent, must show none.
#[test]
fn message_passing_without_fences_reports_what_this_gpu_shows() {
    let test = "message_passing_without_fences_reports_what_this_gpu_shows";
    for device in test_devices(test) {
        let size = mp_size(&device);
        for (arch, violations, timeouts, unfinished) in
            run_message_passing(&device, &k::mem_mp_unfenced, test)
        {
            let checks =
                size.launches as u64 * 32 * u64::from(size.blocks) * u64::from(size.rounds) * MP_WORDS as u64;
            note(&format!(
                "{test}: {} {arch}: {violations} stale reads (of at most {checks} checks) without fences; \
                 {timeouts} timeouts, {unfinished} unfinished consumers",
                device.name()
            ));
            assert_eq!(timeouts, 0, "{arch}: consumers timed out waiting for their producer");
            if !on_gpu(&device) {
                assert_eq!(violations, 0, "{arch}: the emulator is sequentially consistent");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Atomic counters.

/// (grid, block): block sizes that are not multiples of 32.
const COUNTER_LAUNCHES: [(u32, u32); 3] = [(8, 100), (3, 1000), (5, 33)];
/// [`COUNTER_LAUNCHES`] for the emulator: the same kinds of block, fewer threads.
const EMULATOR_COUNTER_LAUNCHES: [(u32, u32); 3] = [(3, 100), (1, 257), (2, 33)];

fn counter_launches(device: &Device) -> [(u32, u32); 3] {
    if on_gpu(device) {
        COUNTER_LAUNCHES
    } else {
        EMULATOR_COUNTER_LAUNCHES
    }
}

/// Whether each counter kernel variant (in the order of [`IntModel::kernels`]: block
/// scope in shared memory, block scope in global memory, device scope, system scope) keeps
/// one counter group per block.
const PER_BLOCK: [bool; 4] = [true, true, false, false];
const WRAP_LIMIT: u32 = 37;
const INT_COUNTERS: usize = 14;
const SWAP: usize = 12;

/// An integer type of the counter test, with the CPU model of the kernel's operations.
trait IntModel: bytemuck::Pod + Default + Ord + Debug + std::hash::Hash
where
    Standard: Distribution<Self>,
{
    /// `mem_counters_<T>_{block, block_global, device, system}`.
    fn kernels() -> [&'static Kernel; 4];
    const ONES: Self;
    const ZERO: Self;
    /// Counters beyond the 14 every integer type has (`u32`: inc and dec).
    const EXTRA: usize = 0;
    fn wrapping_add(self, other: Self) -> Self;
    fn from_usize(n: usize) -> Self;
    /// The kernel's `one << (v.count_ones() * 7 % BITS)`.
    fn bit(self) -> Self;
    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn xor(self, other: Self) -> Self;
    fn not(self) -> Self;
    /// Initial values of the extra counters.
    fn extra_init(_rng: &mut impl Rng) -> Vec<Self> {
        Vec::new()
    }
    /// The extra counters after `n` threads.
    fn extra_expected(_init: &[Self], _n: usize) -> Vec<Self> {
        Vec::new()
    }
}

macro_rules! int_model {
    ($($t:ty: [$($kernel:ident),*] { $($extra:item)* })*) => {$(
        impl IntModel for $t {
            const ONES: Self = !0;
            const ZERO: Self = 0;
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            fn from_usize(n: usize) -> Self {
                n as $t
            }
            fn bit(self) -> Self {
                let one: $t = 1;
                one << (self.count_ones().wrapping_mul(7) % <$t>::BITS)
            }
            fn and(self, other: Self) -> Self {
                self & other
            }
            fn or(self, other: Self) -> Self {
                self | other
            }
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
            fn not(self) -> Self {
                !self
            }
            fn kernels() -> [&'static Kernel; 4] {
                [$(&k::$kernel),*]
            }
            $($extra)*
        }
    )*};
}

int_model! {
    u32: [mem_counters_u32_block, mem_counters_u32_block_global, mem_counters_u32_device, mem_counters_u32_system] {
        const EXTRA: usize = 4;
        // Below and above the wrap limit.
        fn extra_init(rng: &mut impl Rng) -> Vec<u32> {
            (0..4).map(|_| rng.gen_range(0..2 * WRAP_LIMIT)).collect()
        }
        fn extra_expected(init: &[u32], n: usize) -> Vec<u32> {
            vec![wrap_inc(init[0], n), wrap_inc(init[1], n), wrap_dec(init[2], n), wrap_dec(init[3], n)]
        }
    }
    i32: [mem_counters_i32_block, mem_counters_i32_block_global, mem_counters_i32_device, mem_counters_i32_system] {}
    u64: [mem_counters_u64_block, mem_counters_u64_block_global, mem_counters_u64_device, mem_counters_u64_system] {}
    i64: [mem_counters_i64_block, mem_counters_i64_block_global, mem_counters_i64_device, mem_counters_i64_system] {}
}

/// The CPU model of one group's counters after the kernel (all but the swap counter,
/// whose final value depends on the order and is checked with the returned values).
fn expected_int_counters<T: IntModel>(init: &[T], vals: &[T]) -> Vec<T>
where
    Standard: Distribution<T>,
{
    let fold = |k: usize, f: &dyn Fn(T, T) -> T| vals.iter().fold(init[k], |a, &v| f(a, v));
    let mut c = vec![
        fold(0, &|a, v| a.wrapping_add(v)),
        fold(1, &|a, v| a.wrapping_add(v)),
        fold(2, &|a, v| a.min(v)),
        fold(3, &|a, v| a.min(v)),
        fold(4, &|a, v| a.max(v)),
        fold(5, &|a, v| a.max(v)),
        fold(6, &|a, v| a.and(v.bit().not())),
        fold(7, &|a, v| a.and(v.bit().not())),
        fold(8, &|a, v| a.or(v.bit())),
        fold(9, &|a, v| a.or(v.bit())),
        fold(10, &|a, v| a.xor(v)),
        fold(11, &|a, v| a.xor(v)),
        init[SWAP],
        init[13].wrapping_add(T::from_usize(vals.len())),
    ];
    c.extend(T::extra_expected(&init[INT_COUNTERS..], vals.len()));
    c
}

/// atom.inc / atom.dec applied `n` times (the same function each time, so the order of
/// the threads does not matter).
fn wrap_inc(mut v: u32, n: usize) -> u32 {
    for _ in 0..n {
        v = if v >= WRAP_LIMIT { 0 } else { v + 1 };
    }
    v
}

fn wrap_dec(mut v: u32, n: usize) -> u32 {
    for _ in 0..n {
        v = if v == 0 || v > WRAP_LIMIT { WRAP_LIMIT } else { v - 1 };
    }
    v
}

/// Launches a counter kernel `(vals, counters, olds)` as `grid` blocks of `block` threads
/// with `counters` starting at `init` and `olds` poisoned with `poison`; returns the final
/// counters and the values each thread's returning atomic gave back.
fn run_counters<T: bytemuck::Pod>(
    device: &Device,
    function: &Function,
    (grid, block): (u32, u32),
    vals: &[T],
    init: &[T],
    poison: T,
) -> (Vec<T>, Vec<T>) {
    let d_vals = device.upload(vals).unwrap();
    let counters = device.upload(init).unwrap();
    let olds = device.upload(&vec![poison; vals.len()]).unwrap();
    let (mut p_vals, mut p_counters, mut p_olds) =
        (d_vals.device_address(), counters.device_address(), olds.device_address());
    let args = kernel_args![p_vals, p_counters, p_olds];
    // SAFETY: (vals, counters, olds) with one value and one old per thread and the
    // kernel's number of counters per group in `init`, as every counter kernel expects.
    unsafe { device.launch_raw(function, LaunchConfig::linear(grid, block), &args) }
        .unwrap_or_else(|e| panic!("{} grid {grid} block {block}: {e}", function.name()));
    (counters.download().unwrap(), olds.download().unwrap())
}

/// Runs `mem_counters_<T>_<variant>` for every launch shape and checks every counter and
/// every value the swaps returned.
fn check_int_counters<T: IntModel>(device: &Device, test: &str, seed: u64)
where
    Standard: Distribution<T>,
{
    let n_counters = INT_COUNTERS + T::EXTRA;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for (arch, module) in memory_modules(device, test) {
        for (kernel, per_block) in T::kernels().into_iter().zip(PER_BLOCK) {
            let function = module.untyped_kernel(kernel).unwrap();
            for (grid, block) in counter_launches(device) {
                let total = (grid * block) as usize;
                let groups = if per_block { grid as usize } else { 1 };
                let vals: Vec<T> = (0..total).map(|_| rng.gen()).collect();
                let mut init = Vec::new();
                for _ in 0..groups {
                    let mut g: Vec<T> = (0..INT_COUNTERS).map(|_| rng.gen()).collect();
                    g[6] = T::ONES;
                    g[7] = T::ONES;
                    g[8] = T::ZERO;
                    g[9] = T::ZERO;
                    g.extend(T::extra_init(&mut rng));
                    init.extend(g);
                }
                let (got, got_olds) = run_counters(device, &function, (grid, block), &vals, &init, T::ONES);
                let per_group = total / groups;
                for g in 0..groups {
                    let what = format!("{arch} {} grid {grid} block {block} group {g}", kernel.name());
                    let vals = &vals[g * per_group..(g + 1) * per_group];
                    let init = &init[g * n_counters..(g + 1) * n_counters];
                    let got = &got[g * n_counters..(g + 1) * n_counters];
                    let mut expected = expected_int_counters(init, vals);
                    expected[SWAP] = got[SWAP];
                    for (k, (e, o)) in expected.iter().zip(got).enumerate() {
                        assert_eq!(o, e, "{what}: counter {k}");
                    }
                    // swap: the values it returned plus the final one are exactly the
                    // initial value plus every thread's value.
                    let mut returned: Vec<T> = got_olds[g * per_group..(g + 1) * per_group].to_vec();
                    returned.push(got[SWAP]);
                    let mut supplied: Vec<T> = vals.to_vec();
                    supplied.push(init[SWAP]);
                    assert_eq!(multiset(&returned), multiset(&supplied), "{what}: swap results");
                }
            }
        }
    }
}

fn multiset<T: Copy + Eq + std::hash::Hash>(values: &[T]) -> HashMap<T, usize> {
    let mut m = HashMap::new();
    for &v in values {
        *m.entry(v).or_default() += 1;
    }
    m
}

#[test]
fn u32_atomics_at_every_scope_match_the_cpu_exactly() {
    let test = "u32_atomics_at_every_scope_match_the_cpu_exactly";
    for device in test_devices(test) {
        check_int_counters::<u32>(&device, test, 0x5eed_1001);
    }
}

#[test]
fn i32_atomics_at_every_scope_match_the_cpu_exactly() {
    let test = "i32_atomics_at_every_scope_match_the_cpu_exactly";
    for device in test_devices(test) {
        check_int_counters::<i32>(&device, test, 0x5eed_1002);
    }
}

#[test]
fn u64_atomics_at_every_scope_match_the_cpu_exactly() {
    let test = "u64_atomics_at_every_scope_match_the_cpu_exactly";
    for device in test_devices(test) {
        check_int_counters::<u64>(&device, test, 0x5eed_1003);
    }
}

#[test]
fn i64_atomics_at_every_scope_match_the_cpu_exactly() {
    let test = "i64_atomics_at_every_scope_match_the_cpu_exactly";
    for device in test_devices(test) {
        check_int_counters::<i64>(&device, test, 0x5eed_1004);
    }
}

/// A float type of the counter test.
trait FloatModel: bytemuck::Pod + Debug + Into<f64> {
    /// `mem_counters_<T>_{block, block_global, device, system}`.
    fn kernels() -> [&'static Kernel; 4];
    const POISON: Self;
    /// Relative tolerance of a sum of a few thousand values in [0, 1) in any order.
    const TOLERANCE: f64;
    fn sample(rng: &mut impl Rng, max: f64) -> Self;
}

impl FloatModel for f32 {
    fn kernels() -> [&'static Kernel; 4] {
        [
            &k::mem_counters_f32_block,
            &k::mem_counters_f32_block_global,
            &k::mem_counters_f32_device,
            &k::mem_counters_f32_system,
        ]
    }
    const POISON: Self = f32::NAN;
    const TOLERANCE: f64 = 1e-3;
    fn sample(rng: &mut impl Rng, max: f64) -> Self {
        rng.gen_range(0.0..max as f32)
    }
}

impl FloatModel for f64 {
    fn kernels() -> [&'static Kernel; 4] {
        [
            &k::mem_counters_f64_block,
            &k::mem_counters_f64_block_global,
            &k::mem_counters_f64_device,
            &k::mem_counters_f64_system,
        ]
    }
    const POISON: Self = f64::NAN;
    const TOLERANCE: f64 = 1e-9;
    fn sample(rng: &mut impl Rng, max: f64) -> Self {
        rng.gen_range(0.0..max)
    }
}

/// `fetch_add` into counter 0 and `add` into counter 1 of each group: both end at the
/// initial value plus the sum (approximately: the order of additions varies), and each
/// value `fetch_add` returned lies between the initial value and the final one.
fn check_float_counters<T: FloatModel>(device: &Device, test: &str, seed: u64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for (arch, module) in memory_modules(device, test) {
        for (kernel, per_block) in T::kernels().into_iter().zip(PER_BLOCK) {
            let function = module.untyped_kernel(kernel).unwrap();
            for (grid, block) in counter_launches(device) {
                let total = (grid * block) as usize;
                let groups = if per_block { grid as usize } else { 1 };
                let vals: Vec<T> = (0..total).map(|_| T::sample(&mut rng, 1.0)).collect();
                let init: Vec<T> = (0..2 * groups).map(|_| T::sample(&mut rng, 10.0)).collect();
                let (got, got_olds) = run_counters(device, &function, (grid, block), &vals, &init, T::POISON);
                let per_group = total / groups;
                for g in 0..groups {
                    let what = format!("{arch} {} grid {grid} block {block} group {g}", kernel.name());
                    let sum: f64 = vals[g * per_group..(g + 1) * per_group].iter().map(|&v| v.into()).sum();
                    for k in 0..2 {
                        let expected = init[2 * g + k].into() + sum;
                        let got: f64 = got[2 * g + k].into();
                        assert_relative_eq!(got, expected, max_relative = T::TOLERANCE);
                        assert!(got.is_finite(), "{what}: counter {k} = {got}");
                    }
                    let (low, high): (f64, f64) = (init[2 * g].into(), got[2 * g].into());
                    for (i, &old) in got_olds[g * per_group..(g + 1) * per_group].iter().enumerate() {
                        let old: f64 = old.into();
                        assert!(
                            old >= low && old <= high * (1.0 + T::TOLERANCE),
                            "{what}: thread {i}'s fetch_add returned {old}, outside [{low}, {high}]"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn float_adds_at_every_scope_match_the_cpu_sum() {
    let test = "float_adds_at_every_scope_match_the_cpu_sum";
    for device in test_devices(test) {
        check_float_counters::<f32>(&device, test, 0x5eed_1005);
        check_float_counters::<f64>(&device, test, 0x5eed_1006);
    }
}

// ---------------------------------------------------------------------------------------
// Barriers.

const BARRIER_BLOCKS: [u32; 4] = [33, 100, 1000, 1024];
/// [`BARRIER_BLOCKS`] for the emulator: partial last warps, one and several full warps.
const EMULATOR_BARRIER_BLOCKS: [u32; 4] = [1, 33, 100, 257];
const BARRIER_GRID: u32 = 3;

fn barrier_blocks(device: &Device) -> [u32; 4] {
    if on_gpu(device) {
        BARRIER_BLOCKS
    } else {
        EMULATOR_BARRIER_BLOCKS
    }
}
const EXCHANGE_ROUNDS: u32 = 5;

/// The kernels' `exchange_value`.
fn exchange_value(t: u32, r: u32) -> u32 {
    t.wrapping_mul(0x9e37_79b9) ^ r.wrapping_mul(0x85eb_ca6b)
}

/// Thread `t`'s result of the exchange among `len` threads starting at `start`.
fn exchange(t: u32, start: u32, len: u32) -> u32 {
    let local = t - start;
    (0..EXCHANGE_ROUNDS).fold(0u32, |acc, r| {
        acc.wrapping_mul(31).wrapping_add(exchange_value(start + (local + r + 1) % len, r))
    })
}

/// Launches a barrier kernel taking `(out, rounds)` and returns `out`, poisoned first.
fn run_exchange(device: &Device, module: &Module, kernel: &'static Kernel, block: u32) -> Vec<u32> {
    let function = module.untyped_kernel(kernel).unwrap();
    let total = (BARRIER_GRID * block) as usize;
    let out = device.upload(&vec![0xdead_beefu32; total]).unwrap();
    let mut p_out = out.device_address();
    let mut rounds = EXCHANGE_ROUNDS;
    let args = kernel_args![p_out, rounds];
    // SAFETY: (out, rounds) with one output per thread, blocks of at most 1024 threads.
    unsafe { device.launch_raw(&function, LaunchConfig::linear(BARRIER_GRID, block), &args) }
        .unwrap_or_else(|e| panic!("{} block {block}: {e}", kernel.name()));
    out.download().unwrap()
}

#[test]
fn block_barrier_orders_a_shared_memory_exchange() {
    let test = "block_barrier_orders_a_shared_memory_exchange";
    for device in test_devices(test) {
        for (arch, module) in memory_modules(&device, test) {
            for block in barrier_blocks(&device) {
                let got = run_exchange(&device, &module, &k::mem_barrier_exchange, block);
                for (i, &g) in got.iter().enumerate() {
                    let t = i as u32 % block;
                    assert_eq!(g, exchange(t, 0, block), "{arch} block {block} thread {i}");
                }
            }
        }
    }
}

#[test]
fn named_barriers_synchronise_their_own_warps_only() {
    let test = "named_barriers_synchronise_their_own_warps_only";
    for device in test_devices(test) {
        for (arch, module) in memory_modules(&device, test) {
            for block in barrier_blocks(&device) {
                let got = run_exchange(&device, &module, &k::mem_barrier_named, block);
                let full = block / 32;
                let half = full.div_ceil(2);
                for (i, &g) in got.iter().enumerate() {
                    let t = i as u32 % block;
                    let warp = t / 32;
                    let expected = if warp >= full {
                        u32::MAX - t
                    } else if warp < half {
                        exchange(t, 0, 32 * half)
                    } else {
                        exchange(t, 32 * half, 32 * (full - half))
                    };
                    assert_eq!(g, expected, "{arch} block {block} thread {i}");
                }
            }
        }
    }
}

/// Rounds of `mem_barrier_reductions`, one predicate pattern each.
const PREDICATE_PATTERNS: usize = 8;

/// Pattern `k` for thread `t` of a block of `n`: none, all, only the first thread, all
/// but the last, then random ones, dense and sparse.
fn predicate(k: usize, t: usize, n: usize, rng: &mut impl Rng) -> bool {
    match k {
        0 => false,
        1 => true,
        2 => t == 0,
        3 => t != n - 1,
        4 | 5 => rng.gen_bool(0.5),
        6 => rng.gen_bool(0.02),
        _ => rng.gen_bool(0.98),
    }
}

#[test]
fn barrier_count_and_or_match_the_cpu() {
    let test = "barrier_count_and_or_match_the_cpu";
    for device in test_devices(test) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_1007);
        for (arch, module) in memory_modules(&device, test) {
            let function = module.kernel(&k::mem_barrier_reductions).unwrap();
            for block in barrier_blocks(&device) {
                let n = block as usize;
                let total = BARRIER_GRID as usize * n;
                let rounds = PREDICATE_PATTERNS;
                let preds: Vec<u32> = (0..rounds)
                    .flat_map(|k| (0..total).map(move |t| (k, t)))
                    .map(|(k, t)| u32::from(predicate(k, t % n, n, &mut rng)))
                    .collect();
                let d_preds = device.upload(&preds).unwrap();
                let out = device.upload(&vec![u32::MAX; 3 * rounds * total]).unwrap();
                let (mut p_preds, mut p_out, mut r) =
                    (d_preds.device_address(), out.device_address(), rounds as u32);
                let args = kernel_args![p_preds, p_out, r];
                // SAFETY: (preds, out, rounds) with rounds * total predicates and three outputs
                // per predicate.
                unsafe { device.launch_raw(&function, LaunchConfig::linear(BARRIER_GRID, block), &args) }
                    .unwrap_or_else(|e| panic!("{arch} block {block}: {e}"));
                let got = out.download().unwrap();
                for round in 0..rounds {
                    for b in 0..BARRIER_GRID as usize {
                        let block_preds = &preds[round * total + b * n..round * total + (b + 1) * n];
                        let count = block_preds.iter().sum::<u32>();
                        let expected = [count, u32::from(count == block), u32::from(count > 0)];
                        for t in 0..n {
                            let i = round * total + b * n + t;
                            assert_eq!(
                                got[3 * i..3 * i + 3],
                                expected,
                                "{arch} block {block} round {round} thread {t}"
                            );
                        }
                    }
                }
            }
        }
    }
}
