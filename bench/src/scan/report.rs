//! `scan-bench`'s results: one [`Row`] per implementation (warpsafe, CUB, the copy),
//! algorithm, type and size; the derived columns (GB/s, ratio to CUB, fraction of the copy
//! ceiling); the markdown tables; the CSV, which `--replot` reads back; and the records of
//! `cub/scan_cub.cu`.

use std::fmt::{self, Write as _};

use crate::cub;
use crate::data::ElemType;
use crate::report::{
    from_records, optional, read_csv, size_label, to_record, write_csv, Check, CsvRow, Parts, Results, CUB,
};
use crate::timing::Timing;

/// The implementation name of warpsafe's rows.
pub const WARPSAFE: &str = "warpsafe";
/// The implementation name of the copy ceiling's rows (measured by `scan_cub`).
pub const COPY: &str = "copy";

/// What a row measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// Inclusive prefix sum.
    InclusiveSum,
    /// Exclusive prefix sum.
    ExclusiveSum,
    /// The elements below the midpoint, in order, and their count.
    SelectIf,
    /// The elements whose flag is set, in order, and their count.
    SelectFlagged,
    /// A device-to-device copy of the input (the ceiling).
    Copy,
}

impl Algorithm {
    /// What warpsafe and CUB both run, in table order.
    pub const MEASURED: [Algorithm; 4] =
        [Algorithm::InclusiveSum, Algorithm::ExclusiveSum, Algorithm::SelectIf, Algorithm::SelectFlagged];
    /// The scans.
    pub const SCANS: [Algorithm; 2] = [Algorithm::InclusiveSum, Algorithm::ExclusiveSum];
    /// The selections.
    pub const SELECTS: [Algorithm; 2] = [Algorithm::SelectIf, Algorithm::SelectFlagged];

    /// The name on the command line, in the CSV and in `scan_cub`'s output.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::InclusiveSum => "inclusive_sum",
            Algorithm::ExclusiveSum => "exclusive_sum",
            Algorithm::SelectIf => "select_if",
            Algorithm::SelectFlagged => "select_flagged",
            Algorithm::Copy => "copy",
        }
    }

    /// The algorithm named `name`.
    pub fn parse(name: &str) -> Option<Algorithm> {
        Algorithm::MEASURED.into_iter().chain([Algorithm::Copy]).find(|a| a.name() == name)
    }

    /// Whether it writes a selection (and a count).
    pub fn selects(self) -> bool {
        matches!(self, Algorithm::SelectIf | Algorithm::SelectFlagged)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// [`WARPSAFE`], [`CUB`] or [`COPY`].
    pub implementation: String,
    /// What was run.
    pub algorithm: Algorithm,
    /// Element type.
    pub ty: ElemType,
    /// Elements.
    pub n: u64,
    /// The measurement.
    pub timing: Timing,
    /// A selection's count (the last call's).
    pub selected: Option<u64>,
    /// The output's check.
    pub check: Check,
    /// How it ran (launch shape, CUB's temporary storage); no commas.
    pub detail: String,
}

impl Row {
    /// Bytes a call moves: a scan or the copy reads and writes every element; a selection
    /// reads every element (and flag) and writes the kept ones.
    pub fn bytes(&self) -> u64 {
        let size = self.ty.size();
        match self.algorithm {
            Algorithm::InclusiveSum | Algorithm::ExclusiveSum | Algorithm::Copy => 2 * self.n * size,
            Algorithm::SelectIf => (self.n + self.selected.unwrap_or(0)) * size,
            Algorithm::SelectFlagged => (self.n + self.selected.unwrap_or(0)) * size + self.n,
        }
    }

    /// Throughput, 10^9 bytes per second.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes() as f64 / self.timing.seconds / 1e9
    }
}

impl Results<Row> {
    /// The row of `implementation` at `(algorithm, ty, n)`.
    pub fn find(&self, implementation: &str, algorithm: Algorithm, ty: ElemType, n: u64) -> Option<&Row> {
        self.rows.iter().find(|r| {
            r.implementation == implementation && r.algorithm == algorithm && r.ty == ty && r.n == n
        })
    }

