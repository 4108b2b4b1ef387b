//! Text on the canvas without overlaps: every label's box is kept, and a label is painted only
//! where it fits inside the canvas and clear of every label already there.

use std::cell::RefCell;

use web_sys::CanvasRenderingContext2d as Ctx;

/// A piece of text painted on the canvas and the box it takes (CSS pixels, from the canvas's
/// top left; the font's ascent and descent, so a line's box whatever its glyphs).
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub text: String,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Label {
    /// Whether the two boxes share more than half a pixel each way.
    pub fn overlaps(&self, o: &Label) -> bool {
        let ox = (self.x + self.w).min(o.x + o.w) - self.x.max(o.x);
        let oy = (self.y + self.h).min(o.y + o.h) - self.y.max(o.y);
        ox > 0.5 && oy > 0.5
    }
}

/// The labels painted so far in a frame. Text is only painted where it fits inside the canvas
/// and clear of every label already there, so no two labels ever overlap.
pub(super) struct Texts {
    width: f64,
    height: f64,
    placed: RefCell<Vec<Label>>,
}

impl Texts {
    /// No labels yet on a canvas `width` × `height`.
    pub(super) fn new(width: f64, height: f64) -> Self {
        Texts {
            width,
            height,
            placed: RefCell::new(Vec::new()),
        }
    }

    /// Every label painted, in the order painted.
    pub(super) fn into_labels(self) -> Vec<Label> {
        self.placed.into_inner()
    }

    /// The box `text` would take at (`x`, baseline `y`) with the context's font and `align`.
    pub(super) fn measure(ctx: &Ctx, text: &str, x: f64, y: f64, align: &str) -> Label {
        ctx.set_text_align(align);
        let (w, ascent, descent) = match ctx.measure_text(text) {
            Ok(m) => (
                m.width(),
                m.font_bounding_box_ascent(),
                m.font_bounding_box_descent(),
            ),
            Err(_) => (text.len() as f64 * 8.0, 12.0, 4.0),
        };
        let left = match align {
            "right" => x - w,
            "center" => x - w / 2.0,
            _ => x,
        };
        Label {
            text: text.to_string(),
            x: left,
            y: y - ascent,
            w,
            h: ascent + descent,
        }
    }

    pub(super) fn fits(&self, l: &Label) -> bool {
        l.x >= 0.0
            && l.y >= 0.0
            && l.x + l.w <= self.width
            && l.y + l.h <= self.height
            && !self.placed.borrow().iter().any(|p| p.overlaps(l))
    }

    /// Paints `text` (font and colour already set) at the first baseline of `ys` where it fits;
    /// returns its box, or `None` where it fits nowhere (then nothing is painted).
    pub(super) fn put(
        &self,
        ctx: &Ctx,
        text: &str,
        x: f64,
        ys: &[f64],
        align: &str,
    ) -> Option<Label> {
        for &y in ys {
            let label = Self::measure(ctx, text, x, y, align);
            if self.fits(&label) {
                let _ = ctx.fill_text(text, x, y);
                self.placed.borrow_mut().push(label.clone());
                return Some(label);
            }
        }
        None
    }
}
