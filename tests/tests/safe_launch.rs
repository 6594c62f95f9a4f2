//! Safe kernels with typed launches (`examples/third-party-kernels`, written as a user
//! writes them: no `unsafe`), on the emulator under several scheduler seeds and on the GPU
//! when there is one: results against CPU references at odd sizes and odd block shapes,
//! bounds checks that stop a launch with the index and length (a trap on the GPU, a typed
//! emulator error), and bad launches that are typed errors before anything runs.

use approx::assert_relative_eq;
use rand::{Rng, SeedableRng};
use third_party_kernels as k;
use warpsafe::emu::{self, ErrorKind};
use warpsafe_host::{Device, Error, LaunchConfig};
use warpsafe_tests::{child_test_stdout, gpu_or_skip, note, on_gpu, test_devices, THIRD_PARTY};

/// Element counts: empty, one, the edges of a warp and of a block, 2^k ± 1.
const SIZES: [usize; 10] = [0, 1, 31, 32, 33, 1023, 1025, (1 << 12) - 1, (1 << 12) + 1, 5000];

/// Block shapes: full warps, and one whose last warp is partial.
const BLOCKS: [u32; 2] = [128, 100];

/// The emulator under seeds 0..3, then the GPU when present.
fn devices(test: &str) -> Vec<Device> {
    let mut devices: Vec<Device> =
        (0..3).map(|seed| Device::emulator_with(emu::Options { seed, ..emu::Options::default() })).collect();
    devices.extend(test_devices(test).into_iter().filter(on_gpu));
    devices
}

/// The warps of a 1-D grid of `blocks` blocks of `block` threads over `n` elements (thread
/// `i` holds element `i`): for each warp in `k::global_warp` order, its element range.
fn warp_ranges(blocks: usize, block: usize, n: usize) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    for b in 0..blocks {
        for w in 0..block.div_ceil(32) {
            let start = (b * block + 32 * w).min(n);
            let end = (b * block + (32 * w + 32).min(block)).min(n);
            ranges.push(start..end);
        }
    }
    ranges
}

#[test]
fn scale_and_total_matches_a_cpu_reference() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0601);
    for device in devices("scale_and_total_matches_a_cpu_reference") {
        let scale = device.load(&THIRD_PARTY).unwrap().kernel(&k::scale_and_total).unwrap();
        for block in BLOCKS {
            for n in SIZES {
                let host: Vec<f32> = (0..n).map(|_| rng.gen_range(-4.0f32..4.0)).collect();
                let blocks = n.div_ceil(block as usize).max(1);
                let ranges = warp_ranges(blocks, block as usize, n);
                let mut data = device.upload(&host).unwrap();
                let mut totals = device.upload(&vec![f32::NAN; ranges.len()]).unwrap();
                let config = LaunchConfig::linear(blocks as u32, block);
                device.launch(&scale, config, (&mut data, 0.5f32, &mut totals)).unwrap();

                let scaled = data.download().unwrap();
                let label = format!("{device:?}, n = {n}, blocks of {block}");
                for (i, (&s, &h)) in scaled.iter().zip(&host).enumerate() {
                    assert_eq!(s, h * 0.5, "{label}: element {i}");
                }
                for (w, (range, total)) in ranges.iter().zip(totals.download().unwrap()).enumerate() {
                    let expected: f64 = scaled[range.clone()].iter().map(|&x| f64::from(x)).sum();
                    assert_relative_eq!(f64::from(total), expected, epsilon = 1e-4, max_relative = 1e-5);
                    assert!(!total.is_nan(), "{label}: warp {w} stored nothing");
                }
            }
        }
    }
}

#[test]
fn histogram_counts_every_sample_once() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0602);
    for device in devices("histogram_counts_every_sample_once") {
        let histogram = device.load(&THIRD_PARTY).unwrap().kernel(&k::histogram).unwrap();
        for (n, width) in [(0usize, 1u32), (1, 1), (33, 3), (1025, 7), ((1 << 12) + 1, 16)] {
            let bins = 64;
            let samples: Vec<u32> = (0..n).map(|_| rng.gen_range(0..bins as u32 * width)).collect();
            // A few samples hammer bin 0, the rest spread out.
            let input = device.upload(&samples).unwrap();
            let mut counts = device.upload(&vec![0u32; bins]).unwrap();
            // A grid smaller than the input: the grid-stride loop covers the rest.
            device.launch(&histogram, LaunchConfig::linear(3, 96), (&input, width, &mut counts)).unwrap();
            let mut expected = vec![0u32; bins];
            for s in &samples {
                expected[(s / width) as usize] += 1;
            }
            assert_eq!(counts.download().unwrap(), expected, "{device:?}, n = {n}, width {width}");
        }
    }
}

