//! `histogram-bench`'s parts that need no GPU: the command line, the input data (the same
//! function as `cub/histogram_cub.cu`), the host reference, CUB's records, the table, the
//! issue's targets, the CSV (and `--replot` from it) and the SVG plot.
//!
//! Data, `u8` samples, 256 even bins over `[0, 256)`: *uniform*, sample `i` is
//! `hash(90, i) >> 56`; *skewed*, 7 when `hash(91, i) % 10 != 0` (90 % of the samples in
//! one bin, the worst case for atomics), else the uniform sample.

use std::fmt::Write as _;
use std::path::PathBuf;

use plotters::prelude::{RGBColor, SeriesLabelPosition};

use crate::cli::{parse_as, Common, CommonFlags};
use crate::data::hash;
use crate::plot::{self, Axis, Line, Panel};
use crate::report::{size_label, Check, Results};
use crate::targets::{every_point, Status, Verdict};
use crate::timing::Timing;

/// CUB's implementation name in rows.
pub const CUB: &str = "cub";
/// The read ceiling's name in rows.
pub const CEILING: &str = "ceiling";
/// warpsafe's name in rows, with the default launch settings.
pub const WARPSAFE: &str = "warpsafe";

/// The bins of every measurement.
pub const BINS: usize = 256;

/// The sample distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Every byte value about equally often.
    Uniform,
    /// 90 % of the samples in one bin.
    Skewed,
}

impl Distribution {
    /// Both.
    pub const ALL: [Distribution; 2] = [Distribution::Uniform, Distribution::Skewed];

    /// The name in records and tables.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Skewed => "skewed",
        }
    }

    /// The distribution named `name`.
    pub fn parse(name: &str) -> Option<Distribution> {
        Distribution::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Sample `i` of `distribution` (module docs).
pub fn sample(distribution: Distribution, i: u64) -> u8 {
    let uniform = (hash(90, i) >> 56) as u8;
    if distribution == Distribution::Skewed && !hash(91, i).is_multiple_of(10) {
        7
    } else {
        uniform
    }
}

/// The first `n` samples of `distribution`.
pub fn samples(distribution: Distribution, n: usize) -> Vec<u8> {
    (0..n as u64).map(|i| sample(distribution, i)).collect()
}

/// The host reference: the count of each byte value.
pub fn reference(samples: &[u8]) -> Vec<u32> {
    let mut counts = vec![0u32; BINS];
    for &s in samples {
        counts[s as usize] += 1;
    }
    counts
}

/// `Ok`, or the first bin that differs.
pub fn check_counts(got: &[u32], expected: &[u32]) -> Check {
    match got.iter().zip(expected).position(|(g, e)| g != e) {
        None if got.len() == expected.len() => Check::Ok,
        None => Check::Bad { expected: format!("{} bins, got {}", expected.len(), got.len()) },
        Some(b) => Check::Bad { expected: format!("bin {b} holds {} instead of {}", got[b], expected[b]) },
    }
}

/// One measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// [`CUB`], [`CEILING`], [`WARPSAFE`], or `warpsafe copies=C blocks/SM=B` in a sweep
    /// (`blocks=G` for a fixed grid; ` threads=T` added for another block size).
    pub implementation: String,
    /// The samples.
    pub distribution: Distribution,
    /// Samples.
    pub n: u64,
    /// Seconds per call.
    pub timing: Timing,
    /// The counts against the reference.
    pub check: Check,
    /// How it ran.
    pub detail: String,
}

impl Row {
    /// Bytes read per second.
    pub fn gb_per_s(&self) -> f64 {
        self.n as f64 / self.timing.seconds / 1e9
    }
}

/// CUB's record after `cub,`: `<implementation>,<distribution>,<n>,<median>,<calls>,<reps>,<min>,<max>,<check>`.
pub fn parse_cub_record(rest: &str) -> Option<Row> {
    let f: Vec<&str> = rest.split(',').collect();
    if f.len() != 9 {
        return None;
    }
    Some(Row {
        implementation: f[0].to_string(),
        distribution: Distribution::parse(f[1])?,
        n: f[2].parse().ok()?,
        timing: crate::cub::parse_timing(f[3], f[4], f[5], f[6], f[7])?,
        check: crate::cub::parse_check(f[8])?,
        detail: if f[0] == CUB {
            "HistogramEven, 257 levels over [0, 256)".into()
        } else {
            "read kernel".into()
        },
    })
}

