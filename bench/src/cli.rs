//! `reduce-bench`'s command line.

use std::path::PathBuf;

use crate::data::{ElemType, Op};
use crate::report::WARPSAFE;
use crate::timing::Plan;

/// The help text.
pub const USAGE: &str = "\
reduce-bench: warpsafe's reduce against CUB's DeviceReduce and a read roofline, on the GPU

usage: reduce-bench [options]

  --out DIR            where the CSV, PNG and report go (default target/bench)
  --quick              sizes 2^16 to 2^28 (no 2^10) and 5 batches of >= 5 ms
                       (default: 2^10,2^16,2^20,2^24,2^26,2^28 and 7 batches of >= 10 ms)
  --sizes LIST         log2 of the element counts, e.g. 16,20 (0 to 30)
  --types LIST         element types among f32,f64,i32 (default all)
  --ops LIST           reductions among sum,max (default both)
  --impls LIST         warpsafe implementations among two-pass,last-block,cooperative,auto
  --reps N             timed batches per measurement (at least 5 unless asked otherwise)
  --min-batch-ms MS    shortest timed batch
  --min-calls N        fewest calls per timed batch
  --no-cub             skip CUB
  --cub-binary PATH    run this reduce_cub build instead of compiling one
  --nvcc PATH          compile reduce_cub with this nvcc (default: $NVCC, PATH, /usr/local/cuda)
  --cub-build-dir DIR  where reduce_cub is compiled (default target/reduce-bench-cub)
  --no-roofline        skip the read roofline
  --replot CSV         no GPU: rebuild the table, plot and targets from an earlier run's CSV
  --emulator           a functional dry run on the CPU emulator instead of the GPU (no CUB;
                       checks every result, times mean nothing); use tiny sizes
  -h, --help           this text
";

/// Where CUB's numbers come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CubSource {
    /// Compile `reduce_cub.cu` with this nvcc (or the one found).
    Compile {
        /// `--nvcc`.
        nvcc: Option<PathBuf>,
    },
    /// Run an existing build.
    Binary(PathBuf),
    /// No CUB.
    Skip,
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// Output folder.
    pub out: PathBuf,
    /// log2 sizes, ascending.
    pub sizes: Vec<u32>,
    /// Element types.
    pub types: Vec<ElemType>,
    /// Reductions.
    pub ops: Vec<Op>,
    /// warpsafe implementations (names from [`WARPSAFE`]).
    pub impls: Vec<&'static str>,
    /// The timing plan.
    pub plan: Plan,
    /// CUB's source.
    pub cub: CubSource,
    /// Where to compile CUB's program.
    pub cub_build_dir: PathBuf,
    /// Measure the roofline.
    pub roofline: bool,
    /// Re-plot this CSV instead of measuring.
    pub replot: Option<PathBuf>,
    /// Run on the CPU emulator instead of the GPU.
    pub emulator: bool,
    /// The command line as given, for the report.
    pub command_line: String,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Print [`USAGE`].
    Help,
    /// Run (or re-plot).
    Run(Box<Args>),
}

fn list<T>(flag: &str, value: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, String> {
    let items: Result<Vec<T>, String> = value
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| parse(s).ok_or_else(|| format!("{flag}: unknown value '{s}'")))
        .collect();
    let items = items?;
    if items.is_empty() {
        return Err(format!("{flag} needs at least one value"));
    }
    Ok(items)
}

