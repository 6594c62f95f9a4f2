//! The planted bugs of the emulator's checks as one table, run two ways: on the emulator
//! (every case must be reported, with the kind the table names) and, one case per child
//! process, on a GPU, where `scripts/gpu-run compare` runs each case under every
//! compute-sanitizer tool to measure what each catches (docs/emulator.md). The GPU half
//! of the shuffle-width check is here too: the GPU traps with the same words.

use emu_test_kernels::misuse;
use warpsafe::emu::{for_each_seed, ErrorKind};
use warpsafe_host::{Device, Error, LaunchConfig, Module};
use warpsafe_tests::{child_test_stdout, gpu_or_skip, note, test_program};

/// One planted bug: its name, how to launch it on a device, and what the emulator
/// reports.
struct Case {
    name: &'static str,
    run: fn(&Device, &Module) -> Result<(), Error>,
    emulator: ErrorKind,
}

/// `n` zeroed `u32`s.
fn zeros(device: &Device, n: usize) -> Result<warpsafe_host::DeviceBuffer<u32>, Error> {
    device.alloc_zeroed(n)
}

const fn linear(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid: (grid, 1, 1), block: (block, 1, 1), shared_mem_bytes: 0 }
}

const CASES: &[Case] = &[
    Case {
        name: "barrier_in_branch",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(&m.kernel(&misuse::barrier_in_branch)?, linear(1, 64), (&mut zeros(d, 64)?,))
        },
        emulator: ErrorKind::BarrierMismatch,
    },
    Case {
        name: "barrier_in_divergent_loop",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(
                &m.kernel(&misuse::barrier_in_divergent_loop)?,
                linear(1, 64),
                (&mut zeros(d, 64)?,),
            )
        },
        emulator: ErrorKind::BarrierMismatch,
    },
    Case {
        name: "race_after_barrier",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(&m.kernel(&misuse::race_after_barrier)?, linear(1, 64), (&mut zeros(d, 64)?,))
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "butterfly_unsynced",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(&m.kernel(&misuse::butterfly_unsynced)?, linear(1, 32), (&mut zeros(d, 32)?,))
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "volatile_last_warp",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(&m.kernel(&misuse::volatile_last_warp)?, linear(1, 64), (&mut zeros(d, 1)?,))
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "global_exchange_unsynced",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(
                &m.kernel(&misuse::global_exchange_unsynced)?,
                linear(1, 32),
                (&mut zeros(d, 32)?, &mut zeros(d, 32)?),
            )
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "plain_increment_from_blocks",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(
                &m.kernel(&misuse::plain_increment_from_blocks)?,
                linear(64, 32),
                (&mut zeros(d, 1)?,),
            )
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "last_block_without_fence",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            let f = m.kernel(&misuse::last_block_without_fence)?;
            d.launch_unsafe(&f, linear(5, 32), (&mut zeros(d, 5)?, &mut zeros(d, 1)?, &mut zeros(d, 1)?))
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "flag_without_release",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            let f = m.kernel(&misuse::flag_without_release)?;
            d.launch_unsafe(&f, linear(2, 32), (&mut zeros(d, 1)?, &mut zeros(d, 1)?, &mut zeros(d, 1)?))
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "block_atomic_across_blocks",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(
                &m.kernel(&misuse::block_atomic_across_blocks)?,
                linear(8, 32),
                (&mut zeros(d, 1)?,),
            )
        },
        emulator: ErrorKind::DataRace,
    },
    Case {
        name: "partial_sum_without_identity",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            let f = m.kernel(&misuse::partial_sum_without_identity)?;
            let data = d.upload(&[1.0f32; 32])?;
            d.launch_unsafe(&f, linear(1, 32), (&data, 20u32, &mut d.alloc_zeroed::<f32>(1)?))
        },
        emulator: ErrorKind::UninitializedValue,
    },
    Case {
        name: "shuffle_outside_mask_stored",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(
                &m.kernel(&misuse::shuffle_outside_mask_stored)?,
                linear(1, 32),
                (&mut zeros(d, 32)?,),
            )
        },
        emulator: ErrorKind::UninitializedValue,
    },
    Case {
        name: "activemask_reduction",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            let f = m.kernel(&misuse::activemask_reduction)?;
            let data = d.upload(&[1u32; 32])?;
            d.launch_unsafe(&f, linear(1, 32), (&data, 32u32, &mut zeros(d, 1)?))
        },
        emulator: ErrorKind::ActiveMaskSplit,
    },
    Case {
        name: "group_in_both_arms",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(&m.kernel(&misuse::group_in_both_arms)?, linear(1, 32), (&mut zeros(d, 32)?,))
        },
        emulator: ErrorKind::Trap,
    },
    Case {
        name: "bad_shuffle_width",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            d.launch_unsafe(&m.kernel(&misuse::bad_shuffle_width)?, linear(1, 32), (&mut zeros(d, 32)?,))
        },
        emulator: ErrorKind::InvalidShuffleWidth,
    },
    Case {
        name: "dynamic_carved_past_the_end",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            let f = m.kernel(&misuse::dynamic_carved_past_the_end)?;
            let config = LaunchConfig { shared_mem_bytes: 128, ..linear(1, 32) };
            d.launch_unsafe(&f, config, (&mut d.alloc_zeroed::<f32>(32)?,))
        },
        emulator: ErrorKind::SharedOutOfBounds,
    },
    Case {
        name: "shared_atomic_past_the_window",
        // SAFETY: buffers of the lengths the kernel's docs ask for.
        run: |d, m| unsafe {
            let f = m.kernel(&misuse::shared_atomic_past_the_window)?;
            let config = LaunchConfig { shared_mem_bytes: 128, ..linear(1, 32) };
            d.launch_unsafe(&f, config, (&mut zeros(d, 32)?,))
        },
        emulator: ErrorKind::SharedOutOfBounds,
    },
];