/// The row of `implementation` at `(distribution, n)`.
pub fn find<'r>(results: &'r Results<Row>, implementation: &str, d: Distribution, n: u64) -> Option<&'r Row> {
    results.rows.iter().find(|r| r.implementation == implementation && r.distribution == d && r.n == n)
}

/// The CSV of every row, facts first as `# key: value` lines.
pub fn to_csv(results: &Results<Row>) -> String {
    let mut text = String::new();
    for (k, v) in &results.meta {
        let _ = writeln!(text, "# {k}: {}", v.replace('\n', " "));
    }
    text.push_str(
        "implementation,distribution,n,seconds,min_seconds,max_seconds,calls,reps,gb_per_s,check,detail\n",
    );
    for r in &results.rows {
        let _ = writeln!(
            text,
            "{},{},{},{:e},{:e},{:e},{},{},{:.3},{},\"{}\"",
            r.implementation,
            r.distribution,
            r.n,
            r.timing.seconds,
            r.timing.min_seconds,
            r.timing.max_seconds,
            r.timing.calls,
            r.timing.reps,
            r.gb_per_s(),
            r.check.to_field(),
            r.detail.replace('"', "'")
        );
    }
    text
}

/// The results [`to_csv`] wrote.
///
/// # Errors
/// A line that does not parse.
pub fn from_csv(text: &str) -> Result<Results<Row>, String> {
    let mut results = Results::default();
    let mut body = String::new();
    for line in text.lines() {
        if let Some(fact) = line.strip_prefix("# ") {
            let (k, v) = fact.split_once(": ").ok_or_else(|| format!("fact line {line:?}"))?;
            results.set_meta(k, v);
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    let mut reader = csv::Reader::from_reader(body.as_bytes());
    for record in reader.records() {
        let f = record.map_err(|e| e.to_string())?;
        let field = |i: usize| f.get(i).ok_or_else(|| format!("short record {f:?}"));
        let bad = || format!("record {f:?}");
        results.rows.push(Row {
            implementation: field(0)?.to_string(),
            distribution: Distribution::parse(field(1)?).ok_or_else(bad)?,
            n: field(2)?.parse().map_err(|_| bad())?,
            timing: crate::cub::parse_timing(field(3)?, field(6)?, field(7)?, field(4)?, field(5)?)
                .ok_or_else(bad)?,
            check: if field(9)? == "-" {
                Check::NotChecked
            } else {
                crate::cub::parse_check(field(9)?).ok_or_else(bad)?
            },
            detail: field(10)?.to_string(),
        });
    }
    Ok(results)
}

/// The table of each distribution: times in µs, × CUB (CUB's time over warpsafe's) and
/// the fraction of the read ceiling; sweep rows after the default.
pub fn tables(results: &Results<Row>) -> String {
    let mut text = String::new();
    let mut implementations: Vec<&str> = results
        .rows
        .iter()
        .map(|r| r.implementation.as_str())
        .filter(|i| *i != CUB && *i != CEILING)
        .collect();
    implementations.sort_by_key(|i| (*i != WARPSAFE, i.to_string()));
    implementations.dedup();
    for d in Distribution::ALL {
        let mut ns: Vec<u64> = results.rows.iter().filter(|r| r.distribution == d).map(|r| r.n).collect();
        ns.sort();
        ns.dedup();
        if ns.is_empty() {
            continue;
        }
        let _ = writeln!(text, "#### {d}, 256 bins of u8\n");
        let _ = writeln!(
            text,
            "| implementation | N | µs | GB/s | × CUB | of ceiling | CUB µs | ceiling µs | plan |"
        );
        let _ = writeln!(text, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
        for implementation in &implementations {
            for &n in &ns {
                let Some(row) = find(results, implementation, d, n) else { continue };
                let cub = find(results, CUB, d, n);
                let ceiling = find(results, CEILING, d, n);
                let ratio = |other: Option<&Row>| {
                    other.map_or("-".to_string(), |o| format!("{:.2}", o.timing.seconds / row.timing.seconds))
                };
                let micros = |other: Option<&Row>| {
                    other.map_or("-".to_string(), |o| format!("{:.2}", o.timing.seconds * 1e6))
                };
                let wrong = if row.check == Check::Ok { "" } else { " WRONG RESULT" };
                let _ = writeln!(
                    text,
                    "| {implementation} | {} | {:.2} | {:.0} | {} | {} | {} | {} | {}{wrong} |",
                    size_label(n),
                    row.timing.seconds * 1e6,
                    row.gb_per_s(),
                    ratio(cub),
                    ratio(ceiling),
                    micros(cub),
                    micros(ceiling),
                    row.detail
                );
            }
        }
        text.push('\n');
    }
    text
}

/// warpsafe's (default) ratio to `other` at a point.
fn ratio(results: &Results<Row>, other: &str, d: Distribution, n: u64) -> Option<f64> {
    let mine = find(results, WARPSAFE, d, n)?;
    Some(find(results, other, d, n)?.timing.seconds / mine.timing.seconds)
}

/// A target over the points of `d` (all distributions when `None`) with `lo <= log2 n <= hi`:
/// every ratio to CUB at least `min`.
fn ratio_target(
    results: &Results<Row>,
    target: String,
    d: Option<Distribution>,
    lo: u32,
    hi: u32,
    min: f64,
) -> Verdict {
    let points = results
        .rows
        .iter()
        .filter(|r| r.implementation == WARPSAFE && d.is_none_or(|d| r.distribution == d))
        .filter(|r| r.n >= 1 << lo && r.n <= 1 << hi)
        .filter_map(|r| {
            let label = format!("{} {}", r.distribution, size_label(r.n));
            ratio(results, CUB, r.distribution, r.n).map(|q| (q, label))
        })
        .collect();
    every_point(target, points, min, "warpsafe or CUB not measured at those sizes")
}

/// The histogram targets (H100).
pub fn evaluate(results: &Results<Row>) -> Vec<Verdict> {
    let n = 1 << 28;
    let ceiling = match ratio(results, CEILING, Distribution::Uniform, n) {
        Some(q) => Verdict {
            status: if q >= 0.9 { Status::Pass } else { Status::Miss },
            target: "uniform 2^28 >= 90% of the read ceiling".into(),
            detail: format!("{:.1}%", q * 100.0),
        },
        None => Verdict {
            status: Status::Skip,
            target: "uniform 2^28 >= 90% of the read ceiling".into(),
            detail: "warpsafe or the ceiling not measured at 2^28".into(),
        },
    };
    vec![
        ratio_target(results, "uniform 2^28 >= 1.30x CUB".into(), Some(Distribution::Uniform), 28, 28, 1.3),
        ceiling,
        ratio_target(results, "skewed 2^28 >= 1.00x CUB".into(), Some(Distribution::Skewed), 28, 28, 1.0),
        ratio_target(results, ">= 1.50x CUB at 2^16-2^20".into(), None, 16, 20, 1.5),
        ratio_target(results, ">= 1.00x CUB at every size and distribution".into(), None, 0, 63, 1.0),
    ]
}

/// GB/s against log2 N: every implementation and distribution.
///
/// # Errors
/// When the plotting library fails (it writes to memory, so only on a bug).
pub fn svg(results: &Results<Row>) -> anyhow::Result<String> {
    const COLOURS: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
    ];
    let mut keys: Vec<(String, Distribution)> =
        results.rows.iter().map(|r| (r.implementation.clone(), r.distribution)).collect();
    keys.sort_by_key(|(i, d)| (i.clone(), d.name()));
    keys.dedup();
    let lines: Vec<Line> = keys
        .iter()
        .enumerate()
        .map(|(k, (implementation, d))| {
            let mut points: Vec<(f64, f64)> = results
                .rows
                .iter()
                .filter(|r| &r.implementation == implementation && r.distribution == *d && r.n > 0)
                .map(|r| ((r.n as f64).log2(), r.gb_per_s()))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                label: Some(format!("{implementation} {d}")),
                colour: COLOURS[k % COLOURS.len()],
                dashed: *d == Distribution::Skewed,
                points,
            }
        })
        .collect();
    let all: Vec<(f64, f64)> = lines.iter().flat_map(|l| l.points.iter().copied()).collect();
    let (low, high) = plot::decades(all.iter().map(|p| p.1));
    let panel = Panel {
        caption: "histogram, 256 bins of u8: bytes read per second".into(),
        x: plot::x_range(all.iter().copied()),
        y: Axis::Log(low, high),
        y_desc: "GB/s".into(),
        marks: Vec::new(),
        lines,
        legend: SeriesLabelPosition::LowerRight,
    };
    plot::document((900, 560), "histogram-bench", &results.meta, |area| plot::draw_panel(area, &panel))
}

/// A parsed `histogram-bench` command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// The shared settings.
    pub common: Common,
    /// Sample counts, ascending.
    pub counts: Vec<u64>,
    /// The distributions.
    pub distributions: Vec<Distribution>,
    /// Copy counts to sweep besides the default plan.
    pub copies: Vec<u32>,
    /// Blocks per multiprocessor to sweep besides the default plan.
    pub blocks_per_sm: Vec<u32>,
    /// Fixed grids to sweep besides the default plan (instead of `blocks_per_sm`).
    pub blocks: Vec<u32>,
    /// Block sizes to sweep besides the default plan.
    pub block_threads: Vec<u32>,
    /// Copy counts for concentrated samples to sweep besides the default plan.
    pub concentrated_copies: Vec<u32>,
}

