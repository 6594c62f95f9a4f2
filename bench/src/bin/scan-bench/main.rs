//! scan-bench: warpsafe's device-wide scans and selections (`warpsafe_host::scan`:
//! `Scanner` inclusive and exclusive sum, `Selector` select-if and select-flagged) against
//! CUB's `cub::DeviceScan` and `cub::DeviceSelect`, and a device-to-device copy of the same
//! bytes (the ceiling), for f32, f64 and i32, in one run on the GPU. `scan-bench --help`
//! lists the options.
//!
//! Order of work, as in reduce-bench: CUB's program (`cub/scan_cub.cu`, which also times
//! the copy) is built (nvcc) and run first, as a child process, before this process opens
//! the GPU; then warpsafe's calls are measured by the same method
//! (`warpsafe_bench::timing`) and every output is checked against a host reference; then
//! the tables, the targets, the CSV, the SVG plot and a log are written to `--out` as
//! scan.txt, scan.csv, scan.svg and scan.log.

mod gpu;

use std::process::ExitCode;

use warpsafe_bench::report::{self, size_label, Results};
use warpsafe_bench::scan::cli::{self, Args};
use warpsafe_bench::scan::report::{self as scan_report, Row};
use warpsafe_bench::scan::{plot, targets};
use warpsafe_bench::{cub, harness};

/// The name in messages.
const TOOL: &str = "scan-bench";

fn main() -> ExitCode {
    harness::main_with(TOOL, cli::parse, run)
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let cub =
        harness::CubRun { program: &cub::SCAN, args: args.cub_args(), record: scan_report::parse_cub_record };
    let (results, failures, log) =
        harness::replot_or_measure(TOOL, &args.common, scan_report::from_csv, cub, |results, log| {
            gpu::measure(args, results, log)
        })?;
    finish(args, &results, &failures, &log)
}

/// Prints and writes everything; the exit status says whether everything ran and every
/// result was right.
fn finish(args: &Args, results: &Results<Row>, failures: &[String], log: &str) -> anyhow::Result<ExitCode> {
    let mut body = report::header(TOOL, results);
    body.push('\n');
    body.push_str(&scan_report::tables(results));
    let wrong = results
        .bad_rows()
        .iter()
        .map(|row| {
            format!(
                "{} {} {} {}: {:?}",
                row.implementation,
                row.algorithm,
                row.ty,
                size_label(row.n),
                row.check
            )
        })
        .collect();
    let report = harness::Report {
        stem: "scan",
        body,
        wrong,
        targets_heading: "targets (H100; warpsafe / CUB)",
        verdicts: targets::evaluate(results),
        csv: scan_report::to_csv(results),
        svg: plot::svg(results)?,
    };
    harness::finish(&args.common.out, report, failures, log)
}
