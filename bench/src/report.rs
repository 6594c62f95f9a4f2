//! The benchmark's results: one [`Row`] per implementation, type, operation and size;
//! the derived columns (GB/s, ratio to CUB, fraction of the roofline); the printed table;
//! and the CSV, which `--replot` reads back.

use std::fmt::Write as _;

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
    fn to_field(&self) -> String {
        match self {
            Check::Ok => "ok".into(),
            Check::Bad { expected } => format!("bad:{expected}"),
            Check::NotChecked => "-".into(),
        }
    }

    fn from_field(field: &str) -> Option<Check> {
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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    /// Facts, in the order they were found.
    pub meta: Vec<(String, String)>,
    /// Every measurement.
    pub rows: Vec<Row>,
}

impl Results {
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

fn optional(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
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

/// One CSV line (the `csv` crate writes and reads it; the field names are the header).
/// The derived columns (`gb_per_s`, `ratio_to_cub`, `fraction_of_roofline`) are written
/// for readers of the file and recomputed, not read, by [`from_csv`].
#[derive(serde::Serialize, serde::Deserialize)]
struct CsvRow {
    implementation: String,
    #[serde(rename = "type")]
    ty: String,
    op: String,
    n: u64,
    bytes: u64,
    seconds_per_call: f64,
    gb_per_s: String,
    ratio_to_cub: String,
    fraction_of_roofline: String,
    calls_per_batch: u32,
    reps: u32,
    min_seconds_per_call: f64,
    max_seconds_per_call: f64,
    result: String,
    check: String,
    detail: String,
}

/// The CSV: `# key: value` lines for the facts, then the header and one record per row
/// (written by the `csv` crate, which quotes what needs quoting).
pub fn to_csv(results: &Results) -> String {
    let mut out = String::new();
    for (k, v) in &results.meta {
        let _ = writeln!(out, "# {k}: {}", v.replace(['\n', '\r'], " "));
    }
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in &results.rows {
        let record = CsvRow {
            implementation: row.implementation.clone(),
            ty: row.ty.name().to_string(),
            op: row.op.map_or("read", Op::name).to_string(),
            n: row.n,
            bytes: row.bytes(),
            seconds_per_call: row.timing.seconds,
            gb_per_s: format!("{:.3}", row.gb_per_s()),
            ratio_to_cub: optional(results.ratio_to_cub(row), |r| format!("{r:.4}")),
            fraction_of_roofline: optional(results.fraction_of_roofline(row), |f| format!("{f:.4}")),
            calls_per_batch: row.timing.calls,
            reps: row.timing.reps,
            min_seconds_per_call: row.timing.min_seconds,
            max_seconds_per_call: row.timing.max_seconds,
            result: row.result.clone(),
            check: row.check.to_field(),
            detail: row.detail.clone(),
        };
        // Serialising plain fields into memory cannot fail.
        writer.serialize(record).expect("writing a CSV record to memory");
    }
    let bytes = writer.into_inner().expect("flushing a CSV writer into memory");
    if results.rows.is_empty() {
        out.push_str(CSV_HEADER);
        out.push('\n');
    }
    out.push_str(&String::from_utf8_lossy(&bytes));
    out
}

/// Reads back what [`to_csv`] wrote: the `# key: value` facts, then the records (with
/// the `csv` crate). Errors name the line.
pub fn from_csv(text: &str) -> Result<Results, String> {
    let mut results = Results::default();
    let facts = text.lines().take_while(|l| l.starts_with("# ")).count();
    for line in text.lines().take(facts) {
        let fact = &line[2..];
        let (k, v) = fact
            .split_once(": ")
            .ok_or_else(|| format!("line {}: expected '# key: value'", results.meta.len() + 1))?;
        results.meta.push((k.to_string(), v.to_string()));
    }
    let body: String = text.lines().skip(facts).map(|l| format!("{l}\n")).collect();
    if body.trim().is_empty() {
        return Err("no CSV header found".into());
    }
    let mut reader = csv::ReaderBuilder::new().from_reader(body.as_bytes());
    let headers = reader.headers().map_err(|e| format!("line {}: {e}", facts + 1))?.clone();
    if headers.iter().collect::<Vec<_>>().join(",") != CSV_HEADER {
        return Err(format!("line {}: not the reduce-bench CSV header", facts + 1));
    }
    for record in reader.deserialize::<CsvRow>() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            format!("line {}: {e}", facts + line)
        })?;
        let line = facts + results.rows.len() + 2;
        let bad = |what: &str| format!("line {line}: bad {what}");
        let ty = ElemType::parse(&record.ty).ok_or_else(|| bad("type"))?;
        let op = match record.op.as_str() {
            "read" => None,
            name => Some(Op::parse(name).ok_or_else(|| bad("op"))?),
        };
        results.rows.push(Row {
            implementation: record.implementation,
            ty,
            op,
            n: record.n,
            timing: Timing {
                seconds: record.seconds_per_call,
                min_seconds: record.min_seconds_per_call,
                max_seconds: record.max_seconds_per_call,
                calls: record.calls_per_batch,
                reps: record.reps,
            },
            result: record.result,
            check: Check::from_field(&record.check).ok_or_else(|| bad("check"))?,
            detail: record.detail,
        });
    }
    Ok(results)
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
            timing: Timing {
                seconds,
                min_seconds: seconds * 0.99,
                max_seconds: seconds * 1.02,
                calls: 20,
                reps: 7,
            },
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
