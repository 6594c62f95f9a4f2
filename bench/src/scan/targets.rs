//! The targets for `scan-bench` on an H100, evaluated on a run's results: a
//! PASS/MISS line each (SKIP when the run did not measure what it needs). warpsafe's
//! number is its time against CUB's at the same algorithm, type and size; every type
//! measured counts.
//!
//! - scans (inclusive and exclusive sum): >= 1.15x CUB at 2^24..2^28, >= 1.5x at
//!   2^16..2^20, never below 0.95x at any size;
//! - selections (if and flagged): >= 1.15x CUB at 2^28, >= 1.5x at 2^16..2^20.

use std::ops::RangeInclusive;

use super::report::{Algorithm, Row, WARPSAFE};
use crate::report::{size_label, Results};
use crate::targets::{every_point, Verdict};

/// `algorithm` at least `min_ratio` times as fast as CUB at every measured size in
/// `log2` (every size when `None`) and every type.
fn ratio_target(
    results: &Results<Row>,
    algorithm: Algorithm,
    log2: Option<RangeInclusive<u32>>,
    min_ratio: f64,
) -> Verdict {
    let sizes = match &log2 {
        Some(r) if r.start() == r.end() => format!("at 2^{}", r.start()),
        Some(r) => format!("at 2^{}..2^{}", r.start(), r.end()),
        None => "at every size".to_string(),
    };
    let target = format!("{algorithm} >= {min_ratio:.2}x CUB {sizes}, every type");
    let in_range =
        |n: u64| log2.as_ref().is_none_or(|r| n.is_power_of_two() && r.contains(&n.trailing_zeros()));
    let points = results
        .rows
        .iter()
        .filter(|r| r.implementation == WARPSAFE && r.algorithm == algorithm && in_range(r.n))
        .filter_map(|r| results.ratio_to_cub(r).map(|q| (q, format!("{} {}", r.ty, size_label(r.n)))))
        .collect();
    every_point(target, points, min_ratio, "warpsafe or CUB not measured at these sizes")
}

/// Every target, scans first.
pub fn evaluate(results: &Results<Row>) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for algorithm in Algorithm::SCANS {
        verdicts.push(ratio_target(results, algorithm, Some(24..=28), 1.15));
        verdicts.push(ratio_target(results, algorithm, Some(16..=20), 1.5));
        verdicts.push(ratio_target(results, algorithm, None, 0.95));
    }
    for algorithm in Algorithm::SELECTS {
        verdicts.push(ratio_target(results, algorithm, Some(28..=28), 1.15));
        verdicts.push(ratio_target(results, algorithm, Some(16..=20), 1.5));
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ElemType;
    use crate::report::CUB;
    use crate::scan::report::tests::{row, sample};
    use crate::targets::Status;

    #[test]
    fn sample_results() {
        let v: Vec<String> = evaluate(&sample()).iter().map(|v| v.to_string()).collect();
        assert_eq!(v.len(), 10);
        assert_eq!(
            v[0],
            "PASS  inclusive_sum >= 1.15x CUB at 2^24..2^28, every type: worst f32 2^28 1.25x over 1 points"
        );
        assert_eq!(
            v[1],
            "PASS  inclusive_sum >= 1.50x CUB at 2^16..2^20, every type: worst f32 2^16 2.00x over 1 points"
        );
        assert_eq!(
            v[2],
            "PASS  inclusive_sum >= 0.95x CUB at every size, every type: worst f32 2^28 1.25x over 2 points"
        );
        assert_eq!(
            v[6],
            "PASS  select_if >= 1.15x CUB at 2^28, every type: worst f32 2^28 1.25x over 1 points"
        );
    }

    #[test]
    fn misses_and_skips() {
        let mut r = sample();
        r.rows.push(row(CUB, Algorithm::ExclusiveSum, ElemType::I32, 1 << 24, 100e-6));
        r.rows.push(row(WARPSAFE, Algorithm::ExclusiveSum, ElemType::I32, 1 << 24, 110e-6));
        r.rows.retain(|row| !(row.algorithm == Algorithm::SelectFlagged && row.n == 1 << 16));
        let v = evaluate(&r);
        assert_eq!(v[3].status, Status::Miss);
        assert_eq!(v[3].detail, "worst i32 2^24 0.91x over 2 points; below: i32 2^24 0.91x");
        assert_eq!(v[5].status, Status::Miss, "0.91x is below 0.95x too");
        assert_eq!(v[9].status, Status::Skip);
        assert_eq!(v[9].detail, "warpsafe or CUB not measured at these sizes");
    }
}
