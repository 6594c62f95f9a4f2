//! `warpsafe::thread` on the emulator and the GPU: coordinates in 1-D, 2-D and 3-D blocks
//! whose size is not a multiple of 32, against the CPU's model of how threads are numbered
//! and packed; `thread::index()` is the thread's linear index in the grid (the safe kernel
//! writes its own element of a `DisjointSlice`).

use warpsafe_host::LaunchConfig;
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
                // One element more than the grid has threads: nobody owns it, nobody writes it.
                let mut out = device.upload(&vec![[u32::MAX; 4]; total + 1]).unwrap();
                let config = LaunchConfig { grid, block, shared_mem_bytes: 0 };
                device.launch(&kernel, config, (&mut out,)).unwrap();
                let got = out.download().unwrap();
                assert_eq!(
                    got[total],
                    [u32::MAX; 4],
                    "{arch}, grid {grid:?}, block {block:?}: past the grid"
                );
                for (t, chunk) in got[..total].iter().enumerate() {
                    let linear = (t % block_threads as usize) as u32;
                    let expected = [linear, linear / 32, linear % 32, block_threads];
                    assert_eq!(*chunk, expected, "{arch}, grid {grid:?}, block {block:?}, thread {t}");
                }
            }
        }
    }
}
