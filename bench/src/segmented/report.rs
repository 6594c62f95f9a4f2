//! `segreduce-bench`'s results: one [`Row`] per implementation (a warpsafe strategy, CUB,
//! the read ceiling), pattern and size; the derived columns (GB/s, ratio to CUB, fraction
//! of the read ceiling); the markdown tables; the CSV, which `--replot` reads back; and the
//! records of `cub/segmented_cub.cu`.
//!
//! Bytes of a call (the same for every implementation at a point, so GB/s compare): the
//! input and the sums written, and for the power-law pattern the offsets warpsafe reads
//! too (`n * 4 + segments * 4`, plus `(segments + 1) * 8`). CUB also reads offsets for the
//! fixed patterns; that is its cost, not the problem's. The read ceiling is the read-only
//! roofline kernel over that many bytes (rounded up to 16).

use std::fmt::Write as _;

use super::data::Pattern;
use crate::cub;
use crate::data::ElemType;
use crate::report::{
    from_records, optional, read_csv, size_label, to_record, write_csv, Check, CsvRow, Parts, Results, CUB,
};
use crate::timing::Timing;

/// The implementation name of the read ceiling's rows.
pub const CEILING: &str = "ceiling";

/// Bytes a call over `n` elements in `segments` segments of `pattern` moves (module docs).
pub fn bytes(pattern: Pattern, n: u64, segments: u64) -> u64 {
    let offsets = if pattern.has_offsets() { (segments + 1) * 8 } else { 0 };
    n * 4 + segments * 4 + offsets
}

/// One measurement (f32 sums).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// A warpsafe strategy's name (`auto`, `tile4`, ...), [`CUB`] or [`CEILING`].
    pub implementation: String,
    /// The segments.
    pub pattern: Pattern,
    /// Elements.
    pub n: u64,
    /// Segments.
    pub segments: u64,
    /// The measurement.
    pub timing: Timing,
    /// The output's check.
    pub check: Check,
    /// How it ran (strategy, CUB's temporary storage, the roofline kernel); no commas.
    pub detail: String,
}

impl Row {
    /// Whether the row is one of warpsafe's.
    pub fn is_warpsafe(&self) -> bool {
        self.implementation != CUB && self.implementation != CEILING
    }

    /// Bytes a call moves ([`bytes`]).
    pub fn bytes(&self) -> u64 {
        bytes(self.pattern, self.n, self.segments)
    }

    /// Throughput, 10^9 bytes per second.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes() as f64 / self.timing.seconds / 1e9
    }
}

impl Results<Row> {
    /// The row of `implementation` at `(pattern, n)`.
    pub fn find(&self, implementation: &str, pattern: Pattern, n: u64) -> Option<&Row> {
        self.rows.iter().find(|r| r.implementation == implementation && r.pattern == pattern && r.n == n)
    }

    /// `row`'s throughput over CUB's at the same point (CUB's time over the row's); none for
    /// CUB's and the ceiling's rows.
    pub fn ratio_to_cub(&self, row: &Row) -> Option<f64> {
        if !row.is_warpsafe() {
            return None;
        }
        self.find(CUB, row.pattern, row.n).map(|cub| cub.timing.seconds / row.timing.seconds)
    }

    /// `row`'s throughput over the read ceiling's for the same bytes.
    pub fn fraction_of_ceiling(&self, row: &Row) -> Option<f64> {
        if row.implementation == CEILING {
            return None;
        }
        self.find(CEILING, row.pattern, row.n).map(|c| c.timing.seconds / row.timing.seconds)
    }

    /// The `(pattern, n)` points measured, by pattern then size.
    pub fn points(&self) -> Vec<(Pattern, u64)> {
        let mut points: Vec<_> = self.rows.iter().map(|r| (r.pattern, r.n)).collect();
        points.sort();
        points.dedup();
        points
    }

    /// warpsafe's implementations present, in first-seen order.
    pub fn strategies(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for r in self.rows.iter().filter(|r| r.is_warpsafe()) {
            if !names.contains(&r.implementation.as_str()) {
                names.push(&r.implementation);
            }
        }
        names
    }

    /// Rows whose output differs from the reference.
    pub fn bad_rows(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| matches!(r.check, Check::Bad { .. })).collect()
    }
}

