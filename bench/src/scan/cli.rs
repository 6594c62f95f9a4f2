//! `scan-bench`'s command line.

use std::path::PathBuf;

use super::report::Algorithm;
use crate::cli::{dedup, parse_as, parse_type, Common, CommonFlags};
use crate::data::ElemType;

/// The element count of `--huge`: past `i32::MAX`, so that CUB takes a 64-bit `num_items`.
pub const HUGE: u64 = (1 << 31) + (1 << 20);

/// The most elements `--counts` takes (64 GiB of `f32`).
const MOST: u64 = 1 << 34;

/// A parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// The shared settings.
    pub common: Common,
    /// Element counts of every type, ascending.
    pub counts: Vec<u64>,
    /// Also [`HUGE`] elements of `i32`.
    pub huge: bool,
    /// Element types.
    pub types: Vec<ElemType>,
    /// What warpsafe and CUB run.
    pub algorithms: Vec<Algorithm>,
    /// Measure the copy ceiling (with CUB's program).
    pub copy: bool,
    /// warpsafe's threads per block (`ScanOptions::block_threads`), for scans and
    /// selections alike; `None`: the library's defaults (`ScanOptions::scan_for`, `::select_for`).
    pub block_threads: Option<u32>,
}

impl Args {
    /// The element counts measured for `ty`.
    pub fn counts_for(&self, ty: ElemType) -> Vec<u64> {
        let mut counts = self.counts.clone();
        if self.huge && ty == ElemType::I32 {
            counts.push(HUGE);
        }
        counts
    }

    /// What `scan_cub` runs: the algorithms, and the copy.
    pub fn cub_algorithms(&self) -> Vec<Algorithm> {
        let mut v = self.algorithms.clone();
        if self.copy {
            v.push(Algorithm::Copy);
        }
        v
    }

    /// `scan_cub`'s arguments for this run.
    pub fn cub_args(&self) -> Vec<String> {
        let mut args = vec![
            "--counts".into(),
            crate::cub::list(&self.counts),
            "--types".into(),
            crate::cub::list(self.types.iter().map(|t| t.name())),
            "--algorithms".into(),
            crate::cub::list(self.cub_algorithms().iter().map(|a| a.name())),
        ];
        if self.huge {
            args.extend(["--huge".into(), HUGE.to_string()]);
        }
        args.extend(crate::cub::plan_args(&self.common.plan));
        args
    }
}

/// The command line as `clap` parses it (`scan-bench --help` prints these docs).
#[derive(clap::Parser, Debug)]
#[command(
    name = "scan-bench",
    about = "warpsafe's device-wide scan and select against CUB's DeviceScan and DeviceSelect, and a \
device-to-device copy, on the GPU"
)]
struct Cli {
    /// Where scan.csv, scan.svg, scan.txt and scan.log go.
    #[arg(long, default_value = "target/scan-bench")]
    out: PathBuf,
    /// log2 of the element counts, e.g. 16,20 (default: every even power from 10 to 28;
    /// with --quick 16, 20, 24, 28; with --emulator none).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=32))]
    sizes: Option<Vec<u32>>,
    /// Element counts, added to --sizes, e.g. 0,1,4097 (default with --emulator: 0, 1,
    /// 4097, 16384). CUB's side takes more than 2^31 - 1 elements for i32 only.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..=MOST))]
    counts: Option<Vec<u64>>,
    /// Element types among f32, f64, i32 (default all).
    #[arg(long, value_delimiter = ',', value_parser = parse_type)]
    types: Option<Vec<ElemType>>,
    /// Algorithms among inclusive_sum, exclusive_sum, select_if, select_flagged (default
    /// all).
    #[arg(long, value_delimiter = ',', value_parser = parse_algorithm)]
    algorithms: Option<Vec<Algorithm>>,
    /// Also i32 at 2^31 + 2^20 elements (CUB with a 64-bit num_items), when the GPU has the
    /// memory (about 18 GiB on each side).
    #[arg(long, conflicts_with = "emulator")]
    huge: bool,
    /// Skip the copy ceiling.
    #[arg(long)]
    no_copy: bool,
    /// warpsafe's threads per block (a multiple of 32 from 32 to 512, as
    /// `ScanOptions::block_threads` takes; default the library's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(32..=512))]
    block_threads: Option<u32>,
    /// Where scan_cub is compiled.
    #[arg(long, default_value = "target/scan-bench-cub")]
    cub_build_dir: PathBuf,
    #[command(flatten)]
    common: CommonFlags,
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    Algorithm::parse(s).filter(|a| *a != Algorithm::Copy).ok_or_else(|| {
        format!("unknown algorithm '{s}' (inclusive_sum, exclusive_sum, select_if, select_flagged)")
    })
}

