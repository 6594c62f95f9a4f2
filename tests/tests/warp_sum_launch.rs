//! The warp-sum kernels and a third-party kernel crate against a CPU reference, on the
//! emulator and (when present) the GPU, and the host's typed errors on both backends.
//! Without a GPU the GPU half prints `skipped: no CUDA device`; with
//! `WARPSAFE_REQUIRE_GPU=1` it fails instead.

use approx::assert_relative_eq;
use rand::{Rng, SeedableRng};
use warpsafe_host::{kernel_args, Backend, Device, Error, Gpu, LaunchConfig};
use warpsafe_tests::{gpu_or_skip, on_gpu, test_devices, THIRD_PARTY};

/// Input sizes: the edges of a warp and of a block everywhere; large ones on the GPU only.
fn sizes(device: &Device) -> Vec<usize> {
    let mut sizes = vec![0, 1, 31, 32, 33, 63, 65, 255, 257, 1000, (1 << 12) - 1, (1 << 12) + 1];
    if on_gpu(device) {
        sizes.extend([(1 << 16) + 1, (1 << 20) + 7, (1 << 24) - 1]);
    }
    sizes
}

/// CPU model of the kernel's f32 butterfly: in the step of distance `d` (1, 2, 4, 8, 16)
/// lane `l` combines its value with lane `l ^ d`'s, the lower lane's on the left, so the
/// result is the pairwise tree `(x0 + x1) + (x2 + x3)`, ... Missing elements of a short
/// last warp are 0, as in the kernel.
fn warp_tree_sum_f32(chunk: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 32];
    lanes[..chunk.len()].copy_from_slice(chunk);
    let mut distance = 1;
    while distance < 32 {
        let before = lanes;
        for (lane, value) in lanes.iter_mut().enumerate() {
            let partner = lane ^ distance;
            *value = before[lane.min(partner)] + before[lane.max(partner)];
        }
        distance *= 2;
    }
    lanes[0]
}

#[test]
fn gpu_opens_or_reports_no_device_with_a_message() {
    match Gpu::new() {
        Ok(gpu) => {
            let (major, _) = gpu.compute_capability();
            assert!(major >= 7, "{gpu:?}");
            assert!([70, 80, 90].contains(&gpu.ptx_arch()));
        }
        Err(err @ Error::NoDevice { .. }) => {
            assert!(err.to_string().contains("no CUDA device"), "{err}");
            assert!(std::env::var("WARPSAFE_REQUIRE_GPU").as_deref() != Ok("1"), "GPU required: {err}");
        }
        Err(other) => panic!("unexpected error opening the GPU: {other}"),
    }
}

#[test]
fn auto_picks_the_gpu_when_present_and_the_emulator_otherwise() {
    let device = Device::auto().unwrap();
    let expected = if Gpu::new().is_ok() { Backend::Gpu } else { Backend::Emulator };
    assert_eq!(device.backend(), expected, "{device:?}");
    let emulator = Device::emulator();
    assert_eq!(emulator.backend(), Backend::Emulator);
    assert!(emulator.name().contains("emulator"), "{}", emulator.name());
    assert!(emulator.multiprocessor_count() >= 1);
}

#[test]
fn warp_sums_u32_match_the_cpu() {
    for device in test_devices("warp_sums_u32_match_the_cpu") {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0001);
        for n in sizes(&device) {
            // Full-range values: the sums wrap, exactly as u32 addition does on the CPU.
            let input: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
            let expected: Vec<u32> =
                input.chunks(32).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();
            let got = device.warp_sums(&input).unwrap_or_else(|e| panic!("{device:?} n = {n}: {e}"));
            assert_eq!(got.len(), n.div_ceil(32), "{device:?} n = {n}");
            assert_eq!(got, expected, "{device:?} n = {n}");
        }
    }
}

#[test]
fn warp_sums_f32_match_the_cpu_tree_bitwise_and_the_exact_sum_approximately() {
    for device in test_devices("warp_sums_f32_match_the_cpu_tree_bitwise_and_the_exact_sum_approximately") {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0002);
        for n in sizes(&device) {
            let input: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
            let got = device.warp_sums(&input).unwrap_or_else(|e| panic!("{device:?} n = {n}: {e}"));
            assert_eq!(got.len(), n.div_ceil(32), "{device:?} n = {n}");
            for (w, (chunk, &sum)) in input.chunks(32).zip(&got).enumerate() {
                // Same additions in the same order: bit-for-bit equal.
                assert_eq!(sum.to_bits(), warp_tree_sum_f32(chunk).to_bits(), "{device:?} n = {n}, warp {w}");
                let exact: f64 = chunk.iter().map(|&x| x as f64).sum();
                assert_relative_eq!(sum as f64, exact, epsilon = 1e-5, max_relative = 1e-5);
            }
        }
    }
}

#[test]
fn empty_input_gives_an_empty_result() {
    for device in test_devices("empty_input_gives_an_empty_result") {
        assert_eq!(device.warp_sums::<u32>(&[]).unwrap(), Vec::<u32>::new());
        assert_eq!(device.warp_sums::<f32>(&[]).unwrap(), Vec::<f32>::new());
    }
}