#[test]
fn strided_max_keeps_each_threads_maximum_in_shared_memory() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0603);
    for device in devices("strided_max_keeps_each_threads_maximum_in_shared_memory") {
        let strided_max = device.load(&THIRD_PARTY).unwrap().kernel(&k::strided_max).unwrap();
        let (blocks, block) = (2usize, 100u32);
        let threads = blocks * block as usize;
        for n in [0usize, 1, 33, 199, 200, 201, 1025] {
            let host: Vec<f32> = (0..n).map(|_| rng.gen_range(-100.0f32..100.0)).collect();
            let input = device.upload(&host).unwrap();
            let mut out = device.upload(&vec![f32::NAN; threads]).unwrap();
            let ranges = warp_ranges(blocks, block as usize, threads);
            let mut warp_max = device.upload(&vec![f32::NAN; ranges.len()]).unwrap();
            let config = LaunchConfig::linear(blocks as u32, block);
            device.launch(&strided_max, config, (&input, &mut out, &mut warp_max)).unwrap();
            let per_thread: Vec<f32> = (0..threads)
                .map(|t| host.iter().skip(t).step_by(threads).copied().fold(f32::NEG_INFINITY, f32::max))
                .collect();
            assert_eq!(out.download().unwrap(), per_thread, "{device:?}, n = {n}");
            let expected: Vec<f32> = ranges
                .iter()
                .map(|r| per_thread[r.clone()].iter().copied().fold(f32::NEG_INFINITY, f32::max))
                .collect();
            assert_eq!(warp_max.download().unwrap(), expected, "{device:?}, n = {n}");
            // The same launch with 64 KiB of dynamic shared memory, which the kernel does not
            // use: more than the 48 KiB a GPU launch gets unless its kernel opts in (the
            // driver refuses it otherwise), which the launch path does.
            let mut again = device.upload(&vec![f32::NAN; threads]).unwrap();
            let opted_in = LaunchConfig { shared_mem_bytes: 64 * 1024, ..config };
            device.launch(&strided_max, opted_in, (&input, &mut again, &mut warp_max)).unwrap();
            assert_eq!(again.download().unwrap(), per_thread, "{device:?}, n = {n}, 64 KiB");
        }
    }
}

/// A GPU counts a kernel's static shared arrays and the launch's dynamic shared memory
/// against one per-block limit; the emulator counts a static array when the kernel first
/// touches it. `strided_max` keeps a 4 KiB array (`RUNNING_MAX`): with the dynamic window
/// at the limit less 4 KiB it runs, with one more byte the emulator ends the launch with
/// `InvalidLaunch` naming the array. (Emulator only: on the GPU LLVM keeps that array in
/// registers, so the same launch runs there.)
#[test]
fn static_shared_arrays_count_against_the_blocks_limit_on_the_emulator() {
    let array = 1024 * std::mem::size_of::<f32>() as u32;
    for seed in 0..3 {
        let device = Device::emulator_with(emu::Options { seed, ..emu::Options::default() });
        let strided_max = device.load(&THIRD_PARTY).unwrap().kernel(&k::strided_max).unwrap();
        let limit = device.shared_bytes_per_block();
        let input = device.upload(&[3.0f32, -1.0, 7.5]).unwrap();
        let mut out = device.upload(&[f32::NAN; 64]).unwrap();
        let mut warp_max = device.upload(&[f32::NAN; 2]).unwrap();
        let fits = LaunchConfig { shared_mem_bytes: limit - array, ..LaunchConfig::linear(1, 64) };
        device.launch(&strided_max, fits, (&input, &mut out, &mut warp_max)).unwrap();
        let want: Vec<f32> =
            (0..64).map(|t| [3.0f32, -1.0, 7.5].get(t).copied().unwrap_or(f32::NEG_INFINITY)).collect();
        assert_eq!(out.download().unwrap(), want, "seed {seed}");

        let over = LaunchConfig { shared_mem_bytes: limit - array + 1, ..fits };
        let err = device.launch(&strided_max, over, (&input, &mut out, &mut warp_max)).unwrap_err();
        let Error::Emulator(e) = &err else { panic!("expected an emulator error, got {err}") };
        assert_eq!(e.kind(), ErrorKind::InvalidLaunch, "{err}");
        let message = err.to_string();
        for phrase in [
            "`RUNNING_MAX`",
            &format!("takes {array} bytes"),
            &format!("{} bytes of dynamic shared memory", limit - array + 1),
            &format!("the {limit} bytes (227 KiB) a block may have"),
            "a GPU refuses this launch",
        ] {
            assert!(message.contains(phrase), "no {phrase:?} in: {message}");
        }
    }
}