/// The markdown tables: one per pattern, a line per size and warpsafe strategy with its
/// and CUB's time per call, their ratio, warpsafe's GB/s, the ceiling's time and each
/// one's share of it.
pub fn tables(results: &Results<Row>) -> String {
    let mut out = String::new();
    let points = results.points();
    let mut patterns: Vec<Pattern> = points.iter().map(|p| p.0).collect();
    patterns.dedup();
    let us = |r: Option<&Row>| optional(r.map(|r| r.timing.seconds * 1e6), |t| format!("{t:.2}"));
    let percent = |r: Option<&Row>| {
        optional(r.and_then(|r| results.fraction_of_ceiling(r)), |f| format!("{:.1}", f * 100.0))
    };
    let strategies = results.strategies();
    for pattern in patterns {
        let _ = writeln!(out, "#### f32 sum, {pattern}\n");
        let _ = writeln!(
            out,
            "| n | segments | warpsafe | warpsafe µs | CUB µs | warpsafe / CUB | warpsafe GB/s | ceiling µs | warpsafe % of ceiling | CUB % of ceiling |"
        );
        let _ = writeln!(out, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|");
        for &(_, n) in points.iter().filter(|p| p.0 == pattern) {
            let cub = results.find(CUB, pattern, n);
            let ceiling = results.find(CEILING, pattern, n);
            let segments =
                results.rows.iter().find(|r| r.pattern == pattern && r.n == n).map_or(0, |r| r.segments);
            let names = if strategies.is_empty() { vec!["-"] } else { strategies.clone() };
            for name in names {
                let ours = results.find(name, pattern, n);
                let _ = writeln!(
                    out,
                    "| {} | {segments} | {name} | {} | {} | {} | {} | {} | {} | {} |",
                    size_label(n),
                    us(ours),
                    us(cub),
                    optional(ours.and_then(|r| results.ratio_to_cub(r)), |q| format!("{q:.2}x")),
                    optional(ours.map(Row::gb_per_s), |g| format!("{g:.1}")),
                    us(ceiling),
                    percent(ours),
                    percent(cub)
                );
            }
        }
        out.push('\n');
    }
    out
}

/// The CSV's column names.
pub const CSV_HEADER: &str = "implementation,type,pattern,n,bytes,seconds_per_call,gb_per_s,ratio_to_cub,\
fraction_of_ceiling,calls_per_batch,reps,min_seconds_per_call,max_seconds_per_call,segments,check,detail";

impl CsvRow for Row {
    fn parts(&self) -> Parts {
        let Row { implementation, n, timing, check, detail, .. } = self.clone();
        Parts { implementation, ty: ElemType::F32, n, timing, check, detail }
    }
    fn what_and_result(&self) -> (String, String) {
        (self.pattern.name(), self.segments.to_string())
    }
    fn bytes(&self) -> u64 {
        Row::bytes(self)
    }
    fn from_parts(p: Parts, what: &str, result: &str) -> Result<Row, &'static str> {
        let pattern = Pattern::parse(what).ok_or("pattern")?;
        let segments = result.parse().map_err(|_| "segments")?;
        if p.ty != ElemType::F32 {
            return Err("type");
        }
        let Parts { implementation, n, timing, check, detail, .. } = p;
        Ok(Row { implementation, pattern, n, segments, timing, check, detail })
    }
}

/// The CSV: the facts as `# key: value` lines, then a record per row.
pub fn to_csv(results: &Results<Row>) -> String {
    let records =
        results.rows.iter().map(|r| to_record(r, results.ratio_to_cub(r), results.fraction_of_ceiling(r)));
    write_csv(&results.meta, CSV_HEADER, records)
}

/// Reads back what [`to_csv`] wrote.
///
/// # Errors
/// A message with the line number.
pub fn from_csv(text: &str) -> Result<Results<Row>, String> {
    let (meta, records) = read_csv(text, CSV_HEADER, "segreduce-bench")?;
    Ok(Results { meta, rows: from_records(records)? })
}