#[test]
fn bad_ptx_unknown_kernels_and_bad_launches_are_typed_errors_on_the_gpu() {
    let Some(gpu) = gpu_or_skip("bad_ptx_unknown_kernels_and_bad_launches_are_typed_errors_on_the_gpu")
    else {
        return;
    };
    let err = gpu.load_module("this is not PTX").unwrap_err();
    assert!(matches!(err, Error::ModuleLoad { .. }), "{err}");
    assert!(err.to_string().contains("could not load the PTX module"), "{err}");

    let err = gpu.load_module(".version 7.0\0").unwrap_err();
    assert!(matches!(err, Error::PtxContainsNul { offset: 12 }), "{err}");

    let module = gpu.load_module(warpsafe_tests::THIRD_PARTY_PTX).unwrap();
    let err = module.function_by_name("no_such_kernel").unwrap_err();
    assert!(matches!(err, Error::KernelNotFound { ref name, .. } if name == "no_such_kernel"), "{err}");

    // Kernels are compiled one by one on first lookup: a kernel the driver rejects is
    // reported by name when it is looked up, and its neighbours still load (compiled
    // whole, the module would have failed to load at all).
    let two = ".version 7.0\n.target sm_70\n.address_size 64\n\
        .visible .entry fine()\n{\n\tret;\n}\n\
        .visible .entry broken()\n{\n\tno.such.instruction;\n\tret;\n}\n";
    let module = gpu.load_module(two).unwrap();
    assert_eq!(module.function_by_name("fine").unwrap().name(), "fine");
    let err = module.function_by_name("broken").unwrap_err();
    assert!(matches!(err, Error::ModuleLoad { kernel: Some(ref k), .. } if k == "broken"), "{err}");
    assert!(err.to_string().contains("of kernel broken"), "{err}");
    assert_eq!(module.function_by_name("fine").unwrap().name(), "fine");

    // 2048 threads per block is over every GPU's limit of 1024: refused before the
    // driver sees it.
    let device = Device::from(gpu.clone());
    let function = device.load(&THIRD_PARTY).unwrap().kernel(&third_party_kernels::scale_and_total).unwrap();
    let (mut data, mut totals) =
        (device.alloc_zeroed::<f32>(0).unwrap(), device.alloc_zeroed::<f32>(1).unwrap());
    let err = device
        .launch(&function, LaunchConfig::linear(1, 2048), (&mut data, 1.0f32, &mut totals))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { ref kernel, .. } if kernel == "scale_and_total"), "{err}");

    // The GPU is still usable after the refused launch.
    assert_eq!(gpu.warp_sums(&[1u32, 2, 3]).unwrap(), vec![6]);
}

#[test]
fn unknown_kernels_bad_launches_and_ptx_are_typed_errors_on_the_emulator() {
    let device = Device::emulator();
    let err = device.load_ptx(warpsafe_tests::THIRD_PARTY_PTX).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");

    let module = device.load(&warpsafe_host::ptx::ENTRY).unwrap();
    let err = module.function_by_name("no_such_kernel").unwrap_err();
    assert!(
        matches!(err, Error::KernelNotFound { ref name, source: None } if name == "no_such_kernel"),
        "{err}"
    );
    assert_eq!(module.function_by_name("warpsafe_warp_sum_u32").unwrap().name(), "warpsafe_warp_sum_u32");

    let module = device.load(&THIRD_PARTY).unwrap();
    let function = module.kernel(&third_party_kernels::scale_and_total).unwrap();
    let (mut data, mut totals) =
        (device.alloc_zeroed::<f32>(0).unwrap(), device.alloc_zeroed::<f32>(1).unwrap());
    let err = device
        .launch(&function, LaunchConfig::linear(1, 2048), (&mut data, 1.0f32, &mut totals))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { ref kernel, .. } if kernel == "scale_and_total"), "{err}");

    // The raw escape hatch: one argument short is refused before the kernel could read a
    // missing parameter.
    let (mut view, mut factor, mut total_view) = ([0u64; 2], 1.0f32, [totals.device_address(), 1]);
    let args = kernel_args![view, factor, total_view];
    // SAFETY: refused before it runs.
    let err = unsafe { device.launch_raw(&function, LaunchConfig::linear(1, 32), &args[..2]) }.unwrap_err();
    assert!(matches!(err, Error::ArgumentCount { expected: 3, got: 2, .. }), "{err}");

    // A GPU function cannot run on the emulator (and the other way round).
    if let Ok(gpu) = Device::gpu() {
        let gpu_function =
            gpu.load(&THIRD_PARTY).unwrap().kernel(&third_party_kernels::scale_and_total).unwrap();
        // SAFETY: refused before it runs.
        let err =
            unsafe { device.launch_raw(&gpu_function, LaunchConfig::linear(1, 32), &args) }.unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
        // SAFETY: refused before it runs.
        let err = unsafe { gpu.launch_raw(&function, LaunchConfig::linear(1, 32), &args) }.unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    }

    // The device is still usable after the refused launches.
    assert_eq!(device.warp_sums(&[1u32, 2, 3]).unwrap(), vec![6]);
}