fn number<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    flag: &str,
    value: &str,
    lo: T,
    hi: T,
) -> Result<T, String> {
    match value.parse::<T>() {
        Ok(v) if v >= lo && v <= hi => Ok(v),
        _ => Err(format!("{flag} expects a number from {lo} to {hi}, not '{value}'")),
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut quick = false;
    let mut out = PathBuf::from("target/bench");
    let mut sizes = None;
    let mut types = ElemType::ALL.to_vec();
    let mut ops = Op::ALL.to_vec();
    let mut impls = WARPSAFE.to_vec();
    let (mut reps, mut min_batch_ms, mut min_calls) = (None, None, None);
    let mut cub = CubSource::Compile { nvcc: None };
    let mut nvcc = None;
    let mut cub_build_dir = PathBuf::from("target/reduce-bench-cub");
    let mut roofline = true;
    let mut replot = None;
    let mut emulator = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--quick" => quick = true,
            "--out" => out = PathBuf::from(value()?),
            "--sizes" => {
                let mut s = list(flag, &value()?, |s| s.parse::<u32>().ok().filter(|&k| k <= 30))?;
                s.sort();
                s.dedup();
                sizes = Some(s);
            }
            "--types" => types = list(flag, &value()?, ElemType::parse)?,
            "--ops" => ops = list(flag, &value()?, Op::parse)?,
            "--impls" => impls = list(flag, &value()?, |s| WARPSAFE.iter().copied().find(|w| *w == s))?,
            "--reps" => reps = Some(number(flag, &value()?, 1u32, 1000)?),
            "--min-batch-ms" => min_batch_ms = Some(number(flag, &value()?, 0.0f64, 10_000.0)?),
            "--min-calls" => min_calls = Some(number(flag, &value()?, 1u32, 1_000_000)?),
            "--no-cub" => cub = CubSource::Skip,
            "--cub-binary" => cub = CubSource::Binary(PathBuf::from(value()?)),
            "--nvcc" => nvcc = Some(PathBuf::from(value()?)),
            "--cub-build-dir" => cub_build_dir = PathBuf::from(value()?),
            "--no-roofline" => roofline = false,
            "--replot" => replot = Some(PathBuf::from(value()?)),
            "--emulator" => emulator = true,
            other => return Err(format!("unknown argument '{other}' (see --help)")),
        }
    }
    if let (CubSource::Compile { nvcc: slot }, Some(path)) = (&mut cub, nvcc) {
        *slot = Some(path);
    }
    if emulator {
        cub = CubSource::Skip;
    }
    types.dedup();
    ops.dedup();
    impls.dedup();
    let mut plan = if quick { Plan::QUICK } else { Plan::FULL };
    if let Some(r) = reps {
        plan.reps = r;
    }
    if let Some(ms) = min_batch_ms {
        plan.min_batch_seconds = ms / 1e3;
    }
    if let Some(c) = min_calls {
        plan.min_calls = c;
    }
    let sizes =
        sizes.unwrap_or_else(|| if quick { vec![16, 20, 24, 26, 28] } else { vec![10, 16, 20, 24, 26, 28] });
    let command_line =
        std::iter::once("reduce-bench").chain(args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ");
    Ok(Command::Run(Box::new(Args {
        out,
        sizes,
        types,
        ops,
        impls,
        plan,
        cub,
        cub_build_dir,
        roofline,
        replot,
        emulator,
        command_line,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Args {
        match parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap() {
            Command::Run(a) => *a,
            Command::Help => panic!("help"),
        }
    }

    fn err(args: &[&str]) -> String {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err()
    }

    #[test]
    fn defaults() {
        let a = run(&[]);
        assert_eq!(a.out, PathBuf::from("target/bench"));
        assert_eq!(a.sizes, vec![10, 16, 20, 24, 26, 28]);
        assert_eq!(a.types, ElemType::ALL.to_vec());
        assert_eq!(a.ops, Op::ALL.to_vec());
        assert_eq!(a.impls, WARPSAFE.to_vec());
        assert_eq!(a.plan, Plan::FULL);
        assert_eq!(a.cub, CubSource::Compile { nvcc: None });
        assert!(a.roofline);
        assert!(!a.emulator);
        assert_eq!(a.command_line, "reduce-bench");
    }

    #[test]
    fn quick_and_filters() {
        let a = run(&[
            "--quick",
            "--sizes",
            "28,16",
            "--types",
            "f32",
            "--ops",
            "sum",
            "--impls",
            "auto,two-pass",
        ]);
        assert_eq!(a.sizes, vec![16, 28]);
        assert_eq!(a.types, vec![ElemType::F32]);
        assert_eq!(a.ops, vec![Op::Sum]);
        assert_eq!(a.impls, vec!["auto", "two-pass"]);
        assert_eq!(a.plan, Plan::QUICK);
        assert_eq!(run(&["--quick"]).sizes, vec![16, 20, 24, 26, 28]);
        let a = run(&["--reps", "9", "--min-batch-ms", "2.5", "--min-calls", "50"]);
        assert_eq!((a.plan.reps, a.plan.min_batch_seconds, a.plan.min_calls), (9, 0.0025, 50));
    }

    #[test]
    fn cub_sources() {
        assert_eq!(run(&["--no-cub"]).cub, CubSource::Skip);
        assert_eq!(run(&["--cub-binary", "/x/reduce_cub"]).cub, CubSource::Binary("/x/reduce_cub".into()));
        assert_eq!(run(&["--nvcc", "/opt/nvcc"]).cub, CubSource::Compile { nvcc: Some("/opt/nvcc".into()) });
        assert_eq!(run(&["--replot", "r.csv"]).replot, Some(PathBuf::from("r.csv")));
        let e = run(&["--emulator"]);
        assert!(e.emulator);
        assert_eq!(e.cub, CubSource::Skip, "CUB needs the GPU");
    }

    #[test]
    fn errors() {
        assert_eq!(err(&["--sizes", "31"]), "--sizes: unknown value '31'");
        assert_eq!(err(&["--types", "f16"]), "--types: unknown value 'f16'");
        assert_eq!(err(&["--ops", ","]), "--ops needs at least one value");
        assert_eq!(err(&["--reps", "0"]), "--reps expects a number from 1 to 1000, not '0'");
        assert_eq!(err(&["--out"]), "--out needs a value");
        assert_eq!(err(&["--bogus"]), "unknown argument '--bogus' (see --help)");
        assert_eq!(parse(&["-h".to_string()]).unwrap(), Command::Help);
    }
}
