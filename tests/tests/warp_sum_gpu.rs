//! The warp-sum kernels on a GPU against a CPU reference, and the host's typed errors.
//! Without a GPU each test prints `skipped: no CUDA device`; with `WARPSAFE_REQUIRE_GPU=1`
//! it fails instead.

use approx::assert_relative_eq;
use rand::{Rng, SeedableRng};
use warpsafe_host::{kernel_args, Error, Gpu, LaunchConfig};
use warpsafe_tests::{gpu_or_skip, THIRD_PARTY_PTX};

const SIZES: [usize; 7] = [0, 1, 31, 32, 33, 1000, (1 << 20) + 7];

/// CPU model of the kernel's f32 tree: five `shfl.down` steps (16, 8, 4, 2, 1) in which a
/// lane whose source is past lane 31 adds its own value; lane 0's result. Missing
/// elements of a short last warp are 0, as in the kernel.
fn warp_tree_sum_f32(chunk: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 32];
    lanes[..chunk.len()].copy_from_slice(chunk);
    let mut delta = 16;
    while delta > 0 {
        let before = lanes;
        for (lane, value) in lanes.iter_mut().enumerate() {
            let src = if lane + delta < 32 { before[lane + delta] } else { before[lane] };
            *value = before[lane] + src;
        }
        delta /= 2;
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
fn warp_sums_u32_match_the_cpu() {
    let Some(gpu) = gpu_or_skip("warp_sums_u32_match_the_cpu") else { return };
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0001);
    for n in SIZES {
        // Full-range values: the sums wrap, exactly as u32 addition does on the CPU.
        let input: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let expected: Vec<u32> =
            input.chunks(32).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();
        let got = gpu.warp_sums(&input).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        assert_eq!(got.len(), n.div_ceil(32), "n = {n}");
        assert_eq!(got, expected, "n = {n}");
    }
}

#[test]
fn warp_sums_f32_match_the_cpu_tree_bitwise_and_the_exact_sum_approximately() {
    let Some(gpu) = gpu_or_skip("warp_sums_f32_match_the_cpu_tree_bitwise_and_the_exact_sum_approximately")
    else {
        return;
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0002);
    for n in SIZES {
        let input: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
        let got = gpu.warp_sums(&input).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        assert_eq!(got.len(), n.div_ceil(32), "n = {n}");
        for (w, (chunk, &sum)) in input.chunks(32).zip(&got).enumerate() {
            // Same additions in the same order: bit-for-bit equal.
            assert_eq!(sum.to_bits(), warp_tree_sum_f32(chunk).to_bits(), "n = {n}, warp {w}");
            let exact: f64 = chunk.iter().map(|&x| x as f64).sum();
            assert_relative_eq!(sum as f64, exact, epsilon = 1e-5, max_relative = 1e-5);
        }
    }
}

#[test]
fn empty_input_gives_an_empty_result() {
    let Some(gpu) = gpu_or_skip("empty_input_gives_an_empty_result") else { return };
    assert_eq!(gpu.warp_sums::<u32>(&[]).unwrap(), Vec::<u32>::new());
    assert_eq!(gpu.warp_sums::<f32>(&[]).unwrap(), Vec::<f32>::new());
}

#[test]
fn bad_ptx_unknown_kernels_and_bad_launches_are_typed_errors() {
    let Some(gpu) = gpu_or_skip("bad_ptx_unknown_kernels_and_bad_launches_are_typed_errors") else { return };
    let err = gpu.load_module("this is not PTX").unwrap_err();
    assert!(matches!(err, Error::ModuleLoad { .. }), "{err}");
    assert!(err.to_string().contains("could not load the PTX module"), "{err}");

    let err = gpu.load_module(".version 7.0\0").unwrap_err();
    assert!(matches!(err, Error::PtxContainsNul { offset: 12 }), "{err}");

    let module = gpu.load_module(THIRD_PARTY_PTX).unwrap();
    let err = module.function("no_such_kernel").unwrap_err();
    assert!(matches!(err, Error::KernelNotFound { ref name, .. } if name == "no_such_kernel"), "{err}");

    // 2048 threads per block is over every GPU's limit of 1024: the driver refuses it.
    let function = module.function("scale_and_total").unwrap();
    let mut null = 0u64;
    let mut len = 0u64;
    let mut factor = 1.0f32;
    let mut null2 = 0u64;
    let args = kernel_args![null, len, factor, null2];
    // SAFETY: the arguments match scale_and_total's parameters; with len = 0 the kernel
    // touches no memory (and the launch is refused before it runs).
    let err = unsafe { gpu.launch(&function, LaunchConfig::linear(1, 2048), &args) }.unwrap_err();
    assert!(matches!(err, Error::Launch { ref kernel, .. } if kernel == "scale_and_total"), "{err}");

    // The GPU is still usable after the refused launch.
    assert_eq!(gpu.warp_sums(&[1u32, 2, 3]).unwrap(), vec![6]);
}

#[test]
fn a_third_party_kernel_crate_builds_loads_and_runs() {
    let Some(gpu) = gpu_or_skip("a_third_party_kernel_crate_builds_loads_and_runs") else { return };
    let module = gpu.load_module(THIRD_PARTY_PTX).unwrap();
    let function = module.function("scale_and_total").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0003);
    for n in [1usize, 31, 33, 1025] {
        let host: Vec<f32> = (0..n).map(|_| rng.gen_range(-4.0f32..4.0)).collect();
        let data = cust::memory::DeviceBuffer::from_slice(&host).unwrap();
        let totals = cust::memory::DeviceBuffer::from_slice(&vec![f32::NAN; n.div_ceil(32)]).unwrap();
        let mut p_data = data.as_device_ptr();
        let mut len = n as u64;
        let mut factor = 0.5f32;
        let mut p_totals = totals.as_device_ptr();
        let args = kernel_args![p_data, len, factor, p_totals];
        let grid = n.div_ceil(128) as u32;
        // SAFETY: (data, len, factor, totals) match the kernel's parameters and sizes;
        // 128 is a multiple of 32.
        unsafe { gpu.launch(&function, LaunchConfig::linear(grid, 128), &args) }.unwrap();
        let scaled = data.as_host_vec().unwrap();
        let got = totals.as_host_vec().unwrap();
        for (i, (&s, &h)) in scaled.iter().zip(&host).enumerate() {
            assert_eq!(s, h * 0.5, "n = {n}, element {i}");
        }
        for (w, (chunk, &total)) in scaled.chunks(32).zip(&got).enumerate() {
            assert_eq!(total.to_bits(), warp_tree_sum_f32(chunk).to_bits(), "n = {n}, warp {w}");
        }
    }
}
