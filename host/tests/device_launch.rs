//! The launch API on both backends, with warpsafe's own warp-sum kernels: buffers,
//! programs and modules, streams and events, occupancy and cooperative launches, and the
//! typed errors of each. Every test runs on the emulator, and on the GPU when there is one
//! (without one it prints `skipped: no CUDA device` for the GPU half; with
//! `WARPSAFE_REQUIRE_GPU=1` it fails instead).

use std::io::Write as _;

use warpsafe::emu;
use warpsafe_host::{kernel_args, ptx, Backend, Device, Error, Function, LaunchConfig, Program};

/// The emulator, and the GPU when there is one.
fn devices(test: &str) -> Vec<Device> {
    let mut devices = vec![Device::emulator()];
    match Device::gpu() {
        Ok(gpu) => devices.push(gpu),
        Err(Error::NoDevice { reason }) => {
            assert!(
                std::env::var("WARPSAFE_REQUIRE_GPU").as_deref() != Ok("1"),
                "{test}: WARPSAFE_REQUIRE_GPU=1 but no CUDA device: {reason}"
            );
            // Straight to stderr: libtest captures print!, and this must show when passing.
            let _ = writeln!(
                std::io::stderr(),
                "skipped: no CUDA device (GPU half of {test}: {reason}; ran on the emulator)"
            );
        }
        Err(other) => panic!("{test}: opening the GPU failed: {other}"),
    }
    devices
}

/// The u32 warp-sum kernel on `device`, found by name (ENTRY lists its kernels, so its
/// launches check their argument count on both backends).
fn warp_sum(device: &Device) -> Function {
    let function = device.load(&ptx::ENTRY).unwrap().function_by_name("warpsafe_warp_sum_u32").unwrap();
    assert_eq!(function.param_count(), Some(3), "{device:?}");
    function
}

/// Per-warp wrapping sums on the CPU.
fn cpu_sums(input: &[u32]) -> Vec<u32> {
    input.chunks(32).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect()
}

#[test]
fn buffers_are_zeroed_aligned_and_round_trip() {
    for device in devices("buffers_are_zeroed_aligned_and_round_trip") {
        for len in [1usize, 3, 31, 33, 1000] {
            let zeroed = device.alloc_zeroed::<u64>(len).unwrap();
            assert_eq!(zeroed.len(), len);
            assert!(!zeroed.is_empty());
            assert_eq!(zeroed.device_address() % warpsafe_host::ALLOCATION_ALIGNMENT as u64, 0, "{device:?}");
            assert_eq!(zeroed.download().unwrap(), vec![0u64; len], "{device:?}");
            let data: Vec<u16> = (0..len as u16).map(|i| i.wrapping_mul(7919)).collect();
            let mut buffer = device.upload(&data).unwrap();
            assert_eq!(buffer.download().unwrap(), data, "{device:?}");
            let again: Vec<u16> = data.iter().map(|v| !v).collect();
            buffer.copy_from_host(&again).unwrap();
            assert_eq!(buffer.download().unwrap(), again, "{device:?}");
            let err = buffer.copy_from_host(&again[1..]).unwrap_err();
            assert!(
                matches!(err, Error::LengthMismatch { buffer: b, host: h, .. } if b == len && h == len - 1)
            );
        }
        let empty = device.alloc_zeroed::<f32>(0).unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.device_address(), 0);
        assert_eq!(empty.download().unwrap(), Vec::<f32>::new());
        let err = device.alloc_zeroed::<u64>(usize::MAX / 4).unwrap_err();
        assert!(matches!(err, Error::InputTooLarge { .. } | Error::Alloc { .. }), "{err}");
    }
}

