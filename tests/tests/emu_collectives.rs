//! The emulator runs correct kernels and gets their answers right under every seed:
//! every warp collective, the group layer, block and named barriers, shared memory and
//! atomics.

mod emu_support;

use emu_support::{arg, launch, launch_with};
use emu_test_kernels::correct;
use warpsafe::emu::{for_each_seed, for_each_seed_with, ErrorKind, LaunchConfig, Options};

const SEEDS: core::ops::Range<u64> = 0..12;

#[test]
fn smoke() {
    for_each_seed(SEEDS, |options| {
        let mut out = vec![0u32; 64];
        let mut p = out.as_mut_ptr();
        launch(&correct::smoke, 2, 32, &[arg(&mut p)], options)?;
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, (i as u32 % 32) ^ 1, "thread {i}");
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

/// What thread `lane` of a full warp writes in `correct::collectives`.
fn expected_collectives(l: u32) -> [u32; correct::COLLECTIVE_RESULTS] {
    let s8 = l & !7;
    let (up, up_p) = if l % 8 >= 3 { (l - 3, 1) } else { (l, 0) };
    let (down, down_p) = if l % 16 + 5 <= 15 { (l + 5, 1) } else { (l, 0) };
    let ballot = (0..32).filter(|i| i % 3 == 0).fold(0u32, |b, i| b | 1 << i);
    [
        (31 - l) * 10,
        (s8 + 3) * 10,
        up,
        up_p,
        down,
        down_p,
        l ^ 6,
        1,
        ballot,
        1,
        0,
        1,
        0xf << (l / 4 * 4),
        u32::MAX,
        496,
        (-10i32) as u32,
        31,
        0x100,
        31,
        0,
        1,
        (1u32 << l) - 1,
        496,
        l % 8 + 1,
        l * l.saturating_sub(1) / 2,
        1,
        2 * (l ^ 1),
        7,
    ]
}

#[test]
fn every_collective() {
    for_each_seed(SEEDS, |options| {
        let n = 2 * 64;
        let mut out = vec![0u32; n * correct::COLLECTIVE_RESULTS];
        let mut p = out.as_mut_ptr();
        launch(&correct::collectives, 2, 64, &[arg(&mut p)], options)?;
        for t in 0..n {
            let got = &out[t * correct::COLLECTIVE_RESULTS..(t + 1) * correct::COLLECTIVE_RESULTS];
            assert_eq!(got, expected_collectives(t as u32 % 32), "thread {t}, seed {}", options.seed);
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn partial_last_warp() {
    for_each_seed(SEEDS, |options| {
        let mut out = vec![0u32; 2 * 48];
        let mut p = out.as_mut_ptr();
        launch(&correct::partial_warp, 2, 48, &[arg(&mut p)], options)?;
        for (t, v) in out.iter().enumerate() {
            assert_eq!(*v, if t % 48 < 32 { 32 } else { 16 }, "thread {t}");
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn warp_aggregated_atomics_in_a_branch() {
    for_each_seed(0..24, |options| {
        let mut counter = 0u32;
        let mut p: *mut u32 = &mut counter;
        launch(&correct::aggregated, 3, 64, &[arg(&mut p)], options)?;
        assert_eq!(counter, 3 * 32, "seed {}", options.seed);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn block_and_named_barriers() {
    for_each_seed(SEEDS, |options| {
        let n = 2 * 128;
        let mut out = vec![0u32; 4 * n];
        let mut p = out.as_mut_ptr();
        launch(&correct::block_barriers, 2, 128, &[arg(&mut p)], options)?;
        for t in 0..n {
            let tid = t as u32 % 128;
            assert_eq!(
                out[4 * t..4 * t + 4],
                [2 * (0..128).sum::<u32>(), 43, 3, (tid ^ 32) + 1],
                "thread {t}"
            );
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn barrier_after_early_exits_under_ptx_rule() {
    // PTX releases a whole-block barrier that only exited threads hold up; the emulator
    // follows it when asked to.
    let base = Options { exits_release_barriers: true, ..Options::default() };
    for_each_seed_with(SEEDS, &base, |options| {
        let mut out = vec![u32::MAX; 2 * 64];
        let (mut p, mut live) = (out.as_mut_ptr(), 40u32);
        launch(&correct::barrier_after_early_exit, 2, 64, &[arg(&mut p), arg(&mut live)], options)?;
        for (t, v) in out.iter().enumerate() {
            let tid = t as u32 % 64;
            assert_eq!(*v, if tid < 40 { 39 - tid } else { u32::MAX }, "thread {t}");
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn barrier_after_early_exits_breaks_cuda_rule() {
    // By default the emulator applies CUDA C++'s `__syncthreads` rule: under every seed
    // the early return is reported, naming the exited threads and the barrier.
    let err = for_each_seed(SEEDS, |options| {
        let mut out = vec![u32::MAX; 2 * 64];
        let (mut p, mut live) = (out.as_mut_ptr(), 40u32);
        launch(&correct::barrier_after_early_exit, 2, 64, &[arg(&mut p), arg(&mut live)], options)
    })
    .expect_err("reported");
    assert_eq!(err.kind(), ErrorKind::BarrierMismatch, "{err}");
    let m = err.to_string();
    for part in ["exited", "barrier.sync 0", "correct.rs:", "__syncthreads", "failed under 12 of 12 seeds"] {
        assert!(m.contains(part), "`{part}` missing from: {m}");
    }
}

#[test]
fn dynamic_shared_memory() {
    for_each_seed(SEEDS, |options| {
        let mut out = vec![0u32; 3 * 96];
        let mut p = out.as_mut_ptr();
        let config = LaunchConfig { grid: (3, 1, 1), block: (32, 3, 1), shared_mem_bytes: 96 * 4 };
        launch_with(&correct::dynamic_mirror, config, &[arg(&mut p)], options)?;
        for (t, v) in out.iter().enumerate() {
            assert_eq!(*v, 95 - t as u32 % 96, "thread {t}");
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn every_atomic() {
    for_each_seed(SEEDS, |options| {
        let threads = 4 * 64u32;
        let mut cells = vec![0u64; 13];
        cells[1] = i32::MAX as u32 as u64;
        cells[2] = i32::MIN as u32 as u64;
        cells[6] = u32::MAX as u64;
        cells[10] = 0;
        let mut p = cells.as_mut_ptr();
        launch(&correct::atomics, 4, 64, &[arg(&mut p)], options)?;
        let lo = |k: usize| cells[k] as u32;
        assert_eq!(lo(0), (0..threads).sum::<u32>());
        assert_eq!(lo(1) as i32, -50);
        assert_eq!(lo(2) as i32, threads as i32 - 51);
        assert_eq!(cells[3], threads as u64 * (1 << 33));
        assert_eq!(f32::from_bits(lo(4)), threads as f32 * 0.5);
        assert_eq!(f64::from_bits(cells[5]), threads as f64 * 0.25);
        assert_eq!(lo(6), 0);
        assert_eq!(lo(7), u32::MAX);
        assert_eq!(lo(8), (0..threads).fold(0, |a, b| a ^ b));
        assert_eq!(lo(9), threads);
        // dec from 0 wraps to the limit, then counts down.
        assert_eq!(lo(10), 1000 - (threads - 1));
        assert!(lo(11) < threads);
        assert_eq!(lo(12), 3 * threads);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}
