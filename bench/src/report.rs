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

/// The CSV: `# key: value` lines for the facts, the header, one line per row.
pub fn to_csv(results: &Results) -> String {
    let mut out = String::new();
    for (k, v) in &results.meta {
        let _ = writeln!(out, "# {k}: {}", v.replace(['\n', '\r'], " "));
    }
    let _ = writeln!(out, "{CSV_HEADER}");
    for row in &results.rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{:.6e},{:.3},{},{},{},{},{:.6e},{:.6e},{},{},{}",
            row.implementation,
            row.ty.name(),
            row.op.map_or("read", Op::name),
            row.n,
            row.bytes(),
            row.timing.seconds,
            row.gb_per_s(),
            optional(results.ratio_to_cub(row), |r| format!("{r:.4}")),
            optional(results.fraction_of_roofline(row), |f| format!("{f:.4}")),
            row.timing.calls,
            row.timing.reps,
            row.timing.min_seconds,
            row.timing.max_seconds,
            row.result,
            row.check.to_field(),
            row.detail.replace(',', " ")
        );
    }
    out
}

/// Reads back what [`to_csv`] wrote (derived columns are recomputed, not read).
pub fn from_csv(text: &str) -> Result<Results, String> {
    let mut results = Results::default();
    let mut header_seen = false;
    for (number, line) in text.lines().enumerate() {
        let where_ = || format!("line {}", number + 1);
        if let Some(fact) = line.strip_prefix("# ") {
            let (k, v) =
                fact.split_once(": ").ok_or_else(|| format!("{}: expected '# key: value'", where_()))?;
            results.meta.push((k.to_string(), v.to_string()));
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if !header_seen {
            if line != CSV_HEADER {
                return Err(format!("{}: not the reduce-bench CSV header", where_()));
            }
            header_seen = true;
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 16 {
            return Err(format!("{}: {} fields, expected 16", where_(), f.len()));
        }
        let bad = |what: &str| format!("{}: bad {what}", where_());
        let ty = ElemType::parse(f[1]).ok_or_else(|| bad("type"))?;
        let op = match f[2] {
            "read" => None,
            name => Some(Op::parse(name).ok_or_else(|| bad("op"))?),
        };
        let number = |i: usize, what: &str| f[i].parse::<f64>().map_err(|_| bad(what));
        let count = |i: usize, what: &str| f[i].parse::<u32>().map_err(|_| bad(what));
        results.rows.push(Row {
            implementation: f[0].to_string(),
            ty,
            op,
            n: f[3].parse().map_err(|_| bad("n"))?,
            timing: Timing {
                seconds: number(5, "seconds_per_call")?,
                min_seconds: number(11, "min_seconds_per_call")?,
                max_seconds: number(12, "max_seconds_per_call")?,
                calls: count(9, "calls_per_batch")?,
                reps: count(10, "reps")?,
            },
            result: f[13].to_string(),
            check: Check::from_field(f[14]).ok_or_else(|| bad("check"))?,
            detail: f[15].to_string(),
        });
    }
    if !header_seen {
        return Err("no CSV header found".into());
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
            "auto,f32,sum,268435456,1073741824,3.800000e-4,2825.636,1.0526,0.9737,20,7,3.762000e-4,3.876000e-4,42,ok,\
auto 132x256"
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
