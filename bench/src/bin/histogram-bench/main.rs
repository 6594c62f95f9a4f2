//! histogram-bench: warpsafe's `Histogram::<u8>::even(&device, 256, 0, 256)` against CUB's
//! `cub::DeviceHistogram::HistogramEven` over the same samples and a read ceiling (a kernel
//! that reads every byte), uniform and skewed (90 % in one bin), in one run on the GPU.
//! `histogram-bench --help` lists the options; `--copies`, `--blocks-per-sm` and
//! `--concentrated-copies` add warpsafe rows with those launch settings (a sweep of the
//! kernel's knobs in one run).
//!
//! Order of work, as in scan-bench: CUB's program (`cub/histogram_cub.cu`, which also times
//! the read ceiling) is built (nvcc) and run first, as a child process, before this process
//! opens the GPU; then warpsafe's calls are measured by the same method
//! (`warpsafe_bench::timing`, one `compute_on` per call on one stream) and every call's
//! counts (the first, over a poisoned buffer, and the last timed one) are checked against
//! the host reference; then the tables, the targets, the CSV, the SVG plot and a log are
//! written to `--out` as histogram.txt, histogram.csv, histogram.svg and histogram.log.

use std::process::ExitCode;

use anyhow::Context as _;
use warpsafe_bench::cub;
use warpsafe_bench::harness::{self, Session};
use warpsafe_bench::histogram::{self as bench, Args, Distribution, Row, WARPSAFE};
use warpsafe_bench::report::{self, size_label, Check, Results};
use warpsafe_bench::timing::{self, StreamClock};
use warpsafe_host::histogram::{Histogram, HistogramOptions};
use warpsafe_host::{DeviceBuffer, Stream};

/// The name in messages.
const TOOL: &str = "histogram-bench";

fn main() -> ExitCode {
    harness::main_with(TOOL, bench::parse, run)
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let cub =
        harness::CubRun { program: &cub::HISTOGRAM, args: args.cub_args(), record: bench::parse_cub_record };
    let (results, failures, log) =
        harness::replot_or_measure(TOOL, &args.common, bench::from_csv, cub, |results, log| {
            measure(args, results, log)
        })?;
    let mut body = report::header(TOOL, &results);
    body.push('\n');
    body.push_str(&bench::tables(&results));
    let wrong = results
        .rows
        .iter()
        .filter(|r| r.check != Check::Ok && r.check != Check::NotChecked)
        .map(|r| format!("{} {} {}: {:?}", r.implementation, r.distribution, size_label(r.n), r.check))
        .collect();
    let report = harness::Report {
        stem: "histogram",
        body,
        wrong,
        targets_heading: "targets (H100; warpsafe / CUB)",
        verdicts: bench::evaluate(&results),
        csv: bench::to_csv(&results),
        svg: bench::svg(&results)?,
    };
    harness::finish(&args.common.out, report, &failures, &log)
}

/// The launch settings of each warpsafe row: the default, then the sweep's.
fn settings(args: &Args) -> Vec<(String, HistogramOptions)> {
    let default = HistogramOptions::default();
    let mut all = vec![(WARPSAFE.to_string(), default)];
    let copies: Vec<Option<u32>> =
        if args.copies.is_empty() { vec![None] } else { args.copies.iter().map(|&c| Some(c)).collect() };
    // A grid: blocks per multiprocessor, or a fixed block count.
    let grids: Vec<(String, u32, Option<u32>)> = if !args.blocks.is_empty() {
        args.blocks
            .iter()
            .map(|&g| (format!("blocks={g}"), default.blocks_per_multiprocessor, Some(g)))
            .collect()
    } else if !args.blocks_per_sm.is_empty() {
        args.blocks_per_sm.iter().map(|&b| (format!("blocks/SM={b}"), b, None)).collect()
    } else {
        vec![(
            format!("blocks/SM={}", default.blocks_per_multiprocessor),
            default.blocks_per_multiprocessor,
            None,
        )]
    };
    let concentrated = if args.concentrated_copies.is_empty() {
        vec![default.concentrated_copies]
    } else {
        args.concentrated_copies.clone()
    };
    let threads = if args.block_threads.is_empty() {
        vec![None]
    } else {
        args.block_threads.iter().map(|&t| Some(t)).collect()
    };
    if !args.copies.is_empty()
        || !args.blocks_per_sm.is_empty()
        || !args.blocks.is_empty()
        || !args.block_threads.is_empty()
        || !args.concentrated_copies.is_empty()
    {
        for (&c, &t) in copies.iter().flat_map(|c| threads.iter().map(move |t| (c, t))) {
            for (grid, b, blocks) in &grids {
                for &k in &concentrated {
                    let mut name =
                        format!("warpsafe copies={} {grid}", c.map_or("auto".to_string(), |c| c.to_string()));
                    if !args.concentrated_copies.is_empty() {
                        name.push_str(&format!(" concentrated={k}"));
                    }
                    if let Some(t) = t {
                        name.push_str(&format!(" threads={t}"));
                    }
                    let options = HistogramOptions {
                        block_threads: t,
                        copies: c,
                        blocks_per_multiprocessor: *b,
                        blocks: *blocks,
                        concentrated_copies: k,
                    };
                    all.push((name, options));
                }
            }
        }
    }
    all
}

