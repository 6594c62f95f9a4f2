//! `scan-bench`'s plot (SVG): a column for the scans and one for the selections; rows of
//! panels against log2 of the element count: warpsafe's throughput over CUB's (when CUB
//! was measured; 1.0 marked), warpsafe's share of the copy ceiling (when the copy was
//! measured), and warpsafe's GB/s (log scale). One line per (algorithm, type): colour by
//! type, the second algorithm of a column (exclusive, flagged) dashed.

use plotters::prelude::*;

use super::report::{Algorithm, Row, COPY, WARPSAFE};
use crate::data::ElemType;
use crate::plot::{
    decades, document, draw_grid, span, x_range, Axis, Line, Panel, HEADER, PANEL_W, RATE_H, RATIO_H,
};
use crate::report::{Results, CUB};

/// What a row of panels shows.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Throughput over CUB's.
    Ratio,
    /// GB/s over the copy's.
    CopyFraction,
    /// GB/s.
    Rate,
}

impl Kind {
    fn value(self, results: &Results<Row>, row: &Row) -> Option<f64> {
        match self {
            Kind::Ratio => results.ratio_to_cub(row),
            Kind::CopyFraction => results.fraction_of_copy(row),
            Kind::Rate => Some(row.gb_per_s()),
        }
    }
}

/// The colour of a type's lines.
fn colour(ty: ElemType) -> RGBColor {
    match ty {
        ElemType::F32 => RGBColor(31, 119, 180),
        ElemType::F64 => RGBColor(255, 127, 14),
        ElemType::I32 => RGBColor(44, 160, 44),
    }
}

/// warpsafe's points of `(algorithm, ty)` in a `kind` panel: `(log2 n, value)` by size.
fn points(results: &Results<Row>, algorithm: Algorithm, ty: ElemType, kind: Kind) -> Vec<(f64, f64)> {
    let mut pts: Vec<(u64, f64)> = results
        .rows
        .iter()
        .filter(|r| r.implementation == WARPSAFE && r.algorithm == algorithm && r.ty == ty && r.n > 0)
        .filter_map(|r| kind.value(results, r).map(|v| (r.n, v)))
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .collect();
    pts.sort_by_key(|p| p.0);
    pts.into_iter().map(|(n, v)| ((n as f64).log2(), v)).collect()
}

/// The columns (pairs of algorithms) and row kinds present in `results`.
fn layout(results: &Results<Row>) -> (Vec<[Algorithm; 2]>, Vec<Kind>) {
    let has = |f: &dyn Fn(&Row) -> bool| results.rows.iter().any(f);
    let columns = [Algorithm::SCANS, Algorithm::SELECTS]
        .into_iter()
        .filter(|pair| has(&|r| r.implementation == WARPSAFE && pair.contains(&r.algorithm)))
        .collect();
    let mut kinds = Vec::new();
    if has(&|r| r.implementation == CUB) {
        kinds.push(Kind::Ratio);
    }
    if has(&|r| r.implementation == COPY) {
        kinds.push(Kind::CopyFraction);
    }
    kinds.push(Kind::Rate);
    (columns, kinds)
}

fn height(kind: Kind) -> u32 {
    if kind == Kind::Rate {
        RATE_H
    } else {
        RATIO_H + 50
    }
}

/// The plot's size in pixels: `(width, height)`.
pub fn size(results: &Results<Row>) -> (u32, u32) {
    let (columns, kinds) = layout(results);
    (columns.len().max(1) as u32 * PANEL_W, HEADER + kinds.iter().map(|&k| height(k)).sum::<u32>())
}

/// The plot of `results` as an SVG document.
///
/// # Errors
/// When the plotting library fails (it writes to memory, so only on a bug).
pub fn svg(results: &Results<Row>) -> anyhow::Result<String> {
    let (columns, kinds) = layout(results);
    let all = |kind: Kind| -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        for pair in &columns {
            for &algorithm in pair {
                for ty in ElemType::ALL {
                    v.extend(points(results, algorithm, ty, kind));
                }
            }
        }
        v
    };
    let x = x_range(all(Kind::Rate));
    let grid: Vec<(u32, Vec<Panel>)> = kinds
        .iter()
        .enumerate()
        .map(|(k, &kind)| {
            let values = all(kind).into_iter().map(|p| p.1);
            let (y, y_desc, marks, what) = match kind {
                Kind::Ratio => {
                    let (lo, hi) = span(values, 0.5, 2.0);
                    (Axis::Linear(lo, hi), "x CUB", vec![1.0], "throughput / CUB's")
                }
                Kind::CopyFraction => {
                    let (lo, hi) = span(values, 0.0, 1.05);
                    (Axis::Linear(lo, hi), "x copy", vec![1.0], "GB/s / the copy's")
                }
                Kind::Rate => {
                    let (lo, hi) = decades(values);
                    (Axis::Log(lo, hi), "GB/s", vec![], "GB/s")
                }
            };
            let panels = columns
                .iter()
                .map(|pair| {
                    let mut lines = Vec::new();
                    for (second, &algorithm) in pair.iter().enumerate() {
                        for ty in ElemType::ALL {
                            let pts = points(results, algorithm, ty, kind);
                            if pts.is_empty() {
                                continue;
                            }
                            lines.push(Line {
                                // The legend once, in the top row.
                                label: (k == 0).then(|| format!("{ty} {algorithm}")),
                                colour: colour(ty),
                                dashed: second == 1,
                                points: pts,
                            });
                        }
                    }
                    let group = if pair[0] == Algorithm::InclusiveSum { "scan" } else { "select" };
                    Panel {
                        caption: format!("warpsafe {group}: {what}"),
                        x,
                        y,
                        y_desc: y_desc.to_string(),
                        marks: marks.clone(),
                        lines,
                        // GB/s rises with the size: its upper left is free.
                        legend: if kind == Kind::Rate {
                            SeriesLabelPosition::UpperLeft
                        } else {
                            SeriesLabelPosition::UpperRight
                        },
                    }
                })
                .collect();
            (height(kind), panels)
        })
        .collect();
    document(size(results), "warpsafe scan and select vs CUB", &results.meta, |area| draw_grid(area, &grid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::report::tests::sample;

    #[test]
    fn draws_ratio_copy_and_rate_rows_with_a_line_per_algorithm_and_type() {
        let r = sample();
        assert_eq!(size(&r), (2 * PANEL_W, HEADER + 2 * (RATIO_H + 50) + RATE_H));
        let doc = svg(&r).unwrap();
        assert!(doc.starts_with("<svg"));
        for label in ["f32 inclusive_sum", "f32 exclusive_sum", "f32 select_if", "f32 select_flagged"] {
            assert!(doc.contains(&format!(">\n{label}\n</text>")), "{label} is in the legend");
        }
        assert!(doc.contains("warpsafe select: GB/s / the copy"));
        // Without CUB and the copy (the emulator): the GB/s row alone.
        let mut alone = r.clone();
        alone.rows.retain(|row| row.implementation == WARPSAFE);
        assert_eq!(size(&alone), (2 * PANEL_W, HEADER + RATE_H));
        assert!(svg(&alone).is_ok());
    }
}