#[test]
fn every_case_is_reported_by_the_emulator() {
    for case in CASES {
        let result = for_each_seed(0..8, |options| {
            let device = Device::emulator_with(options.clone());
            let module = device.load(&test_program("emu")).unwrap();
            match (case.run)(&device, &module) {
                Err(Error::Emulator(err)) => Err(err),
                Err(other) => panic!("{}: not an emulator error: {other}", case.name),
                Ok(()) => Ok(()),
            }
        });
        let err = result.expect_err(case.name);
        assert_eq!(err.kind(), case.emulator, "{}: {err}", case.name);
    }
}

/// Set in the child process that runs one case on the GPU; `list` prints the names.
const CHILD_CASE: &str = "WARPSAFE_SANITIZER_CASE";

#[test]
#[ignore = "entry point of the child process that runs one case on the GPU (scripts/gpu-run compare)"]
fn sanitizer_case_child_process() {
    let name = std::env::var(CHILD_CASE).expect("started with WARPSAFE_SANITIZER_CASE");
    if name == "list" {
        for case in CASES {
            println!("case {}", case.name);
        }
        return;
    }
    let case = CASES.iter().find(|c| c.name == name).expect("a case of the table");
    let device = Device::gpu().expect("a GPU");
    let module = device.load(&test_program("emu")).unwrap();
    match (case.run)(&device, &module) {
        Ok(()) => println!("child: {name} ran to the end"),
        Err(err) => println!("child: {name}: {err}"),
    }
}

#[test]
fn a_bad_shuffle_width_traps_on_the_gpu_with_the_same_words() {
    if gpu_or_skip("a_bad_shuffle_width_traps_on_the_gpu_with_the_same_words").is_none() {
        return;
    }
    let stdout = child_test_stdout("sanitizer_case_child_process", &[(CHILD_CASE, "bad_shuffle_width")]);
    note(&format!("child process output:\n{stdout}"));
    for phrase in ["warpsafe: shuffle width 24 is not a power of two in 1..=32", "child: bad_shuffle_width: "]
    {
        assert!(stdout.contains(phrase), "no {phrase:?} in:\n{stdout}");
    }
}
