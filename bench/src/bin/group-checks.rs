//! What warpsafe's run-time group checks cost: each group benchmark kernel beside its
//! `*_unchecked` twin, the same code on a warp made unchecked with `Group::assume_present`,
//! from one build; timed on the GPU with CUDA events (warm-up, then the median of 7
//! launches), and their results compared (the checks must not change them).
//!
//! `cargo run --release -p warpsafe-bench --bin group-checks` (needs a GPU).

use anyhow::Context as _;
use cust::memory::DeviceBuffer;
use warpsafe_host::{kernel_args, Gpu, LaunchConfig};

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/warpsafe_bench_kernels.sm_90.ptx"));

fn main() -> anyhow::Result<()> {
    let gpu = Gpu::new().context("this benchmark needs a GPU")?;
    let (major, minor) = gpu.compute_capability();
    println!("group-check cost on {} (compute capability {major}.{minor})", gpu.name());
    let module = gpu.load_module(PTX)?;
    let blocks = 132 * 8;
    let threads = 256u32;
    let iters = 4096u32;
    let out = DeviceBuffer::<u32>::zeroed(blocks * threads as usize)?;
    println!("{:<20} {:>12} {:>12} {:>8}", "kernel", "checked us", "unchecked us", "ratio");
    for name in ["bench_group_reduce", "bench_group_ballot", "bench_group_shfl"] {
        let mut results = Vec::new();
        let mut medians = Vec::new();
        for kernel_name in [name.to_string(), format!("{name}_unchecked")] {
            let kernel = module.function(&kernel_name)?;
            let (mut n, mut p_out) = (iters, out.as_device_ptr());
            let args = kernel_args![n, p_out];
            let config = LaunchConfig::linear(blocks as u32, threads);
            // SAFETY: (u32, *mut u32) with one element per thread; 256 is a multiple of 32,
            // and no lane of these kernels branches away from the collectives.
            unsafe { gpu.launch_timed(&kernel, config, &args, 2)? }; // warm-up
                                                                     // SAFETY: as above.
            let mut times = unsafe { gpu.launch_timed(&kernel, config, &args, 7)? };
            times.sort();
            medians.push(times[times.len() / 2].as_secs_f64() * 1e6);
            results.push(out.as_host_vec()?);
        }
        anyhow::ensure!(results[0] == results[1], "{name}: checked and unchecked kernels disagree");
        println!("{name:<20} {:>12.1} {:>12.1} {:>8.3}", medians[0], medians[1], medians[0] / medians[1]);
    }
    Ok(())
}
