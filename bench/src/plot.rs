//! The PNG plot: one panel per (type, operation), read throughput (GB/s, log scale)
//! against the element count (log2 scale), one line per implementation, the read
//! roofline dashed; a title with the GPU, driver and date, and a legend.

use crate::canvas::Canvas;
use crate::data::{ElemType, Op};
use crate::png;
use crate::report::{Results, CUB, ROOFLINE, WARPSAFE};

const WHITE: u8 = 0;
const BLACK: u8 = 1;
const GRID: u8 = 2;
const MINOR_GRID: u8 = 3;
const AXIS: u8 = 4;
/// First series colour; series colours follow in [`PALETTE`] order.
const SERIES: u8 = 5;

/// White, black, grid greys, axis grey, then the series colours: CUB, roofline, two-pass,
/// last-block, cooperative, auto, and two spares for other implementations.
const PALETTE: [[u8; 3]; 13] = [
    [255, 255, 255],
    [0, 0, 0],
    [215, 215, 215],
    [238, 238, 238],
    [110, 110, 110],
    [20, 20, 20],
    [150, 150, 150],
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
];

/// Text scale (pixels per font cell).
const S: u32 = 2;
const PANEL_W: i64 = 560;
/// Height of a throughput panel and of a ratio panel.
const RATE_H: i64 = 360;
const RATIO_H: i64 = 250;
const LEFT: i64 = 84;
const RIGHT: i64 = 16;
const TOP: i64 = 34;
const BOTTOM: i64 = 52;
const HEADER: i64 = 80;
const FOOTER: i64 = 56;

fn series_style(name: &str) -> (u8, bool) {
    match name {
        CUB => (SERIES, false),
        ROOFLINE => (SERIES + 1, true),
        other => match WARPSAFE.iter().position(|w| *w == other) {
            Some(p) => (SERIES + 2 + p as u8, false),
            None => (SERIES + 6 + (other.len() % 2) as u8, false),
        },
    }
}

/// A panel's vertical scale.
#[derive(Clone, Copy)]
enum Scale {
    /// log10 from `lo` to `hi` decades.
    Log { lo: f64, hi: f64 },
    /// Linear from `lo` to `hi`.
    Linear { lo: f64, hi: f64 },
}

struct Axes {
    x0: i64,
    y0: i64,
    w: i64,
    h: i64,
    log2_lo: f64,
    log2_hi: f64,
    scale: Scale,
}

impl Axes {
    fn px(&self, log2n: f64) -> i64 {
        self.x0 + ((log2n - self.log2_lo) / (self.log2_hi - self.log2_lo) * self.w as f64).round() as i64
    }

    fn py(&self, v: f64) -> i64 {
        let t = match self.scale {
            Scale::Log { lo, hi } => (v.max(1e-12).log10() - lo) / (hi - lo),
            Scale::Linear { lo, hi } => (v - lo) / (hi - lo),
        };
        self.y0 + self.h - (t.clamp(-0.05, 1.05) * self.h as f64).round() as i64
    }

    fn inside(&self, y: i64) -> bool {
        y >= self.y0 && y <= self.y0 + self.h
    }
}

