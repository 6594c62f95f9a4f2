//! `warpsafe::group` on the GPU: every collective on every kind of group against a CPU
//! model, in 1-D and 2-D blocks whose size is not a multiple of 32, on the sm_70 and sm_90
//! PTX; and the run-time misuse check, which must trap with a message.

use cust::memory::DeviceBuffer;
use group_test_kernels::{float_of, mat_of, Mat2, MatMul, SLOTS};
use rand::{Rng, SeedableRng};
use warpsafe::op::Operator;
use warpsafe_host::{kernel_args, Error, Gpu, LaunchConfig};
use warpsafe_tests::{gpu_or_skip, test_ptx};

const POISON: u32 = 0xdead_beef;
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
    let ballot = lanes.iter().filter(|&&l| pred(l)).fold(0u32, |m, &l| m | 1 << l);
    let matches = lanes.iter().filter(|&&l| labels[l] == labels[lane]).fold(0u32, |m, &l| m | 1 << l);
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
        (ballot == mask) as u32,
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
    gpu: &Gpu,
    sm: u32,
    kind: (u32, &str),
    block: (u32, u32, u32),
    grid: (u32, u32, u32),
    rng: &mut impl Rng,
) {
    let module = gpu.load_module(test_ptx("group", sm)).unwrap();
    let kernel = module.function("group_collectives").unwrap();
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
    let d_input = DeviceBuffer::from_slice(&input).unwrap();
    let d_labels = DeviceBuffer::from_slice(&labels).unwrap();
    let d_out = DeviceBuffer::from_slice(&vec![POISON; SLOTS * threads]).unwrap();
    let (mut kind_id, mut members_arg) = (kind.0, members);
    let (mut p_input, mut p_labels, mut p_out) =
        (d_input.as_device_ptr(), d_labels.as_device_ptr(), d_out.as_device_ptr());
    let args = kernel_args![kind_id, members_arg, p_input, p_labels, p_out];
    // SAFETY: parameters (u32, u32, *const u32, *const u32, *mut u32) with one input and
    // SLOTS outputs per thread of the grid.
    unsafe { gpu.launch(&kernel, LaunchConfig { grid, block, shared_mem_bytes: 0 }, &args) }
        .unwrap_or_else(|e| panic!("sm_{sm} {} block {block:?}: {e}", kind.1));
    let out = d_out.as_host_vec().unwrap();

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
                let expected = match group_mask(kind.0, lane, existing, members, &x, &lab) {
                    Some(mask) => model(mask, lane, &x, &lab),
                    None => [POISON; SLOTS],
                };
                assert_eq!(
                    got,
                    expected,
                    "sm_{sm}, {}, block {block:?}, grid {grid:?}, members {members:#010x}, thread {t} (lane {lane})",
                    kind.1
                );
            }
        }
    }
}

#[test]
fn every_collective_on_every_group_kind_matches_the_cpu_model() {
    let Some(gpu) = gpu_or_skip("every_collective_on_every_group_kind_matches_the_cpu_model") else { return };
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e0_0001);
    // 1-D and 2-D blocks, multiples of 32 and not (the last warp is partial).
    let shapes = [
        ((64, 1, 1), (2, 1, 1)),
        ((33, 1, 1), (3, 1, 1)),
        ((7, 5, 1), (2, 2, 1)),
        ((1, 1, 1), (1, 1, 1)),
        ((96, 2, 1), (1, 1, 1)),
    ];
    for sm in [70, 90] {
        for kind in KINDS {
            for (block, grid) in shapes {
                check_kind(&gpu, sm, kind, block, grid, &mut rng);
            }
        }
    }
}

#[test]
fn reduce_where_gives_inactive_lanes_the_identity() {
    let Some(gpu) = gpu_or_skip("reduce_where_gives_inactive_lanes_the_identity") else { return };
    let module = gpu.load_module(test_ptx("group", 70)).unwrap();
    let kernel = module.function("group_reduce_where").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e0_0002);
    for members in [0u32, 1, 0x8000_0001, 0xaaaa_aaaa, u32::MAX, rng.gen()] {
        let input: Vec<u32> = (0..96).map(|_| rng.gen()).collect();
        let d_input = DeviceBuffer::from_slice(&input).unwrap();
        let d_out = DeviceBuffer::from_slice(&[POISON; 96]).unwrap();
        let (mut m, mut p_in, mut p_out) = (members, d_input.as_device_ptr(), d_out.as_device_ptr());
        let args = kernel_args![m, p_in, p_out];
        // SAFETY: (u32, *const u32, *mut u32), one element per thread.
        unsafe { gpu.launch(&kernel, LaunchConfig::linear(1, 96), &args) }.unwrap();
        let out = d_out.as_host_vec().unwrap();
        for (w, chunk) in input.chunks(32).enumerate() {
            let expected =
                (0..32).filter(|l| members >> l & 1 == 1).map(|l| chunk[l]).fold(0u32, u32::wrapping_add);
            assert!(
                out[32 * w..32 * w + 32].iter().all(|&s| s == expected),
                "members {members:#x}, warp {w}"
            );
        }
    }
}

