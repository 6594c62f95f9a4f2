//! collective-bench: warpsafe's collectives across the GPUs of one host
//! (`warpsafe_host::collective`) against NCCL called directly, in one run:
//!
//! - `all-reduce`: element-wise f32 sum of 2^10 to 2^30 bytes per GPU, warpsafe's
//!   `AllReducer::all_reduce_on` against `ncclAllReduce` (algorithm and bus bandwidth as
//!   nccl-tests define them: bus = algorithm × 2(n−1)/n);
//! - `sharded-sum`: an f32 sum of 2^30 elements split over 1, 2, 4, ... GPUs
//!   (`ShardedReducer`), against one GPU's `Reducer` over the whole array;
//! - `scalar`: the cost of the cross-GPU step for a scalar: `ShardedReducer` over
//!   one-element shards minus one GPU's `Reducer` over one element, against NCCL's own
//!   all-reduce (and all-gather) of one f32, each waited for.
//!
//! Every time is the median over batches of back-to-back calls, wall clock between waits
//! for all GPUs (`warpsafe_bench::timing`). Writes `collective.csv`, `collective.svg` and
//! `collective.txt` to `--out`.

mod nccl_direct;

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use warpsafe::op::Sum;
use warpsafe_bench::meta;
use warpsafe_bench::timing::{self, Plan, Timing, WallClock};
use warpsafe_host::collective::{nccl_version, AllReducer, Communicator, ShardedReducer};
use warpsafe_host::reduce::Reducer;
use warpsafe_host::{Device, DeviceBuffer, Stream};

use nccl_direct::Direct;

/// The command line.
#[derive(Parser, Debug)]
#[command(about = "warpsafe's multi-GPU collectives against NCCL called directly")]
struct Args {
    /// Folder for collective.csv, collective.svg and collective.txt.
    #[arg(long, default_value = "target/collective-bench")]
    out: PathBuf,
    /// Largest all-reduce message per GPU, as log2 of its bytes (10 to 32).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(10..=32))]
    max_log2_bytes: u32,
    /// Elements of the sharded f32 sum, as log2 (10 to 32).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(10..=32))]
    sharded_log2: u32,
    /// Fewer and shorter batches.
    #[arg(long)]
    quick: bool,
    /// Redraw collective.svg from this collective.csv of an earlier run, without a GPU.
    #[arg(long)]
    replot: Option<PathBuf>,
}

/// One measurement, as a CSV row.
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Row {
    section: String,
    implementation: String,
    gpus: usize,
    bytes_per_gpu: u64,
    seconds: f64,
    min_seconds: f64,
    max_seconds: f64,
    calls_per_batch: u32,
    algbw_gbs: f64,
    busbw_gbs: f64,
}

