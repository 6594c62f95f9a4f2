//! The emulator's sanitizer checks, one planted bug and one correct twin per class:
//! barriers reached from different places or after exits, shuffle widths, grid waits in
//! launches that are not cooperative, undefined values reported where they are used (and
//! not where a correct kernel drops them), the activemask split, the safe layer agreeing
//! with the GPU, and long kernels that must not be taken for spins.

mod emu_support;

use emu_support::{arg, launch};
use emu_test_kernels::{correct, misuse};
use warpsafe::emu::{for_each_seed, for_each_seed_with, Error, ErrorKind, LaunchConfig, Options};
use warpsafe::global::{DisjointSlice, Slice};
use warpsafe::kernel::{Kernel as TypedKernel, Unsafe, UntypedKernel as Kernel};
use warpsafe_host::{Device, Module};
use warpsafe_tests::test_program;

const SEEDS: core::ops::Range<u64> = 0..8;

fn contains_all(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }
}

/// Runs `kernel` on one block of `block` threads with a `u32` output per thread under
/// every seed; every run must fail with `kind`. Returns the last message.
fn flagged(kernel: &Kernel, block: u32, kind: ErrorKind, options: &Options) -> String {
    let err = for_each_seed_with(SEEDS, options, |options| {
        let mut out = vec![0u32; block as usize];
        let mut p = out.as_mut_ptr();
        launch(kernel, 1, block, &[arg(&mut p)], options)
    })
    .expect_err("the bug is reported");
    assert_eq!(err.kind(), kind, "{err}");
    let m = err.to_string();
    contains_all(
        &m,
        &[&format!("`{}`", kernel.name()), &format!("failed under {} of {} seeds", SEEDS.end, SEEDS.end)],
    );
    m
}

#[test]
fn barriers_in_two_arms_of_a_branch() {
    let m = flagged(&misuse::barrier_in_branch, 64, ErrorKind::BarrierMismatch, &Options::default());
    contains_all(&m, &["from another place", "barrier.sync 0", "misuse.rs:", "__syncthreads"]);
}

#[test]
fn a_barrier_in_a_loop_whose_trip_count_differs() {
    let m = flagged(&misuse::barrier_in_divergent_loop, 64, ErrorKind::BarrierMismatch, &Options::default());
    contains_all(&m, &["exited", "barrier.sync 0", "misuse.rs:"]);
}

#[test]
fn a_shuffle_width_that_is_not_a_power_of_two() {
    let m = flagged(&misuse::bad_shuffle_width, 32, ErrorKind::InvalidShuffleWidth, &Options::default());
    contains_all(&m, &["width 24", "power of two in 1..=32", "misuse.rs:", "warp::shfl_idx_sync"]);
}

#[test]
fn a_grid_barrier_in_a_launch_that_is_not_cooperative() {
    for grid in [1, 3] {
        let mut word = 0u32;
        let mut p: *mut u32 = &mut word;
        let err =
            launch(&misuse::grid_barrier_not_cooperative, grid, 32, &[arg(&mut p)], &Options::default())
                .expect_err("reported");
        assert_eq!(err.kind(), ErrorKind::NotCooperative, "{err}");
        contains_all(&err.to_string(), &["not cooperative", "launch_cooperative", "misuse.rs:"]);
    }
}

/// The emulator device for `options`, with the test kernels loaded.
fn emulator(options: &Options) -> (Device, Module) {
    let device = Device::emulator_with(options.clone());
    let module = device.load(&test_program("emu")).unwrap();
    (device, module)
}

/// The emulator's error inside a host error.
fn emulated(err: warpsafe_host::Error) -> Error {
    match err {
        warpsafe_host::Error::Emulator(err) => err,
        other => panic!("not an emulator error: {other}"),
    }
}

/// Launches a one-warp kernel over `data`, `n` and a one-element output; returns it.
fn run_partial(
    kernel: &'static TypedKernel<(Slice<f32>, u32, DisjointSlice<f32>), Unsafe>,
    data: &[f32],
    n: u32,
    options: &Options,
) -> Result<f32, Error> {
    let (device, module) = emulator(options);
    let function = module.kernel(kernel).unwrap();
    let input = device.upload(data).unwrap();
    let mut out = device.upload(&[f32::MAX]).unwrap();
    // SAFETY: every kernel run here takes `n <= 32` and one warp.
    unsafe { device.launch_unsafe(&function, LaunchConfig::linear(1, 32), (&input, n, &mut out)) }
        .map_err(emulated)?;
    Ok(out.download().unwrap()[0])
}

