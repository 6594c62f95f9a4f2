//! `warpsafe::thread` on the GPU: coordinates in 1-D, 2-D and 3-D blocks whose size is not
//! a multiple of 32, against the CPU's model of how threads are numbered and packed.

use cust::memory::DeviceBuffer;
use warpsafe_host::{kernel_args, LaunchConfig};
use warpsafe_tests::{gpu_or_skip, test_ptx};

#[test]
fn thread_coordinates_match_the_hardware_numbering() {
    let Some(gpu) = gpu_or_skip("thread_coordinates_match_the_hardware_numbering") else { return };
    let shapes =
        [((3, 1, 1), (33, 1, 1)), ((2, 2, 1), (7, 5, 1)), ((1, 1, 1), (1, 1, 1)), ((2, 1, 1), (4, 3, 3))];
    for sm in [70, 90] {
        let module = gpu.load_module(test_ptx("thread", sm)).unwrap();
        let kernel = module.function("thread_coordinates").unwrap();
        for (grid, block) in shapes {
            let block_threads = block.0 * block.1 * block.2;
            let total = (grid.0 * grid.1 * grid.2 * block_threads) as usize;
            let out = DeviceBuffer::from_slice(&vec![u32::MAX; 4 * total]).unwrap();
            let mut p_out = out.as_device_ptr();
            let args = kernel_args![p_out];
            let config = LaunchConfig { grid, block, shared_mem_bytes: 0 };
            // SAFETY: one pointer parameter, holding 4 * total elements.
            unsafe { gpu.launch(&kernel, config, &args) }.unwrap();
            let got = out.as_host_vec().unwrap();
            for (t, chunk) in got.chunks(4).enumerate() {
                let linear = (t % block_threads as usize) as u32;
                let expected = [linear, linear / 32, linear % 32, block_threads];
                assert_eq!(chunk, expected, "sm_{sm}, grid {grid:?}, block {block:?}, thread {t}");
            }
        }
    }
}