#[test]
fn ballot_loop_with_a_uniform_condition_sees_every_element() {
    let Some(gpu) = gpu_or_skip("ballot_loop_with_a_uniform_condition_sees_every_element") else { return };
    let module = gpu.load_module(test_ptx("group", 70)).unwrap();
    let kernel = module.function("group_ballot_loop").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e0_0003);
    for len in [0u32, 1, 31, 33, 100] {
        let warps = 3;
        let input: Vec<u32> = (0..(len as usize * warps).max(1)).map(|_| rng.gen()).collect();
        let d_input = DeviceBuffer::from_slice(&input).unwrap();
        let d_out = DeviceBuffer::from_slice(&vec![POISON; 2 * 32 * warps]).unwrap();
        let (mut p_in, mut n, mut p_out) = (d_input.as_device_ptr(), len, d_out.as_device_ptr());
        let args = kernel_args![p_in, n, p_out];
        // SAFETY: (*const u32, u32, *mut u32): len elements per warp, two outputs per thread.
        unsafe { gpu.launch(&kernel, LaunchConfig::linear(1, 32 * warps as u32), &args) }.unwrap();
        let out = d_out.as_host_vec().unwrap();
        for w in 0..warps {
            let row = &input[w * len as usize..][..len as usize];
            let expected =
                row.iter().enumerate().filter(|(_, &v)| v & 1 == 1).fold(0u32, |m, (i, _)| m | 1 << (i % 32));
            for lane in 0..32 {
                let t = 32 * w + lane;
                assert_eq!(out[t], expected, "len {len}, warp {w}, lane {lane}");
                assert_eq!(out[t + 32 * warps], len.div_ceil(32), "iterations, len {len}");
            }
        }
    }
}

/// Set in the child process that runs one misusing kernel (a trap ends the CUDA context
/// for the whole process, so each runs alone).
const CHILD_KERNEL: &str = "WARPSAFE_MISUSE_KERNEL";

#[test]
#[ignore = "entry point of the child process that the misuse tests start"]
fn misuse_child_process() {
    let kernel_name = std::env::var(CHILD_KERNEL).expect("started by a misuse test");
    let gpu = Gpu::new().expect("the parent found a GPU");
    let module = gpu.load_module(test_ptx("group", 90)).unwrap();
    let kernel = module.function(&kernel_name).unwrap();
    let d_out = DeviceBuffer::from_slice(&[0u32; 64]).unwrap();
    let mut p_out = d_out.as_device_ptr();
    let args = kernel_args![p_out];
    // SAFETY: one *mut u32 parameter with one element per thread (64).
    let result = unsafe { gpu.launch(&kernel, LaunchConfig::linear(1, 64), &args) };
    match result {
        Err(err @ Error::KernelFailed { .. }) => println!("child: {err}"),
        other => println!("child: expected KernelFailed, got {other:?}"),
    }
}

/// Runs `kernel` in a child process and returns its stdout (where the device's printf
/// output lands).
fn run_misuse(kernel: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["misuse_child_process", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_KERNEL, kernel)
        .output()
        .expect("starting the child test process");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn misused_groups_trap_with_a_message_naming_the_collective_and_masks() {
    let Some(_gpu) = gpu_or_skip("misused_groups_trap_with_a_message_naming_the_collective_and_masks") else {
        return;
    };
    let cases = [
        // lanes 16..32 returned: lanes 0..16 reduce with 16 lanes missing.
        (
            "group_misuse_early_exit",
            "reduce on a group whose lanes are not all present",
            "lanes present 0x0000ffff",
        ),
        // second trip of the loop: only lanes 0..8 are left.
        (
            "group_misuse_divergent_ballot",
            "ballot on a group whose lanes are not all present",
            "lanes present 0x000000ff",
        ),
        (
            "group_misuse_split_collectives",
            "on a group whose lanes are not all present",
            "group mask 0xffffffff",
        ),
    ];
    for (kernel, message, masks) in cases {
        let stdout = run_misuse(kernel);
        assert!(
            stdout.contains(&format!("child: {kernel} failed while running")),
            "{kernel}: no KernelFailed:\n{stdout}"
        );
        assert!(stdout.contains(message), "{kernel}: message missing:\n{stdout}");
        assert!(stdout.contains(masks), "{kernel}: masks missing:\n{stdout}");
        assert!(
            stdout.contains("group_gpu") || stdout.contains("lib.rs"),
            "{kernel}: no source location:\n{stdout}"
        );
    }
}
