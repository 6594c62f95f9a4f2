//! `segreduce-bench`'s command line.

use std::path::PathBuf;

use warpsafe_host::segmented::SegmentStrategy;

use super::data::Pattern;
use crate::cli::{dedup, parse_as, Common, CommonFlags};

/// The most elements `--counts` takes (4 GiB of `f32`).
const MOST: u64 = 1 << 30;

/// A parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// The shared settings.
    pub common: Common,
    /// Element counts, ascending.
    pub counts: Vec<u64>,
    /// Segment patterns, in the order given.
    pub patterns: Vec<Pattern>,
    /// warpsafe's strategies, each measured (`Auto` is the one the targets judge).
    pub strategies: Vec<SegmentStrategy>,
    /// Measure the read ceiling.
    pub ceiling: bool,
    /// The balanced strategy's `long_elements` and `chunk_elements`, in bytes of `f32`
    /// (`None`: the library's defaults), for sweeps of its hand-off.
    pub long_bytes: Option<u64>,
    /// See `long_bytes`.
    pub chunk_bytes: Option<u64>,
}

impl Args {
    /// The `(pattern, n)` points measured, by size then pattern: the patterns that fit.
    pub fn points(&self) -> Vec<(Pattern, u64)> {
        let mut points = Vec::new();
        for &n in &self.counts {
            points.extend(self.patterns.iter().filter(|p| p.fits(n)).map(|&p| (p, n)));
        }
        points
    }

    /// `segmented_cub`'s arguments for this run.
    pub fn cub_args(&self) -> Vec<String> {
        let mut args = vec![
            "--counts".into(),
            crate::cub::list(&self.counts),
            "--patterns".into(),
            crate::cub::list(self.patterns.iter().map(|p| p.name())),
        ];
        args.extend(crate::cub::plan_args(&self.common.plan));
        args
    }
}

/// The name of a strategy on the command line and in the report.
pub fn strategy_name(s: SegmentStrategy) -> &'static str {
    match s {
        SegmentStrategy::Auto => "auto",
        SegmentStrategy::Thread => "thread",
        SegmentStrategy::Tile4 => "tile4",
        SegmentStrategy::Tile16 => "tile16",
        SegmentStrategy::Warp => "warp",
        SegmentStrategy::Block => "block",
        SegmentStrategy::Balanced => "balanced",
        SegmentStrategy::Scan => "scan",
    }
}

/// Every strategy: `Auto`, then the fixed ones.
pub fn strategies() -> impl Iterator<Item = SegmentStrategy> {
    std::iter::once(SegmentStrategy::Auto).chain(SegmentStrategy::ALL)
}

fn parse_strategy(s: &str) -> Result<SegmentStrategy, String> {
    strategies().find(|&st| strategy_name(st) == s).ok_or_else(|| {
        format!("unknown strategy '{s}' (auto, thread, tile4, tile16, warp, block, balanced, scan)")
    })
}

fn parse_pattern(s: &str) -> Result<Pattern, String> {
    Pattern::parse(s).ok_or_else(|| format!("unknown pattern '{s}' (a segment length >= 1, or power-law)"))
}

/// The command line as `clap` parses it (`segreduce-bench --help` prints these docs).
#[derive(clap::Parser, Debug)]
#[command(
    name = "segreduce-bench",
    about = "warpsafe's segmented reduce (f32 sums) against CUB's DeviceSegmentedReduce::Sum and a read \
ceiling, on the GPU"
)]
struct Cli {
    /// Where segmented.csv, segmented.svg, segmented.txt and segmented.log go.
    #[arg(long, default_value = "target/segreduce-bench")]
    out: PathBuf,
    /// log2 of the element counts, e.g. 16,20 (default: every even power from 10 to 28;
    /// with --quick 16, 20, 24, 28; with --emulator none).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=30))]
    sizes: Option<Vec<u32>>,
    /// Element counts, added to --sizes, e.g. 1,4097 (default with --emulator: 1, 4097,
    /// 16384).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..=MOST))]
    counts: Option<Vec<u64>>,
    /// Segment patterns: fixed lengths and power-law (default: 1, 8, 32, 128, 1024,
    /// 65536 and power-law). A fixed length longer than the input is skipped at that size.
    #[arg(long, value_delimiter = ',', value_parser = parse_pattern)]
    patterns: Option<Vec<Pattern>>,
    /// warpsafe's strategies among auto, thread, tile4, tile16, warp, block, balanced, each measured
    /// (default auto; the targets judge auto).
    #[arg(long, value_delimiter = ',', value_parser = parse_strategy)]
    strategy: Option<Vec<SegmentStrategy>>,
    /// Skip the read ceiling.
    #[arg(long)]
    no_ceiling: bool,
    /// The balanced strategy: segments longer than this many bytes are cut into chunks
    /// that all blocks share (default the library's, `LONG_SEGMENT_BYTES`; a multiple of 4).
    #[arg(long, value_parser = parse_f32_bytes)]
    long_bytes: Option<u64>,
    /// The balanced strategy: bytes per chunk of a long segment (default the library's,
    /// `chunk_bytes` of the input's bytes; a multiple of 4).
    #[arg(long, value_parser = parse_f32_bytes)]
    chunk_bytes: Option<u64>,
    /// Where segmented_cub is compiled.
    #[arg(long, default_value = "target/segreduce-bench-cub")]
    cub_build_dir: PathBuf,
    #[command(flatten)]
    common: CommonFlags,
}