/// Samples past the last bin: an index out of bounds of `bins`.
const OUT_OF_RANGE_SAMPLES: [u32; 4] = [1, 2, 64, 3];

#[test]
fn an_index_past_a_global_buffer_ends_an_emulated_launch_with_index_and_length() {
    for seed in 0..3 {
        let device = Device::emulator_with(emu::Options { seed, ..emu::Options::default() });
        let histogram = device.load(&THIRD_PARTY).unwrap().kernel(&k::histogram).unwrap();
        let samples = device.upload(&OUT_OF_RANGE_SAMPLES).unwrap();
        let mut bins = device.upload(&[0u32; 64]).unwrap();
        let err =
            device.launch(&histogram, LaunchConfig::linear(1, 32), (&samples, 1u32, &mut bins)).unwrap_err();
        let Error::Emulator(e) = &err else { panic!("expected an emulator error, got {err}") };
        assert_eq!(e.kind(), ErrorKind::GlobalOutOfBounds, "{err}");
        let message = err.to_string();
        for phrase in ["histogram", "thread (2, 0, 0)", "index 64 of a global buffer of length 64", "lib.rs"]
        {
            assert!(message.contains(phrase), "no {phrase:?} in: {message}");
        }
        // Nothing past the end was written, and the in-range samples before the bad one
        // may have been counted; the buffer itself is intact and usable.
        let counts = bins.download().unwrap();
        assert!(counts.iter().sum::<u32>() <= 3, "{counts:?}");
    }
}

/// Set in the child process that runs the out-of-bounds kernel on the GPU (a trap ends
/// the CUDA context, so it runs apart from the other tests).
const CHILD_ENV: &str = "WARPSAFE_SAFE_LAUNCH_CHILD";

#[test]
#[ignore = "entry point of the child process that the GPU bounds test starts"]
fn out_of_bounds_child_process() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let device = Device::gpu().unwrap();
    let histogram = device.load(&THIRD_PARTY).unwrap().kernel(&k::histogram).unwrap();
    let samples = device.upload(&OUT_OF_RANGE_SAMPLES).unwrap();
    let mut bins = device.upload(&[0u32; 64]).unwrap();
    match device.launch(&histogram, LaunchConfig::linear(1, 32), (&samples, 1u32, &mut bins)) {
        Err(err @ Error::KernelFailed { .. }) => println!("child: {err}"),
        other => println!("child: expected KernelFailed, got {other:?}"),
    }
}

#[test]
fn an_index_past_a_global_buffer_traps_on_the_gpu_with_index_and_length() {
    if gpu_or_skip("an_index_past_a_global_buffer_traps_on_the_gpu_with_index_and_length").is_none() {
        return;
    }
    let stdout = child_test_stdout("out_of_bounds_child_process", &[(CHILD_ENV, "1")]);
    note(&format!("child process output:\n{stdout}"));
    for phrase in [
        "child: histogram failed while running",
        "warpsafe: global-memory index out of bounds at",
        "lib.rs",
        "thread (2, 0, 0): index 64, length 64",
    ] {
        assert!(stdout.contains(phrase), "no {phrase:?} in:\n{stdout}");
    }
}

