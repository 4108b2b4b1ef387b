//! Draws the timeline onto a 2D canvas: a ruler in real time units, then one panel per run with
//! a Client lane and a Redis lane, each request an arrow out and each reply an arrow back, at
//! their measured times, up to the playback position. A run on a pool of connections gets a
//! client lane per connection ("connection k of C"), each request drawn from its own. A run
//! on a Redis Cluster gets a Redis lane per master, named by its address, each request drawn
//! to the master the engine says answered it, a small diamond where Redis had first said
//! MOVED or ASK.
//!
//! Built to stay at 60 fps with tens of thousands of arrows: spans outside the window are
//! skipped by binary search, and all arrows of one colour go into one path with one `stroke`.
//! A long run's first requests are drawn in full, the rest from its strided sample, lighter.
//!
//! # Layout
//!
//! - `draw`: one frame drawn: the ruler, the panels stacked under it (each in a fixed order),
//!   the playhead and the footer.
//! - `frame`: what a frame is drawn from and what it drew; the frame's margins.
//! - `panel`: one run's panel: where its lanes lie, and its heading.
//! - `lanes`: the client, Redis and other-client lanes and their names.
//! - `bands`: the shaded band behind each round trip the mode paid.
//! - `arrows`: requests and replies as arrows.
//! - `marks`: the sample's start, the finish, redirects, and notes over the arrows.
//! - `labels`: text placed without overlaps.
//! - `palette`: the colours of each theme.

mod arrows;
mod bands;
mod draw;
mod frame;
mod labels;
mod lanes;
mod marks;
mod palette;
mod panel;

pub use draw::draw;
pub use frame::{Drawn, DrawnTrace, Frame, MAX_COUNTED_MASTERS};
pub use labels::Label;
pub use palette::{DARK, LIGHT, Palette};
