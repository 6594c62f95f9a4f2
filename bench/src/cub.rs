//! CUB's side of a comparison: a CUDA C++ program (`cub/reduce_cub.cu`, `cub/scan_cub.cu`,
//! `cub/segmented_cub.cu`, with the helpers they share in `cub/bench_common.cuh`; embedded
//! in this crate, so the benchmark binaries need no source tree), built with the GPU
//! machine's `nvcc`, run once as a child process, and its output parsed into rows.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

use crate::cli::{Common, CubSource};
use crate::data::{ElemType, Op, Value};
use crate::report::{Check, Results, Row, CUB};
use crate::timing::{Plan, Timing};

/// One reference program: its name (the executable's, and the source's without `.cu`)
/// and its source files, written side by side into the build folder; the first is the
/// one compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// The executable's name.
    pub name: &'static str,
    /// `(file name, text)`: the `.cu` file first, then the headers it includes.
    pub files: &'static [(&'static str, &'static str)],
}

/// The helpers every program includes: error checks, the timing method, argument parsing,
/// the input hash, the `meta` lines.
const COMMON: (&str, &str) = ("bench_common.cuh", include_str!("../cub/bench_common.cuh"));

/// `reduce-bench`'s reference: `cub::DeviceReduce`.
pub const REDUCE: Program =
    Program { name: "reduce_cub", files: &[("reduce_cub.cu", include_str!("../cub/reduce_cub.cu")), COMMON] };

/// `scan-bench`'s reference: `cub::DeviceScan`, `cub::DeviceSelect` and a device-to-device
/// copy.
pub const SCAN: Program =
    Program { name: "scan_cub", files: &[("scan_cub.cu", include_str!("../cub/scan_cub.cu")), COMMON] };

/// `histogram-bench`'s reference: `cub::DeviceHistogram::HistogramEven` and a read
/// ceiling.
pub const HISTOGRAM: Program = Program {
    name: "histogram_cub",
    files: &[("histogram_cub.cu", include_str!("../cub/histogram_cub.cu")), COMMON],
};

/// `segreduce-bench`'s reference: `cub::DeviceSegmentedReduce::Sum`.
pub const SEGMENTED: Program = Program {
    name: "segmented_cub",
    files: &[("segmented_cub.cu", include_str!("../cub/segmented_cub.cu")), COMMON],
};

impl Program {
    /// The source that is compiled (the first file's text).
    pub fn source(&self) -> &'static str {
        self.files[0].1
    }
}

/// What a reference program printed, parsed; `R` is the row type of its `cub,...` records.
#[derive(Clone, Debug, PartialEq)]
pub struct CubOutput<R = Row> {
    /// `meta,<key>,<value>` lines.
    pub meta: Vec<(String, String)>,
    /// One row per `cub,...` line.
    pub rows: Vec<R>,
    /// `error,<message>` lines.
    pub errors: Vec<String>,
    /// Lines that fit none of the above (kept for the log).
    pub other: Vec<String>,
}

impl<R> Default for CubOutput<R> {
    fn default() -> Self {
        CubOutput { meta: Vec::new(), rows: Vec::new(), errors: Vec::new(), other: Vec::new() }
    }
}

/// Parses a reference program's output: `meta,`, `error,` and `cub,` lines, the rest of
/// each `cub,` line parsed by `record` (a line it refuses goes to `other`).
pub fn parse_with<R>(text: &str, record: impl Fn(&str) -> Option<R>) -> CubOutput<R> {
    let mut out = CubOutput::default();
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix("meta,") {
            match rest.split_once(',') {
                Some((k, v)) => out.meta.push((k.to_string(), v.to_string())),
                None => out.other.push(line.to_string()),
            }
        } else if let Some(message) = line.strip_prefix("error,") {
            out.errors.push(message.to_string());
        } else if let Some(rest) = line.strip_prefix("cub,") {
            match record(rest) {
                Some(row) => out.rows.push(row),
                None => out.other.push(line.to_string()),
            }
        } else if !line.is_empty() {
            out.other.push(line.to_string());
        }
    }
    out
}

/// Parses `reduce_cub`'s output (the format is in `reduce_cub.cu`'s header).
pub fn parse(text: &str) -> CubOutput {
    parse_with(text, parse_record)
}

/// A record's check field: `ok`, or `bad:<expected>`.
pub fn parse_check(field: &str) -> Option<Check> {
    match field {
        "ok" => Some(Check::Ok),
        other => Some(Check::Bad { expected: other.strip_prefix("bad:")?.to_string() }),
    }
}

