//! The read-roofline kernels read every 16-byte vector of their input exactly once, in
//! the grid-stride order their docs give (checked on the CPU emulator).
//!
//! The input is built so that each thread's XOR of the words it should read equals the
//! sentinel, so a thread stores the sentinel exactly when it read exactly its vectors (a
//! vector skipped, read twice or read by the wrong thread changes the XOR); threads with
//! no vector must store nothing.

use core::ffi::c_void;

use warpsafe::emu::{self, LaunchConfig, Options};
use warpsafe::kernel::UntypedKernel as Kernel;
use warpsafe_bench_kernels::{bench_read_x2, bench_read_x4, bench_read_x8, Vector};

const SENTINEL: u32 = 0x9E37_79B9;

fn input(vectors: usize, threads: usize) -> Vec<Vector> {
    let mut state = 0x1234_5678_9ABC_DEF0u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u32
    };
    let mut data: Vec<Vector> = (0..vectors).map(|_| Vector([next(), next(), next(), next()])).collect();
    for t in 0..threads.min(vectors) {
        let mine: Vec<usize> = (t..vectors).step_by(threads).collect();
        let xor = mine.iter().fold(0, |acc, &i| acc ^ data[i].0.iter().fold(0, |a, w| a ^ w));
        let last = *mine.last().unwrap();
        data[last].0[0] ^= xor ^ SENTINEL;
    }
    data
}

fn check(kernel: &Kernel, blocks: u32, block_threads: u32, vectors: usize) {
    let threads = (blocks * block_threads) as usize;
    let data = input(vectors, threads);
    let mut out = vec![0u32; threads];
    let (mut p_in, mut n, mut sentinel, mut p_out) =
        (data.as_ptr(), vectors as u64, SENTINEL, out.as_mut_ptr());
    let args = [
        &mut p_in as *mut *const Vector as *mut c_void,
        &mut n as *mut u64 as *mut c_void,
        &mut sentinel as *mut u32 as *mut c_void,
        &mut p_out as *mut *mut u32 as *mut c_void,
    ];
    // SAFETY: the parameters are (*const Vector, u64, u32, *mut u32); `data` holds
    // `vectors` vectors and `out` one u32 per thread, both alive during the launch.
    unsafe { emu::launch(kernel, &LaunchConfig::linear(blocks, block_threads), &args, &Options::default()) }
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
    for (t, &v) in out.iter().enumerate() {
        let want = if t < vectors { SENTINEL } else { 0 };
        assert_eq!(v, want, "{} thread {t} ({blocks}x{block_threads}, {vectors} vectors)", kernel.name());
    }
}

#[test]
fn every_vector_is_read_once() {
    for kernel in [&bench_read_x2, &bench_read_x4, &bench_read_x8] {
        // Unrolled steps and a tail; fewer vectors than threads; an exact multiple.
        check(kernel, 3, 64, 3 * 64 * 8 * 2 + 37);
        check(kernel, 2, 64, 100);
        check(kernel, 2, 32, 2 * 32 * 8);
    }
}
