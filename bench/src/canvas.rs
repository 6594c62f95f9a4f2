//! A palette-indexed raster with the few drawing operations the plot needs: rectangles,
//! thick and dashed lines, square markers, and text in the 5x7 font (horizontal or
//! turned a quarter counter-clockwise). Everything clips at the edges.

use crate::font;

/// A `width` x `height` image of palette indices, row by row from the top.
#[derive(Clone, Debug)]
pub struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A canvas filled with colour `background`.
    pub fn new(width: u32, height: u32, background: u8) -> Canvas {
        Canvas { width, height, pixels: vec![background; width as usize * height as usize] }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The pixels, row by row from the top.
    pub fn pixels(&self) -> &[u8] {
        &self.pixels
    }

    /// The colour at `(x, y)`, or `None` outside the canvas.
    pub fn get(&self, x: i64, y: i64) -> Option<u8> {
        self.index(x, y).map(|i| self.pixels[i])
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        (x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height))
            .then(|| y as usize * self.width as usize + x as usize)
    }

    /// Sets one pixel (ignored outside the canvas).
    pub fn set(&mut self, x: i64, y: i64, colour: u8) {
        if let Some(i) = self.index(x, y) {
            self.pixels[i] = colour;
        }
    }

    /// Fills the rectangle with corners `(x0, y0)` and `(x1, y1)`, both included.
    pub fn fill_rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, colour: u8) {
        for y in y0.min(y1)..=y0.max(y1) {
            for x in x0.min(x1)..=x0.max(x1) {
                self.set(x, y, colour);
            }
        }
    }

    /// A line from `(x0, y0)` to `(x1, y1)` drawn with a square pen `thickness` pixels
    /// wide; with `dash = Some((on, off))` only the first `on` of every `on + off` steps
    /// along the line are drawn.
    pub fn line(
        &mut self,
        from: (i64, i64),
        to: (i64, i64),
        colour: u8,
        thickness: u32,
        dash: Option<(u32, u32)>,
    ) {
        let (mut x, mut y) = from;
        let (dx, dy) = ((to.0 - x).abs(), -(to.1 - y).abs());
        let (sx, sy) = (if x < to.0 { 1 } else { -1 }, if y < to.1 { 1 } else { -1 });
        let mut err = dx + dy;
        let half = i64::from(thickness.max(1) - 1) / 2;
        let extra = i64::from(thickness.max(1) - 1) - half;
        let mut step = 0u64;
        loop {
            let on = match dash {
                Some((on, off)) => step % u64::from((on + off).max(1)) < u64::from(on),
                None => true,
            };
            if on {
                self.fill_rect(x - half, y - half, x + extra, y + extra, colour);
            }
            if (x, y) == to {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
            step += 1;
        }
    }

    /// A filled square marker `size` pixels wide centred on `(x, y)`, outlined in `outline`.
    pub fn marker(&mut self, x: i64, y: i64, size: u32, colour: u8, outline: u8) {
        let r = i64::from(size / 2);
        self.fill_rect(x - r, y - r, x + r, y + r, outline);
        self.fill_rect(x - r + 1, y - r + 1, x + r - 1, y + r - 1, colour);
    }

    /// The width in pixels of `text` at `scale` (each glyph `5 * scale`, one `scale`
    /// column between glyphs).
    pub fn text_width(text: &str, scale: u32) -> i64 {
        let n = text.chars().count() as i64;
        if n == 0 {
            0
        } else {
            n * i64::from((font::WIDTH + 1) * scale) - i64::from(scale)
        }
    }

    /// Draws `text` with its top-left corner at `(x, y)`.
    pub fn text(&mut self, x: i64, y: i64, text: &str, colour: u8, scale: u32) {
        self.text_with(x, y, text, colour, scale, false);
    }

    /// Draws `text` turned a quarter counter-clockwise (reading bottom to top), with the
    /// bottom-left corner of its first glyph at `(x, y)`.
    pub fn text_up(&mut self, x: i64, y: i64, text: &str, colour: u8, scale: u32) {
        self.text_with(x, y, text, colour, scale, true);
    }

    fn text_with(&mut self, x: i64, y: i64, text: &str, colour: u8, scale: u32, up: bool) {
        let s = i64::from(scale);
        let advance = i64::from((font::WIDTH + 1) * scale);
        for (k, c) in text.chars().enumerate() {
            let rows = font::glyph(c);
            for (row, bits) in rows.iter().enumerate() {
                for col in 0..font::WIDTH {
                    if bits & (1 << (font::WIDTH - 1 - col)) == 0 {
                        continue;
                    }
                    let (u, v) = (k as i64 * advance + i64::from(col) * s, row as i64 * s);
                    // Upright: u runs right, v runs down. Turned: u runs up, v runs right.
                    let (px, py) = if up { (x + v, y - u - s + 1) } else { (x + u, y + v) };
                    self.fill_rect(px, py, px + s - 1, py + s - 1, colour);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_clip_and_reach_both_ends() {
        let mut c = Canvas::new(10, 10, 0);
        c.line((-5, 5), (20, 5), 1, 1, None);
        assert!((0..10).all(|x| c.get(x, 5) == Some(1)));
        let mut c = Canvas::new(10, 10, 0);
        c.line((1, 1), (8, 6), 2, 1, None);
        assert_eq!(c.get(1, 1), Some(2));
        assert_eq!(c.get(8, 6), Some(2));
    }

    #[test]
    fn dashed_lines_leave_gaps() {
        let mut c = Canvas::new(20, 3, 0);
        c.line((0, 1), (19, 1), 1, 1, Some((3, 2)));
        let row: Vec<u8> = (0..20).map(|x| c.get(x, 1).unwrap()).collect();
        assert_eq!(&row[..10], &[1, 1, 1, 0, 0, 1, 1, 1, 0, 0]);
    }

    #[test]
    fn text_draws_glyph_cells() {
        let mut c = Canvas::new(20, 10, 0);
        c.text(0, 0, "1", 3, 1);
        // '1' row 6 is ".###.".
        assert_eq!((0..5).map(|x| c.get(x, 6).unwrap()).collect::<Vec<_>>(), vec![0, 3, 3, 3, 0]);
        assert_eq!(Canvas::text_width("12", 2), 22);
        let mut up = Canvas::new(10, 20, 0);
        up.text_up(0, 19, "1", 3, 1);
        // Turned: glyph row 6 becomes column 6, read upwards from y = 19.
        assert_eq!((0..5).map(|k| up.get(6, 19 - k).unwrap()).collect::<Vec<_>>(), vec![0, 3, 3, 3, 0]);
    }
}
