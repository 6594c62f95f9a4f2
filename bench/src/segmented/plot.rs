//! `segreduce-bench`'s plot (SVG): a column per warpsafe strategy measured; rows of panels
//! against log2 of the element count: its throughput over CUB's (when CUB was measured; 1.0
//! marked), its share of the read ceiling (when the ceiling was measured), and its GB/s
//! (log scale). One line per segment pattern, the power-law mix dashed.

use plotters::prelude::*;

use super::data::Pattern;
use super::report::{Row, CEILING};
use crate::plot::{
    decades, document, draw_grid, span, x_range, Axis, Line, Panel, HEADER, PANEL_W, RATE_H, RATIO_H,
};
use crate::report::{Results, CUB};

/// What a row of panels shows.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Throughput over CUB's.
    Ratio,
    /// Time of the read ceiling over the row's.
    CeilingFraction,
    /// GB/s.
    Rate,
}

impl Kind {
    fn value(self, results: &Results<Row>, row: &Row) -> Option<f64> {
        match self {
            Kind::Ratio => results.ratio_to_cub(row),
            Kind::CeilingFraction => results.fraction_of_ceiling(row),
            Kind::Rate => Some(row.gb_per_s()),
        }
    }
}

/// The colour of a pattern's lines (by its place among the run's patterns).
fn colour(index: usize) -> RGBColor {
    const PALETTE: [RGBColor; 7] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(23, 190, 207),
    ];
    PALETTE[index % PALETTE.len()]
}

/// The points of `(strategy, pattern)` in a `kind` panel: `(log2 n, value)` by size.
fn points(results: &Results<Row>, strategy: &str, pattern: Pattern, kind: Kind) -> Vec<(f64, f64)> {
    let mut pts: Vec<(u64, f64)> = results
        .rows
        .iter()
        .filter(|r| r.implementation == strategy && r.pattern == pattern && r.n > 0)
        .filter_map(|r| kind.value(results, r).map(|v| (r.n, v)))
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .collect();
    pts.sort_by_key(|p| p.0);
    pts.into_iter().map(|(n, v)| ((n as f64).log2(), v)).collect()
}

/// The strategies (columns), patterns and row kinds present in `results`.
fn layout(results: &Results<Row>) -> (Vec<&str>, Vec<Pattern>, Vec<Kind>) {
    let mut patterns: Vec<Pattern> = results.points().iter().map(|p| p.0).collect();
    patterns.dedup();
    let has = |name: &str| results.rows.iter().any(|r| r.implementation == name);
    let mut kinds = Vec::new();
    if has(CUB) {
        kinds.push(Kind::Ratio);
    }
    if has(CEILING) {
        kinds.push(Kind::CeilingFraction);
    }
    kinds.push(Kind::Rate);
    (results.strategies(), patterns, kinds)
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
    let (strategies, _, kinds) = layout(results);
    (strategies.len().max(1) as u32 * PANEL_W, HEADER + kinds.iter().map(|&k| height(k)).sum::<u32>())
}

/// The plot of `results` as an SVG document.
///
/// # Errors
/// When the plotting library fails (it writes to memory, so only on a bug).
pub fn svg(results: &Results<Row>) -> anyhow::Result<String> {
    let (strategies, patterns, kinds) = layout(results);
    let all = |kind: Kind| -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        for &strategy in &strategies {
            for &pattern in &patterns {
                v.extend(points(results, strategy, pattern, kind));
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
                    let (lo, hi) = decades(values.chain([1.0]));
                    (Axis::Log(lo, hi), "x CUB", vec![1.0], "throughput / CUB's")
                }
                Kind::CeilingFraction => {
                    let (lo, hi) = span(values, 0.0, 1.05);
                    (Axis::Linear(lo, hi), "x ceiling", vec![1.0], "GB/s / the read ceiling's")
                }
                Kind::Rate => {
                    let (lo, hi) = decades(values);
                    (Axis::Log(lo, hi), "GB/s", vec![], "GB/s")
                }
            };
            let panels = strategies
                .iter()
                .map(|&strategy| {
                    let mut lines = Vec::new();
                    for (i, &pattern) in patterns.iter().enumerate() {
                        let pts = points(results, strategy, pattern, kind);
                        if pts.is_empty() {
                            continue;
                        }
                        lines.push(Line {
                            // The legend once, in the top row.
                            label: (k == 0).then(|| pattern.to_string()),
                            colour: colour(i),
                            dashed: pattern == Pattern::PowerLaw,
                            points: pts,
                        });
                    }
                    Panel {
                        caption: format!("warpsafe {strategy}: {what}"),
                        x,
                        y,
                        y_desc: y_desc.to_string(),
                        marks: marks.clone(),
                        lines,
                        legend: SeriesLabelPosition::UpperRight,
                    }
                })
                .collect();
            (height(kind), panels)
        })
        .collect();
    document(size(results), "warpsafe segmented f32 sum vs CUB", &results.meta, |area| draw_grid(area, &grid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segmented::report::tests::sample;

    #[test]
    fn draws_ratio_ceiling_and_rate_rows_with_a_line_per_pattern() {
        let r = sample();
        assert_eq!(size(&r), (PANEL_W, HEADER + 2 * (RATIO_H + 50) + RATE_H));
        let doc = svg(&r).unwrap();
        assert!(doc.starts_with("<svg"));
        for label in ["L=1", "L=65536", "power-law"] {
            assert!(doc.contains(&format!(">\n{label}\n</text>")), "{label} is in the legend");
        }
        assert!(doc.contains("warpsafe auto: GB/s / the read ceiling"));
        let mut alone = r.clone();
        alone.rows.retain(|row| row.is_warpsafe());
        assert_eq!(size(&alone), (PANEL_W, HEADER + RATE_H));
        assert!(svg(&alone).is_ok());
    }
}