    /// `row`'s throughput over CUB's at the same algorithm, type and size (CUB's time over
    /// the row's).
    pub fn ratio_to_cub(&self, row: &Row) -> Option<f64> {
        if row.implementation == CUB || row.algorithm == Algorithm::Copy {
            return None;
        }
        self.find(CUB, row.algorithm, row.ty, row.n).map(|cub| cub.timing.seconds / row.timing.seconds)
    }

    /// `row`'s GB/s over the copy's of the same elements (for a scan, which moves the
    /// copy's bytes: the copy's time over the row's).
    pub fn fraction_of_copy(&self, row: &Row) -> Option<f64> {
        if row.algorithm == Algorithm::Copy {
            return None;
        }
        self.find(COPY, Algorithm::Copy, row.ty, row.n).map(|copy| row.gb_per_s() / copy.gb_per_s())
    }

    /// The `(algorithm, type, n)` points warpsafe or CUB measured, in that order.
    pub fn points(&self) -> Vec<(Algorithm, ElemType, u64)> {
        let mut points: Vec<_> = self
            .rows
            .iter()
            .filter(|r| r.algorithm != Algorithm::Copy)
            .map(|r| (r.algorithm, r.ty, r.n))
            .collect();
        points.sort();
        points.dedup();
        points
    }

    /// Rows whose output differs from the reference.
    pub fn bad_rows(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| matches!(r.check, Check::Bad { .. })).collect()
    }
}

/// The markdown tables: one per algorithm, a line per type and size with warpsafe's and
/// CUB's time per call, their ratio, warpsafe's GB/s, the copy's time and each one's share
/// of the copy's throughput.
pub fn tables(results: &Results<Row>) -> String {
    let mut out = String::new();
    let points = results.points();
    let us = |r: Option<&Row>| optional(r.map(|r| r.timing.seconds * 1e6), |t| format!("{t:.2}"));
    let percent = |r: Option<&Row>| {
        optional(r.and_then(|r| results.fraction_of_copy(r)), |f| format!("{:.1}", f * 100.0))
    };
    for algorithm in Algorithm::MEASURED {
        if !points.iter().any(|p| p.0 == algorithm) {
            continue;
        }
        let _ = writeln!(out, "#### {algorithm}\n");
        let _ = writeln!(
            out,
            "| type | n | warpsafe µs | CUB µs | warpsafe / CUB | warpsafe GB/s | copy µs | warpsafe % of copy | CUB % of copy |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &(_, ty, n) in points.iter().filter(|p| p.0 == algorithm) {
            let ours = results.find(WARPSAFE, algorithm, ty, n);
            let cub = results.find(CUB, algorithm, ty, n);
            let copy = results.find(COPY, Algorithm::Copy, ty, n);
            let _ = writeln!(
                out,
                "| {ty} | {} | {} | {} | {} | {} | {} | {} | {} |",
                size_label(n),
                us(ours),
                us(cub),
                optional(ours.and_then(|r| results.ratio_to_cub(r)), |q| format!("{q:.2}x")),
                optional(ours.map(Row::gb_per_s), |g| format!("{g:.1}")),
                us(copy),
                percent(ours),
                percent(cub)
            );
        }
        out.push('\n');
    }
    out
}

/// The CSV's column names.
pub const CSV_HEADER: &str = "implementation,type,algorithm,n,bytes,seconds_per_call,gb_per_s,ratio_to_cub,\
fraction_of_copy,calls_per_batch,reps,min_seconds_per_call,max_seconds_per_call,selected,check,detail";

impl CsvRow for Row {
    fn parts(&self) -> Parts {
        let Row { implementation, ty, n, timing, check, detail, .. } = self.clone();
        Parts { implementation, ty, n, timing, check, detail }
    }
    fn what_and_result(&self) -> (String, String) {
        (self.algorithm.name().to_string(), self.selected.map_or_else(|| "-".to_string(), |s| s.to_string()))
    }
    fn bytes(&self) -> u64 {
        Row::bytes(self)
    }
    fn from_parts(p: Parts, what: &str, result: &str) -> Result<Row, &'static str> {
        let algorithm = Algorithm::parse(what).ok_or("algorithm")?;
        let selected = match result {
            "-" => None,
            s => Some(s.parse().map_err(|_| "selected")?),
        };
        let Parts { implementation, ty, n, timing, check, detail } = p;
        Ok(Row { implementation, algorithm, ty, n, timing, selected, check, detail })
    }
}

