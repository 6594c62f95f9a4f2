//! The benchmarks' command lines: the flags every CUB comparison shares ([`CommonFlags`],
//! resolved into [`Common`]), and `reduce-bench`'s own ([`parse`]).

use std::path::PathBuf;

use crate::data::{ElemType, Op};
use crate::report::WARPSAFE;
use crate::timing::Plan;

/// Where CUB's numbers come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CubSource {
    /// Compile the reference program with this nvcc (or the one found).
    Compile {
        /// `--nvcc`.
        nvcc: Option<PathBuf>,
    },
    /// Run an existing build.
    Binary(PathBuf),
    /// No CUB.
    Skip,
}

/// What every CUB comparison's command line sets, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Common {
    /// Output folder.
    pub out: PathBuf,
    /// `--quick`.
    pub quick: bool,
    /// The timing plan.
    pub plan: Plan,
    /// CUB's source.
    pub cub: CubSource,
    /// Where to compile CUB's program.
    pub cub_build_dir: PathBuf,
    /// Re-plot this CSV instead of measuring.
    pub replot: Option<PathBuf>,
    /// Run on the CPU emulator instead of the GPU.
    pub emulator: bool,
    /// The command line as given, for the report.
    pub command_line: String,
}

/// The flags every CUB comparison shares (flattened into each benchmark's `clap` parser;
/// `--out` and `--cub-build-dir`, whose defaults differ, are the benchmark's own).
#[derive(clap::Args, Debug)]
pub struct CommonFlags {
    /// Fewer sizes and 5 batches of at least 5 ms (see --sizes for the default sizes).
    #[arg(long)]
    quick: bool,
    /// Timed batches per measurement.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    reps: Option<u32>,
    /// The shortest timed batch, in milliseconds (0 to 10000).
    #[arg(long, value_parser = parse_batch_ms)]
    min_batch_ms: Option<f64>,
    /// The fewest calls per timed batch.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    min_calls: Option<u32>,
    /// Skip CUB.
    #[arg(long)]
    no_cub: bool,
    /// Run this build of CUB's reference program instead of compiling one.
    #[arg(long)]
    cub_binary: Option<PathBuf>,
    /// Compile CUB's reference program with this nvcc (default: $NVCC, PATH,
    /// /usr/local/cuda).
    #[arg(long)]
    nvcc: Option<PathBuf>,
    /// No GPU: rebuild the table, plot and targets from an earlier run's CSV.
    #[arg(long)]
    replot: Option<PathBuf>,
    /// A functional dry run on the CPU emulator instead of the GPU (no CUB; checks every
    /// result, the times mean nothing); use tiny sizes.
    #[arg(long)]
    emulator: bool,
}

impl CommonFlags {
    /// The resolved settings, with the benchmark's `out` and `cub_build_dir`; `tool` and
    /// `argv` make the recorded command line.
    pub fn resolve(self, out: PathBuf, cub_build_dir: PathBuf, tool: &str, argv: &[String]) -> Common {
        let mut plan = if self.quick { Plan::QUICK } else { Plan::FULL };
        if let Some(r) = self.reps {
            plan.reps = r;
        }
        if let Some(ms) = self.min_batch_ms {
            plan.min_batch_seconds = ms / 1e3;
        }
        if let Some(c) = self.min_calls {
            plan.min_calls = c;
        }
        let cub = match (self.no_cub || self.emulator, self.cub_binary) {
            (true, _) => CubSource::Skip,
            (false, Some(path)) => CubSource::Binary(path),
            (false, None) => CubSource::Compile { nvcc: self.nvcc },
        };
        Common {
            out,
            quick: self.quick,
            plan,
            cub,
            cub_build_dir,
            replot: self.replot,
            emulator: self.emulator,
            command_line: std::iter::once(tool)
                .chain(argv.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Parses `argv` (the arguments after the program name) with the `clap` parser `C` as
/// program `tool`.
///
/// # Errors
/// `clap`'s, for `--help` and for arguments that do not parse.
pub fn parse_as<C: clap::Parser>(tool: &str, argv: &[String]) -> Result<C, clap::Error> {
    C::try_parse_from(std::iter::once(tool).chain(argv.iter().map(String::as_str)))
}

/// A parsed `reduce-bench` command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// The shared settings.
    pub common: Common,
    /// log2 sizes, ascending.
    pub sizes: Vec<u32>,
    /// Element types.
    pub types: Vec<ElemType>,
    /// Reductions.
    pub ops: Vec<Op>,
    /// warpsafe implementations (names from [`WARPSAFE`]).
    pub impls: Vec<&'static str>,
    /// Measure the roofline.
    pub roofline: bool,
}

/// The command line as `clap` parses it (`reduce-bench --help` prints these docs).
#[derive(clap::Parser, Debug)]
#[command(
    name = "reduce-bench",
    about = "warpsafe's reduce against CUB's DeviceReduce and a read roofline, on the GPU"
)]
struct Cli {
    /// Where the CSV, SVG plot and report go.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// log2 of the element counts, e.g. 16,20 (default: 10, 16, 20, 24, 26, 28; with
    /// --quick 16 to 28, no 10).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=30))]
    sizes: Option<Vec<u32>>,
    /// Element types among f32, f64, i32 (default all).
    #[arg(long, value_delimiter = ',', value_parser = parse_type)]
    types: Option<Vec<ElemType>>,
    /// Reductions among sum, max (default both).
    #[arg(long, value_delimiter = ',', value_parser = parse_op)]
    ops: Option<Vec<Op>>,
    /// warpsafe implementations among two-pass, last-block, cooperative, auto.
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(WARPSAFE))]
    impls: Option<Vec<String>>,
    /// Where reduce_cub is compiled.
    #[arg(long, default_value = "target/reduce-bench-cub")]
    cub_build_dir: PathBuf,
    /// Skip the read roofline.
    #[arg(long)]
    no_roofline: bool,
    #[command(flatten)]
    common: CommonFlags,
}