/// A timing from a record's fields as the programs print them: the median, the calls per
/// batch, the batches, the fastest and the slowest batch (seconds per call). `None`
/// unless every field parses and the median is positive and finite.
pub fn parse_timing(median: &str, calls: &str, reps: &str, min: &str, max: &str) -> Option<Timing> {
    Some(Timing {
        seconds: median.parse().ok().filter(|s: &f64| *s > 0.0 && s.is_finite())?,
        calls: calls.parse().ok()?,
        reps: reps.parse().ok()?,
        min_seconds: min.parse().ok()?,
        max_seconds: max.parse().ok()?,
    })
}

/// `<op>,<type>,<n>,<median>,<result>,<calls>,<reps>,<min>,<max>,<check>`.
pub fn parse_record(rest: &str) -> Option<Row> {
    let f: Vec<&str> = rest.split(',').collect();
    if f.len() != 10 {
        return None;
    }
    let op = Op::parse(f[0])?;
    let ty = ElemType::parse(f[1])?;
    let result = Value::parse(ty, f[4])?;
    Some(Row {
        implementation: CUB.to_string(),
        ty,
        op: Some(op),
        n: f[2].parse().ok()?,
        timing: parse_timing(f[3], f[5], f[6], f[7], f[8])?,
        result: result.to_string(),
        check: parse_check(f[9])?,
        detail: String::new(),
    })
}

/// Finds `nvcc`: `explicit`, else `$NVCC`, else on `PATH`, else under `$CUDA_HOME`,
/// `$CUDA_PATH` or `/usr/local/cuda`.
pub fn find_nvcc(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    let env_path = |var: &str| std::env::var_os(var).map(PathBuf::from);
    if let Some(p) = env_path("NVCC").filter(|p| p.is_file()) {
        return Some(p);
    }
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(p) = std::env::split_paths(&path).map(|d| d.join("nvcc")).find(|p| p.is_file()) {
            return Some(p);
        }
    }
    ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| env_path(v))
        .chain([PathBuf::from("/usr/local/cuda")])
        .map(|d| d.join("bin").join("nvcc"))
        .find(|p| p.is_file())
}

/// The GPU architectures to build for, in the order tried: the GPU nvcc finds on this
/// machine, else the H100's (for an nvcc that cannot query the GPU).
pub const ARCHS: [&str; 2] = ["native", "sm_90"];

/// The nvcc command line that builds `source` into `exe` for `arch`.
pub fn nvcc_args(source: &Path, exe: &Path, arch: &str) -> Vec<String> {
    vec![
        "-O3".into(),
        "-std=c++17".into(),
        format!("-arch={arch}"),
        "-o".into(),
        exe.display().to_string(),
        source.display().to_string(),
    ]
}

/// A stamp of what a build depends on: the program's files and the compiler path.
fn stamp(program: &Program, nvcc: &Path) -> String {
    // FNV-1a of the files: enough to notice an edit.
    let hash = program
        .files
        .iter()
        .flat_map(|(name, text)| name.bytes().chain(text.bytes()))
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{hash:016x} {}", nvcc.display())
}

/// Builds `program` into `dir` (reusing an earlier build of the same files with the same
/// `nvcc`) and returns the executable's path. The compiler's output goes to `log`.
pub fn build(program: &Program, nvcc: &Path, dir: &Path, log: &mut String) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let source = dir.join(program.files[0].0);
    let exe = dir.join(program.name);
    let stamp_path = dir.join(format!("{}.stamp", program.name));
    let want = stamp(program, nvcc);
    if exe.is_file() && std::fs::read_to_string(&stamp_path).is_ok_and(|s| s == want) {
        log.push_str(&format!("reusing {} (same source and nvcc)\n", exe.display()));
        return Ok(exe);
    }
    for (name, text) in program.files {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let mut failures = Vec::new();
    for arch in ARCHS {
        let args = nvcc_args(&source, &exe, arch);
        log.push_str(&format!("$ {} {}\n", nvcc.display(), args.join(" ")));
        let started = std::time::Instant::now();
        let output =
            Command::new(nvcc).args(&args).output().with_context(|| format!("running {}", nvcc.display()))?;
        log.push_str(&String::from_utf8_lossy(&output.stdout));
        log.push_str(&String::from_utf8_lossy(&output.stderr));
        log.push_str(&format!("(nvcc took {:.1} s, {})\n", started.elapsed().as_secs_f64(), output.status));
        if output.status.success() {
            std::fs::write(&stamp_path, want).with_context(|| format!("writing {}", stamp_path.display()))?;
            return Ok(exe);
        }
        failures.push(format!("-arch={arch}: {}", output.status));
    }
    anyhow::bail!("nvcc failed ({}); its output is in the log", failures.join(", "))
}

