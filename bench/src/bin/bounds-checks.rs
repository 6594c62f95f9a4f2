//! What the bounds checks of safe kernels cost: the same streaming kernels
//! (`warpsafe-bench-kernels`' `bench_sum_*` and `bench_scale_*`) with checked indexing and
//! with `get_unchecked`, timed in one run on the GPU by the benchmark's one method
//! (`warpsafe_bench::timing`: warm-up, batches between CUDA events, median), at
//! 2^24, 2^26 and 2^28 f32 elements, each result checked against the CPU.
//!
//! `cargo build --release -p warpsafe-bench`, then `target/release/bounds-checks` on the
//! GPU (`scripts/gpu-run bench` runs it after reduce-bench).

use anyhow::Context as _;
use warpsafe_bench::timing::{self, Plan, StreamClock};
use warpsafe_bench_kernels as k;
use warpsafe_host::{Device, LaunchConfig, Program};

static BENCH: Program = warpsafe_host::include_program!("warpsafe_bench_kernels");

const THREADS: u32 = 256;

fn main() -> anyhow::Result<()> {
    let device = Device::gpu().context("this benchmark needs a GPU")?;
    let module = device.load(&BENCH)?;
    let stream = device.stream()?;
    let blocks = device.multiprocessor_count() * 8;
    let config = LaunchConfig::linear(blocks, THREADS);
    let threads = (blocks * THREADS) as usize;
    println!("bounds-check cost on {} ({} blocks of {THREADS})", device.name(), blocks);
    println!(
        "{:<14} {:>6} {:>12} {:>12} {:>10} {:>10} {:>8}",
        "kernel", "N", "checked us", "unchecked us", "chk GB/s", "unchk GB/s", "ratio"
    );
    for log2 in [24u32, 26, 28] {
        let n = 1usize << log2;
        let host: Vec<f32> = (0..n).map(|i| (i % 1024) as f32).collect();
        let x = device.upload(&host)?;
        let mut partials = device.alloc_zeroed::<f32>(threads)?;
        let mut y = device.alloc_zeroed::<f32>(n)?;

        let sum = [module.kernel(&k::bench_sum_checked)?, module.kernel(&k::bench_sum_unchecked)?];
        let mut seconds = [0.0; 2];
        for (which, f) in sum.iter().enumerate() {
            let t = timing::measure(&mut StreamClock(&stream), &Plan::FULL, || {
                // SAFETY: the buffers live until the end of this loop's iteration, after
                // `measure`'s last wait; the host touches them only after it.
                unsafe { device.launch_on(&stream, f, config, (&x, &mut partials))? };
                Ok(())
            })?;
            seconds[which] = t.seconds;
            let total: f64 = partials.download()?.iter().map(|&v| f64::from(v)).sum();
            let expected: f64 = host.iter().map(|&v| f64::from(v)).sum();
            anyhow::ensure!((total - expected).abs() <= 1e-4 * expected, "sum: {total} vs {expected}");
        }
        report("sum", log2, seconds, 4 * n);

        let scale = [module.kernel(&k::bench_scale_checked)?, module.kernel(&k::bench_scale_unchecked)?];
        for (which, f) in scale.iter().enumerate() {
            let t = timing::measure(&mut StreamClock(&stream), &Plan::FULL, || {
                // SAFETY: as above.
                unsafe { device.launch_on(&stream, f, config, (&x, &mut y, 0.5f32))? };
                Ok(())
            })?;
            seconds[which] = t.seconds;
            let out = y.download()?;
            anyhow::ensure!(out.iter().zip(&host).all(|(&o, &h)| o == 0.5 * h), "scale: wrong result");
        }
        report("scale", log2, seconds, 8 * n);
    }
    Ok(())
}

/// One table row: times, bandwidths (bytes read plus written) and checked/unchecked.
fn report(kernel: &str, log2: u32, [checked, unchecked]: [f64; 2], bytes: usize) {
    let gbs = |s: f64| bytes as f64 / s / 1e9;
    println!(
        "{kernel:<14} {:>6} {:>12.2} {:>12.2} {:>10.0} {:>10.0} {:>8.4}",
        format!("2^{log2}"),
        checked * 1e6,
        unchecked * 1e6,
        gbs(checked),
        gbs(unchecked),
        checked / unchecked
    );
}
