//! What a frame is drawn from and what it drew: the canvas's size and scale, the palette, the
//! runs and the window on them; per run the arrows and lanes drawn, and every label. Also the
//! frame's fixed margins, which the panels lay their lanes out against.

use crate::trace::{Trace, Trip};

use super::labels::Label;
use super::palette::Palette;

/// One frame's input: the canvas in CSS pixels, the runs, and the stretch of time shown.
pub struct Frame<'a> {
    pub width: f64,
    pub height: f64,
    /// Larger type for presenter mode.
    pub scale: f64,
    pub palette: &'a Palette,
    pub traces: &'a [Trace],
    /// Per trace, its round trips as the mode paid them (`None`: mode unknown, no bands).
    pub trips: &'a [Option<Vec<Trip>>],
    pub start_us: f64,
    pub window_us: f64,
    pub position_us: f64,
}

/// The gutter left of the plot, where the lanes' names go.
pub(super) const GUTTER: f64 = 118.0;
/// Room for the other client's lane under the Redis lane.
pub(super) const OTHER_LANE: f64 = 34.0;
pub(super) const RIGHT: f64 = 22.0;
pub(super) const RULER: f64 = 30.0;
pub(super) const FOOTER: f64 = 22.0;

impl Frame<'_> {
    pub(super) fn font(&self, px: f64, weight: &str) -> String {
        format!("{weight} {:.0}px system-ui, sans-serif", px * self.scale)
    }
}

/// What a frame drew of one trace.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DrawnTrace {
    /// Arrows, requests + replies.
    pub arrows: usize,
    /// Client lanes: one per connection of the run.
    pub client_lanes: u32,
    /// Redis lanes: one per master on a cluster, else one.
    pub redis_lanes: u32,
    /// On a cluster: requests drawn to each master's lane (from the full requests and the
    /// sample, so far as the playhead).
    pub master_spans: [u32; MAX_COUNTED_MASTERS],
    /// Redirect marks drawn (requests answered MOVED or ASK first).
    pub redirect_marks: u32,
}

/// Masters whose drawn requests `DrawnTrace` counts (the browser tests' check; more are drawn).
pub const MAX_COUNTED_MASTERS: usize = 8;

/// What a frame drew: per trace, and every label.
pub struct Drawn {
    pub traces: Vec<DrawnTrace>,
    pub labels: Vec<Label>,
}
