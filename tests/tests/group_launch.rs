//! `warpsafe::group` on the emulator and the GPU: every collective on every kind of group
//! against a CPU model, in 1-D and 2-D blocks whose size is not a multiple of 32, on the
//! sm_70 and sm_90 PTX; ballot and match results as ranks (a ballot's `trailing_zeros()`
//! feeds a shuffle); and the run-time misuse check, which must trap with a message on
//! the GPU and end the launch with a typed error naming the collective on the emulator.

use group_test_kernels::{self as k, float_of, mat_of, Mat2, MatMul, SLOTS};
use rand::{Rng, SeedableRng};
use warpsafe::emu::{self, ErrorKind};
use warpsafe::kernel::UntypedKernel as Kernel;
use warpsafe::op::Operator;
use warpsafe_host::{kernel_args, Device, Error, LaunchConfig, Module};
use warpsafe_tests::{gpu_or_skip, modules, on_gpu, test_devices, test_program};

const POISON: u32 = 0xdead_beef;
/// The `kind` of coalesced groups in `group_collectives`.
const COALESCED: u32 = 7;
const KINDS: [(u32, &str); 10] = [
    (0, "warp"),
    (1, "tile<1>"),
    (2, "tile<2>"),
    (3, "tile<4>"),
    (4, "tile<8>"),
    (5, "tile<16>"),
    (6, "tile<32>"),
    (7, "coalesced"),
    (8, "labeled partition"),
    (9, "binary partition"),
];

/// The mask of the group that `lane` belongs to for `kind`, given the lanes that exist in
/// its warp and the warp's inputs; `None` when the lane is in no group.
fn group_mask(
    kind: u32,
    lane: usize,
    existing: u32,
    members: u32,
    x: &[u32; 32],
    labels: &[u32; 32],
) -> Option<u32> {
    let tile = |n: u32| {
        let segment = if n == 32 { u32::MAX } else { ((1u32 << n) - 1) << (lane as u32 & !(n - 1)) };
        segment & existing
    };
    let lanes_where = |f: &dyn Fn(usize) -> bool| {
        (0..32).filter(|&l| existing >> l & 1 == 1 && f(l)).fold(0, |m, l| m | 1 << l)
    };
    match kind {
        0 => Some(existing),
        1..=6 => Some(tile(1 << (kind - 1))),
        7 => (members >> lane & 1 == 1).then_some(existing & members),
        8 => Some(lanes_where(&|l| labels[l] == labels[lane])),
        9 => Some(lanes_where(&|l| x[l] & 1 == x[lane] & 1)),
        _ => unreachable!(),
    }
}

/// The CPU model of `fill` for one lane of a group with `mask`.
fn model(mask: u32, lane: usize, x: &[u32; 32], labels: &[u32; 32]) -> [u32; SLOTS] {
    let lanes: Vec<usize> = (0..32).filter(|&l| mask >> l & 1 == 1).collect();
    let size = lanes.len();
    let rank = lanes.iter().position(|&l| l == lane).expect("the lane is in its group");
    let v = |r: usize| x[lanes[r]];
    let own = x[lane];
    let at = |r: Option<usize>| r.filter(|&r| r < size).map_or(own, v);
    let sum = |range: std::ops::Range<usize>| range.map(v).fold(0u32, u32::wrapping_add);
    let pred = |l: usize| x[l] & 1 == 1;
    // Ballot and match results are rank-based: bit r for the lane of rank r.
    let ranks_where = |f: &dyn Fn(usize) -> bool| {
        lanes.iter().enumerate().filter(|&(_, &l)| f(l)).fold(0u32, |m, (r, _)| m | 1 << r)
    };
    let ballot = ranks_where(&pred);
    let matches = ranks_where(&|l| labels[l] == labels[lane]);
    let float_sum: f32 = lanes.iter().map(|&l| float_of(x[l])).sum();
    let product = |range: std::ops::Range<usize>| {
        range.map(|r| mat_of(v(r))).fold(MatMul.identity(), |a, b| MatMul.combine(a, b))
    };
    let Mat2(total) = product(0..size);
    let Mat2(prefix) = product(0..rank + 1);
    [
        mask,
        size as u32,
        rank as u32,
        sum(0..size),
        (0..size).map(v).max().unwrap(),
        sum(0..rank + 1),
        sum(0..rank),
        v(0),
        v(size - 1),
        at(rank.checked_sub(1)),
        at(Some(rank + 1)),
        at(Some(rank ^ 1)),
        ballot,
        (ballot != 0) as u32,
        (ballot.count_ones() as usize == size) as u32,
        matches,
        float_sum.to_bits(),
        total[0],
        total[1],
        total[2],
        total[3],
        prefix[0],
        prefix[1],
        prefix[2],
        prefix[3],
    ]
}