impl Args {
    /// `histogram_cub`'s arguments for this run.
    pub fn cub_args(&self) -> Vec<String> {
        let mut args = vec![
            "--counts".into(),
            crate::cub::list(&self.counts),
            "--distributions".into(),
            crate::cub::list(self.distributions.iter().map(|d| d.name())),
        ];
        args.extend(crate::cub::plan_args(&self.common.plan));
        args
    }
}

/// The command line as `clap` parses it (`histogram-bench --help` prints these docs).
#[derive(clap::Parser, Debug)]
#[command(
    name = "histogram-bench",
    about = "warpsafe's Histogram (256 even bins of u8) against CUB's DeviceHistogram::HistogramEven and a \
read ceiling, on the GPU"
)]
struct Cli {
    /// Where histogram.csv, histogram.svg, histogram.txt and histogram.log go.
    #[arg(long, default_value = "target/histogram-bench")]
    out: PathBuf,
    /// log2 of the sample counts (default: every even power from 10 to 28; with --quick
    /// 16, 20, 24, 28; with --emulator none).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=30))]
    sizes: Option<Vec<u32>>,
    /// Sample counts, added to --sizes (default with --emulator: 0, 1, 4097, 16384).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..=i32::MAX as u64))]
    counts: Option<Vec<u64>>,
    /// Distributions among uniform, skewed (default both).
    #[arg(long, value_delimiter = ',', value_parser = parse_distribution)]
    distributions: Option<Vec<Distribution>>,
    /// Also warpsafe with these private-copy counts (powers of two up to 32), e.g. 1,4,32.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=32))]
    copies: Option<Vec<u32>>,
    /// Also warpsafe with these most blocks per SM, e.g. 2,4,8 (with each --copies, or
    /// the automatic copies).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=32))]
    blocks_per_sm: Option<Vec<u32>>,
    /// Also warpsafe with these fixed grids, e.g. 132,264,528 (with each --copies, or the
    /// automatic copies; instead of --blocks-per-sm).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    blocks: Option<Vec<u32>>,
    /// Also warpsafe with these threads per block, e.g. 256,512,1024 (multiples of 32 up
    /// to 1024; with each of the other settings).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(32..=1024))]
    block_threads: Option<Vec<u32>>,
    /// Also warpsafe with these copy counts for blocks whose samples concentrate in one
    /// bin (powers of two up to 32; 32 never looks at the data), with each --copies and
    /// --blocks-per-sm.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=32))]
    concentrated_copies: Option<Vec<u32>>,
    /// Where histogram_cub is compiled.
    #[arg(long, default_value = "target/histogram-bench-cub")]
    cub_build_dir: PathBuf,
    #[command(flatten)]
    common: CommonFlags,
}

