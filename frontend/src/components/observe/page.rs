use leptos::prelude::*;

use super::capture::ObserveCapture;
use super::controls::ObserveControls;
use super::detail::ObservedDetail;
use super::export::ObserveExport;
use super::table::ObservedTable;
use crate::components::frame::error_banner::ErrorBanner;
use crate::components::frame::header::Header;
use crate::connection::Connection;
use crate::look::{Look, Theme};
use crate::url_state::UrlState;

/// `/observe`: an application's own connections through the observing proxy. The presenter
/// starts and stops it; every page sees the table fill live; a chosen connection's requests
/// are drawn by the same timeline as a run's. Or a capture file this page opened, shown the
/// same way in the proxy's place.
#[component]
pub fn ObservePage(conn: Connection, #[prop(optional)] url: UrlState) -> impl IntoView {
    let look = Look::new(
        url.presenter,
        Theme::from_value(url.theme.as_deref().unwrap_or("light")),
    );
    // Connection ids whose details and timelines are shown, in the order they were chosen.
    let chosen = RwSignal::new(Vec::<u64>::new());
    view! {
        <Header conn=conn look=look />
        <main class="observe">
            <ErrorBanner conn=conn />
            <ObserveControls conn=conn />
            <ObserveCapture conn=conn />
            <ObservedTable conn=conn chosen=chosen />
            <ObservedDetail conn=conn chosen=chosen look=look />
            <ObserveExport conn=conn />
        </main>
    }
}
