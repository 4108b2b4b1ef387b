//! One component per file. Each takes the `Connection` (signals + memos), and the teaching
//! view's `Playback` and `Look` or the tour's `Tour`, as props (the observe view's, in
//! `observe/`, read `Connection::observe`; the tour's are in `tour/`); the controls and the
//! tour's controller are the only ways back to the server (and the two file openers,
//! `recording_bar` and `observe::capture`, which post a file to it through `file_upload`).
//! `tour::prose`, `handout_chart` and `file_upload` hold no component: they render the tour's
//! prose and the handout's chart, and send a file, for the views that do.

pub mod atomicity;
pub mod charts;
pub mod cluster_explainer;
pub mod cluster_shares;
pub mod controls;
pub mod controls_bar;
pub mod error_banner;
pub mod export_bar;
pub mod file_upload;
pub mod handout_chart;
pub mod header;
pub mod mode_fields;
pub mod network_controls;
pub mod number_field;
pub mod observe;
pub mod playback_controls;
pub mod progress;
pub mod recording_bar;
pub mod replay_banner;
pub mod results;
pub mod rtt;
pub mod run_bar;
pub mod run_buttons;
pub mod run_counters;
pub mod shown;
pub mod speedup;
pub mod sweep_chart;
pub mod sweep_cost_chart;
pub mod teaching_view;
pub mod timeline;
pub mod tour;
pub mod trip_figure;
pub mod view_toggles;
pub mod workload_fields;

pub use atomicity::AtomicityLines;
pub use charts::Charts;
pub use cluster_explainer::ClusterExplainer;
pub use cluster_shares::ClusterShares;
pub use controls::Controls;
pub use controls_bar::ControlsBar;
pub use error_banner::ErrorBanner;
pub use export_bar::ExportBar;
pub use header::Header;
pub use mode_fields::ModeFields;
pub use network_controls::NetworkControls;
pub use number_field::NumberField;
pub use observe::{
    ConnectBox, ObserveCapture, ObserveControls, ObserveExport, ObservePage, ObservedDetail,
    ObservedFigures, ObservedTable,
};
pub use playback_controls::PlaybackControls;
pub use progress::RunProgress;
pub use recording_bar::RecordingBar;
pub use replay_banner::ReplayBanner;
pub use results::Results;
pub use rtt::RttDiagram;
pub use run_bar::RunBar;
pub use run_buttons::RunButtons;
pub use run_counters::RunCounters;
pub use shown::Shown;
pub use speedup::SpeedupHeadline;
pub use sweep_chart::SweepChart;
pub use sweep_cost_chart::SweepCostChart;
pub use teaching_view::TeachingView;
pub use timeline::{DrawnNote, Timeline};
pub use tour::TourPage;
pub use view_toggles::ViewToggles;
pub use workload_fields::WorkloadFields;
