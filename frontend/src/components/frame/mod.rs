//! What frames every view (the runs', the tour's, the observe view's): the header with the
//! views' links and the presenter's toggles, and the banner that says what went wrong.

pub mod error_banner;
pub mod header;
pub mod view_toggles;

pub use error_banner::ErrorBanner;
pub use header::Header;
pub use view_toggles::ViewToggles;