impl Row {
    fn new(section: &str, implementation: &str, gpus: usize, bytes: u64, t: Timing) -> Row {
        let algbw = bytes as f64 / t.seconds / 1e9;
        let factor = if gpus > 1 { 2.0 * (gpus as f64 - 1.0) / gpus as f64 } else { 0.0 };
        Row {
            section: section.to_string(),
            implementation: implementation.to_string(),
            gpus,
            bytes_per_gpu: bytes,
            seconds: t.seconds,
            min_seconds: t.min_seconds,
            max_seconds: t.max_seconds,
            calls_per_batch: t.calls,
            algbw_gbs: algbw,
            busbw_gbs: algbw * factor,
        }
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    if let Some(csv_path) = &args.replot {
        let rows = csv::Reader::from_path(csv_path)
            .with_context(|| format!("reading {}", csv_path.display()))?
            .deserialize()
            .collect::<Result<Vec<Row>, _>>()?;
        let gpus = rows.iter().map(|r| r.gpus).max().unwrap_or(1);
        let title = format!("collective-bench, {gpus} GPUs (from {})", csv_path.display());
        plot(&rows, gpus, &args.out.join("collective.svg"), &title)?;
        println!("wrote {}", args.out.join("collective.svg").display());
        return Ok(());
    }
    let plan = if args.quick { Plan::QUICK } else { Plan::FULL };
    let gpus = Device::gpus()?;
    anyhow::ensure!(!gpus.is_empty(), "collective-bench needs at least one GPU");
    let nccl = nccl_version()?;
    let mut report = String::new();
    writeln!(
        report,
        "collective-bench, {}; {} x {}; NCCL {}.{}.{}; driver {}",
        meta::today_utc(),
        gpus.len(),
        gpus[0].name(),
        nccl.0,
        nccl.1,
        nccl.2,
        meta::nvidia_driver_version().unwrap_or_default()
    )?;
    writeln!(report, "command: collective-bench {}", std::env::args().skip(1).collect::<Vec<_>>().join(" "))?;
    print!("{report}");

    let mut run = Run { gpus: &gpus, args: &args, plan, rows: Vec::new(), report };
    all_reduce(&mut run)?;
    sharded_sum(&mut run)?;
    scalar(&mut run)?;
    let Run { rows, report, .. } = run;

    let csv_path = args.out.join("collective.csv");
    let mut csv =
        csv::Writer::from_path(&csv_path).with_context(|| format!("writing {}", csv_path.display()))?;
    rows.iter().try_for_each(|row| csv.serialize(row))?;
    csv.flush()?;
    plot(&rows, gpus.len(), &args.out.join("collective.svg"), &report)?;
    std::fs::write(args.out.join("collective.txt"), &report)?;
    println!("wrote {}, collective.svg, collective.txt", csv_path.display());
    Ok(())
}

/// One run of the benchmark: what it measures on, and what it has found so far.
struct Run<'a> {
    gpus: &'a [Device],
    args: &'a Args,
    plan: Plan,
    rows: Vec<Row>,
    report: String,
}

/// Prints the last `n` lines of `report` (what a section just added to it).
fn print_last_lines(report: &str, n: usize) {
    let lines: Vec<&str> = report.lines().collect();
    lines[lines.len().saturating_sub(n)..].iter().for_each(|line| println!("{line}"));
}

/// Waits for every stream of `streams`.
fn wait_all(streams: &[Stream]) -> anyhow::Result<()> {
    streams.iter().try_for_each(|s| s.synchronize())?;
    Ok(())
}

/// The all-reduce section: bus bandwidth by message size, warpsafe against NCCL.
fn all_reduce(run: &mut Run) -> anyhow::Result<()> {
    let Run { gpus, args, plan, rows, report } = run;
    let n = gpus.len();
    let direct = Direct::new(n)?;
    let comm = Communicator::new(gpus)?;
    let mut reducer = AllReducer::<f32, Sum>::new(&comm)?;
    let streams: Vec<Stream> = gpus.iter().map(Device::stream).collect::<Result<_, _>>()?;
    let stream_refs: Vec<&Stream> = streams.iter().collect();
    let max_count = (1usize << args.max_log2_bytes) / 4;
    let sends: Vec<DeviceBuffer<f32>> =
        gpus.iter().map(|g| g.alloc_zeroed(max_count)).collect::<Result<_, _>>()?;
    let recvs: Vec<DeviceBuffer<f32>> =
        gpus.iter().map(|g| g.alloc_zeroed(max_count)).collect::<Result<_, _>>()?;
    let send_addresses: Vec<u64> = sends.iter().map(DeviceBuffer::device_address).collect();
    let recv_addresses: Vec<u64> = recvs.iter().map(DeviceBuffer::device_address).collect();
    writeln!(report, "\nall-reduce, f32 sum, out of place, {n} GPUs: bus bandwidth GB/s (time per call)")?;
    writeln!(report, "{:>12} {:>22} {:>22} {:>8}", "bytes/GPU", "NCCL direct", "warpsafe", "ratio")?;
    print_last_lines(report, 2);
    for log2 in 10..=args.max_log2_bytes {
        let bytes = 1u64 << log2;
        let count = (bytes / 4) as usize;
        let nccl = timing::measure(&mut WallClock(|| direct.synchronize()), plan, || {
            // SAFETY: the buffers hold max_count >= count f32s on their GPUs and outlive
            // the run; the clock waits for the streams.
            unsafe { direct.all_reduce_f32(&send_addresses, &recv_addresses, count) }
        })?;
        let part_sends: Vec<DeviceBuffer<f32>> =
            gpus.iter().map(|g| g.alloc_zeroed(count)).collect::<Result<_, _>>()?;
        let part_recvs: Vec<DeviceBuffer<f32>> =
            gpus.iter().map(|g| g.alloc_zeroed(count)).collect::<Result<_, _>>()?;
        let send_refs: Vec<&DeviceBuffer<f32>> = part_sends.iter().collect();
        let recv_refs: Vec<&DeviceBuffer<f32>> = part_recvs.iter().collect();
        let ours = timing::measure(&mut WallClock(|| wait_all(&streams)), plan, || {
            // SAFETY: the buffers outlive the run; the clock waits for the streams before
            // they are dropped; no buffer is another rank's.
            Ok(unsafe { reducer.all_reduce_on(&stream_refs, &send_refs, &recv_refs) }?)
        })?;
        let (a, b) = (
            Row::new("all-reduce", "nccl-direct", n, bytes, nccl),
            Row::new("all-reduce", "warpsafe", n, bytes, ours),
        );
        let line = format!(
            "{bytes:>12} {:>10.1} ({:>8.1} us) {:>10.1} ({:>8.1} us) {:>8.3}",
            a.busbw_gbs,
            a.seconds * 1e6,
            b.busbw_gbs,
            b.seconds * 1e6,
            a.seconds / b.seconds
        );
        println!("{line}");
        writeln!(report, "{line}")?;
        rows.extend([a, b]);
    }
    Ok(())
}

