//! The page's views, in a folder by what the user sees. One component per file, the file named
//! for it; the few files that hold none are named for what they hold (each folder's doc names
//! them: a trip drawn, a download, a step's prose…). Each takes the `Connection` (signals +
//! memos), and the teaching view's `Playback` and `Look` or the tour's `Tour`, as props. The ways back to the server are `Connection`'s methods, called by the runs'
//! form, the observe view's controls, table and figures, and the tour's controller (and the two
//! file openers, `files::recording_bar` and `observe::capture`, which post a file to it through
//! `files::upload`). A view imports another from the file that defines it; the re-exports here
//! are for the page's root (`app`) and the component tests.
//!
//! - `frame`: the header and its toggles, the error banner: what every view is framed by.
//! - `form`: the runs' form: workload and mode fields, the buttons that run them.
//! - `network`: the network dialled in between the engine and Redis.
//! - `runs`: runs as they go (a bar each, the speed-up) and as they ended (the results).
//! - `timeline`: the teaching view: the timeline's canvas, its playback and counters.
//! - `round_trip`: one round trip taken apart (the RTT diagram; `trip_figure` draws one trip).
//! - `charts`: throughput and latency per run, and a batch sweep's charts.
//! - `files`: export, recordings saved and opened (`upload` sends a file to the server).
//! - `observe`: the observe view (`/observe`), an application's own connections.
//! - `tour`: the guided tour's page (`prose` and `handout_chart` render for it).
//! - `shown`, `number_field`: building blocks of the folders' views: `Shown`, Leptos's `<Show>`
//!   over a boxed condition, and `NumberField`, a labelled field bound to the runs' form.

pub mod charts;
pub mod files;
pub mod form;
pub mod frame;
pub mod network;
pub mod number_field;
pub mod observe;
pub mod round_trip;
pub mod runs;
pub mod shown;
pub mod timeline;
pub mod tour;

pub use charts::{Charts, SweepChart, SweepCostChart};
pub use files::{ExportBar, RecordingBar, ReplayBanner};
pub use form::{Controls, ControlsBar, ModeFields, RunButtons, WorkloadFields};
pub use frame::{ErrorBanner, Header, ViewToggles};
pub use network::NetworkControls;
pub use number_field::NumberField;
pub use observe::{
    ConnectBox, ObserveCapture, ObserveControls, ObserveExport, ObservePage, ObservedDetail,
    ObservedFigures, ObservedTable,
};
pub use round_trip::RttDiagram;
pub use runs::{
    AtomicityLines, ClusterExplainer, ClusterShares, Results, RunBar, RunProgress, SpeedupHeadline,
};
pub use shown::Shown;
pub use timeline::{DrawnNote, PlaybackControls, RunCounters, TeachingView, Timeline};
pub use tour::TourPage;
