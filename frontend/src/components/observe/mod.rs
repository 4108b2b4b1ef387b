//! The observe view (`/observe`): an application's connections through the observing proxy
//! (`crate::state::observe`), or a capture's, one component per file. `figure_rows` and
//! `what_if` hold none: figures as a table's rows, and the what-if figure drawn, for
//! `figures`.

pub mod capture;
pub mod connect_box;
pub mod controls;
pub mod detail;
pub mod export;
pub mod figure_rows;
pub mod figures;
pub mod page;
pub mod row;
pub mod table;
pub mod what_if;

pub use capture::ObserveCapture;
pub use connect_box::ConnectBox;
pub use controls::ObserveControls;
pub use detail::ObservedDetail;
pub use export::ObserveExport;
pub use figures::ObservedFigures;
pub use page::ObservePage;
pub use table::ObservedTable;