/// Measures warpsafe at every point of `args`, with every launch setting.
fn measure(args: &Args, results: &mut Results<Row>, log: &mut String) -> anyhow::Result<Vec<String>> {
    let settings = settings(args);
    let measurements = args.counts.len() * args.distributions.len() * settings.len();
    let mut s = Session::open(TOOL, args.common.emulator, measurements, results, log)?;
    let mut histograms = Vec::new();
    for (name, options) in &settings {
        let histogram = Histogram::<u8>::even(&s.device, 256, 0, 256)
            .and_then(|h| h.with_options(*options))
            .with_context(|| format!("{name}: Histogram::<u8>::even(256, 0, 256)"))?;
        histograms.push((name.clone(), histogram));
    }
    for &d in &args.distributions {
        for &n in &args.counts {
            let size = size_label(n);
            s.progress.bar.set_message(format!("{d} {size}"));
            let len = usize::try_from(n).context("more samples than this machine addresses")?;
            let host = bench::samples(d, len);
            let expected = bench::reference(&host);
            let samples = s.device.upload(&host).with_context(|| format!("the samples of {d} {size}"))?;
            let mut counts = s.device.alloc_zeroed::<u32>(bench::BINS)?;
            let point = Point { distribution: d, samples: &samples, expected: &expected };
            for (name, histogram) in &mut histograms {
                let measured =
                    bench_one(&s.stream, &args.common.plan, (name.as_str(), histogram), &point, &mut counts);
                s.keep(measured, || format!("{name} {d} {size}"));
            }
        }
    }
    Ok(s.finish())
}

/// One point of the run: the samples on the device and their reference counts.
struct Point<'a> {
    distribution: Distribution,
    samples: &'a DeviceBuffer<u8>,
    expected: &'a [u32],
}

/// Checks one setting's first call, times it, and checks the last timed call.
fn bench_one(
    stream: &Stream,
    plan: &timing::Plan,
    (name, histogram): (&str, &mut Histogram<u8>),
    point: &Point<'_>,
    counts: &mut DeviceBuffer<u32>,
) -> anyhow::Result<Row> {
    let Point { distribution, samples, expected } = *point;
    // Poison the counts, so that a call that writes nothing cannot pass.
    counts.copy_from_host(&[0x5A5A_5A5A; bench::BINS])?;
    let counts = &*counts;
    let check = |stream: &Stream| -> anyhow::Result<Check> {
        stream.synchronize()?;
        Ok(bench::check_counts(&counts.download()?, expected))
    };
    // SAFETY: the buffers outlive the synchronisation in `check` and in `measure`, nothing
    // writes them meanwhile, and this histogram's launches all go to this one stream.
    unsafe { histogram.compute_on(stream, samples, counts)? };
    let first = check(stream)?;
    let mut clock = StreamClock(stream);
    let timing = timing::measure(&mut clock, plan, || {
        // SAFETY: as above; `measure` ends with a wait for its last event.
        unsafe { histogram.compute_on(stream, samples, counts) }.map_err(Into::into)
    })?;
    let last = check(stream)?;
    let check = match (first, last) {
        (Check::Ok, Check::Ok) => Check::Ok,
        (Check::Ok, Check::Bad { expected }) => Check::Bad { expected: format!("after timing: {expected}") },
        (bad, _) => bad,
    };
    let launch = histogram.plan(samples.len());
    Ok(Row {
        implementation: name.to_string(),
        distribution,
        n: samples.len() as u64,
        timing,
        check,
        detail: format!(
            "1 launch; {} blocks, {} copies ({} if concentrated)",
            launch.blocks, launch.copies, launch.concentrated_copies
        ),
    })
}