fn parse_distribution(s: &str) -> Result<Distribution, String> {
    Distribution::parse(s).ok_or_else(|| format!("unknown distribution '{s}' (uniform, skewed)"))
}

/// Parses the arguments after the program name.
///
/// # Errors
/// `clap`'s, for `--help` and for arguments that do not parse.
pub fn parse(argv: &[String]) -> Result<Args, clap::Error> {
    let cli: Cli = parse_as("histogram-bench", argv)?;
    let common = cli.common.resolve(cli.out, cli.cub_build_dir, "histogram-bench", argv);
    let mut counts: Vec<u64> = match (&cli.sizes, &cli.counts) {
        (None, None) if common.emulator => vec![0, 1, 4097, 1 << 14],
        (None, None) if common.quick => [16, 20, 24, 28].iter().map(|k| 1 << k).collect(),
        (None, None) => (10..=28).step_by(2).map(|k| 1 << k).collect(),
        (sizes, counts) => {
            sizes.iter().flatten().map(|&k| 1u64 << k).chain(counts.iter().flatten().copied()).collect()
        }
    };
    counts.sort();
    counts.dedup();
    let mut distributions = cli.distributions.unwrap_or_else(|| Distribution::ALL.to_vec());
    distributions.dedup();
    Ok(Args {
        common,
        counts,
        distributions,
        copies: cli.copies.unwrap_or_default(),
        blocks_per_sm: cli.blocks_per_sm.unwrap_or_default(),
        blocks: cli.blocks.unwrap_or_default(),
        block_threads: cli.block_threads.unwrap_or_default(),
        concentrated_copies: cli.concentrated_copies.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::argv;

    #[test]
    fn data_and_reference() {
        let skewed = samples(Distribution::Skewed, 10_000);
        let sevens = skewed.iter().filter(|&&s| s == 7).count();
        assert!((8_900..9_200).contains(&sevens), "{sevens}");
        let uniform = reference(&samples(Distribution::Uniform, 1 << 16));
        assert!(uniform.iter().all(|&c| (150..360).contains(&c)), "{uniform:?}");
        assert_eq!(check_counts(&uniform, &uniform), Check::Ok);
        let mut off = uniform.clone();
        off[3] += 1;
        assert!(matches!(check_counts(&off, &uniform), Check::Bad { .. }));
    }

    #[test]
    fn command_line_and_csv_round_trip() {
        let a = parse(&argv(&[
            "--quick",
            "--copies",
            "1,32",
            "--concentrated-copies",
            "32",
            "--blocks",
            "132,264",
            "--block-threads",
            "512",
            "--distributions",
            "skewed",
        ]))
        .unwrap();
        assert_eq!(a.counts, vec![1 << 16, 1 << 20, 1 << 24, 1 << 28]);
        assert_eq!((a.copies.clone(), a.distributions.clone()), (vec![1, 32], vec![Distribution::Skewed]));
        assert_eq!((a.concentrated_copies.clone(), a.blocks.clone()), (vec![32], vec![132, 264]));
        assert_eq!(a.block_threads, vec![512]);
        assert_eq!(
            a.cub_args().join(" "),
            "--counts 65536,1048576,16777216,268435456 --distributions skewed --reps 5 --min-batch-ms 5 --min-calls 20"
        );
        let record = "cub,uniform,1024,5.0e-6,100,7,4.9e-6,5.1e-6,ok";
        let row = parse_cub_record(record).unwrap();
        let mut results = Results::default();
        results.set_meta("gpu", "test");
        results.rows.push(row.clone());
        results.rows.push(Row { implementation: WARPSAFE.into(), ..row });
        let back = from_csv(&to_csv(&results)).unwrap();
        assert_eq!(back.rows.len(), 2);
        assert_eq!(back.meta("gpu"), Some("test"));
        assert!(tables(&back).contains("| warpsafe | 2^10 |"));
        assert_eq!(evaluate(&back)[4].status, Status::Pass);
    }
}
