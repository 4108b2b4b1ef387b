//! One component per file. Each takes the `Connection` (signals + memos) as a prop and only
//! reads it; the controls are the only way back to the server.

pub mod controls;
pub mod error_banner;
pub mod header;
pub mod progress;
pub mod results;
pub mod run_bar;
pub mod speedup;

pub use controls::Controls;
pub use error_banner::ErrorBanner;
pub use header::Header;
pub use progress::RunProgress;
pub use results::Results;
pub use run_bar::RunBar;
pub use speedup::SpeedupHeadline;