/// `10^e` as a tick label short enough for the margin: `1000`, `0.01`, `1E-5`, `1E7`.
fn decade_label(e: i32) -> String {
    match e {
        0..=5 => format!("{}", 10u64.pow(e as u32)),
        -2..=-1 => format!("0.{}1", "0".repeat((-e - 1) as usize)),
        _ => format!("1E{e}"),
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

/// What one panel shows.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// GB/s, log scale.
    Rate,
    /// Throughput over CUB's, linear.
    Ratio,
}

/// The points of `name` in the panel of (`ty`, `op`, `kind`): `(n, value)` by size.
fn points(results: &Results, name: &str, ty: ElemType, op: Op, kind: Kind) -> Vec<(u64, f64)> {
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
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .collect();
    pts.sort_by_key(|p| p.0);
    pts
}

/// Draws the plot of `results`: for every operation a row of throughput panels and a
/// row of ratio-to-CUB panels (when CUB was measured), one column per element type.
pub fn render(results: &Results) -> Canvas {
    let types: Vec<ElemType> =
        ElemType::ALL.into_iter().filter(|t| results.rows.iter().any(|r| r.ty == *t)).collect();
    let ops: Vec<Op> =
        Op::ALL.into_iter().filter(|o| results.rows.iter().any(|r| r.op == Some(*o))).collect();
    let has_cub = results.rows.iter().any(|r| r.implementation == CUB);
    let mut panel_rows: Vec<(Op, Kind)> = Vec::new();
    for &op in &ops {
        panel_rows.push((op, Kind::Rate));
        if has_cub {
            panel_rows.push((op, Kind::Ratio));
        }
    }
    let row_h = |k: Kind| if k == Kind::Rate { RATE_H } else { RATIO_H };
    let cols = types.len().max(1) as i64;
    let width = (cols * PANEL_W) as u32;
    let height = (HEADER + panel_rows.iter().map(|r| row_h(r.1)).sum::<i64>() + FOOTER) as u32;
    let mut c = Canvas::new(width, height, WHITE);

    let title = "WARPSAFE REDUCE VS CUB: READ THROUGHPUT VS ELEMENTS";
    c.text((i64::from(width) - Canvas::text_width(title, 3)) / 2, 12, title, BLACK, 3);
    let facts: Vec<String> =
        ["gpu", "driver", "date"].iter().filter_map(|k| results.meta(k).map(|v| v.to_string())).collect();
    let subtitle = if facts.is_empty() { "GPU NOT RECORDED".to_string() } else { facts.join("   ") };
    c.text((i64::from(width) - Canvas::text_width(&subtitle, S)) / 2, 48, &subtitle, AXIS, S);

    // One scale per kind for every panel, so that panels compare at a glance.
    let sizes: Vec<u64> = results.rows.iter().map(|r| r.n).filter(|&n| n > 0).collect();
    let log2 = |n: u64| (n as f64).log2();
    let log2_lo = sizes.iter().map(|&n| log2(n)).fold(f64::INFINITY, f64::min);
    let log2_hi = sizes.iter().map(|&n| log2(n)).fold(f64::NEG_INFINITY, f64::max);
    let (log2_lo, log2_hi) = if log2_lo.is_finite() { (log2_lo - 0.6, log2_hi + 0.6) } else { (0.0, 1.0) };
    let names = implementations(results);
    let all = |kind: Kind| -> Vec<f64> {
        let mut v = Vec::new();
        for &ty in &types {
            for &op in &ops {
                for name in &names {
                    v.extend(points(results, name, ty, op, kind).into_iter().map(|p| p.1));
                }
            }
        }
        v
    };
    let (rates, ratios) = (all(Kind::Rate), all(Kind::Ratio));
    let fold = |v: &[f64]| {
        (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
    };
    let (lo, hi) = fold(&rates);
    let rate_scale = if lo.is_finite() {
        let (lo, hi) = (lo.log10().floor(), hi.log10().ceil());
        Scale::Log { lo, hi: if hi <= lo { lo + 1.0 } else { hi } }
    } else {
        Scale::Log { lo: 0.0, hi: 1.0 }
    };
    let (lo, hi) = fold(&ratios);
    let ratio_scale = Scale::Linear {
        lo: if lo.is_finite() { (lo.min(0.5) * 4.0).floor() / 4.0 } else { 0.0 },
        hi: if hi.is_finite() { (hi.max(2.5) * 4.0).ceil() / 4.0 } else { 3.0 },
    };

    let mut exponents: Vec<u32> = sizes.iter().map(|n| n.trailing_zeros()).collect();
    exponents.sort();
    exponents.dedup();

    let mut py0 = HEADER;
    for &(op, kind) in &panel_rows {
        for (col, ty) in types.iter().enumerate() {
            let px0 = col as i64 * PANEL_W;
            let axes = Axes {
                x0: px0 + LEFT,
                y0: py0 + TOP,
                w: PANEL_W - LEFT - RIGHT,
                h: row_h(kind) - TOP - BOTTOM,
                log2_lo,
                log2_hi,
                scale: if kind == Kind::Rate { rate_scale } else { ratio_scale },
            };
            let label = match kind {
                Kind::Rate => format!("{} {}: GB/S", ty.name(), op.name()),
                Kind::Ratio => format!("{} {}: THROUGHPUT / CUB'S", ty.name(), op.name()),
            };
            c.text(axes.x0 + (axes.w - Canvas::text_width(&label, S)) / 2, py0 + 8, &label, BLACK, S);
            grid(&mut c, &axes);
            for &k in &exponents {
                let x = axes.px(f64::from(k));
                c.line((x, axes.y0), (x, axes.y0 + axes.h), GRID, 1, None);
                let text = k.to_string();
                c.text(x - Canvas::text_width(&text, S) / 2, axes.y0 + axes.h + 8, &text, AXIS, S);
            }
            c.line((axes.x0, axes.y0), (axes.x0, axes.y0 + axes.h), AXIS, 2, None);
            c.line((axes.x0, axes.y0 + axes.h), (axes.x0 + axes.w, axes.y0 + axes.h), AXIS, 2, None);
            let xlabel = "LOG2 ELEMENTS";
            c.text(
                axes.x0 + (axes.w - Canvas::text_width(xlabel, S)) / 2,
                axes.y0 + axes.h + 30,
                xlabel,
                AXIS,
                S,
            );

            for name in &names {
                if kind == Kind::Ratio && name == CUB {
                    continue;
                }
                let (colour, dashed) = series_style(name);
                let xy: Vec<(i64, i64)> = points(results, name, *ty, op, kind)
                    .into_iter()
                    .map(|(n, v)| (axes.px(log2(n)), axes.py(v)))
                    .collect();
                for pair in xy.windows(2) {
                    c.line(pair[0], pair[1], colour, 3, dashed.then_some((8, 6)));
                }
                if !dashed {
                    for &(x, y) in &xy {
                        c.marker(x, y, 9, colour, BLACK);
                    }
                }
            }
        }
        py0 += row_h(kind);
    }

    // Legend along the bottom.
    let entry_w: Vec<i64> = names.iter().map(|n| 48 + Canvas::text_width(n, S) + 28).collect();
    let mut x = (i64::from(width) - entry_w.iter().sum::<i64>()) / 2;
    let y = i64::from(height) - FOOTER / 2;
    for (name, w) in names.iter().zip(entry_w) {
        let (colour, dashed) = series_style(name);
        c.line((x, y), (x + 40, y), colour, 3, dashed.then_some((8, 6)));
        if !dashed {
            c.marker(x + 20, y, 9, colour, BLACK);
        }
        c.text(x + 48, y - 7, name, BLACK, S);
        x += w;
    }
    c
}

/// Horizontal grid lines and their labels: decades (2x and 5x faint) on a log scale,
/// every 0.25 (labelled every 0.5, and CUB's 1.0 in black) on a linear one.
fn grid(c: &mut Canvas, axes: &Axes) {
    let (x0, x1) = (axes.x0, axes.x0 + axes.w);
    match axes.scale {
        Scale::Log { lo, hi } => {
            for e in lo as i32..=hi as i32 {
                let v = 10f64.powi(e);
                for (m, colour) in [(1.0, GRID), (2.0, MINOR_GRID), (5.0, MINOR_GRID)] {
                    let y = axes.py(v * m);
                    if axes.inside(y) {
                        c.line((x0, y), (x1, y), colour, 1, None);
                    }
                }
                let text = decade_label(e);
                c.text(x0 - 8 - Canvas::text_width(&text, S), axes.py(v) - 7, &text, AXIS, S);
            }
        }
        Scale::Linear { lo, hi } => {
            let steps = ((hi - lo) / 0.25).round() as i64;
            for k in 0..=steps {
                let v = lo + k as f64 * 0.25;
                let y = axes.py(v);
                let on_half = (v * 2.0).fract().abs() < 1e-9;
                c.line((x0, y), (x1, y), if on_half { GRID } else { MINOR_GRID }, 1, None);
                if on_half {
                    let text = format!("{v:.1}");
                    c.text(x0 - 8 - Canvas::text_width(&text, S), y - 7, &text, AXIS, S);
                }
            }
            let y = axes.py(1.0);
            c.line((x0, y), (x1, y), BLACK, 2, Some((6, 4)));
        }
    }
}

/// [`render`] encoded as a PNG file.
pub fn png(results: &Results) -> Result<Vec<u8>, png::PngError> {
    let canvas = render(results);
    png::encode_indexed(canvas.width(), canvas.height(), &PALETTE, canvas.pixels())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn renders_panels_for_what_was_measured() {
        let r = sample();
        let canvas = render(&r);
        // One type, one op, CUB measured: a throughput panel above a ratio panel.
        assert_eq!(
            (canvas.width() as i64, canvas.height() as i64),
            (PANEL_W, HEADER + RATE_H + RATIO_H + FOOTER)
        );
        let colours: std::collections::HashSet<u8> = canvas.pixels().iter().copied().collect();
        for name in [CUB, "auto", "two-pass", "last-block", ROOFLINE] {
            assert!(colours.contains(&series_style(name).0), "{name} drawn");
        }
        assert!(!colours.contains(&series_style("cooperative").0), "not measured, not drawn");
        let png = png(&r).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn labels() {
        assert_eq!(decade_label(3), "1000");
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(-2), "0.01");
        assert_eq!(decade_label(-6), "1E-6");
        assert_eq!(decade_label(7), "1E7");
    }
}
