//! Planted bugs (`emu_test_kernels::misuse`): each breaks a rule the GPU does not check,
//! and the emulator must flag it, under every seed, with a message that names the kernel,
//! the block, warp and lanes, the masks, the source location and the seed.

mod emu_support;

use emu_support::{arg, launch};
use emu_test_kernels::misuse;
use warpsafe::emu::{for_each_seed, Error, ErrorKind, Options};
use warpsafe::kernel::UntypedKernel as Kernel;

const SEEDS: core::ops::Range<u64> = 0..10;

/// Runs `kernel` on one block of `block` threads with an output buffer under every seed
/// of `SEEDS`; each run must fail with `kind`. Returns the message of the last run.
fn flagged(kernel: &Kernel, block: u32, kind: ErrorKind) -> String {
    flagged_with(kernel, block, kind, false)
}

/// [`flagged`], with undefined values reported where they are produced when
/// `undefined_at_source`.
fn flagged_with(kernel: &Kernel, block: u32, kind: ErrorKind, undefined_at_source: bool) -> String {
    let mut message = String::new();
    for seed in SEEDS {
        let mut out = vec![0u32; block as usize];
        let mut p = out.as_mut_ptr();
        let options = Options { seed, undefined_at_source, ..Options::default() };
        let err = launch(kernel, 1, block, &[arg(&mut p)], &options).expect_err("the bug is flagged");
        assert_eq!(err.kind(), kind, "seed {seed}: {err}");
        assert_eq!(err.seed(), seed);
        message = err.to_string();
        assert!(message.contains(&format!("`{}`", kernel.name())), "{message}");
        assert!(message.contains(&format!("seed {seed}")), "{message}");
        assert!(message.contains("block (0, 0, 0)"), "{message}");
    }
    message
}

fn contains_all(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }
}

#[test]
fn mask_without_its_caller() {
    let m = flagged(&misuse::mask_excludes_caller, 32, ErrorKind::MaskExcludesCaller);
    contains_all(
        &m,
        &["warp 0, lane 0", "vote.sync.ballot", "0xfffffffe", "misuse.rs:", "warp::ballot_sync"],
    );
}

#[test]
fn lanes_at_different_collectives() {
    let m = flagged(&misuse::different_collectives, 32, ErrorKind::MismatchedCollective);
    contains_all(&m, &["shfl.sync.idx", "vote.sync.ballot", "0xffffffff", "misuse.rs:"]);
}

#[test]
fn lanes_with_different_masks() {
    let m = flagged(&misuse::different_masks, 32, ErrorKind::MismatchedCollective);
    contains_all(&m, &["0x0001ffff", "0xffffffff", "misuse.rs:"]);
}

#[test]
fn collective_waiting_for_an_exited_lane() {
    let m = flagged(&misuse::exited_lane, 32, ErrorKind::Deadlock);
    contains_all(&m, &["shfl.sync.down", "exited", "0xffffffff", "misuse.rs:"]);
}

#[test]
fn collective_waiting_for_a_lane_at_a_barrier() {
    let m = flagged(&misuse::lane_waits_at_barrier, 32, ErrorKind::Deadlock);
    contains_all(&m, &["no thread can run", "shfl.sync.idx", "barrier.sync 0", "misuse.rs:"]);
}

#[test]
fn barrier_reached_with_different_forms() {
    let m = flagged(&misuse::barrier_forms, 64, ErrorKind::BarrierMismatch);
    contains_all(&m, &["barrier.sync 0", "barrier.red.popc 0", "misuse.rs:"]);
}

#[test]
fn barrier_while_other_threads_wait_at_a_named_one() {
    let m = flagged(&misuse::barrier_named_elsewhere, 64, ErrorKind::BarrierMismatch);
    contains_all(&m, &["32 of the 64 threads", "barrier.sync 1 with thread count 64", "warp 1"]);
}

