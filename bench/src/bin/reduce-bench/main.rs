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

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use warpsafe_bench::cli::{self, Args, CubSource};
use warpsafe_bench::report::{self, Results};
use warpsafe_bench::{cub, meta, plot, targets};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match cli::parse(&argv) {
        Ok(args) => args,
        // --help, or a bad argument: clap prints it and picks the exit code.
        Err(err) => err.exit(),
    };
    match run(&args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("reduce-bench: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let mut log = String::new();
    let (results, failures) = match &args.replot {
        Some(csv) => {
            let text = std::fs::read_to_string(csv).with_context(|| format!("reading {}", csv.display()))?;
            (report::from_csv(&text).map_err(|e| anyhow::anyhow!("{}: {e}", csv.display()))?, Vec::new())
        }
        None => measure(args, &mut log)?,
    };
    finish(args, &results, &failures, &log)
}

/// Measures everything the arguments ask for; also returns what failed along the way.
fn measure(args: &Args, log: &mut String) -> anyhow::Result<(Results, Vec<String>)> {
    let mut results = Results::default();
    results.set_meta("date", meta::today_utc());
    if let Some(driver) = meta::nvidia_driver_version() {
        results.set_meta("driver", driver);
    }
    results.set_meta("command", args.command_line.clone());
    let p = &args.plan;
    results.set_meta(
        "method",
        format!(
            "{} warm-up calls; then {} batches of K back-to-back calls (K >= {} and >= {} ms per batch) \
between CUDA events on one stream; median of the batches; same input buffer every call",
            p.warmup_calls,
            p.reps,
            p.min_calls,
            p.min_batch_seconds * 1e3
        ),
    );

    // CUB first: its own process, before this one holds a context on the GPU.
    let mut failures = Vec::new();
    match cub_rows(args, log) {
        Ok(Some(output)) => {
            for (k, v) in &output.meta {
                results.set_meta(&format!("cub_{k}"), v.clone());
            }
            for e in &output.errors {
                eprintln!("reduce-bench: CUB: {e}");
                failures.push(format!("CUB: {e}"));
            }
            results.rows.extend(output.rows);
        }
        Ok(None) => {}
        Err(err) => {
            let message = format!("CUB is left out of this run: {err:#}");
            eprintln!("reduce-bench: {message}");
            let _ = writeln!(log, "{message}");
            results.set_meta("cub", format!("not measured: {err:#}"));
        }
    }

    // A failure that stops the GPU side still leaves CUB's rows and the log to write.
    match gpu::measure(args, &mut results, log) {
        Ok(more) => failures.extend(more),
        Err(err) => {
            let message = format!("warpsafe's side stopped: {err:#}");
            eprintln!("reduce-bench: {message}");
            let _ = writeln!(log, "{message}");
            failures.push(message);
        }
    }
    Ok((results, failures))
}

/// Builds (or takes) and runs CUB's program; `None` when `--no-cub`.
fn cub_rows(args: &Args, log: &mut String) -> anyhow::Result<Option<cub::CubOutput>> {
    let exe = match &args.cub {
        CubSource::Skip => return Ok(None),
        CubSource::Binary(path) => path.clone(),
        CubSource::Compile { nvcc } => {
            let nvcc = cub::find_nvcc(nvcc.as_deref()).ok_or_else(|| {
                anyhow::anyhow!("nvcc not found (give --nvcc PATH or --cub-binary PATH, or --no-cub)")
            })?;
            eprintln!("reduce-bench: building CUB's reference with {}", nvcc.display());
            let result = cub::build(&nvcc, &args.cub_build_dir, log);
            result?
        }
    };
    let run_args = cub::run_args(&args.sizes, &args.types, &args.ops, &args.plan);
    eprintln!("reduce-bench: running {} {}", exe.display(), run_args.join(" "));
    let started = std::time::Instant::now();
    let (output, raw) = cub::run(&exe, &run_args)?;
    let _ = writeln!(
        log,
        "$ {} {}\n{raw}(took {:.1} s)",
        exe.display(),
        run_args.join(" "),
        started.elapsed().as_secs_f64()
    );
    for line in &output.other {
        eprintln!("reduce-bench: CUB printed: {line}");
    }
    Ok(Some(output))
}

/// The report's header: what ran where and when.
fn header(results: &Results) -> String {
    let get = |k: &str| results.meta(k).unwrap_or("?");
    let mut h = String::new();
    let _ = writeln!(
        h,
        "reduce-bench, {} on {} ({} SMs, compute capability {}), driver {}, CUDA driver API {}",
        get("date"),
        get("gpu"),
        get("multiprocessors"),
        get("compute_capability"),
        get("driver"),
        results.meta("cub_cuda_driver_api").unwrap_or("?")
    );
    let _ = writeln!(
        h,
        "CUB {} built by nvcc {} (CUDA runtime {}); warpsafe PTX {}",
        get("cub_cub"),
        get("cub_nvcc"),
        get("cub_cuda_runtime"),
        get("warpsafe_ptx")
    );
    if let Some(c) = results.meta("cub") {
        let _ = writeln!(h, "CUB: {c}");
    }
    if let Some(m) = results.meta("method") {
        let _ = writeln!(h, "method: {m}");
    }
    if let Some(c) = results.meta("command") {
        let _ = writeln!(h, "command: {c}");
    }
    h
}

/// Prints and writes everything; the exit status says whether everything ran and every
/// result was right.
fn finish(args: &Args, results: &Results, failures: &[String], log: &str) -> anyhow::Result<ExitCode> {
    let mut text = header(results);
    text.push('\n');
    text.push_str(&report::table(results));
    let bad = results.bad_rows();
    for row in &bad {
        let _ = writeln!(
            text,
            "WRONG RESULT: {} {} {} {}: got {}, expected {:?}",
            row.implementation,
            row.ty,
            row.op.map_or("read", |o| o.name()),
            report::size_label(row.n),
            row.result,
            row.check
        );
    }
    for failure in failures {
        let _ = writeln!(text, "FAILED: {failure}");
    }
    text.push_str("targets (H100; warpsafe = auto):\n");
    for verdict in targets::evaluate(results) {
        let _ = writeln!(text, "  {verdict}");
    }
    print!("{text}");

    let write = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let path = args.out.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
    };
    write("reduce-bench.txt", text.as_bytes())?;
    write("reduce-bench.csv", report::to_csv(results).as_bytes())?;
    write("reduce-bench.svg", plot::svg(results)?.as_bytes())?;
    if !log.is_empty() {
        write("reduce-bench.log", log.as_bytes())?;
    }
    let shown = |name: &str| Path::new(&args.out).join(name).display().to_string();
    println!(
        "wrote {}, {}, {}{}",
        shown("reduce-bench.txt"),
        shown("reduce-bench.csv"),
        shown("reduce-bench.svg"),
        if log.is_empty() { String::new() } else { format!(", {}", shown("reduce-bench.log")) }
    );
    Ok(if bad.is_empty() && failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