/// Launches `group_collectives` for `kind` and checks every slot of every thread.
fn check_kind(
    device: &Device,
    (arch, module): (&str, &Module),
    kind: (u32, &str),
    block: (u32, u32, u32),
    grid: (u32, u32, u32),
    rng: &mut impl Rng,
) {
    let kernel = module.kernel(&k::group_collectives).unwrap();
    let block_threads = (block.0 * block.1 * block.2) as usize;
    let threads = block_threads * (grid.0 * grid.1 * grid.2) as usize;
    let members: u32 = match rng.gen_range(0..4) {
        0 => 0x5555_5555,
        1 => 0x0000_ffff,
        2 => 1 << rng.gen_range(0..32),
        _ => rng.gen::<u32>() | 1,
    };
    let input: Vec<u32> = (0..threads).map(|_| rng.gen_range(0..4096)).collect();
    let labels: Vec<u32> = (0..threads).map(|_| rng.gen_range(0..3)).collect();
    let d_input = device.upload(&input).unwrap();
    let d_labels = device.upload(&labels).unwrap();
    let d_out = device.upload(&vec![POISON; SLOTS * threads]).unwrap();
    let (mut kind_id, mut members_arg) = (kind.0, members);
    let (mut p_input, mut p_labels, mut p_out) =
        (d_input.device_address(), d_labels.device_address(), d_out.device_address());
    let args = kernel_args![kind_id, members_arg, p_input, p_labels, p_out];
    // SAFETY: parameters (u32, u32, *const u32, *const u32, *mut u32) with one input and
    // SLOTS outputs per thread of the grid.
    unsafe { device.launch_raw(&kernel, LaunchConfig { grid, block, shared_mem_bytes: 0 }, &args) }
        .unwrap_or_else(|e| panic!("{arch} {} block {block:?}: {e}", kind.1));
    let out = d_out.download().unwrap();

    for block_start in (0..threads).step_by(block_threads) {
        for warp_start in (block_start..block_start + block_threads).step_by(32) {
            let existing_lanes = (block_start + block_threads - warp_start).min(32);
            let existing = if existing_lanes == 32 { u32::MAX } else { (1u32 << existing_lanes) - 1 };
            let mut x = [0u32; 32];
            let mut lab = [u32::MAX; 32];
            x[..existing_lanes].copy_from_slice(&input[warp_start..warp_start + existing_lanes]);
            lab[..existing_lanes].copy_from_slice(&labels[warp_start..warp_start + existing_lanes]);
            for lane in 0..existing_lanes {
                let t = warp_start + lane;
                let got = &out[SLOTS * t..SLOTS * (t + 1)];
                let mut mask = group_mask(kind.0, lane, existing, members, &x, &lab);
                if kind.0 == COALESCED && !on_gpu(device) {
                    // The emulator's `activemask` names the lanes of the branch that are at
                    // that `activemask` when the scheduler resolves it: any subset holding
                    // the caller, as independent thread scheduling allows (the GPU's
                    // compiler reconverges the branch, so there it is the whole branch).
                    // Check that the group the lane saw is such a subset, that every lane
                    // in it saw the same group, and then every collective over it.
                    mask = mask.map(|branch| {
                        let seen = got[0];
                        let what = format!("{arch}, block {block:?}, thread {t} (lane {lane})");
                        assert!(
                            seen >> lane & 1 == 1 && seen & !branch == 0,
                            "{what}: {seen:#x} in {branch:#x}"
                        );
                        for other in (0..existing_lanes).filter(|&l| seen >> l & 1 == 1) {
                            let theirs = out[SLOTS * (warp_start + other)];
                            assert_eq!(theirs, seen, "{what}: lane {other} saw another group");
                        }
                        seen
                    });
                }
                let expected = match mask {
                    Some(mask) => model(mask, lane, &x, &lab),
                    None => [POISON; SLOTS],
                };
                assert_eq!(
                    got,
                    expected,
                    "{arch}, {}, block {block:?}, grid {grid:?}, members {members:#010x}, thread {t} (lane {lane})",
                    kind.1
                );
            }
        }
    }
}