/// The sharded-sum section: one GPU's Reducer over the whole array against the
/// ShardedReducer over 1, 2, 4, ... GPUs.
fn sharded_sum(run: &mut Run) -> anyhow::Result<()> {
    let Run { gpus, args, plan, rows, report } = run;
    let elements = 1usize << args.sharded_log2;
    let bytes = (elements * 4) as u64;
    let base = {
        let whole = gpus[0].alloc_zeroed::<f32>(elements)?;
        let mut reducer = Reducer::<f32, Sum>::new(&gpus[0])?;
        timing::measure(&mut WallClock(|| Ok(())), plan, || Ok(reducer.reduce(&whole).map(|_| ())?))?
    };
    writeln!(report, "\nsharded f32 sum of 2^{} elements (zeros): time per call, speed-up over one GPU's Reducer ({:.1} us)", args.sharded_log2, base.seconds * 1e6)?;
    rows.push(Row::new("sharded-sum", "reducer-1-gpu", 1, bytes, base));
    let mut counts = vec![1];
    while counts.last().is_some_and(|&c| c * 2 <= gpus.len()) {
        counts.push(counts.last().unwrap() * 2);
    }
    for g in counts {
        let comm = Communicator::new(&gpus[..g])?;
        let shards: Vec<DeviceBuffer<f32>> = (0..g)
            .map(|r| gpus[r].alloc_zeroed(elements / g + if r == g - 1 { elements % g } else { 0 }))
            .collect::<Result<_, _>>()?;
        let mut sharded = ShardedReducer::<f32, Sum>::new(&comm)?;
        let t =
            timing::measure(&mut WallClock(|| Ok(())), plan, || Ok(sharded.reduce(&shards).map(|_| ())?))?;
        let line = format!(
            "{g} GPUs: {:>9.1} us, speed-up {:.2} (goal {:.1})",
            t.seconds * 1e6,
            base.seconds / t.seconds,
            0.9 * g as f64
        );
        println!("{line}");
        writeln!(report, "{line}")?;
        rows.push(Row::new("sharded-sum", "warpsafe", g, bytes, t));
    }
    Ok(())
}