/// Launches a one-warp kernel with a `u32` output per thread.
fn run_warp(
    kernel: &'static TypedKernel<(DisjointSlice<u32>,), Unsafe>,
    options: &Options,
) -> Result<(), Error> {
    let (device, module) = emulator(options);
    let function = module.kernel(kernel).unwrap();
    let mut out = device.alloc_zeroed::<u32>(32).unwrap();
    // SAFETY: the kernels run here take one warp and one element per thread.
    unsafe { device.launch_unsafe(&function, LaunchConfig::linear(1, 32), (&mut out,)) }.map_err(emulated)
}

#[test]
fn a_partial_warp_without_identity_fill_is_reported_where_the_sum_is_stored() {
    let data: Vec<f32> = (0..32).map(|i| i as f32).collect();
    for n in [1, 20, 31] {
        let err = for_each_seed(SEEDS, |options| {
            run_partial(&misuse::partial_sum_without_identity, &data, n, options).map(|_| ())
        })
        .expect_err("reported");
        assert_eq!(err.kind(), ErrorKind::UninitializedValue, "{err}");
        contains_all(
            &err.to_string(),
            &[
                "stores",
                "undefined value",
                &format!("read element {n} of `SLOTS`"),
                "misuse.rs:",
                "identity",
                "failed under 8 of 8",
            ],
        );
    }
}