#[test]
fn every_collective_on_every_group_kind_matches_the_cpu_model() {
    let test = "every_collective_on_every_group_kind_matches_the_cpu_model";
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e0_0001);
    // 1-D and 2-D blocks, multiples of 32 and not (the last warp is partial).
    let shapes = [
        ((64, 1, 1), (2, 1, 1)),
        ((33, 1, 1), (3, 1, 1)),
        ((7, 5, 1), (2, 2, 1)),
        ((1, 1, 1), (1, 1, 1)),
        ((96, 2, 1), (1, 1, 1)),
    ];
    for device in test_devices(test) {
        for (arch, module) in modules(&device, "group", &[70, 90], test) {
            for kind in KINDS {
                for (block, grid) in shapes {
                    check_kind(&device, (&arch, &module), kind, block, grid, &mut rng);
                }
            }
        }
    }
}

/// Launches `group_first_where` for `kind` on `device` and checks each thread against the
/// CPU model: ballot and match results count ranks, so their `trailing_zeros()` is the
/// rank of the lowest lane they name, and a shuffle from it returns that lane's value.
fn check_first_where(
    device: &Device,
    (arch, module): (&str, &Module),
    kind: (u32, &str),
    rng: &mut impl Rng,
) {
    let kernel = module.kernel(&k::group_first_where).unwrap();
    for (block, grid) in [((64, 1, 1), (2, 1, 1)), ((48, 1, 1), (2, 1, 1)), ((7, 5, 1), (1, 2, 1))] {
        let block_threads = (block.0 * block.1 * block.2) as usize;
        let threads = block_threads * (grid.0 * grid.1 * grid.2) as usize;
        let members: u32 = rng.gen::<u32>() | 1 << rng.gen_range(0..32);
        let input: Vec<u32> = (0..threads).map(|_| rng.gen_range(0..4096)).collect();
        let labels: Vec<u32> = (0..threads).map(|_| rng.gen_range(0..3)).collect();
        let d_input = device.upload(&input).unwrap();
        let d_labels = device.upload(&labels).unwrap();
        let d_out = device.upload(&vec![POISON; 3 * threads]).unwrap();
        let (mut kind_id, mut members_arg) = (kind.0, members);
        let (mut p_input, mut p_labels, mut p_out) =
            (d_input.device_address(), d_labels.device_address(), d_out.device_address());
        let args = kernel_args![kind_id, members_arg, p_input, p_labels, p_out];
        // SAFETY: parameters (u32, u32, *const u32, *const u32, *mut u32) with one input and
        // 3 outputs per thread of the grid.
        unsafe { device.launch_raw(&kernel, LaunchConfig { grid, block, shared_mem_bytes: 0 }, &args) }
            .unwrap_or_else(|e| panic!("{arch} {} block {block:?}: {e}", kind.1));
        let out = d_out.download().unwrap();
        for block_start in (0..threads).step_by(block_threads) {
            for warp_start in (block_start..block_start + block_threads).step_by(32) {
                let existing_lanes = (block_start + block_threads - warp_start).min(32);
                let existing = if existing_lanes == 32 { u32::MAX } else { (1u32 << existing_lanes) - 1 };
                let mut x = [0u32; 32];
                let mut lab = [u32::MAX; 32];
                x[..existing_lanes].copy_from_slice(&input[warp_start..warp_start + existing_lanes]);
                lab[..existing_lanes].copy_from_slice(&labels[warp_start..warp_start + existing_lanes]);
                for lane in 0..existing_lanes {
                    let t = warp_start + lane;
                    let got = &out[3 * t..3 * t + 3];
                    let what = format!("{arch}, {}, block {block:?}, thread {t} (lane {lane})", kind.1);
                    let Some(mut mask) = group_mask(kind.0, lane, existing, members, &x, &lab) else {
                        assert_eq!(got, [POISON; 3], "{what}: not in the group");
                        continue;
                    };
                    if kind.0 == COALESCED && !on_gpu(device) {
                        // The emulator's coalesced group is any subset of the branch holding
                        // the caller (see `check_kind`).
                        assert!(
                            got[0] >> lane & 1 == 1 && got[0] & !mask == 0,
                            "{what}: {:#x} in {mask:#x}",
                            got[0]
                        );
                        mask = got[0];
                    }
                    let lanes: Vec<usize> = (0..32).filter(|&l| mask >> l & 1 == 1).collect();
                    let first_odd = lanes.iter().find(|&&l| x[l] & 2 != 0).map_or(x[lane], |&l| x[l]);
                    let first_label = lanes.iter().find(|&&l| lab[l] == lab[lane]).map(|&l| x[l]).unwrap();
                    assert_eq!(got, [mask, first_odd, first_label], "{what}, members {members:#x}");
                }
            }
        }
    }
}