/// A `cub,` record of `segmented_cub` (after the prefix):
/// `<pattern>,<n>,<segments>,<median>,<calls>,<reps>,<min>,<max>,<check>,<detail>`.
pub fn parse_cub_record(rest: &str) -> Option<Row> {
    let f: Vec<&str> = rest.split(',').collect();
    if f.len() != 10 {
        return None;
    }
    Some(Row {
        implementation: CUB.to_string(),
        pattern: Pattern::parse(f[0])?,
        n: f[1].parse().ok()?,
        segments: f[2].parse().ok()?,
        timing: cub::parse_timing(f[3], f[4], f[5], f[6], f[7])?,
        check: cub::parse_check(f[8])?,
        detail: f[9].to_string(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn row(implementation: &str, pattern: Pattern, n: u64, seconds: f64) -> Row {
        let segments = match pattern {
            Pattern::Fixed(len) => n.div_ceil(len),
            Pattern::PowerLaw => n / 16,
        };
        Row {
            implementation: implementation.into(),
            pattern,
            n,
            segments,
            timing: crate::timing::sample(seconds),
            check: if implementation == CEILING { Check::NotChecked } else { Check::Ok },
            detail: format!("{implementation} detail"),
        }
    }

    /// Every default pattern at 2^16 and 2^24: auto, CUB and the ceiling; auto 100x CUB at
    /// L=1 and 2x elsewhere, at 95% of the ceiling.
    pub(crate) fn sample() -> Results<Row> {
        let mut r = Results::default();
        r.set_meta("gpu", "NVIDIA H100 80GB HBM3");
        r.set_meta("date", "2026-11-25");
        for n in [1u64 << 16, 1 << 24] {
            for pattern in Pattern::DEFAULT {
                let ours = n as f64 * 1e-12;
                let cub = if pattern == Pattern::Fixed(1) { 100.0 * ours } else { 2.0 * ours };
                r.rows.push(row(CUB, pattern, n, cub));
                r.rows.push(row("auto", pattern, n, ours));
                r.rows.push(row(CEILING, pattern, n, 0.95 * ours));
            }
        }
        r
    }

    #[test]
    fn derived_columns() {
        let r = sample();
        let n = 1u64 << 24;
        let l1 = r.find("auto", Pattern::Fixed(1), n).unwrap();
        assert_eq!(l1.bytes(), 8 * n);
        assert!((r.ratio_to_cub(l1).unwrap() - 100.0).abs() < 1e-9);
        assert!((r.fraction_of_ceiling(l1).unwrap() - 0.95).abs() < 1e-12);
        let power = r.find("auto", Pattern::PowerLaw, n).unwrap();
        assert_eq!(power.bytes(), 4 * n + 4 * (n / 16) + 8 * (n / 16 + 1));
        let cub = r.find(CUB, Pattern::Fixed(32), n).unwrap();
        assert_eq!(r.ratio_to_cub(cub), None);
        assert!((r.fraction_of_ceiling(cub).unwrap() - 0.475).abs() < 1e-12);
        assert_eq!(r.fraction_of_ceiling(r.find(CEILING, Pattern::Fixed(32), n).unwrap()), None);
        assert_eq!(r.points().len(), 14);
        assert_eq!(r.strategies(), vec!["auto"]);
    }

    #[test]
    fn tables_have_a_line_per_size_and_strategy() {
        let t = tables(&sample());
        assert!(t.starts_with("#### f32 sum, L=1\n\n| n | segments | warpsafe |"), "{t}");
        let line = t.lines().find(|l| l.starts_with("| 2^24 | 16777216 |")).unwrap();
        assert_eq!(
            line,
            "| 2^24 | 16777216 | auto | 16.78 | 1677.72 | 100.00x | 8000.0 | 15.94 | 95.0 | 0.9 |"
        );
        assert_eq!(t.matches("#### ").count(), 7);
    }

    #[test]
    fn csv_round_trips() {
        let mut r = sample();
        r.rows[1].check = Check::Bad { expected: "segment 3 is 1 not 2".into() };
        let csv = to_csv(&r);
        let back = from_csv(&csv).unwrap();
        assert_eq!(back.meta, r.meta);
        assert_eq!(back.rows.len(), r.rows.len());
        for (a, b) in back.rows.iter().zip(&r.rows) {
            assert_eq!(
                (&a.implementation, a.pattern, a.n, a.segments, &a.check, &a.detail),
                (&b.implementation, b.pattern, b.n, b.segments, &b.check, &b.detail)
            );
            assert!((a.timing.seconds / b.timing.seconds - 1.0).abs() < 1e-6);
        }
        assert_eq!(back.bad_rows().len(), 1);
        let bad = format!("{CSV_HEADER}\nauto,f32,L=3,1,8,1e-6,1,-,-,20,7,1e-6,1e-6,1,ok,\n");
        assert_eq!(from_csv(&bad).unwrap_err(), "line 2: bad pattern");
    }

    #[test]
    fn parses_segmented_cub_records() {
        let text = "meta,cub,3.0.1\n\
cub,32,1048576,32768,5.1e-06,1952,7,5.0e-06,5.2e-06,ok,temp 1 B; 64-bit offsets\n\
cub,power-law,4097,300,3.0e-06,3334,7,2.9e-06,3.1e-06,bad:segment 3 is 1 not 2,temp 1 B\n\
cub,0,1024,1,3.0e-06,3334,7,2.9e-06,3.1e-06,ok,x\n\
cub,32,1024,32,3.0e-06,3334,7,2.9e-06,3.1e-06,ok\n";
        let out = cub::parse_with(text, parse_cub_record);
        assert_eq!(out.rows.len(), 2);
        assert_eq!(out.other.len(), 2, "length 0 and a record without detail");
        let a = &out.rows[0];
        assert_eq!(
            (a.implementation.as_str(), a.pattern, a.n, a.segments),
            (CUB, Pattern::Fixed(32), 1 << 20, 32768)
        );
        assert_eq!(out.rows[1].check, Check::Bad { expected: "segment 3 is 1 not 2".into() });
    }
}
