//! A benchmark's results ([`Results`]: facts and rows, of any row type), their CSV form
//! (`# key: value` fact lines, then records; `--replot` reads it back) and the report's
//! header; and `reduce-bench`'s rows: one [`Row`] per implementation, type, operation and
//! size, the derived columns (GB/s, ratio to CUB, fraction of the roofline) and the
//! printed table.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::data::{ElemType, Op};
use crate::timing::Timing;

/// The implementation name of CUB's rows.
pub const CUB: &str = "cub";
/// The implementation name of the read-roofline rows.
pub const ROOFLINE: &str = "roofline";
/// warpsafe's implementations, in table order: each strategy, then the automatic choice.
pub const WARPSAFE: [&str; 4] = ["two-pass", "last-block", "cooperative", "auto"];

/// Whether a row's result was checked against the host reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// Bitwise equal to the reference.
    Ok,
    /// Different: the reference's value.
    Bad {
        /// The expected value, printed.
        expected: String,
    },
    /// Nothing to check (the roofline).
    NotChecked,
}

impl Check {
    /// The CSV field: `ok`, `bad:<expected>` or `-`.
    pub fn to_field(&self) -> String {
        match self {
            Check::Ok => "ok".into(),
            Check::Bad { expected } => format!("bad:{expected}"),
            Check::NotChecked => "-".into(),
        }
    }

    /// Reads back what [`Check::to_field`] wrote.
    pub fn from_field(field: &str) -> Option<Check> {
        match field {
            "ok" => Some(Check::Ok),
            "-" => Some(Check::NotChecked),
            _ => field.strip_prefix("bad:").map(|e| Check::Bad { expected: e.to_string() }),
        }
    }
}

/// One measured implementation at one type, operation and size. The roofline's rows
/// have `op: None` (it reads, it does not reduce).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `cub`, `roofline`, or one of [`WARPSAFE`].
    pub implementation: String,
    /// Element type.
    pub ty: ElemType,
    /// The reduction, `None` for the roofline.
    pub op: Option<Op>,
    /// Elements.
    pub n: u64,
    /// The measurement.
    pub timing: Timing,
    /// The result as printed (empty for the roofline).
    pub result: String,
    /// The result's check.
    pub check: Check,
    /// How it ran, e.g. `last-block 528x256` (strategy, blocks x threads per block); no
    /// commas.
    pub detail: String,
}

impl Row {
    /// Bytes the call must read: every element once.
    pub fn bytes(&self) -> u64 {
        self.n * self.ty.size()
    }

    /// Read throughput, 10^9 bytes per second.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes() as f64 / self.timing.seconds / 1e9
    }
}

/// A whole run: `key: value` facts about it (GPU, driver, date, ...) and its rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Results<R = Row> {
    /// Facts, in the order they were found.
    pub meta: Vec<(String, String)>,
    /// Every measurement.
    pub rows: Vec<R>,
}

impl<R> Default for Results<R> {
    fn default() -> Self {
        Results { meta: Vec::new(), rows: Vec::new() }
    }
}

impl<R> Results<R> {
    /// The value of fact `key`.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Adds or replaces fact `key`.
    pub fn set_meta(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.meta.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.meta.push((key.to_string(), value)),
        }
    }
}

impl Results<Row> {
    /// The row of `implementation` at `(ty, op, n)`.
    pub fn find(&self, implementation: &str, ty: ElemType, op: Option<Op>, n: u64) -> Option<&Row> {
        self.rows.iter().find(|r| r.implementation == implementation && r.ty == ty && r.op == op && r.n == n)
    }

    /// `row`'s throughput over CUB's at the same type, operation and size (CUB's time over
    /// the row's), when CUB was measured there.
    pub fn ratio_to_cub(&self, row: &Row) -> Option<f64> {
        let op = row.op?;
        self.find(CUB, row.ty, Some(op), row.n).map(|cub| cub.timing.seconds / row.timing.seconds)
    }

    /// `row`'s throughput over the read roofline's for the same bytes.
    pub fn fraction_of_roofline(&self, row: &Row) -> Option<f64> {
        self.find(ROOFLINE, row.ty, None, row.n).map(|roof| roof.timing.seconds / row.timing.seconds)
    }

