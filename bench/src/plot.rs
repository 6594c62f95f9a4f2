//! Plots drawn with `plotters` as SVG: the generic pieces ([`document`] with its title,
//! [`Panel`]s of [`Line`]s against log2 of the element count) and `reduce-bench`'s plot
//! ([`svg`]): for every operation a row of panels of read throughput (GB/s, log scale)
//! against the element count (log2), one column per element type, one line per
//! implementation, the read roofline dashed; below each, when CUB was measured, the
//! throughput over CUB's (linear, 1.0 marked). A title with the GPU, driver and date.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::data::{ElemType, Op};
use crate::report::{Results, CUB, ROOFLINE, WARPSAFE};

/// Width of one panel column and heights of the two kinds of panel, in pixels.
pub const PANEL_W: u32 = 560;
/// Height of a throughput panel.
pub const RATE_H: u32 = 360;
/// Height of a ratio panel.
pub const RATIO_H: u32 = 250;
/// Height of the title band.
pub const HEADER: u32 = 30;

/// Where panels are drawn.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// One line of a panel: `(x, y)` points joined, dots on them unless dashed.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The legend's entry (none: not in the legend).
    pub label: Option<String>,
    /// Colour.
    pub colour: RGBColor,
    /// Dashed, without dots.
    pub dashed: bool,
    /// The points, by x.
    pub points: Vec<(f64, f64)>,
}

/// A panel's y axis and its range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Axis {
    /// Logarithmic from `.0` to `.1`.
    Log(f64, f64),
    /// Linear from `.0` to `.1`.
    Linear(f64, f64),
}

/// One chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// The caption above it.
    pub caption: String,
    /// The x range (log2 elements).
    pub x: (f64, f64),
    /// The y axis.
    pub y: Axis,
    /// The y axis's name.
    pub y_desc: String,
    /// Horizontal reference lines (thin, dashed, black), e.g. 1.0 on a ratio.
    pub marks: Vec<f64>,
    /// The lines.
    pub lines: Vec<Line>,
    /// Where the legend goes, when any line has a label.
    pub legend: SeriesLabelPosition,
}

/// An error of the plotting library, as text.
fn drawn<T, E: std::fmt::Display>(result: Result<T, E>) -> anyhow::Result<T> {
    result.map_err(|e| anyhow::anyhow!("drawing the plot: {e}"))
}

/// An SVG document of `size` pixels, white, titled `title` and the run's GPU, driver and
/// date from `meta`; `draw` draws into the area below the title.
///
/// # Errors
/// When the plotting library or `draw` fails (it writes to memory, so only on a bug).
pub fn document(
    size: (u32, u32),
    title: &str,
    meta: &[(String, String)],
    draw: impl FnOnce(&Area<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let facts: Vec<&str> = ["gpu", "driver", "date"]
            .iter()
            .filter_map(|k| meta.iter().find(|(m, _)| m == k).map(|(_, v)| v.as_str()))
            .collect();
        let title = format!(
            "{title}: {}",
            if facts.is_empty() { "GPU not recorded".to_string() } else { facts.join(", ") }
        );
        let root = drawn(root.titled(&title, ("sans-serif", 15)))?;
        draw(&root)?;
        drawn(root.present())?;
    }
    Ok(svg)
}

/// The x range that shows `points` (log2 elements) with a margin; `(0, 1)` for none.
pub fn x_range(points: impl IntoIterator<Item = (f64, f64)>) -> (f64, f64) {
    let (lo, hi) =
        points.into_iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    if lo.is_finite() {
        (lo - 0.6, hi + 0.6)
    } else {
        (0.0, 1.0)
    }
}

/// A log axis's range: from the decade below the smallest of `values` to the decade above
/// the largest (at least one decade); `(1, 10)` for none.
pub fn decades(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) =
        values.into_iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    let lo = 10f64.powf(lo.log10().floor());
    (lo, 10f64.powf(hi.log10().ceil()).max(lo * 10.0))
}

