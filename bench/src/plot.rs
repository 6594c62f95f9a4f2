//! The plot, drawn with `plotters` as SVG: for every operation a row of panels of read
//! throughput (GB/s, log scale) against the element count (log2), one column per element
//! type, one line per implementation, the read roofline dashed; below each, when CUB was
//! measured, the throughput over CUB's (linear, 1.0 marked). A title with the GPU, driver
//! and date.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::data::{ElemType, Op};
use crate::report::{Results, CUB, ROOFLINE, WARPSAFE};

/// Width of one panel column and heights of the two kinds of panel, in pixels.
const PANEL_W: u32 = 560;
const RATE_H: u32 = 360;
const RATIO_H: u32 = 250;
/// Height of the title band.
const HEADER: u32 = 30;

/// What one panel shows.
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

/// An error of the plotting library, as text.
fn drawn<T, E: std::fmt::Display>(result: Result<T, E>) -> anyhow::Result<T> {
    result.map_err(|e| anyhow::anyhow!("drawing the plot: {e}"))
}

/// The plot of `results` as an SVG document.
///
/// # Errors
/// When the plotting library fails (it writes to memory, so only on a bug).
pub fn svg(results: &Results) -> anyhow::Result<String> {
    let (width, height) = size(results);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let facts: Vec<String> =
            ["gpu", "driver", "date"].iter().filter_map(|k| results.meta(k).map(str::to_string)).collect();
        let title = format!(
            "reduce vs CUB: {}",
            if facts.is_empty() { "GPU not recorded".to_string() } else { facts.join(", ") }
        );
        let root = drawn(root.titled(&title, ("sans-serif", 15)))?;
        draw_panels(&root, results)?;
        drawn(root.present())?;
    }
    Ok(svg)
}

/// Draws every panel into `area` (below the title).
fn draw_panels(area: &DrawingArea<SVGBackend<'_>, Shift>, results: &Results) -> anyhow::Result<()> {
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
    let x_lo = rates.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_hi = rates.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let (x_lo, x_hi) = if x_lo.is_finite() { (x_lo - 0.6, x_hi + 0.6) } else { (0.0, 1.0) };
    let decade = |v: f64, up: bool| 10f64.powf(if up { v.log10().ceil() } else { v.log10().floor() });
    let r_lo = rates.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let r_hi = rates.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let (r_lo, r_hi) = if r_lo.is_finite() {
        (decade(r_lo, false), decade(r_hi, true).max(decade(r_lo, false) * 10.0))
    } else {
        (1.0, 10.0)
    };
    let q_lo = ratios.iter().map(|p| p.1).fold(0.5, f64::min);
    let q_hi = ratios.iter().map(|p| p.1).fold(2.5, f64::max);

    let heights: Vec<u32> = rows.iter().map(|r| if r.1 == Kind::Rate { RATE_H } else { RATIO_H }).collect();
    let mut remaining = area.clone();
    for (&(op, kind), &h) in rows.iter().zip(&heights) {
        let (band, rest) = remaining.split_vertically(h);
        remaining = rest;
        let cells = band.split_evenly((1, types.len().max(1)));
        for (cell, &ty) in cells.iter().zip(&types) {
            let caption = match kind {
                Kind::Rate => format!("{} {}: GB/s", ty.name(), op.name()),
                Kind::Ratio => format!("{} {}: throughput / CUB's", ty.name(), op.name()),
            };
            let mut builder = ChartBuilder::on(cell);
            builder
                .caption(caption, ("sans-serif", 16))
                .margin(10)
                .x_label_area_size(36)
                .y_label_area_size(56);
            let series = |name: &String| points(results, name, ty, op, kind);
            let lines = names.iter().filter(|n| !(kind == Kind::Ratio && *n == CUB));
            match kind {
                Kind::Rate => {
                    let mut chart = drawn(builder.build_cartesian_2d(x_lo..x_hi, (r_lo..r_hi).log_scale()))?;
                    drawn(chart.configure_mesh().x_desc("log2 elements").y_desc("GB/s").draw())?;
                    for name in lines {
                        let (colour, dashed) = series_style(name);
                        let pts = series(name);
                        let style = colour.stroke_width(2);
                        if dashed {
                            drawn(chart.draw_series(DashedLineSeries::new(pts, 8, 6, style)))?
                                .label(name.as_str())
                                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                        } else {
                            drawn(chart.draw_series(LineSeries::new(pts.clone(), style)))?
                                .label(name.as_str())
                                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                            drawn(
                                chart
                                    .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled()))),
                            )?;
                        }
                    }
                    drawn(
                        chart
                            .configure_series_labels()
                            .position(SeriesLabelPosition::LowerRight)
                            .background_style(WHITE.mix(0.85))
                            .border_style(BLACK)
                            .label_font(("sans-serif", 12))
                            .draw(),
                    )?;
                }
                Kind::Ratio => {
                    let mut chart = drawn(builder.build_cartesian_2d(x_lo..x_hi, q_lo..q_hi))?;
                    drawn(chart.configure_mesh().x_desc("log2 elements").y_desc("x CUB").draw())?;
                    drawn(chart.draw_series(DashedLineSeries::new(
                        [(x_lo, 1.0), (x_hi, 1.0)],
                        6,
                        4,
                        BLACK.stroke_width(1),
                    )))?;
                    for name in lines {
                        let (colour, dashed) = series_style(name);
                        let style = colour.stroke_width(2);
                        let pts = series(name);
                        if dashed {
                            drawn(chart.draw_series(DashedLineSeries::new(pts, 8, 6, style)))?;
                        } else {
                            drawn(chart.draw_series(LineSeries::new(pts.clone(), style)))?;
                            drawn(
                                chart
                                    .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled()))),
                            )?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

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