    /// The `(type, op, n)` groups present, in type, op, size order (roofline-only groups
    /// are left out).
    pub fn groups(&self) -> Vec<(ElemType, Op, u64)> {
        let mut groups: Vec<_> = self.rows.iter().filter_map(|r| r.op.map(|op| (r.ty, op, r.n))).collect();
        groups.sort();
        groups.dedup();
        groups
    }

    /// The rows of one group in table order: CUB, warpsafe's, any others, the roofline.
    pub fn group_rows(&self, ty: ElemType, op: Op, n: u64) -> Vec<&Row> {
        let rank = |name: &str| match name {
            CUB => 0,
            ROOFLINE => 100,
            other => WARPSAFE.iter().position(|w| *w == other).map_or(50, |p| 1 + p),
        };
        let mut rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.ty == ty && r.n == n && (r.op == Some(op) || r.op.is_none()))
            .collect();
        rows.sort_by_key(|r| rank(&r.implementation));
        rows
    }

    /// Rows whose result differs from the reference.
    pub fn bad_rows(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| matches!(r.check, Check::Bad { .. })).collect()
    }
}

/// `2^k` for powers of two, the plain number otherwise.
pub fn size_label(n: u64) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// `f(v)`, or `-` for `None`.
pub fn optional(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

/// The printed table: a block per type, operation and size, a line per implementation
/// with its time per call, GB/s, throughput relative to CUB, share of the read roofline
/// and result check.
pub fn table(results: &Results) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<4} {:<4} {:>5}  {:<12} {:>12} {:>9} {:>7} {:>7}  {:<30} check",
        "type", "op", "n", "impl", "us/call", "GB/s", "x CUB", "% roof", "launch"
    );
    for (ty, op, n) in results.groups() {
        for row in results.group_rows(ty, op, n) {
            let check = match &row.check {
                Check::Ok => "ok".to_string(),
                Check::Bad { expected } => format!("BAD: got {}, expected {expected}", row.result),
                Check::NotChecked => String::new(),
            };
            let line = format!(
                "{:<4} {:<4} {:>5}  {:<12} {:>12.2} {:>9.1} {:>7} {:>7}  {:<30} {}",
                ty.name(),
                row.op.map_or("read", Op::name),
                size_label(n),
                row.implementation,
                row.timing.seconds * 1e6,
                row.gb_per_s(),
                optional(results.ratio_to_cub(row), |r| format!("{r:.2}")),
                optional(results.fraction_of_roofline(row), |f| format!("{:.1}", f * 100.0)),
                row.detail,
                check
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// The CSV's column names.
pub const CSV_HEADER: &str = "implementation,type,op,n,bytes,seconds_per_call,gb_per_s,ratio_to_cub,\
fraction_of_roofline,calls_per_batch,reps,min_seconds_per_call,max_seconds_per_call,result,check,detail";

/// One CSV record of a benchmark, by position: each benchmark names the columns in its
/// own header, the same but for the third (what ran), the ninth (the fraction of which
/// ceiling) and the fourteenth (what it returned). The derived columns (`gb_per_s`,
/// `ratio_to_cub`, the fraction) are written for readers of the file and recomputed, not
/// read, by [`from_records`].
#[derive(Serialize, Deserialize)]
pub struct Record {
    implementation: String,
    ty: String,
    what: String,
    n: u64,
    bytes: u64,
    seconds_per_call: f64,
    gb_per_s: String,
    ratio_to_cub: String,
    fraction: String,
    calls_per_batch: u32,
    reps: u32,
    min_seconds_per_call: f64,
    max_seconds_per_call: f64,
    result: String,
    check: String,
    detail: String,
}

/// The columns every benchmark's rows have.
#[derive(Clone, Debug, PartialEq)]
pub struct Parts {
    /// Who ran.
    pub implementation: String,
    /// Element type.
    pub ty: ElemType,
    /// Elements.
    pub n: u64,
    /// The measurement.
    pub timing: Timing,
    /// The result's check.
    pub check: Check,
    /// How it ran.
    pub detail: String,
}

/// A row that has a CSV record.
pub trait CsvRow: Sized {
    /// The shared columns.
    fn parts(&self) -> Parts;
    /// The third column (what ran) and the fourteenth (what it returned).
    fn what_and_result(&self) -> (String, String);
    /// Bytes a call moves.
    fn bytes(&self) -> u64;
    /// The row again from its parts and those two columns; the error names the column that
    /// does not parse.
    ///
    /// # Errors
    /// The name of the column that does not parse.
    fn from_parts(parts: Parts, what: &str, result: &str) -> Result<Self, &'static str>;
}

/// `row`'s record, with its ratio to CUB and its fraction of the benchmark's ceiling.
pub fn to_record<R: CsvRow>(row: &R, ratio_to_cub: Option<f64>, fraction: Option<f64>) -> Record {
    let p = row.parts();
    let (what, result) = row.what_and_result();
    let bytes = row.bytes();
    Record {
        implementation: p.implementation,
        ty: p.ty.name().to_string(),
        what,
        n: p.n,
        bytes,
        seconds_per_call: p.timing.seconds,
        gb_per_s: format!("{:.3}", bytes as f64 / p.timing.seconds / 1e9),
        ratio_to_cub: optional(ratio_to_cub, |r| format!("{r:.4}")),
        fraction: optional(fraction, |f| format!("{f:.4}")),
        calls_per_batch: p.timing.calls,
        reps: p.timing.reps,
        min_seconds_per_call: p.timing.min_seconds,
        max_seconds_per_call: p.timing.max_seconds,
        result,
        check: p.check.to_field(),
        detail: p.detail,
    }
}

/// The rows of `records` (with their line numbers, for messages).
///
/// # Errors
/// `line N: bad <column>` for the first record that does not parse.
pub fn from_records<R: CsvRow>(records: Vec<(usize, Record)>) -> Result<Vec<R>, String> {
    records
        .into_iter()
        .map(|(line, r)| {
            let bad = |what: &str| format!("line {line}: bad {what}");
            let parts = Parts {
                implementation: r.implementation,
                ty: ElemType::parse(&r.ty).ok_or_else(|| bad("type"))?,
                n: r.n,
                timing: Timing {
                    seconds: r.seconds_per_call,
                    min_seconds: r.min_seconds_per_call,
                    max_seconds: r.max_seconds_per_call,
                    calls: r.calls_per_batch,
                    reps: r.reps,
                },
                check: Check::from_field(&r.check).ok_or_else(|| bad("check"))?,
                detail: r.detail,
            };
            R::from_parts(parts, &r.what, &r.result).map_err(bad)
        })
        .collect()
}

/// A CSV: `# key: value` lines for the facts, then `header` and one line per record
/// (written by the `csv` crate, which quotes what needs quoting).
pub fn write_csv(
    meta: &[(String, String)],
    header: &str,
    records: impl IntoIterator<Item = Record>,
) -> String {
    let mut out = String::new();
    for (k, v) in meta {
        let _ = writeln!(out, "# {k}: {}", v.replace(['\n', '\r'], " "));
    }
    out.push_str(header);
    out.push('\n');
    let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    for record in records {
        // Serialising plain fields into memory cannot fail.
        writer.serialize(record).expect("writing a CSV record to memory");
    }
    let bytes = writer.into_inner().expect("flushing a CSV writer into memory");
    out.push_str(&String::from_utf8_lossy(&bytes));
    out
}

/// Reads back what [`write_csv`] wrote: the facts, and each record with its line number
/// (for messages). Errors name the line; `tool` names the CSV when its header is not
/// `header`.
///
/// # Errors
/// A message with the line number.
#[allow(clippy::type_complexity)]
pub fn read_csv(
    text: &str,
    header: &str,
    tool: &str,
) -> Result<(Vec<(String, String)>, Vec<(usize, Record)>), String> {
    let mut meta = Vec::new();
    let facts = text.lines().take_while(|l| l.starts_with("# ")).count();
    for line in text.lines().take(facts) {
        let fact = &line[2..];
        let (k, v) = fact
            .split_once(": ")
            .ok_or_else(|| format!("line {}: expected '# key: value'", meta.len() + 1))?;
        meta.push((k.to_string(), v.to_string()));
    }
    let body: String = text.lines().skip(facts).map(|l| format!("{l}\n")).collect();
    if body.trim().is_empty() {
        return Err("no CSV header found".into());
    }
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(body.as_bytes());
    let mut lines = reader.records();
    let first = lines.next().transpose().map_err(|e| format!("line {}: {e}", facts + 1))?;
    if first.is_none_or(|h| h.iter().collect::<Vec<_>>().join(",") != header) {
        return Err(format!("line {}: not the {tool} CSV header", facts + 1));
    }
    let columns = header.split(',').count();
    let mut records = Vec::new();
    for record in lines {
        let line = facts + records.len() + 2;
        let record = record.map_err(|e| format!("line {line}: {e}"))?;
        if record.len() != columns {
            return Err(format!("line {line}: {} fields, not {columns}", record.len()));
        }
        records.push((line, record.deserialize(None).map_err(|e| format!("line {line}: {e}"))?));
    }
    Ok((meta, records))
}

impl CsvRow for Row {
    fn parts(&self) -> Parts {
        Parts {
            implementation: self.implementation.clone(),
            ty: self.ty,
            n: self.n,
            timing: self.timing,
            check: self.check.clone(),
            detail: self.detail.clone(),
        }
    }
    fn what_and_result(&self) -> (String, String) {
        (self.op.map_or("read", Op::name).to_string(), self.result.clone())
    }
    fn bytes(&self) -> u64 {
        Row::bytes(self)
    }
    fn from_parts(p: Parts, what: &str, result: &str) -> Result<Row, &'static str> {
        let op = match what {
            "read" => None,
            name => Some(Op::parse(name).ok_or("op")?),
        };
        let Parts { implementation, ty, n, timing, check, detail } = p;
        Ok(Row { implementation, ty, op, n, timing, result: result.to_string(), check, detail })
    }
}

/// The CSV of `reduce-bench`'s results.
pub fn to_csv(results: &Results) -> String {
    let records =
        results.rows.iter().map(|r| to_record(r, results.ratio_to_cub(r), results.fraction_of_roofline(r)));
    write_csv(&results.meta, CSV_HEADER, records)
}

/// Reads back what [`to_csv`] wrote. Errors name the line.
///
/// # Errors
/// A message with the line number.
pub fn from_csv(text: &str) -> Result<Results, String> {
    let (meta, records) = read_csv(text, CSV_HEADER, "reduce-bench")?;
    Ok(Results { meta, rows: from_records(records)? })
}

/// A report's header for a run of `tool`: what ran where and when, from the facts the
/// benchmarks record (`gpu`, `driver`, CUB's `cub_*`, `method`, `command`, ...).
pub fn header<R>(tool: &str, results: &Results<R>) -> String {
    let get = |k: &str| results.meta(k).unwrap_or("?");
    let mut h = String::new();
    let _ = writeln!(
        h,
        "{tool}, {} on {} ({} SMs, compute capability {}), driver {}, CUDA driver API {}",
        get("date"),
        get("gpu"),
        get("multiprocessors"),
        get("compute_capability"),
        get("driver"),
        get("cub_cuda_driver_api")
    );
    let _ = writeln!(
        h,
        "CUB {} built by nvcc {} (CUDA runtime {}); warpsafe PTX {}",
        get("cub_cub"),
        get("cub_nvcc"),
        get("cub_cuda_runtime"),
        get("warpsafe_ptx")
    );
    for (key, label) in [("cub", "CUB"), ("method", "method"), ("command", "command")] {
        if let Some(v) = results.meta(key) {
            let _ = writeln!(h, "{label}: {v}");
        }
    }
    h
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn row(implementation: &str, ty: ElemType, op: Option<Op>, n: u64, seconds: f64) -> Row {
        Row {
            implementation: implementation.into(),
            ty,
            op,
            n,
            timing: crate::timing::sample(seconds),
            result: if op.is_some() { "42".into() } else { String::new() },
            check: if op.is_some() { Check::Ok } else { Check::NotChecked },
            detail: format!("{implementation} 132x256"),
        }
    }

    pub(crate) fn sample() -> Results {
        let n = 1u64 << 28;
        let mut r = Results::default();
        r.set_meta("gpu", "NVIDIA H100 80GB HBM3");
        r.set_meta("date", "2026-11-21");
        r.rows.push(row(CUB, ElemType::F32, Some(Op::Sum), n, 400e-6));
        r.rows.push(row("auto", ElemType::F32, Some(Op::Sum), n, 380e-6));
        r.rows.push(row("two-pass", ElemType::F32, Some(Op::Sum), n, 390e-6));
        r.rows.push(row(ROOFLINE, ElemType::F32, None, n, 370e-6));
        r.rows.push(row(CUB, ElemType::F32, Some(Op::Sum), 1 << 16, 8e-6));
        r.rows.push(row("auto", ElemType::F32, Some(Op::Sum), 1 << 16, 3.5e-6));
        let mut bad = row("last-block", ElemType::F32, Some(Op::Sum), 1 << 16, 3e-6);
        bad.check = Check::Bad { expected: "41".into() };
        r.rows.push(bad);
        r
    }

    #[test]
    fn derived_columns() {
        let r = sample();
        let auto = r.find("auto", ElemType::F32, Some(Op::Sum), 1 << 28).unwrap();
        assert_eq!(auto.bytes(), 1 << 30);
        assert!((auto.gb_per_s() - (1u64 << 30) as f64 / 380e-6 / 1e9).abs() < 1e-9);
        assert!((r.ratio_to_cub(auto).unwrap() - 400.0 / 380.0).abs() < 1e-12);
        assert!((r.fraction_of_roofline(auto).unwrap() - 370.0 / 380.0).abs() < 1e-12);
        let small = r.find("auto", ElemType::F32, Some(Op::Sum), 1 << 16).unwrap();
        assert_eq!(r.fraction_of_roofline(small), None, "no roofline measured at 2^16");
        assert_eq!(r.bad_rows().len(), 1);
    }

    #[test]
    fn table_orders_and_formats_rows() {
        let t = table(&sample());
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("type op       n  impl"));
        // 2^16 block first, CUB first within it, then warpsafe's in strategy order.
        assert!(lines[1].starts_with("f32  sum   2^16  cub"), "{}", lines[1]);
        assert!(
            lines[2].contains("last-block") && lines[2].contains("BAD: got 42, expected 41"),
            "{}",
            lines[2]
        );
        assert!(lines[3].contains("auto") && lines[3].contains("2.29"), "{}", lines[3]);
        assert_eq!(lines[4], "");
        let roof = lines.iter().find(|l| l.contains("roofline")).unwrap();
        assert!(roof.contains("read") && roof.contains("100.0"), "{roof}");
        let auto = lines.iter().find(|l| l.contains("2^28") && l.contains("auto")).unwrap();
        assert!(
            auto.contains("380.00")
                && auto.contains("2825.6")
                && auto.contains("1.05")
                && auto.contains("97.4")
        );
    }

    #[test]
    fn csv_round_trips() {
        let r = sample();
        let csv = to_csv(&r);
        assert!(
            csv.starts_with("# gpu: NVIDIA H100 80GB HBM3\n# date: 2026-11-21\nimplementation,type,op,n,")
        );
        let auto_line = csv.lines().find(|l| l.starts_with("auto,f32,sum,268435456,")).unwrap();
        assert_eq!(
            auto_line,
            "auto,f32,sum,268435456,1073741824,0.00038,2825.636,1.0526,0.9737,20,7,0.00037620000000000004,0.00038760000000000004,42,ok,auto 132x256"
        );
        let back = from_csv(&csv).unwrap();
        assert_eq!(back.meta, r.meta);
        assert_eq!(back.rows.len(), r.rows.len());
        for (a, b) in back.rows.iter().zip(&r.rows) {
            assert_eq!(
                (&a.implementation, a.ty, a.op, a.n, &a.check, &a.detail),
                (&b.implementation, b.ty, b.op, b.n, &b.check, &b.detail)
            );
            assert!((a.timing.seconds / b.timing.seconds - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn csv_errors_name_the_line() {
        assert_eq!(from_csv("").unwrap_err(), "no CSV header found");
        assert!(from_csv("a,b\n").unwrap_err().starts_with("line 1:"));
        let bad = format!("{CSV_HEADER}\ncub,f16,sum,1,4,1e-6,1,-,-,20,7,1e-6,1e-6,1,ok,\n");
        assert_eq!(from_csv(&bad).unwrap_err(), "line 2: bad type");
    }

    #[test]
    fn size_labels() {
        assert_eq!(size_label(1 << 20), "2^20");
        assert_eq!(size_label(1000), "1000");
    }
}