/// Parses the arguments after the program name. `--help` and bad arguments come back as
/// `clap`'s error, whose `exit()` prints the help or the message.
///
/// # Errors
/// `clap`'s, for `--help` and for arguments that do not parse.
pub fn parse(argv: &[String]) -> Result<Args, clap::Error> {
    let cli: Cli = parse_as("scan-bench", argv)?;
    let common = cli.common.resolve(cli.out, cli.cub_build_dir, "scan-bench", argv);
    let (quick, emulator) = (common.quick, common.emulator);
    let mut counts: Vec<u64> = match (&cli.sizes, &cli.counts) {
        (None, None) if emulator => vec![0, 1, 4097, 1 << 14],
        (None, None) if quick => [16, 20, 24, 28].iter().map(|k| 1 << k).collect(),
        (None, None) => (10..=28).step_by(2).map(|k| 1 << k).collect(),
        (sizes, counts) => {
            let sizes = sizes.iter().flatten().map(|&k| 1u64 << k);
            sizes.chain(counts.iter().flatten().copied()).collect()
        }
    };
    counts.sort();
    counts.dedup();
    Ok(Args {
        copy: !cli.no_copy && !common.emulator,
        block_threads: cli.block_threads,
        common,
        counts,
        huge: cli.huge,
        types: dedup(cli.types.unwrap_or_else(|| ElemType::ALL.to_vec())),
        algorithms: dedup(cli.algorithms.unwrap_or_else(|| Algorithm::MEASURED.to_vec())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{argv, CubSource};
    use crate::timing::Plan;

    /// `scan-bench ARGS`, parsed.
    fn cli(args: &[&str]) -> Result<Args, clap::Error> {
        parse(&argv(args))
    }

    #[test]
    fn defaults() {
        let a = cli(&[]).unwrap();
        assert_eq!(a.common.out, PathBuf::from("target/scan-bench"));
        assert_eq!(a.common.cub_build_dir, PathBuf::from("target/scan-bench-cub"));
        assert_eq!(a.counts, (10..=28).step_by(2).map(|k| 1u64 << k).collect::<Vec<_>>());
        assert_eq!(a.types, ElemType::ALL.to_vec());
        assert_eq!(a.algorithms, Algorithm::MEASURED.to_vec());
        assert_eq!(a.common.plan, Plan::FULL);
        assert_eq!(a.common.cub, CubSource::Compile { nvcc: None });
        assert!(a.copy && !a.huge);
        assert_eq!(a.block_threads, None);
        assert_eq!(cli(&["--block-threads", "128"]).unwrap().block_threads, Some(128));
        assert!(cli(&["--block-threads", "1024"]).is_err());
        assert_eq!(a.counts_for(ElemType::I32), a.counts);
        assert_eq!(a.common.command_line, "scan-bench");
        assert_eq!(
            a.cub_args().join(" "),
            "--counts 1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456 \
--types f32,f64,i32 --algorithms inclusive_sum,exclusive_sum,select_if,select_flagged,copy \
--reps 7 --min-batch-ms 10 --min-calls 20"
        );
    }

    #[test]
    fn sizes_counts_quick_huge_and_filters() {
        let a = cli(&["--quick", "--huge", "--types", "i32,f32", "--algorithms", "select_if", "--no-copy"])
            .unwrap();
        assert_eq!(a.counts, vec![1 << 16, 1 << 20, 1 << 24, 1 << 28]);
        assert_eq!(a.common.plan, Plan::QUICK);
        assert_eq!(a.types, vec![ElemType::I32, ElemType::F32]);
        assert_eq!(a.counts_for(ElemType::I32).last(), Some(&HUGE));
        assert_eq!(a.counts_for(ElemType::F32).last(), Some(&(1 << 28)));
        assert!(!a.copy);
        assert_eq!(
            a.cub_args().join(" "),
            "--counts 65536,1048576,16777216,268435456 --types i32,f32 --algorithms select_if \
--huge 2148532224 --reps 5 --min-batch-ms 5 --min-calls 20"
        );
        let a = cli(&["--sizes", "12,10", "--counts", "4097,1024,0"]).unwrap();
        assert_eq!(a.counts, vec![0, 1024, 4096, 4097]);
        let e = cli(&["--emulator"]).unwrap();
        assert_eq!(e.counts, vec![0, 1, 4097, 16384]);
        assert_eq!(e.common.cub, CubSource::Skip);
        assert!(!e.copy, "the copy is measured by CUB's program");
        assert_eq!(cli(&["--emulator", "--sizes", "4"]).unwrap().counts, vec![16]);
    }

    #[test]
    fn errors_name_the_argument() {
        use clap::error::ErrorKind;
        assert!(cli(&["--algorithms", "copy"]).unwrap_err().to_string().contains("unknown algorithm 'copy'"));
        assert!(cli(&["--sizes", "33"]).unwrap_err().to_string().contains("--sizes"));
        assert_eq!(cli(&["--huge", "--emulator"]).unwrap_err().kind(), ErrorKind::ArgumentConflict);
        assert_eq!(cli(&["--help"]).unwrap_err().kind(), ErrorKind::DisplayHelp);
        assert!(cli(&["--help"]).unwrap_err().to_string().contains("--min-batch-ms"));
    }
}
