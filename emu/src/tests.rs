//! The emulator's own unit tests: shuffle semantics against CUDA's definition in terms of
//! the segment width, collective results, and the scheduler's determinism. Kernels here
//! are host entries that call [`crate::device`] directly.

use core::cell::RefCell;
use core::ffi::c_void;
use core::panic::Location;
use std::vec::Vec;

use warpsafe_types::{Scope, UntypedKernel};

use crate::device::{self, Op, Redux, Shfl, Vote};
use crate::warp::shuffle_source;
use crate::{launch, LaunchConfig, Options};

/// The source lane and predicate of a shuffle by `lane` with operand `b` over segments of
/// `width` lanes, written from CUDA's description of `__shfl_*_sync` (not from PTX's
/// pseudo-code, which `shuffle_source` follows).
fn cuda_source(mode: Shfl, lane: u32, b: u32, width: u32) -> (u32, bool) {
    let start = lane / width * width;
    let end = start + width - 1;
    let (source, ok) = match mode {
        Shfl::Idx => (start + b % width, true),
        Shfl::Up => (lane.wrapping_sub(b), lane >= start + b),
        Shfl::Down => (lane + b, lane + b <= end),
        // The hardware clamps upwards only: a lane mask of `width` or more may reach a
        // lower segment.
        Shfl::Bfly => (lane ^ b, lane ^ b <= end),
    };
    if ok {
        (source, true)
    } else {
        (lane, false)
    }
}

#[test]
fn shuffle_sources_follow_cudas_definition_for_every_mode_width_and_lane() {
    for mode in [Shfl::Idx, Shfl::Up, Shfl::Down, Shfl::Bfly] {
        let clamp = if mode == Shfl::Up { 0 } else { 31 };
        for width in [1u32, 2, 4, 8, 16, 32] {
            let c = ((32 - width) << 8) | clamp;
            for lane in 0..32 {
                for b in 0..32 {
                    assert_eq!(
                        shuffle_source(mode, lane, b, c),
                        cuda_source(mode, lane, b, width),
                        "{mode:?} width {width} lane {lane} b {b}"
                    );
                }
            }
        }
    }
}

std::thread_local! {
    /// What the test kernels record, in the order the scheduler ran them.
    static TRACE: RefCell<Vec<(u32, u64)>> = const { RefCell::new(Vec::new()) };
}

fn record(value: u64) {
    let thread = device::thread_idx().x;
    TRACE.with(|t| t.borrow_mut().push((thread, value)));
}

/// Runs `entry` on one block of `threads` under `seed`; returns what it recorded.
fn run(entry: unsafe fn(&[*mut c_void]), threads: u32, seed: u64) -> Vec<(u32, u64)> {
    let kernel = UntypedKernel::__new("unit", &[], entry);
    TRACE.with(|t| t.borrow_mut().clear());
    // SAFETY: the entries take no arguments and touch no memory.
    unsafe {
        launch(&kernel, &LaunchConfig::linear(1, threads), &[], &Options { seed, ..Options::default() })
    }
    .unwrap_or_else(|e| panic!("{e}"));
    TRACE.with(|t| t.borrow().clone())
}

/// Each thread makes four fences (switch points), recording its index after each.
///
/// # Safety
/// Takes no arguments.
unsafe fn fences(_: &[*mut c_void]) {
    for step in 0..4 {
        device::fence(core::sync::atomic::Ordering::SeqCst, Scope::Gpu, Location::caller());
        record(step);
    }
}

#[test]
fn the_same_seed_replays_the_same_interleaving_and_another_seed_another() {
    let first = run(fences, 64, 7);
    assert_eq!(first.len(), 256);
    assert_eq!(run(fences, 64, 7), first, "seed 7 twice");
    let others = (0..4).map(|seed| run(fences, 64, seed)).filter(|t| *t != first).count();
    assert!(others >= 3, "only {others} of 4 other seeds changed the interleaving");
}

/// Every lane votes (lane odd), reduces its lane index, and takes part in an election.
///
/// # Safety
/// Takes no arguments.
unsafe fn votes(_: &[*mut c_void]) {
    let lane = device::lane_id();
    let at = Location::caller();
    let (ballot, _) =
        device::collective(Op::Vote(Vote::Ballot), u32::MAX, 0, 0, u64::from(lane % 2 == 1), at);
    record(ballot);
    let (sum, _) = device::collective(Op::Redux(Redux::Add), u32::MAX, 0, 0, u64::from(lane), at);
    record(sum);
    let (_, elected) = device::collective(Op::Elect, u32::MAX, 0, 0, 0, at);
    record(u64::from(elected));
}

#[test]
fn votes_reductions_and_elections_give_every_lane_the_collective_result() {
    for seed in 0..4 {
        let trace = run(votes, 32, seed);
        let count = |value: u64| trace.iter().filter(|(_, v)| *v == value).count();
        assert_eq!(trace.len(), 96, "seed {seed}");
        assert_eq!(count(0xaaaa_aaaa), 32, "seed {seed}: every lane gets the ballot of the odd lanes");
        assert_eq!(count(496), 32, "seed {seed}: every lane gets the sum of 0..32");
        assert_eq!((count(1), count(0)), (1, 31), "seed {seed}: exactly one lane is elected");
    }
}
