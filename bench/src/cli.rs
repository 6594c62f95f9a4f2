//! `reduce-bench`'s command line.

use std::path::PathBuf;

use crate::data::{ElemType, Op};
use crate::report::WARPSAFE;
use crate::timing::Plan;

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
    /// Sizes 2^16 to 2^28 (no 2^10) and 5 batches of at least 5 ms (default: 2^10, 2^16,
    /// 2^20, 2^24, 2^26, 2^28 and 7 batches of at least 10 ms).
    #[arg(long)]
    quick: bool,
    /// log2 of the element counts, e.g. 16,20.
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
    /// Run this reduce_cub build instead of compiling one.
    #[arg(long)]
    cub_binary: Option<PathBuf>,
    /// Compile reduce_cub with this nvcc (default: $NVCC, PATH, /usr/local/cuda).
    #[arg(long)]
    nvcc: Option<PathBuf>,
    /// Where reduce_cub is compiled.
    #[arg(long, default_value = "target/reduce-bench-cub")]
    cub_build_dir: PathBuf,
    /// Skip the read roofline.
    #[arg(long)]
    no_roofline: bool,
    /// No GPU: rebuild the table, plot and targets from an earlier run's CSV.
    #[arg(long)]
    replot: Option<PathBuf>,
    /// A functional dry run on the CPU emulator instead of the GPU (no CUB; checks every
    /// result, the times mean nothing); use tiny sizes.
    #[arg(long)]
    emulator: bool,
}

fn parse_type(s: &str) -> Result<ElemType, String> {
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
fn dedup<T: PartialEq + Clone>(mut v: Vec<T>) -> Vec<T> {
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
    use clap::Parser as _;
    let cli = Cli::try_parse_from(std::iter::once("reduce-bench").chain(argv.iter().map(String::as_str)))?;
    let mut plan = if cli.quick { Plan::QUICK } else { Plan::FULL };
    if let Some(r) = cli.reps {
        plan.reps = r;
    }
    if let Some(ms) = cli.min_batch_ms {
        plan.min_batch_seconds = ms / 1e3;
    }
    if let Some(c) = cli.min_calls {
        plan.min_calls = c;
    }
    let cub = match (cli.no_cub || cli.emulator, cli.cub_binary) {
        (true, _) => CubSource::Skip,
        (false, Some(path)) => CubSource::Binary(path),
        (false, None) => CubSource::Compile { nvcc: cli.nvcc },
    };
    let mut sizes = cli.sizes.unwrap_or_else(|| {
        if cli.quick {
            vec![16, 20, 24, 26, 28]
        } else {
            vec![10, 16, 20, 24, 26, 28]
        }
    });
    sizes.sort();
    sizes.dedup();
    let impls: Vec<&'static str> = match cli.impls {
        Some(names) => {
            dedup(names).iter().filter_map(|n| WARPSAFE.iter().copied().find(|w| w == n)).collect()
        }
        None => WARPSAFE.to_vec(),
    };
    Ok(Args {
        out: cli.out,
        sizes,
        types: dedup(cli.types.unwrap_or_else(|| ElemType::ALL.to_vec())),
        ops: dedup(cli.ops.unwrap_or_else(|| Op::ALL.to_vec())),
        impls,
        plan,
        cub,
        cub_build_dir: cli.cub_build_dir,
        roofline: !cli.no_roofline,
        replot: cli.replot,
        emulator: cli.emulator,
        command_line: std::iter::once("reduce-bench")
            .chain(argv.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Args {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn err(args: &[&str]) -> clap::Error {
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
