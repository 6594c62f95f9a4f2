//! The targets for an H100, evaluated on a run's results: each gives a
//! PASS/MISS line with the numbers (or SKIP when the run did not measure what it needs).
//! warpsafe's number is always the automatic choice (`auto`), what a user gets; the line
//! names the best single strategy beside it.

use crate::data::{ElemType, Op};
use crate::report::{size_label, Results, Row, CUB, WARPSAFE};

/// The outcome of one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Met.
    Pass,
    /// Measured and not met.
    Miss,
    /// Not measured in this run.
    Skip,
}

/// One target's line.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Met, missed or not measured.
    pub status: Status,
    /// What the target asks.
    pub target: String,
    /// The numbers.
    pub detail: String,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = match self.status {
            Status::Pass => "PASS",
            Status::Miss => "MISS",
            Status::Skip => "SKIP",
        };
        write!(f, "{status}  {}: {}", self.target, self.detail)
    }
}

fn tb(row: &Row) -> String {
    format!("{:.0} GB/s", row.gb_per_s())
}

/// The fastest warpsafe strategy (not `auto`) at a point, with its ratio to CUB.
fn best_strategy(results: &Results, ty: ElemType, op: Op, n: u64) -> Option<(&Row, f64)> {
    WARPSAFE
        .iter()
        .filter(|w| **w != "auto")
        .filter_map(|w| results.find(w, ty, Some(op), n))
        .filter_map(|r| results.ratio_to_cub(r).map(|q| (r, q)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

fn ratio_target(results: &Results, n: u64, min_ratio: f64) -> Verdict {
    let (ty, op) = (ElemType::F32, Op::Sum);
    let target = format!("{ty} {op} {} auto >= {min_ratio:.2}x CUB", size_label(n));
    let auto = results.find("auto", ty, Some(op), n);
    let cub = results.find(CUB, ty, Some(op), n);
    let (Some(auto), Some(cub)) = (auto, cub) else {
        let missing = if auto.is_none() { "auto" } else { "CUB" };
        return Verdict { status: Status::Skip, target, detail: format!("{missing} not measured") };
    };
    let ratio = cub.timing.seconds / auto.timing.seconds;
    let mut detail = format!(
        "{ratio:.2}x (auto {:.2} us = {}, CUB {:.2} us = {})",
        auto.timing.seconds * 1e6,
        tb(auto),
        cub.timing.seconds * 1e6,
        tb(cub)
    );
    if let Some((best, q)) = best_strategy(results, ty, op, n) {
        detail += &format!("; best strategy {} {q:.2}x", best.implementation);
    }
    let status = if ratio >= min_ratio { Status::Pass } else { Status::Miss };
    Verdict { status, target, detail }
}

fn roofline_target(results: &Results, n: u64, min_fraction: f64) -> Verdict {
    let (ty, op) = (ElemType::F32, Op::Sum);
    let target =
        format!("{ty} {op} {} auto >= {:.0}% of the read roofline", size_label(n), min_fraction * 100.0);
    let Some(auto) = results.find("auto", ty, Some(op), n) else {
        return Verdict { status: Status::Skip, target, detail: "auto not measured".into() };
    };
    let Some(roof) = results.find(crate::report::ROOFLINE, ty, None, n) else {
        return Verdict { status: Status::Skip, target, detail: "roofline not measured".into() };
    };
    let fraction = roof.timing.seconds / auto.timing.seconds;
    let detail = format!("{:.1}% (auto {}, roofline {})", fraction * 100.0, tb(auto), tb(roof));
    let status = if fraction >= min_fraction { Status::Pass } else { Status::Miss };
    Verdict { status, target, detail }
}

/// A target that every point must meet: `points` are `(ratio, label)`; PASS when none is
/// below `min_ratio`, and the detail names the worst and those below. SKIP with `skip`
/// when there are no points.
pub fn every_point(target: String, mut points: Vec<(f64, String)>, min_ratio: f64, skip: &str) -> Verdict {
    if points.is_empty() {
        return Verdict { status: Status::Skip, target, detail: skip.to_string() };
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let below: Vec<String> =
        points.iter().filter(|(q, _)| *q < min_ratio).map(|(q, label)| format!("{label} {q:.2}x")).collect();
    let (worst_q, worst) = &points[0];
    let worst_text = format!("worst {worst} {worst_q:.2}x over {} points", points.len());
    if below.is_empty() {
        Verdict { status: Status::Pass, target, detail: worst_text }
    } else {
        Verdict { status: Status::Miss, target, detail: format!("{worst_text}; below: {}", below.join(", ")) }
    }
}

fn auto_everywhere(results: &Results, min_ratio: f64) -> Verdict {
    let target = format!("auto >= {min_ratio:.2}x CUB at every size, type and op");
    let points = results
        .rows
        .iter()
        .filter(|r| r.implementation == "auto")
        .filter_map(|r| {
            let label = format!("{} {} {}", r.ty, r.op.map_or("read", Op::name), size_label(r.n));
            results.ratio_to_cub(r).map(|q| (q, label))
        })
        .collect();
    every_point(target, points, min_ratio, "auto or CUB not measured")
}

/// Every target of the issue, in its order.
pub fn evaluate(results: &Results) -> Vec<Verdict> {
    let n = |k: u32| 1u64 << k;
    vec![
        ratio_target(results, n(28), 1.00),
        roofline_target(results, n(28), 0.97),
        ratio_target(results, n(16), 2.0),
        ratio_target(results, n(20), 2.0),
        ratio_target(results, n(24), 1.00),
        ratio_target(results, n(26), 1.00),
        auto_everywhere(results, 0.95),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{row, sample};

    #[test]
    fn sample_results() {
        let v = evaluate(&sample());
        let text: Vec<String> = v.iter().map(|v| v.to_string()).collect();
        assert_eq!(
            text[0],
            "PASS  f32 sum 2^28 auto >= 1.00x CUB: 1.05x (auto 380.00 us = 2826 GB/s, CUB 400.00 us = 2684 GB/s); \
best strategy two-pass 1.03x"
        );
        assert_eq!(
            text[1],
            "PASS  f32 sum 2^28 auto >= 97% of the read roofline: 97.4% (auto 2826 GB/s, roofline 2902 GB/s)"
        );
        assert!(text[2].starts_with("PASS  f32 sum 2^16 auto >= 2.00x CUB: 2.29x"), "{}", text[2]);
        assert!(text[2].ends_with("best strategy last-block 2.67x"), "{}", text[2]);
        assert_eq!(text[3], "SKIP  f32 sum 2^20 auto >= 2.00x CUB: auto not measured");
        assert_eq!(v[6].status, Status::Pass);
        assert_eq!(v[6].detail, "worst f32 sum 2^28 1.05x over 2 points");
    }

    #[test]
    fn misses_say_by_how_much() {
        let mut r = sample();
        r.rows.push(row(CUB, ElemType::I32, Some(Op::Max), 1 << 10, 5e-6));
        r.rows.push(row("auto", ElemType::I32, Some(Op::Max), 1 << 10, 6e-6));
        let v = evaluate(&r);
        assert_eq!(v[6].status, Status::Miss);
        assert_eq!(v[6].detail, "worst i32 max 2^10 0.83x over 3 points; below: i32 max 2^10 0.83x");
        let mut slow = sample();
        slow.rows.retain(|r| !(r.implementation == "auto" && r.n == 1 << 28));
        slow.rows.push(row("auto", ElemType::F32, Some(Op::Sum), 1 << 28, 410e-6));
        let v = evaluate(&slow);
        assert_eq!(v[0].status, Status::Miss);
        assert!(v[0].detail.starts_with("0.98x"));
        assert_eq!(v[1].status, Status::Miss);
        assert!(v[1].detail.starts_with("90.2%"), "{}", v[1].detail);
    }
}
