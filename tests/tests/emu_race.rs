//! The shared-memory race check: a warp-synchronous exchange without `syncwarp` is a data
//! race; with it, or with a release/acquire pair, it is not.

mod emu_support;

use emu_support::{arg, launch};
use emu_test_kernels::{correct, misuse};
use warpsafe::emu::{for_each_seed, ErrorKind, Options};

#[test]
fn butterfly_without_syncwarp_is_a_race() {
    for seed in 0..10 {
        let mut out = vec![0u32; 32];
        let mut p = out.as_mut_ptr();
        let options = Options { seed, ..Options::default() };
        let err = launch(&misuse::butterfly_unsynced, 1, 32, &[arg(&mut p)], &options).expect_err("a race");
        assert_eq!(err.kind(), ErrorKind::DataRace, "{err}");
        let m = err.to_string();
        for part in
            ["`EXCHANGE`", "misuse.rs:", "no happens-before order", "__syncwarp", "butterfly_unsynced"]
        {
            assert!(m.contains(part), "`{part}` missing from: {m}");
        }
    }
}

#[test]
fn a_write_after_a_barrier_races_with_a_neighbours_read() {
    for seed in 0..10 {
        let mut out = vec![0u32; 64];
        let mut p = out.as_mut_ptr();
        let options = Options { seed, ..Options::default() };
        let err = launch(&misuse::race_after_barrier, 1, 64, &[arg(&mut p)], &options).expect_err("a race");
        assert_eq!(err.kind(), ErrorKind::DataRace, "{err}");
        assert!(err.to_string().contains("`SLOTS`"), "{err}");
    }
}

#[test]
fn butterfly_without_syncwarp_unchecked_runs() {
    // With the race check off the kernel runs (its results depend on the interleaving).
    let mut out = vec![0u32; 32];
    let mut p = out.as_mut_ptr();
    let options = Options { check_races: false, ..Options::default() };
    launch(&misuse::butterfly_unsynced, 1, 32, &[arg(&mut p)], &options).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn butterfly_with_syncwarp_is_not() {
    for_each_seed(0..10, |options| {
        let mut out = vec![0u32; 64];
        let mut p = out.as_mut_ptr();
        launch(&correct::butterfly_synced, 2, 32, &[arg(&mut p)], options)?;
        assert_eq!(out, vec![528; 64]);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn release_acquire_through_shared_memory_is_not() {
    for_each_seed(0..10, |options| {
        let mut out = vec![0u32; 4];
        let mut p = out.as_mut_ptr();
        launch(&correct::shared_publish, 1, 32, &[arg(&mut p)], options)?;
        assert_eq!(out, [40, 41, 42, 43]);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}
