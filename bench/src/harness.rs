//! The flow every CUB comparison shares (`reduce-bench`, `scan-bench`): the exit path of
//! `main`, the run's facts, `--replot` or measure, CUB's program run before this process
//! opens the GPU, the device and its facts, the progress bar, failures that do not stop
//! the run, and the report printed and written to `--out`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use warpsafe_host::{Device, Stream};

use crate::cli::Common;
use crate::report::Results;
use crate::targets::Verdict;
use crate::{cub, meta};

/// `main` of a benchmark: parses the arguments with `parse` (`--help` and bad arguments
/// exit through `clap`), runs `run`, and prints an error prefixed with `tool`.
pub fn main_with<A>(
    tool: &str,
    parse: impl FnOnce(&[String]) -> Result<A, clap::Error>,
    run: impl FnOnce(&A) -> anyhow::Result<ExitCode>,
) -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&argv) {
        Ok(args) => args,
        // --help, or a bad argument: clap prints it and picks the exit code.
        Err(err) => err.exit(),
    };
    match run(&args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{tool}: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// CUB's side of a benchmark: its reference program, the program's arguments, and the
/// parser of its `cub,` records.
pub struct CubRun<'a, R> {
    /// The program.
    pub program: &'a cub::Program,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its records' parser (after the `cub,` prefix).
    pub record: fn(&str) -> Option<R>,
}