/// The CSV: the facts as `# key: value` lines, then a record per row.
pub fn to_csv(results: &Results<Row>) -> String {
    let records =
        results.rows.iter().map(|r| to_record(r, results.ratio_to_cub(r), results.fraction_of_copy(r)));
    write_csv(&results.meta, CSV_HEADER, records)
}

/// Reads back what [`to_csv`] wrote.
///
/// # Errors
/// A message with the line number.
pub fn from_csv(text: &str) -> Result<Results<Row>, String> {
    let (meta, records) = read_csv(text, CSV_HEADER, "scan-bench")?;
    Ok(Results { meta, rows: from_records(records)? })
}

/// A `cub,` record of `scan_cub` (after the prefix):
/// `<algorithm>,<type>,<n>,<median>,<selected or ->,<calls>,<reps>,<min>,<max>,<check>,<detail>`.
/// The copy's records become [`COPY`] rows, the others [`CUB`] rows.
pub fn parse_cub_record(rest: &str) -> Option<Row> {
    let f: Vec<&str> = rest.split(',').collect();
    if f.len() != 11 {
        return None;
    }
    let algorithm = Algorithm::parse(f[0])?;
    let selected = match f[4] {
        "-" if !algorithm.selects() => None,
        s if algorithm.selects() => Some(s.parse().ok()?),
        _ => return None,
    };
    Some(Row {
        implementation: if algorithm == Algorithm::Copy { COPY } else { CUB }.to_string(),
        algorithm,
        ty: ElemType::parse(f[1])?,
        n: f[2].parse().ok()?,
        timing: cub::parse_timing(f[3], f[5], f[6], f[7], f[8])?,
        selected,
        check: cub::parse_check(f[9])?,
        detail: f[10].to_string(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn row(implementation: &str, algorithm: Algorithm, ty: ElemType, n: u64, seconds: f64) -> Row {
        Row {
            implementation: implementation.into(),
            algorithm,
            ty,
            n,
            timing: crate::timing::sample(seconds),
            selected: algorithm.selects().then_some(n / 2),
            check: Check::Ok,
            detail: format!("{implementation} detail"),
        }
    }

    /// f32 at 2^16 and 2^28: every algorithm, warpsafe, CUB and the copy.
    pub(crate) fn sample() -> Results<Row> {
        let mut r = Results::default();
        r.set_meta("gpu", "NVIDIA H100 80GB HBM3");
        r.set_meta("date", "2026-11-25");
        for (n, cub_s, ours_s, copy_s) in [(1u64 << 16, 8e-6, 4e-6, 3e-6), (1 << 28, 1000e-6, 800e-6, 700e-6)]
        {
            for algorithm in Algorithm::MEASURED {
                r.rows.push(row(CUB, algorithm, ElemType::F32, n, cub_s));
                r.rows.push(row(WARPSAFE, algorithm, ElemType::F32, n, ours_s));
            }
            r.rows.push(row(COPY, Algorithm::Copy, ElemType::F32, n, copy_s));
        }
        r
    }

    #[test]
    fn derived_columns() {
        let r = sample();
        let n = 1u64 << 28;
        let scan = r.find(WARPSAFE, Algorithm::InclusiveSum, ElemType::F32, n).unwrap();
        assert_eq!(scan.bytes(), 2 << 30);
        assert!((r.ratio_to_cub(scan).unwrap() - 1.25).abs() < 1e-12);
        assert!((r.fraction_of_copy(scan).unwrap() - 700.0 / 800.0).abs() < 1e-12, "same bytes as the copy");
        let flagged = r.find(WARPSAFE, Algorithm::SelectFlagged, ElemType::F32, n).unwrap();
        assert_eq!(flagged.bytes(), n * 4 + n / 2 * 4 + n);
        let copy = r.find(COPY, Algorithm::Copy, ElemType::F32, n).unwrap();
        assert_eq!((r.ratio_to_cub(copy), r.fraction_of_copy(copy)), (None, None));
        let cub = r.find(CUB, Algorithm::SelectIf, ElemType::F32, n).unwrap();
        assert_eq!(r.ratio_to_cub(cub), None);
        assert_eq!(r.points().len(), 8);
    }

    #[test]
    fn tables_have_a_line_per_type_and_size() {
        let t = tables(&sample());
        assert!(t.starts_with("#### inclusive_sum\n\n| type | n | warpsafe µs |"), "{t}");
        let line = t.lines().find(|l| l.starts_with("| f32 | 2^28 |")).unwrap();
        assert_eq!(line, "| f32 | 2^28 | 800.00 | 1000.00 | 1.25x | 2684.4 | 700.00 | 87.5 | 70.0 |");
        assert_eq!(t.matches("#### ").count(), 4);
    }

    #[test]
    fn csv_round_trips() {
        let mut r = sample();
        r.rows[1].check = Check::Bad { expected: "element 3 is 1 not 2".into() };
        let csv = to_csv(&r);
        assert!(csv
            .starts_with("# gpu: NVIDIA H100 80GB HBM3\n# date: 2026-11-25\nimplementation,type,algorithm,"));
        let back = from_csv(&csv).unwrap();
        assert_eq!(back.meta, r.meta);
        assert_eq!(back.rows.len(), r.rows.len());
        for (a, b) in back.rows.iter().zip(&r.rows) {
            assert_eq!(
                (&a.implementation, a.algorithm, a.ty, a.n, a.selected, &a.check, &a.detail),
                (&b.implementation, b.algorithm, b.ty, b.n, b.selected, &b.check, &b.detail)
            );
            assert!((a.timing.seconds / b.timing.seconds - 1.0).abs() < 1e-6);
        }
        assert_eq!(back.bad_rows().len(), 1);
        let bad = format!("{CSV_HEADER}\nwarpsafe,f32,scan,1,8,1e-6,1,-,-,20,7,1e-6,1e-6,-,ok,\n");
        assert_eq!(from_csv(&bad).unwrap_err(), "line 2: bad algorithm");
        assert!(from_csv(crate::report::CSV_HEADER).unwrap_err().contains("not the scan-bench CSV header"));
    }

    #[test]
    fn parses_scan_cub_records() {
        let text = "meta,cub,3.0.1\n\
cub,inclusive_sum,f32,1048576,5.1e-06,-,1952,7,5.0e-06,5.2e-06,ok,temp 1024 B; num_items int\n\
cub,select_if,i32,1024,3.0e-06,517,3334,7,2.9e-06,3.1e-06,bad:count 517 not 518,temp 8 B; num_items int\n\
cub,copy,f64,1024,2.0e-06,-,3334,7,1.9e-06,2.1e-06,ok,cudaMemcpyAsync device to device\n\
cub,select_flagged,f32,1024,3.0e-06,-,3334,7,2.9e-06,3.1e-06,ok,x\n\
cub,inclusive_sum,f32,1024,3.0e-06,5,3334,7,2.9e-06,3.1e-06,ok,x\n\
skip,i32 2148532224: needs about 17.3 GiB of device memory and 9.0 GiB are free\n";
        let out = cub::parse_with(text, parse_cub_record);
        assert_eq!(out.rows.len(), 3);
        assert_eq!(out.other.len(), 3, "a selection without a count, a scan with one, the skip line");
        let scan = &out.rows[0];
        assert_eq!(
            (scan.implementation.as_str(), scan.algorithm, scan.ty, scan.n),
            (CUB, Algorithm::InclusiveSum, ElemType::F32, 1 << 20)
        );
        assert_eq!(scan.selected, None);
        assert_eq!(scan.detail, "temp 1024 B; num_items int");
        let select = &out.rows[1];
        assert_eq!(select.selected, Some(517));
        assert_eq!(select.check, Check::Bad { expected: "count 517 not 518".into() });
        assert_eq!(out.rows[2].implementation, COPY);
    }
}