#[test]
fn a_partial_warp_with_identity_fill_is_clean() {
    let data: Vec<f32> = (0..32).map(|i| i as f32 * 0.5).collect();
    for n in [0, 1, 20, 31, 32] {
        for_each_seed(SEEDS, |options| {
            let sum = run_partial(&correct::partial_sum_with_identity, &data, n, options)?;
            let want: f32 = data[..n as usize].iter().sum();
            approx::assert_relative_eq!(sum, want);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn the_guides_partial_warp_reduction_drops_undefined_values_and_is_clean() {
    // The lanes near the end of the mask read lanes outside it, which PTX leaves
    // undefined, and drop what they read: nothing to report, and the sum is exact.
    let data: Vec<f32> = (0..32).map(|i| 1.0 + i as f32).collect();
    for n in [1, 2, 5, 17, 31, 32] {
        for_each_seed(SEEDS, |options| {
            let sum = run_partial(&correct::guide_partial_reduction, &data, n, options)?;
            approx::assert_relative_eq!(sum, data[..n as usize].iter().sum::<f32>());
            Ok(())
        })
        .unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn a_value_shuffled_from_outside_the_mask_is_reported_when_stored() {
    let run = |options: &Options| run_warp(&misuse::shuffle_outside_mask_stored, options);
    let err = for_each_seed(SEEDS, run).expect_err("reported");
    assert_eq!(err.kind(), ErrorKind::UninitializedValue, "{err}");
    contains_all(&err.to_string(), &["stores", "shfl.sync.idx", "not in the mask", "misuse.rs:"]);
    // Reported where it is produced, like compute-sanitizer's initcheck, when asked.
    let at_source = Options { undefined_at_source: true, ..Options::default() };
    let err = for_each_seed_with(SEEDS, &at_source, run).expect_err("reported");
    assert_eq!(err.kind(), ErrorKind::ShuffleFromInactiveLane, "{err}");
}

#[test]
fn the_activemask_pitfall_is_named() {
    // NVIDIA's "Using CUDA warp-level primitives" reduction over `activemask()` taken in
    // the branch: when the scheduler splits the branch's lanes, the shuffles read lanes
    // left out of the mask that reached the same `activemask`.
    let data = [1u32; 32];
    let mut split = 0;
    for seed in 0..32 {
        let mut out = vec![0u32];
        let (mut d, mut n, mut o) = (data.as_ptr(), 32u32, out.as_mut_ptr());
        let options = Options { seed, ..Options::default() };
        match launch(&misuse::activemask_reduction, 1, 32, &[arg(&mut d), arg(&mut n), arg(&mut o)], &options)
        {
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::ActiveMaskSplit, "seed {seed}: {err}");
                contains_all(&err.to_string(), &["`activemask`", "shfl.sync.down", "ballot", "misuse.rs:"]);
                split += 1;
            }
            Ok(()) => assert_eq!(out[0], 32, "seed {seed}: a run without a split must be right"),
        }
    }
    assert!(split >= 8, "only {split} of 32 seeds split the branch");
}

#[test]
fn warp_aggregated_atomics_split_by_activemask_are_not_reported() {
    for_each_seed(0..32, |options| {
        let mut counter = 0u32;
        let mut p: *mut u32 = &mut counter;
        launch(&correct::aggregated, 2, 64, &[arg(&mut p)], options)?;
        assert_eq!(counter, 64, "seed {}", options.seed);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_safe_warp_reduction_in_both_arms_of_a_branch_is_the_gpus_trap() {
    let err =
        for_each_seed(SEEDS, |options| run_warp(&misuse::group_in_both_arms, options)).expect_err("reported");
    assert_eq!(err.kind(), ErrorKind::Trap, "{err}");
    contains_all(
        &err.to_string(),
        &["on a group whose lanes are not all present", "group mask 0xffffffff", "misuse.rs:"],
    );
}

#[test]
fn a_long_kernel_of_warp_reductions_is_not_a_spin() {
    // 256 threads making 300 warp reductions each, and no write until the end: 76800
    // lane arrivals, far more than the step budget given here, which only counts steps
    // without progress (a completed collective is progress).
    let rounds = 300u32;
    let options = Options { livelock_steps: 10_000, ..Options::default() };
    for_each_seed_with(0..3, &options, |options| {
        let (device, module) = emulator(options);
        let function = module.kernel(&correct::many_reductions).unwrap();
        let mut out = device.alloc_zeroed::<u32>(256).unwrap();
        device.launch(&function, LaunchConfig::linear(2, 128), (rounds, &mut out)).map_err(emulated)?;
        let out = out.download().unwrap();
        let want = (0..rounds).fold(0u32, |t, r| t.wrapping_add(32 * r + 496));
        assert!(out.iter().all(|&v| v == want), "{:?}", &out[..4]);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

// ---- The memory model: races on shared and global memory ----

/// Runs `body` under every seed of `SEEDS` on a fresh emulator device with the test
/// kernels; returns the first failure (its message counts the failing seeds).
fn on_emulator(
    mut body: impl FnMut(&Device, &Module) -> Result<(), warpsafe_host::Error>,
) -> Result<(), Error> {
    for_each_seed(SEEDS, |options| {
        let (device, module) = emulator(options);
        body(&device, &module).map_err(emulated)
    })
}

/// The race report of a run that must fail under every seed.
fn race(result: Result<(), Error>, parts: &[&str]) {
    let err = result.expect_err("a race");
    assert_eq!(err.kind(), ErrorKind::DataRace, "{err}");
    contains_all(&err.to_string(), parts);
    contains_all(&err.to_string(), &["no happens-before order", "misuse.rs:", "failed under 8 of 8 seeds"]);
}

#[test]
fn the_volatile_last_warp_reduction_without_syncwarp_races() {
    race(
        on_emulator(|device, module| {
            let f = module.kernel(&misuse::volatile_last_warp)?;
            let mut out = device.alloc_zeroed::<u32>(1)?;
            // SAFETY: one block of 64, one output element.
            unsafe { device.launch_unsafe(&f, LaunchConfig::linear(1, 64), (&mut out,)) }
        }),
        &["`SUMS`", "volatile", "__syncwarp"],
    );
    on_emulator(|device, module| {
        let f = module.kernel(&correct::synced_last_warp)?;
        let mut out = device.alloc_zeroed::<u32>(1)?;
        // SAFETY: as above.
        unsafe { device.launch_unsafe(&f, LaunchConfig::linear(1, 64), (&mut out,)) }?;
        assert_eq!(out.download()?, [2016]);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn lanes_exchanging_through_global_memory_without_syncwarp_race() {
    race(
        on_emulator(|device, module| {
            let f = module.kernel(&misuse::global_exchange_unsynced)?;
            let (mut scratch, mut out) = (device.alloc_zeroed::<u32>(32)?, device.alloc_zeroed::<u32>(32)?);
            // SAFETY: one warp, 32 elements each.
            unsafe { device.launch_unsafe(&f, LaunchConfig::linear(1, 32), (&mut scratch, &mut out)) }
        }),
        &["global buffer", "element", "__syncwarp"],
    );
    on_emulator(|device, module| {
        let f = module.kernel(&correct::global_exchange_synced)?;
        let (mut scratch, mut out) = (device.alloc_zeroed::<u32>(32)?, device.alloc_zeroed::<u32>(32)?);
        // SAFETY: as above.
        unsafe { device.launch_unsafe(&f, LaunchConfig::linear(1, 32), (&mut scratch, &mut out)) }?;
        assert_eq!(out.download()?, (0..32u32).map(|l| l ^ 1).collect::<Vec<_>>());
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_plain_increment_from_many_blocks_races() {
    race(
        on_emulator(|device, module| {
            let f = module.kernel(&misuse::plain_increment_from_blocks)?;
            let mut total = device.alloc_zeroed::<u32>(1)?;
            // SAFETY: one element.
            unsafe { device.launch_unsafe(&f, LaunchConfig::linear(4, 32), (&mut total,)) }
        }),
        &["element 0 of the global buffer", "different blocks", "Release"],
    );
}

#[test]
fn a_last_block_reduction_needs_the_fence_before_its_ticket() {
    let blocks = 5u32;
    race(
        on_emulator(|device, module| {
            let f = module.kernel(&misuse::last_block_without_fence)?;
            let (mut partials, mut ticket) =
                (device.alloc_zeroed::<u32>(blocks as usize)?, device.alloc_zeroed::<u32>(1)?);
            let mut out = device.alloc_zeroed::<u32>(1)?;
            // SAFETY: one partial per block, one ticket, one output.
            unsafe {
                device.launch_unsafe(
                    &f,
                    LaunchConfig::linear(blocks, 32),
                    (&mut partials, &mut ticket, &mut out),
                )
            }
        }),
        &["fence::device()", "different blocks"],
    );
    for reader_fence in [0u32, 1] {
        on_emulator(|device, module| {
            let f = module.kernel(&correct::last_block_with_fence)?;
            let (mut partials, mut ticket) =
                (device.alloc_zeroed::<u32>(blocks as usize)?, device.alloc_zeroed::<u32>(1)?);
            let mut out = device.alloc_zeroed::<u32>(1)?;
            let config = LaunchConfig::linear(blocks, 32);
            // SAFETY: as above.
            unsafe {
                device.launch_unsafe(&f, config, (&mut partials, &mut ticket, reader_fence, &mut out))
            }?;
            assert_eq!(out.download()?, [15]);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("reader fence {reader_fence}: {e}"));
    }
}

#[test]
fn a_flag_needs_release_and_acquire() {
    race(
        on_emulator(|device, module| {
            let f = module.kernel(&misuse::flag_without_release)?;
            let (mut data, mut flag, mut out) = (
                device.alloc_zeroed::<u32>(1)?,
                device.alloc_zeroed::<u32>(1)?,
                device.alloc_zeroed::<u32>(1)?,
            );
            // SAFETY: one element each; both blocks resident (2 <= 8).
            unsafe { device.launch_unsafe(&f, LaunchConfig::linear(2, 32), (&mut data, &mut flag, &mut out)) }
        }),
        &["element 0 of the global buffer", "Acquire"],
    );
    on_emulator(|device, module| {
        let f = module.kernel(&correct::flag_with_release)?;
        let (mut data, mut flag, mut out) =
            (device.alloc_zeroed::<u32>(1)?, device.alloc_zeroed::<u32>(1)?, device.alloc_zeroed::<u32>(1)?);
        // SAFETY: as above.
        unsafe { device.launch_unsafe(&f, LaunchConfig::linear(2, 32), (&mut data, &mut flag, &mut out)) }?;
        assert_eq!(out.download()?, [42]);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_block_scope_atomic_shared_between_blocks_races() {
    race(
        on_emulator(|device, module| {
            let f = module.kernel(&misuse::block_atomic_across_blocks)?;
            let mut count = device.alloc_zeroed::<u32>(1)?;
            // SAFETY: one element.
            unsafe { device.launch_unsafe(&f, LaunchConfig::linear(2, 32), (&mut count,)) }
        }),
        &["block-scope atomic", "device-scope atomic"],
    );
    on_emulator(|device, module| {
        let f = module.kernel(&correct::device_atomic_across_blocks)?;
        let mut count = device.alloc_zeroed::<u32>(1)?;
        // SAFETY: one element.
        unsafe { device.launch_unsafe(&f, LaunchConfig::linear(2, 32), (&mut count,)) }?;
        assert_eq!(count.download()?, [64]);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_large_local_array_runs_and_an_overflow_is_an_error() {
    let want =
        (0..256u32).map(|t| (0..300 * 256u32).fold(0u32, |a, i| a.wrapping_add(i ^ t))).collect::<Vec<_>>();
    let run = |options: &Options| -> Result<Vec<u32>, Error> {
        let (device, module) = emulator(options);
        let f = module.kernel(&correct::large_local_array).unwrap();
        let mut out = device.alloc_zeroed::<u32>(256).unwrap();
        device.launch(&f, LaunchConfig::linear(2, 128), (&mut out,)).map_err(emulated)?;
        Ok(out.download().unwrap())
    };
    // Under the default stack size (1 MiB, lazily mapped) the 300 KiB array fits.
    assert_eq!(run(&Options::default()).unwrap_or_else(|e| panic!("{e}")), want);
    // A smaller stack overflows: the launch fails with a clear error, the process lives,
    // and the next launch runs.
    let small = Options { stack_bytes: 128 * 1024, ..Options::default() };
    let err = run(&small).expect_err("an overflow");
    assert_eq!(err.kind(), ErrorKind::StackOverflow, "{err}");
    contains_all(
        &err.to_string(),
        &["overflowed its stack of 131072 bytes", "Options::stack_bytes", "large_local_array"],
    );
    assert_eq!(run(&Options::default()).unwrap_or_else(|e| panic!("{e}")), want);
}

#[test]
fn carving_the_dynamic_window_is_checked() {
    let run = |bytes: u32, options: &Options| -> Result<(), Error> {
        let (device, module) = emulator(options);
        let f = module.kernel(&misuse::dynamic_carved_past_the_end).unwrap();
        let mut out = device.alloc_zeroed::<f32>(32).unwrap();
        let config = LaunchConfig { shared_mem_bytes: bytes, ..LaunchConfig::linear(1, 32) };
        // SAFETY: one warp, one output element per lane.
        unsafe { device.launch_unsafe(&f, config, (&mut out,)) }.map_err(emulated)
    };
    let err = for_each_seed(SEEDS, |options| run(128, options)).expect_err("out of the window");
    assert_eq!(err.kind(), ErrorKind::SharedOutOfBounds, "{err}");
    contains_all(&err.to_string(), &["index 192", "length 128", "misuse.rs:"]);
    // With 192 bytes both parts fit.
    for_each_seed(SEEDS, |options| run(192, options)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_shared_atomic_past_the_window_is_reported_before_it_writes() {
    let run = |bytes: u32, options: &Options| -> Result<(), Error> {
        let (device, module) = emulator(options);
        let f = module.kernel(&misuse::shared_atomic_past_the_window).unwrap();
        let mut out = device.upload(&[7u32; 32]).unwrap();
        let config = LaunchConfig { shared_mem_bytes: bytes, ..LaunchConfig::linear(1, 32) };
        // SAFETY: one warp, one output element per lane; the shared words are the bug.
        unsafe { device.launch_unsafe(&f, config, (&mut out,)) }.map_err(emulated)?;
        assert_eq!(out.download().unwrap(), vec![0; 32], "the kernel ran to its end");
        Ok(())
    };
    let err = for_each_seed(SEEDS, |options| run(128, options)).expect_err("past the window");
    assert_eq!(err.kind(), ErrorKind::SharedOutOfBounds, "{err}");
    contains_all(
        &err.to_string(),
        &[
            "accessed 4 bytes at shared address",
            "outside every shared allocation",
            "128 bytes of dynamic",
            "misuse.rs:",
        ],
    );
    // With 256 bytes every lane's word (32..64) is in the window.
    for_each_seed(SEEDS, |options| run(256, options)).unwrap_or_else(|e| panic!("{e}"));
}
