//! The timeline and its playback: the teaching view (`teaching_view`) holds the canvas the
//! runs' requests are drawn on (`canvas`, which also runs the animation loop), a note of what
//! it draws of each run (`drawn_note`), which runs of a long plan it draws (`run_chooser`), the
//! counters that tick with playback (`run_counters`),
//! and its controls (`playback_controls`). The observe
//! view draws its connections with the same canvas and controls.

pub mod canvas;
pub mod drawn_note;
pub mod playback_controls;
pub mod run_chooser;
pub mod run_counters;
pub mod teaching_view;

pub use canvas::Timeline;
pub use drawn_note::DrawnNote;
pub use playback_controls::PlaybackControls;
pub use run_chooser::RunChooser;
pub use run_counters::RunCounters;
pub use teaching_view::TeachingView;