/// The scalar section: what the cross-GPU step adds to a sharded reduction of a
/// scalar, against NCCL's own latency for one f32.
fn scalar(run: &mut Run) -> anyhow::Result<()> {
    let Run { gpus, plan, rows, report, .. } = run;
    let n = gpus.len();
    let direct = Direct::new(n)?;
    let sends: Vec<DeviceBuffer<f32>> = gpus.iter().map(|g| g.alloc_zeroed(1)).collect::<Result<_, _>>()?;
    let recvs: Vec<DeviceBuffer<f32>> = gpus.iter().map(|g| g.alloc_zeroed(n)).collect::<Result<_, _>>()?;
    let send_addresses: Vec<u64> = sends.iter().map(DeviceBuffer::device_address).collect();
    let recv_addresses: Vec<u64> = recvs.iter().map(DeviceBuffer::device_address).collect();
    let mut wait_direct = WallClock(|| direct.synchronize());
    let nccl_all_reduce = timing::measure(&mut wait_direct, plan, || {
        // SAFETY: one f32 per send and receive, alive for the run.
        unsafe { direct.all_reduce_f32(&send_addresses, &recv_addresses, 1)? };
        direct.synchronize()
    })?;
    let nccl_all_gather = timing::measure(&mut wait_direct, plan, || {
        // SAFETY: 4 bytes per send, 4n per receive, alive for the run.
        unsafe { direct.all_gather(&send_addresses, &recv_addresses, 4)? };
        direct.synchronize()
    })?;
    let one = gpus[0].alloc_zeroed::<f32>(1)?;
    let mut single = Reducer::<f32, Sum>::new(&gpus[0])?;
    let single_gpu =
        timing::measure(&mut WallClock(|| Ok(())), plan, || Ok(single.reduce(&one).map(|_| ())?))?;
    let comm = Communicator::new(gpus)?;
    let shards: Vec<DeviceBuffer<f32>> = gpus.iter().map(|g| g.alloc_zeroed(1)).collect::<Result<_, _>>()?;
    let mut sharded = ShardedReducer::<f32, Sum>::new(&comm)?;
    let ours =
        timing::measure(&mut WallClock(|| Ok(())), plan, || Ok(sharded.reduce(&shards).map(|_| ())?))?;
    // The same per-GPU reductions, waited for and read back, without the exchange: what
    // the sharded reduction costs before its cross-GPU step.
    let mut reducers: Vec<Reducer<f32, Sum>> = gpus.iter().map(Reducer::new).collect::<Result<_, _>>()?;
    let partials: Vec<DeviceBuffer<f32>> =
        gpus.iter().map(|g| g.alloc_zeroed(1)).collect::<Result<_, _>>()?;
    let streams: Vec<Stream> = gpus.iter().map(Device::stream).collect::<Result<_, _>>()?;
    let without_exchange = timing::measure(&mut WallClock(|| Ok(())), plan, || {
        for (i, reducer) in reducers.iter_mut().enumerate() {
            // SAFETY: the shard and partial outlive the wait just below.
            unsafe { reducer.reduce_on(&streams[i], &shards[i], &partials[i])? };
        }
        wait_all(&streams)?;
        partials[0].download()?;
        Ok(())
    })?;
    let step = ours.seconds - without_exchange.seconds;
    writeln!(report, "\nscalar over {n} GPUs (each waited for):")?;
    for (what, t) in [
        ("NCCL all-reduce of one f32", nccl_all_reduce),
        ("NCCL all-gather of one f32 per GPU", nccl_all_gather),
        ("one GPU's Reducer over one f32 (result on the host)", single_gpu),
        ("every GPU's Reducer over one f32, no exchange (result of GPU 0 on the host)", without_exchange),
        ("warpsafe ShardedReducer over one f32 per GPU (result on the host)", ours),
    ] {
        writeln!(report, "  {what}: {:.1} us", t.seconds * 1e6)?;
    }
    writeln!(
        report,
        "  the cross-GPU step (sharded minus the same reductions without the exchange): {:.1} us = {:.2} x NCCL's all-reduce latency (goal <= 1.10)",
        step * 1e6,
        step / nccl_all_reduce.seconds
    )?;
    writeln!(
        report,
        "  sharded minus one GPU's Reducer: {:.1} us = {:.2} x NCCL's all-reduce latency",
        (ours.seconds - single_gpu.seconds) * 1e6,
        (ours.seconds - single_gpu.seconds) / nccl_all_reduce.seconds
    )?;
    print_last_lines(report, 8);
    rows.extend([
        Row::new("scalar", "nccl-direct-all-reduce", n, 4, nccl_all_reduce),
        Row::new("scalar", "nccl-direct-all-gather", n, 4, nccl_all_gather),
        Row::new("scalar", "reducer-1-gpu", 1, 4, single_gpu),
        Row::new("scalar", "reducers-no-exchange", n, 4, without_exchange),
        Row::new("scalar", "warpsafe-sharded", n, 4, ours),
    ]);
    Ok(())
}