/// The results of `--replot`'s CSV (read with `from_csv`), or of a measurement: the run's
/// facts, then CUB's program run first (its own process, before this one holds a context
/// on the GPU), then `device`, warpsafe's side (a failure that stops it still leaves CUB's
/// rows and the log to write). Also returns the failures along the way and the log.
/// Creates the output folder first.
///
/// # Errors
/// The output folder cannot be created, or the CSV cannot be read or parsed.
#[allow(clippy::type_complexity)]
pub fn replot_or_measure<R>(
    tool: &str,
    common: &Common,
    from_csv: impl FnOnce(&str) -> Result<Results<R>, String>,
    cub: CubRun<'_, R>,
    device: impl FnOnce(&mut Results<R>, &mut String) -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<(Results<R>, Vec<String>, String)> {
    std::fs::create_dir_all(&common.out).with_context(|| format!("creating {}", common.out.display()))?;
    let mut log = String::new();
    let mut failures = Vec::new();
    if let Some(csv) = &common.replot {
        let text = std::fs::read_to_string(csv).with_context(|| format!("reading {}", csv.display()))?;
        let results = from_csv(&text).map_err(|e| anyhow::anyhow!("{}: {e}", csv.display()))?;
        return Ok((results, failures, log));
    }
    let mut results = facts(common);
    let output = cub::obtain_and_run(tool, cub.program, common, &cub.args, cub.record, &mut log);
    cub::merge(tool, output, &mut results, &mut failures, &mut log);
    match device(&mut results, &mut log) {
        Ok(more) => failures.extend(more),
        Err(err) => {
            let message = format!("warpsafe's side stopped: {err:#}");
            eprintln!("{tool}: {message}");
            let _ = writeln!(log, "{message}");
            failures.push(message);
        }
    }
    Ok((results, failures, log))
}

/// Empty results with the run's facts: date, driver, command line, timing method.
fn facts<R>(common: &Common) -> Results<R> {
    let mut results = Results::default();
    results.set_meta("date", meta::today_utc());
    if let Some(driver) = meta::nvidia_driver_version() {
        results.set_meta("driver", driver);
    }
    results.set_meta("command", common.command_line.clone());
    let p = &common.plan;
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
    results
}

/// The GPU, or with `emulator` the CPU emulator; its facts go into `results` (`gpu`,
/// `multiprocessors`, and on a GPU `compute_capability` and `warpsafe_ptx`).
fn open_device<R>(tool: &str, emulator: bool, results: &mut Results<R>) -> anyhow::Result<Device> {
    let device = if emulator {
        Device::emulator()
    } else {
        Device::gpu().with_context(|| format!("{tool} needs a CUDA GPU (or --emulator for a dry run)"))?
    };
    results.set_meta("gpu", device.name());
    results.set_meta("multiprocessors", device.multiprocessor_count().to_string());
    if let Some(gpu) = device.as_gpu() {
        let (major, minor) = gpu.compute_capability();
        results.set_meta("compute_capability", format!("{major}.{minor}"));
        results.set_meta("warpsafe_ptx", format!("sm_{}", gpu.ptx_arch()));
    }
    Ok(device)
}

/// A progress bar over `measurements` on a terminal (hidden otherwise); log lines go above
/// it through [`Progress::note`].
pub struct Progress {
    /// The bar.
    pub bar: indicatif::ProgressBar,
    tool: &'static str,
}

impl Progress {
    /// A bar of `measurements` steps for `tool`.
    pub fn new(tool: &'static str, measurements: u64) -> Progress {
        let bar = indicatif::ProgressBar::new(measurements).with_style(
            indicatif::ProgressStyle::with_template("{bar:32} {pos}/{len} measurements, {msg} [{elapsed}]")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Progress { bar, tool }
    }

    /// Prints `message` above the bar, prefixed with the tool's name.
    pub fn note(&self, message: &str) {
        self.bar.suspend(|| eprintln!("{}: {message}", self.tool));
    }
}

/// The device side of a run: the device, one stream, the progress bar, and where the rows,
/// the log lines and the failures that do not stop the run go.
pub struct Session<'a, R> {
    /// The GPU or the emulator.
    pub device: Device,
    /// The stream every call goes to.
    pub stream: Stream,
    /// The progress bar.
    pub progress: Progress,
    /// The run's results.
    pub results: &'a mut Results<R>,
    /// The run's log.
    pub log: &'a mut String,
    /// Failures so far.
    pub failures: Vec<String>,
}

impl<'a, R> Session<'a, R> {
    /// Opens the GPU (or with `emulator` the CPU emulator; its facts go into `results`:
    /// `gpu`, `multiprocessors`, and on a GPU `compute_capability` and `warpsafe_ptx`), a
    /// stream on it, and a progress bar over `measurements`.
    ///
    /// # Errors
    /// No CUDA GPU, or no stream.
    pub fn open(
        tool: &'static str,
        emulator: bool,
        measurements: usize,
        results: &'a mut Results<R>,
        log: &'a mut String,
    ) -> anyhow::Result<Self> {
        let device = open_device(tool, emulator, results)?;
        let stream = device.stream()?;
        let progress = Progress::new(tool, measurements as u64);
        Ok(Session { device, stream, progress, results, log, failures: Vec::new() })
    }

    /// Prints `message` above the bar and logs it.
    pub fn note(&mut self, message: &str) {
        self.progress.note(message);
        let _ = writeln!(self.log, "{message}");
    }

    /// A failure that does not stop the run: printed, logged and kept.
    pub fn failure(&mut self, message: String) {
        self.note(&message);
        self.failures.push(message);
    }

    /// Keeps a measurement's row, or its error as a failure of `what`; one step of the bar.
    pub fn keep(&mut self, measured: anyhow::Result<R>, what: impl FnOnce() -> String) {
        match measured {
            Ok(row) => self.results.rows.push(row),
            Err(err) => self.failure(format!("{}: {err:#}", what())),
        }
        self.progress.bar.inc(1);
    }

    /// Clears the bar; returns the failures.
    pub fn finish(self) -> Vec<String> {
        self.progress.bar.finish_and_clear();
        self.failures
    }
}

/// Calls `$bench::<T>($ctx)?` for each [`crate::data::ElemType`] in `$types`, `T` the
/// type's Rust type: the benchmarks' per-type loop over their generic measurements.
#[macro_export]
macro_rules! for_each_type {
    ($types:expr, $bench:ident($ctx:expr)) => {
        for &ty in $types {
            match ty {
                $crate::data::ElemType::F32 => $bench::<f32>($ctx)?,
                $crate::data::ElemType::F64 => $bench::<f64>($ctx)?,
                $crate::data::ElemType::I32 => $bench::<i32>($ctx)?,
            }
        }
    };
}

/// Writes `files` (`(name, contents)`) into `out` and prints where they went.
fn write_outputs(out: &Path, files: &[(String, Vec<u8>)]) -> anyhow::Result<()> {
    let mut shown = Vec::new();
    for (name, bytes) in files {
        let path = out.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        shown.push(path.display().to_string());
    }
    println!("wrote {}", shown.join(", "));
    Ok(())
}

/// Success when every result was right and nothing failed.
fn exit_code(all_right: bool, failures: &[String]) -> ExitCode {
    if all_right && failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What a benchmark prints and writes at the end of a run.
pub struct Report {
    /// The files' stem: `<stem>.txt`, `.csv`, `.svg`, `.log`.
    pub stem: &'static str,
    /// The header and tables.
    pub body: String,
    /// One line per wrong result (after `WRONG RESULT: `).
    pub wrong: Vec<String>,
    /// The targets' heading, e.g. `targets (H100; warpsafe = auto)`.
    pub targets_heading: &'static str,
    /// The targets' verdicts.
    pub verdicts: Vec<Verdict>,
    /// The CSV.
    pub csv: String,
    /// The plot.
    pub svg: String,
}

/// Prints `report` (body, wrong results, `failures`, targets) and writes it, the CSV, the
/// plot and the `log` (when not empty) into `out`; the exit status says whether
/// everything ran and every result was right.
///
/// # Errors
/// A file cannot be written.
pub fn finish(out: &Path, report: Report, failures: &[String], log: &str) -> anyhow::Result<ExitCode> {
    let mut text = report.body;
    for line in &report.wrong {
        let _ = writeln!(text, "WRONG RESULT: {line}");
    }
    for failure in failures {
        let _ = writeln!(text, "FAILED: {failure}");
    }
    let _ = writeln!(text, "{}:", report.targets_heading);
    for verdict in &report.verdicts {
        let _ = writeln!(text, "  {verdict}");
    }
    print!("{text}");
    let stem = report.stem;
    let mut files = vec![
        (format!("{stem}.txt"), text.into_bytes()),
        (format!("{stem}.csv"), report.csv.into_bytes()),
        (format!("{stem}.svg"), report.svg.into_bytes()),
    ];
    if !log.is_empty() {
        files.push((format!("{stem}.log"), log.as_bytes().to_vec()));
    }
    write_outputs(out, &files)?;
    Ok(exit_code(report.wrong.is_empty(), failures))
}
