//! reduce-bench: warpsafe's reduce (each strategy and the automatic choice) against CUB's
//! `cub::DeviceReduce` and a read-only roofline kernel, for sum and max over f32, f64 and
//! i32, in one run on the GPU. `reduce-bench --help` lists the options; the README has
//! the command that reproduces its table and plot.
//!
//! Order of work: CUB's program is built (nvcc) and run first, as a child process, before
//! this process opens the GPU; then warpsafe's implementations and the roofline are
//! measured by the same method (warpsafe_bench::timing); then the table, the targets,
//! the CSV, the SVG plot, a report and a log are written to `--out`.

mod gpu;

use std::process::ExitCode;

use warpsafe_bench::cli::{self, Args};
use warpsafe_bench::report::{self, Results};
use warpsafe_bench::{cub, harness, plot, targets};

/// The name in messages and file names.
const TOOL: &str = "reduce-bench";

fn main() -> ExitCode {
    harness::main_with(TOOL, cli::parse, run)
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let cub = harness::CubRun {
        program: &cub::REDUCE,
        args: cub::run_args(&args.sizes, &args.types, &args.ops, &args.common.plan),
        record: cub::parse_record,
    };
    let (results, failures, log) =
        harness::replot_or_measure(TOOL, &args.common, report::from_csv, cub, |results, log| {
            gpu::measure(args, results, log)
        })?;
    finish(args, &results, &failures, &log)
}

/// Prints and writes everything; the exit status says whether everything ran and every
/// result was right.
fn finish(args: &Args, results: &Results, failures: &[String], log: &str) -> anyhow::Result<ExitCode> {
    let mut body = report::header(TOOL, results);
    body.push('\n');
    body.push_str(&report::table(results));
    let wrong = results
        .bad_rows()
        .iter()
        .map(|row| {
            format!(
                "{} {} {} {}: got {}, expected {:?}",
                row.implementation,
                row.ty,
                row.op.map_or("read", |o| o.name()),
                report::size_label(row.n),
                row.result,
                row.check
            )
        })
        .collect();
    let report = harness::Report {
        stem: TOOL,
        body,
        wrong,
        targets_heading: "targets (H100; warpsafe = auto)",
        verdicts: targets::evaluate(results),
        csv: report::to_csv(results),
        svg: plot::svg(results)?,
    };
    harness::finish(&args.common.out, report, failures, log)
}