/// The all-reduce by message size as an SVG plot: bandwidth of both implementations
/// (bus bandwidth; with one GPU, whose bus bandwidth is 0 by definition, algorithm
/// bandwidth), and below it warpsafe's speed relative to NCCL's with the 0.95 goal.
fn plot(rows: &[Row], gpus: usize, path: &std::path::Path, report: &str) -> anyhow::Result<()> {
    fn drawn<T, E: std::fmt::Display>(result: Result<T, E>) -> anyhow::Result<T> {
        result.map_err(|e| anyhow::anyhow!("plotting: {e}"))
    }
    let bandwidth = |r: &Row| if gpus > 1 { r.busbw_gbs } else { r.algbw_gbs };
    let of = |name: &str| -> Vec<&Row> {
        rows.iter().filter(|r| r.section == "all-reduce" && r.implementation == name).collect()
    };
    let (nccl, ours) = (of("nccl-direct"), of("warpsafe"));
    let log2 = |r: &Row| (r.bytes_per_gpu as f64).log2();
    let x_max = nccl.iter().map(|r| log2(r)).fold(11.0, f64::max);
    let y_max = nccl.iter().chain(&ours).map(|r| bandwidth(r)).fold(1.0, f64::max) * 1.1;
    let ratio: Vec<(f64, f64)> =
        nccl.iter().zip(&ours).map(|(a, b)| (log2(a), a.seconds / b.seconds)).collect();
    let root = SVGBackend::new(path, (960, 760)).into_drawing_area();
    drawn(root.fill(&WHITE))?;
    let root = drawn(root.titled(report.lines().next().unwrap_or("collective-bench"), ("sans-serif", 18)))?;
    let (top, bottom) = root.split_vertically(470);
    let mut chart = drawn(
        ChartBuilder::on(&top)
            .margin(16)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(10f64..x_max, 0f64..y_max),
    )?;
    drawn(
        chart
            .configure_mesh()
            .x_desc("message per GPU, log2 bytes")
            .y_desc(if gpus > 1 {
                "all-reduce bus bandwidth, GB/s"
            } else {
                "all-reduce algorithm bandwidth, GB/s"
            })
            .draw(),
    )?;
    for (implementation, name, color) in
        [(&nccl, "NCCL called directly", RED), (&ours, "warpsafe AllReducer", BLUE)]
    {
        let points: Vec<(f64, f64)> = implementation.iter().map(|r| (log2(r), bandwidth(r))).collect();
        drawn(chart.draw_series(LineSeries::new(points.clone(), color.stroke_width(2))))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        drawn(chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled()))))?;
    }
    drawn(
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw(),
    )?;
    let mut chart = drawn(
        ChartBuilder::on(&bottom)
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(10f64..x_max, 0.8f64..1.1f64),
    )?;
    drawn(
        chart
            .configure_mesh()
            .x_desc("message per GPU, log2 bytes")
            .y_desc("NCCL time / warpsafe time")
            .draw(),
    )?;
    drawn(chart.draw_series(LineSeries::new([(10.0, 0.95), (x_max, 0.95)], BLACK.stroke_width(1))))?
        .label("goal 0.95")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    drawn(chart.draw_series(LineSeries::new(ratio.clone(), BLUE.stroke_width(2))))?;
    drawn(chart.draw_series(ratio.iter().map(|&p| Circle::new(p, 3, BLUE.filled()))))?;
    drawn(
        chart.configure_series_labels().position(SeriesLabelPosition::LowerRight).border_style(BLACK).draw(),
    )?;
    drawn(root.present())?;
    Ok(())
}