/// Parses an element type name (for `--types`).
///
/// # Errors
/// A message that names the types, for any other name.
pub fn parse_type(s: &str) -> Result<ElemType, String> {
    ElemType::parse(s).ok_or_else(|| format!("unknown type '{s}' (f32, f64, i32)"))
}

fn parse_op(s: &str) -> Result<Op, String> {
    Op::parse(s).ok_or_else(|| format!("unknown reduction '{s}' (sum, max)"))
}

fn parse_batch_ms(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=10_000.0).contains(&v) => Ok(v),
        _ => Err(format!("expected milliseconds from 0 to 10000, not '{s}'")),
    }
}

/// `v` without repeats, in first-seen order.
pub fn dedup<T: PartialEq + Clone>(mut v: Vec<T>) -> Vec<T> {
    let mut seen: Vec<T> = Vec::new();
    v.retain(|x| {
        let new = !seen.contains(x);
        if new {
            seen.push(x.clone());
        }
        new
    });
    v
}

/// Parses the arguments after the program name. `--help` and bad arguments come back as
/// `clap`'s error, whose `exit()` prints the help or the message.
///
/// # Errors
/// `clap`'s, for `--help` and for arguments that do not parse.
pub fn parse(argv: &[String]) -> Result<Args, clap::Error> {
    let cli: Cli = parse_as("reduce-bench", argv)?;
    let quick = cli.common.quick;
    let mut sizes =
        cli.sizes.unwrap_or_else(
            || {
                if quick {
                    vec![16, 20, 24, 26, 28]
                } else {
                    vec![10, 16, 20, 24, 26, 28]
                }
            },
        );
    sizes.sort();
    sizes.dedup();
    let impls: Vec<&'static str> = match cli.impls {
        Some(names) => {
            dedup(names).iter().filter_map(|n| WARPSAFE.iter().copied().find(|w| w == n)).collect()
        }
        None => WARPSAFE.to_vec(),
    };
    Ok(Args {
        common: cli.common.resolve(cli.out, cli.cub_build_dir, "reduce-bench", argv),
        sizes,
        types: dedup(cli.types.unwrap_or_else(|| ElemType::ALL.to_vec())),
        ops: dedup(cli.ops.unwrap_or_else(|| Op::ALL.to_vec())),
        impls,
        roofline: !cli.no_roofline,
    })
}

/// `args` as the owned strings `parse` takes (for tests).
#[cfg(test)]
pub(crate) fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Args {
        parse(&argv(args)).unwrap()
    }

    fn err(args: &[&str]) -> clap::Error {
        parse(&argv(args)).unwrap_err()
    }

    #[test]
    fn defaults() {
        let a = run(&[]);
        assert_eq!(a.common.out, PathBuf::from("target/bench"));
        assert_eq!(a.common.cub_build_dir, PathBuf::from("target/reduce-bench-cub"));
        assert_eq!(a.sizes, vec![10, 16, 20, 24, 26, 28]);
        assert_eq!(a.types, ElemType::ALL.to_vec());
        assert_eq!(a.ops, Op::ALL.to_vec());
        assert_eq!(a.impls, WARPSAFE.to_vec());
        assert_eq!(a.common.plan, Plan::FULL);
        assert_eq!(a.common.cub, CubSource::Compile { nvcc: None });
        assert!(a.roofline);
        assert!(!a.common.emulator);
        assert_eq!(a.common.command_line, "reduce-bench");
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
        assert_eq!(a.common.plan, Plan::QUICK);
        assert_eq!(run(&["--quick"]).sizes, vec![16, 20, 24, 26, 28]);
        let a = run(&["--reps", "9", "--min-batch-ms", "2.5", "--min-calls", "50"]);
        assert_eq!(
            (a.common.plan.reps, a.common.plan.min_batch_seconds, a.common.plan.min_calls),
            (9, 0.0025, 50)
        );
    }

    #[test]
    fn cub_sources() {
        assert_eq!(run(&["--no-cub"]).common.cub, CubSource::Skip);
        assert_eq!(
            run(&["--cub-binary", "/x/reduce_cub"]).common.cub,
            CubSource::Binary("/x/reduce_cub".into())
        );
        assert_eq!(
            run(&["--nvcc", "/opt/nvcc"]).common.cub,
            CubSource::Compile { nvcc: Some("/opt/nvcc".into()) }
        );
        assert_eq!(run(&["--replot", "r.csv"]).common.replot, Some(PathBuf::from("r.csv")));
        let e = run(&["--emulator"]);
        assert!(e.common.emulator);
        assert_eq!(e.common.cub, CubSource::Skip, "CUB needs the GPU");
    }

    #[test]
    fn errors_name_the_argument() {
        use clap::error::ErrorKind;
        let e = err(&["--sizes", "31"]);
        assert_eq!(e.kind(), ErrorKind::ValueValidation);
        assert!(e.to_string().contains("--sizes"), "{e}");
        assert!(err(&["--types", "f16"]).to_string().contains("unknown type 'f16'"));
        assert!(err(&["--reps", "0"]).to_string().contains("--reps"));
        assert!(err(&["--min-batch-ms", "20000"]).to_string().contains("expected milliseconds"));
        assert_eq!(err(&["--out"]).kind(), ErrorKind::InvalidValue);
        assert_eq!(err(&["--bogus"]).kind(), ErrorKind::UnknownArgument);
        assert_eq!(err(&["--help"]).kind(), ErrorKind::DisplayHelp);
        assert!(err(&["--help"]).to_string().contains("--min-batch-ms"));
    }
}
