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
/// same way in the proxy's place, and opened on its costliest connection, as a one-file page
/// of an observation is.
#[component]
pub fn ObservePage(conn: Connection, #[prop(optional)] url: UrlState) -> impl IntoView {
    let look = Look::new(
        url.presenter,
        Theme::from_value(url.theme.as_deref().unwrap_or("light")),
    );
    // Connection ids whose details and timelines are shown, in the order they were chosen.
    let chosen = RwSignal::new(Vec::<u64>::new());
    // A file, and each capture this page reads, opens on its point: its costliest connection
    // (`ObserveState::costliest`) chosen, its timeline, time split and what-if drawn (their
    // requests came with them), the rest a tick away. A live observation opens on none: its
    // connections arrive one by one, and the presenter picks.
    // (Compared by hand with the count last seen, not through a memo: one closure less for
    // the page's WASM to carry Leptos's machinery for.)
    // Back to live from a capture: the capture's choice names none of the proxy's.
    let mut seen = None;
    let mut was_capture = false;
    crate::erased::effect(move || {
        let (read, opening, capture) = conn
            .observe
            .with(|o| (o.captures_read, o.costliest(), o.from_capture()));
        if seen != Some(read) && (read > 0 || conn.file) {
            chosen.set(opening.map(|id| vec![id]).unwrap_or_default());
        } else if was_capture && !capture {
            chosen.set(Vec::new());
        }
        seen = Some(read);
        was_capture = capture;
    });
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
