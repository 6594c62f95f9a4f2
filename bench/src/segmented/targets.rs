//! Issue 13's targets for `segreduce-bench` on an H100, evaluated on a run's results: a
//! PASS/MISS line each (SKIP when the run did not measure what it needs). warpsafe's number
//! is the automatic strategy's (`auto`, what a user gets); a ratio is its time against
//! CUB's at the same pattern and size, a fraction its time against the read ceiling's.
//!
//! - at 2^24..2^28: >= 150x CUB at segment length 1, >= 70x at 8, >= 20x at 32, >= 5.5x at
//!   128, >= 1.5x at 1024, >= 1.0x at 65536;
//! - length 32 at >= 90% of the read ceiling at 2^24..2^28;
//! - the power-law mix at >= 80% of the read ceiling at 2^24..2^28;
//! - never below 0.95x CUB, any pattern and size.
//!
//! The multiples and fractions are judged where the probes measured them, at sizes
//! that fill the GPU: at 2^16..2^20 a call is a few microseconds, mostly launch, so 150x
//! CUB at length 1 and 2^16 would need 0.4 µs, less than any launch, and 80% of a read
//! ceiling that is itself one launch would leave no time for a second one. The run prints
//! every size, and the last target still covers every size.

use std::ops::RangeInclusive;

use super::data::Pattern;
use super::report::Row;
use crate::report::{size_label, Results};
use crate::targets::{every_point, Verdict};

/// The strategy the targets judge.
pub const JUDGED: &str = "auto";

/// The ratio to CUB per fixed length.
pub const RATIOS: [(u64, f64); 6] =
    [(1, 150.0), (8, 70.0), (32, 20.0), (128, 5.5), (1024, 1.5), (65536, 1.0)];

fn in_range(log2: &Option<RangeInclusive<u32>>, n: u64) -> bool {
    log2.as_ref().is_none_or(|r| n.is_power_of_two() && r.contains(&n.trailing_zeros()))
}

fn sizes(log2: &Option<RangeInclusive<u32>>) -> String {
    match log2 {
        Some(r) => format!("at 2^{}..2^{}", r.start(), r.end()),
        None => "at every size".to_string(),
    }
}

/// `auto` at `pattern` (every pattern when `None`) and sizes `log2` scored by `score`
/// (ratio to CUB or fraction of the ceiling) at least `min`.
fn target(
    results: &Results<Row>,
    pattern: Option<Pattern>,
    log2: Option<RangeInclusive<u32>>,
    min: f64,
    of_what: &str,
    score: impl Fn(&Row) -> Option<f64>,
) -> Verdict {
    let which = pattern.map_or("every pattern".to_string(), |p| p.to_string());
    let target = format!("{which} {JUDGED} >= {min:.2}x {of_what} {}", sizes(&log2));
    let points = results
        .rows
        .iter()
        .filter(|r| {
            r.implementation == JUDGED && pattern.is_none_or(|p| r.pattern == p) && in_range(&log2, r.n)
        })
        .filter_map(|r| score(r).map(|q| (q, format!("{} {}", r.pattern, size_label(r.n)))))
        .collect();
    every_point(target, points, min, &format!("{JUDGED} or {of_what} not measured there"))
}

/// Every target, in the order.
pub fn evaluate(results: &Results<Row>) -> Vec<Verdict> {
    let cub = |r: &Row| results.ratio_to_cub(r);
    let ceiling = |r: &Row| results.fraction_of_ceiling(r);
    let mut verdicts: Vec<Verdict> = RATIOS
        .iter()
        .map(|&(len, min)| target(results, Some(Pattern::Fixed(len)), Some(24..=28), min, "CUB", cub))
        .collect();
    verdicts.push(target(results, Some(Pattern::Fixed(32)), Some(24..=28), 0.9, "the read ceiling", ceiling));
    verdicts.push(target(results, Some(Pattern::PowerLaw), Some(24..=28), 0.8, "the read ceiling", ceiling));
    verdicts.push(target(results, None, None, 0.95, "CUB", cub));
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::CUB;
    use crate::segmented::report::tests::{row, sample};
    use crate::targets::Status;

    #[test]
    fn sample_results() {
        let v: Vec<String> = evaluate(&sample()).iter().map(|v| v.to_string()).collect();
        assert_eq!(v.len(), 9);
        assert_eq!(
            v[0],
            "MISS  L=1 auto >= 150.00x CUB at 2^24..2^28: worst L=1 2^24 100.00x over 1 points; below: L=1 2^24 100.00x"
        );
        assert_eq!(
            v[5],
            "PASS  L=65536 auto >= 1.00x CUB at 2^24..2^28: worst L=65536 2^24 2.00x over 1 points"
        );
        assert_eq!(
            v[6],
            "PASS  L=32 auto >= 0.90x the read ceiling at 2^24..2^28: worst L=32 2^24 0.95x over 1 points"
        );
        assert_eq!(
            v[8],
            "PASS  every pattern auto >= 0.95x CUB at every size: worst L=8 2^16 2.00x over 14 points"
        );
    }

    #[test]
    fn misses_and_skips() {
        let mut r = sample();
        r.rows.retain(|row| row.pattern != Pattern::PowerLaw || row.implementation != "ceiling");
        // Judged at 2^28, not at 2^20, where the size is below the multiples' range.
        for n in [1u64 << 20, 1 << 28] {
            r.rows.push(row(CUB, Pattern::Fixed(128), n, 9e-6));
            r.rows.push(row(JUDGED, Pattern::Fixed(128), n, 10e-6));
        }
        let v = evaluate(&r);
        assert_eq!(v[3].status, Status::Miss);
        assert_eq!(v[7].status, Status::Skip);
        assert_eq!(v[8].status, Status::Miss);
        assert!(v[3].detail.starts_with("worst L=128 2^28 0.90x over 2 points"), "{}", v[3].detail);
        assert!(v[8].detail.ends_with("below: L=128 2^20 0.90x, L=128 2^28 0.90x"), "{}", v[8].detail);
    }
}