/// The timing flags every program takes, from `plan`.
pub fn plan_args(plan: &Plan) -> Vec<String> {
    vec![
        "--reps".into(),
        plan.reps.to_string(),
        "--min-batch-ms".into(),
        ((plan.min_batch_seconds * 1e3).round() as u64).to_string(),
        "--min-calls".into(),
        plan.min_calls.to_string(),
    ]
}

/// A comma-separated list, as the programs take them.
pub fn list<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    items.into_iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

/// `reduce_cub`'s arguments for a run over `sizes` (log2), `types` and `ops`.
pub fn run_args(sizes: &[u32], types: &[ElemType], ops: &[Op], plan: &Plan) -> Vec<String> {
    let mut args = vec![
        "--sizes".into(),
        list(sizes),
        "--types".into(),
        list(types.iter().map(|t| t.name())),
        "--ops".into(),
        list(ops.iter().map(|o| o.name())),
    ];
    args.extend(plan_args(plan));
    args
}

/// Runs a reference program with `args`; returns its output parsed by [`parse_with`] with
/// `record`, and its raw text (stdout, then stderr). A non-zero exit status is reported in
/// `errors`, not as an error, so that whatever it measured before failing is kept.
pub fn run_with<R>(
    exe: &Path,
    args: &[String],
    record: impl Fn(&str) -> Option<R>,
) -> anyhow::Result<(CubOutput<R>, String)> {
    let output =
        Command::new(exe).args(args).output().with_context(|| format!("running {}", exe.display()))?;
    let mut raw = String::from_utf8_lossy(&output.stdout).into_owned();
    raw.push_str(&String::from_utf8_lossy(&output.stderr));
    let mut parsed = parse_with(&String::from_utf8_lossy(&output.stdout), record);
    if !output.status.success() {
        parsed.errors.push(format!("{} exited with {}", exe.display(), output.status));
    }
    Ok((parsed, raw))
}

/// Builds (or takes) and runs `program` with `args` as `common` asks; `None` when CUB is
/// skipped. Progress goes to stderr prefixed with `tool`, the build and the run's output
/// to `log`.
pub fn obtain_and_run<R>(
    tool: &str,
    program: &Program,
    common: &Common,
    args: &[String],
    record: impl Fn(&str) -> Option<R>,
    log: &mut String,
) -> anyhow::Result<Option<CubOutput<R>>> {
    let exe = match &common.cub {
        CubSource::Skip => return Ok(None),
        CubSource::Binary(path) => path.clone(),
        CubSource::Compile { nvcc } => {
            let nvcc = find_nvcc(nvcc.as_deref()).ok_or_else(|| {
                anyhow::anyhow!("nvcc not found (give --nvcc PATH or --cub-binary PATH, or --no-cub)")
            })?;
            eprintln!("{tool}: building CUB's reference with {}", nvcc.display());
            build(program, &nvcc, &common.cub_build_dir, log)?
        }
    };
    eprintln!("{tool}: running {} {}", exe.display(), args.join(" "));
    let started = std::time::Instant::now();
    let (output, raw) = run_with(&exe, args, record)?;
    log.push_str(&format!(
        "$ {} {}\n{raw}(took {:.1} s)\n",
        exe.display(),
        args.join(" "),
        started.elapsed().as_secs_f64()
    ));
    for line in &output.other {
        eprintln!("{tool}: CUB printed: {line}");
    }
    Ok(Some(output))
}

