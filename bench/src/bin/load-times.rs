//! What a process pays before its first launch: opening the GPU (which loads the text of
//! warpsafe's module outside its kernels) and making each algorithm's host object (which
//! has the driver compile and load that algorithm's kernels, one module per kernel), each
//! timed with the wall clock, then made again in the same process (nothing left to load).
//!
//! Run it with `CUDA_CACHE_DISABLE=1` for what a machine's first process pays, without it
//! for what later ones pay once the driver has cached the compiled kernels.
//!
//! `cargo build --release -p warpsafe-bench`, then `target/release/load-times` on the GPU.

use std::time::Instant;

use anyhow::Context as _;
use warpsafe::op::Sum;
use warpsafe::scan::select::LessThan;
use warpsafe_host::histogram::Histogram;
use warpsafe_host::reduce::Reducer;
use warpsafe_host::scan::{Scanner, Selector};
use warpsafe_host::segmented::SegmentedReducer;
use warpsafe_host::{Device, Error};

/// The seconds `make` takes, and its error if it failed.
fn seconds<T>(make: impl FnOnce() -> Result<T, Error>) -> anyhow::Result<f64> {
    let start = Instant::now();
    make()?;
    Ok(start.elapsed().as_secs_f64())
}

fn main() -> anyhow::Result<()> {
    let cache =
        std::env::var("CUDA_CACHE_DISABLE").map_or("on".to_string(), |v| format!("CUDA_CACHE_DISABLE={v}"));
    let start = Instant::now();
    let device = Device::gpu().context("this benchmark needs a GPU")?;
    let opened = start.elapsed().as_secs_f64();
    println!("load times on {} (driver cache {cache})", device.name());
    println!("{:<44} {:>10} {:>10}", "what", "first s", "again s");
    println!("{:<44} {:>10.3} {:>10}", "Device::gpu (context, module's common text)", opened, "-");
    let steps: [(&str, &dyn Fn() -> anyhow::Result<f64>); 5] = [
        ("Reducer<f32, Sum> (3 kernels)", &|| seconds(|| Reducer::<f32, Sum>::new(&device))),
        ("Scanner<f32, Sum> (1 kernel)", &|| seconds(|| Scanner::<f32, Sum>::new(&device))),
        ("Selector<f32, LessThan> (1 kernel)", &|| seconds(|| Selector::new(&device, LessThan(0.5f32)))),
        ("SegmentedReducer<f32, Sum> (6 kernels)", &|| {
            seconds(|| SegmentedReducer::<f32, Sum>::new(&device))
        }),
        ("Histogram<u8> even, 256 bins (1 kernel)", &|| {
            seconds(|| Histogram::<u8, 1, 1>::even(&device, 256, 0, 256))
        }),
    ];
    for (what, step) in steps {
        let first = step().with_context(|| format!("making {what}"))?;
        let again = step().with_context(|| format!("making {what} again"))?;
        println!("{what:<44} {first:>10.3} {again:>10.3}");
    }
    println!("total {:.3} s", start.elapsed().as_secs_f64());
    Ok(())
}