/// Parses the arguments after the program name. `--help` and bad arguments come back as
/// `clap`'s error, whose `exit()` prints the help or the message.
///
/// # Errors
/// `clap`'s, for `--help` and for arguments that do not parse.
pub fn parse(argv: &[String]) -> Result<Args, clap::Error> {
    let cli: Cli = parse_as("segreduce-bench", argv)?;
    let common = cli.common.resolve(cli.out, cli.cub_build_dir, "segreduce-bench", argv);
    let (quick, emulator) = (common.quick, common.emulator);
    let mut counts: Vec<u64> = match (&cli.sizes, &cli.counts) {
        (None, None) if emulator => vec![1, 4097, 1 << 14],
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
        ceiling: !cli.no_ceiling,
        common,
        counts,
        patterns: dedup(cli.patterns.unwrap_or_else(|| Pattern::DEFAULT.to_vec())),
        strategies: dedup(cli.strategy.unwrap_or_else(|| vec![SegmentStrategy::Auto])),
        long_bytes: cli.long_bytes,
        chunk_bytes: cli.chunk_bytes,
    })
}

/// A byte count of whole `f32`s, at least one.
fn parse_f32_bytes(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(bytes) if bytes >= 4 && bytes % 4 == 0 => Ok(bytes),
        _ => Err(format!("'{s}' is not a positive multiple of 4 bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{argv, CubSource};
    use crate::timing::Plan;

    fn cli(args: &[&str]) -> Result<Args, clap::Error> {
        parse(&argv(args))
    }

    #[test]
    fn defaults() {
        let a = cli(&[]).unwrap();
        assert_eq!(a.common.out, PathBuf::from("target/segreduce-bench"));
        assert_eq!(a.common.cub_build_dir, PathBuf::from("target/segreduce-bench-cub"));
        assert_eq!(a.counts, (10..=28).step_by(2).map(|k| 1u64 << k).collect::<Vec<_>>());
        assert_eq!(a.patterns, Pattern::DEFAULT.to_vec());
        assert_eq!(a.strategies, vec![SegmentStrategy::Auto]);
        assert_eq!(a.common.plan, Plan::FULL);
        assert_eq!(a.common.cub, CubSource::Compile { nvcc: None });
        assert!(a.ceiling);
        // 65536 is skipped at 2^10, 2^12 and 2^14.
        assert_eq!(a.points().len(), 10 * 7 - 3);
        assert_eq!(
            a.cub_args().join(" "),
            "--counts 1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456 \
--patterns 1,8,32,128,1024,65536,power-law --reps 7 --min-batch-ms 10 --min-calls 20"
        );
    }

    #[test]
    fn filters_quick_and_emulator() {
        let a = cli(&["--quick", "--patterns", "32,power-law,32", "--strategy", "auto,tile4,block"]).unwrap();
        assert_eq!(a.counts, vec![1 << 16, 1 << 20, 1 << 24, 1 << 28]);
        assert_eq!(a.patterns, vec![Pattern::Fixed(32), Pattern::PowerLaw]);
        assert_eq!(a.strategies, vec![SegmentStrategy::Auto, SegmentStrategy::Tile4, SegmentStrategy::Block]);
        assert_eq!(a.common.plan, Plan::QUICK);
        let e = cli(&["--emulator"]).unwrap();
        assert_eq!(e.counts, vec![1, 4097, 16384]);
        assert_eq!(e.common.cub, CubSource::Skip);
        assert_eq!(e.points().len(), 2 + 6 + 6, "only L=1 and power-law fit one element");
        assert_eq!(cli(&["--sizes", "12,10", "--counts", "4097"]).unwrap().counts, vec![1024, 4096, 4097]);
        assert!(!cli(&["--no-ceiling"]).unwrap().ceiling);
        let sweep = cli(&["--long-bytes", "32768", "--chunk-bytes", "65536"]).unwrap();
        assert_eq!((sweep.long_bytes, sweep.chunk_bytes), (Some(32768), Some(65536)));
        assert_eq!((a.long_bytes, a.chunk_bytes), (None, None));
    }

    #[test]
    fn errors_name_the_argument() {
        use clap::error::ErrorKind;
        assert!(cli(&["--strategy", "grid"]).unwrap_err().to_string().contains("unknown strategy 'grid'"));
        assert!(cli(&["--patterns", "0"]).unwrap_err().to_string().contains("unknown pattern '0'"));
        assert!(cli(&["--sizes", "31"]).unwrap_err().to_string().contains("--sizes"));
        assert_eq!(cli(&["--help"]).unwrap_err().kind(), ErrorKind::DisplayHelp);
        assert!(cli(&["--chunk-bytes", "6"])
            .unwrap_err()
            .to_string()
            .contains("not a positive multiple of 4"));
        assert!(cli(&["--long-bytes", "0"]).unwrap_err().to_string().contains("--long-bytes"));
    }
}
