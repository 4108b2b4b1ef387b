//! One component per file. Each takes the `Connection` (signals + memos), and the teaching
//! view's `Playback` and `Look` or the tour's `Tour`, as props (the observe view's, `observe*`
//! and `observed_*`, read `Connection::observe`); the controls and the tour's
//! controller are the only ways back to the server (and the two file openers, `recording_bar`
//! and `observe_capture`, which post a file to it through `file_upload`). `tour_prose`,
//! `handout_chart` and `file_upload` hold no component: they render the tour's prose and the
//! handout's chart, and send a file, for the views that do.

pub mod atomicity;
pub mod charts;
pub mod cluster_explainer;
pub mod cluster_shares;
pub mod connect_box;
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
pub mod observe_capture;
pub mod observe_controls;
pub mod observe_export;
pub mod observe_page;
pub mod observed_detail;
pub mod observed_figures;
pub mod observed_table;
pub mod playback_controls;
pub mod progress;
pub mod recording_bar;
pub mod replay_banner;
pub mod results;
pub mod rtt;
pub mod run_bar;
pub mod run_buttons;
pub mod run_counters;
pub mod speedup;
pub mod sweep_chart;
pub mod sweep_cost_chart;
pub mod teaching_view;
pub mod timeline;
pub mod tour;
pub mod tour_handout;
pub mod tour_nav;
pub mod tour_prose;
pub mod tour_rtt;
pub mod tour_runs;
pub mod tour_step;
pub mod trip_figure;
pub mod view_toggles;
pub mod workload_fields;

pub use atomicity::AtomicityLines;
pub use charts::Charts;
pub use cluster_explainer::ClusterExplainer;
pub use cluster_shares::ClusterShares;
pub use connect_box::ConnectBox;
pub use controls::Controls;
pub use controls_bar::ControlsBar;
pub use error_banner::ErrorBanner;
pub use export_bar::ExportBar;
pub use header::Header;
pub use mode_fields::ModeFields;
pub use network_controls::NetworkControls;
pub use number_field::NumberField;
pub use observe_capture::ObserveCapture;
pub use observe_controls::ObserveControls;
pub use observe_export::ObserveExport;
pub use observe_page::ObservePage;
pub use observed_detail::ObservedDetail;
pub use observed_figures::ObservedFigures;
pub use observed_table::ObservedTable;
pub use playback_controls::PlaybackControls;
pub use progress::RunProgress;
pub use recording_bar::RecordingBar;
pub use replay_banner::ReplayBanner;
pub use results::Results;
pub use rtt::RttDiagram;
pub use run_bar::RunBar;
pub use run_buttons::RunButtons;
pub use run_counters::RunCounters;
pub use speedup::SpeedupHeadline;
pub use sweep_chart::SweepChart;
pub use sweep_cost_chart::SweepCostChart;
pub use teaching_view::TeachingView;
pub use timeline::{DrawnNote, Timeline};
pub use tour::TourPage;
pub use view_toggles::ViewToggles;
pub use workload_fields::WorkloadFields;
