//! The scheduler: the same seed replays the same interleaving, other seeds try others;
//! blocks run concurrently (spin-waits across blocks, a cooperative grid barrier); a wait
//! that can never end is reported instead of hanging; launches the GPU refuses fail.

mod emu_support;

use emu_support::{arg, launch, launch_with};
use emu_test_kernels::correct;
use warpsafe::emu::{self, for_each_seed, ErrorKind, LaunchConfig, Options};
use warpsafe::kernel::UntypedKernel;

/// The order in which the threads of a 4 x 64 grid took tickets, under `seed`.
fn ticket_order(seed: u64) -> Vec<u32> {
    let mut order = vec![u32::MAX; 256];
    let mut counter = 0u32;
    let (mut o, mut c): (*mut u32, *mut u32) = (order.as_mut_ptr(), &mut counter);
    let options = Options { seed, ..Options::default() };
    launch(&correct::tickets, 4, 64, &[arg(&mut o), arg(&mut c)], &options).unwrap_or_else(|e| panic!("{e}"));
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..256).collect::<Vec<u32>>(), "every thread took one ticket");
    order
}

#[test]
fn same_seed_same_interleaving() {
    for seed in [0, 7, 123_456_789] {
        assert_eq!(ticket_order(seed), ticket_order(seed), "seed {seed}");
    }
}

#[test]
fn other_seeds_other_interleavings() {
    let orders: std::collections::BTreeSet<Vec<u32>> = (0..8).map(ticket_order).collect();
    assert!(orders.len() >= 7, "8 seeds gave only {} distinct interleavings", orders.len());
    // Blocks run concurrently: the first tickets do not all go to block 0.
    let first = ticket_order(1);
    assert!(first[..64].iter().any(|&t| t >= 64), "the first 64 tickets all went to block 0");
}

#[test]
fn consumer_block_spins_on_a_later_producer_block() {
    for_each_seed(0..12, |options| {
        let mut data = vec![0u32; 32];
        let mut out = vec![0u32; 32];
        let mut flag = 0u32;
        let (mut d, mut f, mut o): (*mut u32, *mut u32, *mut u32) =
            (data.as_mut_ptr(), &mut flag, out.as_mut_ptr());
        launch(&correct::message_passing, 4, 32, &[arg(&mut d), arg(&mut f), arg(&mut o)], options)?;
        assert_eq!(out, (0..32).map(|i| i * 7 + 1).collect::<Vec<u32>>(), "seed {}", options.seed);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn spinning_on_a_block_that_cannot_become_resident_is_reported() {
    // One resident block: block 0 spins for block 3, which waits for a free slot (on a GPU
    // that fits one block at a time this launch hangs).
    // The step budget is left at its default: the spin is found exactly, long before it.
    let options = Options { max_resident_blocks: 1, ..Options::default() };
    let mut data = vec![0u32; 32];
    let mut out = vec![0u32; 32];
    let mut flag = 0u32;
    let (mut d, mut f, mut o): (*mut u32, *mut u32, *mut u32) =
        (data.as_mut_ptr(), &mut flag, out.as_mut_ptr());
    let err = launch(&correct::message_passing, 4, 32, &[arg(&mut d), arg(&mut f), arg(&mut o)], &options)
        .expect_err("the spin never ends");
    assert_eq!(err.kind(), ErrorKind::NotCooperative, "{err}");
    let message = err.to_string();
    for part in [
        "every thread that can run spins",
        "block (0, 0, 0)",
        "3 of the grid's 4 blocks have not started",
        "launch_cooperative",
    ] {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }
    assert!(message.contains("message_passing") && message.contains("seed 0"), "{message}");
}

#[test]
fn cooperative_grid_barrier() {
    for_each_seed(0..12, |options| {
        let blocks = 6u32;
        let mut arrived = 0u32;
        let mut data = vec![0u32; blocks as usize];
        let mut out = vec![0u32; blocks as usize];
        let (mut a, mut d, mut o): (*mut u32, *mut u32, *mut u32) =
            (&mut arrived, data.as_mut_ptr(), out.as_mut_ptr());
        let config = LaunchConfig::linear(blocks, 64);
        launch_cooperative_with(
            &correct::grid_barrier,
            config,
            &[arg(&mut a), arg(&mut d), arg(&mut o)],
            options,
        )?;
        assert_eq!(out, vec![(1..=blocks).sum::<u32>(); blocks as usize]);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn launches_the_gpu_refuses() {
    let mut out = vec![0u32; 2048];
    let mut p = out.as_mut_ptr();
    let options = Options::default();
    let refused = |err: emu::Error| {
        assert_eq!(err.kind(), ErrorKind::InvalidLaunch, "{err}");
        err.to_string()
    };
    let invalid = |config: LaunchConfig, args: &[*mut core::ffi::c_void]| {
        refused(launch_with(&correct::smoke, config, args, &options).expect_err("refused"))
    };
    let a = arg(&mut p);
    assert!(invalid(LaunchConfig::linear(1, 2048), &[a]).contains("1024 threads"));
    assert!(invalid(LaunchConfig::linear(0, 32), &[a]).contains("grid"));
    assert!(invalid(LaunchConfig::linear(1, 32), &[]).contains("1 parameters but 0 arguments"));
    let too_many = LaunchConfig::linear(options.max_resident_blocks + 1, 32);
    let err = launch_cooperative_with(&correct::smoke, too_many, &[a], &options).expect_err("refused");
    assert!(refused(err).contains("cooperative"));
    let z = LaunchConfig { block: (1, 1, 65), ..LaunchConfig::linear(1, 1) };
    assert!(invalid(z, &[a]).contains("block (1, 1, 65)"));
}

/// Runs `kernel` with `config` as a cooperative launch (every block resident at once).
fn launch_cooperative_with(
    kernel: &UntypedKernel,
    config: LaunchConfig,
    args: &[*mut core::ffi::c_void],
    options: &Options,
) -> Result<(), emu::Error> {
    // SAFETY: the callers pass pointers to live values of the kernel's parameter types.
    unsafe { emu::launch_cooperative(kernel, &config, args, options) }
}