/// Adds what [`obtain_and_run`] returned to `results`: its facts (as `cub_<key>`), its
/// rows, and its errors to `failures`; when it failed, says so in `results` (fact `cub`),
/// on stderr and in `log`.
pub fn merge<R>(
    tool: &str,
    outcome: anyhow::Result<Option<CubOutput<R>>>,
    results: &mut Results<R>,
    failures: &mut Vec<String>,
    log: &mut String,
) {
    match outcome {
        Ok(Some(output)) => {
            for (k, v) in output.meta {
                results.set_meta(&format!("cub_{k}"), v);
            }
            for e in &output.errors {
                eprintln!("{tool}: CUB: {e}");
                failures.push(format!("CUB: {e}"));
            }
            results.rows.extend(output.rows);
        }
        Ok(None) => {}
        Err(err) => {
            let message = format!("CUB is left out of this run: {err:#}");
            eprintln!("{tool}: {message}");
            log.push_str(&message);
            log.push('\n');
            results.set_meta("cub", format!("not measured: {err:#}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "meta,device,NVIDIA H100 80GB HBM3\n\
meta,cuda_driver_api,13.0\n\
meta,cub,3.0.1\n\
cub,sum,f32,1048576,5.123400e-06,-2208,1952,7,5.100000e-06,5.200000e-06,ok\n\
cub,max,f64,1024,3.000000e-06,1048576,3334,7,2.900000e-06,3.100000e-06,ok\n\
cub,sum,i32,1024,3.000000e-06,12,3334,7,2.900000e-06,3.100000e-06,bad:-1068\n\
cub,sum,f16,1024,3.000000e-06,12,3334,7,2.900000e-06,3.100000e-06,ok\n\
warning: something else\n\
error,cudaMalloc failed at reduce_cub.cu:1: cudaErrorMemoryAllocation (out of memory)\n";

    #[test]
    fn parses_records_meta_and_errors() {
        let out = parse(SAMPLE);
        assert_eq!(out.meta[0], ("device".to_string(), "NVIDIA H100 80GB HBM3".to_string()));
        assert_eq!(out.meta.len(), 3);
        assert_eq!(out.rows.len(), 3);
        let r = &out.rows[0];
        assert_eq!(
            (r.implementation.as_str(), r.ty, r.op, r.n),
            (CUB, ElemType::F32, Some(Op::Sum), 1 << 20)
        );
        assert_eq!(
            r.timing,
            Timing { seconds: 5.1234e-6, min_seconds: 5.1e-6, max_seconds: 5.2e-6, calls: 1952, reps: 7 }
        );
        assert_eq!(r.result, "-2208");
        assert_eq!(r.check, Check::Ok);
        assert_eq!(out.rows[2].check, Check::Bad { expected: "-1068".into() });
        assert_eq!(
            out.errors,
            vec!["cudaMalloc failed at reduce_cub.cu:1: cudaErrorMemoryAllocation (out of memory)"]
        );
        assert_eq!(out.other.len(), 2, "the f16 record and the stray line");
    }

    #[test]
    fn rejects_malformed_records() {
        for bad in [
            "cub,sum,f32,1024,abc,1,20,7,1e-6,1e-6,ok",
            "cub,sum,f32,1024,0,1,20,7,1e-6,1e-6,ok",
            "cub,sum,f32,1024,1e-6,1,20,7,1e-6,1e-6",
            "cub,sum,f32,1024,1e-6,x,20,7,1e-6,1e-6,ok",
            "cub,sum,f32,1024,1e-6,1,20,7,1e-6,1e-6,maybe",
        ] {
            let out = parse(bad);
            assert!(out.rows.is_empty(), "{bad}");
            assert_eq!(out.other.len(), 1);
        }
    }

    #[test]
    fn run_args_pass_the_plan() {
        let args = run_args(&[16, 20], &[ElemType::F32], &[Op::Sum, Op::Max], &crate::timing::Plan::QUICK);
        assert_eq!(
            args.join(" "),
            "--sizes 16,20 --types f32 --ops sum,max --reps 5 --min-batch-ms 5 --min-calls 20"
        );
    }

    fn explicit_nvcc() -> &'static Path {
        Path::new("/opt/nvcc")
    }

    #[test]
    fn nvcc_command_and_source() {
        let args = nvcc_args(Path::new("/x/reduce_cub.cu"), Path::new("/x/reduce_cub"), ARCHS[0]);
        assert_eq!(args.join(" "), "-O3 -std=c++17 -arch=native -o /x/reduce_cub /x/reduce_cub.cu");
        let reduce = REDUCE.source();
        assert!(reduce.contains("cub::DeviceReduce::Sum") && reduce.contains("cub::DeviceReduce::Max"));
        let scan = SCAN.source();
        for call in [
            "DeviceScan::InclusiveSum",
            "DeviceScan::ExclusiveSum",
            "DeviceSelect::If",
            "DeviceSelect::Flagged",
        ] {
            assert!(scan.contains(call), "{call}");
        }
        assert!(SEGMENTED.source().contains("cub::DeviceSegmentedReduce::Sum"));
        for program in [REDUCE, SCAN, HISTOGRAM, SEGMENTED] {
            assert!(program.source().contains("#include \"bench_common.cuh\""), "{}", program.name);
            assert_eq!(program.files[0].0, format!("{}.cu", program.name));
        }
        assert_ne!(stamp(&REDUCE, explicit_nvcc()), stamp(&SCAN, explicit_nvcc()));
        assert_eq!(find_nvcc(Some(explicit_nvcc())), Some(explicit_nvcc().to_path_buf()));
    }
}
