//! CUB's side of the comparison: the CUDA C++ program `cub/reduce_cub.cu` (embedded in
//! this crate, so the benchmark binary needs no source tree), built with the GPU
//! machine's `nvcc`, run once, and its output parsed into rows.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

use crate::data::{ElemType, Op, Value};
use crate::report::{Check, Row, CUB};
use crate::timing::Timing;

/// The CUDA C++ source of the reference program.
pub const SOURCE: &str = include_str!("../cub/reduce_cub.cu");

/// What the reference program printed, parsed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CubOutput {
    /// `meta,<key>,<value>` lines.
    pub meta: Vec<(String, String)>,
    /// One row per `cub,...` line.
    pub rows: Vec<Row>,
    /// `error,<message>` lines.
    pub errors: Vec<String>,
    /// Lines that fit none of the above (kept for the log).
    pub other: Vec<String>,
}

/// Parses the reference program's output (the format is in `reduce_cub.cu`'s header).
pub fn parse(text: &str) -> CubOutput {
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
            match parse_record(rest) {
                Some(row) => out.rows.push(row),
                None => out.other.push(line.to_string()),
            }
        } else if !line.is_empty() {
            out.other.push(line.to_string());
        }
    }
    out
}

/// `<op>,<type>,<n>,<median>,<result>,<calls>,<reps>,<min>,<max>,<check>`.
fn parse_record(rest: &str) -> Option<Row> {
    let f: Vec<&str> = rest.split(',').collect();
    if f.len() != 10 {
        return None;
    }
    let op = Op::parse(f[0])?;
    let ty = ElemType::parse(f[1])?;
    let result = Value::parse(ty, f[4])?;
    let check = match f[9] {
        "ok" => Check::Ok,
        other => Check::Bad { expected: other.strip_prefix("bad:")?.to_string() },
    };
    Some(Row {
        implementation: CUB.to_string(),
        ty,
        op: Some(op),
        n: f[2].parse().ok()?,
        timing: Timing {
            seconds: f[3].parse().ok().filter(|s: &f64| *s > 0.0 && s.is_finite())?,
            calls: f[5].parse().ok()?,
            reps: f[6].parse().ok()?,
            min_seconds: f[7].parse().ok()?,
            max_seconds: f[8].parse().ok()?,
        },
        result: result.to_string(),
        check,
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

/// A stamp of what a build depends on: the source and the compiler path.
fn stamp(nvcc: &Path) -> String {
    // FNV-1a of the source: enough to notice an edit.
    let hash = SOURCE
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{hash:016x} {}", nvcc.display())
}

/// Builds the reference program into `dir` (reusing an earlier build of the same source
/// with the same `nvcc`) and returns the executable's path. The compiler's output goes to
/// `log`.
pub fn build(nvcc: &Path, dir: &Path, log: &mut String) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let source = dir.join("reduce_cub.cu");
    let exe = dir.join("reduce_cub");
    let stamp_path = dir.join("reduce_cub.stamp");
    let want = stamp(nvcc);
    if exe.is_file() && std::fs::read_to_string(&stamp_path).is_ok_and(|s| s == want) {
        log.push_str(&format!("reusing {} (same source and nvcc)\n", exe.display()));
        return Ok(exe);
    }
    std::fs::write(&source, SOURCE).with_context(|| format!("writing {}", source.display()))?;
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

/// The reference program's arguments for a run over `sizes` (log2), `types` and `ops`.
pub fn run_args(sizes: &[u32], types: &[ElemType], ops: &[Op], plan: &crate::timing::Plan) -> Vec<String> {
    let join = |items: Vec<String>| items.join(",");
    vec![
        "--sizes".into(),
        join(sizes.iter().map(|s| s.to_string()).collect()),
        "--types".into(),
        join(types.iter().map(|t| t.name().to_string()).collect()),
        "--ops".into(),
        join(ops.iter().map(|o| o.name().to_string()).collect()),
        "--reps".into(),
        plan.reps.to_string(),
        "--min-batch-ms".into(),
        ((plan.min_batch_seconds * 1e3).round() as u64).to_string(),
        "--min-calls".into(),
        plan.min_calls.to_string(),
    ]
}

/// Runs the reference program with `args`; returns its parsed output and raw text
/// (stdout, then stderr). A non-zero exit status is reported in `errors`, not as an
/// error, so that whatever it measured before failing is kept.
pub fn run(exe: &Path, args: &[String]) -> anyhow::Result<(CubOutput, String)> {
    let output =
        Command::new(exe).args(args).output().with_context(|| format!("running {}", exe.display()))?;
    let mut raw = String::from_utf8_lossy(&output.stdout).into_owned();
    raw.push_str(&String::from_utf8_lossy(&output.stderr));
    let mut parsed = parse(&String::from_utf8_lossy(&output.stdout));
    if !output.status.success() {
        parsed.errors.push(format!("{} exited with {}", exe.display(), output.status));
    }
    Ok((parsed, raw))
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

    #[test]
    fn nvcc_command_and_source() {
        let args = nvcc_args(Path::new("/x/reduce_cub.cu"), Path::new("/x/reduce_cub"), ARCHS[0]);
        assert_eq!(args.join(" "), "-O3 -std=c++17 -arch=native -o /x/reduce_cub /x/reduce_cub.cu");
        assert!(SOURCE.contains("cub::DeviceReduce::Sum") && SOURCE.contains("cub::DeviceReduce::Max"));
        let explicit = Path::new("/opt/nvcc");
        assert_eq!(find_nvcc(Some(explicit)), Some(explicit.to_path_buf()));
    }
}
