//! What warpsafe's run-time group checks cost: each group benchmark kernel beside its
//! `*_unchecked` twin, the same code on a warp made unchecked with `Group::assume_present`,
//! from one build; timed on the GPU by the benchmark's one method
//! (`warpsafe_bench::timing`: warm-up, batches between CUDA events, median), and their
//! results compared (the checks must not change them).
//!
//! `cargo build --release -p warpsafe-bench`, then `target/release/group-checks` on the GPU.

use anyhow::Context as _;
use warpsafe::global::DisjointSlice;
use warpsafe::kernel::{Kernel, Safe};
use warpsafe_bench::timing::{self, Plan, StreamClock};
use warpsafe_bench_kernels as k;
use warpsafe_host::{Device, LaunchConfig, Program};

static BENCH: Program = warpsafe_host::include_program!("warpsafe_bench_kernels");

/// A group benchmark kernel: `(iters, out)`.
type GroupKernel = Kernel<(u32, DisjointSlice<u32>), Safe>;

fn main() -> anyhow::Result<()> {
    let device = Device::gpu().context("this benchmark needs a GPU")?;
    println!("group-check cost on {}", device.name());
    let module = device.load(&BENCH)?;
    let stream = device.stream()?;
    let blocks = device.multiprocessor_count() * 8;
    let config = LaunchConfig::linear(blocks, 256);
    let iters = 4096u32;
    let mut out = device.alloc_zeroed::<u32>(config.threads() as usize)?;
    let pairs: [(&str, &'static GroupKernel, &'static GroupKernel); 3] = [
        ("bench_group_reduce", &k::bench_group_reduce, &k::bench_group_reduce_unchecked),
        ("bench_group_ballot", &k::bench_group_ballot, &k::bench_group_ballot_unchecked),
        ("bench_group_shfl", &k::bench_group_shfl, &k::bench_group_shfl_unchecked),
    ];
    println!("{:<20} {:>12} {:>12} {:>8}", "kernel", "checked us", "unchecked us", "ratio");
    for (name, checked, unchecked) in pairs {
        let mut results = Vec::new();
        let mut medians = Vec::new();
        for kernel in [checked, unchecked] {
            let f = module.kernel(kernel)?;
            let t = timing::measure(&mut StreamClock(&stream), &Plan::FULL, || {
                // SAFETY: `out` lives until after `measure`'s last wait, and the host
                // touches it only after that.
                unsafe { device.launch_on(&stream, &f, config, (iters, &mut out))? };
                Ok(())
            })?;
            medians.push(t.seconds * 1e6);
            results.push(out.download()?);
        }
        anyhow::ensure!(results[0] == results[1], "{name}: checked and unchecked kernels disagree");
        println!("{name:<20} {:>12.1} {:>12.1} {:>8.3}", medians[0], medians[1], medians[0] / medians[1]);
    }
    Ok(())
}