#[test]
fn programs_pick_ptx_by_architecture_and_modules_find_kernels() {
    assert_eq!(ptx::ENTRY.ptx_for(9, 0).map(|p| p.0), Some(90));
    assert_eq!(ptx::ENTRY.ptx_for(8, 9).map(|p| p.0), Some(80));
    assert_eq!(ptx::ENTRY.ptx_for(6, 1), None);
    let sm70: Program = ptx::ENTRY.for_arch(70).unwrap();
    assert_eq!(sm70.ptx().len(), 1);
    assert_eq!(sm70.ptx_for(9, 0).map(|p| p.0), Some(70));
    assert!(ptx::ENTRY.for_arch(75).is_none());
    let names: Vec<&str> = ptx::ENTRY.kernels().iter().map(|k| k.name()).collect();
    assert_eq!(names, ["warpsafe_warp_sum_u32", "warpsafe_warp_sum_f32"]);
    for &(sm, text) in ptx::ENTRY.ptx() {
        for name in &names {
            assert!(text.contains(&format!(".entry {name}(")), "sm_{sm}: no {name}");
        }
    }
    for device in devices("programs_pick_ptx_by_architecture_and_modules_find_kernels") {
        let module = device.load(&ptx::ENTRY).unwrap();
        for kernel in ptx::ENTRY.kernels() {
            let function = module.untyped_kernel(kernel).unwrap();
            assert_eq!(function.name(), kernel.name());
            assert_eq!(function.param_count(), Some(3));
        }
        let err = module.function_by_name("warpsafe_warp_sum_u64").unwrap_err();
        assert!(matches!(err, Error::KernelNotFound { .. }), "{device:?}: {err}");
    }
}

#[test]
fn launches_check_the_argument_count() {
    for device in devices("launches_check_the_argument_count") {
        let function = warp_sum(&device);
        let mut len = 0u64;
        let args = kernel_args![len];
        // SAFETY: refused before the kernel runs.
        let err = unsafe { device.launch_raw(&function, LaunchConfig::linear(1, 32), &args) }.unwrap_err();
        assert!(matches!(err, Error::ArgumentCount { expected: 3, got: 1, .. }), "{device:?}: {err}");
        assert!(err.to_string().contains("warpsafe_warp_sum_u32"), "{err}");
    }
}

