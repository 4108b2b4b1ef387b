//! The timeline and its playback: the teaching view (`teaching_view`) holds the canvas the
//! runs' requests are drawn on (`canvas`, which also runs the animation loop), a note of what
//! it draws of each run, the counters that tick with playback, and its controls. The observe
//! view draws its connections with the same canvas and controls.

pub mod canvas;
pub mod playback_controls;
pub mod run_counters;
pub mod teaching_view;

pub use canvas::{DrawnNote, Timeline};
pub use playback_controls::PlaybackControls;
pub use run_counters::RunCounters;
pub use teaching_view::TeachingView;