#[test]
fn barrier_skipped_by_a_spinning_warp() {
    for seed in SEEDS {
        let mut flag = 0u32;
        let mut p: *mut u32 = &mut flag;
        let options = Options { seed, livelock_steps: 5_000, ..Options::default() };
        let err = launch(&misuse::barrier_skipped, 1, 64, &[arg(&mut p)], &options).expect_err("flagged");
        assert_eq!(err.kind(), ErrorKind::BarrierMismatch, "{err}");
        contains_all(
            &err.to_string(),
            &["every thread that can run spins", "barrier.sync 0", "warp 1", "misuse.rs:"],
        );
    }
}

#[test]
fn shared_index_out_of_bounds() {
    let m = flagged(&misuse::shared_out_of_bounds, 32, ErrorKind::SharedOutOfBounds);
    contains_all(&m, &["lane 31", "index 32", "length 32", "misuse.rs:"]);
}

#[test]
fn shuffle_from_a_lane_outside_the_mask() {
    // Reported where the undefined value is produced when asked (its use goes through a
    // raw pointer, which the emulator cannot see; emu_checks.rs has the stored form).
    let m = flagged_with(&misuse::shuffle_outside_mask, 32, ErrorKind::ShuffleFromInactiveLane, true);
    contains_all(&m, &["0x0000ffff", "read lane 1", "misuse.rs:"]);
}

#[test]
fn safe_group_in_a_branch() {
    // The GPU's presence check traps here; the emulator reports the same error.
    let m = flagged(&misuse::group_in_branch, 32, ErrorKind::Trap);
    contains_all(&m, &["reduce on a group whose lanes are not all present", "exited", "misuse.rs:"]);
}

#[test]
fn panics_and_traps() {
    let m = flagged(&misuse::panics, 32, ErrorKind::Trap);
    contains_all(&m, &["lane 31", "lane 31 gave up", "misuse.rs:"]);
    let m = flagged(&misuse::traps, 32, ErrorKind::Trap);
    contains_all(&m, &["lane 3", "trap", "misuse.rs:"]);
}

/// Runs a kernel taking `(data, n, out)` on one warp under `options`.
fn run_data_kernel(kernel: &Kernel, data: &[u32], n: u32, options: &Options) -> Result<Vec<u32>, Error> {
    let mut data = data.to_vec();
    let mut out = vec![0u32; 32];
    let (mut d, mut n, mut o) = (data.as_mut_ptr(), n, out.as_mut_ptr());
    launch(kernel, 1, 32, &[arg(&mut d), arg(&mut n), arg(&mut o)], options).map(|()| out)
}

#[test]
fn cuda_guide_ballot_in_a_divergent_loop() {
    // 40 elements, one warp: lanes 0-7 run a second iteration whose full-mask ballot
    // waits for lanes 8-31, which left the loop and exited.
    let data: Vec<u32> = (0..40).collect();
    for seed in SEEDS {
        let options = Options { seed, ..Options::default() };
        let err = run_data_kernel(&misuse::ballot_divergent_loop, &data, 40, &options).expect_err("flagged");
        assert_eq!(err.kind(), ErrorKind::Deadlock, "{err}");
        contains_all(&err.to_string(), &["vote.sync.ballot", "0xffffffff", "exited", "misuse.rs:"]);
    }
    // With 64 elements every lane runs both iterations: no error.
    let data: Vec<u32> = (0..64).collect();
    for_each_seed(SEEDS, |options| {
        run_data_kernel(&misuse::ballot_divergent_loop, &data, 64, options).map(drop)
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn activemask_as_the_mask_of_a_reduction() {
    // Independent scheduling lets `activemask` name fewer lanes than took the branch; the
    // shuffles then read lanes outside it. Some seeds must expose it (most do).
    let data = vec![1u32; 32];
    let mut flagged = 0;
    for seed in 0..32 {
        let options = Options { seed, ..Options::default() };
        match run_data_kernel(&misuse::activemask_reduction, &data, 32, &options) {
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::ActiveMaskSplit, "{err}");
                contains_all(&err.to_string(), &["shfl.sync.down", "`activemask`", "misuse.rs:"]);
                flagged += 1;
            }
            Ok(out) => assert_eq!(out[0], 32, "seed {seed}: a clean run must be right"),
        }
    }
    assert!(flagged >= 16, "only {flagged} of 32 seeds flagged the activemask reduction");
}