/// A linear axis's range: `lo..hi` widened to hold `values`.
pub fn span(values: impl IntoIterator<Item = f64>, lo: f64, hi: f64) -> (f64, f64) {
    values.into_iter().fold((lo, hi), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// A y tick's label: plain for 0.01 to 10^5 (at most 2 decimals, trailing zeros dropped),
/// else in exponent form.
pub fn tick(v: &f64) -> String {
    let v = *v;
    if v == 0.0 || (0.01..1e5).contains(&v.abs()) {
        let text = format!("{v:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.0e}")
    }
}

/// Draws `panel` into `area`.
///
/// # Errors
/// When the plotting library fails.
pub fn draw_panel(area: &Area<'_>, panel: &Panel) -> anyhow::Result<()> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&panel.caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56);
    let x = panel.x.0..panel.x.1;
    match panel.y {
        Axis::Log(lo, hi) => draw_chart(drawn(builder.build_cartesian_2d(x, (lo..hi).log_scale()))?, panel),
        Axis::Linear(lo, hi) => draw_chart(drawn(builder.build_cartesian_2d(x, lo..hi))?, panel),
    }
}

fn draw_chart<'a, 'b: 'a, Y>(
    mut chart: ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>,
    panel: &Panel,
) -> anyhow::Result<()>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    drawn(
        chart
            .configure_mesh()
            .x_desc("log2 elements")
            .y_desc(&panel.y_desc)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .draw(),
    )?;
    for &mark in &panel.marks {
        let line = [(panel.x.0, mark), (panel.x.1, mark)];
        drawn(chart.draw_series(DashedLineSeries::new(line, 6, 4, BLACK.stroke_width(1))))?;
    }
    for line in &panel.lines {
        let style = line.colour.stroke_width(2);
        let series = if line.dashed {
            drawn(chart.draw_series(DashedLineSeries::new(line.points.clone(), 8, 6, style)))?
        } else {
            drawn(chart.draw_series(LineSeries::new(line.points.clone(), style)))?
        };
        if let Some(label) = &line.label {
            let series = series.label(label.as_str());
            if line.dashed {
                series.legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (7, 0)], style)
                        + PathElement::new(vec![(13, 0), (20, 0)], style)
                });
            } else {
                series.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
        }
        if !line.dashed {
            let dots = line.points.iter().map(|&p| Circle::new(p, 3, line.colour.filled()));
            drawn(chart.draw_series(dots))?;
        }
    }
    if panel.lines.iter().any(|l| l.label.is_some()) {
        drawn(
            chart
                .configure_series_labels()
                .position(panel.legend.clone())
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw(),
        )?;
    }
    Ok(())
}

/// Draws `panels` row by row into `area`: row `i` is `heights[i]` pixels high and split
/// evenly among its panels.
///
/// # Errors
/// When the plotting library fails.
pub fn draw_grid(area: &Area<'_>, rows: &[(u32, Vec<Panel>)]) -> anyhow::Result<()> {
    let mut remaining = area.clone();
    for (height, panels) in rows {
        let (band, rest) = remaining.split_vertically(*height);
        remaining = rest;
        let cells = band.split_evenly((1, panels.len().max(1)));
        for (cell, panel) in cells.iter().zip(panels) {
            draw_panel(cell, panel)?;
        }
    }
    Ok(())
}

/// What one of `reduce-bench`'s panels shows.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// GB/s, log scale.
    Rate,
    /// Throughput over CUB's, linear.
    Ratio,
}

/// The colour and dash of an implementation's line: CUB black, the roofline grey and
/// dashed, warpsafe's strategies in the palette's order.
fn series_style(name: &str) -> (RGBColor, bool) {
    const WARPSAFE_COLOURS: [RGBColor; 4] =
        [RGBColor(31, 119, 180), RGBColor(255, 127, 14), RGBColor(44, 160, 44), RGBColor(214, 39, 40)];
    match name {
        CUB => (RGBColor(20, 20, 20), false),
        ROOFLINE => (RGBColor(150, 150, 150), true),
        other => match WARPSAFE.iter().position(|w| *w == other) {
            Some(p) => (WARPSAFE_COLOURS[p], false),
            None => (RGBColor(148, 103, 189), false),
        },
    }
}

/// The implementations present, in legend order.
fn implementations(results: &Results) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in std::iter::once(CUB).chain(WARPSAFE).chain([ROOFLINE]) {
        if results.rows.iter().any(|r| r.implementation == name) {
            names.push(name.to_string());
        }
    }
    for r in &results.rows {
        if !names.contains(&r.implementation) {
            names.push(r.implementation.clone());
        }
    }
    names
}

/// The points of `name` in the panel of (`ty`, `op`, `kind`): `(log2 n, value)` by size.
fn points(results: &Results, name: &str, ty: ElemType, op: Op, kind: Kind) -> Vec<(f64, f64)> {
    let mut pts: Vec<(u64, f64)> = results
        .rows
        .iter()
        .filter(|r| r.implementation == name && r.ty == ty && (r.op == Some(op) || r.op.is_none()))
        .filter_map(|r| match kind {
            Kind::Rate => Some((r.n, r.gb_per_s())),
            Kind::Ratio => {
                let cub = results.find(CUB, ty, Some(op), r.n)?;
                Some((r.n, cub.timing.seconds / r.timing.seconds))
            }
        })
        .filter(|(n, v)| *n > 0 && v.is_finite() && *v > 0.0)
        .collect();
    pts.sort_by_key(|p| p.0);
    pts.into_iter().map(|(n, v)| ((n as f64).log2(), v)).collect()
}

