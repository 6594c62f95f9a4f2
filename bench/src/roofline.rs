//! The read ceiling of the benchmarks: the read-only roofline kernels of
//! `warpsafe-bench-kernels` (each thread reads 16-byte vectors in a grid-stride loop, 2, 4
//! or 8 at a time, one wave of resident blocks), the fastest of them timed over a byte
//! count, by the one timing method (`timing`).

use std::collections::HashMap;

use anyhow::Context as _;
use warpsafe_bench_kernels::{bench_read_x2, bench_read_x4, bench_read_x8};
use warpsafe_host::{kernel_args, Device, DeviceBuffer, Function, LaunchConfig, Module, Program, Stream};

use crate::timing::{self, Plan, StreamClock, Timing};

/// The roofline kernels: PTX built for sm_90 by `build.rs`, and their host forms.
pub static BENCH: Program = warpsafe_host::include_program!("warpsafe_bench_kernels").with_kernels(&[
    bench_read_x2.untyped(),
    bench_read_x4.untyped(),
    bench_read_x8.untyped(),
]);

/// Threads per block of the roofline kernels.
pub const ROOFLINE_THREADS: u32 = 256;

/// The read-roofline kernels and the best of them measured per byte count.
pub struct Roofline {
    variants: Vec<(&'static str, Function, u32)>,
    out: DeviceBuffer<u32>,
    measured: HashMap<u64, (Timing, String)>,
}

impl Roofline {
    /// The kernels of `module` (loaded from [`BENCH`]), each with a grid of one wave of
    /// resident blocks on `device`.
    ///
    /// # Errors
    /// A kernel is missing, or the output buffer cannot be allocated.
    pub fn new(device: &Device, module: &Module) -> anyhow::Result<Roofline> {
        let sms = device.multiprocessor_count();
        let mut variants = Vec::new();
        let mut most_threads = 0u64;
        for kernel in [&bench_read_x2, &bench_read_x4, &bench_read_x8] {
            let name = kernel.name();
            let f = module.kernel(kernel).with_context(|| format!("loading {name}"))?;
            let per_sm = device.max_active_blocks_per_multiprocessor(&f, ROOFLINE_THREADS, 0)?.max(1);
            let blocks = sms * per_sm;
            most_threads = most_threads.max(u64::from(blocks) * u64::from(ROOFLINE_THREADS));
            variants.push((name, f.untyped(), blocks));
        }
        let out = device.alloc_zeroed::<u32>(most_threads as usize)?;
        Ok(Roofline { variants, out, measured: HashMap::new() })
    }

    /// The fastest variant's timing for reading `bytes` bytes at `address` (cached per
    /// byte count: f32 and i32 inputs of one length read the same bytes).
    ///
    /// # Errors
    /// A launch or the timer fails.
    pub fn measure(
        &mut self,
        device: &Device,
        stream: &Stream,
        plan: &Plan,
        address: u64,
        bytes: u64,
    ) -> anyhow::Result<(Timing, String)> {
        if let Some(hit) = self.measured.get(&bytes) {
            return Ok(hit.clone());
        }
        let vectors = bytes / 16;
        let mut best: Option<(Timing, String)> = None;
        for (name, f, resident) in &self.variants {
            let blocks =
                (vectors.div_ceil(u64::from(ROOFLINE_THREADS)).max(1)).min(u64::from(*resident)) as u32;
            let config = LaunchConfig::linear(blocks, ROOFLINE_THREADS);
            let (mut input, mut count, mut sentinel, mut out) =
                (address, vectors, 0x9E37_79B9u32, self.out.device_address());
            let args = kernel_args![input, count, sentinel, out];
            let mut clock = StreamClock(stream);
            let t = timing::measure(&mut clock, plan, || {
                // SAFETY: the kernel's parameters are (*const Vector, u64, u32, *mut u32):
                // `input` is the start of a live device buffer (256-byte aligned) of at
                // least `vectors` 16-byte vectors, and `out` holds one u32 per thread of
                // the largest grid launched here.
                unsafe { device.launch_raw_on(stream, f, config, &args)? };
                Ok(())
            })?;
            let detail =
                format!("{} {}x{}", name.trim_start_matches("bench_read_"), blocks, ROOFLINE_THREADS);
            if best.as_ref().is_none_or(|(b, _)| t.seconds < b.seconds) {
                best = Some((t, detail));
            }
        }
        stream.synchronize()?;
        let best = best.context("no roofline kernel")?;
        self.measured.insert(bytes, best.clone());
        Ok(best)
    }
}
