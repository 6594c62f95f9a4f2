//! `warpsafe::thread` on the emulator and the GPU: coordinates in 1-D, 2-D and 3-D blocks
//! whose size is not a multiple of 32, against the CPU's model of how threads are numbered
//! and packed.

use warpsafe_host::{kernel_args, LaunchConfig};
use warpsafe_tests::{modules, test_devices};

#[test]
fn thread_coordinates_match_the_hardware_numbering() {
    let test = "thread_coordinates_match_the_hardware_numbering";
    let shapes = [
        ((3, 1, 1), (33, 1, 1)),
        ((2, 2, 1), (7, 5, 1)),
        ((1, 1, 1), (1, 1, 1)),
        ((2, 1, 1), (4, 3, 3)),
        ((1, 2, 2), (31, 1, 1)),
        ((2, 1, 1), (65, 1, 1)),
    ];
    for device in test_devices(test) {
        for (arch, module) in modules(&device, "thread", &[70, 90], test) {
            let kernel = module.kernel(&thread_test_kernels::thread_coordinates).unwrap();
            for (grid, block) in shapes {
                let block_threads = block.0 * block.1 * block.2;
                let total = (grid.0 * grid.1 * grid.2 * block_threads) as usize;
                let out = device.upload(&vec![u32::MAX; 4 * total]).unwrap();
                let mut p_out = out.device_address();
                let args = kernel_args![p_out];
                let config = LaunchConfig { grid, block, shared_mem_bytes: 0 };
                // SAFETY: one pointer parameter, holding 4 * total elements.
                unsafe { device.launch_raw(&kernel, config, &args) }.unwrap();
                let got = out.download().unwrap();
                for (t, chunk) in got.chunks(4).enumerate() {
                    let linear = (t % block_threads as usize) as u32;
                    let expected = [linear, linear / 32, linear % 32, block_threads];
                    assert_eq!(chunk, expected, "{arch}, grid {grid:?}, block {block:?}, thread {t}");
                }
            }
        }
    }
}