#[test]
fn bad_launches_are_typed_errors_before_anything_runs() {
    for device in devices("bad_launches_are_typed_errors_before_anything_runs") {
        let scale = device.load(&THIRD_PARTY).unwrap().kernel(&k::scale_and_total).unwrap();
        let mut data = device.upload(&[1.0f32; 40]).unwrap();
        let mut totals = device.upload(&[0.0f32; 2]).unwrap();
        for config in [
            LaunchConfig::linear(0, 32),
            LaunchConfig::linear(1, 0),
            LaunchConfig::linear(1, 2048),
            LaunchConfig { grid: (1, 70000, 1), block: (32, 1, 1), shared_mem_bytes: 0 },
            LaunchConfig { grid: (1, 1, 1), block: (32, 1, 65), shared_mem_bytes: 0 },
            // More shared memory than the device gives a block.
            LaunchConfig {
                shared_mem_bytes: device.shared_bytes_per_block() + 1,
                ..LaunchConfig::linear(1, 64)
            },
        ] {
            let err = device.launch(&scale, config, (&mut data, 2.0f32, &mut totals)).unwrap_err();
            assert!(
                matches!(err, Error::InvalidLaunch { ref kernel, .. } if kernel == "scale_and_total"),
                "{device:?} {config:?}: {err}"
            );
        }
        assert_eq!(data.download().unwrap(), vec![1.0; 40], "{device:?}: a refused launch wrote");

        // `data` is `#[covers]`: 40 elements need at least 40 threads.
        let err =
            device.launch(&scale, LaunchConfig::linear(1, 32), (&mut data, 2.0f32, &mut totals)).unwrap_err();
        assert!(
            matches!(err, Error::GridDoesNotCover { len: 40, threads: 32, ref param, .. } if param.contains("`data: DisjointSlice<f32>`")),
            "{device:?}: {err}"
        );
        assert_eq!(data.download().unwrap(), vec![1.0; 40], "{device:?}: a refused launch wrote");

        // Empty buffers are fine: the views are empty and nothing is touched.
        let mut empty = device.alloc_zeroed::<f32>(0).unwrap();
        let mut no_totals = device.alloc_zeroed::<f32>(0).unwrap();
        device.launch(&scale, LaunchConfig::linear(2, 64), (&mut empty, 2.0f32, &mut no_totals)).unwrap();

        // The device is still usable.
        device.launch(&scale, LaunchConfig::linear(1, 64), (&mut data, 2.0f32, &mut totals)).unwrap();
        assert_eq!(data.download().unwrap(), vec![2.0; 40]);
        assert_eq!(totals.download().unwrap(), vec![64.0, 16.0]);
    }
}

#[test]
fn a_buffer_of_another_device_is_refused() {
    let Some(gpu) = gpu_or_skip("a_buffer_of_another_device_is_refused") else { return };
    let gpu = Device::from(gpu);
    let emulator = Device::emulator();
    let cases = [(&gpu, &emulator), (&emulator, &gpu)];
    for (launching, owning) in cases {
        let scale = launching.load(&THIRD_PARTY).unwrap().kernel(&k::scale_and_total).unwrap();
        let mut data = owning.upload(&[1.0f32; 4]).unwrap();
        let mut totals = launching.upload(&[0.0f32; 1]).unwrap();
        let err = launching
            .launch(&scale, LaunchConfig::linear(1, 32), (&mut data, 2.0f32, &mut totals))
            .unwrap_err();
        assert!(
            matches!(err, Error::ForeignBuffer { ref param, .. } if param.contains("`data: DisjointSlice<f32>`")),
            "{err}"
        );
        assert_eq!(data.download().unwrap(), vec![1.0; 4]);
    }
}

#[test]
fn reverse_tiles_writes_each_element_once_by_block_tiles() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0604);
    let tile = k::REVERSE_TILE;
    for device in devices("reverse_tiles_writes_each_element_once_by_block_tiles") {
        let reverse = device.load(&THIRD_PARTY).unwrap().kernel(&k::reverse_tiles).unwrap();
        for n in [0, 1, 255, 256, 257, 1023, 1025, 5000] {
            // Fewer blocks than tiles (blocks loop over tiles), and more.
            for (blocks, block) in [(2u32, 100u32), (7, 128), (1, 32)] {
                let host: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
                let input = device.upload(&host).unwrap();
                // One element past the input: no thread owns it in a launch over `n`.
                let mut out = device.upload(&vec![u32::MAX; n + 1]).unwrap();
                let config = LaunchConfig::linear(blocks, block);
                device.launch(&reverse, config, (&input, &mut out)).unwrap();
                let mut expected: Vec<u32> =
                    host.chunks(tile).flat_map(|c| c.iter().rev().copied()).collect();
                expected.push(u32::MAX);
                assert_eq!(out.download().unwrap(), expected, "{device:?}, n = {n}, {blocks} x {block}");
            }
        }
    }
}