/// `g.shfl(x, g.ballot(p).trailing_zeros())` is the value of the lowest-ranked lane where
/// `p` holds, and the same for `match_any`, on tiles smaller than a warp and on partitions
/// (whose lanes are not their ranks) as on whole warps: on the emulator under several
/// scheduler seeds, and on the GPU.
#[test]
fn ballot_and_match_results_are_ranks_on_tiles_and_partitions() {
    let test = "ballot_and_match_results_are_ranks_on_tiles_and_partitions";
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e0_0004);
    emu::for_each_seed(0..3, |options| {
        let device = Device::emulator_with(options.clone());
        for (arch, module) in modules(&device, "group", &[70], test) {
            for kind in KINDS {
                check_first_where(&device, (&arch, &module), kind, &mut rng);
            }
        }
        Ok(())
    })
    .unwrap();
    for device in test_devices(test).into_iter().filter(on_gpu) {
        for (arch, module) in modules(&device, "group", &[70, 90], test) {
            for kind in KINDS {
                check_first_where(&device, (&arch, &module), kind, &mut rng);
            }
        }
    }
}

#[test]
fn reduce_where_gives_inactive_lanes_the_identity() {
    let test = "reduce_where_gives_inactive_lanes_the_identity";
    for device in test_devices(test) {
        for (arch, module) in modules(&device, "group", &[70], test) {
            // The checked group, and the same group through `assume_present`.
            for kernel in [&k::group_reduce_where, &k::group_reduce_where_unchecked] {
                let arch = format!("{arch} {}", kernel.name());
                let kernel = module.kernel(kernel).unwrap();
                let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e0_0002);
                for members in [0u32, 1, 0x8000_0001, 0xaaaa_aaaa, u32::MAX, rng.gen()] {
                    let input: Vec<u32> = (0..96).map(|_| rng.gen()).collect();
                    let d_input = device.upload(&input).unwrap();
                    let d_out = device.upload(&[POISON; 96]).unwrap();
                    let (mut m, mut p_in, mut p_out) =
                        (members, d_input.device_address(), d_out.device_address());
                    let args = kernel_args![m, p_in, p_out];
                    // SAFETY: (u32, *const u32, *mut u32), one element per thread.
                    unsafe { device.launch_raw(&kernel, LaunchConfig::linear(1, 96), &args) }.unwrap();
                    let out = d_out.download().unwrap();
                    for (w, chunk) in input.chunks(32).enumerate() {
                        let expected = (0..32)
                            .filter(|l| members >> l & 1 == 1)
                            .map(|l| chunk[l])
                            .fold(0u32, u32::wrapping_add);
                        assert!(
                            out[32 * w..32 * w + 32].iter().all(|&s| s == expected),
                            "{arch} members {members:#x}, warp {w}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn ballot_loop_with_a_uniform_condition_sees_every_element() {
    let test = "ballot_loop_with_a_uniform_condition_sees_every_element";
    for device in test_devices(test) {
        for (arch, module) in modules(&device, "group", &[70], test) {
            let kernel = module.kernel(&k::group_ballot_loop).unwrap();
            let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e0_0003);
            for len in [0u32, 1, 31, 33, 100] {
                let warps = 3;
                let input: Vec<u32> = (0..(len as usize * warps).max(1)).map(|_| rng.gen()).collect();
                let d_input = device.upload(&input).unwrap();
                let d_out = device.upload(&vec![POISON; 2 * 32 * warps]).unwrap();
                let (mut p_in, mut n, mut p_out) = (d_input.device_address(), len, d_out.device_address());
                let args = kernel_args![p_in, n, p_out];
                // SAFETY: (*const u32, u32, *mut u32): len elements per warp, two outputs per thread.
                unsafe { device.launch_raw(&kernel, LaunchConfig::linear(1, 32 * warps as u32), &args) }
                    .unwrap();
                let out = d_out.download().unwrap();
                for w in 0..warps {
                    let row = &input[w * len as usize..][..len as usize];
                    let expected = row
                        .iter()
                        .enumerate()
                        .filter(|(_, &v)| v & 1 == 1)
                        .fold(0u32, |m, (i, _)| m | 1 << (i % 32));
                    for lane in 0..32 {
                        let t = 32 * w + lane;
                        assert_eq!(out[t], expected, "{arch} len {len}, warp {w}, lane {lane}");
                        assert_eq!(out[t + 32 * warps], len.div_ceil(32), "{arch} iterations, len {len}");
                    }
                }
            }
        }
    }
}

/// The kernels that misuse groups on purpose.
fn misuse_kernels() -> [&'static Kernel; 3] {
    [&k::group_misuse_early_exit, &k::group_misuse_divergent_ballot, &k::group_misuse_split_collectives]
}

/// Set in the child process that runs one misusing kernel (a trap ends the CUDA context
/// for the whole process, so each runs alone).
const CHILD_KERNEL: &str = "WARPSAFE_MISUSE_KERNEL";

#[test]
#[ignore = "entry point of the child process that the misuse tests start"]
fn misuse_child_process() {
    let kernel_name = std::env::var(CHILD_KERNEL).expect("started by a misuse test");
    let kernel = misuse_kernels().into_iter().find(|k| k.name() == kernel_name).expect("a misuse kernel");
    let device = Device::gpu().expect("the parent found a GPU");
    let module = device.load(&test_program("group")).unwrap();
    let function = module.untyped_kernel(kernel).unwrap();
    let d_out = device.alloc_zeroed::<u32>(64).unwrap();
    let mut p_out = d_out.device_address();
    let args = kernel_args![p_out];
    // SAFETY: one *mut u32 parameter with one element per thread (64).
    let result = unsafe { device.launch_raw(&function, LaunchConfig::linear(1, 64), &args) };
    match result {
        Err(err @ Error::KernelFailed { .. }) => println!("child: {err}"),
        other => println!("child: expected KernelFailed, got {other:?}"),
    }
}

/// Runs `kernel` in a child process and returns its stdout (where the device's printf
/// output lands).
fn run_misuse(kernel: &str) -> String {
    warpsafe_tests::child_test_stdout("misuse_child_process", &[(CHILD_KERNEL, kernel)])
}

#[test]
fn misused_groups_trap_on_the_gpu_with_a_message_naming_the_collective_and_masks() {
    let test = "misused_groups_trap_on_the_gpu_with_a_message_naming_the_collective_and_masks";
    let Some(_gpu) = gpu_or_skip(test) else { return };
    let cases = [
        // lanes 16..32 returned: lanes 0..16 reduce with 16 lanes missing.
        (
            &k::group_misuse_early_exit,
            "reduce on a group whose lanes are not all present",
            "lanes present 0x0000ffff",
        ),
        // second trip of the loop: only lanes 0..8 are left.
        (
            &k::group_misuse_divergent_ballot,
            "ballot on a group whose lanes are not all present",
            "lanes present 0x000000ff",
        ),
        (
            &k::group_misuse_split_collectives,
            "on a group whose lanes are not all present",
            "group mask 0xffffffff",
        ),
    ];
    for (kernel, message, masks) in cases {
        let kernel = kernel.name();
        let stdout = run_misuse(kernel);
        assert!(
            stdout.contains(&format!("child: {kernel} failed while running")),
            "{kernel}: no KernelFailed:\n{stdout}"
        );
        assert!(stdout.contains(message), "{kernel}: message missing:\n{stdout}");
        assert!(stdout.contains(masks), "{kernel}: masks missing:\n{stdout}");
        assert!(stdout.contains("lib.rs"), "{kernel}: no source location:\n{stdout}");
    }
}

/// On the emulator the same misuse ends the launch with a typed error (no trap, no child
/// process): the emulator sees exactly which lanes never arrive at which collective, under
/// every scheduler seed.
#[test]
fn misused_groups_end_an_emulated_launch_with_an_error_naming_the_collective_and_lanes() {
    // The GPU's presence check traps on each of these (the test above); the emulator
    // reports the same error (ErrorKind::Trap, the GPU's words) and where the missing
    // lanes are.
    let cases = [
        // lanes 16..32 returned: the reduction's first shuffle waits for them forever.
        (
            &k::group_misuse_early_exit,
            ErrorKind::Trap,
            ["reduce on a group whose lanes are not all present", "exited"],
        ),
        // second trip of the loop: lanes 8..32 have left the loop (and the kernel).
        (
            &k::group_misuse_divergent_ballot,
            ErrorKind::Trap,
            ["ballot on a group whose lanes are not all present", "exited"],
        ),
        // even lanes wait at the ballot, odd ones at `any`.
        (
            &k::group_misuse_split_collectives,
            ErrorKind::Trap,
            ["on a group whose lanes are not all present", "Group::"],
        ),
    ];
    for (kernel, kind, phrases) in cases {
        let result = emu::for_each_seed(0..4, |options| {
            let device = Device::emulator_with(options.clone());
            let module = device.load(&test_program("group")).unwrap();
            let function = module.kernel(kernel).unwrap();
            let d_out = device.alloc_zeroed::<u32>(64).unwrap();
            let mut p_out = d_out.device_address();
            let args = kernel_args![p_out];
            // SAFETY: one *mut u32 parameter with one element per thread (64).
            match unsafe { device.launch_raw(&function, LaunchConfig::linear(1, 64), &args) } {
                Err(Error::Emulator(err)) => {
                    let message = err.to_string();
                    assert_eq!(err.kind(), kind, "{message}");
                    for phrase in phrases.iter().chain(&["mask 0xffffffff", "tests/kernels/group/src/lib.rs"])
                    {
                        assert!(message.contains(phrase), "{}: no {phrase:?} in: {message}", kernel.name());
                    }
                    assert!(message.contains(kernel.name()) && message.contains("lane"), "{message}");
                    Ok(())
                }
                other => panic!(
                    "{} (seed {}): expected an emulator error, got {other:?}",
                    kernel.name(),
                    options.seed
                ),
            }
        });
        result.unwrap();
    }
}