#[test]
fn streams_enqueue_launches_and_events_time_them() {
    for device in devices("streams_enqueue_launches_and_events_time_them") {
        let function = warp_sum(&device);
        let stream = device.stream().unwrap();
        let input: Vec<u32> = (0..4097u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let d_input = device.upload(&input).unwrap();
        let d_out = device.alloc_zeroed::<u32>(input.len().div_ceil(32)).unwrap();
        let (mut p_in, mut len, mut p_out) =
            (d_input.device_address(), input.len() as u64, d_out.device_address());
        let args = kernel_args![p_in, len, p_out];
        let start = stream.record().unwrap();
        for _ in 0..3 {
            // SAFETY: (*const u32, u64, *mut u32) with len inputs and len / 32 rounded up
            // outputs; 128 is a multiple of 32; the buffers outlive the synchronisation.
            unsafe { device.launch_raw_on(&stream, &function, LaunchConfig::linear(33, 128), &args) }
                .unwrap();
        }
        let end = stream.record().unwrap();
        stream.synchronize().unwrap();
        let elapsed = end.elapsed_since(&start).unwrap();
        assert!(elapsed.as_secs() < 60, "{device:?}: {elapsed:?}");
        assert_eq!(d_out.download().unwrap(), cpu_sums(&input), "{device:?}");
    }
    // Streams and events belong to their backend.
    if let Ok(gpu) = Device::gpu() {
        let emulator = Device::emulator();
        let (gpu_stream, emulator_stream) = (gpu.stream().unwrap(), emulator.stream().unwrap());
        let err = emulator_stream.record().unwrap().elapsed_since(&gpu_stream.record().unwrap()).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
        let function = warp_sum(&emulator);
        let mut len = 0u64;
        let (mut a, mut b) = (0u64, 0u64);
        let args = kernel_args![a, len, b];
        // SAFETY: refused before it runs.
        let err =
            unsafe { emulator.launch_raw_on(&gpu_stream, &function, LaunchConfig::linear(1, 32), &args) };
        assert!(matches!(err, Err(Error::Unsupported { .. })), "{err:?}");
    }
}

#[test]
fn occupancy_follows_the_block_size() {
    for device in devices("occupancy_follows_the_block_size") {
        let function = warp_sum(&device);
        assert!(device.multiprocessor_count() >= 1);
        let small = device.max_active_blocks_per_multiprocessor(&function, 64, 0).unwrap();
        let large = device.max_active_blocks_per_multiprocessor(&function, 1024, 0).unwrap();
        assert!(large >= 1 && small >= large, "{device:?}: {small} blocks of 64, {large} of 1024");
        assert_eq!(device.max_active_blocks_per_multiprocessor(&function, 2048, 0).unwrap(), 0);
        assert_eq!(device.max_active_blocks_per_multiprocessor(&function, 0, 0).unwrap(), 0);
        let cooperative = device.max_cooperative_blocks(&function, 256, 0).unwrap();
        let per_sm = device.max_active_blocks_per_multiprocessor(&function, 256, 0).unwrap();
        assert!(cooperative >= 1 && cooperative <= per_sm * device.multiprocessor_count(), "{device:?}");
        if device.backend() == Backend::Gpu {
            assert_eq!(cooperative, per_sm * device.multiprocessor_count());
        }
    }
}

#[test]
fn cooperative_launches_fill_the_device_and_refuse_one_block_more() {
    for device in devices("cooperative_launches_fill_the_device_and_refuse_one_block_more") {
        assert!(device.supports_cooperative_launch(), "{device:?}");
        let function = warp_sum(&device);
        let stream = device.stream().unwrap();
        let block = 256u32;
        let blocks = device.max_cooperative_blocks(&function, block, 0).unwrap();
        let input: Vec<u32> = (0..blocks * block).map(|i| i ^ 0x5a5a).collect();
        let d_input = device.upload(&input).unwrap();
        let d_out = device.alloc_zeroed::<u32>(input.len() / 32).unwrap();
        let (mut p_in, mut len, mut p_out) =
            (d_input.device_address(), input.len() as u64, d_out.device_address());
        let args = kernel_args![p_in, len, p_out];
        let config = LaunchConfig::linear(blocks, block);
        // SAFETY: (*const u32, u64, *mut u32) sized for the grid; 256 is a multiple of 32.
        unsafe { device.launch_raw_cooperative_on(&stream, &function, config, &args) }.unwrap();
        stream.synchronize().unwrap();
        assert_eq!(d_out.download().unwrap(), cpu_sums(&input), "{device:?}");

        let too_many = LaunchConfig::linear(blocks + 1, block);
        // SAFETY: refused before it runs.
        let err =
            unsafe { device.launch_raw_cooperative_on(&stream, &function, too_many, &args) }.unwrap_err();
        assert!(
            matches!(err, Error::CooperativeGridTooLarge { blocks: b, max, .. } if b == u64::from(blocks) + 1 && max == blocks),
            "{device:?}: {err}"
        );
    }
}

#[test]
fn emulator_options_reach_the_emulator() {
    let options = emu::Options { seed: 42, max_resident_blocks: 2, ..emu::Options::default() };
    let device = Device::emulator_with(options);
    assert_eq!(device.emulator_options().map(|o| o.seed), Some(42));
    assert!(device.name().contains("42"), "{}", device.name());
    let function = warp_sum(&device);
    // Two resident blocks: the largest cooperative grid is two blocks.
    assert_eq!(device.max_cooperative_blocks(&function, 256, 0).unwrap(), 2);
    assert_eq!(device.warp_sums(&[7u32; 100]).unwrap(), vec![224, 224, 224, 28]);
}