/// The panel rows (operation, kind) and columns (element types) of `results`.
fn layout(results: &Results) -> (Vec<(Op, Kind)>, Vec<ElemType>) {
    let types: Vec<ElemType> =
        ElemType::ALL.into_iter().filter(|t| results.rows.iter().any(|r| r.ty == *t)).collect();
    let has_cub = results.rows.iter().any(|r| r.implementation == CUB);
    let mut rows = Vec::new();
    for op in Op::ALL.into_iter().filter(|o| results.rows.iter().any(|r| r.op == Some(*o))) {
        rows.push((op, Kind::Rate));
        if has_cub {
            rows.push((op, Kind::Ratio));
        }
    }
    (rows, types)
}

/// The plot's size in pixels: `(width, height)`.
pub fn size(results: &Results) -> (u32, u32) {
    let (rows, types) = layout(results);
    let height = HEADER + rows.iter().map(|r| if r.1 == Kind::Rate { RATE_H } else { RATIO_H }).sum::<u32>();
    (types.len().max(1) as u32 * PANEL_W, height)
}

/// The plot of `reduce-bench`'s `results` as an SVG document.
///
/// # Errors
/// When the plotting library fails (it writes to memory, so only on a bug).
pub fn svg(results: &Results) -> anyhow::Result<String> {
    let (rows, types) = layout(results);
    let names = implementations(results);
    // One scale per kind for all panels, so that they compare at a glance.
    let all = |kind: Kind| -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        for &(op, _) in &rows {
            for &ty in &types {
                for name in &names {
                    v.extend(points(results, name, ty, op, kind));
                }
            }
        }
        v
    };
    let (rates, ratios) = (all(Kind::Rate), all(Kind::Ratio));
    let x = x_range(rates.iter().copied());
    let (r_lo, r_hi) = decades(rates.iter().map(|p| p.1));
    let (q_lo, q_hi) = span(ratios.iter().map(|p| p.1), 0.5, 2.5);

    let grid: Vec<(u32, Vec<Panel>)> = rows
        .iter()
        .map(|&(op, kind)| {
            let panels = types
                .iter()
                .map(|&ty| {
                    // The ratio panels leave CUB (1.0 by definition) and the legend out.
                    let lines = names
                        .iter()
                        .filter(|n| !(kind == Kind::Ratio && *n == CUB))
                        .map(|name| {
                            let (colour, dashed) = series_style(name);
                            Line {
                                label: (kind == Kind::Rate).then(|| name.clone()),
                                colour,
                                dashed,
                                points: points(results, name, ty, op, kind),
                            }
                        })
                        .collect();
                    let (caption, y, y_desc, marks) = match kind {
                        Kind::Rate => (
                            format!("{} {}: GB/s", ty.name(), op.name()),
                            Axis::Log(r_lo, r_hi),
                            "GB/s",
                            vec![],
                        ),
                        Kind::Ratio => (
                            format!("{} {}: throughput / CUB's", ty.name(), op.name()),
                            Axis::Linear(q_lo, q_hi),
                            "x CUB",
                            vec![1.0],
                        ),
                    };
                    Panel {
                        caption,
                        x,
                        y,
                        y_desc: y_desc.to_string(),
                        marks,
                        lines,
                        legend: SeriesLabelPosition::LowerRight,
                    }
                })
                .collect();
            (if kind == Kind::Rate { RATE_H } else { RATIO_H }, panels)
        })
        .collect();
    document(size(results), "reduce vs CUB", &results.meta, |area| draw_grid(area, &grid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn ticks() {
        let labels: Vec<String> =
            [0.0, 0.5, 1.0, 1.15, 2.5, 100.0, 3000.0, 1e-5, 1e6].iter().map(tick).collect();
        assert_eq!(labels, ["0", "0.5", "1", "1.15", "2.5", "100", "3000", "1e-5", "1e6"]);
    }

    #[test]
    fn draws_a_panel_per_type_and_kind_and_a_line_per_implementation() {
        let r = sample();
        // One type, one op, CUB measured: a throughput panel above a ratio panel.
        assert_eq!(size(&r), (PANEL_W, HEADER + RATE_H + RATIO_H));
        let svg = svg(&r).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        for name in [CUB, "auto", "two-pass", "last-block", ROOFLINE] {
            assert!(svg.contains(&format!(">\n{name}\n</text>")), "{name} is in the legend");
        }
        assert!(!svg.contains(">\ncooperative\n</text>"), "not measured, not drawn");
        let (blue, _) = series_style("two-pass");
        assert!(
            svg.contains(&format!("#{:02X}{:02X}{:02X}", blue.0, blue.1, blue.2)),
            "two-pass's colour drawn"
        );
    }
}
