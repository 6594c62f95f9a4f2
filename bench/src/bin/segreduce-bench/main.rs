//! segreduce-bench: warpsafe's segmented reduce (`warpsafe_host::segmented::
//! SegmentedReducer<f32, Sum>`, each strategy of `--strategy`; `auto` by default) against
//! CUB's `cub::DeviceSegmentedReduce::Sum`, and the read ceiling (the read-only roofline
//! kernel over the bytes a call must move), for f32 sums over segments of fixed lengths and
//! a power-law mix, in one run on the GPU. `segreduce-bench --help` lists the options.
//!
//! Order of work, as in scan-bench: CUB's program (`cub/segmented_cub.cu`) is built (nvcc)
//! and run first, as a child process, before this process opens the GPU; then the ceiling
//! and warpsafe's calls are measured by the same method (`warpsafe_bench::timing`) and every
//! output is checked against a host reference; then the tables, the targets, the CSV, the
//! SVG plot and a log are written to `--out` as segmented.txt, segmented.csv,
//! segmented.svg and segmented.log.

mod gpu;

use std::process::ExitCode;

use warpsafe_bench::report::{self, size_label, Results};
use warpsafe_bench::segmented::cli::{self, Args};
use warpsafe_bench::segmented::report::{self as seg_report, Row};
use warpsafe_bench::segmented::{plot, targets};
use warpsafe_bench::{cub, harness};

/// The name in messages.
const TOOL: &str = "segreduce-bench";

fn main() -> ExitCode {
    harness::main_with(TOOL, cli::parse, run)
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let cub = harness::CubRun {
        program: &cub::SEGMENTED,
        args: args.cub_args(),
        record: seg_report::parse_cub_record,
    };
    let (results, failures, log) =
        harness::replot_or_measure(TOOL, &args.common, seg_report::from_csv, cub, |results, log| {
            gpu::measure(args, results, log)
        })?;
    finish(args, &results, &failures, &log)
}

/// Prints and writes everything; the exit status says whether everything ran and every
/// result was right.
fn finish(args: &Args, results: &Results<Row>, failures: &[String], log: &str) -> anyhow::Result<ExitCode> {
    let mut body = report::header(TOOL, results);
    body.push('\n');
    body.push_str(&seg_report::tables(results));
    let wrong = results
        .bad_rows()
        .iter()
        .map(|row| format!("{} {} {}: {:?}", row.implementation, row.pattern, size_label(row.n), row.check))
        .collect();
    let report = harness::Report {
        stem: "segmented",
        body,
        wrong,
        targets_heading: "targets (H100; warpsafe = auto)",
        verdicts: targets::evaluate(results),
        csv: seg_report::to_csv(results),
        svg: plot::svg(results)?,
    };
    harness::finish(&args.common.out, report, failures, log)
}
